/* testutil.c - helpers the Check suites share (see testutil.h). */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

double tu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void tu_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

const char *tu_env(const char *name)
{
	const char *v = getenv(name);
	ck_assert_msg(v != NULL && *v, "%s is not set (run through meson test)", name);
	return v;
}

void tu_tmpdir(char *buf, size_t len, const char *prefix)
{
	const char *t = getenv("TMPDIR");
	snprintf(buf, len, "%s/%s-XXXXXX", t && *t ? t : "/tmp", prefix);
	ck_assert_msg(mkdtemp(buf) != NULL, "mkdtemp: %s", strerror(errno));
}

void tu_rmdir_all(const char *dir)
{
	DIR *d = opendir(dir);
	if (d) {
		struct dirent *de;
		char p[1024];
		int n = 0;
		while ((de = readdir(d)) != NULL && n++ < 100000) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
			if (unlink(p) < 0 && errno == EISDIR)
				tu_rmdir_all(p);
		}
		closedir(d);
	}
	rmdir(dir);
}

pid_t tu_spawn(char *const argv[], const char *out, const char *err, long nofile)
{
	pid_t pid = fork();
	ck_assert(pid >= 0);
	if (pid == 0) {
		int o = open(out ? out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int e = open(err ? err : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (o >= 0)
			dup2(o, 1);
		if (e >= 0)
			dup2(e, 2);
		for (int fd = 3; fd < 64; fd++)
			close(fd);
		if (nofile > 0) {
			struct rlimit rl = { (rlim_t)nofile, (rlim_t)nofile };
			setrlimit(RLIMIT_NOFILE, &rl);
		}
		execvp(argv[0], argv);
		_exit(126);
	}
	return pid;
}

int tu_wait(pid_t pid, double timeout_s)
{
	double end = tu_now() + timeout_s;
	for (;;) {
		int st;
		pid_t r = waitpid(pid, &st, WNOHANG);
		if (r == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		ck_assert(r == 0);
		if (tu_now() > end) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return -1;
		}
		tu_sleep_ms(2);
	}
}

int tu_run(char *const argv[], const char *out, double timeout_s)
{
	return tu_wait(tu_spawn(argv, out, NULL, 0), timeout_s);
}

int tu_free_port(void)
{
	int s = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert(s >= 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	ck_assert_int_eq(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
	socklen_t l = sizeof(a);
	ck_assert_int_eq(getsockname(s, (struct sockaddr *)&a, &l), 0);
	close(s);
	return ntohs(a.sin_port);
}

const char *tu_slurp(const char *path)
{
	static char buf[65536];
	FILE *f = fopen(path, "r");
	ck_assert_msg(f != NULL, "open %s: %s", path, strerror(errno));
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

int tu_same_file(const char *a, const char *b)
{
	FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
	int same = fa && fb;
	while (same) {
		int ca = getc(fa), cb = getc(fb);
		if (ca != cb)
			same = 0;
		if (ca == EOF || cb == EOF)
			break;
	}
	if (fa)
		fclose(fa);
	if (fb)
		fclose(fb);
	return same;
}

int tu_run_suite(const char *name, const tu_case *cases, size_t n, void (*setup)(void),
                 void (*teardown)(void), double timeout_s)
{
	/* under ASan the preloaded agent is not first in the library list: the
	 * programs these suites run must not refuse to start for that */
	const char *o = getenv("ASAN_OPTIONS");
	char opts[1024];
	snprintf(opts, sizeof(opts), "%s%sverify_asan_link_order=0", o ? o : "", o && *o ? ":" : "");
	setenv("ASAN_OPTIONS", opts, 1);
	Suite *s = suite_create(name);
	for (size_t i = 0; i < n; i++) {
		TCase *tc = tcase_create(cases[i].name);
		/* unchecked: runs in the parent, so a failed test leaves no directory */
		tcase_add_unchecked_fixture(tc, setup, teardown);
		tcase_set_timeout(tc, timeout_s);
		tcase_add_test(tc, cases[i].fn);
		suite_add_tcase(s, tc);
	}
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
