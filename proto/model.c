/* model.c - the stream model: per-source state rebuilt from HELLO, DELTA,
 * SNAPSHOT and BYE messages, and the queries the viewers and exporters use. */
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "iogp_err.h"
#include "iogp_model.h"

#define NONE UINT32_MAX
#define MODEL_MAX_SOURCES 100000u
#define MODEL_ACCESS_RING 4096u
/* Dense accumulation is used for merging many sources' histograms when the
 * scheme has at most this many bins. */
#define MODEL_DENSE_MAX 65536u

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
};

struct node {
	char *name;
	uint32_t *src;
	uint32_t n, cap;
};

struct holder {
	uint32_t src, slot;
};

struct gmetric {
	char *name, *unit;
	iogp_metric_kind kind;
	uint32_t scheme;
	struct holder *h;
	uint32_t n, cap;
};

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
	bool have_recv;
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

iogp_model *iogp_model_new(const iogp_model_opts *opts)
{
	iogp_model *m = calloc(1, sizeof *m);
	iogp_bins nat;

	if (m == NULL)
		return NULL;
	if (opts != NULL)
		m->opts = *opts;
	if (m->opts.max_sources == 0)
		m->opts.max_sources = MODEL_MAX_SOURCES;
	if (m->opts.access_ring == 0)
		m->opts.access_ring = MODEL_ACCESS_RING;
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
	}
	free(s->slots);
	imap_free(&s->by_id);
	imap_free(&s->by_gm);
	for (uint32_t i = 0; i < s->nfiles; i++)
		free(s->files[i].path);
	free(s->files);
	imap_free(&s->file_map);
	free(s->ring);
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
	if (grow(&m->gm, &m->gm_cap, m->ngm + 1, sizeof *m->gm) < 0)
		return NONE;
	g = &m->gm[m->ngm];
	memset(g, 0, sizeof *g);
	g->kind = d->kind;
	g->scheme = NONE;
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

/* An empty label set leaves the current labels alone (a HELLO that only
 * adds metrics). */
static int labels_set(iogp_model *m, uint32_t si, const iogp_msg *msg)
{
	struct source *s = &m->src[si];
	size_t sz = (size_t)msg->nlabels * sizeof(iogp_label);
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

/* An id keeps its first definition; later definitions of it are ignored. */
static int catalog_add(iogp_model *m, uint32_t si, const iogp_metric_def *d)
{
	struct source *s = &m->src[si];
	const char *unit = d->unit != NULL ? d->unit : "";
	struct slot *sl;
	struct gmetric *g;
	uint32_t gi, sc = NONE;

	if (slot_by_id(s, d->id) != NONE || s->nslots >= IOGP_MAX_METRICS)
		return 0;
	gi = gm_add(m, d, unit);
	if (gi == NONE)
		return IOGP_ENOMEM;
	if (d->kind == IOGP_HISTOGRAM) {
		sc = scheme_intern(m, &d->bins);
		if (sc == NONE)
			return IOGP_ENOMEM;
	}
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
	s->nslots++;
	return 0;
fail:
	free(sl->own_unit);
	return IOGP_ENOMEM;
}

static int files_add(struct source *s, const iogp_file *f, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		uint32_t fi = file_find(s, f[i].id);
		char *p;

		if (fi != NONE) {
			if (strcmp(s->files[fi].path, f[i].path) == 0)
				continue;
			p = strdup(f[i].path);
			if (p == NULL)
				return IOGP_ENOMEM;
			free(s->files[fi].path);
			s->files[fi].path = p;
			continue;
		}
		if (s->nfiles >= IOGP_MAX_FILES) {
			s->files_ignored++;
			continue;
		}
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

static int slot_hist_add(iogp_model *m, struct slot *sl, const iogp_bin *b, size_t n)
{
	int r;

	if (n == 0)
		return 0;
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
		if (h->nbins > 0 &&
		    h->bins[h->nbins - 1].idx >= m->schemes[s->slots[sl].scheme]->nbins)
			return IOGP_EINVAL;
	}
	for (uint32_t i = 0; i < msg->naccess; i++) {
		if ((r = resolve(s, msg->access[i].id, IOGP_ACCESS, &sl)) < 0)
			return r;
	}
	return 0;
}

/* ---- applying messages ------------------------------------------------------ */

static void note_applied(iogp_model *m, struct source *s, uint64_t recv_ns)
{
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

/* Move the sequence forward; returns the number of sequence numbers missed. */
static uint64_t seq_advance(iogp_model *m, struct source *s, uint64_t seq)
{
	uint64_t g = 0;

	if (!s->has_seq) {
		s->has_seq = true;
		s->last_seq = seq;
		return 0;
	}
	if (seq > s->last_seq) {
		g = seq - s->last_seq - 1;
		s->gaps += g;
		m->st.gaps += g;
		s->last_seq = seq;
	}
	return g;
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
	if (seq_advance(m, s, msg->seq) > 0)
		s->in_sync = false;
	final_check(s, msg);
	note_applied(m, s, recv_ns);
	return 0;
}

static int apply_values(iogp_model *m, struct source *s, const iogp_msg *msg, bool snapshot)
{
	int r = 0;

	for (uint32_t i = 0; i < msg->ncounters; i++) {
		struct slot *sl = &s->slots[slot_by_id(s, msg->counters[i].id)];
		uint64_t v = msg->counters[i].value;

		sl->counter = snapshot ? v : sl->counter + v;
	}
	for (uint32_t i = 0; i < msg->ngauges; i++)
		s->slots[slot_by_id(s, msg->gauges[i].id)].gauge = msg->gauges[i].value;
	for (uint32_t i = 0; i < msg->nhists; i++) {
		const iogp_hist_val *h = &msg->hists[i];
		struct slot *sl = &s->slots[slot_by_id(s, h->id)];
		int e;

		if ((e = slot_hist_add(m, sl, h->bins, h->nbins)) < 0)
			r = e;
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
		r = files_add(s, msg->files, msg->nfiles);
	s->dropped = msg->dropped;
	times_note(s, msg, snapshot);
	return r;
}

static int apply_delta(iogp_model *m, const iogp_msg *msg, uint64_t recv_ns)
{
	uint32_t si = src_find(m, msg->source);
	struct source *s;
	int r;

	if (si == NONE) {
		m->st.unknown++;
		return IOGP_EUNKNOWN;
	}
	s = &m->src[si];
	if (s->has_seq && msg->seq <= s->last_seq) {
		m->st.duplicates++;
		return 0;
	}
	if ((r = values_check(m, s, msg)) < 0) {
		if (r == IOGP_EUNKNOWN)
			m->st.unknown++;
		else
			m->st.bad_messages++;
		return r;
	}
	if (seq_advance(m, s, msg->seq) > 0)
		s->in_sync = false;
	r = apply_values(m, s, msg, false);
	if (r < 0)
		s->in_sync = false;
	final_check(s, msg);
	note_applied(m, s, recv_ns);
	return r;
}

static int apply_snapshot(iogp_model *m, const iogp_msg *msg, uint64_t recv_ns)
{
	struct source *s;
	uint32_t si = src_find(m, msg->source);
	int r;

	if (si != NONE && m->src[si].has_seq && msg->seq < m->src[si].last_seq) {
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
		s->slots[i].n = 0;
		s->slots[i].total = 0;
	}
	r = apply_values(m, s, msg, true);
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
	out->state = s->state;
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
			iogp_bin *b;
			size_t n = 0;

			sel_visit(m, gi, sel, visit_hist_add, &c);
			for (uint64_t i = 0; i < nb; i++)
				n += c.dense[i] != 0;
			b = malloc((n ? n : 1) * sizeof *b);
			if (b == NULL) {
				free(c.dense);
				return IOGP_ENOMEM;
			}
			n = 0;
			for (uint64_t i = 0; i < nb; i++) {
				if (c.dense[i] != 0)
					b[n++] = (iogp_bin){ i, c.dense[i] };
			}
			c.err = iogp_hist_add_bins(out, b, n);
			free(b);
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
