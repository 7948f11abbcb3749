/* model_window.c - "last N seconds" histograms: every source's window rings
 * (a histogram's deltas by window slot, within the source's share of the
 * window budget), the node sums' rings (model_agg.c), and the window query
 * over a selection. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "iogp_err.h"
#include "iogp_model.h"
#include "model_priv.h"

/* ---- live side: window histograms --------------------------------------------- */

/* Deltas of one histogram metric of one source (or of a node's sum) by
 * window slot: segment k < L (bins [end[k-1], end[k])) holds slot slot0 + k,
 * sorted by index; one block: header, Lcap segment ends, cap bins. A ring
 * spans only the slots it holds (L <= win_slots): a small share keeps a few
 * slots behind a few bytes of header. With an end for every slot of the
 * window (616 bytes at 150 slots) a share of 50,000 sources' budget could
 * not even hold its header, and every source's window stayed empty. */
struct wbin {
	uint32_t idx, count;
};

struct wring {
	uint64_t slot0;     /* the slot of segment 0 (meaningless while L = 0) */
	uint32_t n, cap;    /* bins held, room for */
	uint32_t L, Lcap;   /* segments held, room for */
	uint32_t end[];
};

static size_t wring_hdr(uint32_t Lcap)
{
	return (sizeof(struct wring) + Lcap * sizeof(uint32_t) + 7) & ~(size_t)7;
}

static size_t wring_size(uint32_t Lcap, uint32_t cap)
{
	return wring_hdr(Lcap) + (size_t)cap * sizeof(struct wbin);
}

static struct wbin *wring_bins(const struct wring *w)
{
	return (struct wbin *)(void *)((char *)(uintptr_t)w + wring_hdr(w->Lcap));
}

/* Segment k's bins [*s0, *s1). */
static void wring_seg(const struct wring *w, uint32_t k, uint32_t *s0, uint32_t *s1)
{
	*s0 = k > 0 ? w->end[k - 1] : 0;
	*s1 = w->end[k];
}

/* Drop segments [0, e) (e <= L): the ring starts e slots later. Returns
 * how many of them held anything. */
static uint32_t wring_drop_front(struct wring *w, uint32_t e)
{
	uint32_t drop = e > 0 ? w->end[e - 1] : 0, nonempty = 0;
	struct wbin *b = wring_bins(w);

	for (uint32_t k = 0; k < e; k++)
		nonempty += w->end[k] > (k > 0 ? w->end[k - 1] : 0);
	memmove(b, b + drop, (size_t)(w->n - drop) * sizeof *b);
	for (uint32_t k = e; k < w->L; k++)
		w->end[k - e] = w->end[k] - drop;
	w->n -= drop;
	w->L -= e;
	w->slot0 += e;
	return nonempty;
}

/* Who a ring belongs to: a source's slot (its share of the source's
 * window budget, counted in live_bytes) or a node's sum (model_agg.c: a
 * fixed limit, counted where bytes points). */
struct wown {
	struct wring **w;
	struct source *s;
	size_t limit;
	size_t *bytes;
};

/* window_total is one budget for every window ring: the node sums' rings
 * take at most half of it (each an even share per node and histogram,
 * AGG_NODE_WIN_MIN to AGG_NODE_WIN_BYTES), the sources share what the
 * nodes cannot take, each at most window_bytes. A source whose share
 * would give a histogram less than MODEL_WIN_SRC_MIN keeps no rings: a
 * few slots of a 300 s window answer nothing a user asks, and they cost
 * 5 KB and an eighth of a DELTA's work at 50,000 sources. Its deltas
 * still go to its node's and the whole model's sums (windows_unkept). */
#define AGG_NODE_WIN_BYTES (256u << 10)
#define AGG_NODE_WIN_MIN (2u << 10)
#define MODEL_WIN_SRC_MIN 512u

static uint64_t node_pool(const iogp_model *m, uint32_t nhist)
{
	uint64_t want = (uint64_t)m->nnodes * nhist * AGG_NODE_WIN_BYTES;

	return want < m->opts.window_total / 2 ? want : m->opts.window_total / 2;
}

size_t model__win_node_limit(const iogp_model *m, uint32_t nhist)
{
	uint64_t share = AGG_NODE_WIN_BYTES;

	nhist = nhist > 0 ? nhist : 1;
	if (m->opts.window_total && m->nnodes > 0)
		share = node_pool(m, nhist) / m->nnodes / nhist;
	if (share > AGG_NODE_WIN_BYTES)
		share = AGG_NODE_WIN_BYTES;
	return share < AGG_NODE_WIN_MIN ? AGG_NODE_WIN_MIN : (size_t)share;
}

size_t model__win_src_budget(const iogp_model *m, uint32_t nhist)
{
	size_t budget = m->opts.window_bytes;

	nhist = nhist > 0 ? nhist : 1;
	if (m->opts.window_total && m->nsrc > 0) {
		uint64_t each = (m->opts.window_total - node_pool(m, nhist)) / m->nsrc;

		if (each < budget)
			budget = (size_t)each;
	}
	return budget / nhist < MODEL_WIN_SRC_MIN ? 0 : budget;
}

size_t iogp_model_source_window_bytes(const iogp_model *m, uint64_t source)
{
	uint32_t i = m != NULL && m->opts.live ? model__src_find(m, source) : UINT32_MAX;

	return i < m->nsrc ? model__win_src_budget(m, m->src[i].nhist) : 0;
}

size_t model__wring_bytes(const struct wring *w)
{
	return w != NULL ? wring_size(w->Lcap, w->cap) : 0;
}

/* Bytes ring w (NULL: a new one) may hold: a source's share of its
 * budget, and no more than the budget has left; a sum's limit. */
static size_t wring_left(const iogp_model *m, const struct wown *o, const struct wring *w)
{
	const struct source *s = o->s;

	if (s == NULL)
		return o->limit;
	size_t budget = model__win_src_budget(m, s->nhist);
	size_t share = budget / (s->nhist > 0 ? s->nhist : 1);
	size_t own = w != NULL ? wring_size(w->Lcap, w->cap) : 0;
	size_t others = s->win_bytes > own ? s->win_bytes - own : 0;
	size_t left = budget > others ? budget - others : 0;

	return share < left ? share : left;
}

/* The owner's ring went from old to now bytes. */
static void wown_bytes(iogp_model *m, const struct wown *o, size_t old, size_t now)
{
	if (o->s != NULL) {
		o->s->win_bytes = (uint32_t)(o->s->win_bytes - old + now);
		m->lst.live_bytes = m->lst.live_bytes - old + now;
	} else {
		*o->bytes = *o->bytes - old + now;
	}
}

/* The ring laid out again with room for Lcap segments and cap bins (both
 * at least what it holds). */
static bool wring_resize(iogp_model *m, const struct wown *o, uint32_t Lcap, uint32_t cap)
{
	struct wring *w = *o->w, *nw;
	size_t old = wring_size(w->Lcap, w->cap);

	if (Lcap == w->Lcap) {
		if ((nw = realloc(w, wring_size(Lcap, cap))) == NULL)
			return false;
	} else {
		if ((nw = malloc(wring_size(Lcap, cap))) == NULL)
			return false;
		memcpy(nw, w, sizeof *w + (size_t)w->L * sizeof w->end[0]);
		nw->Lcap = Lcap;
		memcpy(wring_bins(nw), wring_bins(w), (size_t)w->n * sizeof(struct wbin));
		free(w);
	}
	nw->cap = cap;
	wown_bytes(m, o, old, wring_size(Lcap, cap));
	*o->w = nw;
	return true;
}

/* Room for add more entries within the ring's share, evicting the oldest
 * segments before k if that is what it takes. */
static bool wring_room(iogp_model *m, const struct wown *o, uint32_t *k, uint32_t add)
{
	struct wring *w = *o->w;
	size_t left = wring_left(m, o, w);
	uint32_t need = w->n + add, cap;

	if (wring_size(w->Lcap, need) > left) {
		uint32_t e = 1;

		while (e <= *k && wring_size(w->Lcap, w->n - w->end[e - 1] + add) > left)
			e++;
		if (e > *k)
			return false;
		m->lst.window_evicted += wring_drop_front(w, e);
		*k -= e;
		need = w->n + add;
		if (need <= w->cap && wring_size(w->Lcap, w->cap) <= left)
			return true;
		/* else grow, or shrink to a share that got smaller as sources came */
	}
	cap = need + need / 2;
	if (wring_size(w->Lcap, cap) > left)
		cap = need;
	return wring_resize(m, o, w->Lcap, cap);
}

/* Make slot j one of the ring's segments: extend its span (back, within
 * win_slots of its newest; or forward, dropping what falls out of the
 * window). Its segment index, or -1: older than the ring keeps (counted
 * late) or no memory (counted dropped). */
static int64_t wring_slot(iogp_model *m, const struct wown *o, uint64_t j)
{
	struct wring *w = *o->w;
	uint32_t NS = m->win_slots, L2;
	uint64_t back = 0;

	if (w->L > 0 && j < w->slot0) {
		back = w->slot0 - j;
		if (back + w->L > NS) {
			m->lst.window_late++;
			return -1;
		}
	} else if (w->L > 0 && j - w->slot0 >= NS) {
		uint64_t d = j - w->slot0 - (NS - 1);

		if (d >= w->L)
			w->n = w->L = 0;   /* everything falls out */
		else
			wring_drop_front(w, (uint32_t)d);
	}
	if (w->L == 0)
		w->slot0 = j;
	L2 = back > 0 ? w->L + (uint32_t)back : j - w->slot0 + 1 > w->L ? (uint32_t)(j - w->slot0 + 1) : w->L;
	if (L2 > w->Lcap) {
		uint32_t c = w->Lcap * 2 > L2 ? w->Lcap * 2 : L2 + 3;

		if (!wring_resize(m, o, c < NS ? c : NS, w->cap)) {
			m->lst.window_dropped++;
			return -1;
		}
		w = *o->w;
	}
	if (back > 0) {
		memmove(w->end + back, w->end, (size_t)w->L * sizeof w->end[0]);
		memset(w->end, 0, (size_t)back * sizeof w->end[0]);
		w->slot0 = j;
	}
	for (uint32_t k = back > 0 ? w->L + (uint32_t)back : w->L; k < L2; k++)
		w->end[k] = w->n;
	w->L = L2;
	return (int64_t)(j - w->slot0);
}

static void win_put(iogp_model *m, const struct wown *o, uint64_t j, const iogp_bin *in,
                    uint32_t nin)
{
	uint32_t usable = 0, add = 0, k, s0, s1, p;
	bool wide = false;
	struct wring *w = *o->w;
	struct wbin *b;
	int64_t q, i, at;

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
	if (o->s != NULL && model__win_src_budget(m, o->s->nhist) == 0) {
		/* sources grew past what a useful ring needs: no source ring */
		if (w != NULL) {
			m->lst.window_evicted += wring_drop_front(w, w->L);
			wown_bytes(m, o, wring_size(w->Lcap, w->cap), 0);
			free(w);
			*o->w = NULL;
		}
		m->lst.window_unkept++;
		return;
	}
	if (w == NULL) {
		uint32_t cap = usable < 8 ? 8 : usable;
		size_t sz = wring_size(4, cap);

		if (sz > wring_left(m, o, NULL) || (w = calloc(1, sz)) == NULL) {
			m->lst.window_dropped++;
			return;
		}
		w->cap = cap;
		w->Lcap = 4;
		wown_bytes(m, o, 0, sz);
		*o->w = w;
	}
	if ((at = wring_slot(m, o, j)) < 0)
		return;
	w = *o->w;
	k = (uint32_t)at;
	b = wring_bins(w);
	wring_seg(w, k, &s0, &s1);
	p = s0;
	for (uint32_t x = 0; x < nin; x++) {
		if (in[x].count == 0 || in[x].idx > UINT32_MAX)
			continue;
		while (p < s1 && b[p].idx < in[x].idx)
			p++;
		add += p == s1 || b[p].idx != in[x].idx;
	}
	if (w->n + add > w->cap) {
		if (!wring_room(m, o, &k, add)) {
			m->lst.window_dropped++;
			return;
		}
		w = *o->w;
		b = wring_bins(w);
		wring_seg(w, k, &s0, &s1);
	}
	memmove(b + s1 + add, b + s1, (size_t)(w->n - s1) * sizeof *b);
	for (uint32_t x = k; x < w->L; x++)
		w->end[x] += add;
	w->n += add;
	/* merge from the back into the widened segment */
	int64_t out = (int64_t)s1 + add - 1;
	q = (int64_t)s1 - 1;
	for (i = (int64_t)nin - 1; i >= 0;) {
		const iogp_bin *x = &in[i];

		if (x->count == 0 || x->idx > UINT32_MAX) {
			i--;
		} else if (q >= (int64_t)s0 && b[q].idx > x->idx) {
			b[out--] = b[q--];
		} else if (q >= (int64_t)s0 && b[q].idx == x->idx) {
			uint64_t c = (uint64_t)b[q].count + x->count;

			if (c > UINT32_MAX) {
				c = UINT32_MAX;
				m->lst.window_saturated++;
			}
			b[out] = (struct wbin){ b[q].idx, (uint32_t)c };
			out--, q--, i--;
		} else {
			if (x->count > UINT32_MAX)
				m->lst.window_saturated++;
			b[out--] = (struct wbin){ (uint32_t)x->idx,
			                          x->count > UINT32_MAX ? UINT32_MAX : (uint32_t)x->count };
			i--;
		}
	}
}

void model__win_add(iogp_model *m, struct source *s, struct slot *sl, uint64_t j,
                    const iogp_bin *in, uint32_t nin)
{
	struct wown o = { .w = &sl->win, .s = s };

	win_put(m, &o, j, in, nin);
	sl->win_n = sl->win != NULL ? sl->win->n : 0;
}

void model__win_each(const iogp_model *m, const struct wring *w,
                     void (*fn)(void *ctx, uint64_t j, const iogp_bin *b, uint32_t n), void *ctx)
{
	const struct wbin *b;
	iogp_bin tmp[64];

	(void)m;
	if (w == NULL)
		return;
	b = wring_bins(w);
	for (uint32_t k = 0; k < w->L; k++) {
		uint32_t s0, s1;

		wring_seg(w, k, &s0, &s1);

		/* in pieces: a piece is ascending, so each is a valid input */
		while (s0 < s1) {
			uint32_t n = s1 - s0 < 64 ? s1 - s0 : 64;

			for (uint32_t i = 0; i < n; i++)
				tmp[i] = (iogp_bin){ b[s0 + i].idx, b[s0 + i].count };
			fn(ctx, w->slot0 + k, tmp, n);
			s0 += n;
		}
	}
}

/* A DELTA touches a few lines of every ring it feeds, on a source that is
 * usually cold: ask for them all first, so the misses overlap with the
 * cumulative work. */

/* ---- a node sum's ring (model_agg.c) ---------------------------------------- */

void model__wring_put(iogp_model *m, struct wring **w, size_t limit, size_t *bytes, uint64_t j,
                      const iogp_bin *in, uint32_t nin)
{
	struct wown o = { .w = w, .limit = limit, .bytes = bytes };

	win_put(m, &o, j, in, nin);
}

/* Slot j of ring w -= in (ascending; what w lacks is left alone): a source
 * moving to another node takes its window along. */
void model__wring_sub(const iogp_model *m, struct wring *w, uint64_t j, const iogp_bin *in,
                      uint32_t nin)
{
	uint32_t k, s0, s1, p, o, gone;
	struct wbin *b;

	(void)m;
	if (w == NULL || j < w->slot0 || j - w->slot0 >= w->L)
		return;
	k = (uint32_t)(j - w->slot0);
	b = wring_bins(w);
	wring_seg(w, k, &s0, &s1);
	p = s0;
	for (uint32_t x = 0; x < nin; x++) {
		while (p < s1 && b[p].idx < in[x].idx)
			p++;
		if (p < s1 && b[p].idx == in[x].idx)
			b[p].count = b[p].count > in[x].count ? b[p].count - (uint32_t)in[x].count : 0;
	}
	for (p = o = s0; p < s1; p++)
		if (b[p].count != 0)
			b[o++] = b[p];
	gone = s1 - o;
	if (gone == 0)
		return;
	memmove(b + o, b + s1, (size_t)(w->n - s1) * sizeof *b);
	for (uint32_t x = k; x < w->L; x++)
		w->end[x] -= gone;
	w->n -= gone;
}

void model__wring_free(const iogp_model *m, struct wring *w, size_t *bytes)
{
	(void)m;
	if (w != NULL)
		*bytes -= wring_size(w->Lcap, w->cap);
	free(w);
}

/* A ring's header, where its newest slot begins, and (bins: once the
 * header is in) that slot's bins. */
void model__wring_prefetch(const iogp_model *m, const struct wring *w, uint32_t n, bool bins)
{
	(void)m;
	if (w == NULL)
		return;
	if (bins) {
		uint32_t s0 = w->L >= 2 ? w->end[w->L - 2] : 0;

		if (s0 < w->n)
			__builtin_prefetch(&wring_bins(w)[s0]);
		return;
	}
	/* the header and the first ends; the ring's newest bins are read
	 * once these are in (bins = true) */
	__builtin_prefetch(w);
	__builtin_prefetch((const char *)w + 64);
	(void)n;
}

void model__win_prefetch(const iogp_model *m, const struct slot *sl)
{
	model__wring_prefetch(m, sl->win, sl->win_n, false);
}

void model__win_prefetch_bins(const iogp_model *m, const struct slot *sl)
{
	model__wring_prefetch(m, sl->win, sl->win_n, true);
}

/* ---- window queries ---------------------------------------------------------- */

struct win_ctx {
	uint64_t jlo, jhi;
	uint32_t scheme;
	uint32_t nslots;
	bool mismatch;
	uint64_t *dense;     /* counts of bins dlo.. */
	uint64_t dlo;
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

/* The lowest and highest bin (not exact value) slots [jlo, jhi] of ring
 * w hold; false when none. */
static bool ring_span(const iogp_model *m, const struct wring *w, uint32_t sc, uint64_t jlo,
                      uint64_t jhi, uint64_t *lo, uint64_t *hi)
{
	const struct wbin *b;
	uint64_t k0, k1;
	bool any = false;

	if (w == NULL || w->L == 0 || jhi < w->slot0)
		return false;
	k0 = jlo > w->slot0 ? jlo - w->slot0 : 0;
	k1 = jhi - w->slot0 < w->L ? jhi - w->slot0 : (uint64_t)w->L - 1;
	b = wring_bins(w);
	for (uint64_t k = k0; k <= k1; k++) {
		uint32_t s0, s1;

		wring_seg(w, (uint32_t)k, &s0, &s1);
		while (s1 > s0 && b[s1 - 1].idx >= MODEL_WIN_EXACT && m->schemes[sc]->nbins <= MODEL_WIN_EXACT)
			s1--;
		if (s1 == s0)
			continue;
		if (!any || b[s0].idx < *lo)
			*lo = b[s0].idx;
		if (!any || b[s1 - 1].idx > *hi)
			*hi = b[s1 - 1].idx;
		any = true;
	}
	return any;
}

/* Slots [c->jlo, c->jhi] of ring w (scheme sc) into c. */
static void ring_add(struct win_ctx *c, const iogp_model *m, const struct wring *w, uint32_t sc)
{
	const struct wbin *b;
	uint64_t lo, hi;

	if (w == NULL || c->err < 0)
		return;
	lo = c->jlo > w->slot0 ? c->jlo - w->slot0 : 0;
	if (c->jhi < w->slot0)
		return;
	hi = c->jhi - w->slot0;
	if (hi >= w->L)
		hi = (uint64_t)w->L - 1;
	if (w->L == 0 || lo > hi)
		return;
	b = wring_bins(w);
	for (uint64_t k = lo; k <= hi; k++) {
		uint32_t s0, s1;

		wring_seg(w, (uint32_t)k, &s0, &s1);

		/* exact values sit past the bins, ascending (model_priv.h) */
		while (s1 > s0 && b[s1 - 1].idx >= MODEL_WIN_EXACT &&
		       m->schemes[sc]->nbins <= MODEL_WIN_EXACT) {
			iogp_exact x[32];
			uint32_t nx = 0;

			while (s1 > s0 && b[s1 - 1].idx >= MODEL_WIN_EXACT && nx < 32)
				s1--, nx++;
			for (uint32_t i = 0; i < nx; i++)
				x[i] = (iogp_exact){ b[s1 + i].idx - MODEL_WIN_EXACT, b[s1 + i].count };
			if ((c->err = iogp_hist_add_exact(c->out, x, nx)) < 0)
				return;
		}
		if (c->dense != NULL) {
			for (uint32_t i = s0; i < s1; i++) {
				uint64_t *d = &c->dense[b[i].idx - c->dlo];

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

static void visit_win_add(void *ctx, const iogp_model *m, const struct slot *sl)
{
	struct win_ctx *c = ctx;

	if (sl->scheme == c->scheme)
		ring_add(c, m, sl->win, sl->scheme);
}

/* out (initialised with scheme sc) += slots [jlo, jhi] of a node sum's ring. */
int model__wring_hist(const iogp_model *m, const struct wring *w, uint32_t sc, uint64_t jlo,
                      uint64_t jhi, iogp_hist *out)
{
	struct win_ctx c = { .jlo = jlo, .jhi = jhi, .scheme = sc, .out = out };
	uint64_t nb = m->schemes[sc]->nbins, lo = 0, hi = 0;

	if (w == NULL)
		return 0;
	if (nb <= MODEL_DENSE_MAX) {
		/* a flat array over the bins the slots hold, not the scheme's
		 * thousands: a node's 30 s holds a few hundred entries, and the
		 * nodes table asks 3,125 nodes four times a frame at 50,000
		 * sources (a calloc and two scans of every bin each, half the
		 * table's time) */
		uint64_t few[512];

		if (!ring_span(m, w, sc, jlo, jhi, &lo, &hi))
			lo = hi = 0;
		c.dlo = lo;
		if (hi - lo < sizeof few / sizeof *few)
			c.dense = memset(few, 0, (size_t)(hi - lo + 1) * sizeof *few);
		else if ((c.dense = calloc(hi - lo + 1, sizeof *c.dense)) == NULL)
			return IOGP_ENOMEM;
		ring_add(&c, m, w, sc);
		if (c.err == 0)
			c.err = model__dense_add_at(out, c.dense, lo, hi - lo + 1);
		if (c.dense != few)
			free(c.dense);
	} else {
		if ((c.tmp = malloc(((size_t)w->n + 1) * sizeof *c.tmp)) == NULL)
			return IOGP_ENOMEM;
		ring_add(&c, m, w, sc);
		free(c.tmp);
	}
	return c.err;
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
	if (window_ns == 0 || window_ns > m->opts.window_max_ns)
		window_ns = m->opts.window_max_ns;
	now = model__clock(m);
	c.jhi = now / m->opts.window_slot_ns;
	c.jlo = now > window_ns ? (now - window_ns) / m->opts.window_slot_ns : 0;
	if ((r = model__metric_lookup(m, metric, IOGP_HISTOGRAM, &gi)) == 0 &&
	    (r = m->opts.live ? 0 : IOGP_EINVAL) == 0 &&
	    (r = model__agg_hist_window(m, gi, sel, c.jlo, c.jhi, out)) != 0)   /* model_agg.c */
		return r < 0 ? r : 0;
	if (r == 0 && sel != NULL && sel->kind == IOGP_SEL_SOURCE) {
		/* one source: its ring's bins over the slots asked, not a flat
		 * array of the scheme's every bin (a table of 50,000 ranks in a
		 * window asks three a row) */
		uint32_t si = model__src_find(m, sel->source), sl;

		if (si != NONE && (sl = model__slot_by_gm(&m->src[si], gi)) != NONE) {
			const struct slot *s = &m->src[si].slots[sl];

			iogp_hist_init(out, &m->schemes[s->scheme]->b);
			r = model__wring_hist(m, s->win, s->scheme, c.jlo, c.jhi, out);
			return r < 0 ? r : 0;
		}
	}
	if (r < 0 || (r = model__sel_visit(m, gi, sel, visit_win_scan, &c)) < 0) {
		iogp_bins_native(&nat, IOGP_NATIVE_K_DEFAULT);
		iogp_hist_init(out, &nat);
		return r;
	}
	if (c.scheme == NONE)
		c.scheme = m->gm[gi].scheme;
	iogp_hist_init(out, &m->schemes[c.scheme]->b);
	if (c.nslots == 0)
		return c.mismatch ? IOGP_ESCHEME : 0;
	nb = m->schemes[c.scheme]->nbins;
	if (nb <= MODEL_DENSE_MAX) {
		c.dense = calloc(nb, sizeof *c.dense);
		if (c.dense == NULL)
			return IOGP_ENOMEM;
		model__sel_visit(m, gi, sel, visit_win_add, &c);
		c.err = model__dense_add(out, c.dense, nb);
		free(c.dense);
	} else {
		/* a segment never holds more than the source's budget allows */
		c.tmp = malloc(m->opts.window_bytes / sizeof(struct wbin) * sizeof *c.tmp + 1);
		if (c.tmp == NULL)
			return IOGP_ENOMEM;
		model__sel_visit(m, gi, sel, visit_win_add, &c);
		free(c.tmp);
	}
	if (c.err < 0)
		return c.err;
	return c.mismatch ? IOGP_ESCHEME : 0;
}

