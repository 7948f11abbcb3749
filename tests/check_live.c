/* check_live.c - iogram record / relay / merge / cat / loadgen as real
 * processes on real loopback sockets. */
#include <inttypes.h>
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "iogp.h"
#include "testutil.h"
#include "testutil_zmq.h"

static const char *bin;
static char dir[256];

/* Start argv in the background, stdout/stderr to files in dir; returns pid. */
static pid_t spawn(const char *name, long fsize_limit, char *const argv[])
{
	tu_opts o = { .out = tu_fmt("%s/%s.out", dir, name), .err = tu_fmt("%s/%s.err", dir, name),
	              .fsize = fsize_limit };
	return tu_spawn_opt(argv, &o);
}
#define SPAWN(name, ...) spawn(name, 0, (char *const[]){ (char *)bin, __VA_ARGS__, NULL })

static int stop(pid_t pid)
{
	return tu_stop(pid, SIGTERM, 10);
}

/* A file's text (malloc'd; "" when there is none). */
static char *slurp(const char *path)
{
	char *s = tu_read_file(path, NULL);
	return s ? s : strdup("");
}

static unsigned long long truth_value(const char *truth, const char *metric)
{
	char *t = slurp(truth);
	char *p = strstr(t, tu_fmt("\n%s,", metric));
	ck_assert_msg(p != NULL, "%s not in %s", metric, truth);
	unsigned long long v = strtoull(p + strlen(metric) + 2, NULL, 10);
	free(t);
	return v;
}

/* Load a recording and return a counter / histogram total over all sources. */
static unsigned long long recorded(const char *file, const char *metric, iogp_load_stats *st)
{
	iogp_model *m = iogp_model_new(NULL);
	char err[256];
	iogp_load_stats tmp;
	ck_assert_int_eq(iogp_load_file(file, m, st ? st : &tmp, err, sizeof(err)), 0);
	iogp_sel all = { .kind = IOGP_SEL_ALL };
	uint64_t v = 0;
	if (iogp_model_counter(m, metric, &all, &v) < 0) {
		iogp_hist h;
		ck_assert_int_eq(iogp_model_hist(m, metric, &all, &h), 0);
		v = h.total;
		iogp_hist_free(&h);
	}
	iogp_model_free(m);
	return v;
}

static void check_totals(const char *file, const char *truth)
{
	const char *ms[] = { "posix.read.ops", "posix.read.bytes", "posix.write.bytes",
	                     "posix.meta.ops", "posix.read.size", "posix.queue_depth" };
	for (int i = 0; i < 6; i++)
		ck_assert_uint_eq(recorded(file, ms[i], NULL), truth_value(truth, ms[i]));
}

static void setup(void)
{
	bin = getenv("IOGRAM_BIN");
	ck_assert_msg(bin != NULL, "IOGRAM_BIN must be set (run via meson test)");
	tu_tmpdir(dir, sizeof(dir), "iogram-check-live");
}

static void teardown(void)
{
	ck_assert_int_eq(tu_rmdir_all(dir), 0);
}

START_TEST(test_record_direct)
{
	int p = tu_free_port();
	char *file = tu_fmt("%s/a.iogr", dir), *truth = tu_fmt("%s/truth.csv", dir);
	pid_t rec = SPAWN("rec", "record", "--listen", tu_ep(p), "-o", file);
	tu_sleep_ms(200);
	pid_t lg = SPAWN("lg", "loadgen", "--sources", "16", "--rate", "20", "--duration", "3",
	                 "--endpoint", tu_ep(p), "--truth", truth);
	ck_assert_int_eq(tu_wait(lg, 30), 0);
	tu_sleep_ms(500);
	ck_assert_int_eq(stop(rec), 0);
	iogp_load_stats st;
	recorded(file, "posix.read.ops", &st);
	ck_assert_int_eq(st.info.index_found, 1);   /* SIGTERM closed it cleanly */
	ck_assert_uint_ge(st.by_kind[IOGP_DELTA], 16 * 20 * 2);
	ck_assert_uint_eq(st.by_kind[IOGP_BYE], 16);
	check_totals(file, truth);
	char *err = slurp(tu_fmt("%s/rec.err", dir));
	ck_assert_ptr_nonnull(strstr(err, "from 16 sources"));
	ck_assert_ptr_nonnull(strstr(err, "0 lost (gaps), 0 refused"));
	free(err);
}
END_TEST

/* Sources that crash and come back under new ids: every life's totals
 * reach the file, and the model links each restart to the life before. */
START_TEST(test_loadgen_restarts)
{
	int p = tu_free_port();
	char *file = tu_fmt("%s/r.iogr", dir), *truth = tu_fmt("%s/rtruth.csv", dir);
	pid_t rec = SPAWN("rec", "record", "--listen", tu_ep(p), "-o", file);
	tu_sleep_ms(200);
	pid_t lg = SPAWN("lg", "loadgen", "--sources", "12", "--rate", "10", "--duration", "4",
	                 "--restarts", "1.5", "--nodes", "3", "--endpoint", tu_ep(p), "--truth", truth);
	ck_assert_int_eq(tu_wait(lg, 30), 0);
	tu_sleep_ms(500);
	ck_assert_int_eq(stop(rec), 0);
	unsigned long long restarts = truth_value(truth, "restarts");
	ck_assert_uint_ge(restarts, 12);   /* each at least once in 4 s */
	check_totals(file, truth);
	iogp_model *m = iogp_model_new(NULL);
	char err[256];
	iogp_load_stats st;
	ck_assert_int_eq(iogp_load_file(file, m, &st, err, sizeof(err)), 0);
	ck_assert_uint_eq(iogp_model_source_count(m), 12 + restarts);
	size_t linked = 0;
	for (size_t i = 0; i < iogp_model_source_count(m); i++) {
		iogp_source_info si;
		ck_assert_int_eq(iogp_model_source(m, i, &si), 0);
		linked += si.restart_of >= 0;
	}
	ck_assert_uint_eq(linked, restarts);
	iogp_model_free(m);
}
END_TEST

/* loadgen's SNAPSHOTs come as an agent's (agent/publisher.c): once a
 * source's DELTAs since its last add up to 16 times that one's size, not
 * every 10 s for every source at once. */
START_TEST(test_loadgen_snapshots)
{
	int p = tu_free_port();
	char *file = tu_fmt("%s/s.iogr", dir);
	pid_t rec = SPAWN("rec", "record", "--listen", tu_ep(p), "-o", file);
	tu_sleep_ms(200);
	pid_t lg = SPAWN("lg", "loadgen", "--sources", "3", "--rate", "200", "--duration", "12",
	                 "--endpoint", tu_ep(p));
	ck_assert_int_eq(tu_wait(lg, 60), 0);
	tu_sleep_ms(500);
	ck_assert_int_eq(stop(rec), 0);
	iogp_replay_reader *r;
	char err[256];
	ck_assert_int_eq(iogp_replay_open(&r, file, err, sizeof(err)), 0);
	struct { uint64_t id, since, snap, periodic, deltas; } src[3] = { { 0 } };
	iogp_replay_rec rc;
	iogp_msg m;
	iogp_msg_init(&m);
	while (iogp_replay_next(r, &rc) == 0) {
		if (rc.keyframe || iogp_msg_decode(&m, rc.payload, rc.len, NULL, 0) < 0)
			continue;
		int k = 0;
		while (k < 3 && src[k].id && src[k].id != m.source)
			k++;
		ck_assert_int_lt(k, 3);
		src[k].id = m.source;
		if (m.kind == IOGP_DELTA) {
			src[k].since += rc.len;
			src[k].deltas++;
		} else if (m.kind == IOGP_SNAPSHOT && !(m.flags & IOGP_F_FINAL)) {
			/* the first answers the recorder's subscription */
			if (src[k].snap) {
				ck_assert_msg(src[k].since >= 16 * src[k].snap,
				              "a SNAPSHOT after %" PRIu64 " B of DELTAs, the last was %" PRIu64 " B",
				              src[k].since, src[k].snap);
				src[k].periodic++;
			}
			src[k].snap = rc.len;
			src[k].since = 0;
		}
	}
	for (int k = 0; k < 3; k++) {
		ck_assert_uint_ge(src[k].deltas, 1500);
		/* 12 s of 200 DELTAs a second: several by size, none by the clock */
		ck_assert_msg(src[k].periodic >= 2 && src[k].since < 16 * src[k].snap,
		              "source %d: %" PRIu64 " periodic SNAPSHOTs, %" PRIu64 " B of DELTAs after the last",
		              k, src[k].periodic, src[k].since);
	}
	iogp_msg_free(&m);
	iogp_replay_close_reader(r);
}
END_TEST

START_TEST(test_relay_tree_256)
{
	/* 256 emulated sources -> relay -> relay -> recorder: exact totals */
	int p1 = tu_free_port(), p2 = tu_free_port(), p3 = tu_free_port();
	char *file = tu_fmt("%s/tree.iogr", dir), *truth = tu_fmt("%s/truth.csv", dir);
	pid_t r1 = SPAWN("r1", "relay", "--listen", tu_ep(p1), "--upstream", tu_ep(p2));
	pid_t r2 = SPAWN("r2", "relay", "--listen", tu_ep(p2), "--publish", tu_ep(p3));
	pid_t rec = SPAWN("rec", "record", "--connect", tu_ep(p3), "-o", file);
	tu_sleep_ms(300);
	pid_t lg = SPAWN("lg", "loadgen", "--sources", "256", "--rate", "10", "--duration", "4",
	                 "--endpoint", tu_ep(p1), "--truth", truth);
	ck_assert_int_eq(tu_wait(lg, 60), 0);
	tu_sleep_ms(800);
	ck_assert_int_eq(stop(rec), 0);
	ck_assert_int_eq(stop(r1), 0);
	ck_assert_int_eq(stop(r2), 0);
	iogp_load_stats st;
	recorded(file, "posix.read.ops", &st);
	ck_assert_uint_eq(st.by_kind[IOGP_BYE], 256);
	check_totals(file, truth);
	char *err = slurp(tu_fmt("%s/r2.err", dir));
	ck_assert_ptr_nonnull(strstr(err, "relay passed"));
	ck_assert_ptr_nonnull(strstr(err, "dropped 0"));
	free(err);
}
END_TEST

START_TEST(test_recorder_restart_resyncs)
{
	/* recorder A dies (kill -9) mid-run; recorder B starts later: B's file is
	 * exact (SNAPSHOT on subscribe + FINAL); A's is readable up to its last flush */
	int p = tu_free_port();
	char *fa = tu_fmt("%s/a.iogr", dir), *fb = tu_fmt("%s/b.iogr", dir), *truth = tu_fmt("%s/truth.csv", dir);
	pid_t a = SPAWN("a", "record", "--listen", tu_ep(p), "-o", fa);
	ck_assert(tu_wait_port(p, 30) && tu_wait_file(fa, 30));
	struct stat sa;
	ck_assert_int_eq(stat(fa, &sa), 0);
	off_t header = sa.st_size;
	pid_t lg = SPAWN("lg", "loadgen", "--sources", "32", "--rate", "10", "--duration", "6",
	                 "--endpoint", tu_ep(p), "--truth", truth);
	tu_sleep_ms(2000);
	/* A has flushed messages (once a second) before it dies */
	for (double end = tu_now() + 10; stat(fa, &sa) == 0 && sa.st_size <= header && tu_now() < end;)
		tu_sleep_ms(50);
	kill(a, SIGKILL);
	ck_assert_int_eq(tu_wait(a, 5), 128 + SIGKILL);
	tu_sleep_ms(500);
	pid_t b = SPAWN("b", "record", "--listen", tu_ep(p), "-o", fb);
	ck_assert_int_eq(tu_wait(lg, 60), 0);
	tu_sleep_ms(800);
	ck_assert_int_eq(stop(b), 0);
	check_totals(fb, truth);
	iogp_load_stats st;
	unsigned long long ra = recorded(fa, "posix.read.ops", &st);
	ck_assert_int_eq(st.info.index_found, 0);
	ck_assert_uint_gt(ra, 0);
	ck_assert_uint_lt(ra, truth_value(truth, "posix.read.ops"));
}
END_TEST

START_TEST(test_malformed_counted)
{
	int p = tu_free_port();
	char *file = tu_fmt("%s/m.iogr", dir), *truth = tu_fmt("%s/truth.csv", dir);
	pid_t rec = SPAWN("rec", "record", "--listen", tu_ep(p), "-o", file);
	ck_assert(tu_wait_port(p, 30));
	void *ctx = zmq_ctx_new(), *pub = tu_pub_heard(ctx, tu_ep(p), 0, 30);
	zmq_send(pub, "iog1/delta/x", 12, 0);                          /* one frame */
	zmq_send(pub, "iog1/delta/x", 12, ZMQ_SNDMORE);
	zmq_send(pub, "garbage that is not a message", 29, 0);        /* bad payload */
	zmq_send(pub, "iog1/delta/x", 12, ZMQ_SNDMORE);
	zmq_send(pub, "IOGW\x01\x02", 6, ZMQ_SNDMORE);
	zmq_send(pub, "third frame", 11, 0);                           /* three frames */
	pid_t lg = SPAWN("lg", "loadgen", "--sources", "4", "--rate", "10", "--duration", "2",
	                 "--endpoint", tu_ep(p), "--truth", truth);
	ck_assert_int_eq(tu_wait(lg, 30), 0);
	tu_sleep_ms(500);
	ck_assert_int_eq(stop(rec), 0);
	int linger = 0;
	zmq_setsockopt(pub, ZMQ_LINGER, &linger, sizeof(linger));
	zmq_close(pub);
	zmq_ctx_term(ctx);
	char *err = slurp(tu_fmt("%s/rec.err", dir));
	ck_assert_msg(strstr(err, "0 lost (gaps), 3 refused") != NULL, "%s", err);
	free(err);
	check_totals(file, truth);
}
END_TEST

START_TEST(test_disk_full_stops_cleanly)
{
	int p = tu_free_port();
	char *file = tu_fmt("%s/full.iogr", dir);
	pid_t rec = spawn("rec", 24000, (char *const[]){ (char *)bin, "record", "--plain", "--listen",
	                                                 tu_ep(p), "-o", file, NULL });
	tu_sleep_ms(200);
	pid_t lg = SPAWN("lg", "loadgen", "--sources", "64", "--rate", "10", "--duration", "3",
	                 "--endpoint", tu_ep(p));
	int rs = tu_wait(rec, 30);
	ck_assert_int_eq(rs, 1);
	tu_wait(lg, 30);
	char *err = slurp(tu_fmt("%s/rec.err", dir));
	ck_assert_msg(strstr(err, "failed") != NULL, "%s", err);
	free(err);
	iogp_load_stats st;
	recorded(file, "posix.read.ops", &st);   /* readable */
	ck_assert_uint_gt(st.records, 0);
}
END_TEST

START_TEST(test_agents_never_wait)
{
	/* nobody listening, then a relay that is killed mid-run: the load generator
	 * (like an agent) keeps its schedule */
	int p = tu_free_port(), q = tu_free_port();
	double t0 = tu_now();
	pid_t lg = SPAWN("lg", "loadgen", "--sources", "64", "--rate", "50", "--duration", "3",
	                 "--endpoint", tu_ep(p));
	tu_sleep_ms(500);
	pid_t r = SPAWN("r", "relay", "--listen", tu_ep(p), "--publish", tu_ep(q));
	pid_t rec = SPAWN("rec", "record", "--connect", tu_ep(q), "-o", tu_fmt("%s/x.iogr", dir));
	tu_sleep_ms(1000);
	kill(r, SIGKILL);
	tu_wait(r, 5);
	ck_assert_int_eq(tu_wait(lg, 20), 0);
	double el = tu_now() - t0;
	/* the schedule, counted: 64 sources x 50 a second x 3 s went out (sent
	 * or dropped at the high-water mark), none waited for. A loop that
	 * blocked falls behind and skips (it never bursts to catch up). Not the
	 * wall time: the exit lingers 2 s on the dead relay's pipe, and an ASan
	 * start on a loaded machine takes what it takes. */
	char *err = slurp(tu_fmt("%s/lg.err", dir));
	unsigned long long sent = 0, dropped = 0;
	const char *s = strstr(err, "loadgen sent ");
	ck_assert_msg(s && sscanf(s, "loadgen sent %llu", &sent) == 1, "%s", err);
	s = strstr(s, "dropped ");
	ck_assert_msg(s && sscanf(s, "dropped %llu", &dropped) == 1, "%s", err);
	ck_assert_msg(sent + dropped >= 64 * 50 * 3 * 9 / 10, "only %llu sent and %llu dropped: %s", sent,
	              dropped, err);
	free(err);
	ck_assert_msg(el < 3.0 + 2.0 + 5.0, "loadgen took %.2f s for a 3 s run", el);   /* linger is 2 s */
	stop(rec);
}
END_TEST

START_TEST(test_merge_and_dedupe)
{
	char *synth = getenv("IOGRAM_SYNTH");
	ck_assert_ptr_nonnull(synth);
	char *a = tu_fmt("%s/a.iogr", dir), *b = tu_fmt("%s/b.iogr", dir), *o = tu_fmt("%s/o.iogr", dir);
	pid_t s1 = spawn("s1", 0, (char *const[]){ synth, "--nodes", "2", "--seconds", "20", "--seed", "1",
	                                           "-o", a, NULL });
	ck_assert_int_eq(tu_wait(s1, 30), 0);
	pid_t s2 = spawn("s2", 0, (char *const[]){ synth, "--nodes", "3", "--seconds", "25", "--seed", "2",
	                                           "-o", b, NULL });
	ck_assert_int_eq(tu_wait(s2, 30), 0);
	unsigned long long va = recorded(a, "posix.write.bytes", NULL);
	unsigned long long vb = recorded(b, "posix.write.bytes", NULL);
	pid_t m = SPAWN("m", "merge", a, b, "-o", o);
	ck_assert_int_eq(tu_wait(m, 30), 0);
	iogp_load_stats st;
	ck_assert_uint_eq(recorded(o, "posix.write.bytes", &st), va + vb);
	ck_assert_int_eq(st.info.index_found, 1);
	/* ordered by receive time */
	iogp_replay_reader *r;
	char err[256];
	ck_assert_int_eq(iogp_replay_open(&r, o, err, sizeof(err)), 0);
	iogp_replay_rec rec;
	uint64_t last = 0;
	while (iogp_replay_next(r, &rec) == 0) {
		ck_assert_uint_ge(rec.recv_ns, last);
		last = rec.recv_ns;
	}
	iogp_replay_close_reader(r);
	/* a file merged with itself: every message once */
	char *o2 = tu_fmt("%s/o2.iogr", dir);
	m = SPAWN("m2", "merge", a, a, "-o", o2);
	ck_assert_int_eq(tu_wait(m, 30), 0);
	ck_assert_uint_eq(recorded(o2, "posix.write.bytes", NULL), va);
	char *e = slurp(tu_fmt("%s/m2.err", dir));
	ck_assert_ptr_null(strstr(e, "(0 duplicates"));
	free(e);
	/* errors */
	m = SPAWN("m3", "merge", a, "-o", a);
	ck_assert_int_eq(tu_wait(m, 10), 2);
	m = SPAWN("m4", "merge", tu_fmt("%s/missing.iogr", dir), "-o", o2);
	ck_assert_int_eq(tu_wait(m, 10), 1);
}
END_TEST

START_TEST(test_cat_lines_and_follow)
{
	char *synth = getenv("IOGRAM_SYNTH");
	char *a = tu_fmt("%s/a.iogr", dir);
	pid_t s1 = spawn("s1", 0, (char *const[]){ synth, "--nodes", "2", "--seconds", "10", "-o", a, NULL });
	ck_assert_int_eq(tu_wait(s1, 30), 0);
	pid_t c = SPAWN("cat", "cat", a);
	ck_assert_int_eq(tu_wait(c, 30), 0);
	char *out = slurp(tu_fmt("%s/cat.out", dir));
	iogp_load_stats st;
	recorded(a, "posix.read.ops", &st);
	size_t lines = 0;
	for (char *p = out; *p; p++)
		lines += *p == '\n';
	ck_assert_uint_eq(lines, st.records - st.keyframe_records);
	ck_assert_ptr_nonnull(strstr(out, " hello "));
	ck_assert_ptr_nonnull(strstr(out, " delta "));
	ck_assert_ptr_nonnull(strstr(out, " bye "));
	free(out);
	/* --follow on a file being recorded grows as messages arrive */
	int p = tu_free_port();
	char *live = tu_fmt("%s/live.iogr", dir);
	pid_t rec = SPAWN("rec", "record", "--listen", tu_ep(p), "-o", live);
	ck_assert(tu_wait_port(p, 30) && tu_wait_file(live, 30));   /* cat --follow needs the file */
	pid_t f = SPAWN("follow", "cat", "--follow", live);
	pid_t lg = SPAWN("lg", "loadgen", "--sources", "2", "--rate", "10", "--duration", "3",
	                 "--endpoint", tu_ep(p));
	ck_assert_int_eq(tu_wait(lg, 30), 0);
	tu_sleep_ms(2000);
	ck_assert_int_eq(stop(f), 0);
	stop(rec);
	out = slurp(tu_fmt("%s/follow.out", dir));
	lines = 0;
	for (char *q = out; *q; q++)
		lines += *q == '\n';
	ck_assert_msg(lines >= 40, "follow saw %zu lines", lines);
	free(out);
}
END_TEST

START_TEST(test_usage_errors)
{
	const char *bad[][8] = {
		{ "record", NULL },
		{ "record", "-o", "x.iogr", "--listen", "tcp://0.0.0.0:1", NULL },
		{ "record", "-o", "x.iogr", "--duration", "abc", NULL },
		{ "relay", "--listen", "tcp://127.0.0.1:1", NULL },
		{ "loadgen", "--sources", "0", "--rate", "1", NULL },
		{ "loadgen", "--rate", "1", NULL },
		{ "loadgen", "--sources", "1", "--rate", "1", "--access", "257", NULL },
		{ "loadgen", "--sources", "1", "--rate", "1", "--restarts", "0", NULL },
		{ "loadgen", "--sources", "1", "--rate", "1", "--fast", "--restarts", "1" },
		{ "merge", NULL },
		{ "cat", NULL },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *argv[10] = { (char *)bin };
		for (int k = 0; k < 8 && bad[i][k]; k++)
			argv[k + 1] = (char *)bad[i][k];
		pid_t pid = spawn("u", 0, argv);
		ck_assert_msg(tu_wait(pid, 10) == 2, "case %zu (%s)", i, bad[i][0]);
	}
	const char *verbs[] = { "record", "relay", "merge", "cat", "loadgen" };
	for (int i = 0; i < 5; i++) {
		pid_t pid = SPAWN("h", (char *)verbs[i], "--help");
		ck_assert_int_eq(tu_wait(pid, 10), 0);
		char *o = slurp(tu_fmt("%s/h.out", dir));
		ck_assert_ptr_nonnull(strstr(o, "EXAMPLES"));
		free(o);
	}
	/* cat on a missing file: runtime error */
	pid_t pid = SPAWN("c", "cat", tu_fmt("%s/nope.iogr", dir));
	ck_assert_int_eq(tu_wait(pid, 10), 1);
}
END_TEST

int main(void)
{
	const tu_case cases[] = {
		{ "record_direct", test_record_direct }, { "relay_tree_256", test_relay_tree_256 },
		{ "loadgen_restarts", test_loadgen_restarts }, { "loadgen_snapshots", test_loadgen_snapshots },
		{ "recorder_restart_resyncs", test_recorder_restart_resyncs },
		{ "malformed_counted", test_malformed_counted },
		{ "disk_full_stops_cleanly", test_disk_full_stops_cleanly },
		{ "agents_never_wait", test_agents_never_wait }, { "merge_and_dedupe", test_merge_and_dedupe },
		{ "cat_lines_and_follow", test_cat_lines_and_follow }, { "usage_errors", test_usage_errors },
	};
	return tu_run_suite("live", cases, sizeof(cases) / sizeof(cases[0]), setup, teardown, 120);
}
