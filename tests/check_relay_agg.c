/* check_relay_agg.c - `iogram relay --aggregate node|job`: the aggregator in
 * process against hand-made messages (exact values, gauges, bin-scheme
 * conflicts, duplicates, gaps, SNAPSHOTs that lower a total, two levels),
 * and real relays in a two-level tree fed by `iogram loadgen` over
 * loopback, every counter and every histogram bin compared with loadgen's
 * --truth, also across a relay killed and restarted mid-run, a job restarted
 * under new source ids, and hostile input. */
#include <check.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zmq.h>

#include "iogp.h"
#include "iogp_node_table.h"
#include "realistic.h"
#include "relay_agg.h"
#include "testutil.h"
#include "testutil_zmq.h"

static const char *bin;
static char dir[256];

/* ---- in process ------------------------------------------------------------ */

/* Every message an aggregator sends goes into a model (and, when set, into
 * a second aggregator: the level above). */
typedef struct sink {
	iogp_model *m;
	relay_agg *up;
	int kinds[5];
} sink;

static void to_sink(void *ctx, iogp_kind kind, uint64_t source, const uint8_t *p, size_t n)
{
	sink *s = ctx;
	(void)source;
	ck_assert_int_ge(iogp_model_feed(s->m, p, n, 1), 0);
	if (s->up)
		ck_assert_int_ge(relay_agg_feed(s->up, p, n, 1), 0);
	if (kind >= 1 && kind <= 4)
		s->kinds[kind]++;
}

static iogp_metric_def defs[4];

static void feed(relay_agg *a, iogp_msg *m)
{
	static uint8_t buf[1 << 16];
	long n = iogp_msg_encode(m, buf, sizeof(buf));
	ck_assert_int_gt(n, 0);
	relay_agg_feed(a, buf, (size_t)n, 1);
}

/* Source id with host; x.lat in log2 bins when log2 (a scheme conflict). */
static void hello(relay_agg *a, uint64_t id, const char *host, int log2, uint64_t seq,
                  iogp_kind kind)
{
	iogp_label l[2] = { { "host", host }, { "job", "42" } };
	memset(defs, 0, sizeof(defs));
	defs[0] = (iogp_metric_def){ .id = 1, .kind = IOGP_COUNTER, .name = "x.ops", .unit = "ops" };
	defs[1] = (iogp_metric_def){ .id = 2, .kind = IOGP_GAUGE, .name = "x.open", .unit = "files" };
	defs[2] = (iogp_metric_def){ .id = 3, .kind = IOGP_HISTOGRAM, .name = "x.size", .unit = "bytes" };
	iogp_bins_native(&defs[2].bins, 4);
	defs[3] = (iogp_metric_def){ .id = 4, .kind = IOGP_HISTOGRAM, .name = "x.lat", .unit = "ns" };
	if (log2)
		iogp_bins_log2(&defs[3].bins);
	else
		iogp_bins_native(&defs[3].bins, 4);
	iogp_msg m = { .kind = kind, .source = id, .seq = seq, .nlabels = 2, .labels = l,
	               .nmetrics = 4, .metrics = defs, .t1_ns = 1, .wall_ns = 1 };
	feed(a, &m);
}

/* A DELTA (or SNAPSHOT: the same values as cumulative) of ops, open, bins
 * and one exact value. */
static void values(relay_agg *a, iogp_kind kind, uint64_t id, const char *host, uint64_t seq,
                   uint64_t ops, int64_t open, uint64_t b4096, uint64_t exact)
{
	iogp_label l[2] = { { "host", host }, { "job", "42" } };
	iogp_counter_val c = { 1, ops };
	iogp_gauge_val g = { 2, open };
	uint32_t i4096 = iogp_native_index(4096, 4), i9 = iogp_native_index(9, 4);
	iogp_bin sb[2] = { { i9, ops }, { i4096, b4096 } };
	iogp_bin lb[1] = { { 5, ops } };
	iogp_hist_val h[2] = { { 3, b4096 ? 2 : 1, sb }, { 4, 1, lb } };
	iogp_exact e = { 4096, exact };
	iogp_exact_val x = { 3, 1, &e };
	iogp_msg m = { .kind = kind, .source = id, .seq = seq, .t0_ns = 1, .t1_ns = 2,
	               .wall_ns = 2, .ncounters = 1, .counters = &c, .ngauges = 1, .gauges = &g,
	               .nhists = 2, .hists = h, .nexact = exact ? 1 : 0, .exact = &x };
	if (kind == IOGP_SNAPSHOT) {
		m.nlabels = 2;
		m.labels = l;
		m.nmetrics = 4;
		m.metrics = defs;
	}
	feed(a, &m);
}

static uint64_t counter(iogp_model *m, const char *name)
{
	uint64_t v = 0;
	ck_assert_int_eq(iogp_model_counter(m, name, NULL, &v), 0);
	return v;
}

static uint64_t bin_at(iogp_model *m, const char *name, uint64_t value, uint64_t *exact)
{
	iogp_hist h;
	ck_assert_int_ge(iogp_model_hist(m, name, NULL, &h), 0);
	uint64_t c = iogp_hist_count_at(&h, iogp_bins_index(&h.scheme, value));
	if (exact) {
		*exact = 0;
		for (size_t i = 0; i < h.nexact; i++)
			if (h.exact[i].value == value)
				*exact = h.exact[i].count;
	}
	iogp_hist_free(&h);
	return c;
}

START_TEST(test_inprocess_exact)
{
	/* level 1 per node, level 2 per job; a sink behind each */
	sink top = { .m = iogp_model_new(NULL) };
	relay_agg *l2 = relay_agg_new(RELAY_AGG_JOB, 0, 1000);
	sink mid = { .m = iogp_model_new(NULL), .up = l2 };
	relay_agg *l1 = relay_agg_new(RELAY_AGG_NODE, 0, 5000);
	ck_assert_ptr_nonnull(l1);
	/* A and B on n1 (B's x.lat in log2 bins: left out), C on n2 */
	hello(l1, 0xA, "n1", 0, 0, IOGP_HELLO);
	hello(l1, 0xB, "n1", 1, 0, IOGP_HELLO);
	values(l1, IOGP_DELTA, 0xA, "n1", 1, 10, 3, 5, 5);
	values(l1, IOGP_DELTA, 0xB, "n1", 1, 7, 2, 1, 0);
	relay_agg_flush(l1, 10, 10, to_sink, &mid);
	relay_agg_flush(l2, 10, 10, to_sink, &top);
	hello(l1, 0xC, "n2", 0, 0, IOGP_HELLO);
	values(l1, IOGP_DELTA, 0xA, "n1", 2, 4, 1, 2, 2);
	values(l1, IOGP_DELTA, 0xA, "n1", 2, 4, 1, 2, 2);        /* duplicate: ignored */
	values(l1, IOGP_DELTA, 0xA, "n1", 4, 6, 5, 0, 0);        /* seq 3 lost: a gap */
	values(l1, IOGP_DELTA, 0xC, "n2", 1, 100, 7, 50, 50);
	relay_agg_flush(l1, 20, 20, to_sink, &mid);
	relay_agg_flush(l2, 20, 20, to_sink, &top);
	/* A's SNAPSHOT: its whole state, with seq 3's 1 op and 1 4 KiB request */
	values(l1, IOGP_SNAPSHOT, 0xA, "n1", 5, 21, 6, 8, 8);
	/* B's SNAPSHOT says less than its DELTA added (5 ops, not 7) */
	values(l1, IOGP_SNAPSHOT, 0xB, "n1", 2, 5, 2, 1, 0);
	iogp_msg bye = { .kind = IOGP_BYE, .source = 0xC, .seq = 2 };
	feed(l1, &bye);
	int before = mid.kinds[IOGP_SNAPSHOT];
	relay_agg_flush(l1, 30, 30, to_sink, &mid);
	ck_assert_int_gt(mid.kinds[IOGP_SNAPSHOT], before);   /* a total went down */
	relay_agg_flush(l2, 30, 30, to_sink, &top);
	/* a late joiner, known only by its SNAPSHOT */
	hello(l1, 0xD, "n2", 0, 7, IOGP_SNAPSHOT);
	values(l1, IOGP_SNAPSHOT, 0xD, "n2", 8, 1000, 9, 0, 0);
	relay_agg_flush(l1, 40, 40, to_sink, &mid);
	relay_agg_flush(l2, 40, 40, to_sink, &top);
	ck_assert_int_eq(relay_agg_feed(l1, "IOGWgarbage", 11, 1), IOGP_EINVAL);

	/* truth: A 21 ops (8 of them 4 KiB, exact), B 5, C 100, D 1000 */
	uint64_t ex;
	ck_assert_uint_eq(iogp_model_source_count(mid.m), 2);   /* n1, n2 */
	ck_assert_uint_eq(iogp_model_source_count(top.m), 1);   /* job 42 */
	for (int lv = 0; lv < 2; lv++) {
		iogp_model *m = lv ? top.m : mid.m;
		ck_assert_uint_eq(counter(m, "x.ops"), 21 + 5 + 100 + 1000);
		ck_assert_uint_eq(bin_at(m, "x.size", 9, NULL), 21 + 5 + 100 + 1000);
		ck_assert_uint_eq(bin_at(m, "x.size", 4096, &ex), 8 + 1 + 50);
		ck_assert_uint_eq(ex, 8 + 50);
		/* B's log2 latency is not merged into the native bins */
		ck_assert_uint_eq(bin_at(m, "x.lat", 5, NULL), 21 + 100 + 1000);
		int64_t g = 0;
		ck_assert_int_eq(iogp_model_gauge(m, "x.open", NULL, &g), 0);
		ck_assert_int_eq(g, 6 + 2 + 7 + 9);
	}
	ck_assert_str_eq(iogp_model_source_label(top.m, 0, "aggregate"), "job");
	ck_assert_str_eq(iogp_model_source_label(top.m, 0, "sources"), "2");
	ck_assert_str_eq(iogp_model_source_label(mid.m, 0, "node"), "n1");
	ck_assert_str_eq(iogp_model_source_label(mid.m, 1, "sources"), "2");
	relay_agg_stats st;
	relay_agg_get_stats(l1, &st);
	ck_assert_uint_eq(st.conflicts, 1);
	ck_assert_uint_eq(st.malformed, 1);
	ck_assert_uint_eq(st.members, 4);
	iogp_model_stats ms;
	iogp_model_get_stats(top.m, &ms);
	ck_assert_uint_eq(ms.gaps, 0);
	ck_assert_uint_eq(ms.unknown, 0);
	relay_agg_free(l1);
	relay_agg_free(l2);
	iogp_model_free(mid.m);
	iogp_model_free(top.m);
}
END_TEST

static void to_nothing(void *ctx, iogp_kind kind, uint64_t source, const uint8_t *p, size_t n)
{
	/* whatever goes out must decode */
	iogp_msg m;
	iogp_msg_init(&m);
	ck_assert_int_eq(iogp_msg_decode(&m, p, n, NULL, 0), 0);
	ck_assert_uint_eq(m.source, source);
	ck_assert_int_eq(m.kind, kind);
	iogp_msg_free(&m);
	(*(int *)ctx)++;
}

/* The interval of a member's summary DELTA (source 1) a flush sends. */
static void summary_t0(void *ctx, iogp_kind kind, uint64_t source, const uint8_t *p, size_t n)
{
	static iogp_msg m;
	if (kind != IOGP_DELTA || source != 1)
		return;
	ck_assert_int_eq(iogp_msg_decode(&m, p, n, NULL, 0), 0);
	((uint64_t *)ctx)[0] = m.t0_ns;
	((uint64_t *)ctx)[1] = m.t1_ns;
}

START_TEST(test_summary_interval)
{
	/* a relay started among busy members: its first summaries' interval
	 * starts at that flush, not at 0 (a span of the host's uptime) */
	relay_agg *a = relay_agg_new(RELAY_AGG_NODE, 1, 1);
	realistic *r = realistic_new(3);
	iogp_msg m;
	iogp_msg_init(&m);
	uint8_t *buf = malloc(IOGP_MAX_PAYLOAD);
	uint64_t t[2] = { 0, 0 };
	for (uint64_t seq = 0; seq < 3; seq++) {
		if (seq)
			realistic_delta(r, &m, seq);
		else
			realistic_hello(r, &m);
		m.source = 1;
		long n = iogp_msg_encode(&m, buf, IOGP_MAX_PAYLOAD);
		ck_assert_int_eq(relay_agg_feed(a, buf, (size_t)n, 1), 0);
		if (!seq)
			continue;
		relay_agg_flush(a, seq * 5000000000ull, seq, summary_t0, t);
		/* first [5 s, 5 s], then [5 s, 10 s]: from the previous flush */
		ck_assert_uint_eq(t[0], 5000000000ull);
		ck_assert_uint_eq(t[1], seq * 5000000000ull);
	}
	free(buf);
	iogp_msg_free(&m);
	realistic_free(r);
	relay_agg_free(a);
}
END_TEST

START_TEST(test_inprocess_hostile)
{
	/* realistic DELTAs of 8 sources, each also fed damaged (bytes flipped,
	 * cut, a broken sequence varint): refused and counted, no crash (ASan
	 * build: no bad access), whatever goes out decodes */
	relay_agg *a = relay_agg_new(RELAY_AGG_NODE, 1, 1);
	realistic *r = realistic_new(7);
	iogp_msg m;
	iogp_msg_init(&m);
	uint8_t *buf = malloc(IOGP_MAX_PAYLOAD), *bad = malloc(IOGP_MAX_PAYLOAD);
	uint64_t rng = 12345;
	int sent = 0;
	long n;
	realistic_hello(r, &m);
	for (uint64_t s = 1; s <= 8; s++) {
		m.source = s;
		n = iogp_msg_encode(&m, buf, IOGP_MAX_PAYLOAD);
		ck_assert_int_eq(relay_agg_feed(a, buf, (size_t)n, 1), 0);
	}
	for (int i = 0; i < 20000; i++) {
		uint64_t s = 1 + i % 8, seq = 1 + (uint64_t)i / 8;
		realistic_delta(r, &m, seq);
		m.source = s;
		n = iogp_msg_encode(&m, buf, IOGP_MAX_PAYLOAD);
		ck_assert_int_gt(n, 0);
		memcpy(bad, buf, (size_t)n);
		size_t len = (size_t)n;
		switch (tu_splitmix(&rng) % 3) {
		case 0:
			for (int k = 0; k < 4; k++)
				bad[tu_splitmix(&rng) % len] ^= (uint8_t)(1 + tu_splitmix(&rng) % 255);
			break;
		case 1:
			len = tu_splitmix(&rng) % len;
			break;
		default:
			bad[16] = 0xff;   /* a 10-byte seq varint... */
			break;
		}
		relay_agg_feed(a, bad, len, 1);
		/* then the valid one (a flipped byte may have made a message the
		 * model takes, a false sequence jump say: no totals asserted here) */
		relay_agg_feed(a, buf, (size_t)n, 1);
		if (i % 800 == 799)
			relay_agg_flush(a, 1 + (uint64_t)i, 1 + (uint64_t)i, to_nothing, &sent);
	}
	relay_agg_snapshots(a, 30000, 30000, IOGP_F_FINAL, to_nothing, &sent);
	relay_agg_bye(a, to_nothing, &sent);
	relay_agg_stats st;
	relay_agg_get_stats(a, &st);
	ck_assert_uint_gt(st.malformed + st.refused, 5000);
	ck_assert_int_gt(sent, 25);
	realistic_free(r);
	iogp_msg_free(&m);
	free(buf);
	free(bad);
	relay_agg_free(a);
}
END_TEST

/* ---- real processes ----------------------------------------------------------- */

static pid_t spawn(const char *name, char *const argv[])
{
	tu_opts o = { .out = tu_fmt("%s/%s.out", dir, name), .err = tu_fmt("%s/%s.err", dir, name) };
	return tu_spawn_opt(argv, &o);
}
#define SPAWN(name, ...) spawn(name, (char *const[]){ (char *)bin, __VA_ARGS__, NULL })

static char *slurp(const char *path)
{
	char *s = tu_read_file(path, NULL);
	return s ? s : strdup("");
}

/* Every line of loadgen's truth (counters, histogram totals, every bin)
 * against the recording; returns the values compared. */
static int check_truth(const char *file, const char *truth, int want_sources)
{
	iogp_model *m = iogp_model_new(NULL);
	iogp_load_stats st;
	char err[256];
	ck_assert_int_eq(iogp_load_file(file, m, &st, err, sizeof(err)), 0);
	ck_assert_uint_eq(iogp_model_source_count(m), (size_t)want_sources);
	char *t = slurp(truth), *save = NULL;
	int n = 0;
	for (char *line = strtok_r(t, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *comma = strrchr(line, ',');
		ck_assert_ptr_nonnull(comma);
		*comma = 0;
		uint64_t want = strtoull(comma + 1, NULL, 10), got = 0;
		if (!strcmp(line, "metric") || !strcmp(line, "sources") || !strcmp(line, "restarts"))
			continue;   /* not metrics */
		char *at = strchr(line, '@');
		iogp_hist h;
		if (at) {
			*at = 0;
			ck_assert_int_eq(iogp_model_hist(m, line, NULL, &h), 0);
			got = iogp_hist_count_at(&h, strtoull(at + 1, NULL, 10));
			iogp_hist_free(&h);
		} else if (iogp_model_counter(m, line, NULL, &got) < 0) {
			ck_assert_int_eq(iogp_model_hist(m, line, NULL, &h), 0);
			got = h.total;
			iogp_hist_free(&h);
		}
		ck_assert_msg(got == want, "%s%s%s: recorded %llu, sent %llu", line, at ? "@" : "",
		              at ? at + 1 : "", (unsigned long long)got, (unsigned long long)want);
		n++;
	}
	free(t);
	iogp_model_free(m);
	return n;
}

static uint64_t truth_of(const char *truth, const char *metric)
{
	char *t = slurp(truth);
	char *p = strstr(t, tu_fmt("\n%s,", metric));
	ck_assert_msg(p != NULL, "%s not in %s", metric, truth);
	uint64_t v = strtoull(p + strlen(metric) + 2, NULL, 10);
	free(t);
	return v;
}

/* Behind node relays under a job relay: the nodes and ranks table from
 * the members' summaries (the job streams' names are no nodes). */
static void check_job_tables(const iogp_model *m, const char *truth)
{
	iogp_node_table t;
	iogp_nt_opts o = { .scope = IOGP_NT_NODES };
	ck_assert_int_eq(iogp_node_table_build(&t, m, &o), 0);
	ck_assert_uint_eq(t.n, 8);
	double bytes = 0;
	uint32_t sources = 0;
	int seen[8] = { 0 };
	for (size_t i = 0; i < t.n; i++) {
		/* rows in the order the nodes reached the model: the node relays'
		 * summaries race to the job relay */
		unsigned k = 8;
		ck_assert_msg(sscanf(t.rows[i].name, "node%4u", &k) == 1 && k < 8 && !seen[k]++,
		              "row %zu: %s", i, t.rows[i].name);
		bytes += t.rows[i].v[IOGP_NT_READ_BPS] * t.rows[i].span_s;
		sources += t.rows[i].sources;
		ck_assert(t.rows[i].v[IOGP_NT_IOTIME] > 0);
	}
	uint64_t want = truth_of(truth, "posix.read.bytes");
	ck_assert_msg(fabs(bytes - (double)want) <= 1e-6 * (double)want, "nodes read %.0f, truth %" PRIu64,
	              bytes, want);
	ck_assert_uint_eq(sources, 96);
	iogp_node_table_free(&t);
	o.scope = IOGP_NT_SOURCES;
	ck_assert_int_eq(iogp_node_table_build(&t, m, &o), 0);
	ck_assert_uint_eq(t.n, 96);
	for (size_t i = 0; i < t.n; i++)
		ck_assert_msg(!strncmp(t.rows[i].name, "rank ", 5), "row %s", t.rows[i].name);
	iogp_node_table_free(&t);
}

static int stop(pid_t p)
{
	return tu_stop(p, SIGTERM, 15);
}

START_TEST(test_tree_exact)
{
	/* 96 sources on 8 nodes in 2 jobs -> node relay -> job relay -> recorder */
	int p1 = tu_free_port(), p2 = tu_free_port(), p3 = tu_free_port();
	char *file = tu_fmt("%s/top.iogr", dir), *truth = tu_fmt("%s/truth.csv", dir);
	pid_t rec = SPAWN("rec", "record", "--listen", tu_ep(p3), "-o", file);
	pid_t r2 = SPAWN("r2", "relay", "--aggregate", "job", "--listen", tu_ep(p2), "--upstream", tu_ep(p3));
	pid_t r1 = SPAWN("r1", "relay", "--aggregate", "node", "--interval", "0.5", "--summaries",
	                 "--listen", tu_ep(p1), "--upstream", tu_ep(p2));
	tu_sleep_ms(500);
	pid_t lg = SPAWN("lg", "loadgen", "--sources", "96", "--rate", "10", "--duration", "4",
	                 "--nodes", "8", "--jobs", "2", "--endpoint", tu_ep(p1), "--truth", truth);
	ck_assert_int_eq(tu_wait(lg, 60), 0);
	tu_sleep_ms(1500);
	ck_assert_int_eq(stop(r1), 0);
	tu_sleep_ms(500);
	ck_assert_int_eq(stop(r2), 0);
	tu_sleep_ms(500);
	ck_assert_int_eq(stop(rec), 0);
	/* 2 job streams and the 96 sources' summaries, passed on by the job relay */
	ck_assert_int_gt(check_truth(file, truth, 2 + 96), 100);
	iogp_model *m = iogp_model_new(NULL);
	iogp_load_stats ls;
	char err[256];
	ck_assert_int_eq(iogp_load_file(file, m, &ls, err, sizeof(err)), 0);
	ck_assert_uint_eq(counter(m, "summary.read.bytes"), truth_of(truth, "posix.read.bytes"));
	ck_assert_uint_eq(counter(m, "summary.write.bytes"), truth_of(truth, "posix.write.bytes"));
	ck_assert_uint_eq(counter(m, "summary.ops"),
	                  truth_of(truth, "posix.read.ops") + truth_of(truth, "posix.write.ops"));
	int summaries = 0;
	for (size_t i = 0; i < iogp_model_source_count(m); i++) {
		iogp_source_info si;
		ck_assert_int_eq(iogp_model_source(m, i, &si), 0);
		if (!iogp_model_source_label(m, i, "summary"))
			continue;
		summaries++;
		ck_assert_ptr_nonnull(iogp_model_source_label(m, i, "rank"));
		iogp_sel one = { .kind = IOGP_SEL_SOURCE, .source = si.id };
		uint64_t t = 0;
		int64_t p99 = 0;
		ck_assert_int_eq(iogp_model_counter(m, "summary.io_time", &one, &t), 0);
		ck_assert_int_eq(iogp_model_gauge(m, "summary.latency.p99", &one, &p99), 0);
		ck_assert_uint_gt(t, 0);
		/* realistic latencies: tens of us to a few ms */
		ck_assert_int_gt(p99, 10000);
		ck_assert_int_lt(p99, 100000000);
	}
	ck_assert_int_eq(summaries, 96);
	check_job_tables(m, truth);
	iogp_model_free(m);
	char *e1 = slurp(tu_fmt("%s/r1.err", dir)), *e2 = slurp(tu_fmt("%s/r2.err", dir));
	ck_assert_msg(strstr(e1, "from 96 sources into 8 node streams") != NULL, "%s", e1);
	ck_assert_msg(strstr(e2, "from 8 sources into 2 job streams") != NULL, "%s", e2);
	ck_assert_msg(strstr(e1, "malformed 0, refused 0, metric conflicts 0") != NULL, "%s", e1);
	free(e1);
	free(e2);
}
END_TEST

START_TEST(test_tree_restarts)
{
	/* job A's 48 sources end; the node relay is killed (-9) mid-run and
	 * started again (its members answer it with SNAPSHOTs, the job relay
	 * sees a gap and resyncs from its SNAPSHOT); job B, new source ids on
	 * the same nodes, runs after. The top: the sum of both jobs. */
	int p1 = tu_free_port(), p2 = tu_free_port(), p3 = tu_free_port();
	char *file = tu_fmt("%s/top.iogr", dir), *ta = tu_fmt("%s/ta.csv", dir),
	     *tb = tu_fmt("%s/tb.csv", dir), *truth = tu_fmt("%s/truth.csv", dir);
	pid_t rec = SPAWN("rec", "record", "--listen", tu_ep(p3), "-o", file);
	pid_t r2 = SPAWN("r2", "relay", "--aggregate", "job", "--listen", tu_ep(p2), "--upstream", tu_ep(p3));
	pid_t r1 = SPAWN("r1", "relay", "--aggregate", "node", "--listen", tu_ep(p1), "--upstream", tu_ep(p2));
	tu_sleep_ms(500);
	pid_t lg = SPAWN("lga", "loadgen", "--sources", "48", "--rate", "10", "--duration", "5",
	                 "--nodes", "4", "--jobs", "1", "--endpoint", tu_ep(p1), "--truth", ta);
	tu_sleep_ms(2200);
	kill(r1, SIGKILL);
	ck_assert_int_eq(tu_wait(r1, 5), 128 + SIGKILL);
	tu_sleep_ms(300);
	r1 = SPAWN("r1b", "relay", "--aggregate", "node", "--listen", tu_ep(p1), "--upstream", tu_ep(p2));
	ck_assert_int_eq(tu_wait(lg, 60), 0);
	lg = SPAWN("lgb", "loadgen", "--sources", "48", "--rate", "10", "--duration", "3", "--seed", "2",
	           "--nodes", "4", "--jobs", "1", "--endpoint", tu_ep(p1), "--truth", tb);
	ck_assert_int_eq(tu_wait(lg, 60), 0);
	tu_sleep_ms(1500);
	ck_assert_int_eq(stop(r1), 0);
	tu_sleep_ms(500);
	ck_assert_int_eq(stop(r2), 0);
	tu_sleep_ms(500);
	ck_assert_int_eq(stop(rec), 0);
	/* truth = A + B, line by line (same metrics; bins merged by key) */
	FILE *f = fopen(truth, "w");
	ck_assert_ptr_nonnull(f);
	char *a = slurp(ta), *b = slurp(tb);
	/* keys of A, then B's keys added */
	char **keys = calloc(4096, sizeof(char *));
	unsigned long long *vals = calloc(4096, sizeof(*vals));
	int nk = 0;
	for (int w = 0; w < 2; w++) {
		char *save = NULL;
		for (char *line = strtok_r(w ? b : a, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			char *comma = strrchr(line, ',');
			*comma = 0;
			if (!strcmp(line, "metric"))
				continue;
			int k;
			for (k = 0; k < nk && strcmp(keys[k], line); k++)
				;
			if (k == nk) {
				ck_assert_int_lt(nk, 4096);
				keys[nk++] = strdup(line);
			}
			vals[k] += strtoull(comma + 1, NULL, 10);
		}
	}
	fprintf(f, "metric,value\n");
	for (int k = 0; k < nk; k++) {
		fprintf(f, "%s,%llu\n", keys[k], vals[k]);
		free(keys[k]);
	}
	fclose(f);
	free(keys);
	free(vals);
	free(a);
	free(b);
	ck_assert_int_gt(check_truth(file, truth, 1), 100);
	char *e1 = slurp(tu_fmt("%s/r1b.err", dir)), *e2 = slurp(tu_fmt("%s/r2.err", dir));
	ck_assert_msg(strstr(e1, "from 96 sources into 4 node streams") != NULL, "%s", e1);
	/* the restarted node relay continued its streams above the old
	 * numbers: the job relay took every message (a gap per node stream) */
	ck_assert_msg(strstr(e2, "from 4 sources into 1 job streams") != NULL, "%s", e2);
	ck_assert_msg(strstr(e2, ", duplicates 0,") != NULL, "%s", e2);
	free(e1);
	free(e2);
}
END_TEST

START_TEST(test_hostile_input)
{
	int p1 = tu_free_port(), p3 = tu_free_port();
	char *file = tu_fmt("%s/top.iogr", dir), *truth = tu_fmt("%s/truth.csv", dir);
	pid_t rec = SPAWN("rec", "record", "--listen", tu_ep(p3), "-o", file);
	pid_t r1 = SPAWN("r1", "relay", "--aggregate", "node", "--listen", tu_ep(p1), "--upstream", tu_ep(p3));
	ck_assert(tu_wait_port(p1, 30) && tu_wait_port(p3, 30));
	void *ctx = zmq_ctx_new(), *pub = tu_pub_heard(ctx, tu_ep(p1), 0, 30);
	zmq_send(pub, "iog1/delta/x", 12, 0);                          /* one frame */
	zmq_send(pub, "iog1/delta/x", 12, ZMQ_SNDMORE);
	zmq_send(pub, "garbage that is not a message", 29, 0);        /* bad payload */
	zmq_send(pub, "iog1/delta/x", 12, ZMQ_SNDMORE);
	zmq_send(pub, "IOGW\x01\x02", 6, ZMQ_SNDMORE);
	zmq_send(pub, "third frame", 11, 0);                           /* three frames */
	/* a well-formed DELTA from a source nobody announced: refused */
	uint8_t buf[256];
	iogp_counter_val c = { 1, 1000000 };
	iogp_msg m = { .kind = IOGP_DELTA, .source = 77, .seq = 1, .ncounters = 1, .counters = &c };
	long n = iogp_msg_encode(&m, buf, sizeof(buf));
	ck_assert_int_gt(n, 0);
	zmq_send(pub, "iog1/delta/x", 12, ZMQ_SNDMORE);
	zmq_send(pub, buf, (size_t)n, 0);
	pid_t lg = SPAWN("lg", "loadgen", "--sources", "16", "--rate", "10", "--duration", "2",
	                 "--nodes", "2", "--endpoint", tu_ep(p1), "--truth", truth);
	ck_assert_int_eq(tu_wait(lg, 60), 0);
	tu_sleep_ms(1500);
	ck_assert_int_eq(stop(r1), 0);   /* alive, and stops cleanly */
	tu_sleep_ms(500);
	ck_assert_int_eq(stop(rec), 0);
	int linger = 0;
	zmq_setsockopt(pub, ZMQ_LINGER, &linger, sizeof(linger));
	zmq_close(pub);
	zmq_ctx_term(ctx);
	char *e1 = slurp(tu_fmt("%s/r1.err", dir));
	ck_assert_msg(strstr(e1, "malformed 3, refused 1,") != NULL, "%s", e1);
	free(e1);
	ck_assert_int_gt(check_truth(file, truth, 2), 100);
}
END_TEST

static void setup(void)
{
	bin = getenv("IOGRAM_BIN");
	ck_assert_msg(bin != NULL, "IOGRAM_BIN must be set (run via meson test)");
	tu_tmpdir(dir, sizeof(dir), "iogram-check-relay-agg");
}

static void teardown(void)
{
	ck_assert_int_eq(tu_rmdir_all(dir), 0);
}

int main(void)
{
	const tu_case cases[] = {
		{ "inprocess_exact", test_inprocess_exact },
		{ "inprocess_hostile", test_inprocess_hostile },
		{ "summary_interval", test_summary_interval },
		{ "tree_exact", test_tree_exact },
		{ "tree_restarts", test_tree_restarts },
		{ "hostile_input", test_hostile_input },
	};
	return tu_run_suite("relay_agg", cases, sizeof(cases) / sizeof(cases[0]), setup, teardown, 180);
}
