/* model.c - the stream model: per-source state rebuilt from HELLO, DELTA,
 * SNAPSHOT and BYE messages, source lifecycle, the live side (rate rings and
 * "last N seconds" histograms), and the queries the viewers and exporters use. */
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "iogp_err.h"
#include "iogp_metrics.h"
#include "iogp_model.h"

#define NONE UINT32_MAX
#define MODEL_MAX_SOURCES 100000u
#define MODEL_ACCESS_RING 4096u
/* Dense accumulation is used for merging many sources' histograms when the
 * scheme has at most this many bins. */
#define MODEL_DENSE_MAX 65536u
/* live side defaults and limits (see iogp_model_opts) */
#define MODEL_BIN_NS 1000000000ull
#define MODEL_BIN_MIN_NS 1000000ull
#define MODEL_RING_BINS 300u
#define MODEL_RING_MAX 86400u
#define MODEL_SLOT_NS 5000000000ull
#define MODEL_WINDOW_NS 60000000000ull
#define MODEL_WINDOW_SLOTS_MAX 1024u
#define MODEL_WINDOW_BYTES 24576u
#define MODEL_WINDOW_BYTES_MIN 1024u
#define MODEL_QUIET 3u
#define MODEL_GONE_NS 30000000000ull
#define MODEL_IV_DEFAULT 1000000000ull   /* interval assumed before the first DELTA */
#define MODEL_IV_MIN 1000000ull
#define MODEL_IV_MAX 3600000000000ull
#define MODEL_MPS_SECS 5u                /* messages/s averaged over this many seconds */
#define MODEL_MPS_RING 8u

/* Open-addressing index over an array owned elsewhere: entries hold the
 * element's hash and index + 1 (0 = empty); load stays <= 1/2. */
struct imap_ent {
	uint32_t h, v;
};

struct imap {
	struct imap_ent *t;
	uint32_t mask, n;
};

typedef int (*imap_eq)(const void *ctx, uint32_t idx, const void *key);

struct slot {
	uint32_t id;
	uint32_t gm;        /* global metric (by name) */
	uint32_t scheme;    /* HISTOGRAM: interned scheme, else NONE */
	uint8_t kind;
	uint8_t linked;     /* counted in per-name queries (same kind, first of its name) */
	uint8_t rate;       /* rate metric index + 1, 0 = none (linked slots only) */
	struct wring *win;  /* window ring, NULL until the first histogram delta (live) */
	uint32_t win_n;     /* its entries, to prefetch its newest segment */
	char *own_unit;     /* when the source's unit differs from the metric's */
	uint64_t counter;
	int64_t gauge;
	iogp_bin *bins;     /* HISTOGRAM: sparse cumulative bins */
	size_t n, cap;
	uint64_t total;
};

struct file {
	uint64_t id;
	char *path;
};

struct source {
	uint64_t id;
	uint32_t node;
	uint32_t nlabels;
	iogp_label *labels;    /* one block: the array, then the strings */
	const char *host;
	int64_t pid, rank;
	iogp_source_state state;
	bool in_sync, has_seq, has_mono, has_wall;
	uint64_t last_seq, messages, gaps, dropped;
	uint64_t pre_jump_seq, jump_gaps;   /* the last forward jump, until confirmed */
	bool jumped;
	uint64_t cost;         /* upper bound of its SNAPSHOT's encoded size */
	uint64_t first_recv, last_recv, first_wall, last_wall, start_mono, last_mono;

	struct slot *slots;
	uint32_t nslots, slots_cap;
	struct imap by_id, by_gm;

	struct file *files;
	uint32_t nfiles, files_cap;
	struct imap file_map;
	uint64_t files_ignored;

	iogp_access *ring;     /* opts.access_ring entries once the first sample arrives */
	uint32_t ring_head, ring_n;
	uint64_t access_seen;

	/* lifecycle */
	bool replaced;         /* a restart took over; cleared if it speaks again */
	uint64_t iv;           /* moving average of DELTA intervals, 0 = none yet */
	uint64_t rkey[2];      /* restart keys from its first labels, 0 = none */
	uint32_t restart_of, restarted_by;

	/* live side */
	uint32_t rate_mask;    /* rate metrics in its catalog */
	uint32_t nhist;        /* linked histogram metrics: each gets 1/nhist of the budget */
	uint32_t win_bytes;    /* held by its window rings */
	struct rring *rr;
};

struct node {
	char *name;
	uint32_t *src;
	uint32_t n, cap;
	struct rring *rr;
};

struct holder {
	uint32_t src, slot;
};

struct gmetric {
	char *name, *unit;
	iogp_metric_kind kind;
	uint32_t scheme;
	uint32_t rate;       /* rate metric index + 1 when counter/histogram, else 0 */
	struct holder *h;
	uint32_t n, cap;
};

/* Caps. A source holds at most what one SNAPSHOT can carry (its cost is an
 * upper bound of its encoded size); the model at most opts.max_bytes; names
 * and bin schemes are shared by all sources and capped by count. */
#define MODEL_SRC_MAX_COST (IOGP_MAX_PAYLOAD - (256u << 10))
#define MODEL_MAX_BYTES (512ull << 20)
#define MODEL_MAX_NAMES 65536
#define MODEL_MAX_SCHEMES 4096
#define COST_BIN 20u                 /* a bin: varint gap + varint count, worst case */
#define COST_METRIC 192u             /* a definition, name and unit at their limits */
#define COST_FILE 24u                /* plus the path */

struct scheme {
	iogp_bins b;
	uint64_t nbins;
};

struct iogp_model {
	iogp_model_opts opts;

	struct source *src;
	uint32_t nsrc, src_cap;
	struct imap src_map;

	struct node *nodes;
	uint32_t nnodes, nodes_cap;
	struct imap node_map;

	struct gmetric *gm;
	uint32_t ngm, gm_cap;
	struct imap gm_map;

	struct scheme **schemes;
	uint32_t nschemes, schemes_cap;
	struct imap scheme_map;

	/* a histogram whose scheme is loaded once and whose bins are swapped
	 * in per slot, so slots need no 8 KiB iogp_bins each */
	iogp_hist hs;
	uint32_t hs_scheme;

	iogp_msg scratch;
	iogp_model_stats st;
	uint64_t cost_total;   /* sum of the sources' costs */
	bool have_recv;

	/* lifecycle */
	uint64_t now, cur_recv;
	bool ticked;
	struct imap rk_map[2];
	struct {
		uint64_t sec, n;
	} mps[MODEL_MPS_RING];

	/* live side */
	char *rate_names[IOGP_MODEL_MAX_RATES];
	uint32_t win_slots;    /* slots per window ring */
	uint64_t wall_hi;      /* newest DELTA wall time */
	struct rring *all;
	iogp_model_live lst;   /* counters kept by apply */
};

/* ---- hashing and the index map ------------------------------------------ */

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

static uint32_t hash_u64(uint64_t x)
{
	return (uint32_t)mix64(x);
}

static uint32_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	while (*s != '\0') {
		h ^= (unsigned char)*s++;
		h *= 1099511628211ull;
	}
	return (uint32_t)mix64(h);
}

/* Only the fields that matter for the kind, so equal schemes hash equally. */
static uint32_t hash_bins(const iogp_bins *b)
{
	uint64_t h = mix64((uint64_t)b->kind + 1);

	switch (b->kind) {
	case IOGP_BINS_NATIVE:
		h = mix64(h ^ b->k);
		break;
	case IOGP_BINS_FIXED:
		h = mix64(h ^ b->width);
		h = mix64(h ^ b->offset);
		break;
	case IOGP_BINS_EDGES:
		h = mix64(h ^ b->nedges);
		for (uint32_t i = 0; i < b->nedges && i < IOGP_MAX_EDGES; i++)
			h = mix64(h ^ b->edges[i]);
		break;
	default:
		break;
	}
	return (uint32_t)h;
}

static uint32_t imap_get(const struct imap *im, uint32_t h, imap_eq eq, const void *ctx,
                         const void *key)
{
	if (im->t == NULL)
		return NONE;
	for (uint32_t i = h & im->mask;; i = (i + 1) & im->mask) {
		const struct imap_ent *e = &im->t[i];

		if (e->v == 0)
			return NONE;
		if (e->h == h && eq(ctx, e->v - 1, key))
			return e->v - 1;
	}
}

static void imap_place(struct imap_ent *t, uint32_t mask, uint32_t h, uint32_t v)
{
	uint32_t i = h & mask;

	while (t[i].v != 0)
		i = (i + 1) & mask;
	t[i].h = h;
	t[i].v = v;
}

/* The key must not be present yet. */
static int imap_put(struct imap *im, uint32_t h, uint32_t idx)
{
	uint32_t cap = im->t == NULL ? 0 : im->mask + 1;

	if ((uint64_t)(im->n + 1) * 2 > cap) {
		uint32_t ncap = cap == 0 ? 8 : cap * 2;
		struct imap_ent *t;

		if (ncap == 0 || ncap > (1u << 30))
			return IOGP_ENOMEM;
		t = calloc(ncap, sizeof *t);
		if (t == NULL)
			return IOGP_ENOMEM;
		for (uint32_t i = 0; i < cap; i++) {
			if (im->t[i].v != 0)
				imap_place(t, ncap - 1, im->t[i].h, im->t[i].v);
		}
		free(im->t);
		im->t = t;
		im->mask = ncap - 1;
	}
	imap_place(im->t, im->mask, h, idx + 1);
	im->n++;
	return 0;
}

static void imap_free(struct imap *im)
{
	free(im->t);
	memset(im, 0, sizeof *im);
}

/* Grow *p (an array of *cap elements of size sz) to hold need elements. */
static int grow(void *p, uint32_t *cap, uint32_t need, size_t sz)
{
	void **pp = p;
	uint64_t ncap;
	void *np;

	if (need <= *cap)
		return 0;
	ncap = *cap < 4 ? 4 : (uint64_t)*cap * 2;
	while (ncap < need)
		ncap *= 2;
	if (ncap > UINT32_MAX)
		ncap = UINT32_MAX;
	if (ncap < need || ncap > SIZE_MAX / sz)
		return IOGP_ENOMEM;
	np = realloc(*pp, (size_t)ncap * sz);
	if (np == NULL)
		return IOGP_ENOMEM;
	*pp = np;
	*cap = (uint32_t)ncap;
	return 0;
}

/* ---- lookups -------------------------------------------------------------- */

static int eq_src(const void *ctx, uint32_t idx, const void *key)
{
	const iogp_model *m = ctx;

	return m->src[idx].id == *(const uint64_t *)key;
}

static int eq_node(const void *ctx, uint32_t idx, const void *key)
{
	const iogp_model *m = ctx;

	return strcmp(m->nodes[idx].name, key) == 0;
}

static int eq_gm(const void *ctx, uint32_t idx, const void *key)
{
	const iogp_model *m = ctx;

	return strcmp(m->gm[idx].name, key) == 0;
}

static int eq_scheme(const void *ctx, uint32_t idx, const void *key)
{
	const iogp_model *m = ctx;

	return iogp_bins_equal(&m->schemes[idx]->b, key) == 1;
}

static int eq_slot_id(const void *ctx, uint32_t idx, const void *key)
{
	const struct source *s = ctx;

	return s->slots[idx].id == *(const uint32_t *)key;
}

static int eq_slot_gm(const void *ctx, uint32_t idx, const void *key)
{
	const struct source *s = ctx;

	return s->slots[idx].gm == *(const uint32_t *)key;
}

static int eq_file(const void *ctx, uint32_t idx, const void *key)
{
	const struct source *s = ctx;

	return s->files[idx].id == *(const uint64_t *)key;
}

static uint32_t src_find(const iogp_model *m, uint64_t id)
{
	return imap_get(&m->src_map, hash_u64(id), eq_src, m, &id);
}

static uint32_t node_find(const iogp_model *m, const char *name)
{
	return imap_get(&m->node_map, hash_str(name), eq_node, m, name);
}

static uint32_t gm_find(const iogp_model *m, const char *name)
{
	return imap_get(&m->gm_map, hash_str(name), eq_gm, m, name);
}

static uint32_t slot_by_id(const struct source *s, uint32_t id)
{
	return imap_get(&s->by_id, hash_u64(id), eq_slot_id, s, &id);
}

static uint32_t slot_by_gm(const struct source *s, uint32_t gm)
{
	return imap_get(&s->by_gm, hash_u64(gm), eq_slot_gm, s, &gm);
}

static uint32_t file_find(const struct source *s, uint64_t id)
{
	return imap_get(&s->file_map, hash_u64(id), eq_file, s, &id);
}

/* ---- model lifetime ------------------------------------------------------- */

static const char *const default_rates[] = {
	IOGP_M_READ_BYTES, IOGP_M_WRITE_BYTES, IOGP_M_READ_OPS, IOGP_M_WRITE_OPS,
};

static uint64_t clamp_u64(uint64_t v, uint64_t def, uint64_t lo, uint64_t hi)
{
	if (v == 0)
		v = def;
	return v < lo ? lo : v > hi ? hi : v;
}

/* Defaults and limits; rate names are copied. */
static int opts_live(iogp_model *m, const iogp_model_opts *in)
{
	iogp_model_opts *o = &m->opts;
	uint32_t n = 0;

	o->quiet_intervals = o->quiet_intervals == 0 ? MODEL_QUIET : o->quiet_intervals;
	o->gone_ns = o->gone_ns == 0 ? MODEL_GONE_NS : o->gone_ns;
	o->bin_ns = clamp_u64(o->bin_ns, MODEL_BIN_NS, MODEL_BIN_MIN_NS, UINT64_MAX / 4);
	o->ring_bins = (uint32_t)clamp_u64(o->ring_bins, MODEL_RING_BINS, 2, MODEL_RING_MAX);
	o->window_slot_ns = clamp_u64(o->window_slot_ns, MODEL_SLOT_NS, MODEL_BIN_MIN_NS,
	                              UINT64_MAX / (4 * MODEL_WINDOW_SLOTS_MAX));
	o->window_max_ns = clamp_u64(o->window_max_ns, MODEL_WINDOW_NS, o->window_slot_ns,
	                             o->window_slot_ns * MODEL_WINDOW_SLOTS_MAX);
	o->window_bytes = (uint32_t)clamp_u64(o->window_bytes, MODEL_WINDOW_BYTES,
	                                      MODEL_WINDOW_BYTES_MIN, UINT32_MAX / 2);
	m->win_slots = (uint32_t)((o->window_max_ns + o->window_slot_ns - 1) / o->window_slot_ns) + 1;
	o->live = o->live != 0;
	memset(o->rates, 0, sizeof o->rates);
	if (!o->live) {
		o->nrates = 0;
		return 0;
	}
	for (uint32_t i = 0; i < (in->nrates == 0 ? 4 : in->nrates) && i < IOGP_MODEL_MAX_RATES; i++) {
		const char *name = in->nrates == 0 ? default_rates[i] : in->rates[i];
		bool dup = false;

		if (name == NULL || *name == '\0')
			continue;
		for (uint32_t j = 0; j < n; j++)
			dup = dup || strcmp(m->rate_names[j], name) == 0;
		if (dup)
			continue;
		m->rate_names[n] = strdup(name);
		if (m->rate_names[n] == NULL)
			return IOGP_ENOMEM;
		o->rates[n] = m->rate_names[n];
		n++;
	}
	o->nrates = n;
	return 0;
}

iogp_model *iogp_model_new(const iogp_model_opts *opts)
{
	iogp_model *m = calloc(1, sizeof *m);
	iogp_model_opts none = { 0 };
	iogp_bins nat;

	if (m == NULL)
		return NULL;
	if (opts != NULL)
		m->opts = *opts;
	if (m->opts.max_sources == 0)
		m->opts.max_sources = MODEL_MAX_SOURCES;
	if (m->opts.max_bytes == 0)
		m->opts.max_bytes = MODEL_MAX_BYTES;
	if (m->opts.access_ring == 0)
		m->opts.access_ring = MODEL_ACCESS_RING;
	if (opts_live(m, opts != NULL ? opts : &none) < 0) {
		for (uint32_t i = 0; i < IOGP_MODEL_MAX_RATES; i++)
			free(m->rate_names[i]);
		free(m);
		return NULL;
	}
	iogp_bins_native(&nat, IOGP_NATIVE_K_DEFAULT);
	iogp_hist_init(&m->hs, &nat);
	m->hs_scheme = NONE;
	iogp_msg_init(&m->scratch);
	return m;
}

static void source_free(struct source *s)
{
	free(s->labels);
	for (uint32_t i = 0; i < s->nslots; i++) {
		free(s->slots[i].own_unit);
		free(s->slots[i].bins);
		free(s->slots[i].win);
	}
	free(s->slots);
	imap_free(&s->by_id);
	imap_free(&s->by_gm);
	for (uint32_t i = 0; i < s->nfiles; i++)
		free(s->files[i].path);
	free(s->files);
	imap_free(&s->file_map);
	free(s->ring);
	free(s->rr);
}

void iogp_model_free(iogp_model *m)
{
	if (m == NULL)
		return;
	for (uint32_t i = 0; i < m->nsrc; i++)
		source_free(&m->src[i]);
	free(m->src);
	imap_free(&m->src_map);
	for (uint32_t i = 0; i < m->nnodes; i++) {
		free(m->nodes[i].name);
		free(m->nodes[i].src);
		free(m->nodes[i].rr);
	}
	free(m->nodes);
	imap_free(&m->node_map);
	for (uint32_t i = 0; i < m->ngm; i++) {
		free(m->gm[i].name);
		free(m->gm[i].unit);
		free(m->gm[i].h);
	}
	free(m->gm);
	imap_free(&m->gm_map);
	for (uint32_t i = 0; i < m->nschemes; i++)
		free(m->schemes[i]);
	free(m->schemes);
	imap_free(&m->scheme_map);
	iogp_hist_free(&m->hs);
	iogp_msg_free(&m->scratch);
	imap_free(&m->rk_map[0]);
	imap_free(&m->rk_map[1]);
	free(m->all);
	for (uint32_t i = 0; i < IOGP_MODEL_MAX_RATES; i++)
		free(m->rate_names[i]);
	free(m);
}

/* ---- tables: schemes, metrics, nodes ---------------------------------------- */

static uint32_t scheme_intern(iogp_model *m, const iogp_bins *b)
{
	uint32_t h = hash_bins(b);
	uint32_t i = imap_get(&m->scheme_map, h, eq_scheme, m, b);
	struct scheme *sc;

	if (i != NONE)
		return i;
	if (m->nschemes >= MODEL_MAX_SCHEMES)
		return NONE;
	if (grow(&m->schemes, &m->schemes_cap, m->nschemes + 1, sizeof *m->schemes) < 0)
		return NONE;
	sc = calloc(1, sizeof *sc);
	if (sc == NULL)
		return NONE;
	/* canonical copy: only the fields the kind uses */
	sc->b.kind = b->kind;
	switch (b->kind) {
	case IOGP_BINS_NATIVE:
		sc->b.k = b->k;
		break;
	case IOGP_BINS_FIXED:
		sc->b.width = b->width;
		sc->b.offset = b->offset;
		break;
	case IOGP_BINS_EDGES:
		sc->b.nedges = b->nedges;
		memcpy(sc->b.edges, b->edges, b->nedges * sizeof b->edges[0]);
		break;
	default:
		break;
	}
	sc->nbins = iogp_bins_count(&sc->b);
	if (imap_put(&m->scheme_map, h, m->nschemes) < 0) {
		free(sc);
		return NONE;
	}
	m->schemes[m->nschemes] = sc;
	return m->nschemes++;
}

static uint32_t gm_add(iogp_model *m, const iogp_metric_def *d, const char *unit)
{
	uint32_t i = gm_find(m, d->name);
	struct gmetric *g;

	if (i != NONE)
		return i;
	if (m->ngm >= MODEL_MAX_NAMES)
		return NONE;
	if (grow(&m->gm, &m->gm_cap, m->ngm + 1, sizeof *m->gm) < 0)
		return NONE;
	g = &m->gm[m->ngm];
	memset(g, 0, sizeof *g);
	g->kind = d->kind;
	g->scheme = NONE;
	for (uint32_t r = 0; r < m->opts.nrates; r++) {
		if ((d->kind == IOGP_COUNTER || d->kind == IOGP_HISTOGRAM) &&
		    strcmp(m->rate_names[r], d->name) == 0)
			g->rate = r + 1;
	}
	if (d->kind == IOGP_HISTOGRAM) {
		g->scheme = scheme_intern(m, &d->bins);
		if (g->scheme == NONE)
			return NONE;
	}
	g->name = strdup(d->name);
	g->unit = strdup(unit);
	if (g->name == NULL || g->unit == NULL ||
	    imap_put(&m->gm_map, hash_str(d->name), m->ngm) < 0) {
		free(g->name);
		free(g->unit);
		return NONE;
	}
	return m->ngm++;
}

static uint32_t node_add(iogp_model *m, const char *name)
{
	uint32_t i = node_find(m, name);
	struct node *n;

	if (i != NONE)
		return i;
	if (grow(&m->nodes, &m->nodes_cap, m->nnodes + 1, sizeof *m->nodes) < 0)
		return NONE;
	n = &m->nodes[m->nnodes];
	memset(n, 0, sizeof *n);
	n->name = strdup(name);
	if (n->name == NULL || imap_put(&m->node_map, hash_str(name), m->nnodes) < 0) {
		free(n->name);
		return NONE;
	}
	return m->nnodes++;
}

static int node_link(iogp_model *m, uint32_t ni, uint32_t si)
{
	struct node *n = &m->nodes[ni];

	if (grow(&n->src, &n->cap, n->n + 1, sizeof *n->src) < 0)
		return IOGP_ENOMEM;
	n->src[n->n++] = si;
	return 0;
}

static void node_unlink(iogp_model *m, uint32_t ni, uint32_t si)
{
	struct node *n = &m->nodes[ni];

	for (uint32_t i = 0; i < n->n; i++) {
		if (n->src[i] == si) {
			memmove(&n->src[i], &n->src[i + 1], (n->n - i - 1) * sizeof n->src[0]);
			n->n--;
			return;
		}
	}
}

/* Node table bound: a source that keeps renaming its host cannot grow the
 * table past this; it then stays on its previous node. */
static uint32_t node_limit(const iogp_model *m)
{
	return m->opts.max_sources > UINT32_MAX / 2 - 1024 ? UINT32_MAX / 2
	                                                     : m->opts.max_sources * 2 + 1024;
}

/* ---- sources ------------------------------------------------------------ */

static uint32_t source_new(iogp_model *m, uint64_t id, const char *host, int *err)
{
	struct source *s;
	uint32_t ni, si = m->nsrc;

	if (m->nsrc >= m->opts.max_sources) {
		m->st.refused_sources++;
		*err = IOGP_ELIMIT;
		return NONE;
	}
	*err = IOGP_ENOMEM;
	ni = node_find(m, host);
	if (ni == NONE)
		ni = node_add(m, m->nnodes < node_limit(m) ? host : "");
	if (ni == NONE || grow(&m->src, &m->src_cap, m->nsrc + 1, sizeof *m->src) < 0)
		return NONE;
	if (node_link(m, ni, si) < 0)
		return NONE;
	if (imap_put(&m->src_map, hash_u64(id), si) < 0) {
		node_unlink(m, ni, si);
		return NONE;
	}
	s = &m->src[si];
	memset(s, 0, sizeof *s);
	s->id = id;
	s->node = ni;
	s->host = "";
	s->pid = s->rank = -1;
	s->state = IOGP_SRC_LIVE;
	s->in_sync = true;
	s->restart_of = s->restarted_by = NONE;
	m->nsrc++;
	return si;
}

static int64_t parse_nonneg(const char *v)
{
	int64_t x = 0;

	if (v == NULL || *v == '\0')
		return -1;
	for (; *v != '\0'; v++) {
		if (*v < '0' || *v > '9' || x > (INT64_MAX - 9) / 10)
			return -1;
		x = x * 10 + (*v - '0');
	}
	return x;
}

static bool labels_same(const struct source *s, const iogp_msg *msg)
{
	if (s->nlabels != msg->nlabels)
		return false;
	for (uint32_t i = 0; i < s->nlabels; i++) {
		if (strcmp(s->labels[i].key, msg->labels[i].key) != 0 ||
		    strcmp(s->labels[i].value, msg->labels[i].value) != 0)
			return false;
	}
	return true;
}

static const char *labels_find(const iogp_label *l, uint32_t n, const char *key)
{
	for (uint32_t i = 0; i < n; i++) {
		if (strcmp(l[i].key, key) == 0)
			return l[i].value;
	}
	return NULL;
}

/* ---- lifecycle ------------------------------------------------------------ */

/* Silence after which source s counts as quiet. */
static uint64_t quiet_ns(const iogp_model *m, const struct source *s)
{
	uint64_t iv = s->iv != 0 ? s->iv : MODEL_IV_DEFAULT;

	return iv > UINT64_MAX / m->opts.quiet_intervals ? UINT64_MAX
	                                                 : iv * m->opts.quiet_intervals;
}

static iogp_source_state src_state(const iogp_model *m, const struct source *s, uint64_t now,
                                   bool judge)
{
	uint64_t idle, q;

	if (s->state == IOGP_SRC_GONE || s->replaced)
		return IOGP_SRC_GONE;
	if (!judge)
		return IOGP_SRC_LIVE;
	idle = now > s->last_recv ? now - s->last_recv : 0;
	q = quiet_ns(m, s);
	if (idle > m->opts.gone_ns)
		return IOGP_SRC_GONE;
	if (idle > q)
		return IOGP_SRC_QUIET;
	if (now < s->first_recv || now - s->first_recv < q)
		return IOGP_SRC_NEW;
	return IOGP_SRC_LIVE;
}

static uint64_t fnv_str(uint64_t h, const char *v)
{
	for (v = v != NULL ? v : ""; *v != '\0'; v++) {
		h ^= (unsigned char)*v;
		h *= 1099511628211ull;
	}
	h ^= 0xff;   /* separator: ("ab","c") != ("a","bc") */
	return h * 1099511628211ull;
}

/* host+pid+exe (needs pid) and host+rank+job (needs rank and job). */
static void restart_keys(const iogp_label *l, uint32_t n, uint64_t key[2])
{
	const char *host = labels_find(l, n, "host"), *pid = labels_find(l, n, "pid");
	const char *rank = labels_find(l, n, "rank"), *job = labels_find(l, n, "job");
	uint64_t h;

	key[0] = key[1] = 0;
	if (pid != NULL) {
		h = fnv_str(fnv_str(fnv_str(1469598103934665603ull ^ 'p', host), pid),
		            labels_find(l, n, "exe"));
		key[0] = mix64(h) | 1;
	}
	if (rank != NULL && job != NULL) {
		h = fnv_str(fnv_str(fnv_str(1469598103934665603ull ^ 'r', host), rank), job);
		key[1] = mix64(h) | 1;
	}
}

static int eq_rk0(const void *ctx, uint32_t idx, const void *key)
{
	return ((const iogp_model *)ctx)->src[idx].rkey[0] == *(const uint64_t *)key;
}

static int eq_rk1(const void *ctx, uint32_t idx, const void *key)
{
	return ((const iogp_model *)ctx)->src[idx].rkey[1] == *(const uint64_t *)key;
}

/* Point key k at source si (the newest holder of a key wins). */
static void rk_set(iogp_model *m, int k, uint64_t key, uint32_t si)
{
	struct imap *im = &m->rk_map[k];
	uint32_t h = (uint32_t)(key >> 32);

	if (im->t != NULL) {
		for (uint32_t i = h & im->mask; im->t[i].v != 0; i = (i + 1) & im->mask) {
			if (im->t[i].h == h && m->src[im->t[i].v - 1].rkey[k] == key) {
				im->t[i].v = si + 1;
				return;
			}
		}
	}
	(void)imap_put(im, h, si);  /* on ENOMEM the source is just not linkable */
}

/* Keys come from a source's first labels only, so the maps hold at most two
 * entries per source. A match that is gone or quiet at the time the new
 * source announces itself was restarted by it. */
static void restart_check(iogp_model *m, uint32_t si)
{
	struct source *s = &m->src[si];
	uint64_t now = m->ticked && m->now > m->cur_recv ? m->now : m->cur_recv;

	restart_keys(s->labels, s->nlabels, s->rkey);
	for (int k = 0; k < 2; k++) {
		iogp_source_state st;
		uint32_t old;

		if (s->rkey[k] == 0)
			continue;
		old = imap_get(&m->rk_map[k], (uint32_t)(s->rkey[k] >> 32), k == 0 ? eq_rk0 : eq_rk1, m,
		               &s->rkey[k]);
		if (old != NONE && old != si && s->restart_of == NONE &&
		    m->src[old].restarted_by == NONE &&
		    (st = src_state(m, &m->src[old], now, true)) != IOGP_SRC_LIVE &&
		    st != IOGP_SRC_NEW) {
			s->restart_of = old;
			m->src[old].restarted_by = si;
			m->src[old].replaced = true;
			m->lst.restarts++;
		}
		rk_set(m, k, s->rkey[k], si);
	}
}

/* An empty label set leaves the current labels alone (a HELLO that only
 * adds metrics). */
static int labels_set(iogp_model *m, uint32_t si, const iogp_msg *msg)
{
	struct source *s = &m->src[si];
	size_t sz = (size_t)msg->nlabels * sizeof(iogp_label);
	bool first = s->nlabels == 0;
	const char *host;
	iogp_label *l;
	char *p;
	uint32_t ni;

	if (msg->nlabels == 0 || labels_same(s, msg))
		return 0;
	for (uint32_t i = 0; i < msg->nlabels; i++)
		sz += strlen(msg->labels[i].key) + strlen(msg->labels[i].value) + 2;
	l = malloc(sz);
	if (l == NULL)
		return IOGP_ENOMEM;
	p = (char *)(l + msg->nlabels);
	for (uint32_t i = 0; i < msg->nlabels; i++) {
		size_t kn = strlen(msg->labels[i].key) + 1, vn = strlen(msg->labels[i].value) + 1;

		memcpy(p, msg->labels[i].key, kn);
		l[i].key = p;
		p += kn;
		memcpy(p, msg->labels[i].value, vn);
		l[i].value = p;
		p += vn;
	}
	free(s->labels);
	s->labels = l;
	s->nlabels = msg->nlabels;
	host = labels_find(l, s->nlabels, "host");
	s->host = host != NULL ? host : "";
	s->pid = parse_nonneg(labels_find(l, s->nlabels, "pid"));
	s->rank = parse_nonneg(labels_find(l, s->nlabels, "rank"));
	if (first)
		restart_check(m, si);

	if (strcmp(m->nodes[s->node].name, s->host) == 0)
		return 0;
	ni = node_find(m, s->host);
	if (ni == NONE && m->nnodes < node_limit(m))
		ni = node_add(m, s->host);
	if (ni == NONE)
		return 0;
	if (node_link(m, ni, si) < 0)
		return IOGP_ENOMEM;
	node_unlink(m, s->node, si);
	s->node = ni;
	return 0;
}

static bool cost_fits(const iogp_model *m, const struct source *s, uint64_t c)
{
	return s->cost + c <= MODEL_SRC_MAX_COST && m->cost_total + c <= m->opts.max_bytes;
}

static void cost_add(iogp_model *m, struct source *s, uint64_t c)
{
	s->cost += c;
	m->cost_total += c;
}

static void cost_sub(iogp_model *m, struct source *s, uint64_t c)
{
	c = c > s->cost ? s->cost : c;
	s->cost -= c;
	m->cost_total -= c;
}

/* An id keeps its first definition; later definitions of it are ignored. */
static int catalog_add(iogp_model *m, uint32_t si, const iogp_metric_def *d)
{
	struct source *s = &m->src[si];
	const char *unit = d->unit != NULL ? d->unit : "";
	struct slot *sl;
	struct gmetric *g;
	uint32_t gi, sc = NONE;

	if (slot_by_id(s, d->id) != NONE)
		return 0;
	uint64_t c = COST_METRIC + (d->kind == IOGP_HISTOGRAM && d->bins.kind == IOGP_BINS_EDGES ?
	                            (uint64_t)d->bins.nedges * 10 : 0);
	if (s->nslots >= IOGP_MAX_METRICS || !cost_fits(m, s, c) ||
	    (gm_find(m, d->name) == NONE && m->ngm >= MODEL_MAX_NAMES)) {
		m->st.refused++;
		return 0;
	}
	gi = gm_add(m, d, unit);
	if (gi == NONE)
		return IOGP_ENOMEM;
	if (d->kind == IOGP_HISTOGRAM) {
		sc = scheme_intern(m, &d->bins);
		if (sc == NONE && m->nschemes >= MODEL_MAX_SCHEMES) {
			m->st.refused++;
			return 0;
		}
		if (sc == NONE)
			return IOGP_ENOMEM;
	}
	cost_add(m, s, c);
	if (grow(&s->slots, &s->slots_cap, s->nslots + 1, sizeof *s->slots) < 0)
		return IOGP_ENOMEM;
	g = &m->gm[gi];
	sl = &s->slots[s->nslots];
	memset(sl, 0, sizeof *sl);
	sl->id = d->id;
	sl->gm = gi;
	sl->kind = (uint8_t)d->kind;
	sl->scheme = sc;
	if (strcmp(unit, g->unit) != 0) {
		sl->own_unit = strdup(unit);
		if (sl->own_unit == NULL)
			return IOGP_ENOMEM;
	}
	/* a second id with the same name in one source is kept but not linked */
	sl->linked = g->kind == d->kind && slot_by_gm(s, gi) == NONE;
	if (imap_put(&s->by_id, hash_u64(d->id), s->nslots) < 0)
		goto fail;
	if (sl->linked) {
		if (grow(&g->h, &g->cap, g->n + 1, sizeof *g->h) < 0)
			sl->linked = 0;
		else if (imap_put(&s->by_gm, hash_u64(gi), s->nslots) < 0)
			sl->linked = 0;
		else
			g->h[g->n++] = (struct holder){ si, s->nslots };
	}
	s->nhist += sl->linked && d->kind == IOGP_HISTOGRAM;
	if (sl->linked && g->rate != 0) {
		sl->rate = (uint8_t)g->rate;
		s->rate_mask |= 1u << (g->rate - 1);
	}
	s->nslots++;
	return 0;
fail:
	free(sl->own_unit);
	return IOGP_ENOMEM;
}

static int files_add(iogp_model *m, struct source *s, const iogp_file *f, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		uint32_t fi = file_find(s, f[i].id);
		char *p;

		if (fi != NONE) {
			if (strcmp(s->files[fi].path, f[i].path) == 0)
				continue;
			/* a renamed file costs what its new name adds */
			size_t ol = strlen(s->files[fi].path), nl = strlen(f[i].path);
			if (nl > ol && !cost_fits(m, s, nl - ol)) {
				s->files_ignored++;
				m->st.refused++;
				continue;
			}
			p = strdup(f[i].path);
			if (p == NULL)
				return IOGP_ENOMEM;
			if (nl > ol)
				cost_add(m, s, nl - ol);
			else
				cost_sub(m, s, ol - nl);
			free(s->files[fi].path);
			s->files[fi].path = p;
			continue;
		}
		uint64_t c = COST_FILE + strlen(f[i].path);
		if (s->nfiles >= IOGP_MAX_FILES || !cost_fits(m, s, c)) {
			s->files_ignored++;
			m->st.refused++;
			continue;
		}
		cost_add(m, s, c);
		if (grow(&s->files, &s->files_cap, s->nfiles + 1, sizeof *s->files) < 0)
			return IOGP_ENOMEM;
		p = strdup(f[i].path);
		if (p == NULL)
			return IOGP_ENOMEM;
		if (imap_put(&s->file_map, hash_u64(f[i].id), s->nfiles) < 0) {
			free(p);
			return IOGP_ENOMEM;
		}
		s->files[s->nfiles].id = f[i].id;
		s->files[s->nfiles].path = p;
		s->nfiles++;
	}
	return 0;
}

static int ring_push(const iogp_model *m, struct source *s, const iogp_access *a)
{
	uint32_t cap = m->opts.access_ring;

	if (s->ring == NULL) {
		s->ring = malloc((size_t)cap * sizeof *s->ring);
		if (s->ring == NULL)
			return IOGP_ENOMEM;
	}
	s->ring[s->ring_head] = *a;
	s->ring_head = s->ring_head + 1 == cap ? 0 : s->ring_head + 1;
	if (s->ring_n < cap)
		s->ring_n++;
	return 0;
}

static const iogp_access *ring_newest(const iogp_model *m, const struct source *s)
{
	if (s->ring_n == 0)
		return NULL;
	return &s->ring[s->ring_head == 0 ? m->opts.access_ring - 1 : s->ring_head - 1];
}

/* ---- histogram slots ------------------------------------------------------ */

static void hs_load(iogp_model *m, struct slot *sl)
{
	iogp_hist *h = &m->hs;

	if (m->hs_scheme != sl->scheme) {
		const iogp_bins *b = &m->schemes[sl->scheme]->b;

		/* header and the used edges only: the rest is never read */
		h->scheme.kind = b->kind;
		h->scheme.k = b->k;
		h->scheme.width = b->width;
		h->scheme.offset = b->offset;
		h->scheme.nedges = b->nedges;
		memcpy(h->scheme.edges, b->edges, b->nedges * sizeof b->edges[0]);
		m->hs_scheme = sl->scheme;
	}
	h->bins = sl->bins;
	h->n = sl->n;
	h->cap = sl->cap;
	h->total = sl->total;
}

static void hs_store(iogp_model *m, struct slot *sl)
{
	iogp_hist *h = &m->hs;

	sl->bins = h->bins;
	sl->n = h->n;
	sl->cap = h->cap;
	sl->total = h->total;
	h->bins = NULL;
	h->n = h->cap = 0;
	h->total = 0;
}

/* Bins of b (ascending) that sl does not hold yet. */
static uint64_t bins_new(const struct slot *sl, const iogp_bin *b, size_t n)
{
	size_t i = 0, j = 0;
	uint64_t add = 0;

	while (j < n) {
		if (i < sl->n && sl->bins[i].idx < b[j].idx) {
			i++;
		} else if (i < sl->n && sl->bins[i].idx == b[j].idx) {
			i++;
			j++;
		} else {
			add++;
			j++;
		}
	}
	return add;
}

static int slot_hist_add(iogp_model *m, struct source *s, struct slot *sl, const iogp_bin *b, size_t n)
{
	int r;

	if (n == 0)
		return 0;
	uint64_t c = bins_new(sl, b, n) * COST_BIN;
	if (sl->n + c / COST_BIN > IOGP_MAX_HIST_BINS || !cost_fits(m, s, c)) {
		m->st.refused++;
		return IOGP_ELIMIT;
	}
	cost_add(m, s, c);
	hs_load(m, sl);
	r = iogp_hist_add_bins(&m->hs, b, n);
	hs_store(m, sl);
	return r;
}

/* ---- message checks --------------------------------------------------------- */

static bool str_ok(const char *s, size_t max)
{
	return s != NULL && strnlen(s, max + 1) <= max;
}

/* Structural checks, so a message built by hand is held to the limits the
 * decoder enforces and nothing is changed by a message that is rejected. */
static int msg_check(const iogp_msg *msg)
{
	if (msg->nlabels > IOGP_MAX_LABELS || msg->nmetrics > IOGP_MAX_METRICS ||
	    msg->naccess > IOGP_MAX_ACCESS || msg->nfiles > IOGP_MAX_FILES)
		return IOGP_ELIMIT;
	if ((msg->nlabels && msg->labels == NULL) || (msg->nmetrics && msg->metrics == NULL) ||
	    (msg->ncounters && msg->counters == NULL) || (msg->ngauges && msg->gauges == NULL) ||
	    (msg->nhists && msg->hists == NULL) || (msg->naccess && msg->access == NULL) ||
	    (msg->nfiles && msg->files == NULL))
		return IOGP_EINVAL;
	for (uint32_t i = 0; i < msg->nlabels; i++) {
		if (!str_ok(msg->labels[i].key, IOGP_MAX_KEY) ||
		    !str_ok(msg->labels[i].value, IOGP_MAX_VALUE))
			return IOGP_EINVAL;
	}
	for (uint32_t i = 0; i < msg->nmetrics; i++) {
		const iogp_metric_def *d = &msg->metrics[i];

		if (d->kind < IOGP_COUNTER || d->kind > IOGP_ACCESS ||
		    !str_ok(d->name, IOGP_MAX_NAME) ||
		    (d->unit != NULL && !str_ok(d->unit, IOGP_MAX_UNIT)))
			return IOGP_EINVAL;
		if (d->kind == IOGP_HISTOGRAM && iogp_bins_valid(&d->bins) != 0)
			return IOGP_EINVAL;
	}
	for (uint32_t i = 0; i < msg->nhists; i++) {
		const iogp_hist_val *h = &msg->hists[i];

		if (h->nbins > IOGP_MAX_HIST_BINS)
			return IOGP_ELIMIT;
		if (h->nbins && h->bins == NULL)
			return IOGP_EINVAL;
		for (uint32_t j = 1; j < h->nbins; j++) {
			if (h->bins[j].idx <= h->bins[j - 1].idx)
				return IOGP_EINVAL;
		}
	}
	for (uint32_t i = 0; i < msg->nfiles; i++) {
		if (!str_ok(msg->files[i].path, IOGP_MAX_PATH))
			return IOGP_EINVAL;
	}
	return 0;
}

static int resolve(const struct source *s, uint32_t id, iogp_metric_kind kind, uint32_t *slot)
{
	*slot = slot_by_id(s, id);
	if (*slot == NONE)
		return IOGP_EUNKNOWN;
	if (s->slots[*slot].kind != kind)
		return IOGP_EINVAL;
	return 0;
}

/* Every value names a known metric of the right kind and every bin lies in
 * its scheme. */
static int values_check(const iogp_model *m, const struct source *s, const iogp_msg *msg)
{
	uint32_t sl;
	int r;

	for (uint32_t i = 0; i < msg->ncounters; i++) {
		if ((r = resolve(s, msg->counters[i].id, IOGP_COUNTER, &sl)) < 0)
			return r;
	}
	for (uint32_t i = 0; i < msg->ngauges; i++) {
		if ((r = resolve(s, msg->gauges[i].id, IOGP_GAUGE, &sl)) < 0)
			return r;
	}
	for (uint32_t i = 0; i < msg->nhists; i++) {
		const iogp_hist_val *h = &msg->hists[i];

		if ((r = resolve(s, h->id, IOGP_HISTOGRAM, &sl)) < 0)
			return r;
		/* ascending: the first and the last decide (EDGES from 0 has no bin 0) */
		const iogp_bins *sb = &m->schemes[s->slots[sl].scheme]->b;
		if (h->nbins > 0 &&
		    (h->bins[h->nbins - 1].idx >= m->schemes[s->slots[sl].scheme]->nbins ||
		     !iogp_bins_index_ok(sb, h->bins[0].idx) ||
		     !iogp_bins_index_ok(sb, h->bins[h->nbins - 1].idx)))
			return IOGP_EINVAL;
	}
	for (uint32_t i = 0; i < msg->naccess; i++) {
		if ((r = resolve(s, msg->access[i].id, IOGP_ACCESS, &sl)) < 0)
			return r;
	}
	return 0;
}

/* ---- live side: rate rings ---------------------------------------------------- */

/* ring_bins bins, each holding the increments given to it for every rate
 * metric side by side (one cache line for a DELTA's bin), then a byte per
 * bin with a coverage bit per metric. Absolute bin b (wall / bin_ns) sits at
 * b % ring_bins. */
struct rring {
	uint64_t hi;       /* newest bin held */
	double v[];
};

static size_t rring_size(const iogp_model *m)
{
	return sizeof(struct rring) +
	       (size_t)m->opts.ring_bins * (m->opts.nrates * sizeof(double) + 1);
}

static uint8_t *rring_cov(const iogp_model *m, const struct rring *r)
{
	return (uint8_t *)(uintptr_t)(r->v + (size_t)m->opts.nrates * m->opts.ring_bins);
}

static void rring_advance(const iogp_model *m, struct rring *r, uint64_t to)
{
	uint32_t L = m->opts.ring_bins, nr = m->opts.nrates;
	uint8_t *cov = rring_cov(m, r);

	if (to <= r->hi)
		return;
	if (to - r->hi >= L) {
		memset(r->v, 0, (size_t)nr * L * sizeof(double));
		memset(cov, 0, L);
	} else {
		for (uint64_t b = r->hi + 1; b <= to; b++) {
			uint32_t p = (uint32_t)(b % L);

			memset(&r->v[(size_t)p * nr], 0, nr * sizeof(double));
			cov[p] = 0;
		}
	}
	r->hi = to;
}

/* A DELTA's wall interval [a, b] and the bins it meets. */
struct span {
	uint64_t a, b, first, last;
	double len;
};

/* Spread amt (per rate metric in mask) over sp by overlap; the last bin
 * takes the remainder so the parts add up to amt. True when part of the
 * interval was older than the ring (that part is dropped). */
static bool rring_add(const iogp_model *m, struct rring *r, const struct span *sp,
                      const double *amt, uint32_t mask)
{
	uint32_t L = m->opts.ring_bins, nr = m->opts.nrates;
	uint64_t B = m->opts.bin_ns, lo, from;
	uint8_t *cov = rring_cov(m, r);
	double acc[IOGP_MODEL_MAX_RATES] = { 0 };
	bool clipped;

	rring_advance(m, r, sp->last);
	lo = r->hi >= L - 1 ? r->hi - (L - 1) : 0;
	if (sp->last < lo)
		return true;
	clipped = sp->first < lo;
	from = clipped ? lo : sp->first;
	for (uint64_t i = from; i <= sp->last; i++) {
		uint32_t p = (uint32_t)(i % L);
		double *v = &r->v[(size_t)p * nr];
		double w = 1;

		if (sp->b > sp->a) {
			uint64_t s0 = i * B;
			uint64_t x0 = sp->a > s0 ? sp->a : s0;
			uint64_t x1 = sp->b - s0 > B ? s0 + B : sp->b;

			w = (double)(x1 - x0) / sp->len;
		}
		for (uint32_t k = mask; k != 0; k &= k - 1) {
			unsigned j = (unsigned)__builtin_ctz(k);
			double part;

			if (i == sp->last && !clipped) {
				part = amt[j] - acc[j];
				if (part < 0)
					part = 0;
			} else {
				part = amt[j] * w;
				acc[j] += part;
			}
			v[j] += part;
		}
		cov[p] |= (uint8_t)mask;
	}
	return clipped;
}

static struct rring *rring_get(iogp_model *m, struct rring **rp, uint64_t hi)
{
	if (*rp == NULL) {
		size_t sz = rring_size(m);

		*rp = calloc(1, sz);
		if (*rp == NULL)
			return NULL;
		(*rp)->hi = hi;
		m->lst.live_bytes += sz;
	}
	return *rp;
}

/* Per-DELTA accumulation, filled while the values are applied. */
struct live_acc {
	double amt[IOGP_MODEL_MAX_RATES];
	uint64_t slot;     /* window slot of the DELTA's wall time */
	bool win;          /* wall time known: windows take its histograms */
};

static void live_rates(iogp_model *m, struct source *s, const iogp_msg *msg, const double *amt)
{
	uint64_t B = m->opts.bin_ns, dur;
	struct rring **rings[3];
	struct span sp;
	bool clipped = false;
	int nrings;

	if (s->rate_mask == 0)
		return;
	if (msg->wall_ns == 0 || msg->t1_ns < msg->t0_ns ||
	    msg->wall_ns < msg->t1_ns - msg->t0_ns) {
		m->lst.rate_skipped++;
		return;
	}
	dur = msg->t1_ns - msg->t0_ns;
	sp.b = msg->wall_ns;
	sp.a = sp.b - dur;
	sp.len = (double)dur;
	sp.first = sp.a / B;
	sp.last = dur == 0 ? sp.first : (sp.b - 1) / B;
	rings[0] = &s->rr;
	rings[1] = &m->nodes[s->node].rr;
	rings[2] = &m->all;
	nrings = 3;
	/* a clock more than a ring span ahead of the model's would wipe the
	 * shared rings: it only feeds its own */
	if (m->ticked && sp.last > m->now / B &&
	    sp.last - m->now / B > m->opts.ring_bins) {
		m->lst.rate_ahead++;
		nrings = 1;
	}
	for (int i = 0; i < nrings; i++) {
		struct rring *r = rring_get(m, rings[i], sp.last);

		if (r == NULL) {
			m->lst.rate_skipped++;
			return;
		}
		clipped |= rring_add(m, r, &sp, amt, s->rate_mask);
	}
	if (clipped)
		m->lst.rate_clipped++;
}

/* ---- live side: window histograms --------------------------------------------- */

/* Deltas of one histogram metric of one source by window slot: segment k
 * (bins [end[k-1], end[k])) holds slot slot0 + k, sorted by index; one block:
 * header, win_slots segment ends, bins. */
struct wbin {
	uint32_t idx, count;
};

struct wring {
	uint64_t slot0;
	uint32_t n, cap;
	uint32_t end[];
};

static size_t wring_hdr(const iogp_model *m)
{
	return (sizeof(struct wring) + m->win_slots * sizeof(uint32_t) + 7) & ~(size_t)7;
}

static size_t wring_size(const iogp_model *m, uint32_t cap)
{
	return wring_hdr(m) + (size_t)cap * sizeof(struct wbin);
}

static struct wbin *wring_bins(const iogp_model *m, const struct wring *w)
{
	return (struct wbin *)(void *)((char *)(uintptr_t)w + wring_hdr(m));
}

/* Empty segments [0, e); returns how many of them held anything. */
static uint32_t wring_drop_front(const iogp_model *m, struct wring *w, uint32_t e)
{
	uint32_t drop = e > 0 ? w->end[e - 1] : 0, nonempty = 0;
	struct wbin *b = wring_bins(m, w);

	for (uint32_t k = 0; k < e; k++)
		nonempty += w->end[k] > (k > 0 ? w->end[k - 1] : 0);
	if (drop == 0)
		return 0;
	memmove(b, b + drop, (size_t)(w->n - drop) * sizeof *b);
	for (uint32_t k = 0; k < m->win_slots; k++)
		w->end[k] = w->end[k] > drop ? w->end[k] - drop : 0;
	w->n -= drop;
	return nonempty;
}

/* Move the ring d slots forward. */
static void wring_shift(const iogp_model *m, struct wring *w, uint64_t d)
{
	uint32_t NS = m->win_slots;

	if (d >= NS) {
		w->n = 0;
		memset(w->end, 0, NS * sizeof w->end[0]);
	} else {
		wring_drop_front(m, w, (uint32_t)d);
		memmove(w->end, w->end + d, (NS - d) * sizeof w->end[0]);
		for (uint32_t k = NS - (uint32_t)d; k < NS; k++)
			w->end[k] = w->n;
	}
	w->slot0 += d;
}

/* Bytes ring w (NULL: a new one) of source s may hold: its share of the
 * source's budget, and no more than the budget has left. */
static size_t wring_left(const iogp_model *m, const struct source *s, const struct wring *w)
{
	size_t share = m->opts.window_bytes / (s->nhist > 0 ? s->nhist : 1);
	size_t left = m->opts.window_bytes - s->win_bytes +
	              (w != NULL ? wring_size(m, w->cap) : 0);

	return share < left ? share : left;
}

/* Room for add more entries within the ring's share, evicting the oldest
 * segments before k if that is what it takes. */
static bool wring_room(iogp_model *m, struct source *s, struct slot *sl, uint32_t k, uint32_t add)
{
	struct wring *w = sl->win, *nw;
	size_t old = wring_size(m, w->cap), left = wring_left(m, s, w);
	uint32_t need = w->n + add, cap;

	if (wring_size(m, need) > left) {
		uint32_t e = 1;

		while (e <= k && wring_size(m, w->n - w->end[e - 1] + add) > left)
			e++;
		if (e > k)
			return false;
		m->lst.window_evicted += wring_drop_front(m, w, e);
		need = w->n + add;
		if (need <= w->cap)
			return true;
	}
	cap = need + need / 2;
	if (wring_size(m, cap) > left)
		cap = need;
	nw = realloc(w, wring_size(m, cap));
	if (nw == NULL)
		return false;
	s->win_bytes = (uint32_t)(s->win_bytes - old + wring_size(m, cap));
	m->lst.live_bytes = m->lst.live_bytes - old + wring_size(m, cap);
	nw->cap = cap;
	sl->win = nw;
	return true;
}

static void win_add(iogp_model *m, struct source *s, struct slot *sl, uint64_t j,
                    const iogp_bin *in, uint32_t nin)
{
	uint32_t NS = m->win_slots, usable = 0, add = 0, k, s0, s1, p;
	bool wide = false;
	struct wring *w = sl->win;
	struct wbin *b;
	int64_t o, q, i;

	for (uint32_t x = 0; x < nin; x++) {
		if (in[x].count == 0)
			continue;
		if (in[x].idx > UINT32_MAX)
			wide = true;
		else
			usable++;
	}
	if (wide)
		m->lst.window_dropped++;
	if (usable == 0)
		return;
	if (w == NULL) {
		uint32_t cap = usable < 8 ? 8 : usable;
		size_t sz = wring_size(m, cap);

		if (sz > wring_left(m, s, NULL) || (w = calloc(1, sz)) == NULL) {
			m->lst.window_dropped++;
			return;
		}
		w->slot0 = j >= NS - 1 ? j - (NS - 1) : 0;
		w->cap = cap;
		s->win_bytes += (uint32_t)sz;
		m->lst.live_bytes += sz;
		sl->win = w;
	}
	if (j < w->slot0) {
		m->lst.window_late++;
		return;
	}
	if (j - w->slot0 >= NS)
		wring_shift(m, w, j - w->slot0 - (NS - 1));
	k = (uint32_t)(j - w->slot0);
	b = wring_bins(m, w);
	s0 = k > 0 ? w->end[k - 1] : 0;
	s1 = w->end[k];
	p = s0;
	for (uint32_t x = 0; x < nin; x++) {
		if (in[x].count == 0 || in[x].idx > UINT32_MAX)
			continue;
		while (p < s1 && b[p].idx < in[x].idx)
			p++;
		add += p == s1 || b[p].idx != in[x].idx;
	}
	if (w->n + add > w->cap) {
		if (!wring_room(m, s, sl, k, add)) {
			m->lst.window_dropped++;
			return;
		}
		w = sl->win;
		b = wring_bins(m, w);
		s0 = k > 0 ? w->end[k - 1] : 0;
		s1 = w->end[k];
	}
	memmove(b + s1 + add, b + s1, (size_t)(w->n - s1) * sizeof *b);
	for (uint32_t x = k; x < NS; x++)
		w->end[x] += add;
	w->n += add;
	/* merge from the back into the widened segment */
	o = (int64_t)s1 + add - 1;
	q = (int64_t)s1 - 1;
	for (i = (int64_t)nin - 1; i >= 0;) {
		const iogp_bin *x = &in[i];

		if (x->count == 0 || x->idx > UINT32_MAX) {
			i--;
		} else if (q >= (int64_t)s0 && b[q].idx > x->idx) {
			b[o--] = b[q--];
		} else if (q >= (int64_t)s0 && b[q].idx == x->idx) {
			uint64_t c = (uint64_t)b[q].count + x->count;

			if (c > UINT32_MAX) {
				c = UINT32_MAX;
				m->lst.window_saturated++;
			}
			b[o] = (struct wbin){ b[q].idx, (uint32_t)c };
			o--, q--, i--;
		} else {
			if (x->count > UINT32_MAX)
				m->lst.window_saturated++;
			b[o--] = (struct wbin){ (uint32_t)x->idx,
			                        x->count > UINT32_MAX ? UINT32_MAX : (uint32_t)x->count };
			i--;
		}
	}
	sl->win_n = w->n;
}

/* A DELTA touches a few lines of every ring it feeds, on a source that is
 * usually cold: ask for them all first, so the misses overlap with the
 * cumulative work. */
static void live_prefetch(const iogp_model *m, const struct source *s, const iogp_msg *msg)
{
	uint64_t bin = msg->wall_ns > 0 ? (msg->wall_ns - 1) / m->opts.bin_ns : 0;
	const struct rring *rr[3] = { s->rr, m->nodes[s->node].rr, m->all };
	uint32_t p = (uint32_t)(bin % m->opts.ring_bins);

	for (int i = 0; i < 3; i++) {
		if (rr[i] != NULL) {
			__builtin_prefetch(rr[i]);
			__builtin_prefetch(&rr[i]->v[(size_t)p * m->opts.nrates]);
			__builtin_prefetch(rring_cov(m, rr[i]) + p);
		}
	}
	for (uint32_t i = 0; i < msg->nhists && i < 32; i++) {
		uint32_t x = slot_by_id(s, msg->hists[i].id);
		const struct slot *sl;

		if (x == NONE)
			continue;
		sl = &s->slots[x];
		if (sl->bins != NULL)
			__builtin_prefetch(sl->bins);
		if (sl->win != NULL) {
			const struct wbin *b = wring_bins(m, sl->win);

			__builtin_prefetch(sl->win);
			__builtin_prefetch((const char *)sl->win + 64);
			if (sl->win_n > 0)
				__builtin_prefetch(&b[sl->win_n - 1]);
			if (sl->win_n > 8)
				__builtin_prefetch(&b[sl->win_n - 9]);
		}
	}
}

/* ---- applying messages ------------------------------------------------------ */

static void note_applied(iogp_model *m, struct source *s, uint64_t recv_ns)
{
	uint64_t sec = recv_ns / 1000000000ull;

	if (m->mps[sec % MODEL_MPS_RING].sec != sec) {
		m->mps[sec % MODEL_MPS_RING].sec = sec;
		m->mps[sec % MODEL_MPS_RING].n = 0;
	}
	m->mps[sec % MODEL_MPS_RING].n++;
	s->replaced = false;
	if (s->messages == 0 || recv_ns < s->first_recv)
		s->first_recv = recv_ns;
	if (s->messages == 0 || recv_ns > s->last_recv)
		s->last_recv = recv_ns;
	s->messages++;
	if (!m->have_recv || recv_ns < m->st.first_recv_ns)
		m->st.first_recv_ns = recv_ns;
	if (!m->have_recv || recv_ns > m->st.last_recv_ns)
		m->st.last_recv_ns = recv_ns;
	m->have_recv = true;
	m->st.messages++;
}

/* A forward jump of more than this many numbers is held in doubt: one
 * source's messages never arrive out of order, so a message numbered inside
 * the jump proves it false (a spoofed sequence number), and it is undone. */
#define SEQ_JUMP_DOUBT 64

/* Move the sequence forward; returns the number of sequence numbers missed. */
static uint64_t seq_advance(iogp_model *m, struct source *s, uint64_t seq)
{
	uint64_t g = 0;

	if (!s->has_seq) {
		/* nothing to check a first number against: in doubt until the next */
		s->has_seq = true;
		s->last_seq = seq;
		s->jumped = true;
		s->pre_jump_seq = 0;
		s->jump_gaps = 0;
		return 0;
	}
	if (seq > s->last_seq) {
		g = seq - s->last_seq - 1;
		if (g > SEQ_JUMP_DOUBT) {
			s->jumped = true;
			s->pre_jump_seq = s->last_seq;
			s->jump_gaps = g;
		} else if (s->jumped && g == 0) {
			s->jumped = false;   /* the stream goes on from the jump: real */
		}
		s->gaps += g;
		m->st.gaps += g;
		s->last_seq = seq;
	}
	return g;
}

/* seq is at or behind the source's last: a duplicate (true), or the proof
 * that the last jump was false (undone; the message then applies). */
static bool seq_is_old(iogp_model *m, struct source *s, uint64_t seq, bool allow_equal)
{
	if (!s->has_seq || seq > s->last_seq || (allow_equal && seq == s->last_seq))
		return false;
	if (s->jumped && seq > s->pre_jump_seq) {
		s->gaps -= s->jump_gaps;
		m->st.gaps -= s->jump_gaps;
		m->st.seq_spoofs++;
		s->last_seq = seq - 1;
		s->jumped = false;
		s->in_sync = false;   /* what came with the false jump: until a SNAPSHOT */
		return false;
	}
	return true;
}

static void times_note(struct source *s, const iogp_msg *msg, bool snapshot)
{
	if (snapshot || !s->has_mono) {
		s->start_mono = msg->t0_ns;
		s->has_mono = true;
	}
	s->last_mono = msg->t1_ns;
	if (msg->wall_ns != 0) {
		if (!s->has_wall) {
			s->first_wall = msg->wall_ns;
			s->has_wall = true;
		}
		s->last_wall = msg->wall_ns;
	}
}

static int catalog_apply(iogp_model *m, uint32_t si, const iogp_msg *msg)
{
	int r = labels_set(m, si, msg);

	for (uint32_t i = 0; r == 0 && i < msg->nmetrics; i++)
		r = catalog_add(m, si, &msg->metrics[i]);
	return r;
}

static int get_source(iogp_model *m, const iogp_msg *msg, uint32_t *si)
{
	int err = 0;

	const char *host = labels_find(msg->labels, msg->nlabels, "host");

	*si = src_find(m, msg->source);
	if (*si == NONE)
		*si = source_new(m, msg->source, host != NULL ? host : "", &err);
	return *si == NONE ? err : 0;
}

static void final_check(struct source *s, const iogp_msg *msg)
{
	if (msg->flags & IOGP_F_FINAL)
		s->state = IOGP_SRC_GONE;
}

static int apply_hello(iogp_model *m, const iogp_msg *msg, uint64_t recv_ns)
{
	struct source *s;
	uint32_t si;
	int r;

	if ((r = get_source(m, msg, &si)) < 0)
		return r;
	r = catalog_apply(m, si, msg);
	s = &m->src[si];
	if (r < 0) {
		s->in_sync = false;
		return r;
	}
	(void)seq_is_old(m, s, msg->seq, true);
	if (seq_advance(m, s, msg->seq) > 0)
		s->in_sync = false;
	final_check(s, msg);
	note_applied(m, s, recv_ns);
	return 0;
}

/* acc (DELTAs, live side on) collects rate increments and feeds windows. */
static int apply_values(iogp_model *m, struct source *s, const iogp_msg *msg, bool snapshot,
                        struct live_acc *acc)
{
	int r = 0;

	for (uint32_t i = 0; i < msg->ncounters; i++) {
		struct slot *sl = &s->slots[slot_by_id(s, msg->counters[i].id)];
		uint64_t v = msg->counters[i].value;

		sl->counter = snapshot ? v : sl->counter + v;
		if (acc != NULL && sl->rate != 0)
			acc->amt[sl->rate - 1] += (double)v;
	}
	for (uint32_t i = 0; i < msg->ngauges; i++)
		s->slots[slot_by_id(s, msg->gauges[i].id)].gauge = msg->gauges[i].value;
	for (uint32_t i = 0; i < msg->nhists; i++) {
		const iogp_hist_val *h = &msg->hists[i];
		struct slot *sl = &s->slots[slot_by_id(s, h->id)];
		int e;

		if ((e = slot_hist_add(m, s, sl, h->bins, h->nbins)) < 0) {
			r = e;
			continue;
		}
		if (acc == NULL || !sl->linked)
			continue;
		if (sl->rate != 0) {
			for (uint32_t j = 0; j < h->nbins; j++)
				acc->amt[sl->rate - 1] += (double)h->bins[j].count;
		}
		if (acc->win)
			win_add(m, s, sl, acc->slot, h->bins, h->nbins);
	}
	if (msg->naccess > 0) {
		const iogp_access *newest = ring_newest(m, s);
		uint64_t after = newest != NULL ? newest->t_ns : 0;

		for (uint32_t i = 0; i < msg->naccess && r == 0; i++) {
			/* a SNAPSHOT repeats the ring: keep only what is newer */
			if (snapshot && newest != NULL && msg->access[i].t_ns <= after)
				continue;
			r = ring_push(m, s, &msg->access[i]);
		}
	}
	s->access_seen = snapshot ? msg->access_seen : s->access_seen + msg->access_seen;
	if (r == 0)
		r = files_add(m, s, msg->files, msg->nfiles);
	s->dropped = msg->dropped;
	times_note(s, msg, snapshot);
	return r;
}

static int apply_delta(iogp_model *m, const iogp_msg *msg, uint64_t recv_ns)
{
	uint32_t si = src_find(m, msg->source);
	struct live_acc acc;
	struct source *s;
	int r;

	if (si == NONE) {
		m->st.unknown++;
		return IOGP_EUNKNOWN;
	}
	s = &m->src[si];
	if (seq_is_old(m, s, msg->seq, false)) {
		m->st.duplicates++;
		return 0;
	}
	if (m->opts.live)
		live_prefetch(m, s, msg);
	if ((r = values_check(m, s, msg)) < 0) {
		if (r == IOGP_EUNKNOWN)
			m->st.unknown++;
		else
			m->st.bad_messages++;
		return r;
	}
	if (seq_advance(m, s, msg->seq) > 0)
		s->in_sync = false;
	if (m->opts.live) {
		memset(acc.amt, 0, sizeof acc.amt);
		acc.win = msg->wall_ns != 0;
		acc.slot = msg->wall_ns / m->opts.window_slot_ns;
	}
	r = apply_values(m, s, msg, false, m->opts.live ? &acc : NULL);
	if (r < 0)
		s->in_sync = false;
	if (m->opts.live)
		live_rates(m, s, msg, acc.amt);
	if (msg->t1_ns >= msg->t0_ns) {
		uint64_t d = msg->t1_ns - msg->t0_ns;

		d = d < MODEL_IV_MIN ? MODEL_IV_MIN : d > MODEL_IV_MAX ? MODEL_IV_MAX : d;
		s->iv = s->iv == 0 ? d : (uint64_t)((int64_t)s->iv + ((int64_t)d - (int64_t)s->iv) / 8);
	}
	if (msg->wall_ns > m->wall_hi)
		m->wall_hi = msg->wall_ns;
	final_check(s, msg);
	note_applied(m, s, recv_ns);
	return r;
}

static int apply_snapshot(iogp_model *m, const iogp_msg *msg, uint64_t recv_ns)
{
	struct source *s;
	uint32_t si = src_find(m, msg->source);
	int r;

	if (si != NONE && seq_is_old(m, &m->src[si], msg->seq, true)) {
		m->st.duplicates++;
		return 0;
	}
	if ((r = get_source(m, msg, &si)) < 0)
		return r;
	r = catalog_apply(m, si, msg);
	s = &m->src[si];
	if (r == 0 && (r = values_check(m, s, msg)) < 0) {
		if (r == IOGP_EUNKNOWN)
			m->st.unknown++;
		else
			m->st.bad_messages++;
	}
	if (r < 0) {
		s->in_sync = false;
		return r;
	}
	seq_advance(m, s, msg->seq);
	for (uint32_t i = 0; i < s->nslots; i++) {
		s->slots[i].counter = 0;
		cost_sub(m, s, s->slots[i].n * COST_BIN);
		s->slots[i].n = 0;
		s->slots[i].total = 0;
	}
	r = apply_values(m, s, msg, true, NULL);
	s->in_sync = r == 0;
	final_check(s, msg);
	note_applied(m, s, recv_ns);
	return r;
}

static int apply_bye(iogp_model *m, const iogp_msg *msg, uint64_t recv_ns)
{
	uint32_t si = src_find(m, msg->source);
	struct source *s;

	if (si == NONE) {
		m->st.unknown++;
		return IOGP_EUNKNOWN;
	}
	s = &m->src[si];
	if (seq_is_old(m, s, msg->seq, true)) {
		m->st.duplicates++;
		return 0;
	}
	if (seq_advance(m, s, msg->seq) > 0)
		s->in_sync = false;
	s->state = IOGP_SRC_GONE;
	note_applied(m, s, recv_ns);
	return 0;
}

int iogp_model_apply(iogp_model *m, const iogp_msg *msg, uint64_t recv_ns)
{
	int r;

	if (m == NULL || msg == NULL)
		return IOGP_EINVAL;
	if (msg->kind < IOGP_HELLO || msg->kind > IOGP_BYE)
		return 0;  /* a kind from a newer version: skipped */
	m->cur_recv = recv_ns;
	if ((r = msg_check(msg)) < 0) {
		m->st.bad_messages++;
		return r;
	}
	switch (msg->kind) {
	case IOGP_HELLO:
		return apply_hello(m, msg, recv_ns);
	case IOGP_DELTA:
		return apply_delta(m, msg, recv_ns);
	case IOGP_SNAPSHOT:
		return apply_snapshot(m, msg, recv_ns);
	case IOGP_BYE:
		return apply_bye(m, msg, recv_ns);
	}
	return 0;
}

int iogp_model_feed(iogp_model *m, const void *payload, size_t len, uint64_t recv_ns)
{
	int r;

	if (m == NULL || (payload == NULL && len > 0))
		return IOGP_EINVAL;
	r = iogp_msg_decode(&m->scratch, payload, len, NULL, 0);
	if (r < 0) {
		m->st.bad_messages++;
		return r;
	}
	return iogp_model_apply(m, &m->scratch, recv_ns);
}

/* ---- sources, nodes, metrics: queries ----------------------------------------- */

size_t iogp_model_source_count(const iogp_model *m)
{
	return m != NULL ? m->nsrc : 0;
}

int iogp_model_source(const iogp_model *m, size_t i, iogp_source_info *out)
{
	const struct source *s;

	if (m == NULL || out == NULL || i >= m->nsrc)
		return IOGP_EINVAL;
	s = &m->src[i];
	memset(out, 0, sizeof *out);
	out->id = s->id;
	out->host = s->host;
	out->node = m->nodes[s->node].name;
	out->pid = s->pid;
	out->rank = s->rank;
	out->state = src_state(m, s, m->now, m->ticked);
	out->in_sync = s->in_sync;
	out->last_seq = s->last_seq;
	out->messages = s->messages;
	out->gaps = s->gaps;
	out->dropped = s->dropped;
	out->first_recv_ns = s->first_recv;
	out->last_recv_ns = s->last_recv;
	out->first_wall_ns = s->first_wall;
	out->last_wall_ns = s->last_wall;
	out->start_mono_ns = s->start_mono;
	out->last_mono_ns = s->last_mono;
	out->bye = s->state == IOGP_SRC_GONE;
	out->interval_ns = s->iv;
	out->restart_of = s->restart_of == NONE ? -1 : (int64_t)s->restart_of;
	out->restarted_by = s->restarted_by == NONE ? -1 : (int64_t)s->restarted_by;
	out->restart_of_id = s->restart_of == NONE ? 0 : m->src[s->restart_of].id;
	out->restarted_by_id = s->restarted_by == NONE ? 0 : m->src[s->restarted_by].id;
	return 0;
}

int iogp_model_source_index(const iogp_model *m, uint64_t id, size_t *i)
{
	uint32_t si;

	if (m == NULL)
		return IOGP_EINVAL;
	si = src_find(m, id);
	if (si == NONE)
		return IOGP_ENOTFOUND;
	if (i != NULL)
		*i = si;
	return 0;
}

const char *iogp_model_source_label(const iogp_model *m, size_t i, const char *key)
{
	if (m == NULL || key == NULL || i >= m->nsrc)
		return NULL;
	return labels_find(m->src[i].labels, m->src[i].nlabels, key);
}

size_t iogp_model_source_labels(const iogp_model *m, size_t i, const iogp_label **labels)
{
	if (m == NULL || i >= m->nsrc) {
		if (labels != NULL)
			*labels = NULL;
		return 0;
	}
	if (labels != NULL)
		*labels = m->src[i].labels;
	return m->src[i].nlabels;
}

size_t iogp_model_node_count(const iogp_model *m)
{
	return m != NULL ? m->nnodes : 0;
}

const char *iogp_model_node(const iogp_model *m, size_t i)
{
	if (m == NULL || i >= m->nnodes)
		return NULL;
	return m->nodes[i].name;
}

size_t iogp_model_metric_count(const iogp_model *m)
{
	return m != NULL ? m->ngm : 0;
}

int iogp_model_metric(const iogp_model *m, size_t i, iogp_metric_info *out)
{
	const struct gmetric *g;

	if (m == NULL || out == NULL || i >= m->ngm)
		return IOGP_EINVAL;
	g = &m->gm[i];
	memset(out, 0, sizeof *out);
	out->name = g->name;
	out->unit = g->unit;
	out->kind = g->kind;
	if (g->scheme != NONE)
		out->bins = m->schemes[g->scheme]->b;
	return 0;
}

int iogp_model_metric_find(const iogp_model *m, const char *name, size_t *i)
{
	uint32_t gi;

	if (m == NULL || name == NULL)
		return IOGP_EINVAL;
	gi = gm_find(m, name);
	if (gi == NONE)
		return IOGP_ENOTFOUND;
	if (i != NULL)
		*i = gi;
	return 0;
}

/* ---- selections ----------------------------------------------------------- */

typedef void (*visit_fn)(void *ctx, const iogp_model *m, const struct slot *sl);

/* Call fn for every linked slot of metric gi within the selection. */
static int sel_visit(const iogp_model *m, uint32_t gi, const iogp_sel *sel, visit_fn fn, void *ctx)
{
	iogp_sel all = { .kind = IOGP_SEL_ALL };

	if (sel == NULL)
		sel = &all;
	switch (sel->kind) {
	case IOGP_SEL_ALL: {
		const struct gmetric *g = &m->gm[gi];

		for (uint32_t i = 0; i < g->n; i++)
			fn(ctx, m, &m->src[g->h[i].src].slots[g->h[i].slot]);
		return 0;
	}
	case IOGP_SEL_NODE: {
		uint32_t ni = node_find(m, sel->node != NULL ? sel->node : "");
		const struct node *n;

		if (ni == NONE)
			return IOGP_ENOTFOUND;
		n = &m->nodes[ni];
		for (uint32_t i = 0; i < n->n; i++) {
			const struct source *s = &m->src[n->src[i]];
			uint32_t sl = slot_by_gm(s, gi);

			if (sl != NONE)
				fn(ctx, m, &s->slots[sl]);
		}
		return 0;
	}
	case IOGP_SEL_SOURCE: {
		uint32_t si = src_find(m, sel->source);
		uint32_t sl;

		if (si == NONE)
			return IOGP_ENOTFOUND;
		sl = slot_by_gm(&m->src[si], gi);
		if (sl != NONE)
			fn(ctx, m, &m->src[si].slots[sl]);
		return 0;
	}
	}
	return IOGP_EINVAL;
}

static int metric_lookup(const iogp_model *m, const char *metric, iogp_metric_kind kind,
                         uint32_t *gi)
{
	if (m == NULL || metric == NULL)
		return IOGP_EINVAL;
	*gi = gm_find(m, metric);
	if (*gi == NONE)
		return IOGP_ENOTFOUND;
	return m->gm[*gi].kind == kind ? 0 : IOGP_EINVAL;
}

static void visit_counter(void *ctx, const iogp_model *m, const struct slot *sl)
{
	(void)m;
	*(uint64_t *)ctx += sl->counter;
}

static void visit_gauge(void *ctx, const iogp_model *m, const struct slot *sl)
{
	(void)m;
	*(int64_t *)ctx = (int64_t)((uint64_t)*(int64_t *)ctx + (uint64_t)sl->gauge);
}

int iogp_model_counter(const iogp_model *m, const char *metric, const iogp_sel *sel, uint64_t *out)
{
	uint64_t sum = 0;
	uint32_t gi;
	int r;

	if (out == NULL)
		return IOGP_EINVAL;
	*out = 0;
	if ((r = metric_lookup(m, metric, IOGP_COUNTER, &gi)) < 0)
		return r;
	if ((r = sel_visit(m, gi, sel, visit_counter, &sum)) < 0)
		return r;
	*out = sum;
	return 0;
}

int iogp_model_gauge(const iogp_model *m, const char *metric, const iogp_sel *sel, int64_t *out)
{
	int64_t sum = 0;
	uint32_t gi;
	int r;

	if (out == NULL)
		return IOGP_EINVAL;
	*out = 0;
	if ((r = metric_lookup(m, metric, IOGP_GAUGE, &gi)) < 0)
		return r;
	if ((r = sel_visit(m, gi, sel, visit_gauge, &sum)) < 0)
		return r;
	*out = sum;
	return 0;
}

struct hist_ctx {
	uint32_t scheme;     /* of the first slot found, NONE before */
	uint32_t nslots;     /* slots with that scheme and some data */
	bool mismatch;
	uint64_t *dense;
	iogp_hist *out;
	int err;
};

static void visit_hist_scan(void *ctx, const iogp_model *m, const struct slot *sl)
{
	struct hist_ctx *c = ctx;

	(void)m;
	if (c->scheme == NONE)
		c->scheme = sl->scheme;
	if (sl->scheme != c->scheme)
		c->mismatch = true;
	else if (sl->n > 0)
		c->nslots++;
}

static void visit_hist_add(void *ctx, const iogp_model *m, const struct slot *sl)
{
	struct hist_ctx *c = ctx;
	int r;

	(void)m;
	if (sl->scheme != c->scheme || sl->n == 0)
		return;
	if (c->dense != NULL) {
		for (size_t i = 0; i < sl->n; i++) {
			uint64_t *d = &c->dense[sl->bins[i].idx];

			*d = *d + sl->bins[i].count < *d ? UINT64_MAX : *d + sl->bins[i].count;
		}
		return;
	}
	if ((r = iogp_hist_add_bins(c->out, sl->bins, sl->n)) < 0)
		c->err = r;
}

/* out is always initialised, also on error, so it can always be freed. */
/* out += the non-zero entries of dense[0, nb): merging many sources is
 * cheaper through one flat array than through repeated sparse merges. */
static int dense_add(iogp_hist *out, const uint64_t *dense, uint64_t nb)
{
	size_t n = 0;

	for (uint64_t i = 0; i < nb; i++)
		n += dense[i] != 0;
	iogp_bin *b = malloc((n ? n : 1) * sizeof *b);
	if (b == NULL)
		return IOGP_ENOMEM;
	n = 0;
	for (uint64_t i = 0; i < nb; i++)
		if (dense[i] != 0)
			b[n++] = (iogp_bin){ i, dense[i] };
	int rc = iogp_hist_add_bins(out, b, n);
	free(b);
	return rc;
}

int iogp_model_hist(const iogp_model *m, const char *metric, const iogp_sel *sel, iogp_hist *out)
{
	struct hist_ctx c = { .scheme = NONE, .out = out };
	iogp_bins nat;
	uint32_t gi;
	int r;

	if (out == NULL)
		return IOGP_EINVAL;
	if ((r = metric_lookup(m, metric, IOGP_HISTOGRAM, &gi)) < 0 ||
	    (r = sel_visit(m, gi, sel, visit_hist_scan, &c)) < 0) {
		iogp_bins_native(&nat, IOGP_NATIVE_K_DEFAULT);
		iogp_hist_init(out, &nat);
		return r;
	}
	if (c.scheme == NONE)
		c.scheme = m->gm[gi].scheme;
	iogp_hist_init(out, &m->schemes[c.scheme]->b);
	if (c.nslots > 4 && m->schemes[c.scheme]->nbins <= MODEL_DENSE_MAX) {
		uint64_t nb = m->schemes[c.scheme]->nbins;

		c.dense = calloc(nb, sizeof *c.dense);
		if (c.dense != NULL) {
			sel_visit(m, gi, sel, visit_hist_add, &c);
			c.err = dense_add(out, c.dense, nb);
			free(c.dense);
			if (c.err < 0)
				return c.err;
			return c.mismatch ? IOGP_ESCHEME : 0;
		}
	}
	sel_visit(m, gi, sel, visit_hist_add, &c);
	if (c.err < 0)
		return c.err;
	return c.mismatch ? IOGP_ESCHEME : 0;
}

/* ---- live side: queries ----------------------------------------------------- */

void iogp_model_tick(iogp_model *m, uint64_t now_ns)
{
	if (m == NULL)
		return;
	if (!m->ticked || now_ns > m->now)
		m->now = now_ns;
	m->ticked = true;
}

const iogp_model_opts *iogp_model_get_opts(const iogp_model *m)
{
	return m != NULL ? &m->opts : NULL;
}

static uint64_t model_clock(const iogp_model *m)
{
	return m->ticked ? m->now : m->wall_hi;
}

static int rate_lookup(const iogp_model *m, const char *metric, uint32_t *ri)
{
	if (!m->opts.live)
		return IOGP_EINVAL;
	for (uint32_t i = 0; i < m->opts.nrates; i++) {
		if (strcmp(m->rate_names[i], metric) == 0) {
			*ri = i;
			return 0;
		}
	}
	return IOGP_ENOTFOUND;
}

/* The ring of a selection; NULL (and 0) when it has no rate data yet. */
static int sel_ring(const iogp_model *m, const iogp_sel *sel, const struct rring **r)
{
	uint32_t i;

	*r = NULL;
	if (sel == NULL || sel->kind == IOGP_SEL_ALL) {
		*r = m->all;
		return 0;
	}
	switch (sel->kind) {
	case IOGP_SEL_NODE:
		i = node_find(m, sel->node != NULL ? sel->node : "");
		if (i == NONE)
			return IOGP_ENOTFOUND;
		*r = m->nodes[i].rr;
		return 0;
	case IOGP_SEL_SOURCE:
		i = src_find(m, sel->source);
		if (i == NONE)
			return IOGP_ENOTFOUND;
		*r = m->src[i].rr;
		return 0;
	default:
		return IOGP_EINVAL;
	}
}

/* Last bin of a query: the one holding end_ns - 1, or the ring's newest. */
static bool query_end(const iogp_model *m, const struct rring *r, uint64_t end_ns, uint64_t *e)
{
	if (end_ns != 0)
		*e = (end_ns - 1) / m->opts.bin_ns;
	else if (r != NULL)
		*e = r->hi;
	else
		return false;
	return true;
}

/* Bin i of n ending at e: false before bin 0. */
static bool query_bin(uint64_t e, size_t n, size_t i, uint64_t *b)
{
	uint64_t back = (uint64_t)(n - 1 - i);

	if (back > e)
		return false;
	*b = e - back;
	return true;
}

/* Amount of metric ri in absolute bin b of r, when covered. */
static bool rring_at(const iogp_model *m, const struct rring *r, uint32_t ri, uint64_t b, double *v)
{
	uint32_t L = m->opts.ring_bins, p;

	if (b > r->hi || r->hi - b >= L)
		return false;
	p = (uint32_t)(b % L);
	if (!(rring_cov(m, r)[p] & (1u << ri)))
		return false;
	*v = r->v[(size_t)p * m->opts.nrates + ri];
	return true;
}

static uint64_t first_bin_ns(const iogp_model *m, uint64_t e, size_t n)
{
	uint64_t back = n > 0 ? (uint64_t)(n - 1) : 0;

	if (n == 0)
		return (e + 1) * m->opts.bin_ns;
	return back > e ? 0 : (e - back) * m->opts.bin_ns;
}

int iogp_model_rate(const iogp_model *m, const char *metric, const iogp_sel *sel,
                    uint64_t end_ns, size_t n, double *rate, uint8_t *covered,
                    uint64_t *first_ns)
{
	const struct rring *r;
	uint64_t e, b;
	uint32_t ri;
	double per_s;
	int rc;

	if (first_ns != NULL)
		*first_ns = 0;
	if (m == NULL || metric == NULL || (n > 0 && (rate == NULL || covered == NULL)))
		return IOGP_EINVAL;
	if (n > 0) {
		memset(rate, 0, n * sizeof *rate);
		memset(covered, 0, n);
	}
	if ((rc = rate_lookup(m, metric, &ri)) < 0 || (rc = sel_ring(m, sel, &r)) < 0)
		return rc;
	if (!query_end(m, r, end_ns, &e))
		return 0;
	if (first_ns != NULL)
		*first_ns = first_bin_ns(m, e, n);
	if (r == NULL)
		return 0;
	per_s = 1e9 / (double)m->opts.bin_ns;
	for (size_t i = 0; i < n; i++) {
		double v;

		if (query_bin(e, n, i, &b) && rring_at(m, r, ri, b, &v)) {
			rate[i] = v * per_s;
			covered[i] = 1;
		}
	}
	return 0;
}

int iogp_model_rate_across(const iogp_model *m, const char *metric, uint64_t end_ns,
                           size_t n, iogp_rate_across *out, uint64_t *first_ns)
{
	uint64_t e, b;
	uint32_t ri;
	double per_s;
	int rc;

	if (first_ns != NULL)
		*first_ns = 0;
	if (m == NULL || metric == NULL || (n > 0 && out == NULL))
		return IOGP_EINVAL;
	for (size_t i = 0; i < n; i++)
		out[i] = (iogp_rate_across){ .min_node = -1, .max_node = -1 };
	if ((rc = rate_lookup(m, metric, &ri)) < 0)
		return rc;
	if (!query_end(m, m->all, end_ns, &e))
		return 0;
	if (first_ns != NULL)
		*first_ns = first_bin_ns(m, e, n);
	per_s = 1e9 / (double)m->opts.bin_ns;
	for (uint32_t ni = 0; ni < m->nnodes; ni++) {
		const struct rring *r = m->nodes[ni].rr;

		if (r == NULL)
			continue;
		for (size_t i = 0; i < n; i++) {
			iogp_rate_across *o = &out[i];
			double v;

			if (!query_bin(e, n, i, &b) || !rring_at(m, r, ri, b, &v))
				continue;
			v *= per_s;
			if (o->nodes == 0 || v < o->min) {
				o->min = v;
				o->min_node = (int32_t)ni;
			}
			if (o->nodes == 0 || v > o->max) {
				o->max = v;
				o->max_node = (int32_t)ni;
			}
			o->total += v;
			o->nodes++;
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (out[i].nodes > 0)
			out[i].avg = out[i].total / out[i].nodes;
	}
	return 0;
}

struct win_ctx {
	uint64_t jlo, jhi;
	uint32_t scheme;
	uint32_t nslots;
	bool mismatch;
	uint64_t *dense;
	iogp_hist *out;
	iogp_bin *tmp;
	int err;
};

static void visit_win_scan(void *ctx, const iogp_model *m, const struct slot *sl)
{
	struct win_ctx *c = ctx;

	(void)m;
	if (c->scheme == NONE)
		c->scheme = sl->scheme;
	if (sl->scheme != c->scheme)
		c->mismatch = true;
	else if (sl->win != NULL)
		c->nslots++;
}

static void visit_win_add(void *ctx, const iogp_model *m, const struct slot *sl)
{
	struct win_ctx *c = ctx;
	const struct wring *w = sl->win;
	const struct wbin *b;
	uint64_t lo, hi;

	if (sl->scheme != c->scheme || w == NULL || c->err < 0)
		return;
	lo = c->jlo > w->slot0 ? c->jlo - w->slot0 : 0;
	if (c->jhi < w->slot0)
		return;
	hi = c->jhi - w->slot0;
	if (hi >= m->win_slots)
		hi = m->win_slots - 1;
	if (lo > hi)
		return;
	b = wring_bins(m, w);
	for (uint64_t k = lo; k <= hi; k++) {
		uint32_t s0 = k > 0 ? w->end[k - 1] : 0, s1 = w->end[k];

		if (c->dense != NULL) {
			for (uint32_t i = s0; i < s1; i++) {
				uint64_t *d = &c->dense[b[i].idx];

				*d = *d + b[i].count < *d ? UINT64_MAX : *d + b[i].count;
			}
			continue;
		}
		for (uint32_t i = s0; i < s1; i++)
			c->tmp[i - s0] = (iogp_bin){ b[i].idx, b[i].count };
		if (s1 > s0 && (c->err = iogp_hist_add_bins(c->out, c->tmp, s1 - s0)) < 0)
			return;
	}
}

int iogp_model_hist_window(const iogp_model *m, const char *metric, const iogp_sel *sel,
                           uint64_t window_ns, iogp_hist *out)
{
	struct win_ctx c = { .scheme = NONE, .out = out };
	uint64_t now, nb;
	iogp_bins nat;
	uint32_t gi;
	int r;

	if (out == NULL)
		return IOGP_EINVAL;
	if ((r = metric_lookup(m, metric, IOGP_HISTOGRAM, &gi)) < 0 ||
	    (r = m->opts.live ? 0 : IOGP_EINVAL) < 0 ||
	    (r = sel_visit(m, gi, sel, visit_win_scan, &c)) < 0) {
		iogp_bins_native(&nat, IOGP_NATIVE_K_DEFAULT);
		iogp_hist_init(out, &nat);
		return r;
	}
	if (c.scheme == NONE)
		c.scheme = m->gm[gi].scheme;
	iogp_hist_init(out, &m->schemes[c.scheme]->b);
	if (window_ns == 0 || window_ns > m->opts.window_max_ns)
		window_ns = m->opts.window_max_ns;
	now = model_clock(m);
	c.jhi = now / m->opts.window_slot_ns;
	c.jlo = now > window_ns ? (now - window_ns) / m->opts.window_slot_ns : 0;
	if (c.nslots == 0)
		return c.mismatch ? IOGP_ESCHEME : 0;
	nb = m->schemes[c.scheme]->nbins;
	if (nb <= MODEL_DENSE_MAX) {
		c.dense = calloc(nb, sizeof *c.dense);
		if (c.dense == NULL)
			return IOGP_ENOMEM;
		sel_visit(m, gi, sel, visit_win_add, &c);
		c.err = dense_add(out, c.dense, nb);
		free(c.dense);
	} else {
		/* a segment never holds more than the source's budget allows */
		c.tmp = malloc(m->opts.window_bytes / sizeof(struct wbin) * sizeof *c.tmp + 1);
		if (c.tmp == NULL)
			return IOGP_ENOMEM;
		sel_visit(m, gi, sel, visit_win_add, &c);
		free(c.tmp);
	}
	if (c.err < 0)
		return c.err;
	return c.mismatch ? IOGP_ESCHEME : 0;
}

void iogp_model_get_live(const iogp_model *m, iogp_model_live *out)
{
	uint64_t sec, first, span, sum = 0;

	if (out == NULL)
		return;
	memset(out, 0, sizeof *out);
	if (m == NULL)
		return;
	*out = m->lst;
	out->now_ns = model_clock(m);
	for (uint32_t i = 0; i < m->nsrc; i++) {
		switch (src_state(m, &m->src[i], m->now, m->ticked)) {
		case IOGP_SRC_NEW:
			out->sources_new++;
			break;
		case IOGP_SRC_LIVE:
			out->sources_live++;
			break;
		case IOGP_SRC_QUIET:
			out->sources_quiet++;
			break;
		case IOGP_SRC_GONE:
			out->sources_gone++;
			break;
		}
	}
	if (!m->have_recv)
		return;
	sec = (m->ticked && m->now > m->st.last_recv_ns ? m->now : m->st.last_recv_ns) / 1000000000ull;
	first = m->st.first_recv_ns / 1000000000ull;
	span = sec - first < MODEL_MPS_SECS ? sec - first : MODEL_MPS_SECS;
	for (uint64_t k = 1; k <= span; k++) {
		if (m->mps[(sec - k) % MODEL_MPS_RING].sec == sec - k)
			sum += m->mps[(sec - k) % MODEL_MPS_RING].n;
	}
	out->msgs_per_s = span > 0 ? (double)sum / (double)span : 0;
}

/* ---- access samples and files ---------------------------------------------- */

size_t iogp_model_access(const iogp_model *m, size_t i, const iogp_access **a, size_t *n2,
                         const iogp_access **a2)
{
	const struct source *s;
	size_t n1 = 0, nb = 0;
	const iogp_access *p1 = NULL, *p2 = NULL;

	if (m != NULL && i < m->nsrc && m->src[i].ring_n > 0) {
		s = &m->src[i];
		if (s->ring_n < m->opts.access_ring) {
			p1 = s->ring;
			n1 = s->ring_n;
		} else {
			p1 = s->ring + s->ring_head;
			n1 = m->opts.access_ring - s->ring_head;
			if (s->ring_head > 0) {
				p2 = s->ring;
				nb = s->ring_head;
			}
		}
	}
	if (a != NULL)
		*a = p1;
	if (n2 != NULL)
		*n2 = nb;
	if (a2 != NULL)
		*a2 = p2;
	return n1;
}

const char *iogp_model_file_path(const iogp_model *m, size_t i, uint64_t file_id)
{
	uint32_t fi;

	if (m == NULL || i >= m->nsrc)
		return NULL;
	fi = file_find(&m->src[i], file_id);
	return fi == NONE ? NULL : m->src[i].files[fi].path;
}

void iogp_model_get_stats(const iogp_model *m, iogp_model_stats *st)
{
	if (st == NULL)
		return;
	if (m == NULL) {
		memset(st, 0, sizeof *st);
		return;
	}
	*st = m->st;
}

/* ---- snapshots ---------------------------------------------------------------- */

static size_t align16(size_t n)
{
	return (n + 15) & ~(size_t)15;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_file(const void *a, const void *b)
{
	const iogp_file *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* The arrays go in msg->arena, one block grown with realloc (the layout the
 * decoder uses too; iogp_msg_free releases it). Labels and strings point
 * into the model. Lists are sorted by id, as the encoder requires. The
 * access ring is left out: keyframes stay small, and samples are a recent
 * view that later DELTAs refill. */
int iogp_model_snapshot(const iogp_model *m, size_t i, uint16_t flags, iogp_msg *msg)
{
	const struct source *s;
	size_t off_m, off_c, off_g, off_h, off_f, need;
	uint32_t nc = 0, ng = 0, nh = 0;
	uint64_t *order = NULL;
	void *arena;
	size_t cap;
	char *base;

	if (m == NULL || msg == NULL || i >= m->nsrc)
		return IOGP_EINVAL;
	s = &m->src[i];
	for (uint32_t j = 0; j < s->nslots; j++) {
		nc += s->slots[j].kind == IOGP_COUNTER;
		ng += s->slots[j].kind == IOGP_GAUGE;
		nh += s->slots[j].kind == IOGP_HISTOGRAM && s->slots[j].n > 0;
	}
	off_m = 0;
	off_c = align16(off_m + (size_t)s->nslots * sizeof(iogp_metric_def));
	off_g = align16(off_c + (size_t)nc * sizeof(iogp_counter_val));
	off_h = align16(off_g + (size_t)ng * sizeof(iogp_gauge_val));
	off_f = align16(off_h + (size_t)nh * sizeof(iogp_hist_val));
	need = align16(off_f + (size_t)s->nfiles * sizeof(iogp_file));
	if (need == 0)
		need = 16;

	if (s->nslots > 0) {
		order = malloc(s->nslots * sizeof *order);
		if (order == NULL)
			return IOGP_ENOMEM;
		for (uint32_t j = 0; j < s->nslots; j++)
			order[j] = (uint64_t)s->slots[j].id << 32 | j;
		qsort(order, s->nslots, sizeof *order, cmp_u64);
	}
	arena = msg->arena;
	cap = msg->arena_cap;
	if (cap < need) {
		void *p = realloc(arena, need);

		if (p == NULL) {
			free(order);
			return IOGP_ENOMEM;
		}
		arena = p;
		cap = need;
	}
	memset(msg, 0, sizeof *msg);
	msg->arena = arena;
	msg->arena_cap = cap;
	msg->arena_len = need;
	base = arena;

	msg->version = IOGP_WIRE_VERSION;
	msg->kind = IOGP_SNAPSHOT;
	msg->flags = flags | (s->state == IOGP_SRC_GONE ? IOGP_F_FINAL : 0);
	msg->source = s->id;
	msg->seq = s->last_seq;
	msg->nlabels = s->nlabels;
	msg->labels = s->labels;
	msg->t0_ns = s->start_mono;
	msg->t1_ns = s->last_mono > s->start_mono ? s->last_mono : s->start_mono;
	msg->wall_ns = s->last_wall;
	msg->dropped = s->dropped;
	msg->access_seen = s->access_seen;

	msg->metrics = (iogp_metric_def *)(base + off_m);
	msg->counters = (iogp_counter_val *)(base + off_c);
	msg->gauges = (iogp_gauge_val *)(base + off_g);
	msg->hists = (iogp_hist_val *)(base + off_h);
	msg->files = (iogp_file *)(base + off_f);
	for (uint32_t j = 0; j < s->nslots; j++) {
		const struct slot *sl = &s->slots[(uint32_t)order[j]];
		iogp_metric_def *d = &msg->metrics[msg->nmetrics++];

		memset(d, 0, offsetof(iogp_metric_def, bins));
		d->id = sl->id;
		d->kind = sl->kind;
		d->name = m->gm[sl->gm].name;
		d->unit = sl->own_unit != NULL ? sl->own_unit : m->gm[sl->gm].unit;
		if (sl->kind == IOGP_HISTOGRAM)
			d->bins = m->schemes[sl->scheme]->b;
		else
			memset(&d->bins, 0, offsetof(iogp_bins, edges));
		switch (sl->kind) {
		case IOGP_COUNTER:
			msg->counters[msg->ncounters++] = (iogp_counter_val){ sl->id, sl->counter };
			break;
		case IOGP_GAUGE:
			msg->gauges[msg->ngauges++] = (iogp_gauge_val){ sl->id, sl->gauge };
			break;
		case IOGP_HISTOGRAM:
			if (sl->n > 0)
				msg->hists[msg->nhists++] =
				    (iogp_hist_val){ sl->id, (uint32_t)sl->n, sl->bins };
			break;
		default:
			break;
		}
	}
	free(order);
	for (uint32_t j = 0; j < s->nfiles; j++)
		msg->files[j] = (iogp_file){ s->files[j].id, s->files[j].path };
	msg->nfiles = s->nfiles;
	if (s->nfiles > 1)
		qsort(msg->files, s->nfiles, sizeof *msg->files, cmp_file);
	if (msg->nmetrics == 0)
		msg->metrics = NULL;
	if (msg->ncounters == 0)
		msg->counters = NULL;
	if (msg->ngauges == 0)
		msg->gauges = NULL;
	if (msg->nhists == 0)
		msg->hists = NULL;
	if (msg->nfiles == 0)
		msg->files = NULL;
	return 0;
}
