/* bench_top.c - iogram-top's cost: CPU share while following 64 emulated
 * sources at 1 Hz (iogram loadgen), and bytes written to the terminal per
 * second at 80x24 (tmux pipe-pane counts what the pane receives). Targets:
 * <= 2% of a core, <= 4 KB/s. */
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char dir[] = "/tmp/iogram-bench-top-XXXXXX";
static char sock[64];

static char *fmt(const char *f, ...)
{
	static char bufs[8][4400];
	static int k;
	char *b = bufs[k++ % 8];
	va_list ap;
	va_start(ap, f);
	vsnprintf(b, 4400, f, ap);
	va_end(ap);
	return b;
}

static int run(const char *cmd)
{
	int st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void nap(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };
	nanosleep(&ts, NULL);
}

static int free_port(void)
{
	int s = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	if (bind(s, (struct sockaddr *)&a, sizeof(a)) < 0)
		return 17999;
	socklen_t l = sizeof(a);
	getsockname(s, (struct sockaddr *)&a, &l);
	close(s);
	return ntohs(a.sin_port);
}

static long read_long(const char *cmd)
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

/* utime + stime of pid in seconds. */
static double cpu_s(pid_t pid)
{
	FILE *f = fopen(fmt("/proc/%d/stat", (int)pid), "r");
	if (!f)
		return -1;
	char buf[2048];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *p = strrchr(buf, ')');
	unsigned long ut = 0, st = 0;
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
		return -1;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static long file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? (long)st.st_size : 0;
}

/* One session: iogram-top at w x h following nsrc loadgen sources at 1 Hz,
 * or (nsrc 0) its own demo. */
static int measure(int w, int h, int nsrc, double secs, double *cpu, double *bps)
{
	const char *top = getenv("IOGRAM_TOP"), *bin = getenv("IOGRAM_BIN");
	int port = free_port();
	char ep[64];
	snprintf(ep, sizeof(ep), "tcp://127.0.0.1:%d", port);
	snprintf(sock, sizeof(sock), "b%d-%dx%d", (int)getpid(), w, h);
	const char *bytes = fmt("%s/%s.bytes", dir, sock);
	if (run(fmt("tmux -L %s -f /dev/null new-session -d -x %d -y %d "
	            "\"env TERM=xterm-256color LANG=C.UTF-8 %s %s %s; sleep 60\"",
	            sock, w, h, top, nsrc ? "--listen" : "--demo", nsrc ? ep : "")) != 0)
		return -1;
	run(fmt("tmux -L %s pipe-pane -o 'cat >> %s'", sock, bytes));
	long pid = -1;
	for (int i = 0; i < 50 && pid <= 0; i++) {
		nap(0.1);
		pid = read_long(fmt("pgrep -P $(tmux -L %s display -p '#{pane_pid}') -x iogram-top", sock));
	}
	pid_t gen = nsrc ? fork() : -1;
	if (gen == 0) {
		int nul = open("/dev/null", 1);
		dup2(nul, 1);
		dup2(nul, 2);
		execl(bin, bin, "loadgen", "--sources", fmt("%d", nsrc), "--rate", "1", "--endpoint", ep,
		      "--quiet", (char *)NULL);
		_exit(127);
	}
	nap(5);   /* every source known, panels filled */
	double c0 = cpu_s((pid_t)pid), t0 = now_s();
	long b0 = file_size(bytes);
	nap(secs);
	double c1 = cpu_s((pid_t)pid), t1 = now_s();
	long b1 = file_size(bytes);
	if (gen > 0) {
		kill(gen, SIGTERM);
		waitpid(gen, NULL, 0);
	}
	run(fmt("tmux -L %s kill-server >/dev/null 2>&1", sock));
	if (pid <= 0 || c0 < 0 || c1 < 0)
		return -1;
	*cpu = (c1 - c0) / (t1 - t0);
	*bps = (double)(b1 - b0) / (t1 - t0);
	return 0;
}

int main(void)
{
	if (!getenv("IOGRAM_TOP") || !getenv("IOGRAM_BIN")) {
		fprintf(stderr, "bench_top: set IOGRAM_TOP and IOGRAM_BIN\n");
		return 1;
	}
	if (!mkdtemp(dir))
		return 1;
	setenv("TMUX_TMPDIR", dir, 1);
	unsetenv("TMUX");
	double secs = getenv("BENCH_TOP_SECONDS") ? atof(getenv("BENCH_TOP_SECONDS")) : 30;
	int bad = 0;
	/* loadgen's sources keep their own (emulated) wall clocks, so its rate
	 * lines hardly move; the demo (5 real agents, every panel moving) is
	 * the busier screen */
	static const struct { int w, h, n; } runs[] = { { 80, 24, 64 }, { 160, 48, 64 }, { 80, 24, 0 } };
	for (size_t i = 0; i < sizeof(runs) / sizeof(*runs); i++) {
		double cpu = 0, bps = 0;
		if (measure(runs[i].w, runs[i].h, runs[i].n, secs, &cpu, &bps) < 0) {
			fprintf(stderr, "bench_top: %dx%d run failed\n", runs[i].w, runs[i].h);
			bad = 1;
			continue;
		}
		int small = runs[i].w == 80;
		if (runs[i].n)
			printf("iogram-top %dx%d, %d sources at 1 Hz, %.0f s: CPU %.2f%% of a core (target <= 2%%), "
			       "terminal output %.0f B/s%s\n", runs[i].w, runs[i].h, runs[i].n, secs, cpu * 100,
			       bps, small ? " (target <= 4096 B/s)" : "");
		else
			printf("iogram-top --demo %dx%d (5 agents at 2 Hz), %.0f s: CPU %.2f%% of a core, terminal "
			       "output %.0f B/s%s\n", runs[i].w, runs[i].h, secs, cpu * 100, bps,
			       small ? " (target <= 4096 B/s)" : "");
		if ((runs[i].n && cpu > 0.02) || (small && bps > 4096))
			printf("  ABOVE TARGET\n");
	}
	run(fmt("rm -rf %s", dir));
	return bad;
}
