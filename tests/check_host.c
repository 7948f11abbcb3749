/* check_host.c - the agent never changes what its host does: bash with
 * exec 3>/3<, a cat|sort|uniq|wc pipeline 100 times beside a recorder,
 * nobody, and a stopped recorder, hosts that close, dup2 over, scan or
 * exhaust descriptors, tiny RLIMIT_NOFILE, descriptors pulled away by raw
 * syscall, and finals spooled while the listener is stopped. Each host run
 * is compared byte for byte with the same run without the agent. */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <dirent.h>
#include <unistd.h>

#include "iogp_export.h"
#include "iogp_model.h"
#include "testutil.h"

#define T_RUN 60.0

static char dir[256];
static char spool[300];

static void setup(void)
{
	tu_tmpdir(dir, sizeof(dir), "iogram-host");
	snprintf(spool, sizeof(spool), "%s/spool", dir);
	setenv("IOGRAM_SPOOL", spool, 1);
	unsetenv("IOGRAM_EXIT_WAIT_MS");   /* the default budget */
}

static void teardown(void)
{
	tu_rmdir_all(dir);
}

static char *in_dir(const char *name)
{
	return tu_fmt("%s/%s", dir, name);
}

/* ---- a recorder to talk to ------------------------------------------------ */

typedef struct rec {
	pid_t pid;
	char ep[64];
	char file[400];
} rec;

static void rec_start(rec *r, const char *name)
{
	int port = tu_free_port();
	snprintf(r->ep, sizeof(r->ep), "%s", tu_ep(port));
	snprintf(r->file, sizeof(r->file), "%s", in_dir(name));
	unlink(r->file);   /* recordings are never replaced without --force */
	r->pid = tu_spawn((char *[]){ (char *)tu_env("IOGRAM_BIN"), "record", "--listen", r->ep,
	                              "-o", r->file, NULL }, NULL, NULL, 0);
	ck_assert_msg(tu_wait_port(port, 10), "recorder did not listen on %s", r->ep);
}

static void rec_stop(rec *r)
{
	kill(r->pid, SIGCONT);
	kill(r->pid, SIGINT);
	ck_assert_int_eq(tu_wait(r->pid, 20), 0);
}

/* ---- runs with and without the agent ---------------------------------------- */

/* argv under iogram-run (endpoint ep, or "none") when agent, else plain. */
static int host_run(int agent, const char *ep, char *const cmd[], const char *out, long nofile)
{
	char *argv[40];
	int n = 0;
	if (agent) {
		argv[n++] = (char *)tu_env("IOGRAM_RUN");
		argv[n++] = "--endpoint";
		argv[n++] = (char *)ep;
		argv[n++] = "--interval";
		argv[n++] = "50";
		argv[n++] = "--";
	}
	for (int i = 0; cmd[i] && n < 39; i++)
		argv[n++] = cmd[i];
	argv[n] = NULL;
	return tu_wait(tu_spawn(argv, out, NULL, nofile), T_RUN);
}

static const char *const BASH_FD3 =
	"exec 3>\"$1\"; for i in $(seq 300); do echo line$i >&3; done; sleep 0.3; echo hi >&3; "
	"exec 3<\"$2\"; n=0; while read -u 3 l; do n=$((n+1)); done; echo \"read $n\" >>\"$1\"; echo done";

static void seq_file(const char *path, int n, int mod)
{
	FILE *f = fopen(path, "w");
	ck_assert(f != NULL);
	for (int i = 0; i < n; i++)
		fprintf(f, "%d\n", (i * 7919) % mod);
	fclose(f);
}

START_TEST(test_bash_fd3)
{
	rec r;
	rec_start(&r, "fd3.iogr");
	seq_file(in_dir("in.txt"), 1000, 1000000);
	const char *eps[3] = { r.ep, "tcp://127.0.0.1:1", r.ep };
	for (int v = 0; v < 3; v++) {
		if (v == 2)
			kill(r.pid, SIGSTOP);
		int a = host_run(0, NULL, (char *[]){ "bash", "-c", (char *)BASH_FD3, "bash",
		                 in_dir("p.txt"), in_dir("in.txt"), NULL }, in_dir("p.out"), 0);
		int b = host_run(1, eps[v], (char *[]){ "bash", "-c", (char *)BASH_FD3, "bash",
		                 in_dir("a.txt"), in_dir("in.txt"), NULL }, in_dir("a.out"), 0);
		ck_assert_int_eq(a, 0);
		ck_assert_int_eq(b, a);
		ck_assert_msg(tu_same_file(in_dir("p.txt"), in_dir("a.txt")), "variant %d: fd 3 output differs", v);
		ck_assert_msg(strstr(tu_slurp(in_dir("a.txt")), "read 1000\n") != NULL, "variant %d", v);
		ck_assert(tu_same_file(in_dir("p.out"), in_dir("a.out")));
	}
	rec_stop(&r);
}
END_TEST

START_TEST(test_pipeline_100)
{
	rec r;
	rec_start(&r, "pipe.iogr");
	seq_file(in_dir("in.txt"), 5000, 997);
	char script[1200];
	snprintf(script, sizeof(script), "cat %s | sort -n | uniq | wc -l > \"$1\"", in_dir("in.txt"));
	ck_assert_int_eq(host_run(0, NULL, (char *[]){ "bash", "-c", script, "bash", in_dir("want"), NULL },
	                          NULL, 0), 0);
	ck_assert_str_eq(tu_slurp(in_dir("want")), "997\n");
	const char *eps[3] = { r.ep, "tcp://127.0.0.1:1", r.ep };
	const char *names[3] = { "recorder", "nobody", "stopped recorder" };
	for (int v = 0; v < 3; v++) {
		if (v == 2)
			kill(r.pid, SIGSTOP);
		int bad = 0;
		for (int i = 0; i < 100; i++) {
			unlink(in_dir("got"));
			int st = host_run(1, eps[v], (char *[]){ "bash", "-c", script, "bash", in_dir("got"), NULL },
			                  NULL, 0);
			if (st != 0 || !tu_same_file(in_dir("want"), in_dir("got"))) {
				fprintf(stderr, "%s run %d: status %d\n", names[v], i, st);
				bad++;
			}
		}
		ck_assert_msg(bad == 0, "%s: %d of 100 pipelines differed or failed", names[v], bad);
	}
	rec_stop(&r);
}
END_TEST

static iogp_model *load(const char *path)
{
	iogp_model *m = iogp_model_new(NULL);
	char err[256] = "";
	iogp_load_stats st;
	ck_assert_msg(iogp_load_file(path, m, &st, err, sizeof(err)) >= 0, "load %s: %s", path, err);
	return m;
}

static uint64_t counter(const iogp_model *m, const char *name)
{
	uint64_t v = 0;
	ck_assert_int_eq(iogp_model_counter(m, name, NULL, &v), 0);
	return v;
}

/* MODE with and without the agent (beside a live recorder): same result,
 * same status; survive = 1: the agent kept counting through it. */
static void fdhost(const char *mode, long nofile, int survive)
{
	rec r;
	char p[400], ctl[64], res[64], out[64];
	rec_start(&r, "fdhost.iogr");
	snprintf(p, sizeof(p), "%s/prog_fdhost", tu_env("IOGRAM_PROGS"));
	snprintf(ctl, sizeof(ctl), "%s-plain.txt", mode);
	snprintf(res, sizeof(res), "%s-agent.txt", mode);
	snprintf(out, sizeof(out), "run-%s.iogr", mode);
	int a = host_run(0, NULL, (char *[]){ p, (char *)mode, dir, in_dir(ctl), NULL }, NULL, nofile);
	int b = tu_wait(tu_spawn((char *[]){ (char *)tu_env("IOGRAM_RUN"), "--endpoint", r.ep,
		"--interval", "50", "--output", in_dir(out), "--", p, (char *)mode, dir, in_dir(res), NULL },
		NULL, NULL, nofile), T_RUN);
	ck_assert_msg(a == 0, "%s: plain run exited %d", mode, a);
	ck_assert_msg(b == a, "%s: exit %d under the agent, %d without", mode, b, a);
	char want[4096];
	snprintf(want, sizeof(want), "%s", tu_slurp(in_dir(ctl)));
	ck_assert_str_eq(tu_slurp(in_dir(res)), want);
	if (survive) {
		/* warm-up 4 + data 64 + the result file 1 (+ dup2's one-byte writes) */
		int good = 0;
		const char *g = strstr(want, "good=");
		if (g)
			good = atoi(g + 5);
		iogp_model *m = load(in_dir(out));
		ck_assert_uint_eq(counter(m, "posix.write.ops"), 69 + (uint64_t)good);
		ck_assert_uint_eq(counter(m, "posix.read.ops"), 68);
		iogp_model_free(m);
	}
	rec_stop(&r);
}

/* A host that dies of SIGTERM at its default sends what it counted first
 * (posix_signal.c) and dies of it all the same; one that handles, ignores
 * or resets SIGTERM sees what it would without the agent. Interval 60 s:
 * only the finals can carry the writes. */
START_TEST(test_sigterm)
{
	static const char *const modes[] = { "default", "handler", "ignore", "reset" };
	static const int status[] = { 128 + SIGTERM, 3, 0, 128 + SIGTERM };
	char p[400];
	snprintf(p, sizeof(p), "%s/prog_sigterm", tu_env("IOGRAM_PROGS"));
	for (int i = 0; i < 4; i++) {
		const char *mode = modes[i];
		char plain[64], agent[64], out[64];
		snprintf(plain, sizeof(plain), "sig-%s-plain.txt", mode);
		snprintf(agent, sizeof(agent), "sig-%s-agent.txt", mode);
		snprintf(out, sizeof(out), "sig-%s.iogr", mode);
		int a = tu_wait(tu_spawn((char *[]){ p, in_dir("sig.dat"), (char *)mode, NULL }, in_dir(plain),
		                         NULL, 0), T_RUN);
		int b = tu_wait(tu_spawn((char *[]){ (char *)tu_env("IOGRAM_RUN"), "--endpoint", "none",
		                         "--interval", "60000", "--output", in_dir(out), "--", p,
		                         in_dir("sig.dat"), (char *)mode, NULL }, in_dir(agent), NULL, 0), T_RUN);
		ck_assert_msg(a == status[i], "%s: plain run ended %d", mode, a);
		ck_assert_msg(b == a, "%s: %d under the agent, %d without", mode, b, a);
		char want[512];
		snprintf(want, sizeof(want), "%s", tu_slurp(in_dir(plain)));
		ck_assert_str_eq(tu_slurp(in_dir(agent)), want);
		iogp_model *m = load(in_dir(out));
		uint64_t want_w = 64 + (i == 1);   /* the handler's write(2) of "caught" */
		ck_assert_msg(counter(m, "posix.write.ops") == want_w, "%s: %llu writes recorded of %llu",
		              mode, (unsigned long long)counter(m, "posix.write.ops"),
		              (unsigned long long)want_w);
		iogp_model_free(m);
	}
}
END_TEST

/* A change of user that keeps the capabilities for the groups after it
 * (setpriv's way): the agent's threads are out of the way (posix_cred.c)
 * and the host runs as without it; the source ends there with its finals
 * (the warm-up's 4 writes, a BYE), the agent off for the rest of the
 * process. Needs root. */
START_TEST(test_keepcaps)
{
	ck_assert_msg(geteuid() == 0, "test_keepcaps changes users: run the tests as root");
	fdhost("keepcaps", 0, 0);
	ck_assert_msg(strstr(tu_slurp(in_dir("keepcaps-agent.txt")), "setresgid=0 setgroups=0 uid=65534 gid=65534"),
	              "the credentials did not change: %s", tu_slurp(in_dir("keepcaps-agent.txt")));
	iogp_model *m = load(in_dir("run-keepcaps.iogr"));
	ck_assert_uint_eq(counter(m, "posix.write.ops"), 4);
	iogp_source_info si;
	ck_assert_uint_eq(iogp_model_source_count(m), 1);
	ck_assert_int_eq(iogp_model_source(m, 0, &si), 0);
	ck_assert_msg(si.state == IOGP_SRC_GONE, "the source did not end at the change (state %d)", (int)si.state);
	iogp_model_free(m);
}
END_TEST

/* In a sandbox that refuses unshare the agent's threads share the host's
 * descriptors; the host pulls them away by raw close_range and libzmq
 * asserts on its thread. The host's output stays its own: its stderr was
 * "Assertion failed: pfd.revents & POLLIN (src/signaler.cpp:265)", 3 of 3. */
START_TEST(test_rawclose_sandboxed)
{
	rec r;
	char p[400], sandbox[400];
	rec_start(&r, "sandboxed.iogr");
	snprintf(p, sizeof(p), "%s/prog_fdhost", tu_env("IOGRAM_PROGS"));
	snprintf(sandbox, sizeof(sandbox), "%s/prog_nounshare", tu_env("IOGRAM_PROGS"));
	int a = tu_wait(tu_spawn((char *[]){ sandbox, p, "rawclose", dir, in_dir("sb-plain.txt"), NULL },
	                         NULL, in_dir("sb-plain.err"), 0), T_RUN);
	int b = tu_wait(tu_spawn((char *[]){ sandbox, (char *)tu_env("IOGRAM_RUN"), "--endpoint", r.ep,
	                         "--interval", "50", "--", p, "rawclose", dir, in_dir("sb-agent.txt"), NULL },
	                         NULL, in_dir("sb-agent.err"), 0), T_RUN);
	ck_assert_msg(a == 0, "plain run in the sandbox exited %d: %s", a, tu_slurp(in_dir("sb-plain.err")));
	ck_assert_msg(b == a, "exit %d under the agent, %d without", b, a);
	char want[4096];
	snprintf(want, sizeof(want), "%s", tu_slurp(in_dir("sb-plain.txt")));
	ck_assert_str_eq(tu_slurp(in_dir("sb-agent.txt")), want);
	ck_assert_str_eq(tu_slurp(in_dir("sb-plain.err")), "");
	ck_assert_msg(tu_slurp(in_dir("sb-agent.err"))[0] == '\0', "the host's stderr under the agent: %s",
	              tu_slurp(in_dir("sb-agent.err")));
	rec_stop(&r);
}
END_TEST

START_TEST(test_closeall) { fdhost("closeall", 0, 1); }
END_TEST
START_TEST(test_dup2_3_64) { fdhost("dup2", 0, 1); }
END_TEST
START_TEST(test_fcntl_scan) { fdhost("fcntl", 0, 1); }
END_TEST
START_TEST(test_closefrom) { fdhost("closefrom", 0, 1); }
END_TEST
START_TEST(test_rawclose) { fdhost("rawclose", 0, 0); }
END_TEST
START_TEST(test_emfile) { fdhost("emfile", 0, 0); }
END_TEST

START_TEST(test_rlimit)
{
	static const long lim[3] = { 8, 16, 32 };
	for (int i = 0; i < 3; i++)
		fdhost("rlimit", lim[i], 0);
	/* coreutils too: cat a file with 8 descriptors */
	seq_file(in_dir("in.txt"), 100, 1000);
	char ep[64];
	snprintf(ep, sizeof(ep), "%s", tu_ep(tu_free_port()));
	ck_assert_int_eq(host_run(1, ep, (char *[]){ "cat", in_dir("in.txt"), NULL }, in_dir("c.out"), 8), 0);
	ck_assert(tu_same_file(in_dir("in.txt"), in_dir("c.out")));
}
END_TEST

/* IOGRAM_PATHS: what the stream says of the files a program touched. */
START_TEST(test_paths_modes)
{
	static const char *const modes[3] = { "full", "basename", "hash" };
	seq_file(in_dir("secret-name.txt"), 2000, 1000);
	for (int k = 0; k < 3; k++) {
		char out[64];
		snprintf(out, sizeof(out), "paths-%s.iogr", modes[k]);
		setenv("IOGRAM_PATHS", modes[k], 1);
		ck_assert_int_eq(tu_run((char *[]){ (char *)tu_env("IOGRAM_RUN"), "--endpoint", "none",
			"--output", in_dir(out), "--", "cat", in_dir("secret-name.txt"), NULL }, NULL, 60), 0);
		unsetenv("IOGRAM_PATHS");
		iogp_model *m = load(in_dir(out));
		int seen = 0;
		for (size_t i = 0; i < iogp_model_source_count(m); i++) {
			const iogp_access *a, *a2;
			size_t n2 = 0, n = iogp_model_access(m, i, &a, &n2, &a2);
			for (size_t j = 0; j < n; j++) {
				const char *p = iogp_model_file_path(m, i, a[j].file);
				if (p == NULL || strstr(p, "secret-name") == NULL) {
					if (k == 2 && p != NULL && p[0] == '#' && strlen(p) == 17)
						seen++;
					continue;
				}
				seen++;
				if (k == 0)
					ck_assert_str_eq(p, in_dir("secret-name.txt"));
				else
					ck_assert_msg(k == 1 && !strcmp(p, "secret-name.txt"), "%s: %s", modes[k], p);
			}
		}
		ck_assert_msg(seen > 0, "%s: no access sample named the file", modes[k]);
		iogp_model_free(m);
	}
}
END_TEST

/* dash's redirections (fcntl F_DUPFD, close, dup2 onto 1) in 200 short
 * processes, 8 at a time, beside a recorder: none may fail. The agent's
 * own start-up (libzmq, libc's nss and /sys files) must not take a low
 * number the host is about to use. */
START_TEST(test_dash_xargs)
{
	rec r;
	rec_start(&r, "dash.iogr");
	char script[1200];
	snprintf(script, sizeof(script), "cd %s && seq 1 200 | xargs -P 8 -I{} sh -c 'echo {} > out_{}.txt' "
	         "&& cat out_*.txt | sort -n | uniq | wc -l", dir);
	for (int round = 0; round < 3; round++) {
		int st = host_run(1, r.ep, (char *[]){ "bash", "-c", script, NULL }, in_dir("dash.out"), 0);
		ck_assert_msg(st == 0, "round %d: exit %d", round, st);
		ck_assert_str_eq(tu_slurp(in_dir("dash.out")), "200\n");
	}
	rec_stop(&r);
}
END_TEST

START_TEST(test_lowest_fd) { for (int i = 0; i < 5; i++) fdhost("lowest", 0, 0); }
END_TEST

static int spooled(void)
{
	DIR *d = opendir(spool);
	int n = 0;
	if (d == NULL)
		return 0;
	for (struct dirent *de; (de = readdir(d)) != NULL && n < 100000;)
		n += strstr(de->d_name, ".iogs") != NULL && de->d_name[0] != '.';
	closedir(d);
	return n;
}

START_TEST(test_spool_stopped_listener)
{
	rec r;
	rec_start(&r, "spool.iogr");
	kill(r.pid, SIGSTOP);
	tu_sleep_ms(50);
	/* ten short programs beside a listener that accepts but never answers */
	ck_assert_int_eq(host_run(1, r.ep, (char *[]){ "bash", "-c",
		"for i in 1 2 3 4 5 6 7 8 9 10; do /bin/true; done", NULL }, NULL, 0), 0);
	int n = spooled();
	ck_assert_msg(n >= 10, "%d spooled, want the 10 /bin/true (and bash)", n);
	kill(r.pid, SIGCONT);
	/* the next program of this user with a subscriber sends them on. It
	 * drains the spool only once subscribed, and the recorder just resumed
	 * has a backlog of connections to accept first: it waits up to 1 s at
	 * exit for that (its own finals would be spooled too otherwise), and
	 * another such program runs while files remain */
	char p[400];
	tu_prog(p, sizeof(p), "fdhost");
	setenv("IOGRAM_EXIT_WAIT_MS", "1000", 1);
	double end = tu_now() + 20;
	int runs = 0;
	do {
		ck_assert_int_eq(host_run(1, r.ep, (char *[]){ p, "fcntl", dir, in_dir("f.txt"), NULL }, NULL, 0), 0);
		runs++;
		for (double t = tu_now() + 2; spooled() > 0 && tu_now() < t;)
			tu_sleep_ms(20);
	} while (spooled() > 0 && tu_now() < end && runs < 5);
	unsetenv("IOGRAM_EXIT_WAIT_MS");
	ck_assert_msg(spooled() == 0, "%d still spooled after %d runs", spooled(), runs);
	tu_sleep_ms(300);
	rec_stop(&r);
	ck_assert_int_eq(tu_run((char *[]){ (char *)tu_env("IOGRAM_BIN"), "info", r.file, NULL },
	                        in_dir("info.txt"), 30), 0);
	const char *info = tu_slurp(in_dir("info.txt"));
	int trues = 0;
	for (const char *s = info; (s = strstr(s, "/true\n")) != NULL; s++)
		trues++;
	ck_assert_msg(trues == 10, "%d /bin/true sources in the recording:\n%s", trues, info);
}
END_TEST

int main(void)
{
	const tu_case cases[] = {
		{ "bash_fd3", test_bash_fd3 }, { "pipeline_100", test_pipeline_100 },
		{ "rawclose_sandboxed", test_rawclose_sandboxed }, { "sigterm", test_sigterm },
		{ "keepcaps", test_keepcaps }, { "closeall", test_closeall }, { "dup2_3_64", test_dup2_3_64 },
		{ "fcntl_scan", test_fcntl_scan }, { "closefrom", test_closefrom },
		{ "rawclose", test_rawclose }, { "emfile", test_emfile }, { "rlimit", test_rlimit },
		{ "spool_stopped_listener", test_spool_stopped_listener }, { "paths_modes", test_paths_modes },
		{ "dash_xargs", test_dash_xargs }, { "lowest_fd", test_lowest_fd },
	};
	return tu_run_suite("host", cases, sizeof(cases) / sizeof(cases[0]), setup, teardown, 300);
}
