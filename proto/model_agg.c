/* model_agg.c - every node's and the whole model's sums of each metric
 * (counters, gauges, cumulative histograms with their exact values, and the
 * histogram windows), kept as messages arrive on a live model. A query over
 * all sources or one node then costs what its answer holds, not a visit of
 * every source: a viewer following 50,000 sources draws a frame from a few
 * hundred bins.
 *
 * The whole model's histograms are flat arrays (a DELTA's bin is an add);
 * a node's are sparse (nodes are many and each sees few bins), its window
 * a ring as a source's (model_window.c) under its own limit.
 *
 * A sum is the sum of the linked slots (model_priv.h) a visit would add, so
 * an answer from it equals the visit's. Where it cannot (its slots use more
 * than one bin scheme, or it lost an update to a failed allocation) it says
 * so and the query visits the sources as before. Window sums keep their own
 * slots: a source's ring may evict under its memory share, the node's keeps
 * its data until it ages out or the sum's own cap is reached.
 *
 * A node's histogram sums take a DELTA's bins late. With thousands of
 * nodes each DELTA's node sums are out of cache (its bins land all over a
 * sorted list and a window ring), and a viewer at 50,000 sources spent a
 * fifth of its time there. The bins go to the node's log instead (one
 * block, written in order) and are applied in one burst, the records of
 * one metric and window slot merged first (model__agg_settle), when the
 * log is full or before anything reads the node's sums or takes from them
 * (a query over the node, a SNAPSHOT that replaces a source's state, a
 * source moving to another node). An answer is therefore the one the
 * immediate sums would give; the model is logically const across a query
 * that applies a log. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "iogp_err.h"
#include "iogp_model.h"
#include "iogp_testing.h"
#include "model_priv.h"

/* Entries the whole model's window holds over all its slots (16 B each);
 * beyond, its oldest slots go. A node's window ring holds what
 * model__win_node_limit gives it (model_window.c: the nodes' part of
 * window_total). */
#define AGG_WIN_MAX 65536u

/* Whole-model sums of schemes up to this many bins count them in a flat
 * array: one DELTA's bins then cost an add each, where a sorted list would
 * move its tail for every new bin of a busy window slot. */
#define AGG_DENSE_MAX 8192u

/* A histogram: entries below nd in the flat array d (nz of them non-zero),
 * the others sparse in b, ascending by idx, every count > 0. */
struct sb {
	iogp_bin *b;
	uint32_t n, cap;
	uint64_t *d;
	uint32_t nd, nz;
};

/* Bytes a sum holds; *acct follows every allocation (iogp_model_live). */
static void sb_free(struct sb *x, size_t *acct)
{
	*acct -= (size_t)x->cap * sizeof *x->b + (x->d != NULL ? (size_t)x->nd * sizeof *x->d : 0);
	free(x->b);
	free(x->d);
	memset(x, 0, sizeof *x);
}

static uint32_t sb_entries(const struct sb *x)
{
	return x->n + x->nz;
}

/* First position in [from, n) with idx >= key: a DELTA's bins are
 * ascending and close together, so gallop from the last one found. */
static uint32_t sb_lower(const struct sb *x, uint32_t from, uint64_t key)
{
	uint32_t lo = from, hi = x->n, step = 1;

	while (lo + step < hi && x->b[lo + step].idx < key) {
		lo += step;
		step *= 2;
	}
	if (lo + step < hi)
		hi = lo + step + 1;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (x->b[mid].idx < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool skip(const struct sb *x, const iogp_bin *v, uint64_t max_idx)
{
	return v->count == 0 || v->idx > max_idx || v->idx < x->nd;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

/* x += in (ascending; zero counts and indices above max_idx skipped), with
 * a flat array of nd entries when nd > 0 (made on the first add). Counts
 * saturate. Returns the entries added, or -1 when out of memory (x then
 * unchanged). */
static int64_t sb_add(struct sb *x, const iogp_bin *in, uint32_t nin, uint64_t max_idx,
                      uint32_t nd, size_t *acct)
{
	uint32_t p = 0, add = 0, fresh = 0;

	if (nd > 0 && x->d == NULL && x->n == 0) {
		if ((x->d = calloc(nd, sizeof *x->d)) == NULL)
			return -1;
		x->nd = nd;
		*acct += (size_t)nd * sizeof *x->d;
	}
	for (uint32_t i = 0; i < nin; i++) {
		if (in[i].count == 0 || in[i].idx > max_idx)
			continue;
		if (in[i].idx < x->nd) {
			uint64_t *d = &x->d[in[i].idx];

			fresh += *d == 0;
			*d = sat_add(*d, in[i].count);
			continue;
		}
		p = sb_lower(x, p, in[i].idx);
		if (p < x->n && x->b[p].idx == in[i].idx)
			x->b[p].count = sat_add(x->b[p].count, in[i].count);
		else
			add++;
	}
	x->nz += fresh;
	if (add == 0)
		return fresh;
	if (x->n + add > x->cap) {
		uint32_t cap = x->n + add + (x->n + add) / 2 + 4;
		iogp_bin *nb = realloc(x->b, (size_t)cap * sizeof *nb);

		if (nb == NULL) {
			/* undo the additions made above */
			p = 0;
			for (uint32_t i = 0; i < nin; i++) {
				if (in[i].count == 0 || in[i].idx > max_idx)
					continue;
				if (in[i].idx < x->nd) {
					x->d[in[i].idx] -= in[i].count;
					continue;
				}
				p = sb_lower(x, p, in[i].idx);
				if (p < x->n && x->b[p].idx == in[i].idx)
					x->b[p].count -= in[i].count;
			}
			x->nz -= fresh;
			return -1;
		}
		*acct += (size_t)(cap - x->cap) * sizeof *nb;
		x->b = nb;
		x->cap = cap;
	}
	/* merge the new entries in from the back */
	int64_t o = (int64_t)x->n + add - 1, q = (int64_t)x->n - 1;

	for (int64_t i = (int64_t)nin - 1; i >= 0;) {
		const iogp_bin *v = &in[i];

		if (skip(x, v, max_idx)) {
			i--;
		} else if (q >= 0 && x->b[q].idx > v->idx) {
			x->b[o--] = x->b[q--];
		} else if (q >= 0 && x->b[q].idx == v->idx) {
			x->b[o--] = x->b[q--];   /* already added above */
			i--;
		} else {
			x->b[o--] = *v;
			i--;
		}
	}
	x->n += add;
	return (int64_t)add + fresh;
}

/* x -= in; entries reaching 0 go. Returns the entries removed, -1 when in
 * holds more than x (x then left with what could be taken). */
static int64_t sb_sub(struct sb *x, const iogp_bin *in, uint32_t nin, uint64_t max_idx)
{
	uint32_t p = 0, w = 0, gone = 0;
	bool short_ = false, sparse = false;

	for (uint32_t i = 0; i < nin; i++) {
		if (in[i].count == 0 || in[i].idx > max_idx)
			continue;
		if (in[i].idx < x->nd) {
			uint64_t *d = &x->d[in[i].idx];

			short_ |= *d < in[i].count;
			*d = *d > in[i].count ? *d - in[i].count : 0;
			if (*d == 0 && x->nz > 0)
				x->nz--, gone++;
			continue;
		}
		sparse = true;
		p = sb_lower(x, p, in[i].idx);
		if (p < x->n && x->b[p].idx == in[i].idx && x->b[p].count >= in[i].count) {
			x->b[p].count -= in[i].count;
		} else {
			short_ = true;
			if (p < x->n && x->b[p].idx == in[i].idx)
				x->b[p].count = 0;
		}
	}
	for (uint32_t r = 0; sparse && r < x->n; r++) {
		if (x->b[r].count != 0)
			x->b[w++] = x->b[r];
		else
			gone++;
	}
	if (sparse)
		x->n = w;
	return short_ ? -1 : (int64_t)gone;
}

/* The log: records, each a header and its bins. */
#define PEND_MAX 8192u   /* bytes a node's log holds; bigger records apply at once */
#define PEND_MIN 2048u   /* a smaller log gains nothing: no log */
#define LATE_TOTAL (32u << 20)  /* bytes all the nodes' logs may hold */
#define AGG_LATE_NODES 64u      /* fewer nodes' sums stay in cache: no log */
#define PEND_CUM 1u      /* the record's bins go to the cumulative sum */
#define PEND_WIN 2u      /* and/or to window slot j */
#define PEND_DONE 4u     /* merged into an earlier record's */
#define PEND_TOOK 8u     /* (pend_add only) the bins the newest record took */

struct pbin {          /* a bin as the log keeps it (wider ones apply at once) */
	uint32_t idx, count;
};

struct prec {
	uint32_t gi;          /* global metric */
	uint32_t nb;          /* bins after the header */
	uint64_t j;           /* window slot (PEND_WIN) */
	uint32_t lim;         /* the node ring's limit when the bins came */
	uint32_t what;
};

struct npend {
	uint32_t n, cap;      /* bytes used, room for */
	uint32_t last_at;     /* the newest record's offset */
	uint32_t pad;
	unsigned char d[];
};

struct aggwin {
	uint64_t slot0;      /* window slot of seg[0] */
	uint32_t nent;       /* entries over all segments */
	struct sb seg[];     /* m->win_slots of them */
};

struct agg {
	bool used;           /* a slot was linked to it */
	bool all;            /* the whole model's (else a node's) */
	bool mixed;          /* slots with different schemes: visit instead */
	bool broken;         /* an update was lost: visit instead */
	bool ex_off;         /* more distinct exact values than a histogram keeps */
	uint32_t scheme;     /* of its histogram slots, NONE before the first */
	uint32_t nd;         /* histograms: flat arrays of this many bins, 0 = sparse */
	struct sb cum, ex;   /* cumulative bins; exact values (idx = value) */
	struct aggwin *win;  /* the whole model's window */
	struct wring *nw;    /* a node's window (model_window.c) */
};

/* ---- the table: a sum per (node, metric) and per metric ------------------ */

static struct agg *agg_get(iogp_model *m, struct agg ***tab, uint32_t *ntab, uint32_t gi,
                           bool make)
{
	if (gi >= *ntab) {
		if (!make)
			return NULL;
		uint32_t n = gi + 1 + (gi + 1) / 2;
		struct agg **t = realloc(*tab, (size_t)n * sizeof *t);

		if (t == NULL)
			return NULL;
		memset(t + *ntab, 0, (size_t)(n - *ntab) * sizeof *t);
		m->agg_bytes += (size_t)(n - *ntab) * sizeof *t;
		*tab = t;
		*ntab = n;
	}
	if ((*tab)[gi] == NULL && make) {
		struct agg *a = calloc(1, sizeof *a);

		if (a == NULL)
			return NULL;
		a->scheme = NONE;
		a->all = tab == &m->agg;
		m->agg_bytes += sizeof *a;
		(*tab)[gi] = a;
	}
	return (*tab)[gi];
}

/* The two sums a slot of source s feeds: its node's and the model's. NULL
 * where one could not be made (the query then visits: see agg_usable). */
static void aggs_of(iogp_model *m, const struct source *s, uint32_t gi, struct agg *a[2])
{
	struct node *n = &m->nodes[s->node];

	a[0] = agg_get(m, &n->agg, &n->nagg, gi, true);
	a[1] = agg_get(m, &m->agg, &m->nagg, gi, true);
	if (a[0] == NULL || a[1] == NULL)
		m->agg_failed = true;
}

static struct agg *agg_whole(iogp_model *m, uint32_t gi)
{
	struct agg *a = agg_get(m, &m->agg, &m->nagg, gi, true);

	if (a == NULL)
		m->agg_failed = true;
	return a;
}

static void pend_add(iogp_model *m, const struct source *s, uint32_t gi, uint32_t what,
                     uint64_t j, const iogp_bin *b, uint32_t nb);

static bool on(const iogp_model *m, const struct slot *sl)
{
	return m->opts.live && sl->linked && !m->agg_failed;
}

static void win_free(iogp_model *m, struct aggwin *w)
{
	if (w == NULL)
		return;
	for (uint32_t k = 0; k < m->win_slots; k++)
		sb_free(&w->seg[k], &m->agg_bytes);
	m->agg_bytes -= sizeof *w + (size_t)m->win_slots * sizeof w->seg[0];
	free(w);
}

static void agg_free(iogp_model *m, struct agg *a)
{
	if (a == NULL)
		return;
	sb_free(&a->cum, &m->agg_bytes);
	sb_free(&a->ex, &m->agg_bytes);
	win_free(m, a->win);
	model__wring_free(m, a->nw, &m->agg_bytes);
	free(a);
}

void model__agg_free(iogp_model *m)
{
	for (uint32_t i = 0; i < m->nnodes; i++) {
		for (uint32_t g = 0; g < m->nodes[i].nagg; g++)
			agg_free(m, m->nodes[i].agg[g]);
		free(m->nodes[i].agg);
	}
	for (uint32_t g = 0; g < m->nagg; g++)
		agg_free(m, m->agg[g]);
	free(m->agg);
	for (uint32_t i = 0; i < m->nnodes; i++) {
		free(m->nodes[i].vsum);
		free(m->nodes[i].pend);
	}
	free(m->vsum);
}

/* A slot of scheme sc joins sum a. */
static void agg_scheme(const iogp_model *m, struct agg *a, uint32_t sc)
{
	if (!a->used) {
		a->scheme = sc;
		/* flat arrays for the whole model's sums (few, and the busiest) */
		if (a->all && sc != NONE && m->schemes[sc]->nbins <= AGG_DENSE_MAX)
			a->nd = (uint32_t)m->schemes[sc]->nbins;
	} else if (a->scheme != sc) {
		a->mixed = true;
	}
	a->used = true;
}

/* ---- updates ------------------------------------------------------------- */

void model__agg_link(iogp_model *m, const struct source *s, const struct slot *sl)
{
	struct agg *a[2];

	if (!on(m, sl))
		return;
	aggs_of(m, s, sl->gm, a);
	for (int i = 0; i < 2; i++)
		if (a[i] != NULL)
			agg_scheme(m, a[i], sl->scheme);
}

/* Counter and gauge sums sit side by side in one array per node (and one
 * for the model), by global metric: a DELTA's counters touch a line or two
 * of it, not a sum each. Gauges add as int64, wrapping as the visit's. */
static uint64_t *vsum_at(iogp_model *m, uint64_t **arr, uint32_t *n, uint32_t gi)
{
	if (gi >= *n) {
		uint32_t nn = gi + 1 + (gi + 1) / 2;
		uint64_t *t = realloc(*arr, (size_t)nn * sizeof *t);

		if (t == NULL) {
			m->agg_failed = true;
			return NULL;
		}
		memset(t + *n, 0, (size_t)(nn - *n) * sizeof *t);
		m->agg_bytes += (size_t)(nn - *n) * sizeof *t;
		*arr = t;
		*n = nn;
	}
	return &(*arr)[gi];
}

static void vsum_add(iogp_model *m, uint32_t node, uint32_t gi, uint64_t d)
{
	struct node *n = &m->nodes[node];
	uint64_t *a = vsum_at(m, &n->vsum, &n->nvsum, gi), *b = vsum_at(m, &m->vsum, &m->nvsum, gi);

	if (a != NULL && b != NULL) {
		*a += d;
		*b += d;
	}
}

void model__agg_counter(iogp_model *m, const struct source *s, const struct slot *sl,
                        uint64_t old, uint64_t now)
{
	if (on(m, sl) && old != now)
		vsum_add(m, s->node, sl->gm, now - old);
}

void model__agg_gauge(iogp_model *m, const struct source *s, const struct slot *sl, int64_t old,
                      int64_t now)
{
	if (on(m, sl) && old != now)
		vsum_add(m, s->node, sl->gm, (uint64_t)now - (uint64_t)old);
}

/* a's cumulative bins +=, or -=, b. */
static void cum_add(iogp_model *m, struct agg *a, const iogp_bin *b, uint32_t n, bool sub)
{
	if (a == NULL || a->broken || n == 0)
		return;
	if ((sub ? sb_sub(&a->cum, b, n, UINT64_MAX)
	         : sb_add(&a->cum, b, n, UINT64_MAX, a->nd, &m->agg_bytes)) < 0)
		a->broken = true;
}

void model__agg_bins(iogp_model *m, const struct source *s, const struct slot *sl,
                     const iogp_bin *b, uint32_t n, bool sub)
{
	struct agg *a[2];

	if (!on(m, sl) || n == 0)
		return;
	if (!sub) {
		cum_add(m, agg_whole(m, sl->gm), b, n, false);
		pend_add(m, s, sl->gm, PEND_CUM, 0, b, n);
		return;
	}
	model__agg_settle(m, s->node);
	aggs_of(m, s, sl->gm, a);
	cum_add(m, a[0], b, n, sub);
	cum_add(m, a[1], b, n, sub);
}

/* a's exact values -= old, += now; past what a histogram keeps, none
 * from here on: never a wrong exact count. */
static void ex_change(iogp_model *m, struct agg *a, const iogp_bin *old, uint32_t nold,
                      const iogp_bin *now, uint32_t nnow)
{
	if (a == NULL || a->ex_off)
		return;
	if (sb_sub(&a->ex, old, nold, UINT64_MAX) < 0 ||
	    sb_add(&a->ex, now, nnow, UINT64_MAX, 0, &m->agg_bytes) < 0 ||
	    a->ex.n > IOGP_HIST_MAX_EXACT) {
		a->ex_off = true;
		sb_free(&a->ex, &m->agg_bytes);
	}
}

/* A slot's exact list went from old to now (iogp_exact_merge keeps a
 * bounded list, so this is not simply old + the DELTA's values). */
void model__agg_exact(iogp_model *m, const struct source *s, const struct slot *sl,
                      const iogp_exact *old, uint32_t nold, const iogp_exact *now, uint32_t nnow)
{
	iogp_bin bo[MODEL_EXACT_MAX], bn[MODEL_EXACT_MAX];
	struct agg *a[2];

	if (!on(m, sl) || nold > MODEL_EXACT_MAX || nnow > MODEL_EXACT_MAX)
		return;
	for (uint32_t i = 0; i < nold; i++)
		bo[i] = (iogp_bin){ old[i].value, old[i].count };
	for (uint32_t i = 0; i < nnow; i++)
		bn[i] = (iogp_bin){ now[i].value, now[i].count };
	aggs_of(m, s, sl->gm, a);
	ex_change(m, a[0], bo, nold, bn, nnow);
	ex_change(m, a[1], bo, nold, bn, nnow);
}

static struct aggwin *win_new(iogp_model *m, uint64_t j)
{
	size_t sz = sizeof(struct aggwin) + (size_t)m->win_slots * sizeof(struct sb);
	struct aggwin *w = calloc(1, sz);

	if (w != NULL) {
		w->slot0 = j >= m->win_slots - 1 ? j - (m->win_slots - 1) : 0;
		m->agg_bytes += sz;
	}
	return w;
}

/* Empty segment k (its entries leave the count). */
static void win_clear(iogp_model *m, struct aggwin *w, uint32_t k)
{
	w->nent -= sb_entries(&w->seg[k]);
	sb_free(&w->seg[k], &m->agg_bytes);
}

/* Move the window so slot j is its newest. */
static void win_shift(iogp_model *m, struct aggwin *w, uint64_t j)
{
	uint32_t NS = m->win_slots;
	uint64_t d = j - w->slot0 - (NS - 1);

	if (d >= NS) {
		for (uint32_t k = 0; k < NS; k++)
			win_clear(m, w, k);
	} else {
		for (uint32_t k = 0; k < d; k++)
			win_clear(m, w, k);
		memmove(w->seg, w->seg + d, (NS - d) * sizeof w->seg[0]);
		memset(w->seg + (NS - d), 0, d * sizeof w->seg[0]);
	}
	w->slot0 += d;
}

/* Window slot j of the sum += (sub: -=) the bins a source's ring took
 * (model__win_add's input: entries above UINT32_MAX are not windowed); a
 * node's ring within lim bytes (model__win_node_limit when the bins came). */
static void agg_win(iogp_model *m, size_t lim, struct agg *a, uint64_t j,
                    const iogp_bin *b, uint32_t n, bool sub)
{
	struct aggwin *w = a->win;
	int64_t r;
	uint32_t k;

	if (!a->all) {
		if (sub)
			model__wring_sub(m, a->nw, j, b, n);
		else
			model__wring_put(m, &a->nw, lim, &m->agg_bytes, j, b, n);
		return;
	}
	if (w == NULL) {
		if (sub)
			return;
		if ((w = a->win = win_new(m, j)) == NULL) {
			a->broken = true;
			return;
		}
	}
	if (j < w->slot0) {
		if (!sub)
			m->lst.window_late++;
		return;
	}
	if (j - w->slot0 >= m->win_slots) {
		if (sub)
			return;
		win_shift(m, w, j);
	}
	k = (uint32_t)(j - w->slot0);
	if (sub) {
		r = sb_sub(&w->seg[k], b, n, UINT32_MAX);
		w->nent -= r > 0 ? (uint32_t)r : 0;
		return;
	}
	/* the cap: the oldest slots go first, never the one being filled */
	for (uint32_t e = 0; e < k && w->nent + n > AGG_WIN_MAX; e++) {
		if (sb_entries(&w->seg[e]) > 0) {
			win_clear(m, w, e);
			m->lst.window_evicted++;
		}
	}
	if (w->nent + n > AGG_WIN_MAX) {
		m->lst.window_dropped++;
		return;
	}
	r = sb_add(&w->seg[k], b, n, UINT32_MAX, a->nd, &m->agg_bytes);
	if (r < 0)
		a->broken = true;
	else
		w->nent += (uint32_t)r;
}

void model__agg_win(iogp_model *m, const struct source *s, const struct slot *sl, uint64_t j,
                    const iogp_bin *b, uint32_t n, bool took)
{
	struct agg *a;

	if (!on(m, sl) || n == 0)
		return;
	if ((a = agg_whole(m, sl->gm)) != NULL && !a->broken)
		agg_win(m, 0, a, j, b, n, false);
	pend_add(m, s, sl->gm, took ? PEND_WIN | PEND_TOOK : PEND_WIN, j, b, n);
}

/* ---- a node's log ------------------------------------------------------------ */

static struct prec *prec_at(const struct npend *p, uint32_t off)
{
	return (struct prec *)(void *)((unsigned char *)(uintptr_t)p->d + off);
}

static size_t prec_size(uint32_t nb)
{
	return sizeof(struct prec) + (size_t)nb * sizeof(struct pbin);
}

/* Record r (bins b) to node n's sums, as the immediate path would have. */
static void prec_apply(iogp_model *m, struct node *n, const struct prec *r, const iogp_bin *b)
{
	struct agg *a = agg_get(m, &n->agg, &n->nagg, r->gi, true);

	if (a == NULL) {
		m->agg_failed = true;
		return;
	}
	if (r->what & PEND_CUM)
		cum_add(m, a, b, r->nb, false);
	if ((r->what & PEND_WIN) && !a->broken)
		agg_win(m, r->lim, a, r->j, b, r->nb, false);
}

/* out = a + b (both ascending), equal indices added (saturating); its
 * length. */
static uint32_t bins_merge(const iogp_bin *a, uint32_t na, const struct pbin *b, uint32_t nb,
                           iogp_bin *out)
{
	uint32_t i = 0, j = 0, n = 0;

	while (i < na || j < nb) {
		if (j == nb || (i < na && a[i].idx < b[j].idx))
			out[n++] = a[i++];
		else if (i == na || b[j].idx < a[i].idx)
			out[n++] = (iogp_bin){ b[j].idx, b[j].count }, j++;
		else {
			out[n++] = (iogp_bin){ a[i].idx, sat_add(a[i].count, b[j].count) };
			i++, j++;
		}
	}
	return n;
}

static const struct pbin *prec_bins(const struct prec *r)
{
	return (const struct pbin *)(const void *)(r + 1);
}

/* The log, applied: the records of one metric, kind, window slot and ring
 * limit are merged first (their bins are ascending), so the sums take one
 * list each, not one per DELTA. A record joins an earlier one only while
 * no record of the same metric for another window slot lies between them:
 * what a full ring evicts depends on the order of its slots, and a merge
 * must not change it. Within one slot the order changes nothing the ring
 * keeps (it evicts whole older slots, as many as the slot's size needs).
 * Cumulative sums add in any order. What a merge does change are counts of
 * events: a late or saturated slot counts once per merged list. */
#define SETTLE_RECS (PEND_MAX / sizeof(struct prec))   /* records a log holds, at most */
#define SETTLE_SPAN 512u   /* a group whose bins span at most this many indices adds in a flat array */

/* The bins of records g[0..ng) (ascending each, within [lo, lo + SETTLE_SPAN))
 * added up into out, ascending; its length. Every index any of them holds
 * is there, as bins_merge would keep it, a zero count too. */
static uint32_t bins_flat(const struct npend *p, const uint32_t *off, const uint16_t *g, uint32_t ng,
                          uint64_t lo, iogp_bin *out)
{
	uint64_t sum[SETTLE_SPAN];
	uint8_t seen[SETTLE_SPAN];
	uint32_t span = 0, n = 0;

	for (uint32_t k = 0; k < ng; k++) {
		const struct prec *q = prec_at(p, off[g[k]]);
		uint32_t top = q->nb > 0 ? (uint32_t)(prec_bins(q)[q->nb - 1].idx - lo) + 1 : 0;

		for (; span < top; span++)
			sum[span] = 0, seen[span] = 0;
		for (uint32_t i = 0; i < q->nb; i++) {
			uint32_t x = (uint32_t)(prec_bins(q)[i].idx - lo);

			sum[x] = sat_add(sum[x], prec_bins(q)[i].count);
			seen[x] = 1;
		}
	}
	for (uint32_t x = 0; x < span; x++)
		if (seen[x])
			out[n++] = (iogp_bin){ lo + x, sum[x] };
	return n;
}

/* The log, applied: the records of one metric, kind, window slot and ring
 * limit are merged first (their bins are ascending), so the sums take one
 * list each, not one per DELTA. A record joins an earlier one only while
 * no record of the same metric for another window slot lies between them:
 * what a full ring evicts depends on the order of its slots, and a merge
 * must not change it. Within one slot the order changes nothing the ring
 * keeps (it evicts whole older slots, as many as the slot's size needs).
 * Cumulative sums add in any order. What a merge does change are counts of
 * events: a late or saturated slot counts once per merged list.
 *
 * A record's group is found along the chain of its metric's records (not
 * a scan of the whole log for each), and a group whose bins lie close
 * together adds up in a flat array (not a merge of two lists per record):
 * the scans and merges were two fifths of a viewer's settling at 50,000
 * sources. */
void model__agg_settle(iogp_model *m, uint32_t node)
{
	struct node *n = node < m->nnodes ? &m->nodes[node] : NULL;
	struct npend *p = n != NULL ? n->pend : NULL;
	iogp_bin acc[2][PEND_MAX / sizeof(struct pbin)];
	uint32_t off[SETTLE_RECS], R = 0;
	uint16_t next[SETTLE_RECS], g[SETTLE_RECS];
	uint8_t scanned[SETTLE_RECS];   /* next[i] found by a scan (counted only) */

	if (p == NULL || p->n == 0)
		return;
	for (uint32_t o = 0; o < p->n && R < SETTLE_RECS; o += (uint32_t)prec_size(prec_at(p, o)->nb))
		off[R++] = o;
	/* next[i]: the next record of record i's metric (R: none); the
	 * metrics are few, their last records found by a short search */
	{
		uint32_t mg[16], ml[16], nm = 0;

		for (uint32_t i = R; i-- > 0;) {
			uint32_t gi = prec_at(p, off[i])->gi, k = 0;

			while (k < nm && mg[k] != gi)
				k++;
			if (k == nm && nm == 16) {   /* many metrics: the search of each */
				uint32_t j = i + 1;

				while (j < R && prec_at(p, off[j])->gi != gi)
					j++;
				next[i] = (uint16_t)j;
				scanned[i] = 1;
				continue;
			}
			if (k == nm)
				mg[nm] = gi, ml[nm] = R, nm++;
			scanned[i] = 0;
			next[i] = (uint16_t)ml[k];
			ml[k] = i;
		}
	}
	for (uint32_t i = 0; i < R; i++) {
		struct prec *r = prec_at(p, off[i]), c = *r;
		uint32_t ng = 1, cur = 0, k = r->nb;
		uint64_t lo = r->nb > 0 ? prec_bins(r)[0].idx : 0, hi = r->nb > 0 ? prec_bins(r)[r->nb - 1].idx : 0;

		if (r->what & PEND_DONE)
			continue;
		g[0] = (uint16_t)i;
		for (uint32_t j = next[i], from = i; j < R; from = j, j = next[j]) {
			struct prec *q = prec_at(p, off[j]);

			if (q->what & PEND_DONE)
				continue;
			if (((q->what | r->what) & PEND_WIN) && q->j != r->j)
				break;
			if (q->what != r->what || q->lim != r->lim)
				continue;
			q->what |= PEND_DONE;
			g[ng++] = (uint16_t)j;
			m->settle_n[2] += scanned[from];
			if (q->nb > 0 && prec_bins(q)[0].idx < lo)
				lo = prec_bins(q)[0].idx;
			if (q->nb > 0 && prec_bins(q)[q->nb - 1].idx > hi)
				hi = prec_bins(q)[q->nb - 1].idx;
		}
		m->settle_n[0] += ng > 1;
		if (ng > 1 && hi - lo < SETTLE_SPAN) {
			m->settle_n[1]++;
			k = bins_flat(p, off, g, ng, lo, acc[0]);
		} else {
			for (uint32_t b = 0; b < k; b++)
				acc[0][b] = (iogp_bin){ prec_bins(r)[b].idx, prec_bins(r)[b].count };
			for (uint32_t x = 1; x < ng; x++) {
				const struct prec *q = prec_at(p, off[g[x]]);

				k = bins_merge(acc[cur], k, prec_bins(q), q->nb, acc[cur ^ 1]);
				cur ^= 1;
			}
		}
		c.nb = k;
		prec_apply(m, n, &c, acc[cur]);
	}
	p->n = 0;
}

/* Settling nodes one after another, each waits for its sums to come from
 * memory (the node's table of sums, a sum, its bins, its window ring: a
 * chain of misses; most of sb_add's samples in a viewer at 50,000 sources
 * were that wait). The nodes ahead have the links of their chains fetched
 * a step at a time, SETTLE_AHEAD nodes deep, so their misses overlap the
 * work on this one. Hints only: what the settle reads it reads anew. */
#define SETTLE_AHEAD 4
#define SETTLE_GI 16u    /* distinct metrics a node's log names, fetched */

static void settle_fetch(const iogp_model *m, uint32_t node, int stage)
{
	const struct node *n = &m->nodes[node];
	const struct npend *p = n->pend;
	uint32_t gi[SETTLE_GI], ng = 0;

	if (p == NULL || p->n == 0)
		return;
	if (stage == 0) {   /* the log's first lines, the node's table of sums */
		__builtin_prefetch(p);
		__builtin_prefetch(p->d + 64);
		__builtin_prefetch(n->agg);
		return;
	}
	for (uint32_t off = 0; off < p->n && ng < SETTLE_GI;
	     off += (uint32_t)prec_size(prec_at(p, off)->nb)) {
		const struct prec *r = prec_at(p, off);
		uint32_t k = 0;

		while (k < ng && gi[k] != r->gi)
			k++;
		if (k < ng || r->gi >= n->nagg)
			continue;
		gi[ng++] = r->gi;
		const struct agg *a = stage >= 2 ? n->agg[r->gi] : NULL;

		if (stage == 1)
			__builtin_prefetch(&n->agg[r->gi]);
		else if (a == NULL)
			continue;
		else if (stage == 2)
			__builtin_prefetch(a), __builtin_prefetch((const char *)a + 64);
		else if (stage == 3) {
			uint32_t b0 = r->nb > 0 ? prec_bins(r)[0].idx : 0;

			__builtin_prefetch(a->cum.d != NULL && b0 < a->cum.nd ? (const void *)&a->cum.d[b0]
			                                                     : (const void *)a->cum.b);
			model__wring_prefetch(m, a->nw, 0, false);
		} else {
			model__wring_prefetch(m, a->nw, 0, true);
		}
	}
}

/* Nodes first .. first + count - 1 (mod nnodes) settled, their chains
 * fetched ahead; how many had a log to apply. */
static size_t settle_run(iogp_model *m, uint32_t first, size_t count)
{
	size_t had = 0;
	uint32_t nn = m->nnodes;

	for (size_t k = 0; k < count; k++) {
		for (int st = 0; st <= SETTLE_AHEAD && nn > 1 && !m->settle_plain; st++) {
			size_t ahead = k + (size_t)(SETTLE_AHEAD - st) + 1;

			if (ahead < count)
				settle_fetch(m, (uint32_t)((first + ahead) % nn), st);
		}
		uint32_t i = (uint32_t)((first + k) % nn);
		struct npend *p = m->nodes[i].pend;

		if (p != NULL && p->n > 0) {
			model__agg_settle(m, i);
			had++;
		}
	}
	return had;
}

void model__agg_settle_all(iogp_model *m)
{
	if (m->nnodes > 0)
		settle_run(m, 0, m->nnodes);
}

size_t iogp_model_settle(iogp_model *m, size_t nodes)
{
	if (m == NULL || m->nnodes == 0)
		return 0;
	size_t count = nodes < m->nnodes ? nodes : m->nnodes;
	uint32_t first = m->settle_next % m->nnodes;
	size_t had = settle_run(m, first, count);

	m->settle_next = (uint32_t)((first + count) % m->nnodes);
	return had;
}

size_t iogp_model_unsettled(const iogp_model *m)
{
	size_t n = 0;

	for (uint32_t i = 0; m != NULL && i < m->nnodes; i++)
		n += m->nodes[i].pend != NULL && m->nodes[i].pend->n > 0;
	return n;
}

void iogp_model_read_unsettled(iogp_model *m, int on)
{
	if (m != NULL)
		m->read_unsettled = on != 0;
}

int iogp_model_reads_unsettled(const iogp_model *m)
{
	return m != NULL && m->read_unsettled;
}

/* The most a node's log may hold: PEND_MAX, less where the nodes are so
 * many that all their logs would pass LATE_TOTAL; 0: no log (a log below
 * PEND_MIN holds too few DELTAs to gain anything, and fewer nodes than
 * AGG_LATE_NODES keep their sums in cache). */
static uint32_t late_cap(const iogp_model *m)
{
	uint64_t share;

	if (m->agg_late != 0)
		return m->agg_late > 0 ? PEND_MAX : 0;
	if (m->nnodes < AGG_LATE_NODES)
		return 0;
	share = LATE_TOTAL / m->nnodes;
	return share >= PEND_MAX ? PEND_MAX : share >= PEND_MIN ? (uint32_t)share : 0;
}

/* Room for need (<= cap) more bytes in node's log, applying the log first
 * when it is full; NULL when it cannot grow: the caller applies at once. */
static struct npend *pend_room(iogp_model *m, uint32_t node, size_t need, uint32_t cap)
{
	struct node *n = &m->nodes[node];
	struct npend *p = n->pend;
	uint32_t used = p != NULL ? p->n : 0, have = p != NULL ? p->cap : 0, nc;

	if (used + need <= have && have <= cap)
		return p;
	if (used + need > cap || have > cap) {
		model__agg_settle(m, node);
		used = 0;
		if (need <= have && have <= cap)
			return p;
	}
	for (nc = have > 0 && have < cap ? have : 512; nc < used + need; nc *= 2)
		;
	nc = nc > cap ? cap : nc;
	struct npend *np = realloc(p, sizeof *np + nc);

	if (np == NULL) {
		model__agg_settle(m, node);
		return NULL;
	}
	if (p == NULL) {
		memset(np, 0, sizeof *np);
		m->agg_bytes += sizeof *np;
	}
	m->agg_bytes += nc;
	m->agg_bytes -= have;
	np->cap = nc;
	n->pend = np;
	return np;
}

/* Node sums of source s += bins b of metric gi (what: cumulative, window
 * slot j), late where the node has a log. PEND_TOOK: b are the bins the
 * newest record holds (a DELTA's histogram: its sums, then its window), so
 * that record takes the window too. */
static void pend_add(iogp_model *m, const struct source *s, uint32_t gi, uint32_t what,
                     uint64_t j, const iogp_bin *b, uint32_t nb)
{
	struct node *n = &m->nodes[s->node];
	struct npend *p = n->pend;
	size_t need = prec_size(nb);
	uint32_t cap = late_cap(m), lim = 0;
	bool narrow = true;

	if (what & PEND_WIN)
		lim = (uint32_t)model__win_node_limit(m, s->nhist);
	if ((what & PEND_TOOK) && p != NULL && p->n > 0 &&
	    p->last_at + prec_size(prec_at(p, p->last_at)->nb) == p->n) {
		struct prec *r = prec_at(p, p->last_at);

		if (r->gi == gi && r->nb == nb && r->what == PEND_CUM) {
			r->what |= PEND_WIN;
			r->j = j;
			r->lim = lim;
			return;
		}
	}
	what &= ~PEND_TOOK;
	for (uint32_t i = 0; i < nb && cap > 0; i++)
		narrow &= b[i].idx <= UINT32_MAX && b[i].count <= UINT32_MAX;
	if (cap == 0 || !narrow || need > cap || (p = pend_room(m, s->node, need, cap)) == NULL) {
		struct prec r = { gi, nb, j, lim, what };

		model__agg_settle(m, s->node);   /* in order */
		if (cap == 0 && n->pend != NULL) {   /* no log any more: its memory goes */
			m->agg_bytes -= sizeof *n->pend + n->pend->cap;
			free(n->pend);
			n->pend = NULL;
		}
		prec_apply(m, n, &r, b);
		return;
	}
	struct prec *r = prec_at(p, p->n);
	struct pbin *o = (struct pbin *)(void *)(r + 1);

	*r = (struct prec){ gi, nb, j, lim, what };
	for (uint32_t i = 0; i < nb; i++)
		o[i] = (struct pbin){ (uint32_t)b[i].idx, (uint32_t)b[i].count };
	p->last_at = p->n;
	p->n += (uint32_t)need;
}

struct move_ctx {
	iogp_model *m;
	const struct source *s;
	struct agg *from, *to;
};

static void move_seg(void *ctx, uint64_t j, const iogp_bin *b, uint32_t n)
{
	struct move_ctx *c = ctx;

	if (c->from != NULL && !c->from->broken)
		agg_win(c->m, 0, c->from, j, b, n, true);
	if (c->to != NULL && !c->to->broken)
		agg_win(c->m, model__win_node_limit(c->m, c->s->nhist), c->to, j, b, n, false);
}

/* Source si moves from node `from` to node `to` (its host label changed):
 * its cumulative state moves exactly; its window slots move as far as its
 * own ring still holds them (what it evicted stays with the old node until
 * the window passes). */
void model__agg_move(iogp_model *m, uint32_t si, uint32_t from, uint32_t to)
{
	const struct source *s = &m->src[si];

	if (!m->opts.live || m->agg_failed)
		return;
	model__agg_settle(m, from);
	model__agg_settle(m, to);
	for (uint32_t i = 0; i < s->nslots; i++) {
		const struct slot *sl = &s->slots[i];
		struct agg *f, *t;
		iogp_bin ex[MODEL_EXACT_MAX];
		uint32_t nex = sl->nex < MODEL_EXACT_MAX ? sl->nex : MODEL_EXACT_MAX;

		if (!sl->linked)
			continue;
		if (sl->kind != IOGP_HISTOGRAM) {
			uint64_t v = sl->kind == IOGP_GAUGE ? (uint64_t)sl->gauge : sl->counter;
			uint64_t *a = vsum_at(m, &m->nodes[from].vsum, &m->nodes[from].nvsum, sl->gm);
			uint64_t *b = vsum_at(m, &m->nodes[to].vsum, &m->nodes[to].nvsum, sl->gm);

			if (a == NULL || b == NULL)
				return;
			*a -= v;
			*b += v;
			continue;
		}
		f = agg_get(m, &m->nodes[from].agg, &m->nodes[from].nagg, sl->gm, false);
		t = agg_get(m, &m->nodes[to].agg, &m->nodes[to].nagg, sl->gm, true);
		if (t == NULL) {
			m->agg_failed = true;
			return;
		}
		agg_scheme(m, t, sl->scheme);
		cum_add(m, f, sl->bins, (uint32_t)sl->n, true);
		cum_add(m, t, sl->bins, (uint32_t)sl->n, false);
		for (uint32_t x = 0; x < nex; x++)
			ex[x] = (iogp_bin){ sl->ex[x].value, sl->ex[x].count };
		ex_change(m, f, ex, nex, NULL, 0);
		ex_change(m, t, NULL, 0, ex, nex);
		struct move_ctx c = { m, s, f, t };

		model__win_each(m, sl->win, move_seg, &c);
	}
}

/* ---- queries -------------------------------------------------------------- */

/* The sum answering a query over sel for metric gi: NULL when the query
 * must visit the sources (a source, a mixed or broken sum, aggregates off).
 * *empty: no slot of the metric in the selection (answer from gm's scheme). */
static const struct agg *agg_usable(const iogp_model *m, uint32_t gi, const iogp_sel *sel,
                                    int *err, bool *empty)
{
	const struct agg *a = NULL;

	*err = 0;
	*empty = false;
	if (!m->opts.live || m->agg_failed || m->agg_off)
		return NULL;
	if (sel == NULL || sel->kind == IOGP_SEL_ALL) {
		a = gi < m->nagg ? m->agg[gi] : NULL;
	} else if (sel->kind == IOGP_SEL_NODE) {
		uint32_t ni = model__node_find(m, sel->node != NULL ? sel->node : "");

		if (ni == NONE) {
			*err = IOGP_ENOTFOUND;
			return NULL;
		}
		if (!m->read_unsettled)
			model__agg_settle((iogp_model *)(uintptr_t)m, ni);   /* see the top */
		a = gi < m->nodes[ni].nagg ? m->nodes[ni].agg[gi] : NULL;
	} else {
		return NULL;
	}
	if (a == NULL || !a->used) {
		*empty = true;
		return NULL;
	}
	if (a->mixed || a->broken)
		return NULL;
	return a;
}

/* 1: answered into *v; 0: visit; < 0: error. */
int model__agg_value(const iogp_model *m, uint32_t gi, const iogp_sel *sel, uint64_t *v)
{
	const uint64_t *arr = m->vsum;
	uint32_t n = m->nvsum;

	if (!m->opts.live || m->agg_failed || m->agg_off)
		return 0;
	if (sel != NULL && sel->kind == IOGP_SEL_SOURCE)
		return 0;
	if (sel != NULL && sel->kind == IOGP_SEL_NODE) {
		uint32_t ni = model__node_find(m, sel->node != NULL ? sel->node : "");

		if (ni == NONE)
			return IOGP_ENOTFOUND;
		arr = m->nodes[ni].vsum;
		n = m->nodes[ni].nvsum;
	}
	*v = gi < n ? arr[gi] : 0;
	return 1;
}

static int add_exact(iogp_hist *out, const iogp_bin *b, uint32_t n)
{
	iogp_exact x[64];

	while (n > 0) {
		uint32_t k = n < 64 ? n : 64;

		for (uint32_t i = 0; i < k; i++)
			x[i] = (iogp_exact){ b[i].idx, b[i].count };
		int r = iogp_hist_add_exact(out, x, k);
		if (r < 0)
			return r;
		b += k;
		n -= k;
	}
	return 0;
}

/* An unknown node: out as the visit leaves it. */
static int not_found(iogp_hist *out, int err)
{
	iogp_bins nat;

	iogp_bins_native(&nat, IOGP_NATIVE_K_DEFAULT);
	iogp_hist_init(out, &nat);
	return err;
}

/* The sum for a histogram query, out initialised for it: 1 (*ap NULL: no
 * slot of the metric there, the answer is empty), 0 when the query must
 * visit (out untouched), < 0 on error. */
static int agg_hist_start(const iogp_model *m, uint32_t gi, const iogp_sel *sel, iogp_hist *out,
                          const struct agg **ap)
{
	bool empty;
	int err;
	const struct agg *a = *ap = agg_usable(m, gi, sel, &err, &empty);

	if (err < 0)
		return not_found(out, err);
	if (a == NULL && (!empty || m->agg_off || m->agg_failed))
		return 0;
	iogp_hist_init(out, &m->schemes[a != NULL ? a->scheme : m->gm[gi].scheme]->b);
	return 1;
}

/* out is initialised here unless this returns 0 (visit). */
int model__agg_hist(const iogp_model *m, uint32_t gi, const iogp_sel *sel, iogp_hist *out)
{
	const struct agg *a;
	int r = agg_hist_start(m, gi, sel, out, &a);

	if (r <= 0 || a == NULL)
		return r;
	if (a->cum.d != NULL && (r = model__dense_add(out, a->cum.d, a->cum.nd)) < 0)
		return r;
	if ((r = iogp_hist_add_bins(out, a->cum.b, a->cum.n)) < 0)
		return r;
	if (!a->ex_off && (r = add_exact(out, a->ex.b, a->ex.n)) < 0)
		return r;
	return 1;
}

/* Slots [jlo, jhi] of the window sum. */
int model__agg_hist_window(const iogp_model *m, uint32_t gi, const iogp_sel *sel, uint64_t jlo,
                           uint64_t jhi, iogp_hist *out)
{
	const struct agg *a;
	const struct aggwin *w;
	uint64_t nb, lo, hi;
	uint64_t *dense = NULL;
	int r = agg_hist_start(m, gi, sel, out, &a);

	if (r <= 0)
		return r;
	if (a != NULL && !a->all)
		return (r = model__wring_hist(m, a->nw, a->scheme, jlo, jhi, out)) < 0 ? r : 1;
	if (a == NULL || (w = a->win) == NULL || jhi < w->slot0)
		return 1;
	lo = jlo > w->slot0 ? jlo - w->slot0 : 0;
	hi = jhi - w->slot0;
	if (hi >= m->win_slots)
		hi = m->win_slots - 1;
	nb = m->schemes[a->scheme]->nbins;
	if (nb <= MODEL_DENSE_MAX && (dense = calloc(nb, sizeof *dense)) == NULL)
		return IOGP_ENOMEM;
	for (uint64_t k = lo; k <= hi; k++) {
		const struct sb *g = &w->seg[k];
		uint32_t s1 = g->n;

		for (uint32_t i = 0; g->d != NULL && i < g->nd && i < nb; i++)
			dense[i] = dense[i] + g->d[i] < dense[i] ? UINT64_MAX : dense[i] + g->d[i];

		/* exact values sit past the bins (model_priv.h) */
		while (s1 > 0 && g->b[s1 - 1].idx >= MODEL_WIN_EXACT && nb <= MODEL_WIN_EXACT)
			s1--;
		for (uint32_t i = s1; i < g->n; i++) {
			iogp_exact x = { g->b[i].idx - MODEL_WIN_EXACT, g->b[i].count };

			if ((r = iogp_hist_add_exact(out, &x, 1)) < 0)
				goto fail;
		}
		if (dense == NULL) {
			if ((r = iogp_hist_add_bins(out, g->b, s1)) < 0)
				goto fail;
			continue;
		}
		for (uint32_t i = 0; i < s1; i++) {
			uint64_t *d = &dense[g->b[i].idx];

			*d = *d + g->b[i].count < *d ? UINT64_MAX : *d + g->b[i].count;
		}
	}
	if (dense != NULL) {
		r = model__dense_add(out, dense, nb);
		free(dense);
		return r < 0 ? r : 1;
	}
	return 1;
fail:
	free(dense);
	return r;
}

size_t iogp__model_agg_broken(const iogp_model *m)
{
	size_t n = 0;

	model__agg_settle_all((iogp_model *)(uintptr_t)m);
	for (uint32_t i = 0; i < m->nnodes; i++)
		for (uint32_t g = 0; g < m->nodes[i].nagg; g++)
			n += m->nodes[i].agg[g] != NULL && m->nodes[i].agg[g]->broken;
	for (uint32_t g = 0; g < m->nagg; g++)
		n += m->agg[g] != NULL && m->agg[g]->broken;
	return n;
}

void iogp__model_agg_late(iogp_model *m, int late)
{
	if (m != NULL) {
		model__agg_settle_all(m);
		m->agg_late = late;
	}
}

void iogp__model_settle_ahead(iogp_model *m, int ahead)
{
	if (m != NULL)
		m->settle_plain = !ahead;
}

void iogp__model_settle_counts(const iogp_model *m, uint64_t out[3])
{
	for (int k = 0; k < 3; k++)
		out[k] = m != NULL ? m->settle_n[k] : 0;
}

void iogp__model_aggregates(iogp_model *m, int use)
{
	if (m != NULL)
		m->agg_off = !use;
}

/* A DELTA's sums are cold (thousands of nodes): ask for the line holding
 * each one's pointer (or value) before the cumulative work, as
 * model__live_prefetch does for the source's rings. No further: reading
 * the pointer here would wait for it. */
void model__agg_prefetch(const iogp_model *m, const struct source *s, const struct slot *sl)
{
	const struct node *n = &m->nodes[s->node];

	if (!m->opts.live || !sl->linked)
		return;
	if (sl->kind != IOGP_HISTOGRAM) {
		if (sl->gm < n->nvsum)
			__builtin_prefetch(&n->vsum[sl->gm]);
	} else {
		if (n->pend != NULL)
			__builtin_prefetch(n->pend);
		if (sl->gm < m->nagg)
			__builtin_prefetch(&m->agg[sl->gm]);
	}
}

/* The node's log where the DELTA's records go (the node's sums themselves
 * wait for the log's burst). */
void model__agg_prefetch_log(const iogp_model *m, const struct source *s, const struct slot *sl)
{
	const struct npend *p = m->nodes[s->node].pend;

	if (!m->opts.live || !sl->linked || sl->kind != IOGP_HISTOGRAM || p == NULL)
		return;
	__builtin_prefetch(p->d + p->n, 1);
	__builtin_prefetch(p->d + p->n + 64, 1);
}

void iogp__model_window_bytes(const iogp_model *m, size_t *sources, size_t *nodes)
{
	model__agg_settle_all((iogp_model *)(uintptr_t)m);
	*sources = *nodes = 0;
	for (uint32_t i = 0; i < m->nsrc; i++)
		*sources += m->src[i].win_bytes;
	for (uint32_t n = 0; n < m->nnodes; n++)
		for (uint32_t g = 0; g < m->nodes[n].nagg; g++)
			if (m->nodes[n].agg[g] != NULL)
				*nodes += model__wring_bytes(m->nodes[n].agg[g]->nw);
}

size_t model__agg_bytes(const iogp_model *m)
{
	return m->agg_bytes;
}
