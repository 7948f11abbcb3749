/* model.c - the stream model: lifetime and options, the shared tables
 * (sources, nodes, metric names, bin schemes) and their index maps, source
 * labels and lifecycle (states, restarts), the model's clock and its stats. */
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "iogp_err.h"
#include "iogp_metrics.h"
#include "iogp_model.h"
#include "model_priv.h"

#define MODEL_MAX_SOURCES 100000u
#define MODEL_ACCESS_RING 4096u
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

uint32_t model__hash_u64(uint64_t x)
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
int model__imap_put(struct imap *im, uint32_t h, uint32_t idx)
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

/* Keys below this go to the direct table: its size stays within a few
 * bytes a slot (IOGP_MAX_METRICS slots: 16 KB at most). */
static uint32_t sidx_span(uint32_t cnt)
{
	return 32u + 2u * cnt;
}

static uint32_t sidx_get(const struct sidx *x, uint32_t key, imap_eq eq, const void *ctx)
{
	if (key < x->n && x->v[key] != 0)
		return x->v[key] - 1u;
	return imap_get(&x->far, model__hash_u64(key), eq, ctx, &key);
}

int model__sidx_put(struct sidx *x, uint32_t key, uint32_t slot)
{
	if (slot >= UINT16_MAX)
		return IOGP_EINVAL;
	if (key >= x->n && key < sidx_span(x->cnt + 1)) {
		uint32_t n = (key | 15u) + 1u;
		uint16_t *v = realloc(x->v, (size_t)n * sizeof *v);

		if (v == NULL)
			return IOGP_ENOMEM;
		memset(v + x->n, 0, (size_t)(n - x->n) * sizeof *v);
		x->v = v;
		x->n = n;
	}
	if (key < x->n)
		x->v[key] = (uint16_t)(slot + 1u);
	else if (model__imap_put(&x->far, model__hash_u64(key), slot) < 0)
		return IOGP_ENOMEM;
	x->cnt++;
	return 0;
}

static void sidx_free(struct sidx *x)
{
	free(x->v);
	imap_free(&x->far);
	memset(x, 0, sizeof *x);
}

/* Grow *p (an array of *cap elements of size sz) to hold need elements. */
int model__grow(void *p, uint32_t *cap, uint32_t need, size_t sz)
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

/* Room for need slots, in a block aligned to a cache line (realloc keeps
 * only malloc's 16): exactly need when exact, else doubling. */
int model__slots_reserve(struct source *s, uint32_t need, bool exact)
{
	if (need <= s->slots_cap)
		return 0;
	uint64_t ncap = exact || s->slots_cap == 0 ? need : s->slots_cap;
	while (ncap < need)
		ncap *= 2;
	if (ncap > IOGP_MAX_METRICS)
		ncap = need;
	void *p = NULL;
	if (posix_memalign(&p, 64, (size_t)ncap * sizeof *s->slots) != 0)
		return IOGP_ENOMEM;
	if (s->nslots > 0)
		memcpy(p, s->slots, (size_t)s->nslots * sizeof *s->slots);
	free(s->slots);
	s->slots = p;
	s->slots_cap = (uint32_t)ncap;
	return 0;
}

/* A slot's unit: its own where the source gave one, else its metric's. */
const char *model__slot_unit(const iogp_model *m, const struct source *s, uint32_t slot)
{
	for (uint32_t i = 0; i < s->nounit; i++)
		if (s->ounit[i].slot == slot)
			return s->ounit[i].unit;
	return m->gm[s->slots[slot].gm].unit;
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

uint32_t model__src_find(const iogp_model *m, uint64_t id)
{
	return imap_get(&m->src_map, model__hash_u64(id), eq_src, m, &id);
}

/* Where source id would be in the map: its bucket (stage 0), then the
 * source its bucket names, unchecked (stage 1). Prefetch hints for a
 * batch (model_batch.c): never read as an answer. */
const void *model__src_hint(const iogp_model *m, uint64_t id, int stage)
{
	const struct imap *im = &m->src_map;

	if (im->t == NULL)
		return NULL;
	const struct imap_ent *e = &im->t[model__hash_u64(id) & im->mask];
	if (stage == 0)
		return e;
	return e->v != 0 && e->v - 1 < m->nsrc ? (const void *)&m->src[e->v - 1] : NULL;
}

/* Where source s's slot of global metric gm would be: its bucket in the
 * map (stage 0), then the slot that bucket names, unchecked (stage 1).
 * Prefetch hints for a pass over every source: never read as an answer. */
const void *model__slot_hint(const struct source *s, uint32_t gm, int stage)
{
	const struct sidx *x = &s->by_gm;

	if (gm >= x->n)
		return NULL;
	if (stage == 0)
		return &x->v[gm];
	return x->v[gm] != 0 && x->v[gm] - 1u < s->nslots ? (const void *)&s->slots[x->v[gm] - 1u] : NULL;
}

/* n bytes at p toward the cache, at most max of them. */
static void prefetch_range(const void *p, size_t n, size_t max)
{
	for (size_t o = 0; p != NULL && o < n && o < max; o += 64)
		__builtin_prefetch((const char *)p + o);
}

/* What a DELTA's values are looked up in and added to (iogp_model.h): the
 * slots and their maps, of an agent's size (~40 slots, a few files) in
 * full; of a bigger source a part, as a big table is reached piecemeal and
 * fetching it all would only push out the rest. */
void iogp_model_prefetch(const iogp_model *m, uint64_t source)
{
	uint32_t si = m != NULL ? model__src_find(m, source) : NONE;

	if (si == NONE)
		return;
	const struct source *s = &m->src[si];

	prefetch_range(s->slots, (size_t)s->nslots * sizeof *s->slots, 8192);
	prefetch_range(s->by_id.v, (size_t)s->by_id.n * sizeof *s->by_id.v, 2048);
	if (s->fr_map.t != NULL)
		prefetch_range(s->fr_map.t, ((size_t)s->fr_map.mask + 1) * sizeof *s->fr_map.t, 2048);
	prefetch_range(s->fr, (size_t)s->nfr * sizeof *s->fr, 2048);
}

uint32_t model__node_find(const iogp_model *m, const char *name)
{
	return imap_get(&m->node_map, hash_str(name), eq_node, m, name);
}

uint32_t model__gm_find(const iogp_model *m, const char *name)
{
	return imap_get(&m->gm_map, hash_str(name), eq_gm, m, name);
}

uint32_t model__slot_by_id(const struct source *s, uint32_t id)
{
	return sidx_get(&s->by_id, id, eq_slot_id, s);
}

uint32_t model__slot_by_gm(const struct source *s, uint32_t gm)
{
	return sidx_get(&s->by_gm, gm, eq_slot_gm, s);
}

uint32_t model__file_find(const struct source *s, uint64_t id)
{
	return imap_get(&s->file_map, model__hash_u64(id), eq_file, s, &id);
}

struct frec_key {
	uint64_t file;
	uint32_t layer;
};

static int eq_frec(const void *ctx, uint32_t idx, const void *key)
{
	const struct source *s = ctx;
	const struct frec_key *k = key;

	return s->fr[idx].r.file == k->file && s->fr[idx].r.layer == k->layer;
}

uint32_t model__frec_hash(uint64_t file, uint32_t layer)
{
	return model__hash_u64(file * 4 + layer);
}

uint32_t model__frec_find(const struct source *s, uint64_t file, uint32_t layer)
{
	struct frec_key k = { file, layer };

	return imap_get(&s->fr_map, model__frec_hash(file, layer), eq_frec, s, &k);
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
	o->source_ring_bins = (uint32_t)clamp_u64(o->source_ring_bins, o->ring_bins, 2, o->ring_bins);
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

uint64_t iogp_model_serial(const iogp_model *m)
{
	return m != NULL ? m->serial : 0;
}

iogp_model *iogp_model_new(const iogp_model_opts *opts)
{
	iogp_model *m = calloc(1, sizeof *m);
	iogp_model_opts none = { 0 };
	iogp_bins nat;

	if (m == NULL)
		return NULL;
	static _Atomic uint64_t serials;
	m->serial = ++serials;
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
	for (uint32_t i = 0; i < s->nounit; i++)
		free(s->ounit[i].unit);
	free(s->ounit);
	for (uint32_t i = 0; i < s->nslots; i++) {
		free(s->slots[i].bins);
		free(s->slots[i].ex);
		free(s->slots[i].win);
	}
	free(s->slots);
	sidx_free(&s->by_id);
	sidx_free(&s->by_gm);
	for (uint32_t i = 0; i < s->nfiles; i++)
		free(s->files[i].path);
	free(s->files);
	imap_free(&s->file_map);
	imap_free(&s->fr_map);
	free(s->fr);
	model__access_free(s);   /* the ring and the per-file samples */
	model__peers_free(s);
	free(s->rr);
	free(s->probe);
}

void iogp_model_free(iogp_model *m)
{
	if (m == NULL)
		return;
	for (uint32_t i = 0; i < m->nsrc; i++)
		source_free(&m->src[i]);
	free(m->src);
	free(m->units);
	imap_free(&m->src_map);
	model__agg_free(m);
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
	model__batch_free(m);
	imap_free(&m->rk_map[0]);
	imap_free(&m->rk_map[1]);
	free(m->all);
	for (uint32_t i = 0; i < IOGP_MODEL_MAX_RATES; i++)
		free(m->rate_names[i]);
	free(m);
}

/* ---- tables: schemes, metrics, nodes ---------------------------------------- */

uint32_t model__scheme_intern(iogp_model *m, const iogp_bins *b)
{
	uint32_t h = hash_bins(b);
	uint32_t i = imap_get(&m->scheme_map, h, eq_scheme, m, b);
	struct scheme *sc;

	if (i != NONE)
		return i;
	if (m->nschemes >= MODEL_MAX_SCHEMES)
		return NONE;
	if (model__grow(&m->schemes, &m->schemes_cap, m->nschemes + 1, sizeof *m->schemes) < 0)
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
	if (model__imap_put(&m->scheme_map, h, m->nschemes) < 0) {
		free(sc);
		return NONE;
	}
	m->schemes[m->nschemes] = sc;
	return m->nschemes++;
}

uint32_t model__gm_add(iogp_model *m, const iogp_metric_def *d, const char *unit)
{
	uint32_t i = model__gm_find(m, d->name);
	struct gmetric *g;

	if (i != NONE)
		return i;
	if (m->ngm >= MODEL_MAX_NAMES)
		return NONE;
	if (model__grow(&m->gm, &m->gm_cap, m->ngm + 1, sizeof *m->gm) < 0)
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
		g->scheme = model__scheme_intern(m, &d->bins);
		if (g->scheme == NONE)
			return NONE;
	}
	g->name = strdup(d->name);
	g->unit = strdup(unit);
	if (g->name == NULL || g->unit == NULL ||
	    model__imap_put(&m->gm_map, hash_str(d->name), m->ngm) < 0) {
		free(g->name);
		free(g->unit);
		return NONE;
	}
	return m->ngm++;
}

static uint32_t node_add(iogp_model *m, const char *name)
{
	uint32_t i = model__node_find(m, name);
	struct node *n;

	if (i != NONE)
		return i;
	if (model__grow(&m->nodes, &m->nodes_cap, m->nnodes + 1, sizeof *m->nodes) < 0)
		return NONE;
	n = &m->nodes[m->nnodes];
	memset(n, 0, sizeof *n);
	n->name = strdup(name);
	if (n->name == NULL || model__imap_put(&m->node_map, hash_str(name), m->nnodes) < 0) {
		free(n->name);
		return NONE;
	}
	return m->nnodes++;
}

static int node_link(iogp_model *m, uint32_t ni, uint32_t si)
{
	struct node *n = &m->nodes[ni];

	if (model__grow(&n->src, &n->cap, n->n + 1, sizeof *n->src) < 0)
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

uint32_t model__source_new(iogp_model *m, uint64_t id, const char *host, int *err)
{
	struct source *s;
	uint32_t ni, si = m->nsrc;

	if (m->nsrc >= m->opts.max_sources) {
		m->st.refused_sources++;
		*err = IOGP_ELIMIT;
		return NONE;
	}
	*err = IOGP_ENOMEM;
	ni = model__node_find(m, host);
	if (ni == NONE)
		ni = node_add(m, m->nnodes < node_limit(m) ? host : "");
	if (ni == NONE || model__grow(&m->src, &m->src_cap, m->nsrc + 1, sizeof *m->src) < 0)
		return NONE;
	if (node_link(m, ni, si) < 0)
		return NONE;
	if (model__imap_put(&m->src_map, model__hash_u64(id), si) < 0) {
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

const char *model__labels_find(const iogp_label *l, uint32_t n, const char *key)
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

iogp_source_state model__src_state(const iogp_model *m, const struct source *s, uint64_t now,
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
	const char *host = model__labels_find(l, n, "host"), *pid = model__labels_find(l, n, "pid");
	const char *rank = model__labels_find(l, n, "rank"), *job = model__labels_find(l, n, "job");
	uint64_t h;

	key[0] = key[1] = 0;
	if (pid != NULL) {
		h = fnv_str(fnv_str(fnv_str(1469598103934665603ull ^ 'p', host), pid),
		            model__labels_find(l, n, "exe"));
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
	(void)model__imap_put(im, h, si);  /* on ENOMEM the source is just not linkable */
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
		    (st = model__src_state(m, &m->src[old], now, true)) != IOGP_SRC_LIVE &&
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
int model__labels_set(iogp_model *m, uint32_t si, const iogp_msg *msg)
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
	host = model__labels_find(l, s->nlabels, "host");
	s->host = host != NULL ? host : "";
	s->pid = parse_nonneg(model__labels_find(l, s->nlabels, "pid"));
	s->rank = parse_nonneg(model__labels_find(l, s->nlabels, "rank"));
	/* what iogp_model_source_roles reads of every source, without its labels */
	s->role = model__labels_find(l, s->nlabels, "summary") != NULL ? IOGP_ROLE_SUMMARY :
	          model__labels_find(l, s->nlabels, "aggregate") != NULL ? IOGP_ROLE_AGGREGATE :
	          IOGP_ROLE_PLAIN;
	if (first)
		restart_check(m, si);

	if (strcmp(m->nodes[s->node].name, s->host) == 0)
		return 0;
	ni = model__node_find(m, s->host);
	if (ni == NONE && m->nnodes < node_limit(m))
		ni = node_add(m, s->host);
	if (ni == NONE)
		return 0;
	if (node_link(m, ni, si) < 0)
		return IOGP_ENOMEM;
	node_unlink(m, s->node, si);
	model__agg_move(m, si, s->node, ni);
	s->node = ni;
	return 0;
}

/* ---- the model's clock, options and stats ----------------------------------- */

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

