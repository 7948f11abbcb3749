/* check_hist.c - bin schemes, sparse histograms, quantiles, re-binning, CSV. */
#include <check.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iogp_err.h"
#include "iogp_hist.h"
#include "testutil.h"

static uint64_t seed0 = 0x10a7a11dULL;
static uint64_t rng_state;

/* Check's own ck_assert_* log every passing call (slow in loops under ASan);
 * these report only failures. */
#define REQ(cond, ...) do { if (!(cond)) ck_abort_msg(__VA_ARGS__); } while (0)
#define REQ_CMP(a, op, b) do { \
	uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b); \
	if (!(a_ op b_)) \
		ck_abort_msg("%s %s %s failed: %" PRIu64 " vs %" PRIu64 " (seed %" PRIu64 ")", \
			     #a, #op, #b, a_, b_, seed0); \
} while (0)
#define REQ_EQ(a, b) REQ_CMP(a, ==, b)

static void rng_seed(uint64_t s)
{
	rng_state = s;
}

static uint64_t rng(void)
{
	return tu_splitmix(&rng_state);
}

static uint64_t rng_below(uint64_t n)
{
	return n ? rng() % n : 0;
}

static double rng_unit(void)
{
	return (double)(rng() >> 11) * 0x1.0p-53;
}

enum dist { D_UNIFORM, D_LOGUNIFORM, D_HEAVY, D_SMALL, D_NDIST };
static const char *dist_name[] = { "uniform", "log-uniform", "heavy-tailed", "small" };

static uint64_t draw(enum dist d)
{
	unsigned e;
	double u, x;

	switch (d) {
	case D_UNIFORM:
		return rng_below(1000000);
	case D_LOGUNIFORM: /* 1 .. 2^40 */
		e = (unsigned)rng_below(40);
		return (1ull << e) + rng_below(1ull << e);
	case D_HEAVY: /* Pareto, alpha 1.2, scale 512 */
		u = 1.0 - rng_unit();
		x = 512.0 / pow(u, 1.0 / 1.2);
		return x >= 0x1.0p62 ? (1ull << 62) : (uint64_t)x;
	case D_SMALL:
		return rng_below(40);
	default:
		return 0;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Structural invariants every histogram must keep. */
static void check_invariants(const iogp_hist *h)
{
	uint64_t sum = 0, lo, hi;

	for (size_t i = 0; i < h->n; i++) {
		REQ(h->bins[i].count > 0, "bin %zu empty (seed %" PRIu64 ")", i, seed0);
		if (i)
			REQ(h->bins[i].idx > h->bins[i - 1].idx,
				      "bins out of order at %zu (seed %" PRIu64 ")", i, seed0);
		REQ_EQ(iogp_bins_bounds(&h->scheme, h->bins[i].idx, &lo, &hi), 0);
		sum += h->bins[i].count;
	}
	REQ_EQ(sum, h->total);
}

static int hist_same(const iogp_hist *a, const iogp_hist *b)
{
	if (!iogp_bins_equal(&a->scheme, &b->scheme) || a->n != b->n || a->total != b->total)
		return 0;
	return a->n == 0 || memcmp(a->bins, b->bins, a->n * sizeof(iogp_bin)) == 0;
}

/* ---- native layout ------------------------------------------------------- */

/* Adding bins that mostly exist reserves room for the new ones only: a
 * model's cumulative histograms once kept room for a whole DELTA on top. */
START_TEST(add_reserves_new_only)
{
	iogp_bins b;
	iogp_hist h;
	iogp_bin in[40];

	iogp_bins_native(&b, 4);
	iogp_hist_init(&h, &b);
	for (int i = 0; i < 40; i++)
		in[i] = (iogp_bin){ (uint64_t)(100 + 2 * i), 1 };
	ck_assert_int_eq(iogp_hist_add_bins(&h, in, 40), 0);
	for (int r = 0; r < 20; r++) {   /* 40 bins a time, one of them new */
		in[39] = (iogp_bin){ (uint64_t)(181 + r), 1 };
		ck_assert_int_eq(iogp_hist_add_bins(&h, in, 40), 0);
	}
	ck_assert_uint_eq(h.n, 60);
	ck_assert_msg(h.cap <= h.n + h.n / 2, "room for %zu bins, %zu held", h.cap, h.n);
	ck_assert_uint_eq(h.total, 40 + 20 * 40);
	iogp_hist_free(&h);
}
END_TEST

START_TEST(native_tiling)
{
	for (unsigned k = IOGP_NATIVE_K_MIN; k <= IOGP_NATIVE_K_MAX; k++) {
		uint32_t nb = iogp_native_nbuckets(k);
		uint64_t lo, hi, prev_hi = 0;

		for (uint32_t idx = 0; idx < nb; idx++) {
			REQ_EQ(iogp_native_bounds(idx, k, &lo, &hi), 0);
			REQ(lo <= hi, "k=%u idx=%u lo>hi", k, idx);
			if (idx == 0)
				REQ_EQ(lo, 0);
			else
				REQ(lo == prev_hi + 1, "k=%u idx=%u gap/overlap: lo %" PRIu64
					      " prev hi %" PRIu64, k, idx, lo, prev_hi);
			REQ_EQ(iogp_native_index(lo, k), idx);
			REQ_EQ(iogp_native_index(hi, k), idx);
			REQ_EQ(iogp_native_index(lo + (hi - lo) / 2, k), idx);
			/* relative width 2^-k above the exact range */
			if (lo >= (2ull << k))
				REQ((hi - lo + 1) * (1ull << k) <= lo,
					      "k=%u idx=%u too wide", k, idx);
			prev_hi = hi;
		}
		REQ_EQ(prev_hi, UINT64_MAX);
		REQ_EQ(iogp_native_index(UINT64_MAX, k), nb - 1);
		REQ_EQ(iogp_native_bounds(nb, k, &lo, &hi), IOGP_EINVAL);
		REQ_EQ(nb, (65u - k) << k);
		for (uint64_t v = 0; v < (2ull << k); v++) {
			REQ_EQ(iogp_native_index(v, k), v);
			REQ_EQ(iogp_native_bounds((uint32_t)v, k, &lo, &hi), 0);
			REQ_EQ(lo, v);
			REQ_EQ(hi, v);
		}
	}
	uint64_t lo, hi;
	REQ_EQ(iogp_native_bounds(0, 0, &lo, &hi), IOGP_EINVAL);
	REQ_EQ(iogp_native_bounds(0, 9, &lo, &hi), IOGP_EINVAL);
	REQ_EQ(iogp_native_nbuckets(4), 976);
}
END_TEST

START_TEST(native_edges_k4)
{
	const uint64_t v[] = { 4096, 65536, 1048576, 16, 32, 1ull << 40 };
	uint64_t lo, hi;

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		uint32_t idx = iogp_native_index(v[i], 4);
		REQ_EQ(iogp_native_bounds(idx, 4, &lo, &hi), 0);
		REQ_EQ(lo, v[i]);
		REQ_EQ(iogp_native_index(v[i] - 1, 4), idx - 1);
	}
	/* k=4, 4096: width 256 */
	REQ_EQ(iogp_native_bounds(iogp_native_index(4096, 4), 4, &lo, &hi), 0);
	REQ_EQ(hi, 4096 + 255);
}
END_TEST

/* ---- quantiles vs an exact sort ------------------------------------------ */

static void quantile_case(unsigned k, enum dist d, size_t n)
{
	static const double qs[] = { 0.0, 0.001, 0.25, 0.5, 0.9, 0.99, 0.999, 1.0 };
	uint64_t *vals = malloc(n * sizeof(*vals));
	double exact_mean = 0.0;
	iogp_bins b;
	iogp_hist h;
	uint64_t got, lo, hi;

	ck_assert_ptr_nonnull(vals);
	iogp_bins_native(&b, k);
	iogp_hist_init(&h, &b);
	for (size_t i = 0; i < n; i++) {
		vals[i] = draw(d);
		exact_mean += (double)vals[i];
		REQ_EQ(iogp_hist_record(&h, vals[i], 1), 0);
	}
	exact_mean /= (double)n;
	check_invariants(&h);
	REQ_EQ(h.total, n);
	qsort(vals, n, sizeof(*vals), cmp_u64);
	for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		double r = ceil(qs[i] * (double)n);
		size_t rank = r < 1.0 ? 1 : (size_t)r;
		uint64_t want = vals[rank - 1];

		REQ_EQ(iogp_hist_quantile(&h, qs[i], &got), 0);
		if (want < (2ull << k))
			REQ(got == want, "k=%u %s q=%g: got %" PRIu64 " want %" PRIu64
				      " exactly (seed %" PRIu64 ")", k, dist_name[d], qs[i], got,
				      want, seed0);
		double err = fabs((double)got - (double)want);
		REQ(err <= ldexp((double)want, -(int)(k + 1)),
			      "k=%u %s q=%g: got %" PRIu64 " want %" PRIu64 " (seed %" PRIu64 ")",
			      k, dist_name[d], qs[i], got, want, seed0);
	}
	REQ_EQ(iogp_hist_min(&h, &lo), 0);
	REQ_EQ(iogp_hist_max(&h, &hi), 0);
	REQ_CMP(lo, <=, vals[0]);
	REQ_CMP(hi, >=, vals[n - 1]);
	REQ_EQ(iogp_native_index(lo, k), iogp_native_index(vals[0], k));
	REQ_EQ(iogp_native_index(hi, k), iogp_native_index(vals[n - 1], k));
	double mean = iogp_hist_mean(&h);
	REQ(fabs(mean - exact_mean) <= ldexp(exact_mean, -(int)(k + 1)) + 1e-9 * exact_mean,
		      "k=%u %s mean %g vs %g (seed %" PRIu64 ")", k, dist_name[d], mean,
		      exact_mean, seed0);
	iogp_hist_free(&h);
	free(vals);
}

START_TEST(quantile_error)
{
	rng_seed(seed0 + (uint64_t)_i);
	for (unsigned k = IOGP_NATIVE_K_MIN; k <= IOGP_NATIVE_K_MAX; k++)
		quantile_case(k, (enum dist)_i, k == 4 ? 100000 : 20000);
}
END_TEST

START_TEST(quantile_edge)
{
	iogp_hist h;
	uint64_t v;

	iogp_hist_init(&h, NULL);
	REQ_EQ(iogp_hist_quantile(&h, 0.5, &v), IOGP_ENOTFOUND);
	REQ_EQ(iogp_hist_min(&h, &v), IOGP_ENOTFOUND);
	REQ_EQ(iogp_hist_max(&h, &v), IOGP_ENOTFOUND);
	ck_assert(iogp_hist_mean(&h) == 0.0);
	REQ_EQ(iogp_hist_record(&h, 7, 3), 0);
	REQ_EQ(iogp_hist_quantile(&h, -0.1, &v), IOGP_EINVAL);
	REQ_EQ(iogp_hist_quantile(&h, 1.5, &v), IOGP_EINVAL);
	REQ_EQ(iogp_hist_quantile(&h, NAN, &v), IOGP_EINVAL);
	REQ_EQ(iogp_hist_quantile(&h, 0.0, &v), 0);
	REQ_EQ(v, 7);
	/* 4 x 100, 1 x UINT64_MAX: p80 is 100's bucket, p81 and max the top one */
	iogp_hist_clear(&h);
	REQ_EQ(h.total, 0);
	REQ_EQ(iogp_hist_record(&h, 100, 4), 0);
	REQ_EQ(iogp_hist_record(&h, UINT64_MAX, 1), 0);
	REQ_EQ(iogp_hist_quantile(&h, 0.8, &v), 0);
	REQ_EQ(v, 101); /* bucket [100,103] */
	REQ_EQ(iogp_hist_quantile(&h, 0.81, &v), 0);
	REQ_EQ(v, UINT64_MAX - (1ull << 58));
	REQ_EQ(iogp_hist_max(&h, &v), 0);
	REQ_EQ(v, UINT64_MAX);
	REQ_EQ(iogp_hist_min(&h, &v), 0);
	REQ_EQ(v, 100);
	iogp_hist_free(&h);
}
END_TEST

/* ---- merge, add_bins, diff, copy -------------------------------------------- */

START_TEST(merge_order_free)
{
	enum { N = 30000, P = 5, ORDERS = 6 };
	iogp_bins b;
	iogp_hist all, part[P], m;
	unsigned order[P];

	rng_seed(seed0 + 100);
	iogp_bins_native(&b, 4);
	iogp_hist_init(&all, &b);
	for (int p = 0; p < P; p++)
		iogp_hist_init(&part[p], &b);
	for (int i = 0; i < N; i++) {
		uint64_t v = draw((enum dist)(i % D_NDIST));
		uint64_t c = 1 + rng_below(3);
		REQ_EQ(iogp_hist_record(&all, v, c), 0);
		REQ_EQ(iogp_hist_record(&part[rng_below(P)], v, c), 0);
	}
	check_invariants(&all);
	for (int o = 0; o < ORDERS; o++) {
		for (unsigned p = 0; p < P; p++)
			order[p] = o == 1 ? P - 1 - p : p;
		if (o > 1)
			for (unsigned p = P - 1; p > 0; p--) {
				unsigned q = (unsigned)rng_below(p + 1), t = order[p];
				order[p] = order[q];
				order[q] = t;
			}
		iogp_hist_init(&m, &b);
		for (unsigned p = 0; p < P; p++)
			REQ_EQ(iogp_hist_merge(&m, &part[order[p]]), 0);
		check_invariants(&m);
		REQ(hist_same(&m, &all), "merge order %d differs (seed %" PRIu64 ")", o, seed0);
		iogp_hist_free(&m);
	}
	/* self merge doubles */
	REQ_EQ(iogp_hist_copy(&m, &all), 0);
	REQ_EQ(iogp_hist_merge(&m, &m), 0);
	REQ_EQ(m.total, 2 * all.total);
	for (size_t i = 0; i < all.n; i++)
		REQ_EQ(iogp_hist_count_at(&m, all.bins[i].idx), 2 * all.bins[i].count);
	iogp_hist_free(&m);
	iogp_bins_native(&b, 5);
	iogp_hist_init(&m, &b);
	REQ_EQ(iogp_hist_merge(&m, &all), IOGP_ESCHEME);
	iogp_hist_free(&m);
	for (int p = 0; p < P; p++)
		iogp_hist_free(&part[p]);
	iogp_hist_free(&all);
}
END_TEST

/* Sparse deltas (with zero counts) into a cumulative histogram vs a dense
 * reference array. */
START_TEST(add_bins_random)
{
	enum { NB = 976, ROUNDS = 3000 };
	static uint64_t ref[NB];
	iogp_bin delta[64];
	iogp_hist h;
	uint64_t total = 0;

	rng_seed(seed0 + 200);
	memset(ref, 0, sizeof(ref));
	iogp_hist_init(&h, NULL);
	for (int r = 0; r < ROUNDS; r++) {
		size_t n = 0;
		uint64_t idx = rng_below(40);

		while (n < 64 && idx < NB) {
			delta[n].idx = idx;
			delta[n].count = rng_below(4) == 0 ? 0 : 1 + rng_below(100);
			ref[idx] += delta[n].count;
			total += delta[n].count;
			n++;
			idx += 1 + rng_below(r < 100 ? 200 : 30);
		}
		REQ_EQ(iogp_hist_add_bins(&h, delta, n), 0);
		if (r % 97 == 0) {
			check_invariants(&h);
			REQ_EQ(h.total, total);
		}
	}
	check_invariants(&h);
	for (uint64_t i = 0; i < NB; i++)
		REQ(iogp_hist_count_at(&h, i) == ref[i], "bin %" PRIu64 " (seed %" PRIu64 ")",
			      i, seed0);

	/* bad input leaves the histogram unchanged */
	iogp_hist before;
	iogp_hist_init(&before, NULL);
	REQ_EQ(iogp_hist_copy(&before, &h), 0);
	iogp_bin bad1[] = { { 5, 1 }, { 3, 1 } };
	iogp_bin bad2[] = { { 5, 1 }, { 5, 1 } };
	iogp_bin bad3[] = { { 5, 1 }, { NB, 1 } };
	iogp_bin zero[] = { { 5, 0 }, { 3, 0 }, { NB + 5, 0 } };
	iogp_bin dupzero[] = { { 5, 1 }, { 5, 0 }, { 6, 1 } };
	REQ_EQ(iogp_hist_add_bins(&h, bad1, 2), IOGP_EINVAL);
	REQ_EQ(iogp_hist_add_bins(&h, bad2, 2), IOGP_EINVAL);
	REQ_EQ(iogp_hist_add_bins(&h, bad3, 2), IOGP_EINVAL);
	REQ_EQ(iogp_hist_add_bin(&h, NB, 1), IOGP_EINVAL);
	ck_assert(hist_same(&h, &before));
	REQ_EQ(iogp_hist_add_bins(&h, zero, 3), 0);
	REQ_EQ(iogp_hist_add_bins(&h, NULL, 0), 0);
	ck_assert(hist_same(&h, &before));
	REQ_EQ(iogp_hist_add_bins(&h, dupzero, 3), 0);
	REQ_EQ(iogp_hist_count_at(&h, 5), ref[5] + 1);
	REQ_EQ(iogp_hist_count_at(&h, 6), ref[6] + 1);
	iogp_hist_free(&before);

	/* into an empty histogram, and with every bin new in front and behind */
	iogp_hist_clear(&h);
	iogp_bin mid[] = { { 100, 2 }, { 200, 3 } };
	iogp_bin around[] = { { 1, 1 }, { 150, 1 }, { 300, 1 } };
	REQ_EQ(iogp_hist_add_bins(&h, mid, 2), 0);
	REQ_EQ(iogp_hist_add_bins(&h, around, 3), 0);
	REQ_EQ(iogp_hist_add_bins(&h, mid, 2), 0);
	REQ_EQ(h.n, 5);
	REQ_EQ(h.total, 13);
	REQ_EQ(h.bins[0].idx, 1);
	REQ_EQ(h.bins[1].count, 4);
	REQ_EQ(h.bins[2].idx, 150);
	REQ_EQ(h.bins[3].count, 6);
	REQ_EQ(h.bins[4].idx, 300);
	iogp_hist_free(&h);
}
END_TEST

/* The sum of a native histogram (bounds worked out in line) is each bin's
 * midpoint times its count from iogp_bins_bounds, added in order: every
 * k, bins over the whole index range (the linear ones below 2 << k, the
 * last), a log2 scheme the general way. */
START_TEST(sum_native_all_k)
{
	rng_seed(seed0 + 300);
	for (unsigned k = IOGP_NATIVE_K_MIN; k <= IOGP_NATIVE_K_MAX + 1; k++) {
		iogp_bins b;
		if (k <= IOGP_NATIVE_K_MAX)
			iogp_bins_native(&b, k);
		else
			iogp_bins_log2(&b);
		uint64_t nb = k <= IOGP_NATIVE_K_MAX ? iogp_native_nbuckets(k) : 65;
		for (int round = 0; round < 20; round++) {
			iogp_hist h;
			iogp_hist_init(&h, &b);
			iogp_bin in[200];
			size_t n = 0;
			for (uint64_t idx = rng_below(3); idx < nb && n < 200; idx += 1 + rng_below(nb / 50 + 1))
				in[n++] = (iogp_bin){ idx, 1 + rng_below(1000) };
			if (round == 0 && n < 200 && (n == 0 || in[n - 1].idx < nb - 1))
				in[n++] = (iogp_bin){ nb - 1, 7 };   /* the last bin */
			REQ_EQ(iogp_hist_add_bins(&h, in, n), 0);
			double want = 0;
			for (size_t i = 0; i < h.n; i++) {
				uint64_t lo, hi;
				REQ_EQ(iogp_bins_bounds(&b, h.bins[i].idx, &lo, &hi), 0);
				want += ((double)lo + (double)(hi - lo) / 2.0) * (double)h.bins[i].count;
			}
			ck_assert_msg(iogp_hist_sum(&h) == want, "k %u round %d: %.17g vs %.17g", k, round,
			              iogp_hist_sum(&h), want);
			/* bin by bin too: half a count of a wide bin is lost in a sum of large ones */
			for (size_t i = 0; i < h.n && round < 3; i++) {
				iogp_hist one;
				uint64_t lo, hi;
				iogp_hist_init(&one, &b);
				REQ_EQ(iogp_hist_add_bin(&one, h.bins[i].idx, 1), 0);
				REQ_EQ(iogp_bins_bounds(&b, h.bins[i].idx, &lo, &hi), 0);
				ck_assert_msg(iogp_hist_sum(&one) == (double)lo + (double)(hi - lo) / 2.0,
				              "k %u bin %" PRIu64 ": %.17g", k, h.bins[i].idx, iogp_hist_sum(&one));
				iogp_hist_free(&one);
			}
			ck_assert(n == 0 || want > 0);
			iogp_hist_free(&h);
		}
	}
}
END_TEST

/* Few bins into many (the galloping path), new bins among old ones. */
START_TEST(add_bins_sparse)
{
	enum { RANGE = 20000, ROUNDS = 3000 };
	static uint64_t ref[RANGE];
	iogp_bin delta[8];
	iogp_bins b;
	iogp_hist h;

	rng_seed(seed0 + 250);
	memset(ref, 0, sizeof(ref));
	iogp_bins_fixed(&b, 1, 0);
	iogp_hist_init(&h, &b);
	for (uint64_t i = 0; i < RANGE; i += 4) {
		REQ_EQ(iogp_hist_add_bin(&h, i, i + 1), 0);
		ref[i] = i + 1;
	}
	for (int r = 0; r < ROUNDS; r++) {
		size_t n = 1 + rng_below(8);
		uint64_t idx = rng_below(RANGE / 2);

		for (size_t j = 0; j < n; j++) {
			delta[j].idx = idx;
			delta[j].count = 1 + rng_below(9);
			ref[idx] += delta[j].count;
			idx += 1 + rng_below(r & 1 ? 3 : 900);
			if (idx >= RANGE) {
				n = j + 1;
				break;
			}
		}
		REQ_EQ(iogp_hist_add_bins(&h, delta, n), 0);
	}
	check_invariants(&h);
	for (uint64_t i = 0; i < RANGE; i++)
		REQ(iogp_hist_count_at(&h, i) == ref[i], "bin %" PRIu64 " (seed %" PRIu64 ")",
			      i, seed0);
	iogp_hist_free(&h);
}
END_TEST

START_TEST(diff_and_copy)
{
	iogp_bins b;
	iogp_hist a, bb, sum, d;

	rng_seed(seed0 + 300);
	iogp_bins_native(&b, 3);
	iogp_hist_init(&a, &b);
	iogp_hist_init(&bb, &b);
	iogp_hist_init(&sum, NULL); /* copy replaces the scheme */
	iogp_hist_init(&d, NULL);
	for (int i = 0; i < 5000; i++)
		REQ_EQ(iogp_hist_record(i % 3 ? &a : &bb, draw((enum dist)(i % D_NDIST)),
						  1 + rng_below(5)), 0);
	REQ_EQ(iogp_hist_copy(&sum, &a), 0);
	ck_assert(hist_same(&sum, &a));
	REQ_EQ(iogp_hist_merge(&sum, &bb), 0);
	REQ_EQ(iogp_hist_diff(&d, &sum, &bb), 0);
	check_invariants(&d);
	REQ(hist_same(&d, &a), "diff(a+b, b) != a (seed %" PRIu64 ")", seed0);
	iogp_hist_free(&d);
	REQ_EQ(iogp_hist_diff(&d, &sum, &sum), 0);
	REQ_EQ(d.n, 0);
	REQ_EQ(d.total, 0);
	/* out aliasing an input */
	REQ_EQ(iogp_hist_diff(&sum, &sum, &a), 0);
	ck_assert(hist_same(&sum, &bb));
	/* a < b in a bin: that bin is left out */
	iogp_hist_clear(&a);
	iogp_hist_clear(&bb);
	iogp_hist_record(&a, 5, 3);
	iogp_hist_record(&a, 9, 1);
	iogp_hist_record(&bb, 5, 4);
	iogp_hist_record(&bb, 7, 4);
	iogp_hist_free(&d);
	REQ_EQ(iogp_hist_diff(&d, &a, &bb), 0);
	REQ_EQ(d.n, 1);
	REQ_EQ(iogp_hist_count_at(&d, 9), 1);
	REQ_EQ(d.total, 1);
	iogp_bins_log2(&b);
	iogp_hist_free(&d);
	iogp_hist_init(&d, &b);
	iogp_hist_free(&sum);
	REQ_EQ(iogp_hist_diff(&sum, &a, &d), IOGP_ESCHEME);
	REQ_EQ(sum.n, 0);
	REQ_EQ(iogp_hist_copy(&d, &d), 0);
	/* outputs are initialised by the call: garbage in them is fine, and a
	 * failed call leaves them empty and safe to free */
	iogp_hist g;
	memset(&g, 0xa5, sizeof(g));
	REQ_EQ(iogp_hist_copy(&g, &a), 0);
	ck_assert(hist_same(&g, &a));
	iogp_hist_free(&g);
	memset(&g, 0xa5, sizeof(g));
	REQ_EQ(iogp_hist_diff(&g, &a, &d), IOGP_ESCHEME);
	REQ_EQ(g.n, 0);
	iogp_hist_free(&g);
	memset(&g, 0xa5, sizeof(g));
	REQ_EQ(iogp_hist_rebin(&g, &a, &b), 0);
	REQ_EQ(g.total, a.total);
	iogp_hist_free(&g);
	memset(&g, 0xa5, sizeof(g));
	REQ_EQ(iogp_hist_reduce_k(&g, &a), 0);
	REQ_EQ(g.scheme.k, 2);
	iogp_hist_free(&g);
	memset(&g, 0xa5, sizeof(g));
	REQ_EQ(iogp_hist_rebin_equal(&g, &d, 3), IOGP_ENOTFOUND);
	REQ_EQ(g.n, 0);
	iogp_hist_free(&g);
	iogp_hist_free(&a);
	iogp_hist_free(&bb);
	iogp_hist_free(&sum);
	iogp_hist_free(&d);
}
END_TEST

START_TEST(reduce_k_exact)
{
	iogp_bins b;
	iogp_hist hk, hk1, r;

	rng_seed(seed0 + 400);
	for (unsigned k = IOGP_NATIVE_K_MIN + 1; k <= IOGP_NATIVE_K_MAX; k++) {
		iogp_bins_native(&b, k);
		iogp_hist_init(&hk, &b);
		iogp_bins_native(&b, k - 1);
		iogp_hist_init(&hk1, &b);
		iogp_hist_init(&r, NULL);
		for (int i = 0; i < 8000; i++) {
			uint64_t v = i < 4 ? (i & 1 ? UINT64_MAX - (uint64_t)i : (uint64_t)i)
					   : draw((enum dist)(i % D_NDIST));
			iogp_hist_record(&hk, v, 1);
			iogp_hist_record(&hk1, v, 1);
		}
		REQ_EQ(iogp_hist_reduce_k(&r, &hk), 0);
		check_invariants(&r);
		REQ(hist_same(&r, &hk1), "reduce k=%u (seed %" PRIu64 ")", k, seed0);
		REQ_EQ(iogp_hist_reduce_k(&hk, &hk), 0); /* in place */
		ck_assert(hist_same(&hk, &hk1));
		iogp_hist_free(&hk);
		iogp_hist_free(&hk1);
		iogp_hist_free(&r);
	}
	iogp_bins_native(&b, 1);
	iogp_hist_init(&hk, &b);
	iogp_hist_init(&r, NULL);
	REQ_EQ(iogp_hist_reduce_k(&r, &hk), IOGP_EINVAL);
	iogp_bins_log2(&b);
	iogp_hist_free(&hk);
	iogp_hist_init(&hk, &b);
	REQ_EQ(iogp_hist_reduce_k(&r, &hk), IOGP_ESCHEME);
	iogp_hist_free(&hk);
	iogp_hist_free(&r);
}
END_TEST

/* ---- the other schemes ------------------------------------------------------- */

/* Bins [first, last] tile their range, and index/bounds agree. */
static void check_tiling(const iogp_bins *b, uint64_t first, uint64_t last)
{
	uint64_t lo, hi, prev_hi = 0;

	for (uint64_t i = first;; i++) {
		REQ_EQ(iogp_bins_bounds(b, i, &lo, &hi), 0);
		REQ_CMP(lo, <=, hi);
		if (i > first)
			REQ_EQ(lo, prev_hi + 1);
		REQ_EQ(iogp_bins_index(b, lo), i);
		REQ_EQ(iogp_bins_index(b, hi), i);
		prev_hi = hi;
		if (i == last)
			break;
	}
}

START_TEST(log2_bins)
{
	iogp_bins b;
	uint64_t lo, hi;

	iogp_bins_log2(&b);
	REQ_EQ(iogp_bins_valid(&b), 0);
	REQ_EQ(iogp_bins_index(&b, 0), 0);
	REQ_EQ(iogp_bins_index(&b, 1), 1);
	REQ_EQ(iogp_bins_index(&b, 9), 4);
	REQ_EQ(iogp_bins_bounds(&b, 4, &lo, &hi), 0);
	REQ_EQ(lo, 8);
	REQ_EQ(hi, 15);
	REQ_EQ(iogp_bins_index(&b, UINT64_MAX), 64);
	REQ_EQ(iogp_bins_bounds(&b, 64, &lo, &hi), 0);
	REQ_EQ(lo, 1ull << 63);
	REQ_EQ(hi, UINT64_MAX);
	REQ_EQ(iogp_bins_bounds(&b, 65, &lo, &hi), IOGP_EINVAL);
	REQ_EQ(iogp_bins_count(&b), 65);
	check_tiling(&b, 0, 64);
	REQ_EQ(iogp_bins_bounds(&b, 0, &lo, &hi), 0);
	REQ_EQ(lo, 0);
}
END_TEST

static void fixed_case(uint64_t w, uint64_t o)
{
	iogp_bins b;
	uint64_t lo, hi, beta = o / w + (o % w != 0);
	uint64_t top, start, end;

	REQ_EQ(iogp_bins_fixed(&b, w, o), 0);
	REQ_EQ(iogp_bins_valid(&b), 0);
	top = iogp_bins_index(&b, UINT64_MAX);
	REQ_EQ(iogp_bins_index(&b, o), beta);
	REQ_EQ(iogp_bins_bounds(&b, beta, &lo, &hi), 0);
	REQ_EQ(lo, o);
	REQ_EQ(iogp_bins_index(&b, 0), 0);
	REQ_EQ(iogp_bins_bounds(&b, 0, &lo, &hi), 0);
	REQ_EQ(lo, 0);
	if (top != UINT64_MAX) {
		REQ_EQ(iogp_bins_bounds(&b, top + 1, &lo, &hi), IOGP_EINVAL);
		REQ_EQ(iogp_bins_count(&b), top + 1);
	} else {
		REQ_EQ(iogp_bins_count(&b), UINT64_MAX);
	}
	REQ_EQ(iogp_bins_bounds(&b, top, &lo, &hi), 0);
	REQ_EQ(hi, UINT64_MAX);
	/* every value near the low end, the offset and the top lands in a bin
	 * that holds it; full-width bins except the clamped lowest and highest */
	const uint64_t centres[] = { 0, o, UINT64_MAX };
	for (size_t c = 0; c < 3; c++) {
		start = centres[c] > 3000 ? centres[c] - 3000 : 0;
		end = centres[c] < UINT64_MAX - 3000 ? centres[c] + 3000 : UINT64_MAX;
		uint64_t prev = iogp_bins_index(&b, start);
		for (uint64_t v = start;; v++) {
			uint64_t key = iogp_bins_index(&b, v);
			REQ(key == prev || key == prev + 1, "w=%" PRIu64 " o=%" PRIu64
				      " v=%" PRIu64 " key jump", w, o, v);
			REQ_EQ(iogp_bins_bounds(&b, key, &lo, &hi), 0);
			REQ(lo <= v && v <= hi, "w=%" PRIu64 " o=%" PRIu64 " v=%" PRIu64
				      " not in [%" PRIu64 ",%" PRIu64 "]", w, o, v, lo, hi);
			if (lo != 0 && hi != UINT64_MAX)
				REQ_EQ(hi - lo + 1, w);
			if (key < beta)
				REQ_CMP(hi, <, o);
			else
				REQ_CMP(lo, >=, o);
			prev = key;
			if (v == end)
				break;
		}
	}
	/* contiguous keys: a few around 0, beta and the top */
	check_tiling(&b, 0, top < 5 ? top : 5);
	check_tiling(&b, beta > 3 ? beta - 3 : 0, top - beta > 3 ? beta + 3 : top);
	check_tiling(&b, top > 5 ? top - 5 : 0, top);
}

START_TEST(fixed_bins)
{
	static const uint64_t cases[][2] = {
		{ 10000, 0 }, { 100, 170 }, { 100, 200 }, { 1, 0 }, { 1, 1000 }, { 7, 1000 },
		{ 10, 3 }, { 3, 10 }, { 4096, 5000 }, { 1000, 999 }, { 1000, 1001 },
		{ UINT64_MAX, 0 }, { UINT64_MAX, 5 }, { 1ull << 63, 5 }, { (1ull << 63) + 1, 0 },
		{ 1, UINT64_MAX }, { 10, UINT64_MAX }, { 1000, UINT64_MAX - 1 },
		{ 3, 1ull << 62 }, { 999, 7ull << 60 },
	};
	iogp_bins b;
	uint64_t lo, hi;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		fixed_case(cases[i][0], cases[i][1]);
	/* the seed's figure 5: width 100, offset 170 -> beta 2 */
	REQ_EQ(iogp_bins_fixed(&b, 100, 170), 0);
	REQ_EQ(iogp_bins_index(&b, 169), 1);
	REQ_EQ(iogp_bins_index(&b, 70), 1);
	REQ_EQ(iogp_bins_index(&b, 69), 0);
	REQ_EQ(iogp_bins_index(&b, 170), 2);
	REQ_EQ(iogp_bins_index(&b, 269), 2);
	REQ_EQ(iogp_bins_index(&b, 270), 3);
	REQ_EQ(iogp_bins_bounds(&b, 0, &lo, &hi), 0);
	REQ_EQ(lo, 0);
	REQ_EQ(hi, 69);
	REQ_EQ(iogp_bins_bounds(&b, 1, &lo, &hi), 0);
	REQ_EQ(lo, 70);
	REQ_EQ(hi, 169);
	/* W=10000: 370000 -> key 37 */
	REQ_EQ(iogp_bins_fixed(&b, 10000, 0), 0);
	REQ_EQ(iogp_bins_index(&b, 370000), 37);
	REQ_EQ(iogp_bins_bounds(&b, 37, &lo, &hi), 0);
	REQ_EQ(lo, 370000);
	REQ_EQ(hi, 379999);
	/* W=1 O=0: 2^64 bins, count saturates; key == value */
	REQ_EQ(iogp_bins_fixed(&b, 1, 0), 0);
	REQ_EQ(iogp_bins_count(&b), UINT64_MAX);
	REQ_EQ(iogp_bins_index(&b, UINT64_MAX), UINT64_MAX);
	REQ_EQ(iogp_bins_bounds(&b, UINT64_MAX, &lo, &hi), 0);
	REQ_EQ(lo, UINT64_MAX);
	REQ_EQ(iogp_bins_fixed(&b, 0, 5), IOGP_EINVAL);
	b.width = 0;
	REQ_EQ(iogp_bins_valid(&b), IOGP_EINVAL);
	REQ_EQ(iogp_bins_bounds(&b, 0, &lo, &hi), IOGP_EINVAL);
}
END_TEST

static char *hist_csv(const iogp_hist *h, int *rc)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	*rc = iogp_hist_write_csv(h, f);
	REQ_EQ(fclose(f), 0);
	return buf;
}

START_TEST(csv_output)
{
	static const char seed_csv[] =
		"lower_bound,upper_bound,count\n"
		"370000,379999,1\n"
		"400000,409999,1\n"
		"450000,459999,5\n"
		"460000,469999,2\n"
		"490000,499999,7\n";
	static const char native_csv[] =
		"lower_bound,upper_bound,count\n"
		"0,0,1\n"
		"1,1,2\n"
		"5,5,1\n"
		"100,103,2\n"
		"4096,4351,3\n"
		"17870283321406128128,18446744073709551615,1\n";
	iogp_bins b;
	iogp_hist h;
	char *s;
	int rc;

	iogp_bins_fixed(&b, 10000, 0);
	iogp_hist_init(&h, &b);
	iogp_hist_record(&h, 499999, 3);
	iogp_hist_record(&h, 455555, 5);
	iogp_hist_record(&h, 370000, 1);
	iogp_hist_record(&h, 409999, 1);
	iogp_hist_record(&h, 460001, 2);
	iogp_hist_record(&h, 490000, 4);
	s = hist_csv(&h, &rc);
	REQ_EQ(rc, 0);
	ck_assert_str_eq(s, seed_csv);
	free(s);
	iogp_hist_free(&h);

	iogp_hist_init(&h, NULL);
	s = hist_csv(&h, &rc);
	REQ_EQ(rc, 0);
	ck_assert_str_eq(s, "lower_bound,upper_bound,count\n");
	free(s);
	const uint64_t v[] = { 4096, 1, 0, 103, 5, UINT64_MAX, 1, 4351, 100, 4200 };
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		REQ_EQ(iogp_hist_record(&h, v[i], 1), 0);
	s = hist_csv(&h, &rc);
	REQ_EQ(rc, 0);
	ck_assert_str_eq(s, native_csv);
	free(s);

	/* a stream that cannot be written */
	char ro[16] = "x";
	FILE *f = fmemopen(ro, sizeof(ro), "r");
	ck_assert_ptr_nonnull(f);
	REQ_EQ(iogp_hist_write_csv(&h, f), IOGP_EIO);
	fclose(f);
	iogp_hist_free(&h);
}
END_TEST

START_TEST(edges_bins)
{
	const uint64_t e3[] = { 10, 20, 30 };
	const uint64_t e0[] = { 0, 7 };
	const uint64_t one[] = { 5 };
	const uint64_t bad[] = { 5, 3 };
	iogp_bins b;
	iogp_hist h;
	uint64_t lo, hi;

	REQ_EQ(iogp_bins_edges(&b, e3, 3), 0);
	REQ_EQ(iogp_bins_count(&b), 4);
	REQ_EQ(iogp_bins_index(&b, 0), 0);
	REQ_EQ(iogp_bins_index(&b, 9), 0);
	REQ_EQ(iogp_bins_index(&b, 10), 1);
	REQ_EQ(iogp_bins_index(&b, 29), 2);
	REQ_EQ(iogp_bins_index(&b, 30), 3);
	REQ_EQ(iogp_bins_index(&b, UINT64_MAX), 3);
	REQ_EQ(iogp_bins_bounds(&b, 2, &lo, &hi), 0);
	REQ_EQ(lo, 20);
	REQ_EQ(hi, 29);
	REQ_EQ(iogp_bins_bounds(&b, 4, &lo, &hi), IOGP_EINVAL);
	check_tiling(&b, 0, 3);
	REQ_EQ(iogp_bins_bounds(&b, 3, &lo, &hi), 0);
	REQ_EQ(hi, UINT64_MAX);

	REQ_EQ(iogp_bins_edges(&b, one, 1), 0);
	check_tiling(&b, 0, 1);
	REQ_EQ(iogp_bins_index(&b, 4), 0);
	REQ_EQ(iogp_bins_index(&b, 5), 1);

	/* edge 0: bin 0 is empty and refused */
	REQ_EQ(iogp_bins_edges(&b, e0, 2), 0);
	REQ_EQ(iogp_bins_index(&b, 0), 1);
	REQ_EQ(iogp_bins_bounds(&b, 0, &lo, &hi), IOGP_EINVAL);
	check_tiling(&b, 1, 2);
	iogp_hist_init(&h, &b);
	REQ_EQ(iogp_hist_add_bin(&h, 0, 1), IOGP_EINVAL);
	REQ_EQ(iogp_hist_record(&h, 0, 1), 0);
	REQ_EQ(iogp_hist_record(&h, UINT64_MAX, 1), 0);
	REQ_EQ(iogp_hist_count_at(&h, 1), 1);
	REQ_EQ(iogp_hist_count_at(&h, 2), 1);
	iogp_hist_free(&h);

	REQ_EQ(iogp_bins_edges(&b, bad, 2), IOGP_EINVAL);
	REQ_EQ(iogp_bins_edges(&b, e3, 0), IOGP_EINVAL);
	REQ_EQ(iogp_bins_edges(&b, e3, IOGP_MAX_EDGES + 1), IOGP_EINVAL);
	REQ_EQ(iogp_bins_edges(&b, e3, 3), 0);
	b.edges[2] = 15;
	REQ_EQ(iogp_bins_valid(&b), IOGP_EINVAL);
	b.kind = (iogp_bins_kind)99;
	REQ_EQ(iogp_bins_valid(&b), IOGP_EINVAL);
	REQ_EQ(iogp_bins_count(&b), 0);
	iogp_hist_init(&h, &b);
	REQ_EQ(iogp_hist_record(&h, 1, 1), IOGP_EINVAL);
	iogp_hist_free(&h);
	iogp_bins_native(&b, 0);
	REQ_EQ(iogp_bins_valid(&b), IOGP_EINVAL);
	iogp_hist_init(&h, &b);
	REQ_EQ(iogp_hist_record(&h, 1, 1), IOGP_EINVAL);
	iogp_hist_free(&h);
}
END_TEST

/* 0 and UINT64_MAX in every scheme. */
START_TEST(extremes)
{
	const uint64_t e[] = { 1, 1000, UINT64_MAX };
	iogp_bins s[6];
	iogp_hist h;
	uint64_t lo, hi, v;

	iogp_bins_native(&s[0], 1);
	iogp_bins_native(&s[1], 8);
	iogp_bins_log2(&s[2]);
	iogp_bins_fixed(&s[3], 3, 1000);
	iogp_bins_fixed(&s[4], UINT64_MAX, UINT64_MAX);
	iogp_bins_edges(&s[5], e, 3);
	for (int i = 0; i < 6; i++) {
		iogp_hist_init(&h, &s[i]);
		REQ_EQ(iogp_hist_record(&h, 0, 1), 0);
		REQ_EQ(iogp_hist_record(&h, UINT64_MAX, 2), 0);
		REQ_EQ(iogp_hist_record(&h, UINT64_MAX, 0), 0);
		check_invariants(&h);
		REQ_EQ(h.total, 3);
		REQ_EQ(iogp_hist_min(&h, &lo), 0);
		REQ_EQ(lo, 0);
		REQ_EQ(iogp_hist_max(&h, &hi), 0);
		REQ_EQ(hi, UINT64_MAX);
		REQ_EQ(iogp_hist_quantile(&h, 1.0, &v), 0);
		REQ_EQ(iogp_bins_bounds(&s[i], h.bins[h.n - 1].idx, &lo, &hi), 0);
		REQ_EQ(v, lo + (hi - lo) / 2);
		ck_assert(iogp_hist_mean(&h) > 0.0);
		iogp_hist_free(&h);
	}
}
END_TEST

/* ---- re-binning ------------------------------------------------------------ */

START_TEST(rebin_exact)
{
	iogp_bins nb, tb;
	iogp_hist src, direct, out;

	rng_seed(seed0 + 500);
	/* native -> log2, every k, every distribution */
	iogp_bins_log2(&tb);
	for (unsigned k = IOGP_NATIVE_K_MIN; k <= IOGP_NATIVE_K_MAX; k++) {
		iogp_bins_native(&nb, k);
		iogp_hist_init(&src, &nb);
		iogp_hist_init(&direct, &tb);
		iogp_hist_init(&out, NULL);
		for (int i = 0; i < 6000; i++) {
			uint64_t v = i == 0 ? UINT64_MAX : draw((enum dist)(i % D_NDIST));
			iogp_hist_record(&src, v, 1);
			iogp_hist_record(&direct, v, 1);
		}
		REQ_EQ(iogp_hist_rebin(&out, &src, &tb), 0);
		check_invariants(&out);
		REQ(hist_same(&out, &direct), "log2 rebin k=%u (seed %" PRIu64 ")", k, seed0);
		iogp_hist_free(&src);
		iogp_hist_free(&direct);
		iogp_hist_free(&out);
	}
	/* native -> fixed, width 2^j >= every bucket width, offset a multiple */
	const struct { unsigned k, j; uint64_t omul; } fc[] = {
		{ 4, 12, 0 }, { 4, 12, 3 }, { 1, 5, 0 }, { 8, 3, 7 }, { 4, 0, 0 }, { 6, 16, 11 },
	};
	for (size_t c = 0; c < sizeof(fc) / sizeof(fc[0]); c++) {
		uint64_t w = 1ull << fc[c].j;
		/* bucket width 2^(m-k) <= w when v < 2^(j+k+1) */
		uint64_t limit = 1ull << (fc[c].j + fc[c].k + 1);

		iogp_bins_native(&nb, fc[c].k);
		iogp_bins_fixed(&tb, w, fc[c].omul * w);
		iogp_hist_init(&src, &nb);
		iogp_hist_init(&direct, &tb);
		iogp_hist_init(&out, NULL);
		for (int i = 0; i < 6000; i++) {
			uint64_t v = draw((enum dist)(i % D_NDIST)) % limit;
			iogp_hist_record(&src, v, 1);
			iogp_hist_record(&direct, v, 1);
		}
		REQ_EQ(iogp_hist_rebin(&out, &src, &tb), 0);
		check_invariants(&out);
		REQ(hist_same(&out, &direct), "fixed rebin case %zu (seed %" PRIu64 ")",
			      c, seed0);
		/* in place */
		REQ_EQ(iogp_hist_rebin(&src, &src, &tb), 0);
		ck_assert(hist_same(&src, &direct));
		iogp_hist_free(&src);
		iogp_hist_free(&direct);
		iogp_hist_free(&out);
	}
	/* native -> edges on bucket edges (4 KiB, 64 KiB, 1 MiB at k=4) */
	const uint64_t e[] = { 4096, 65536, 1048576 };
	iogp_bins_native(&nb, 4);
	iogp_bins_edges(&tb, e, 3);
	iogp_hist_init(&src, &nb);
	iogp_hist_init(&direct, &tb);
	iogp_hist_init(&out, NULL);
	for (int i = 0; i < 6000; i++) {
		uint64_t v = draw((enum dist)(i % D_NDIST)) % (1ull << 24);
		iogp_hist_record(&src, v, 1);
		iogp_hist_record(&direct, v, 1);
	}
	REQ_EQ(iogp_hist_rebin(&out, &src, &tb), 0);
	ck_assert(hist_same(&out, &direct));
	/* non-aligned target: count kept, each value off by at most one bin */
	iogp_bins_fixed(&tb, 1000, 0);
	iogp_hist_free(&out);
	REQ_EQ(iogp_hist_rebin(&out, &src, &tb), 0);
	check_invariants(&out);
	REQ_EQ(out.total, src.total);
	iogp_bins_native(&nb, 9);
	iogp_hist_free(&out);
	REQ_EQ(iogp_hist_rebin(&out, &src, &nb), IOGP_EINVAL);
	iogp_hist_free(&src);
	iogp_hist_free(&direct);
	iogp_hist_free(&out);
}
END_TEST

/* Non-aligned re-binning: each source bucket lands in the target bin of its
 * midpoint, which is the bin of some member value, so the cumulative counts
 * of the rebinned histogram are within one target bin of the truth. */
START_TEST(rebin_near)
{
	iogp_bins nb, tb;
	iogp_hist src, direct, out;
	uint64_t lo, hi;

	rng_seed(seed0 + 600);
	iogp_bins_native(&nb, 4);
	iogp_bins_fixed(&tb, 1000, 333);
	iogp_hist_init(&src, &nb);
	iogp_hist_init(&direct, &tb);
	iogp_hist_init(&out, NULL);
	for (int i = 0; i < 20000; i++) {
		uint64_t v = draw(D_UNIFORM) % 50000;
		iogp_hist_record(&src, v, 1);
		iogp_hist_record(&direct, v, 1);
	}
	REQ_EQ(iogp_hist_rebin(&out, &src, &tb), 0);
	/* every target bin's count lies between the direct counts of the values
	 * strictly inside whole source buckets and those touching it */
	for (size_t i = 0; i < out.n; i++) {
		REQ_EQ(iogp_bins_bounds(&tb, out.bins[i].idx, &lo, &hi), 0);
		uint64_t a = iogp_native_index(lo, 4), z = iogp_native_index(hi, 4);
		uint64_t touch = 0;
		for (size_t j = 0; j < src.n; j++)
			if (src.bins[j].idx >= a && src.bins[j].idx <= z)
				touch += src.bins[j].count;
		REQ_CMP(out.bins[i].count, <=, touch);
	}
	REQ_EQ(out.total, direct.total);
	iogp_hist_free(&src);
	iogp_hist_free(&direct);
	iogp_hist_free(&out);
}
END_TEST

START_TEST(rebin_equal)
{
	iogp_hist src, out;
	uint64_t lo, hi, mn, mx;

	rng_seed(seed0 + 700);
	for (int d = 0; d < D_NDIST; d++) {
		for (uint32_t n = 1; n <= 64; n = n * 3 + 1) {
			iogp_hist_init(&src, NULL);
			iogp_hist_init(&out, NULL);
			for (int i = 0; i < 3000; i++)
				iogp_hist_record(&src, draw((enum dist)d), 1);
			REQ_EQ(iogp_hist_rebin_equal(&out, &src, n), 0);
			check_invariants(&out);
			REQ_EQ(out.total, src.total);
			REQ_EQ(out.scheme.kind, IOGP_BINS_FIXED);
			iogp_hist_min(&src, &mn);
			iogp_hist_max(&src, &mx);
			REQ_EQ(out.scheme.offset, mn);
			REQ_EQ(out.scheme.width, (mx - mn) / n + 1);
			uint64_t first = iogp_bins_index(&out.scheme, mn);
			REQ_CMP(out.bins[0].idx, >=, first);
			REQ_CMP(out.bins[out.n - 1].idx, <, first + n);
			REQ_EQ(iogp_bins_bounds(&out.scheme, first, &lo, &hi), 0);
			REQ_EQ(lo, mn);
			REQ_EQ(iogp_bins_bounds(&out.scheme, first + n - 1, &lo, &hi), 0);
			REQ_CMP(hi, >=, mx);
			iogp_hist_free(&src);
			iogp_hist_free(&out);
		}
	}
	/* the full 64-bit range */
	iogp_hist_init(&src, NULL);
	iogp_hist_init(&out, NULL);
	REQ_EQ(iogp_hist_rebin_equal(&out, &src, 4), IOGP_ENOTFOUND);
	iogp_hist_record(&src, 0, 1);
	iogp_hist_record(&src, UINT64_MAX, 1);
	REQ_EQ(iogp_hist_rebin_equal(&out, &src, 0), IOGP_EINVAL);
	iogp_hist_free(&out);
	REQ_EQ(iogp_hist_rebin_equal(&out, &src, 1), 0);
	REQ_EQ(out.n, 1);
	REQ_EQ(out.total, 2);
	iogp_hist_free(&out);
	REQ_EQ(iogp_hist_rebin_equal(&out, &src, 4), 0);
	REQ_EQ(out.n, 2);
	REQ_EQ(out.bins[0].idx, 0);
	REQ_EQ(out.bins[1].idx, 3);
	iogp_hist_free(&src);
	iogp_hist_free(&out);
}
END_TEST

/* ---- parse / format ---------------------------------------------------------- */

START_TEST(parse_format)
{
	static const char *good[] = {
		"native:4", "native:1", "native:8", "log2", "fixed:10000", "fixed:100:170",
		"fixed:1:18446744073709551615", "fixed:18446744073709551615",
		"edges:5", "edges:0,7", "edges:4096,65536,1048576", "edges:1,18446744073709551615",
	};
	static const char *bad[] = {
		"", "fixed:", "fixed:0", "fixed:abc", "fixed:10:", "fixed:10:x", "fixed:10:5:3",
		"fixed:-5", "fixed: 5", "fixed:18446744073709551616", "fixed:5x",
		"edges:", "edges:5,3", "edges:5,5", "edges:1,,2", "edges:1,2,", "edges:a",
		"edges:99999999999999999999999", "native:", "native:0", "native:9", "native:99",
		"native:4x", "native:-1", "log2:3", "nat", "foo", "FIXED:10", "equal:10",
		"native:184467440737095516160",
	};
	iogp_bins b, b2;
	char buf[64], err[128];

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		err[0] = '\0';
		REQ(iogp_bins_parse(&b, good[i], err, sizeof(err)) == 0, "%s: %s", good[i], err);
		REQ_EQ(iogp_bins_valid(&b), 0);
		int n = iogp_bins_format(&b, buf, sizeof(buf));
		REQ_EQ(n, (int)strlen(good[i]));
		ck_assert_str_eq(buf, good[i]);
		REQ_EQ(iogp_bins_parse(&b2, buf, err, sizeof(err)), 0);
		ck_assert(iogp_bins_equal(&b, &b2));
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		REQ(iogp_bins_parse(&b, bad[i], err, sizeof(err)) == IOGP_EINVAL,
			      "'%s' accepted", bad[i]);
		REQ(strlen(err) > 5, "'%s': no message", bad[i]);
	}
	REQ_EQ(iogp_bins_parse(&b, "fixed:0", NULL, 0), IOGP_EINVAL);
	/* a failed parse leaves the scheme as it was */
	REQ_EQ(iogp_bins_parse(&b, "edges:10,20", err, sizeof(err)), 0);
	REQ_EQ(iogp_bins_parse(&b, "edges:1,2,3,0", err, sizeof(err)), IOGP_EINVAL);
	REQ_EQ(iogp_bins_parse(&b, "fixed:7:x", err, sizeof(err)), IOGP_EINVAL);
	REQ_EQ(b.kind, IOGP_BINS_EDGES);
	REQ_EQ(b.nedges, 2);
	REQ_EQ(b.edges[0], 10);
	REQ_EQ(b.edges[1], 20);
	/* re-initialising a histogram from its own scheme */
	iogp_hist self;
	iogp_hist_init(&self, &b);
	iogp_hist_init(&self, &self.scheme);
	REQ(iogp_bins_equal(&self.scheme, &b), "init from own scheme");
	iogp_bins_parse(&b, "edges:5,3", err, sizeof(err));
	ck_assert_ptr_nonnull(strstr(err, "ascending"));
	iogp_bins_parse(&b, "native:99", err, sizeof(err));
	ck_assert_ptr_nonnull(strstr(err, "99"));
	iogp_bins_parse(&b, "fixed:18446744073709551616", err, sizeof(err));
	ck_assert_ptr_nonnull(strstr(err, "64 bits"));

	REQ_EQ(iogp_bins_parse(&b, "native", err, sizeof(err)), 0);
	REQ_EQ(b.kind, IOGP_BINS_NATIVE);
	REQ_EQ(b.k, IOGP_NATIVE_K_DEFAULT);
	REQ_EQ(iogp_bins_parse(&b, "fixed:100:170", err, sizeof(err)), 0);
	REQ_EQ(b.width, 100);
	REQ_EQ(b.offset, 170);
	REQ_EQ(iogp_bins_format(&b, buf, 5), IOGP_ELIMIT);
	REQ_EQ(iogp_bins_format(&b, buf, 13), IOGP_ELIMIT);
	REQ_EQ(iogp_bins_format(&b, buf, 14), 13);

	/* the edge limit, and a formatted text too long for the buffer */
	size_t cap = IOGP_MAX_EDGES * 24 + 32;
	char *spec = malloc(cap), *out = malloc(cap);
	ck_assert_ptr_nonnull(spec);
	ck_assert_ptr_nonnull(out);
	size_t len = (size_t)snprintf(spec, cap, "edges:");
	for (int i = 0; i < IOGP_MAX_EDGES; i++)
		len += (size_t)snprintf(spec + len, cap - len, "%s%" PRIu64, i ? "," : "",
					(uint64_t)((i + 1) * 1000000007ull));
	REQ_EQ(iogp_bins_parse(&b, spec, err, sizeof(err)), 0);
	REQ_EQ(b.nedges, IOGP_MAX_EDGES);
	REQ_EQ(iogp_bins_format(&b, out, cap), (int)len);
	ck_assert_str_eq(out, spec);
	REQ_EQ(iogp_bins_format(&b, out, 100), IOGP_ELIMIT);
	snprintf(spec + len, cap - len, ",%" PRIu64, UINT64_MAX);
	REQ_EQ(iogp_bins_parse(&b, spec, err, sizeof(err)), IOGP_EINVAL);
	free(spec);
	free(out);
}
END_TEST

static Suite *hist_suite(void)
{
	Suite *s = suite_create("hist");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, native_tiling);
	tcase_add_test(tc, native_edges_k4);
	tcase_add_loop_test(tc, quantile_error, 0, D_NDIST);
	tcase_add_test(tc, quantile_edge);
	tcase_add_test(tc, merge_order_free);
	tcase_add_test(tc, add_bins_random);
	tcase_add_test(tc, sum_native_all_k);
	tcase_add_test(tc, add_bins_sparse);
	tcase_add_test(tc, diff_and_copy);
	tcase_add_test(tc, reduce_k_exact);
	tcase_add_test(tc, log2_bins);
	tcase_add_test(tc, fixed_bins);
	tcase_add_test(tc, edges_bins);
	tcase_add_test(tc, extremes);
	tcase_add_test(tc, csv_output);
	tcase_add_test(tc, rebin_exact);
	tcase_add_test(tc, rebin_near);
	tcase_add_test(tc, rebin_equal);
	tcase_add_test(tc, parse_format);
	tcase_add_test(tc, add_reserves_new_only);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	const char *env = getenv("IOGRAM_SEED");
	int failed;

	if (env)
		seed0 = strtoull(env, NULL, 0);
	failed = tu_run_srunner(hist_suite());
	if (failed)
		fprintf(stderr, "check_hist: seed %" PRIu64 " (set IOGRAM_SEED to repeat)\n", seed0);
	return failed ? 1 : 0;
}
