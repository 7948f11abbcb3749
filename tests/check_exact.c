/* check_exact.c - exact values beside histograms (the agent's common request
 * sizes): which bins they explain, quantiles against an exact sort, the CSV,
 * carrying them through merge/diff/copy/rebin, the wire section, and the
 * model's cumulative, SNAPSHOT and window state. */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iogp_err.h"
#include "iogp_hist.h"
#include "iogp_model.h"
#include "iogp_wire.h"
#include "testutil.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* A histogram of n requests drawn from sizes[], the first `tracked` of them
 * known exactly (the agent's table), the rest in bins only. */
static uint64_t *workload(iogp_hist *h, uint64_t *st, const uint64_t *sizes, int nsizes,
                          int tracked, size_t n)
{
	iogp_bins nat;
	uint64_t *all = malloc(n * sizeof *all), cnt[16] = { 0 };
	ck_assert_ptr_nonnull(all);
	iogp_bins_native(&nat, 4);
	iogp_hist_init(h, &nat);
	for (size_t i = 0; i < n; i++) {
		int k = (int)(tu_splitmix(st) % (uint64_t)nsizes);
		all[i] = sizes[k];
		cnt[k]++;
		ck_assert_int_eq(iogp_hist_record(h, sizes[k], 1), 0);
	}
	/* exact values ascending */
	iogp_exact ex[16];
	int ne = 0;
	for (int k = 0; k < tracked; k++)
		if (cnt[k])
			ex[ne++] = (iogp_exact){ sizes[k], cnt[k] };
	for (int i = 1; i < ne; i++)
		for (int j = i; j > 0 && ex[j - 1].value > ex[j].value; j--) {
			iogp_exact t = ex[j];
			ex[j] = ex[j - 1];
			ex[j - 1] = t;
		}
	ck_assert_int_eq(iogp_hist_add_exact(h, ex, (size_t)ne), 0);
	qsort(all, n, sizeof *all, cmp_u64);
	return all;
}

/* Quantiles are the exact sort's value wherever the bin is explained, and
 * within the bin's bounds elsewhere; random workloads. */
START_TEST(quantiles_vs_sort)
{
	uint64_t st = 0xe8ac7;
	for (int round = 0; round < 200; round++) {
		uint64_t sizes[6];
		int ns = 2 + (int)(tu_splitmix(&st) % 5), tracked = (int)(tu_splitmix(&st) % (uint64_t)(ns + 1));
		for (int k = 0; k < ns; k++) {
			/* round sizes, odd sizes, and neighbours sharing a bin */
			uint64_t r = tu_splitmix(&st);
			sizes[k] = r % 3 == 0 ? 4096u << (r % 9) : r % 3 == 1 ? 1 + r % 100000 : 10240 + r % 7;
		}
		/* distinct values only */
		for (int k = 1; k < ns; k++)
			for (int j = 0; j < k; j++)
				if (sizes[j] == sizes[k])
					sizes[k] += 1 + (uint64_t)k;
		size_t n = 1 + (size_t)(tu_splitmix(&st) % 3000);
		iogp_hist h;
		uint64_t *all = workload(&h, &st, sizes, ns, tracked, n);
		static const double qs[] = { 0.0, 0.01, 0.25, 0.5, 0.9, 0.99, 1.0 };
		for (size_t qi = 0; qi < sizeof qs / sizeof qs[0]; qi++) {
			uint64_t rank = (uint64_t)(qs[qi] * (double)n + 0.999999999);
			rank = rank < 1 ? 1 : rank > n ? n : rank;
			uint64_t truth = all[rank - 1], v, lo, hi, sv;
			ck_assert_int_eq(iogp_hist_quantile(&h, qs[qi], &v), 0);
			uint64_t idx = iogp_bins_index(&h.scheme, truth);
			iogp_bins_bounds(&h.scheme, idx, &lo, &hi);
			size_t bi = 0, f, ne;
			while (bi < h.n && h.bins[bi].idx != idx)
				bi++;
			ck_assert_uint_lt(bi, h.n);
			if (iogp_hist_bin_exact(&h, bi, &f, &ne))
				ck_assert_msg(v == truth, "q%.2f: %" PRIu64 " vs %" PRIu64 " (round %d)",
				              qs[qi], v, truth, round);
			else
				ck_assert(v >= lo && v <= hi);
			/* the size form: exact, or the bin's floor */
			ck_assert_int_eq(iogp_hist_quantile_size(&h, qs[qi], &sv), 0);
			ck_assert_uint_eq(sv, iogp_hist_bin_exact(&h, bi, &f, &ne) ? truth : lo);
		}
		/* the sum is exact when every bin is explained */
		double sum = 0;
		for (size_t i = 0; i < n; i++)
			sum += (double)all[i];
		int all_explained = 1;
		for (size_t i = 0; i < h.n; i++) {
			size_t f, ne;
			all_explained &= iogp_hist_bin_exact(&h, i, &f, &ne);
		}
		if (all_explained)
			ck_assert(iogp_hist_sum(&h) == sum);
		/* one walk over bins and exact values: each bin's sum, in order */
		double bins = 0;
		for (size_t i = 0; i < h.n; i++)
			bins += iogp_hist_bin_sum(&h, i);
		ck_assert_msg(iogp_hist_sum(&h) == bins, "round %d: %.17g vs %.17g", round, iogp_hist_sum(&h), bins);
		iogp_hist_free(&h);
		free(all);
	}
}
END_TEST

/* 4 KiB reads: p50/p90/p99/max exactly 4096; a bin is not explained by a
 * value outside it or by counts that fall short; the CSV. */
START_TEST(explained_bins_and_csv)
{
	iogp_bins nat;
	iogp_hist h, c;
	uint64_t v;
	iogp_bins_native(&nat, 4);
	iogp_hist_init(&h, &nat);
	ck_assert_int_eq(iogp_hist_record(&h, 4096, 1000), 0);
	ck_assert_int_eq(iogp_hist_record(&h, 10240, 3), 0);
	ck_assert_int_eq(iogp_hist_record(&h, 10300, 1), 0);   /* 10,240's bin, not tracked */
	iogp_exact e[] = { { 4096, 1000 }, { 10240, 3 } };
	ck_assert_int_eq(iogp_hist_add_exact(&h, e, 2), 0);
	for (int k = 0; k < 3; k++) {
		ck_assert_int_eq(iogp_hist_quantile(&h, (double[]){ 0.5, 0.9, 0.99 }[k], &v), 0);
		ck_assert_uint_eq(v, 4096);
	}
	/* 10240's bin holds 4 requests but only 3 are exact: not explained */
	size_t f, n;
	ck_assert_int_eq(iogp_hist_bin_exact(&h, 0, &f, &n), 1);
	ck_assert_int_eq(iogp_hist_bin_exact(&h, 1, &f, &n), 0);
	ck_assert_int_eq(iogp_hist_max_size(&h, &v), 0);
	ck_assert_uint_eq(v, 10240);   /* the bin's floor */
	FILE *out = tmpfile();
	ck_assert_ptr_nonnull(out);
	ck_assert_int_eq(iogp_hist_write_csv(&h, out), 0);
	rewind(out);
	char buf[256] = "";
	size_t got = fread(buf, 1, sizeof buf - 1, out);
	buf[got] = 0;
	fclose(out);
	ck_assert_str_eq(buf, "lower_bound,upper_bound,count\n4096,4096,1000\n10240,10751,4\n");
	/* common sizes by count, then the exact values' percentages */
	iogp_exact top[4];
	ck_assert_uint_eq(iogp_hist_common(&h, top, 4), 2);
	ck_assert_uint_eq(top[0].value, 4096);
	ck_assert_uint_eq(top[1].value, 10240);
	/* copy, merge with itself, diff and rebin carry them */
	ck_assert_int_eq(iogp_hist_copy(&c, &h), 0);
	ck_assert_uint_eq(c.nexact, 2);
	ck_assert_int_eq(iogp_hist_merge(&c, &c), 0);
	ck_assert_uint_eq(c.exact[0].count, 2000);
	ck_assert_int_eq(iogp_hist_diff(&c, &c, &h), 0);
	ck_assert_uint_eq(c.nexact, 2);
	ck_assert_uint_eq(c.exact[0].count, 1000);
	iogp_bins l2;
	iogp_bins_log2(&l2);
	ck_assert_int_eq(iogp_hist_rebin(&c, &c, &l2), 0);
	ck_assert_int_eq(iogp_hist_quantile(&c, 0.5, &v), 0);
	ck_assert_uint_eq(v, 4096);   /* 4096's log2 bin [4096, 8191] holds only them */
	iogp_hist_free(&c);
	/* a value out of order is refused and changes nothing */
	iogp_exact bad[] = { { 9000, 1 }, { 8000, 1 } };
	ck_assert_int_eq(iogp_hist_add_exact(&h, bad, 2), IOGP_EINVAL);
	ck_assert_uint_eq(h.nexact, 2);
	iogp_hist_free(&h);
}
END_TEST

/* The bounded cumulative list never counts more than it was given, and
 * keeps the most common new values when full. */
START_TEST(bounded_merge)
{
	uint64_t st = 77, truth[4096] = { 0 };
	iogp_exact keep[IOGP_EXACT_KEEP];
	uint32_t nk = 0;
	for (int round = 0; round < 500; round++) {
		iogp_exact in[IOGP_EXACT_TOP];
		uint32_t n = 0;
		uint64_t v = tu_splitmix(&st) % 40;
		for (int k = 0; k < IOGP_EXACT_TOP && v < 4096; k++) {
			uint64_t c = 1 + tu_splitmix(&st) % 50;
			in[n++] = (iogp_exact){ v, c };
			truth[v] += c;
			v += 1 + tu_splitmix(&st) % 9;
		}
		iogp_exact_merge(keep, &nk, IOGP_EXACT_KEEP, in, n);
		ck_assert_uint_le(nk, IOGP_EXACT_KEEP);
		for (uint32_t i = 0; i < nk; i++) {
			ck_assert_uint_le(keep[i].count, truth[keep[i].value]);
			if (i)
				ck_assert_uint_gt(keep[i].value, keep[i - 1].value);
		}
	}
	ck_assert_uint_eq(nk, IOGP_EXACT_KEEP);
}
END_TEST

/* ---- the wire and the model ------------------------------------------------ */

#define SRC 0x5eedull

static void apply(iogp_model *m, const iogp_msg *msg, uint64_t recv)
{
	uint8_t buf[65536];
	long len = iogp_msg_encode(msg, buf, sizeof buf);
	ck_assert_int_gt(len, 0);
	ck_assert_int_eq(iogp_model_feed(m, buf, (size_t)len, recv), 0);
}

static void hello(iogp_model *m)
{
	iogp_metric_def d = { .id = 3, .kind = IOGP_HISTOGRAM, .name = "posix.read.size", .unit = "bytes" };
	iogp_label lab = { "host", "n1" };
	iogp_bins_native(&d.bins, 4);
	iogp_msg msg = { .kind = IOGP_HELLO, .source = SRC, .seq = 0, .nlabels = 1, .labels = &lab,
	                 .nmetrics = 1, .metrics = &d };
	apply(m, &msg, 1);
}

/* A DELTA of `reps` requests of each size; the first `tracked` exact. */
static void delta(iogp_model *m, uint64_t seq, uint64_t wall_s, const uint64_t *sizes, int n,
                  int tracked, uint64_t reps)
{
	iogp_bin b[8];
	iogp_exact e[8];
	int nb = 0;
	for (int k = 0; k < n; k++) {
		uint32_t idx = iogp_native_index(sizes[k], 4);
		if (nb && b[nb - 1].idx == idx)
			b[nb - 1].count += reps;
		else
			b[nb++] = (iogp_bin){ idx, reps };
		if (k < tracked)
			e[k] = (iogp_exact){ sizes[k], reps };
	}
	iogp_hist_val hv = { 3, (uint32_t)nb, b };
	iogp_exact_val xv = { 3, (uint32_t)tracked, e };
	iogp_msg msg = { .kind = IOGP_DELTA, .source = SRC, .seq = seq,
	                 .t0_ns = (wall_s - 1) * 1000000000ull, .t1_ns = wall_s * 1000000000ull,
	                 .wall_ns = wall_s * 1000000000ull, .nhists = 1, .hists = &hv,
	                 .nexact = tracked ? 1 : 0, .exact = tracked ? &xv : NULL };
	apply(m, &msg, wall_s * 1000000000ull);
}

START_TEST(wire_roundtrip)
{
	iogp_exact e[] = { { 0, 5 }, { 4096, 7 }, { UINT64_MAX, 1 } };
	iogp_exact_val xv = { 9, 3, e };
	iogp_bin b = { 0, 1 };
	iogp_hist_val hv = { 9, 1, &b };
	iogp_msg msg = { .kind = IOGP_DELTA, .source = 1, .seq = 1, .nhists = 1, .hists = &hv,
	                 .nexact = 1, .exact = &xv }, d;
	uint8_t buf[512];
	long len = iogp_msg_encode(&msg, buf, sizeof buf);
	ck_assert_int_gt(len, 0);
	iogp_msg_init(&d);
	ck_assert_int_eq(iogp_msg_decode(&d, buf, (size_t)len, NULL, 0), 0);
	ck_assert_uint_eq(d.nexact, 1);
	ck_assert_uint_eq(d.exact[0].id, 9);
	ck_assert_uint_eq(d.exact[0].n, 3);
	for (int k = 0; k < 3; k++) {
		ck_assert_uint_eq(d.exact[0].v[k].value, e[k].value);
		ck_assert_uint_eq(d.exact[0].v[k].count, e[k].count);
	}
	/* unsorted values and a zero count do not encode */
	iogp_exact u[] = { { 5, 1 }, { 4, 1 } };
	xv.v = u;
	xv.n = 2;
	ck_assert_int_eq(iogp_msg_encode(&msg, buf, sizeof buf), IOGP_EINVAL);
	u[1] = (iogp_exact){ 6, 0 };
	ck_assert_int_eq(iogp_msg_encode(&msg, buf, sizeof buf), IOGP_EINVAL);
	/* a cut anywhere is refused, never a crash */
	xv.v = e;
	xv.n = 3;
	len = iogp_msg_encode(&msg, buf, sizeof buf);
	for (long cut = 0; cut < len; cut++)
		ck_assert_int_lt(iogp_msg_decode(&d, buf, (size_t)cut, NULL, 0), 0);
	iogp_msg_free(&d);
}
END_TEST

START_TEST(model_cumulative_snapshot_window)
{
	iogp_model_opts o = { .live = 1, .window_slot_ns = 1000000000ull, .window_max_ns = 10000000000ull };
	iogp_model *m = iogp_model_new(&o), *m2 = iogp_model_new(NULL);
	ck_assert_ptr_nonnull(m);
	ck_assert_ptr_nonnull(m2);
	hello(m);
	const uint64_t sz[] = { 4096, 10240, 10300 };
	/* 10 s of 4 KiB + 10,240 B tracked, then 5 s where a 10,300 joins untracked */
	for (uint64_t s = 1; s <= 10; s++)
		delta(m, s, 100 + s, sz, 2, 2, 10);
	for (uint64_t s = 11; s <= 15; s++)
		delta(m, s, 100 + s, sz, 3, 2, 10);
	iogp_hist h;
	uint64_t v;
	ck_assert_int_eq(iogp_model_hist(m, "posix.read.size", NULL, &h), 0);
	ck_assert_uint_eq(h.total, 150 + 150 + 50);
	ck_assert_uint_eq(h.nexact, 2);
	ck_assert_uint_eq(h.exact[0].count, 150);
	ck_assert_int_eq(iogp_hist_quantile(&h, 0.25, &v), 0);
	ck_assert_uint_eq(v, 4096);
	size_t f, n;
	ck_assert_int_eq(iogp_hist_bin_exact(&h, 1, &f, &n), 0);   /* 10,300 is not known */
	iogp_hist_free(&h);
	/* the last 3 s hold the 10,300s too; the first 8 s of window on its own do not */
	iogp_model_tick(m, 115ull * 1000000000ull);
	ck_assert_int_eq(iogp_model_hist_window(m, "posix.read.size", NULL, 3000000000ull, &h), 0);
	ck_assert_uint_gt(h.total, 0);
	ck_assert_uint_eq(h.nexact, 2);
	ck_assert_uint_eq(h.exact[0].count * 3, h.total);
	/* the one source's window (its ring read without the flat array of
	 * every bin) is the same: bins, exact values, total, sum */
	iogp_hist hs;
	iogp_sel one = { .kind = IOGP_SEL_SOURCE, .source = SRC };
	for (uint64_t w = 1; w <= 10; w++) {
		iogp_hist ha;
		ck_assert_int_eq(iogp_model_hist_window(m, "posix.read.size", NULL, w * 1000000000ull, &ha), 0);
		ck_assert_int_eq(iogp_model_hist_window(m, "posix.read.size", &one, w * 1000000000ull, &hs), 0);
		ck_assert_uint_eq(hs.total, ha.total);
		ck_assert_uint_eq(hs.n, ha.n);
		ck_assert_uint_eq(hs.nexact, ha.nexact);
		ck_assert(!memcmp(hs.bins, ha.bins, ha.n * sizeof(*ha.bins)));
		ck_assert(!ha.nexact || !memcmp(hs.exact, ha.exact, ha.nexact * sizeof(*ha.exact)));
		ck_assert(iogp_hist_sum(&hs) == iogp_hist_sum(&ha));
		iogp_hist_free(&hs);
		iogp_hist_free(&ha);
	}
	one.source = SRC + 1;   /* no such source */
	ck_assert_int_eq(iogp_model_hist_window(m, "posix.read.size", &one, 3000000000ull, &hs), IOGP_ENOTFOUND);
	ck_assert_uint_eq(hs.total, 0);
	iogp_hist_free(&hs);
	iogp_hist_free(&h);
	/* a SNAPSHOT carries the cumulative exact values to a fresh model */
	iogp_msg snap;
	iogp_msg_init(&snap);
	ck_assert_int_eq(iogp_model_snapshot(m, 0, 0, &snap), 0);
	ck_assert_uint_eq(snap.nexact, 1);
	apply(m2, &snap, 1);
	ck_assert_int_eq(iogp_model_hist(m2, "posix.read.size", NULL, &h), 0);
	ck_assert_uint_eq(h.nexact, 2);
	ck_assert_uint_eq(h.exact[1].value, 10240);
	ck_assert_uint_eq(h.exact[1].count, 150);
	iogp_hist_free(&h);
	iogp_msg_free(&snap);
	iogp_model_free(m);
	iogp_model_free(m2);
}
END_TEST

/* Hostile exact values: for a metric that is not a histogram, unknown ids,
 * values the bins do not hold: refused or harmless, never a value outside
 * the bin a quantile lands in. */
START_TEST(model_hostile)
{
	iogp_model *m = iogp_model_new(NULL);
	hello(m);
	iogp_bin b = { iogp_native_index(4096, 4), 10 };
	iogp_exact lie[] = { { 1, 5 }, { 1ull << 40, 5 } };   /* not in 4096's bin */
	iogp_hist_val hv = { 3, 1, &b };
	iogp_exact_val xv = { 3, 2, lie };
	iogp_msg msg = { .kind = IOGP_DELTA, .source = SRC, .seq = 1, .nhists = 1, .hists = &hv,
	                 .nexact = 1, .exact = &xv };
	ck_assert_int_eq(iogp_model_apply(m, &msg, 1), 0);
	iogp_hist h;
	uint64_t v, lo, hi;
	ck_assert_int_eq(iogp_model_hist(m, "posix.read.size", NULL, &h), 0);
	ck_assert_int_eq(iogp_hist_quantile(&h, 0.5, &v), 0);
	iogp_native_bounds(iogp_native_index(4096, 4), 4, &lo, &hi);
	ck_assert(v >= lo && v <= hi);
	iogp_hist_free(&h);
	xv.id = 77;   /* no such metric */
	msg.seq = 2;
	ck_assert_int_eq(iogp_model_apply(m, &msg, 2), IOGP_EUNKNOWN);
	/* thousands of values are capped per source */
	iogp_exact *many = malloc(IOGP_MAX_EXACT * sizeof *many);
	for (uint32_t k = 0; k < IOGP_MAX_EXACT; k++)
		many[k] = (iogp_exact){ 4096 + k, 1 };
	xv = (iogp_exact_val){ 3, IOGP_MAX_EXACT, many };
	msg.seq = 3;
	ck_assert_int_eq(iogp_model_apply(m, &msg, 3), 0);
	ck_assert_int_eq(iogp_model_hist(m, "posix.read.size", NULL, &h), 0);
	ck_assert_uint_le(h.nexact, IOGP_EXACT_KEEP);
	iogp_hist_free(&h);
	free(many);
	iogp_model_free(m);
}
END_TEST

int main(void)
{
	const tu_case cases[] = {
		{ "quantiles_vs_sort", quantiles_vs_sort },
		{ "explained_bins_and_csv", explained_bins_and_csv },
		{ "bounded_merge", bounded_merge },
		{ "wire_roundtrip", wire_roundtrip },
		{ "model_cumulative_snapshot_window", model_cumulative_snapshot_window },
		{ "model_hostile", model_hostile },
	};
	return tu_run_suite("exact", cases, sizeof(cases) / sizeof(cases[0]), NULL, NULL, 120);
}
