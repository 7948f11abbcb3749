/* testutil.c - helpers the Check suites and the benchmarks share (see testutil.h). */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

/* Set while one of our runners runs the tests (and inherited by the
 * processes Check forks for them): only then may Check's asserts be used. */
static int tu_checking;

#define TU_CHECK(cond, ...) do { \
	if (tu_checking) { \
		ck_assert_msg(cond, __VA_ARGS__); \
	} else if (!(cond)) { \
		fprintf(stderr, "testutil: "); \
		fprintf(stderr, __VA_ARGS__); \
		fputc('\n', stderr); \
		exit(1); \
	} \
} while (0)

/* ---- clocks, formatting, numbers ---- */

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

char *tu_fmt(const char *fmt, ...)
{
	static char bufs[32][4608];
	static unsigned k;
	char *b = bufs[k++ % 32];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(b, sizeof(bufs[0]), fmt, ap);
	va_end(ap);
	return b;
}

uint64_t tu_splitmix(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double tu_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- environment, directories, files ---- */

const char *tu_env(const char *name)
{
	const char *v = getenv(name);
	TU_CHECK(v != NULL && *v, "%s is not set (run through meson test)", name);
	return v;
}

void tu_prog(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/prog_%s", tu_env("IOGRAM_PROGS"), name);
}

void tu_asan_option(const char *opt)
{
	const char *o = getenv("ASAN_OPTIONS");
	char buf[1024];
	snprintf(buf, sizeof(buf), "%s%s%s", o && *o ? o : "", o && *o ? ":" : "", opt);
	setenv("ASAN_OPTIONS", buf, 1);
}

void tu_tmpdir(char *buf, size_t len, const char *prefix)
{
	const char *t = getenv("TMPDIR");
	snprintf(buf, len, "%s/%s-XXXXXX", t && *t ? t : "/tmp", prefix);
	TU_CHECK(mkdtemp(buf) != NULL, "mkdtemp %s: %s", buf, strerror(errno));
}

int tu_rmdir_all(const char *dir)
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
	return rmdir(dir) == 0 || errno == ENOENT ? 0 : -1;
}

const char *tu_slurp(const char *path)
{
	static char buf[65536];
	FILE *f = fopen(path, "r");
	TU_CHECK(f != NULL, "open %s: %s", path, strerror(errno));
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

char *tu_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL)
		return NULL;
	struct stat sb;
	/* a regular file's size and a little: one read to its end */
	size_t cap = (fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode) ? (size_t)sb.st_size : 0) + 4096;
	size_t n = 0;
	char *b = malloc(cap);
	while (b != NULL) {
		if (n + 1 >= cap) {
			char *nb = realloc(b, cap * 2);
			if (nb == NULL) {
				free(b);
				b = NULL;
				break;
			}
			b = nb;
			cap *= 2;
		}
		size_t want = cap - 1 - n, k = fread(b + n, 1, want, f);
		n += k;
		if (k < want)   /* its end, or an error (below) */
			break;
	}
	if (b != NULL && ferror(f)) {
		free(b);
		b = NULL;
	}
	fclose(f);
	if (b == NULL)
		return NULL;
	b[n] = '\0';
	if (len)
		*len = n;
	return b;
}

char *tu_load(const char *path, size_t *len)
{
	char *b = tu_read_file(path, len);
	TU_CHECK(b != NULL, "read %s: %s", path, strerror(errno));
	return b;
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

int tu_wait_file(const char *path, double timeout_s)
{
	struct stat sb;
	for (double t0 = tu_now(); tu_now() - t0 < timeout_s; tu_sleep_ms(100))
		if (stat(path, &sb) == 0 && sb.st_size > 0) {
			tu_sleep_ms(300);   /* let the writer finish */
			return 1;
		}
	return 0;
}

/* ---- programs ---- */

static void redirect(int fd, const char *path, int flags)
{
	int f = open(path, flags, 0600);
	if (f >= 0)
		dup2(f, fd);
}

/* In the child: descriptors as o says (fd_out / fd_err >= 0: to those
 * instead), limits, environment, then argv. */
static void child_exec(char *const argv[], const tu_opts *o, int fd_out, int fd_err)
{
	if (o->null_in)
		redirect(0, "/dev/null", O_RDONLY);
	if (fd_out >= 0)
		dup2(fd_out, 1);
	else if (!o->keep_out)
		redirect(1, o->out ? o->out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC);
	if (fd_err >= 0)
		dup2(fd_err, 2);
	else if (!o->keep_err)
		redirect(2, o->err ? o->err : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC);
	for (int fd = 3; fd < 64; fd++)
		close(fd);
	if (o->nofile > 0) {
		struct rlimit rl = { (rlim_t)o->nofile, (rlim_t)o->nofile };
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (o->fsize > 0) {
		struct rlimit rl = { (rlim_t)o->fsize, (rlim_t)o->fsize };
		setrlimit(RLIMIT_FSIZE, &rl);
		signal(SIGXFSZ, SIG_IGN);
	}
	for (const char *const *e = o->env; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		char name[256];
		snprintf(name, sizeof(name), "%.*s", (int)(eq ? eq - *e : (long)strlen(*e)), *e);
		if (eq)
			setenv(name, eq + 1, 1);
		else
			unsetenv(name);
	}
	execvp(argv[0], argv);
	_exit(126);
}

pid_t tu_spawn_opt(char *const argv[], const tu_opts *o)
{
	static const tu_opts none;
	pid_t pid = fork();
	TU_CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0)
		child_exec(argv, o ? o : &none, -1, -1);
	return pid;
}

pid_t tu_spawn(char *const argv[], const char *out, const char *err, long nofile)
{
	tu_opts o = { .out = out, .err = err, .nofile = nofile };
	return tu_spawn_opt(argv, &o);
}

int tu_wait(pid_t pid, double timeout_s)
{
	double end = tu_now() + timeout_s;
	for (;;) {
		int st;
		pid_t r = waitpid(pid, &st, timeout_s > 0 ? WNOHANG : 0);
		if (r == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		if (r < 0 && errno == EINTR)
			continue;
		TU_CHECK(r == 0, "waitpid %d: %s", (int)pid, strerror(errno));
		if (tu_now() > end) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return -1;
		}
		tu_sleep_ms(2);
	}
}

int tu_stop(pid_t pid, int sig, double timeout_s)
{
	kill(pid, sig);
	return tu_wait(pid, timeout_s);
}

int tu_run(char *const argv[], const char *out, double timeout_s)
{
	return tu_wait(tu_spawn(argv, out, NULL, 0), timeout_s);
}

int tu_system(const char *cmd)
{
	int st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

long tu_read_long(const char *cmd)
{
	FILE *p = popen(cmd, "r");
	long v = -1;
	if (p) {
		if (fscanf(p, "%ld", &v) != 1)
			v = -1;
		pclose(p);
	}
	return v;
}

/* Appends what fd has to say to *buf (len *n, capacity *cap); 0 at its end. */
static int drain(int fd, char **buf, size_t *n, size_t *cap)
{
	if (*n + 4096 > *cap) {
		*cap = (*cap + 4096) * 2;
		char *nb = realloc(*buf, *cap);
		TU_CHECK(nb != NULL, "out of memory");
		*buf = nb;
	}
	ssize_t k = read(fd, *buf + *n, *cap - *n - 1);
	if (k < 0 && errno == EINTR)
		return 1;
	if (k > 0)
		*n += (size_t)k;
	(*buf)[*n] = '\0';
	return k > 0;
}

tu_result tu_capture(char *const argv[], const tu_opts *o, double timeout_s)
{
	static const tu_opts none;
	const tu_opts *c = o ? o : &none;
	int po[2], pe[2] = { -1, -1 };
	TU_CHECK(pipe(po) == 0, "pipe: %s", strerror(errno));
	if (!c->keep_err)
		TU_CHECK(pipe(pe) == 0, "pipe: %s", strerror(errno));
	pid_t pid = fork();
	TU_CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0)
		child_exec(argv, c, po[1], pe[1]);
	close(po[1]);
	if (pe[1] >= 0)
		close(pe[1]);
	tu_result r = { 0, calloc(1, 1), calloc(1, 1) };
	size_t n[2] = { 0, 0 }, cap[2] = { 1, 1 };
	char **buf[2] = { &r.out, &r.err };
	struct pollfd fds[2] = { { po[0], POLLIN, 0 }, { pe[0], POLLIN, 0 } };
	int open_fds = pe[0] >= 0 ? 2 : 1;
	double end = tu_now() + timeout_s;
	while (open_fds && (timeout_s <= 0 || tu_now() < end)) {
		if (poll(fds, 2, timeout_s <= 0 ? -1 : 100) <= 0)
			continue;
		for (int i = 0; i < 2; i++) {
			if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			if (!drain(fds[i].fd, buf[i], &n[i], &cap[i])) {
				close(fds[i].fd);
				fds[i].fd = -1;
				open_fds--;
			}
		}
	}
	for (int i = 0; i < 2; i++)
		if (fds[i].fd >= 0)
			close(fds[i].fd);
	if (open_fds) {   /* out of time */
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		r.status = -1;
	} else {
		double left = end - tu_now();
		r.status = timeout_s <= 0 ? tu_wait(pid, 0) : tu_wait(pid, left > 0.001 ? left : 0.001);
	}
	return r;
}

void tu_result_free(tu_result *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}

/* ---- network ---- */

/* Whether port is free on loopback now. */
static int port_free(int port)
{
	int s = socket(AF_INET, SOCK_STREAM, 0);
	TU_CHECK(s >= 0, "socket: %s", strerror(errno));
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
	                         .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int ok = bind(s, (struct sockaddr *)&a, sizeof(a)) == 0;
	close(s);
	return ok;
}

/* A free port below the kernel's ephemeral range: one that bind(0) hands
 * out can be taken by another test's outgoing connection (loadgen opens
 * many) before the server here listens on it; CI saw a relay fail with
 * "Address already in use" that way. */
int tu_free_port(void)
{
	static unsigned seed;
	int lo = 32768, hi = 60999;
	FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
	if (f) {
		if (fscanf(f, "%d %d", &lo, &hi) != 2)
			lo = 32768;
		fclose(f);
	}
	if (!seed)
		seed = (unsigned)getpid() * 2654435761u ^ (unsigned)time(NULL);
	for (int i = 0; i < 200 && lo > 12000; i++) {
		int port = 10000 + (int)(rand_r(&seed) % (unsigned)(lo - 10000));
		if (port_free(port))
			return port;
	}
	int s = socket(AF_INET, SOCK_STREAM, 0);   /* no room below it: any free port */
	TU_CHECK(s >= 0, "socket: %s", strerror(errno));
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	TU_CHECK(bind(s, (struct sockaddr *)&a, sizeof(a)) == 0, "bind: %s", strerror(errno));
	socklen_t l = sizeof(a);
	TU_CHECK(getsockname(s, (struct sockaddr *)&a, &l) == 0, "getsockname: %s", strerror(errno));
	close(s);
	return ntohs(a.sin_port);
}

char *tu_ep(int port)
{
	return tu_fmt("tcp://127.0.0.1:%d", port);
}

int tu_tcp_connect(int port)
{
	int s = socket(AF_INET, SOCK_STREAM, 0);
	if (s < 0)
		return -1;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
	                         .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	if (connect(s, (struct sockaddr *)&a, sizeof(a)) != 0) {
		close(s);
		return -1;
	}
	return s;
}

int tu_listen(int *port)
{
	int s = socket(AF_INET, SOCK_STREAM, 0);
	TU_CHECK(s >= 0, "socket: %s", strerror(errno));
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t l = sizeof(a);
	TU_CHECK(bind(s, (struct sockaddr *)&a, sizeof(a)) == 0, "bind: %s", strerror(errno));
	TU_CHECK(listen(s, 4) == 0, "listen: %s", strerror(errno));
	TU_CHECK(getsockname(s, (struct sockaddr *)&a, &l) == 0, "getsockname: %s", strerror(errno));
	*port = ntohs(a.sin_port);
	return s;
}

int tu_wait_port(int port, double timeout_s)
{
	double end = tu_now() + timeout_s;
	for (;;) {
		int s = tu_tcp_connect(port);
		if (s >= 0) {
			close(s);
			return 1;
		}
		if (tu_now() >= end)
			return 0;
		tu_sleep_ms(10);
	}
}

/* ---- processes and displays ---- */

double tu_cpu_s(pid_t pid)
{
	char path[64], buf[2048];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *p = strrchr(buf, ')');
	unsigned long ut = 0, st = 0;
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
		return -1;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

long tu_rss_kib(pid_t pid)
{
	char p[64], line[256];
	snprintf(p, sizeof(p), "/proc/%d/status", (int)pid);
	FILE *f = fopen(p, "r");
	long v = -1;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld", &v) == 1)
			break;
	fclose(f);
	return v;
}

pid_t tu_xvfb_start(char *display, size_t len, int first, int last, const char *geometry,
                    const char *const extra[], int (*ready)(const char *display))
{
	for (int n = first; n < last; n++) {
		char lock[64], sock[64];
		snprintf(lock, sizeof(lock), "/tmp/.X%d-lock", n);
		snprintf(sock, sizeof(sock), "/tmp/.X11-unix/X%d", n);
		if (access(lock, F_OK) == 0 || access(sock, F_OK) == 0)
			continue;
		snprintf(display, len, ":%d", n);
		char *argv[24] = { "Xvfb", display, "-screen", "0", (char *)geometry, "-nolisten", "tcp" };
		int k = 7;
		for (int i = 0; extra && extra[i] && k < 23; i++)
			argv[k++] = (char *)extra[i];
		argv[k] = NULL;
		pid_t pid = tu_spawn_opt(argv, NULL);
		for (double t0 = tu_now(); tu_now() - t0 < 10;) {
			if (ready ? ready(display) : access(sock, F_OK) == 0) {
				if (!ready)
					tu_sleep_ms(300);
				return pid;
			}
			if (waitpid(pid, NULL, WNOHANG) == pid) {
				pid = -1;   /* lost a race for this number: try the next */
				break;
			}
			tu_sleep_ms(100);
		}
		if (pid > 0)
			tu_xvfb_stop(pid);
	}
	return -1;
}

void tu_xvfb_stop(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
	}
}

/* ---- suites ---- */

static int run_srunner(Suite *s, int fork)
{
	SRunner *sr = srunner_create(s);
	if (fork)
		srunner_set_fork_status(sr, CK_FORK);
	tu_checking = 1;
	srunner_run_all(sr, CK_NORMAL);
	tu_checking = 0;
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed;
}

int tu_run_srunner(Suite *s)
{
	return run_srunner(s, 0);
}

int tu_run_cases(const char *name, const tu_case *cases, size_t n, const tu_suite_opts *o)
{
	static const tu_suite_opts none;
	if (!o)
		o = &none;
	/* under ASan the preloaded agent is not first in the library list: the
	 * programs these suites run must not refuse to start for that */
	tu_asan_option("verify_asan_link_order=0");
	const char *asan = getenv("IOGRAM_ASAN_BUILD");
	Suite *s = suite_create(name);
	for (size_t i = 0; i < n; i++) {
		int skip = 0;
		for (const char *const *a = o->not_asan; asan && *asan == '1' && a && *a; a++)
			skip |= !strcmp(*a, cases[i].name);
		if (skip) {
			printf("not registered under ASan (runs in the plain build): %s\n", cases[i].name);
			continue;
		}
		TCase *tc = tcase_create(cases[i].name);
		/* unchecked: runs in the parent, so a failed test leaves no directory */
		if (o->setup || o->teardown)
			tcase_add_unchecked_fixture(tc, o->setup, o->teardown);
		if (o->timeout_s > 0)
			tcase_set_timeout(tc, o->timeout_s);
		tcase_add_test(tc, cases[i].fn);
		suite_add_tcase(s, tc);
	}
	return run_srunner(s, o->fork) ? 1 : 0;
}

int tu_run_suite(const char *name, const tu_case *cases, size_t n, void (*setup)(void),
                 void (*teardown)(void), double timeout_s)
{
	tu_suite_opts o = { .setup = setup, .teardown = teardown, .timeout_s = timeout_s };
	return tu_run_cases(name, cases, n, &o);
}

uint64_t tu_info_counter(const char *iogram, const char *file, const char *metric)
{
	FILE *p = popen(tu_fmt("%s info %s", iogram, file), "r");
	char line[512];
	unsigned long long v = UINT64_MAX;
	size_t n = strlen(metric);
	while (p && fgets(line, sizeof(line), p)) {
		const char *t = line + strspn(line, " ");
		if (!strncmp(t, metric, n) && t[n] == ' ' && sscanf(t + n, " counter %llu", &v) == 1)
			break;
	}
	if (p)
		pclose(p);
	return v;
}

int tu_fake_probes(const char *dir, const char *out, const tu_probe_spec *p, int n, int reports,
                   int gap_ms)
{
	const char *fake = getenv("IOGRAM_FAKE_PROBE"), *iogram = getenv("IOGRAM_BIN");
	pid_t pid[8];
	char files[8][600], cmd[8192];
	if (!fake || !iogram || n < 1 || n > 8)
		return -1;
	int u = snprintf(cmd, sizeof(cmd), "%s merge", iogram);
	for (int i = 0; i < n; i++) {
		snprintf(files[i], sizeof(files[i]), "%s/%s.iogr", dir, p[i].node);
		char rep[16], gap[16];
		snprintf(rep, sizeof(rep), "%d", reports);
		snprintf(gap, sizeof(gap), "%d", gap_ms);
		char *argv[16] = { (char *)fake, files[i], (char *)p[i].node, rep, gap };
		int k = 5;
		for (int j = 0; j < 9 && p[i].ops[j]; j++)
			argv[k++] = (char *)p[i].ops[j];
		argv[k] = NULL;
		pid[i] = tu_spawn(argv, NULL, NULL, 0);
		u += snprintf(cmd + u, sizeof(cmd) - (size_t)u, " %s", files[i]);
	}
	int bad = 0;
	for (int i = 0; i < n; i++)
		bad |= tu_wait(pid[i], 60) != 0;
	snprintf(cmd + u, sizeof(cmd) - (size_t)u, " -o %s >/dev/null 2>&1", out);
	return bad || tu_system(cmd) ? -1 : 0;
}

int tu_probe_job(const char *dir, const char *out)
{
	static const tu_probe_spec job[3] = {
		{ "nodeA", { "read=1000", "write=1000", "create=1100", "stat=900", "smallread=1300",
		             "delete=1200", NULL } },
		{ "nodeB", { "read=1000", "write=1000", "create=1100", "stat=900", "smallread=1300",
		             "delete=1200", NULL } },
		{ "nodeC", { "read=1000", "write=1000@6-99:8000", "create=1100", "stat=900", "smallread=1300",
		             "delete=1200", NULL } },
	};
	return tu_fake_probes(dir, out, job, 3, 12, 250);
}

int tu_strace_join(const char *in, const char *out)
{
	enum { MAXP = 64 };
	struct {
		long pid;
		char *text;
	} pend[MAXP];
	int np = 0;
	FILE *f = fopen(in, "r"), *o = f ? fopen(out, "w") : NULL;
	if (!f || !o) {
		if (f)
			fclose(f);
		return -1;
	}
	static char line[65536];
	while (fgets(line, sizeof(line), f)) {
		char *end;
		long pid = strtol(line, &end, 10);
		char *body = line;
		if (end != line && *end == ' ') {
			body = end;
			while (*body == ' ')   /* "PID  call(": two spaces */
				body++;
		} else {
			pid = 0;
		}
		char *unf = strstr(body, " <unfinished ...>");
		if (unf && np < MAXP) {
			*unf = '\0';
			pend[np].pid = pid;
			pend[np++].text = strdup(line);
			continue;
		}
		if (!strncmp(body, "<... ", 5) && strstr(body, " resumed>")) {
			int k = 0;
			while (k < np && pend[k].pid != pid)
				k++;
			if (k < np) {
				fprintf(o, "%s%s", pend[k].text, strstr(body, " resumed>") + 9);
				free(pend[k].text);
				pend[k] = pend[--np];
				continue;
			}
		}
		fputs(line, o);
	}
	for (int k = 0; k < np; k++) {   /* never resumed (the process ended) */
		fprintf(o, "%s\n", pend[k].text);
		free(pend[k].text);
	}
	fclose(f);
	return fclose(o) == 0 ? 0 : -1;
}

int tu_stop_at(void *stopper)
{
	tu_stopper *st = stopper;
	return ++st->calls == st->at;
}
