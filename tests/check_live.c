/* check_live.c - iogram record / relay / merge / cat / loadgen as real
 * processes on real loopback sockets. */
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

static const char *bin;
static char dir[] = "/tmp/iogram-check-live-XXXXXX";

static char *fmt(const char *f, ...)
{
	static char bufs[16][1024];
	static int k;
	char *b = bufs[k++ % 16];
	va_list ap;
	va_start(ap, f);
	vsnprintf(b, 1024, f, ap);
	va_end(ap);
	return b;
}

/* A free loopback TCP port (bind to 0, read it back, close). */
static int free_port(void)
{
	int s = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	ck_assert_int_eq(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
	socklen_t l = sizeof(a);
	getsockname(s, (struct sockaddr *)&a, &l);
	close(s);
	return ntohs(a.sin_port);
}

static char *ep(int port)
{
	return fmt("tcp://127.0.0.1:%d", port);
}

/* Start argv in the background, stdout/stderr to files in dir; returns pid. */
static pid_t spawn(const char *name, long fsize_limit, char *const argv[])
{
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int fd = open(fmt("%s/%s.out", dir, name), O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int fe = open(fmt("%s/%s.err", dir, name), O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fd, 1);
		dup2(fe, 2);
		if (fsize_limit > 0) {
			struct rlimit rl = { (rlim_t)fsize_limit, (rlim_t)fsize_limit };
			setrlimit(RLIMIT_FSIZE, &rl);
			signal(SIGXFSZ, SIG_IGN);
		}
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}
#define SPAWN(name, ...) spawn(name, 0, (char *const[]){ (char *)bin, __VA_ARGS__, NULL })

/* Wait for pid at most secs; kill it if it overstays. Returns exit status or 128+sig. */
static int wait_for(pid_t pid, double secs)
{
	int st;
	for (int i = 0; i < (int)(secs * 100); i++) {
		pid_t r = waitpid(pid, &st, WNOHANG);
		if (r == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return 999;
}

static int stop(pid_t pid)
{
	kill(pid, SIGTERM);
	return wait_for(pid, 10);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return strdup("");
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	char tmp[4096];
	size_t n;
	while ((n = fread(tmp, 1, sizeof(tmp), f)) > 0)
		fwrite(tmp, 1, n, m);
	fclose(m);
	fclose(f);
	return buf;
}

static unsigned long long truth_value(const char *truth, const char *metric)
{
	char *t = slurp(truth);
	char *p = strstr(t, fmt("\n%s,", metric));
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
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
	ck_assert_int_eq(system(fmt("rm -rf '%s'", dir)), 0);
	strcpy(dir, "/tmp/iogram-check-live-XXXXXX");
}

START_TEST(test_record_direct)
{
	int p = free_port();
	char *file = fmt("%s/a.iogr", dir), *truth = fmt("%s/truth.csv", dir);
	pid_t rec = SPAWN("rec", "record", "--listen", ep(p), "-o", file);
	usleep(200000);
	pid_t lg = SPAWN("lg", "loadgen", "--sources", "16", "--rate", "20", "--duration", "3",
	                 "--endpoint", ep(p), "--truth", truth);
	ck_assert_int_eq(wait_for(lg, 30), 0);
	usleep(500000);
	ck_assert_int_eq(stop(rec), 0);
	iogp_load_stats st;
	recorded(file, "posix.read.ops", &st);
	ck_assert_int_eq(st.info.index_found, 1);   /* SIGTERM closed it cleanly */
	ck_assert_uint_ge(st.by_kind[IOGP_DELTA], 16 * 20 * 2);
	ck_assert_uint_eq(st.by_kind[IOGP_BYE], 16);
	check_totals(file, truth);
	char *err = slurp(fmt("%s/rec.err", dir));
	ck_assert_ptr_nonnull(strstr(err, "from 16 sources"));
	ck_assert_ptr_nonnull(strstr(err, "gaps 0"));
	free(err);
}
END_TEST

START_TEST(test_relay_tree_256)
{
	/* 256 emulated sources -> relay -> relay -> recorder: exact totals */
	int p1 = free_port(), p2 = free_port(), p3 = free_port();
	char *file = fmt("%s/tree.iogr", dir), *truth = fmt("%s/truth.csv", dir);
	pid_t r1 = SPAWN("r1", "relay", "--listen", ep(p1), "--upstream", ep(p2));
	pid_t r2 = SPAWN("r2", "relay", "--listen", ep(p2), "--publish", ep(p3));
	pid_t rec = SPAWN("rec", "record", "--connect", ep(p3), "-o", file);
	usleep(300000);
	pid_t lg = SPAWN("lg", "loadgen", "--sources", "256", "--rate", "10", "--duration", "4",
	                 "--endpoint", ep(p1), "--truth", truth);
	ck_assert_int_eq(wait_for(lg, 60), 0);
	usleep(800000);
	ck_assert_int_eq(stop(rec), 0);
	ck_assert_int_eq(stop(r1), 0);
	ck_assert_int_eq(stop(r2), 0);
	iogp_load_stats st;
	recorded(file, "posix.read.ops", &st);
	ck_assert_uint_eq(st.by_kind[IOGP_BYE], 256);
	check_totals(file, truth);
	char *err = slurp(fmt("%s/r2.err", dir));
	ck_assert_ptr_nonnull(strstr(err, "relay passed"));
	ck_assert_ptr_nonnull(strstr(err, "dropped 0"));
	free(err);
}
END_TEST

START_TEST(test_recorder_restart_resyncs)
{
	/* recorder A dies (kill -9) mid-run; recorder B starts later: B's file is
	 * exact (SNAPSHOT on subscribe + FINAL); A's is readable up to its last flush */
	int p = free_port();
	char *fa = fmt("%s/a.iogr", dir), *fb = fmt("%s/b.iogr", dir), *truth = fmt("%s/truth.csv", dir);
	pid_t a = SPAWN("a", "record", "--listen", ep(p), "-o", fa);
	usleep(200000);
	pid_t lg = SPAWN("lg", "loadgen", "--sources", "32", "--rate", "10", "--duration", "6",
	                 "--endpoint", ep(p), "--truth", truth);
	sleep(2);
	kill(a, SIGKILL);
	ck_assert_int_eq(wait_for(a, 5), 128 + SIGKILL);
	usleep(500000);
	pid_t b = SPAWN("b", "record", "--listen", ep(p), "-o", fb);
	ck_assert_int_eq(wait_for(lg, 60), 0);
	usleep(800000);
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
	int p = free_port();
	char *file = fmt("%s/m.iogr", dir), *truth = fmt("%s/truth.csv", dir);
	pid_t rec = SPAWN("rec", "record", "--listen", ep(p), "-o", file);
	usleep(200000);
	void *ctx = zmq_ctx_new(), *pub = zmq_socket(ctx, ZMQ_PUB);
	ck_assert_int_eq(zmq_connect(pub, ep(p)), 0);
	usleep(400000);   /* let the subscription arrive */
	zmq_send(pub, "iog1/delta/x", 12, 0);                          /* one frame */
	zmq_send(pub, "iog1/delta/x", 12, ZMQ_SNDMORE);
	zmq_send(pub, "garbage that is not a message", 29, 0);        /* bad payload */
	zmq_send(pub, "iog1/delta/x", 12, ZMQ_SNDMORE);
	zmq_send(pub, "IOGW\x01\x02", 6, ZMQ_SNDMORE);
	zmq_send(pub, "third frame", 11, 0);                           /* three frames */
	pid_t lg = SPAWN("lg", "loadgen", "--sources", "4", "--rate", "10", "--duration", "2",
	                 "--endpoint", ep(p), "--truth", truth);
	ck_assert_int_eq(wait_for(lg, 30), 0);
	usleep(500000);
	ck_assert_int_eq(stop(rec), 0);
	int linger = 0;
	zmq_setsockopt(pub, ZMQ_LINGER, &linger, sizeof(linger));
	zmq_close(pub);
	zmq_ctx_term(ctx);
	char *err = slurp(fmt("%s/rec.err", dir));
	ck_assert_msg(strstr(err, "malformed 3") != NULL, "%s", err);
	free(err);
	check_totals(file, truth);
}
END_TEST

START_TEST(test_disk_full_stops_cleanly)
{
	int p = free_port();
	char *file = fmt("%s/full.iogr", dir);
	pid_t rec = spawn("rec", 24000, (char *const[]){ (char *)bin, "record", "--plain", "--listen",
	                                                 ep(p), "-o", file, NULL });
	usleep(200000);
	pid_t lg = SPAWN("lg", "loadgen", "--sources", "64", "--rate", "10", "--duration", "3",
	                 "--endpoint", ep(p));
	int rs = wait_for(rec, 30);
	ck_assert_int_eq(rs, 1);
	wait_for(lg, 30);
	char *err = slurp(fmt("%s/rec.err", dir));
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
	int p = free_port(), q = free_port();
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid_t lg = SPAWN("lg", "loadgen", "--sources", "64", "--rate", "50", "--duration", "3",
	                 "--endpoint", ep(p));
	usleep(500000);
	pid_t r = SPAWN("r", "relay", "--listen", ep(p), "--publish", ep(q));
	pid_t rec = SPAWN("rec", "record", "--connect", ep(q), "-o", fmt("%s/x.iogr", dir));
	sleep(1);
	kill(r, SIGKILL);
	wait_for(r, 5);
	ck_assert_int_eq(wait_for(lg, 20), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double el = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	ck_assert_msg(el < 3.0 + 2.5, "loadgen took %.2f s for a 3 s run", el);   /* linger is 2 s */
	stop(rec);
}
END_TEST

START_TEST(test_merge_and_dedupe)
{
	char *synth = getenv("IOGRAM_SYNTH");
	ck_assert_ptr_nonnull(synth);
	char *a = fmt("%s/a.iogr", dir), *b = fmt("%s/b.iogr", dir), *o = fmt("%s/o.iogr", dir);
	pid_t s1 = spawn("s1", 0, (char *const[]){ synth, "--nodes", "2", "--seconds", "20", "--seed", "1",
	                                           "-o", a, NULL });
	ck_assert_int_eq(wait_for(s1, 30), 0);
	pid_t s2 = spawn("s2", 0, (char *const[]){ synth, "--nodes", "3", "--seconds", "25", "--seed", "2",
	                                           "-o", b, NULL });
	ck_assert_int_eq(wait_for(s2, 30), 0);
	unsigned long long va = recorded(a, "posix.write.bytes", NULL);
	unsigned long long vb = recorded(b, "posix.write.bytes", NULL);
	pid_t m = SPAWN("m", "merge", a, b, "-o", o);
	ck_assert_int_eq(wait_for(m, 30), 0);
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
	char *o2 = fmt("%s/o2.iogr", dir);
	m = SPAWN("m2", "merge", a, a, "-o", o2);
	ck_assert_int_eq(wait_for(m, 30), 0);
	ck_assert_uint_eq(recorded(o2, "posix.write.bytes", NULL), va);
	char *e = slurp(fmt("%s/m2.err", dir));
	ck_assert_ptr_null(strstr(e, "(0 duplicates"));
	free(e);
	/* errors */
	m = SPAWN("m3", "merge", a, "-o", a);
	ck_assert_int_eq(wait_for(m, 10), 2);
	m = SPAWN("m4", "merge", fmt("%s/missing.iogr", dir), "-o", o2);
	ck_assert_int_eq(wait_for(m, 10), 1);
}
END_TEST

START_TEST(test_cat_lines_and_follow)
{
	char *synth = getenv("IOGRAM_SYNTH");
	char *a = fmt("%s/a.iogr", dir);
	pid_t s1 = spawn("s1", 0, (char *const[]){ synth, "--nodes", "2", "--seconds", "10", "-o", a, NULL });
	ck_assert_int_eq(wait_for(s1, 30), 0);
	pid_t c = SPAWN("cat", "cat", a);
	ck_assert_int_eq(wait_for(c, 30), 0);
	char *out = slurp(fmt("%s/cat.out", dir));
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
	int p = free_port();
	char *live = fmt("%s/live.iogr", dir);
	pid_t rec = SPAWN("rec", "record", "--listen", ep(p), "-o", live);
	usleep(300000);
	pid_t f = SPAWN("follow", "cat", "--follow", live);
	pid_t lg = SPAWN("lg", "loadgen", "--sources", "2", "--rate", "10", "--duration", "3",
	                 "--endpoint", ep(p));
	ck_assert_int_eq(wait_for(lg, 30), 0);
	sleep(2);
	ck_assert_int_eq(stop(f), 0);
	stop(rec);
	out = slurp(fmt("%s/follow.out", dir));
	lines = 0;
	for (char *q = out; *q; q++)
		lines += *q == '\n';
	ck_assert_msg(lines >= 40, "follow saw %zu lines", lines);
	free(out);
}
END_TEST

START_TEST(test_usage_errors)
{
	const char *bad[][6] = {
		{ "record", NULL },
		{ "record", "-o", "x.iogr", "--listen", "tcp://0.0.0.0:1", NULL },
		{ "record", "-o", "x.iogr", "--duration", "abc", NULL },
		{ "relay", "--listen", "tcp://127.0.0.1:1", NULL },
		{ "loadgen", "--sources", "0", "--rate", "1", NULL },
		{ "loadgen", "--rate", "1", NULL },
		{ "merge", NULL },
		{ "cat", NULL },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *argv[8] = { (char *)bin };
		for (int k = 0; k < 6 && bad[i][k]; k++)
			argv[k + 1] = (char *)bad[i][k];
		pid_t pid = spawn("u", 0, argv);
		ck_assert_msg(wait_for(pid, 10) == 2, "case %zu (%s)", i, bad[i][0]);
	}
	const char *verbs[] = { "record", "relay", "merge", "cat", "loadgen" };
	for (int i = 0; i < 5; i++) {
		pid_t pid = SPAWN("h", (char *)verbs[i], "--help");
		ck_assert_int_eq(wait_for(pid, 10), 0);
		char *o = slurp(fmt("%s/h.out", dir));
		ck_assert_ptr_nonnull(strstr(o, "EXAMPLES"));
		free(o);
	}
	/* cat on a missing file: runtime error */
	pid_t pid = SPAWN("c", "cat", fmt("%s/nope.iogr", dir));
	ck_assert_int_eq(wait_for(pid, 10), 1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("live");
	TCase *tc = tcase_create("verbs");
	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_record_direct);
	tcase_add_test(tc, test_relay_tree_256);
	tcase_add_test(tc, test_recorder_restart_resyncs);
	tcase_add_test(tc, test_malformed_counted);
	tcase_add_test(tc, test_disk_full_stops_cleanly);
	tcase_add_test(tc, test_agents_never_wait);
	tcase_add_test(tc, test_merge_and_dedupe);
	tcase_add_test(tc, test_cat_lines_and_follow);
	tcase_add_test(tc, test_usage_errors);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
