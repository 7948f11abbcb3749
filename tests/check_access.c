/* check_access.c - the stream model's access samples over the time shown
 * (model_access.c): a busy file's samples cover the whole run and any
 * window in even slices, the counts of requests they stand for are the
 * truth (exact for one file, estimated within a few percent for several),
 * each metric's samples stay its own, memory stays within access_keep over
 * hours, and the ring of iogp_model_access keeps its contract. */
#include <check.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iogp.h"
#include "testutil.h"
#include "testutil_access.h"

static iogp_model *live_model(uint32_t keep)
{
	iogp_model_opts o = { .live = 1, .access_keep = keep };
	iogp_model *m = iogp_model_new(&o);
	ck_assert_ptr_nonnull(m);
	return m;
}

/* Samples of set in [a, b) wall ns. */
static size_t in_span(const iogp_access_set *set, uint64_t a, uint64_t b)
{
	size_t n = 0;
	for (size_t i = 0; i < set->n; i++)
		n += set->s[i].wall_ns >= a && set->s[i].wall_ns < b;
	return n;
}

static void query(const iogp_model *m, const char *metric, const char *path, uint64_t from,
                  iogp_access_set *set)
{
	iogp_access_query q = { .metric = metric, .path = path, .from_ns = from };
	int rc = iogp_model_access_query(m, &q, set);
	ck_assert_msg(rc == 0, "query %s %s: %s", metric, path ? path : "*", iogp_strerror(rc));
}

/* A busy file over 60 s: samples in every 10 s slice, evenly; the count
 * of requests exact; the ring still the newest samples. */
START_TEST(busy_run)
{
	tu_acc_job j = { .seconds = 60, .nsources = 1, .nfiles = 1,
	                 .files = { { "/data/busy.dat", IOGP_FR_POSIX, 20000, 4096, IOGP_OP_READ,
	                              1ull << 30, 1, 0, 0 } } };
	iogp_model *m = live_model(0);
	tu_acc_run(&j, m, NULL);
	iogp_access_set set;
	query(m, "posix.access", "/data/busy.dat", 0, &set);
	ck_assert_uint_eq(set.requests, 60 * 20000);
	ck_assert_uint_eq(j.requests[0], 60 * 20000);
	ck_assert_int_eq(set.exact, 1);
	ck_assert_msg(set.n >= 2000 && set.n < set.requests, "%zu samples", set.n);
	ck_assert_uint_le(set.n, set.held);
	double per = (double)set.n / 6;
	for (int k = 0; k < 6; k++) {
		uint64_t a = j.t0_wall + (uint64_t)k * 10000000000ull;
		size_t c = in_span(&set, a, a + 10000000000ull);
		ck_assert_msg(c >= 0.7 * per && c <= 1.3 * per, "slice %d: %zu of %zu samples", k, c,
		              set.n);
	}
	ck_assert_uint_le(set.from_ns, j.t0_wall + 1000000000ull);
	ck_assert_uint_ge(set.to_ns, j.t1_wall - 1000000000ull);
	for (size_t i = 1; i < set.n; i++)
		ck_assert_uint_le(set.s[i - 1].wall_ns, set.s[i].wall_ns);
	for (size_t i = 0; i < set.n; i++) {
		ck_assert_uint_eq(set.s[i].size, 4096);
		ck_assert_uint_lt(set.s[i].offset, 1ull << 30);
		ck_assert_uint_eq(set.s[i].source, 0);
	}
	iogp_access_set_free(&set);
	/* the ring: the newest 4096 samples, oldest first */
	const iogp_access *a1, *a2;
	size_t n2, n1 = iogp_model_access(m, 0, &a1, &n2, &a2);
	ck_assert_uint_eq(n1 + n2, 4096);
	const iogp_access *last = n2 ? &a2[n2 - 1] : &a1[n1 - 1];
	ck_assert_uint_ge(last->t_ns, 1000000000000ull + 59000000000ull);
	iogp_model_free(m);
}
END_TEST

/* The last 10 s of it: within the window, every 2 s holds samples, the
 * requests are the window's. */
START_TEST(window)
{
	tu_acc_job j = { .seconds = 600, .nsources = 1, .nfiles = 1,
	                 .files = { { "/data/busy.dat", IOGP_FR_POSIX, 10000, 65536, IOGP_OP_WRITE,
	                              1ull << 34, 0, 0, 0 } } };
	iogp_model *m = live_model(0);
	tu_acc_run(&j, m, NULL);
	iogp_access_set set;
	uint64_t from = j.t1_wall - 10000000000ull;
	query(m, "posix.access", NULL, from, &set);
	ck_assert_msg(set.n >= 300, "%zu samples in the last 10 s", set.n);
	ck_assert_msg(fabs((double)set.requests - 100000) < 5000, "%" PRIu64 " requests", set.requests);
	for (int k = 0; k < 5; k++) {
		uint64_t a = from + (uint64_t)k * 2000000000ull;
		ck_assert_msg(in_span(&set, a, a + 2000000000ull) > set.n / 10, "2 s slice %d", k);
	}
	ck_assert_uint_eq(in_span(&set, 0, from), 0);
	for (size_t i = 0; i < set.n; i++)
		ck_assert_uint_eq(set.s[i].op, IOGP_OP_WRITE);
	iogp_access_set_free(&set);
	/* and the whole run: every minute */
	query(m, "posix.access", NULL, 0, &set);
	ck_assert_uint_eq(set.requests, 600 * 10000);
	for (int k = 0; k < 10; k++) {
		uint64_t a = j.t0_wall + (uint64_t)k * 60000000000ull;
		ck_assert_msg(in_span(&set, a, a + 60000000000ull) > set.n / 20, "minute %d", k);
	}
	iogp_access_set_free(&set);
	iogp_model_free(m);
}
END_TEST

/* posix.access and stdio.access of one source: each query has its own
 * metric's file only; counts estimated within a few percent. */
START_TEST(layers)
{
	tu_acc_job j = { .seconds = 30, .nsources = 1, .nfiles = 3,
	                 .files = { { "/data/sys.dat", IOGP_FR_POSIX, 3000, 4096, IOGP_OP_READ, 1ull << 26, 1, 0, 0 },
	                            { "/data/lines.txt", IOGP_FR_STDIO, 1000, 11, IOGP_OP_WRITE, 0, 0, 0, 0 },
	                            { "/data/more.dat", IOGP_FR_POSIX, 500, 8192, IOGP_OP_WRITE, 0, 0, 0, 0 } } };
	iogp_model *m = live_model(0);
	tu_acc_run(&j, m, NULL);
	iogp_access_set set;
	query(m, "stdio.access", NULL, 0, &set);
	ck_assert_uint_gt(set.n, 100);
	for (size_t i = 0; i < set.n; i++) {
		ck_assert_uint_eq(set.s[i].file, 2);
		ck_assert_uint_eq(set.s[i].size, 11);
	}
	ck_assert_int_eq(set.exact, 0);
	ck_assert_msg(fabs((double)set.requests - (double)j.requests[1]) < 0.05 * j.requests[1],
	              "%" PRIu64 " of %" PRIu64, set.requests, j.requests[1]);
	iogp_access_set_free(&set);
	query(m, "posix.access", NULL, 0, &set);
	size_t nf[4] = { 0 };
	for (size_t i = 0; i < set.n; i++) {
		ck_assert_uint_ne(set.s[i].file, 2);
		nf[set.s[i].file]++;
	}
	ck_assert(nf[1] > 0 && nf[3] > 0);
	iogp_access_set_free(&set);
	/* files by bytes, per layer */
	iogp_access_query q = { .metric = "posix.access" };
	iogp_access_file *af;
	size_t n;
	ck_assert_int_eq(iogp_model_access_files(m, &q, &af, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(af[0].path, "/data/sys.dat");      /* 12 MB/s before 4 MB/s */
	ck_assert_str_eq(af[1].path, "/data/more.dat");
	ck_assert_msg(fabs((double)af[0].bytes - (double)j.bytes[0]) < 0.05 * j.bytes[0], "bytes");
	free(af);
	q.metric = "stdio.access";
	ck_assert_int_eq(iogp_model_access_files(m, &q, &af, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(af[0].path, "/data/lines.txt");
	ck_assert_uint_eq(af[0].sources, 1);
	free(af);
	/* wrong questions */
	q.metric = "posix.nope";
	ck_assert_int_eq(iogp_model_access_query(m, &q, &set), IOGP_ENOTFOUND);
	ck_assert_uint_eq(set.n, 0);
	q.metric = "posix.access";
	iogp_sel sel = { .kind = IOGP_SEL_NODE, .node = "nowhere" };
	q.sel = &sel;
	ck_assert_int_eq(iogp_model_access_query(m, &q, &set), IOGP_ENOTFOUND);
	iogp_model_free(m);
	iogp_model *off = iogp_model_new(NULL);   /* live off: no per-file samples */
	tu_acc_run(&j, off, NULL);
	q.sel = NULL;
	ck_assert_int_eq(iogp_model_access_query(off, &q, &set), IOGP_EINVAL);
	iogp_model_free(off);
}
END_TEST

/* Two hours of three busy files: within access_keep, still spread over
 * every 10 minutes since the start, and the last minute dense. */
START_TEST(hours)
{
	tu_acc_job j = { .seconds = 7200, .nsources = 1, .nfiles = 3,
	                 .files = { { "/data/a", IOGP_FR_POSIX, 5000, 4096, IOGP_OP_READ, 1ull << 30, 1, 0, 0 },
	                            { "/data/b", IOGP_FR_POSIX, 3000, 1 << 20, IOGP_OP_WRITE, 0, 0, 0, 0 },
	                            { "/data/c", IOGP_FR_POSIX, 2000, 512, IOGP_OP_READ, 1ull << 20, 1, 0, 0 } } };
	iogp_model *m = live_model(0);
	tu_acc_run(&j, m, NULL);
	iogp_access_mem mem;
	iogp_model_access_mem(m, &mem);
	ck_assert_msg(mem.max_source <= 8192, "%" PRIu64 " samples kept", mem.max_source);
	ck_assert_uint_gt(mem.thinned, 0);
	ck_assert_msg(mem.bytes < 8192 * 64 + 65536, "%" PRIu64 " bytes", mem.bytes);
	iogp_access_set set;
	query(m, "posix.access", "/data/b", 0, &set);
	ck_assert_uint_gt(set.n, 500);
	for (int k = 0; k < 12; k++) {
		uint64_t a = j.t0_wall + (uint64_t)k * 600000000000ull;
		size_t c = in_span(&set, a, a + 600000000000ull);
		ck_assert_msg(c > set.n / 24, "10 minutes #%d: %zu of %zu", k, c, set.n);
	}
	ck_assert_msg(fabs((double)set.requests - (double)j.requests[1]) < 0.05 * j.requests[1],
	              "%" PRIu64 " of %" PRIu64, set.requests, j.requests[1]);
	iogp_access_set_free(&set);
	uint64_t from = j.t1_wall - 60000000000ull;
	query(m, "posix.access", "/data/b", from, &set);
	ck_assert_msg(set.n >= 100, "%zu samples in the last minute", set.n);
	ck_assert_uint_eq(in_span(&set, 0, from), 0);
	for (int k = 0; k < 6; k++)
		ck_assert_uint_gt(in_span(&set, from + (uint64_t)k * 10000000000ull,
		                          from + (uint64_t)(k + 1) * 10000000000ull), 0);
	iogp_access_set_free(&set);
	iogp_model_free(m);
}
END_TEST

/* A small budget, many sources sharing a file, a file that comes and goes. */
START_TEST(budget_and_sources)
{
	tu_acc_job j = { .seconds = 120, .nsources = 4, .nfiles = 2,
	                 .files = { { "/shared/out.h5", IOGP_FR_POSIX, 4000, 1 << 20, IOGP_OP_WRITE, 0, 0, 0, 0 },
	                            { "/shared/ckpt", IOGP_FR_POSIX, 2000, 4096, IOGP_OP_WRITE, 0, 0, 40, 60 } } };
	iogp_model *m = live_model(512);
	tu_acc_run(&j, m, NULL);
	iogp_access_mem mem;
	iogp_model_access_mem(m, &mem);
	ck_assert_uint_le(mem.max_source, 512);
	iogp_access_set set;
	query(m, "posix.access", "/shared/out.h5", 0, &set);
	ck_assert_msg(fabs((double)set.requests - (double)j.requests[0]) < 0.05 * j.requests[0],
	              "%" PRIu64 " of %" PRIu64, set.requests, j.requests[0]);
	int src[4] = { 0 };
	for (size_t i = 0; i < set.n; i++)
		src[set.s[i].source]++;
	for (int s = 0; s < 4; s++)
		ck_assert_msg(src[s] > (int)set.n / 8, "source %d: %d of %zu", s, src[s], set.n);
	for (int k = 0; k < 12; k++)
		ck_assert_uint_gt(in_span(&set, j.t0_wall + (uint64_t)k * 10000000000ull,
		                          j.t0_wall + (uint64_t)(k + 1) * 10000000000ull), 0);
	iogp_access_set_free(&set);
	/* the checkpoint file: only while it was written */
	query(m, "posix.access", "/shared/ckpt", 0, &set);
	ck_assert_uint_gt(set.n, 0);
	for (size_t i = 0; i < set.n; i++)
		ck_assert(set.s[i].wall_ns >= j.t0_wall + 39000000000ull &&
		          set.s[i].wall_ns < j.t0_wall + 61000000000ull);
	iogp_access_set_free(&set);
	iogp_access_query q = { .metric = "posix.access" };
	iogp_access_file *af;
	size_t n;
	ck_assert_int_eq(iogp_model_access_files(m, &q, &af, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(af[0].path, "/shared/out.h5");
	ck_assert_uint_eq(af[0].sources, 4);
	free(af);
	iogp_model_free(m);
}
END_TEST

/* Thousands of small files: at most access_keep / 16 kept, the busiest
 * among them; a SNAPSHOT repeating samples adds nothing. */
START_TEST(many_files)
{
	iogp_model *m = live_model(0);
	iogp_metric_def d = { .id = 50, .kind = IOGP_ACCESS, .name = "posix.access", .unit = "" };
	iogp_label l = { "host", "n1" };
	iogp_msg msg = { .kind = IOGP_HELLO, .source = 7, .labels = &l, .nlabels = 1, .metrics = &d,
	                 .nmetrics = 1 };
	ck_assert_int_eq(iogp_model_apply(m, &msg, 1), 0);
	iogp_access a[17];
	for (uint64_t sec = 1; sec <= 300; sec++) {
		uint64_t t0 = sec * 1000000000ull;
		for (int k = 0; k < 16; k++)   /* 16 new files a second, one request each */
			a[k] = (iogp_access){ 50, t0 + (uint64_t)k * 1000, 1000 + sec * 16 + (uint64_t)k, 0, 0, 3901 };
		a[16] = (iogp_access){ 50, t0 + 900000000ull, 1, 1, sec * 4096, 4096 };   /* the busy one */
		msg = (iogp_msg){ .kind = IOGP_DELTA, .source = 7, .seq = sec, .t0_ns = t0 - 1000000000ull,
		                  .t1_ns = t0 + 999999999ull, .wall_ns = TU_ACC_EPOCH_NS + t0,
		                  .access = a, .naccess = 17, .access_seen = 16 + 1000 };
		ck_assert_int_eq(iogp_model_apply(m, &msg, msg.wall_ns), 0);
	}
	iogp_access_mem mem;
	iogp_model_access_mem(m, &mem);
	ck_assert_uint_le(mem.streams, 8192 / 16);
	ck_assert_uint_gt(mem.evicted, 0);
	ck_assert_uint_le(mem.max_source, 8192);
	iogp_access_set set;
	query(m, "posix.access", "?", 0, &set);   /* unnamed files */
	size_t busy = 0;
	for (size_t i = 0; i < set.n; i++)
		busy += set.s[i].file == 1;
	ck_assert_uint_gt(busy, 0);
	uint64_t before = set.requests;
	iogp_access_set_free(&set);
	/* a SNAPSHOT with the busy file's last sample again */
	msg = (iogp_msg){ .kind = IOGP_SNAPSHOT, .source = 7, .seq = 301, .t0_ns = 0,
	                  .t1_ns = 301000000000ull, .wall_ns = TU_ACC_EPOCH_NS + 301000000000ull,
	                  .access = &a[16], .naccess = 1, .access_seen = 300 * 1016 };
	ck_assert_int_eq(iogp_model_apply(m, &msg, msg.wall_ns), 0);
	query(m, "posix.access", "?", 0, &set);
	ck_assert_uint_eq(set.requests, before);
	iogp_access_set_free(&set);
	iogp_model_free(m);
}
END_TEST

/* A source over its samples at every DELTA (the least access_keep, 256
 * samples a DELTA of one file for 200 s) stays within them, and its
 * samples stay queryable. (The run tier's width that wrapped to 0 under
 * repeated trims is check_access_random's: this sequence does not reach
 * it.) */
START_TEST(run_width_bounded)
{
	iogp_model *m = live_model(1);   /* the least a source keeps: 128 samples */
	iogp_metric_def d = { .id = 50, .kind = IOGP_ACCESS, .name = "posix.access", .unit = "" };
	iogp_label l = { "host", "n1" };
	iogp_msg msg = { .kind = IOGP_HELLO, .source = 7, .labels = &l, .nlabels = 1, .metrics = &d,
	                 .nmetrics = 1 };
	ck_assert_int_eq(iogp_model_apply(m, &msg, 1), 0);
	static iogp_access a[256];
	for (uint64_t sec = 1; sec <= 200; sec++) {
		uint64_t t0 = sec * 1000000000ull;
		for (int k = 0; k < 256; k++)
			a[k] = (iogp_access){ 50, t0 + (uint64_t)k * 1000000, 1, k & 1, (uint64_t)k * 4096, 4096 };
		msg = (iogp_msg){ .kind = IOGP_DELTA, .source = 7, .seq = sec, .t0_ns = t0,
		                  .t1_ns = t0 + 999999999ull, .wall_ns = TU_ACC_EPOCH_NS + t0,
		                  .access = a, .naccess = 256, .access_seen = 256 };
		ck_assert_int_eq(iogp_model_apply(m, &msg, msg.wall_ns), 0);
	}
	iogp_access_mem mem;
	iogp_model_access_mem(m, &mem);
	ck_assert_uint_le(mem.max_source, 256);
	iogp_access_set set;
	query(m, "posix.access", "?", 0, &set);
	ck_assert_uint_gt(set.n, 0);
	ck_assert_uint_gt(set.requests, 0);
	iogp_access_set_free(&set);
	iogp_model_free(m);
}
END_TEST

/* access_total across many sources: each source's ring holds at most
 * its share (the newest samples, in order), its run samples at most its
 * share, and the model's access memory stays within the total however
 * many samples arrive. */
START_TEST(total_budget)
{
	enum { NS = 200, PER = 40, SECS = 60 };
	iogp_model_opts o = { .live = 1, .access_total = (uint64_t)NS * 2 * 256 };
	iogp_model *m = iogp_model_new(&o);
	ck_assert_ptr_nonnull(m);
	iogp_metric_def d = { .id = 50, .kind = IOGP_ACCESS, .name = "posix.access", .unit = "" };
	iogp_label l = { "host", "n1" };
	for (uint64_t id = 1; id <= NS; id++) {
		iogp_msg h = { .kind = IOGP_HELLO, .source = id, .labels = &l, .nlabels = 1,
		               .metrics = &d, .nmetrics = 1 };
		ck_assert_int_eq(iogp_model_apply(m, &h, 1), 0);
	}
	iogp_access a[PER];
	for (uint64_t sec = 1; sec <= SECS; sec++)
		for (uint64_t id = 1; id <= NS; id++) {
			uint64_t t0 = sec * 1000000000ull;
			for (int k = 0; k < PER; k++)
				a[k] = (iogp_access){ 50, t0 + (uint64_t)k * 1000, 1, 0, (sec * PER + (uint64_t)k) * 4096, 4096 };
			iogp_msg msg = { .kind = IOGP_DELTA, .source = id, .seq = sec, .t0_ns = t0 - 1000000000ull,
			                 .t1_ns = t0 + 999999999ull, .wall_ns = TU_ACC_EPOCH_NS + t0,
			                 .access = a, .naccess = PER, .access_seen = PER };
			ck_assert_int_eq(iogp_model_apply(m, &msg, msg.wall_ns), 0);
		}
	for (size_t i = 0; i < NS; i++) {
		const iogp_access *p1, *p2;
		size_t n2, n1 = iogp_model_access(m, i, &p1, &n2, &p2);
		/* its share: half the bytes of total / sources samples of 32 B,
		 * in entries of 48 B */
		ck_assert_uint_eq(n1 + n2, 256 * 32 / sizeof(iogp_access));
		/* the newest, oldest first: the last second's 40 end it */
		const iogp_access *last = n2 > 0 ? &p2[n2 - 1] : &p1[n1 - 1];
		ck_assert_uint_eq(last->offset, ((uint64_t)SECS * PER + PER - 1) * 4096);
		uint64_t prev = 0;
		for (size_t k = 0; k < n1 + n2; k++) {
			const iogp_access *x = k < n1 ? &p1[k] : &p2[k - n1];
			ck_assert_uint_gt(x->offset + 1, prev);
			prev = x->offset + 1;
		}
	}
	iogp_access_mem mem;
	iogp_model_access_mem(m, &mem);
	ck_assert_uint_le(mem.max_source, 256);   /* the run's share */
	iogp_model_free(m);
}
END_TEST

/* Thousands of sources sharing a small access_total (iogram-top's 4 Mi
 * samples at 50,000 sources is ~2.6 KB a source): rings and stores hold
 * within its bytes, all told, and a query over the run still finds
 * samples of nearly every source, spread over the run. */
START_TEST(many_sources_bytes)
{
	enum { NS = 3000, SECS = 60 };
	tu_acc_job j = { .seconds = SECS, .nsources = NS, .nfiles = 2,
	                 .files = { { "/data/in", IOGP_FR_POSIX, 2000, 4096, IOGP_OP_READ, 1ull << 30, 1, 0, 0 },
	                            { "/data/out", IOGP_FR_POSIX, 1000, 1 << 20, IOGP_OP_WRITE, 0, 0, 0, 0 } } };
	iogp_model_opts o = { .live = 1, .access_total = (uint64_t)NS * 64 };   /* 2 KB a source */
	iogp_model *m = iogp_model_new(&o);
	ck_assert_ptr_nonnull(m);
	tu_acc_run(&j, m, NULL);
	iogp_access_mem mem;
	iogp_model_access_mem(m, &mem);
	uint64_t budget = o.access_total * 32;
	ck_assert_msg(mem.bytes + mem.ring_bytes <= budget, "%" PRIu64 " + %" PRIu64 " bytes of %" PRIu64,
	              mem.bytes, mem.ring_bytes, budget);
	ck_assert_msg(mem.bytes <= budget / 2, "store %" PRIu64 " bytes of %" PRIu64, mem.bytes, budget / 2);
	ck_assert_uint_ge(mem.samples, NS);
	iogp_access_set set;
	query(m, "posix.access", NULL, 0, &set);
	ck_assert_uint_gt(set.n, 2 * NS);
	uint8_t *seen = calloc(NS, 1);
	size_t sources = 0;
	for (size_t i = 0; i < set.n; i++) {
		ck_assert_uint_lt(set.s[i].source, NS);
		sources += !seen[set.s[i].source];
		seen[set.s[i].source] = 1;
	}
	free(seen);
	ck_assert_msg(sources >= NS * 9 / 10, "%zu of %d sources", sources, NS);
	/* source s starts s x 10 ms after the first (testutil_access.c): by
	 * its own time, every 10 s of its run has its part of the samples */
	size_t per[SECS / 10] = { 0 };
	for (size_t i = 0; i < set.n; i++) {
		uint64_t t = set.s[i].wall_ns - TU_ACC_EPOCH_NS - set.s[i].source * 10000000ull;
		per[t / 10000000000ull < SECS / 10 ? t / 10000000000ull : SECS / 10 - 1]++;
	}
	for (int k = 0; k < SECS / 10; k++)
		ck_assert_msg(per[k] > set.n / 10 && per[k] < set.n / 4, "10 s slice %d: %zu of %zu", k,
		              per[k], set.n);
	iogp_access_set_free(&set);
	iogp_model_free(m);
}
END_TEST

/* Sources id0 .. id0 + n - 1 say HELLO, then send secs DELTAs of per
 * samples each (4 files, sequential offsets) from second sec0 on. */
static void feed_sources(iogp_model *m, uint64_t id0, uint32_t n, uint64_t sec0, uint32_t secs)
{
	enum { PER = 32 };
	iogp_metric_def d = { .id = 50, .kind = IOGP_ACCESS, .name = "posix.access", .unit = "" };
	iogp_label l = { "host", "n1" };
	for (uint64_t id = id0; id < id0 + n; id++) {
		iogp_msg h = { .kind = IOGP_HELLO, .source = id, .labels = &l, .nlabels = 1,
		               .metrics = &d, .nmetrics = 1 };
		ck_assert_int_eq(iogp_model_apply(m, &h, 1), 0);
	}
	iogp_access a[PER];
	for (uint64_t sec = sec0; sec < sec0 + secs; sec++)
		for (uint64_t id = id0; id < id0 + n; id++) {
			uint64_t t0 = sec * 1000000000ull;
			for (int k = 0; k < PER; k++)
				a[k] = (iogp_access){ 50, t0 + (uint64_t)k * 1000, 1 + k % 4, 0,
				                      (sec * PER + (uint64_t)k) * 4096, 4096 };
			iogp_msg msg = { .kind = IOGP_DELTA, .source = id, .seq = sec, .t0_ns = t0 - 1000000000ull,
			                 .t1_ns = t0 + 999999999ull, .wall_ns = TU_ACC_EPOCH_NS + t0,
			                 .access = a, .naccess = PER, .access_seen = 10 * PER };
			ck_assert_int_eq(iogp_model_apply(m, &msg, msg.wall_ns), 0);
		}
}

/* A live model whose share is small (past ~16,000 sources at iogram-top's
 * access_total) keeps no per-source ring: iogp_model_access gives nothing
 * and the rings hold no bytes, while the store has every source's samples,
 * as many as with rings. A ring made while the sources were few goes when
 * more join. */
static void small_share(uint64_t access_total, uint64_t *ring, uint64_t *requests, size_t *kept)
{
	iogp_model_opts o = { .live = 1, .access_total = access_total };
	iogp_model *m = iogp_model_new(&o);
	ck_assert_ptr_nonnull(m);
	feed_sources(m, 1, 2, 1, 5);
	iogp_access_mem mem;
	iogp_model_access_mem(m, &mem);
	*ring = mem.ring_bytes;
	*kept = 0;
	for (size_t i = 0; i < 2; i++) {
		const iogp_access *p1, *p2;
		size_t n2 = 0;
		*kept += iogp_model_access(m, i, &p1, &n2, &p2) + n2;
	}
	iogp_access_set set;
	query(m, "posix.access", NULL, 0, &set);
	int seen[2] = { 0, 0 };
	for (size_t i = 0; i < set.n; i++)
		seen[set.s[i].source] = 1;
	ck_assert(seen[0] && seen[1]);
	*requests = set.requests;
	iogp_access_set_free(&set);
	iogp_model_free(m);
}

START_TEST(no_ring_at_scale)
{
	uint64_t r0, q0, r1, q1;
	size_t k0, k1;
	small_share(2 * 255, &r0, &q0, &k0);   /* 8,160 B a source: no ring */
	small_share(2 * 256, &r1, &q1, &k1);   /* 8,192 B: rings */
	ck_assert_uint_eq(r0, 0);
	ck_assert_uint_eq(k0, 0);
	ck_assert_uint_gt(r1, 0);
	ck_assert_uint_gt(k1, 0);
	ck_assert_uint_eq(q0, q1);   /* 5 s of 2 sources, 320 requests a second */
	ck_assert_uint_eq(q0, 5 * 2 * 320);

	/* one source: 12,800 B, a ring; a second joins: 6,400 B each, none */
	iogp_model_opts o = { .live = 1, .access_total = 400 };
	iogp_model *m = iogp_model_new(&o);
	ck_assert_ptr_nonnull(m);
	feed_sources(m, 1, 1, 1, 2);
	const iogp_access *p1, *p2;
	size_t n2;
	ck_assert_uint_gt(iogp_model_access(m, 0, &p1, &n2, &p2), 0);
	feed_sources(m, 2, 1, 1, 1);
	feed_sources(m, 1, 1, 3, 1);
	ck_assert_uint_eq(iogp_model_access(m, 0, &p1, &n2, &p2), 0);
	iogp_access_mem mem;
	iogp_model_access_mem(m, &mem);
	ck_assert_uint_eq(mem.ring_bytes, 0);
	iogp_model_free(m);
}
END_TEST

/* Sources that came first, with a large share each, give it back as
 * thousands more join: rings and stores within the bytes, all told. */
START_TEST(late_sources_bytes)
{
	enum { FIRST = 20, MORE = 2980 };
	iogp_model_opts o = { .live = 1, .access_total = (uint64_t)(FIRST + MORE) * 64 };
	iogp_model *m = iogp_model_new(&o);
	ck_assert_ptr_nonnull(m);
	feed_sources(m, 1, FIRST, 1, 30);
	iogp_access_mem mem;
	iogp_model_access_mem(m, &mem);
	ck_assert_uint_gt(mem.bytes, (uint64_t)FIRST * 8192);   /* a large share each, at first */
	feed_sources(m, FIRST + 1, MORE, 31, 10);
	feed_sources(m, 1, FIRST, 41, 1);   /* the first speak again */
	iogp_model_access_mem(m, &mem);
	uint64_t budget = o.access_total * 32;
	ck_assert_msg(mem.bytes + mem.ring_bytes <= budget, "%" PRIu64 " + %" PRIu64 " bytes of %" PRIu64,
	              mem.bytes, mem.ring_bytes, budget);
	iogp_access_set set;
	iogp_sel one = { .kind = IOGP_SEL_SOURCE, .source = 1 };
	iogp_access_query q = { .metric = "posix.access", .sel = &one };
	ck_assert_int_eq(iogp_model_access_query(m, &q, &set), 0);
	ck_assert_uint_gt(set.n, 0);   /* the first source still has samples over its run */
	ck_assert_uint_lt(set.s[0].wall_ns, TU_ACC_EPOCH_NS + 20000000000ull);
	iogp_access_set_free(&set);
	iogp_model_free(m);
}
END_TEST

/* A query's stop hook is asked before every IOGP_STOP_EVERY sources it
 * walks; one that never stops changes nothing, one that stops ends the
 * query with IOGP_ESTOPPED, nothing out and nothing leaked (ASan). */
START_TEST(stop_hook)
{
	enum { NS = 2 * IOGP_STOP_EVERY + 88 };   /* asked 3 times */
	iogp_model *m = live_model(0);
	feed_sources(m, 1, NS, 1, 3);
	iogp_access_query q = { .metric = "posix.access" };
	iogp_access_set plain, set;
	iogp_access_file *pf, *af;
	size_t npf, naf;
	ck_assert_int_eq(iogp_model_access_query(m, &q, &plain), 0);
	ck_assert_int_eq(iogp_model_access_files(m, &q, &pf, &npf), 0);
	ck_assert_uint_gt(plain.n, NS);
	ck_assert_uint_gt(npf, 0);

	tu_stopper never = { 0, 0 };
	q.stop = tu_stop_at;
	q.stop_arg = &never;
	ck_assert_int_eq(iogp_model_access_query(m, &q, &set), 0);
	ck_assert_int_eq(never.calls, 3);
	ck_assert_uint_eq(set.n, plain.n);
	ck_assert_uint_eq(set.requests, plain.requests);
	ck_assert(!memcmp(set.s, plain.s, set.n * sizeof(*set.s)));
	iogp_access_set_free(&set);
	never.calls = 0;
	ck_assert_int_eq(iogp_model_access_files(m, &q, &af, &naf), 0);
	ck_assert_int_eq(never.calls, 3);
	ck_assert_uint_eq(naf, npf);
	for (size_t i = 0; i < naf; i++) {
		ck_assert_str_eq(af[i].path, pf[i].path);
		ck_assert_uint_eq(af[i].requests, pf[i].requests);
		ck_assert_uint_eq(af[i].samples, pf[i].samples);
	}
	free(af);

	for (int at = 1; at <= 3; at++) {
		tu_stopper st = { 0, at };
		q.stop_arg = &st;
		ck_assert_int_eq(iogp_model_access_query(m, &q, &set), IOGP_ESTOPPED);
		ck_assert_int_eq(st.calls, at);
		ck_assert_ptr_null(set.s);
		ck_assert_uint_eq(set.n, 0);
		st.calls = 0;
		af = (iogp_access_file *)&st;
		naf = 7;
		ck_assert_int_eq(iogp_model_access_files(m, &q, &af, &naf), IOGP_ESTOPPED);
		ck_assert_int_eq(st.calls, at);
		ck_assert_ptr_null(af);
		ck_assert_uint_eq(naf, 0);
	}
	ck_assert_str_eq(iogp_strerror(IOGP_ESTOPPED), "stopped by the caller");
	iogp_access_set_free(&plain);
	free(pf);
	iogp_model_free(m);
}
END_TEST

int main(void)
{
	const tu_case cases[] = {
		{ "busy_run", busy_run },
		{ "window", window },
		{ "layers", layers },
		{ "hours", hours },
		{ "budget_and_sources", budget_and_sources },
		{ "many_files", many_files },
		{ "run_width_bounded", run_width_bounded },
		{ "total_budget", total_budget },
		{ "many_sources_bytes", many_sources_bytes },
		{ "late_sources_bytes", late_sources_bytes },
		{ "no_ring_at_scale", no_ring_at_scale },
		{ "stop_hook", stop_hook },
	};
	return tu_run_suite("access", cases, sizeof(cases) / sizeof(cases[0]), NULL, NULL, 120);
}
