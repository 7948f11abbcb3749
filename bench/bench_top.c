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

#include "testutil.h"

static char dir[256];
static char sock[64];

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
	char ep[64];
	snprintf(ep, sizeof(ep), "%s", tu_ep(tu_free_port()));
	snprintf(sock, sizeof(sock), "b%d-%dx%d", (int)getpid(), w, h);
	const char *bytes = tu_fmt("%s/%s.bytes", dir, sock);
	if (tu_system(tu_fmt("tmux -L %s -f /dev/null new-session -d -x %d -y %d "
	                     "\"env TERM=xterm-256color LANG=C.UTF-8 %s %s %s; sleep 60\"",
	                     sock, w, h, top, nsrc ? "--listen" : "--demo", nsrc ? ep : "")) != 0)
		return -1;
	tu_system(tu_fmt("tmux -L %s pipe-pane -o 'cat >> %s'", sock, bytes));
	long pid = -1;
	for (int i = 0; i < 50 && pid <= 0; i++) {
		tu_sleep_ms(100);
		pid = tu_read_long(tu_fmt("pgrep -P $(tmux -L %s display -p '#{pane_pid}') -x iogram-top",
		                          sock));
	}
	pid_t gen = nsrc ? tu_spawn((char *[]){ (char *)bin, "loadgen", "--sources", tu_fmt("%d", nsrc),
	                                        "--rate", "1", "--endpoint", ep, "--quiet", NULL },
	                            NULL, NULL, 0) : -1;
	tu_sleep_ms(5000);   /* every source known, panels filled */
	double c0 = tu_cpu_s((pid_t)pid), t0 = tu_now();
	long b0 = file_size(bytes);
	tu_sleep_ms((long)(secs * 1000));
	double c1 = tu_cpu_s((pid_t)pid), t1 = tu_now();
	long b1 = file_size(bytes);
	if (gen > 0) {
		kill(gen, SIGTERM);
		waitpid(gen, NULL, 0);
	}
	tu_system(tu_fmt("tmux -L %s kill-server >/dev/null 2>&1", sock));
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
	tu_tmpdir(dir, sizeof(dir), "iogram-bench-top");
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
	tu_rmdir_all(dir);
	return bad;
}
