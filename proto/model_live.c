/* model_live.c - the live side of the stream model: rate rings fed by every
 * DELTA's interval and their queries (rates, rates across nodes), and the
 * live counters. Window histograms are in model_window.c. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "iogp_err.h"
#include "iogp_model.h"
#include "model_priv.h"

#define MODEL_MPS_SECS 5u                /* messages/s averaged over this many seconds */

/* ---- live side: rate rings ---------------------------------------------------- */

/* L bins (ring_bins for the nodes and the whole, source_ring_bins for a
 * source), each holding the increments given to it for the rate metrics
 * the ring has seen a non-zero amount of, side by side (one cache line for
 * a DELTA's bin), then 16 bits per bin with a coverage bit per metric.
 * Absolute bin b (wall / bin_ns) sits at b % L. A metric gets its column
 * with its first non-zero amount (the ring is laid out again, rarely): a
 * reader's source has its read columns only, and a ring of every rate a
 * viewer keeps (8) for each of 50,000 sources was most of their memory. A
 * covered bin of a metric without a column holds 0. */
#define NOCOL 0xffu
_Static_assert(IOGP_MODEL_MAX_RATES <= 16, "a bin's coverage has 16 bits");

struct rring {
	uint64_t hi;       /* newest bin held */
	uint32_t L;
	uint8_t ncol;
	uint8_t col[IOGP_MODEL_MAX_RATES];   /* rate metric -> column, NOCOL */
	double v[];
};

static size_t rring_size(uint32_t L, uint32_t ncol)
{
	return sizeof(struct rring) + (size_t)L * (ncol * sizeof(double) + sizeof(uint16_t));
}

static uint16_t *rring_cov(const struct rring *r)
{
	return (uint16_t *)(uintptr_t)(r->v + (size_t)r->ncol * r->L);
}

static void rring_advance(struct rring *r, uint64_t to)
{
	uint32_t L = r->L, nc = r->ncol;
	uint16_t *cov = rring_cov(r);

	if (to <= r->hi)
		return;
	if (to - r->hi >= L) {
		memset(r->v, 0, (size_t)nc * L * sizeof(double));
		memset(cov, 0, L * sizeof *cov);
	} else {
		for (uint64_t b = r->hi + 1; b <= to; b++) {
			uint32_t p = (uint32_t)(b % L);

			memset(&r->v[(size_t)p * nc], 0, nc * sizeof(double));
			cov[p] = 0;
		}
	}
	r->hi = to;
}

/* *rp laid out again with L2 bins (the newest L2 it holds, when fewer)
 * and a column for every metric of want that has none. */
static int rring_relayout(iogp_model *m, struct rring **rp, uint32_t L2, uint32_t want)
{
	struct rring *r = *rp, *n;
	uint32_t L = r->L, nc = r->ncol, add = 0;

	for (uint32_t k = want; k != 0; k &= k - 1)
		add += r->col[__builtin_ctz(k)] == NOCOL;
	if (add == 0 && L2 == L)
		return 0;
	if ((n = malloc(rring_size(L2, nc + add))) == NULL)
		return IOGP_ENOMEM;
	*n = *r;
	n->L = L2;
	n->ncol = (uint8_t)(nc + add);
	for (uint32_t k = want; k != 0; k &= k - 1)
		if (n->col[__builtin_ctz(k)] == NOCOL)
			n->col[__builtin_ctz(k)] = (uint8_t)nc++;
	memset(n->v, 0, (size_t)L2 * n->ncol * sizeof(double));
	memset(rring_cov(n), 0, L2 * sizeof(uint16_t));
	/* the newest bins both hold, each to its place in the new ring */
	uint32_t keep = L2 < L ? L2 : L;
	for (uint64_t b = r->hi + 1 - (keep <= r->hi ? keep : r->hi + 1); b <= r->hi; b++) {
		uint32_t p = (uint32_t)(b % L), q = (uint32_t)(b % L2);

		memcpy(&n->v[(size_t)q * n->ncol], &r->v[(size_t)p * r->ncol], r->ncol * sizeof(double));
		rring_cov(n)[q] = rring_cov(r)[p];
	}
	m->lst.live_bytes += rring_size(L2, n->ncol);
	m->lst.live_bytes -= rring_size(L, r->ncol);
	free(r);
	*rp = n;
	return 0;
}

/* Bins a source's ring of ncol columns keeps: source_ring_bins, fewer
 * when rate_total shared out among the sources holds less (at least
 * MODEL_RATE_MIN_BINS): each source's recent rates, bounded in all. */
#define MODEL_RATE_MIN_BINS 64u
static uint32_t src_ring_bins(const iogp_model *m, uint32_t ncol)
{
	uint32_t L = m->opts.source_ring_bins;

	if (m->opts.rate_total && m->nsrc > 0) {
		uint64_t each = m->opts.rate_total / m->nsrc;
		uint64_t fit = each > sizeof(struct rring) ?
		               (each - sizeof(struct rring)) / (ncol * sizeof(double) + sizeof(uint16_t)) : 0;

		if (fit < L)
			L = fit > MODEL_RATE_MIN_BINS ? (uint32_t)fit : MODEL_RATE_MIN_BINS;
		if (L > m->opts.source_ring_bins)
			L = m->opts.source_ring_bins;
	}
	return L;
}

/* A DELTA's wall interval [a, b] and the bins it meets. */
struct span {
	uint64_t a, b, first, last;
	double len;
};

/* Spread amt (per rate metric in mask) over sp by overlap; the last bin
 * takes the remainder so the parts add up to amt. True when part of the
 * interval was older than the ring (that part is dropped). */
static bool rring_add(iogp_model *m, struct rring **rp, const struct span *sp,
                      const double *amt, uint32_t mask, bool src)
{
	uint32_t want = 0;

	for (uint32_t k = mask; k != 0; k &= k - 1)
		if (amt[__builtin_ctz(k)] != 0)
			want |= 1u << __builtin_ctz(k);
	struct rring *r0 = *rp;
	uint32_t add = 0, L2 = r0->L;

	for (uint32_t k = want; k != 0; k &= k - 1)
		add += r0->col[__builtin_ctz(k)] == NOCOL;
	if (src) {   /* a source's ring shrinks as sources come, or as it widens */
		uint32_t fit = src_ring_bins(m, r0->ncol + add);
		L2 = fit < r0->L ? fit : r0->L;
	}
	if ((add > 0 || L2 != r0->L) && rring_relayout(m, rp, L2, want) < 0)
		want = 0;   /* out of memory: the bins are covered, the amounts lost */

	struct rring *r = *rp;
	uint32_t L = r->L;
	uint64_t B = m->opts.bin_ns, lo, from;
	uint16_t *cov;
	double acc[IOGP_MODEL_MAX_RATES] = { 0 };
	bool clipped;

	rring_advance(r, sp->last);
	cov = rring_cov(r);
	lo = r->hi >= L - 1 ? r->hi - (L - 1) : 0;
	if (sp->last < lo)
		return true;
	clipped = sp->first < lo;
	from = clipped ? lo : sp->first;
	for (uint64_t i = from; i <= sp->last; i++) {
		uint32_t p = (uint32_t)(i % L);
		double *v = &r->v[(size_t)p * r->ncol];
		double w = 1;

		if (sp->b > sp->a) {
			uint64_t s0 = i * B;
			uint64_t x0 = sp->a > s0 ? sp->a : s0;
			uint64_t x1 = sp->b - s0 > B ? s0 + B : sp->b;

			w = (double)(x1 - x0) / sp->len;
		}
		for (uint32_t k = want; k != 0; k &= k - 1) {
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
			v[r->col[j]] += part;
		}
		cov[p] |= (uint16_t)mask;
	}
	return clipped;
}

static struct rring *rring_get(iogp_model *m, struct rring **rp, uint64_t hi, uint32_t L)
{
	if (*rp == NULL) {
		size_t sz = rring_size(L, 0);

		*rp = calloc(1, sz);
		if (*rp == NULL)
			return NULL;
		(*rp)->hi = hi;
		(*rp)->L = L;
		memset((*rp)->col, NOCOL, sizeof((*rp)->col));
		m->lst.live_bytes += sz;
	}
	return *rp;
}

void model__live_rates(iogp_model *m, struct source *s, const iogp_msg *msg, const double *amt)
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
		struct rring *r = rring_get(m, rings[i], sp.last, i == 0 ? src_ring_bins(m, 0) : m->opts.ring_bins);

		if (r == NULL) {
			m->lst.rate_skipped++;
			return;
		}
		clipped |= rring_add(m, rings[i], &sp, amt, s->rate_mask, i == 0);
	}
	if (clipped)
		m->lst.rate_clipped++;
}

/* The bins of a DELTA ending at wall_ns in the source's, its node's and
 * the whole model's rate rings. */
void model__rates_prefetch(const iogp_model *m, const struct source *s, uint64_t wall_ns)
{
	uint64_t bin = wall_ns > 0 ? (wall_ns - 1) / m->opts.bin_ns : 0;
	const struct rring *rr[3] = { s->rr, m->nodes[s->node].rr, m->all };
	for (int i = 0; i < 3; i++) {
		if (rr[i] != NULL) {
			uint32_t p = (uint32_t)(bin % rr[i]->L);

			__builtin_prefetch(rr[i]);
			__builtin_prefetch(&rr[i]->v[(size_t)p * rr[i]->ncol]);
			__builtin_prefetch(rring_cov(rr[i]) + p);
		}
	}
}

/* What slot sl of a DELTA will touch beyond itself: its bins, its window,
 * its node's sum (model_window.c, model_agg.c). */
void model__slot_prefetch(const iogp_model *m, const struct source *s, const struct slot *sl)
{
	if (sl->kind == IOGP_HISTOGRAM) {
		/* its cumulative bins whole (a DELTA's bins land all over them:
		 * ~6 lines of a realistic histogram, the most missed data of an
		 * apply at 50,000 sources), up to 8 lines */
		const char *b = (const char *)sl->bins;
		size_t nb = (size_t)sl->n * sizeof *sl->bins;

		for (size_t o = 0; b != NULL && o < nb && o < 512; o += 64)
			__builtin_prefetch(b + o);
		model__win_prefetch(m, sl);
	}
	model__agg_prefetch(m, s, sl);
}

void model__live_prefetch(const iogp_model *m, const struct source *s, const iogp_msg *msg)
{
	model__rates_prefetch(m, s, msg->wall_ns);
	for (uint32_t i = 0; i < msg->nhists && i < 32; i++) {
		uint32_t x = model__slot_by_id(s, msg->hists[i].id);

		if (x != NONE)
			model__slot_prefetch(m, s, &s->slots[x]);
	}
	if (msg->ncounters > 0) {
		uint32_t x = model__slot_by_id(s, msg->counters[0].id);

		if (x != NONE)
			model__agg_prefetch(m, s, &s->slots[x]);
	}
}

/* ---- live side: queries ----------------------------------------------------- */

uint64_t model__clock(const iogp_model *m)
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
		i = model__node_find(m, sel->node != NULL ? sel->node : "");
		if (i == NONE)
			return IOGP_ENOTFOUND;
		*r = m->nodes[i].rr;
		return 0;
	case IOGP_SEL_SOURCE:
		i = model__src_find(m, sel->source);
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
static bool rring_at(const struct rring *r, uint32_t ri, uint64_t b, double *v)
{
	uint32_t L = r->L, p;

	if (b > r->hi || r->hi - b >= L)
		return false;
	p = (uint32_t)(b % L);
	if (!(rring_cov(r)[p] & (1u << ri)))
		return false;
	*v = r->col[ri] == NOCOL ? 0 : r->v[(size_t)p * r->ncol + r->col[ri]];
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

		if (query_bin(e, n, i, &b) && rring_at(r, ri, b, &v)) {
			rate[i] = v * per_s;
			covered[i] = 1;
		}
	}
	return 0;
}

uint32_t iogp_model_rate_span(const iogp_model *m, const iogp_sel *sel)
{
	const struct rring *r;

	if (m == NULL || !m->opts.live || sel_ring(m, sel, &r) < 0)
		return 0;
	if (r == NULL)   /* no data yet: what a ring would hold */
		return sel != NULL && sel->kind == IOGP_SEL_SOURCE ? src_ring_bins(m, 0) : m->opts.ring_bins;
	return r->L;
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

			if (!query_bin(e, n, i, &b) || !rring_at(r, ri, b, &v))
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

void iogp_model_get_live(const iogp_model *m, iogp_model_live *out)
{
	if (out == NULL)
		return;
	memset(out, 0, sizeof *out);
	if (m == NULL)
		return;
	*out = m->lst;
	out->now_ns = model__clock(m);
	out->agg_bytes = model__agg_bytes(m);
	uint32_t nhist = 0;
	for (uint32_t i = 0; i < m->nsrc; i++) {
		if (m->src[i].nhist > nhist)
			nhist = m->src[i].nhist;
		switch (model__src_state(m, &m->src[i], m->now, m->ticked)) {
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
	out->source_window_bytes = m->opts.live ? model__win_src_budget(m, nhist) : 0;
	out->msgs_per_s = iogp_model_msgs_per_s(m);
}

uint64_t iogp_model_clock(const iogp_model *m)
{
	return m != NULL ? model__clock(m) : 0;
}

double iogp_model_msgs_per_s(const iogp_model *m)
{
	uint64_t sec, first, span, sum = 0;

	if (m == NULL || !m->have_recv)
		return 0;
	sec = (m->ticked && m->now > m->st.last_recv_ns ? m->now : m->st.last_recv_ns) / 1000000000ull;
	first = m->st.first_recv_ns / 1000000000ull;
	span = sec - first < MODEL_MPS_SECS ? sec - first : MODEL_MPS_SECS;
	for (uint64_t k = 1; k <= span; k++) {
		if (m->mps[(sec - k) % MODEL_MPS_RING].sec == sec - k)
			sum += m->mps[(sec - k) % MODEL_MPS_RING].n;
	}
	return span > 0 ? (double)sum / (double)span : 0;
}
