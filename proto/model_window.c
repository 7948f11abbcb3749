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

/* Who a ring belongs to: a source's slot (its share of the source's
 * window budget, counted in live_bytes) or a node's sum (model_agg.c: a
 * fixed limit, counted where bytes points). */
struct wown {
	struct wring **w;
	struct source *s;
	size_t limit;
	size_t *bytes;
};

/* Bytes ring w (NULL: a new one) may hold: a source's share of its
 * budget, and no more than the budget has left; a sum's limit. */
static size_t wring_left(const iogp_model *m, const struct wown *o, const struct wring *w)
{
	const struct source *s = o->s;

	if (s == NULL)
		return o->limit;
	/* window_total shares out among the sources: each gets less as they grow */
	size_t budget = m->opts.window_bytes;
	if (m->opts.window_total && m->nsrc > 0 && m->opts.window_total / m->nsrc < budget)
		budget = m->opts.window_total / m->nsrc > 1024 ? m->opts.window_total / m->nsrc : 1024;
	size_t share = budget / (s->nhist > 0 ? s->nhist : 1);
	size_t own = w != NULL ? wring_size(m, w->cap) : 0;
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

/* Room for add more entries within the ring's share, evicting the oldest
 * segments before k if that is what it takes. */
static bool wring_room(iogp_model *m, const struct wown *o, uint32_t k, uint32_t add)
{
	struct wring *w = *o->w, *nw;
	size_t old = wring_size(m, w->cap), left = wring_left(m, o, w);
	uint32_t need = w->n + add, cap;

	if (wring_size(m, need) > left) {
		uint32_t e = 1;

		while (e <= k && wring_size(m, w->n - w->end[e - 1] + add) > left)
			e++;
		if (e > k)
			return false;
		m->lst.window_evicted += wring_drop_front(m, w, e);
		need = w->n + add;
		if (need <= w->cap && wring_size(m, w->cap) <= left)
			return true;
		/* else grow, or shrink to a share that got smaller as sources came */
	}
	cap = need + need / 2;
	if (wring_size(m, cap) > left)
		cap = need;
	nw = realloc(w, wring_size(m, cap));
	if (nw == NULL)
		return false;
	wown_bytes(m, o, old, wring_size(m, cap));
	nw->cap = cap;
	*o->w = nw;
	return true;
}

static void win_put(iogp_model *m, const struct wown *ow, uint64_t j, const iogp_bin *in,
                    uint32_t nin)
{
	uint32_t NS = m->win_slots, usable = 0, add = 0, k, s0, s1, p;
	bool wide = false;
	struct wring *w = *ow->w;
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

		if (sz > wring_left(m, ow, NULL) || (w = calloc(1, sz)) == NULL) {
			m->lst.window_dropped++;
			return;
		}
		w->slot0 = j >= NS - 1 ? j - (NS - 1) : 0;
		w->cap = cap;
		wown_bytes(m, ow, 0, sz);
		*ow->w = w;
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
		if (!wring_room(m, ow, k, add)) {
			m->lst.window_dropped++;
			return;
		}
		w = *ow->w;
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

	if (w == NULL)
		return;
	b = wring_bins(m, w);
	for (uint32_t k = 0; k < m->win_slots; k++) {
		uint32_t s0 = k > 0 ? w->end[k - 1] : 0, s1 = w->end[k];

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

	if (w == NULL || j < w->slot0 || j - w->slot0 >= m->win_slots)
		return;
	k = (uint32_t)(j - w->slot0);
	b = wring_bins(m, w);
	s0 = k > 0 ? w->end[k - 1] : 0;
	s1 = w->end[k];
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
	for (uint32_t x = k; x < m->win_slots; x++)
		w->end[x] -= gone;
	w->n -= gone;
}

void model__wring_free(const iogp_model *m, struct wring *w, size_t *bytes)
{
	if (w != NULL)
		*bytes -= wring_size(m, w->cap);
	free(w);
}

void model__win_prefetch(const iogp_model *m, const struct slot *sl)
{
	const struct wbin *b;

	if (sl->win == NULL)
		return;
	b = wring_bins(m, sl->win);
	__builtin_prefetch(sl->win);
	__builtin_prefetch((const char *)sl->win + 64);
	if (sl->win_n > 0)
		__builtin_prefetch(&b[sl->win_n - 1]);
	if (sl->win_n > 8)
		__builtin_prefetch(&b[sl->win_n - 9]);
}

/* ---- window queries ---------------------------------------------------------- */

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
	if (hi >= m->win_slots)
		hi = m->win_slots - 1;
	if (lo > hi)
		return;
	b = wring_bins(m, w);
	for (uint64_t k = lo; k <= hi; k++) {
		uint32_t s0 = k > 0 ? w->end[k - 1] : 0, s1 = w->end[k];

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
	uint64_t nb = m->schemes[sc]->nbins;

	if (w == NULL)
		return 0;
	if (nb <= MODEL_DENSE_MAX) {
		if ((c.dense = calloc(nb, sizeof *c.dense)) == NULL)
			return IOGP_ENOMEM;
		ring_add(&c, m, w, sc);
		if (c.err == 0)
			c.err = model__dense_add(out, c.dense, nb);
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

