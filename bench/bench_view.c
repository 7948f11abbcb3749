/* bench_view.c - iogram-view's costs: the time to draw one full dashboard
 * frame with 64 sources and one hour of history (offscreen cairo, 1600x1000;
 * target <= 8 ms), and the CPU share of the real window under Xvfb
 * following 64 live sources at 1 Hz (target <= 3% of a core). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "iogplot.h"
#include "session.h"

static char dir[] = "/tmp/iogram-bench-view-XXXXXX";

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(double), cmp_d);
	return v[n / 2];
}

static int run_wait(char *const argv[])
{
	pid_t pid = fork();
	if (pid == 0) {
		int nul = open("/dev/null", O_RDWR);
		dup2(nul, 1);
		execv(argv[0], argv);
		_exit(127);
	}
	int st;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* ---- part 1: drawing ---- */

static int bench_draw(const char *synth)
{
	char rec[600];
	snprintf(rec, sizeof(rec), "%s/hour.iogr", dir);
	double t0 = now_s();
	char *sargv[] = { (char *)synth, "--nodes", "64", "--seconds", "3600", "-o", rec, NULL };
	if (run_wait(sargv) != 0) {
		fprintf(stderr, "bench_view: iogram-synth failed\n");
		return -1;
	}
	printf("recording: 64 sources on 64 nodes, 3600 s (synth %.1f s)\n", now_s() - t0);
	char err[512];
	iogv_session *s = iogv_session_new(NULL);
	t0 = now_s();
	if (iogv_open_replay(s, rec, err, sizeof(err)) < 0) {
		fprintf(stderr, "bench_view: %s\n", err);
		return -1;
	}
	double a, b;
	iogv_replay_span(s, &a, &b);
	iogv_replay_seek(s, b);
	double t_open = now_s() - t0;
	iogplot_frame f;
	iogplot_frame_init(&f);
	enum { N = 25 };
	double tb[N], tu[N], tc[N], tm[N], th[N];
	for (int i = 0; i < N; i++) {
		t0 = now_s();
		iogv_frame(s, NULL, 0, &f);
		tb[i] = (now_s() - t0) * 1e3;
	}
	iogplot_style st;
	iogplot_style_init(&st, 0);
	iogplot_view v;
	iogplot_view_init(&v);
	v.span = 3600;   /* the whole hour on the time axes */
	const int W = 1600, H = 1000;
	cairo_surface_t *surf = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, W, H);
	/* no cache: every axis, grid and label drawn (a new size or theme) */
	for (int i = 0; i < N; i++) {
		cairo_t *cr = cairo_create(surf);
		t0 = now_s();
		iogplot_dashboard(cr, &st, &f, &v, W, H);
		cairo_surface_flush(surf);
		tu[i] = (now_s() - t0) * 1e3;
		cairo_destroy(cr);
	}
	/* cache, time axes moving by a second each frame (live following) */
	v.cache = iogplot_cache_new();
	iogplot_view_time(&v, &f, &v.t_lo, &v.t_hi);
	for (int i = 0; i < N; i++) {
		v.t_lo += 1;
		v.t_hi += 1;
		cairo_t *cr = cairo_create(surf);
		t0 = now_s();
		iogplot_dashboard(cr, &st, &f, &v, W, H);
		cairo_surface_flush(surf);
		tm[i] = (now_s() - t0) * 1e3;
		cairo_destroy(cr);
	}
	/* cache, nothing moved (a redraw after an expose) */
	for (int i = 0; i < N; i++) {
		cairo_t *cr = cairo_create(surf);
		t0 = now_s();
		iogplot_dashboard(cr, &st, &f, &v, W, H);
		cairo_surface_flush(surf);
		tc[i] = (now_s() - t0) * 1e3;
		cairo_destroy(cr);
	}
	/* HiDPI: the same frame at device scale 2 (3200x2000 pixels) */
	cairo_surface_t *s2 = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 2 * W, 2 * H);
	cairo_surface_set_device_scale(s2, 2, 2);
	iogplot_cache_clear(v.cache);
	for (int i = 0; i < N; i++) {
		v.t_lo += 1;
		v.t_hi += 1;
		cairo_t *cr = cairo_create(s2);
		t0 = now_s();
		iogplot_dashboard(cr, &st, &f, &v, W, H);
		cairo_surface_flush(s2);
		th[i] = (now_s() - t0) * 1e3;
		cairo_destroy(cr);
	}
	char png[700];
	snprintf(png, sizeof(png), "%s/hour.png", dir);
	cairo_surface_write_to_png(surf, png);
	printf("frame: %zu nodes x %zu bins of rates, %zu access samples in %zu files\n",
	       f.rates.nnodes, f.rates.nbins, f.naccess, f.nfiles);
	printf("open + seek to the end:               %8.1f ms\n", t_open * 1e3);
	printf("build frame from the model (median):  %8.2f ms\n", median(tb, N));
	printf("draw 1600x1000, no cache (median):    %8.2f ms\n", median(tu, N));
	printf("draw, cache, time axis moving (med):  %8.2f ms   <- a live frame; target <= 8 ms\n",
	       median(tm, N));
	printf("draw, cache, nothing moved (median):  %8.2f ms\n", median(tc, N));
	printf("draw at scale 2 (3200x2000), moving:  %8.2f ms\n", median(th, N));
	cairo_surface_destroy(surf);
	cairo_surface_destroy(s2);
	iogplot_cache_free(v.cache);
	iogplot_frame_free(&f);
	iogv_session_free(s);
	return 0;
}

/* ---- part 2: CPU share of the window following live sources ---- */

static int free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t l = sizeof(sa);
	bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	getsockname(fd, (struct sockaddr *)&sa, &l);
	close(fd);
	return ntohs(sa.sin_port);
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t wall_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#define NSRC 64

static void send_msg(void *pub, const iogp_msg *m, uint8_t *buf)
{
	char topic[64];
	long n = iogp_msg_encode(m, buf, 1 << 20);
	int tl = iogp_topic(topic, sizeof(topic), m->kind, m->source);
	if (n < 0 || tl < 0)
		return;
	zmq_send(pub, topic, (size_t)tl, ZMQ_SNDMORE);
	zmq_send(pub, buf, (size_t)n, 0);
}

/* 64 sources, one per node, each a DELTA a second on real clocks; first an
 * hour of history sent at once (DELTAs land on their own intervals). */
static void sender(const char *ep, double seconds)
{
	void *ctx = zmq_ctx_new(), *pub = zmq_socket(ctx, ZMQ_PUB);
	int hwm = 400000, linger = 1000;
	zmq_setsockopt(pub, ZMQ_SNDHWM, &hwm, sizeof(hwm));
	zmq_setsockopt(pub, ZMQ_LINGER, &linger, sizeof(linger));
	zmq_connect(pub, ep);
	sleep_ms(1500);   /* the subscription must arrive first */
	uint8_t *buf = malloc(1 << 20);
	iogp_metric_def defs[10];
	static const char *const cn[4] = { "posix.read.bytes", "posix.write.bytes", "posix.read.ops",
	                                   "posix.write.ops" };
	static const char *const hn[5] = { "posix.read.size", "posix.write.size", "posix.read.latency",
	                                   "posix.write.latency", "posix.queue_depth" };
	for (int i = 0; i < 4; i++)
		defs[i] = (iogp_metric_def){ .id = (uint32_t)i + 1, .kind = IOGP_COUNTER, .name = cn[i],
		                             .unit = i < 2 ? "bytes" : "ops" };
	for (int i = 0; i < 5; i++) {
		defs[4 + i] = (iogp_metric_def){ .id = (uint32_t)i + 10, .kind = IOGP_HISTOGRAM,
		                                 .name = hn[i], .unit = i < 2 ? "bytes" : i < 4 ? "ns" : "" };
		iogp_bins_native(&defs[4 + i].bins, 4);
	}
	defs[9] = (iogp_metric_def){ .id = 20, .kind = IOGP_ACCESS, .name = "posix.access", .unit = "" };
	uint64_t id[NSRC], seq[NSRC], mono0 = 1000000000000ull;
	char host[NSRC][16], rank[NSRC][8], path[NSRC][48];
	uint64_t end = wall_ns(), start = end - 3600000000000ull;
	for (int s = 0; s < NSRC; s++) {
		id[s] = rnd() | 1;
		seq[s] = 0;
		snprintf(host[s], sizeof(host[s]), "node%03d", s + 1);
		snprintf(rank[s], sizeof(rank[s]), "%d", s);
		snprintf(path[s], sizeof(path[s]), "/scratch/bench/rank%03d.dat", s);
		iogp_label lab[3] = { { "host", host[s] }, { "pid", "4242" }, { "rank", rank[s] } };
		iogp_msg m = { .kind = IOGP_HELLO, .source = id[s], .seq = seq[s]++, .labels = lab,
		               .nlabels = 3, .metrics = defs, .nmetrics = 10 };
		send_msg(pub, &m, buf);
	}
	sleep_ms(300);
	iogp_counter_val cv[4];
	iogp_bin bins[5][8];
	iogp_hist_val hv[5];
	iogp_access av[16];
	iogp_file fv[1];
	double t0 = now_s();
	int backfill = 1;
	uint64_t tick = start;
	long sent = 0;
	while (now_s() - t0 < seconds) {
		uint64_t w = backfill ? tick : wall_ns();
		for (int s = 0; s < NSRC; s++) {
			uint64_t rb = 1 + rnd() % (64u << 20), wb = rnd() % (16u << 20);
			cv[0] = (iogp_counter_val){ 1, rb };
			cv[1] = (iogp_counter_val){ 2, wb };
			cv[2] = (iogp_counter_val){ 3, 1 + rb / 65536 };
			cv[3] = (iogp_counter_val){ 4, wb / 65536 };
			for (int h = 0; h < 5; h++) {
				uint64_t base = h < 2 ? 4096 : h < 4 ? 50000 : 1;
				for (int k = 0; k < 8; k++)
					bins[h][k] = (iogp_bin){ iogp_native_index(base << k, 4) + 0, 1 + rnd() % 100 };
				hv[h] = (iogp_hist_val){ (uint32_t)h + 10, 8, bins[h] };
			}
			uint64_t t1 = mono0 + (w - start), t0n = t1 - 1000000000ull;
			for (int k = 0; k < 16; k++)
				av[k] = (iogp_access){ 20, t0n + (uint64_t)k * 60000000ull, 1, (uint32_t)(k & 1),
				                       ((w - start) / 1000000000ull) * 65536 + (uint64_t)k * 4096,
				                       4096 };
			fv[0] = (iogp_file){ 1, path[s] };
			iogp_msg m = { .kind = IOGP_DELTA, .source = id[s], .seq = seq[s]++,
			               .t0_ns = t0n, .t1_ns = t1, .wall_ns = w,
			               .counters = cv, .ncounters = 4, .hists = hv, .nhists = 5,
			               .access = av, .naccess = 16, .access_seen = 16,
			               .files = fv, .nfiles = seq[s] == 2 ? 1 : 0 };
			send_msg(pub, &m, buf);
			sent++;
		}
		if (backfill) {
			tick += 1000000000ull;
			if (sent % 6400 == 0)
				sleep_ms(40);
			if (tick >= wall_ns()) {
				backfill = 0;
				printf("sender: an hour of history sent (%ld DELTAs in %.1f s)\n", sent,
				       now_s() - t0);
				fflush(stdout);
			}
		} else {
			sleep_ms(1000);
		}
	}
	free(buf);
	zmq_close(pub);
	zmq_ctx_term(ctx);
}

static double cpu_s(pid_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	char *p = strrchr(buf, ')');
	unsigned long ut = 0, stt = 0;
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &stt) != 2)
		return -1;
	return (double)(ut + stt) / (double)sysconf(_SC_CLK_TCK);
}

static pid_t start_xvfb(char *display, size_t len)
{
	for (int n = 160; n < 220; n++) {
		char lock[64];
		snprintf(lock, sizeof(lock), "/tmp/.X%d-lock", n);
		if (access(lock, F_OK) == 0)
			continue;
		snprintf(display, len, ":%d", n);
		pid_t pid = fork();
		if (pid == 0) {
			int nul = open("/dev/null", O_RDWR);
			dup2(nul, 1);
			dup2(nul, 2);
			execlp("Xvfb", "Xvfb", display, "-screen", "0", "1600x1000x24", "-nolisten", "tcp",
			       (char *)NULL);
			_exit(127);
		}
		char sock[64];
		snprintf(sock, sizeof(sock), "/tmp/.X11-unix/X%d", n);
		for (int i = 0; i < 100; i++) {
			if (access(sock, F_OK) == 0) {
				sleep_ms(300);
				return pid;
			}
			if (waitpid(pid, NULL, WNOHANG) == pid)
				break;
			sleep_ms(100);
		}
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
	}
	return -1;
}

static pid_t start_view(const char *view, const char *display, char *const extra[])
{
	pid_t pid = fork();
	if (pid == 0) {
		setenv("DISPLAY", display, 1);
		setenv("GDK_BACKEND", "x11", 1);
		setenv("NO_AT_BRIDGE", "1", 1);
		setenv("GSETTINGS_BACKEND", "memory", 1);
		int nul = open("/dev/null", O_RDWR);
		dup2(nul, 1);
		dup2(nul, 2);
		char *argv[16];
		int n = 0;
		argv[n++] = (char *)view;
		for (int i = 0; extra[i] && n < 15; i++)
			argv[n++] = extra[i];
		argv[n] = NULL;
		execv(view, argv);
		_exit(127);
	}
	return pid;
}

static void measure(const char *what, pid_t view, pid_t xvfb, double secs)
{
	double c0 = cpu_s(view), x0 = cpu_s(xvfb), t0 = now_s();
	sleep_ms((int)(secs * 1000));
	double c1 = cpu_s(view), x1 = cpu_s(xvfb), dt = now_s() - t0;
	printf("%s: iogram-view %.2f%% of a core (Xvfb %.2f%%) over %.0f s\n", what,
	       100 * (c1 - c0) / dt, 100 * (x1 - x0) / dt, dt);
	fflush(stdout);
}

static int bench_cpu(const char *view, const char *iogram)
{
	const char *gtk = getenv("IOGRAM_VIEW_GTK");
	if (gtk && !strcmp(gtk, "0")) {
		printf("CPU share: skipped (built without GTK)\n");
		return 0;
	}
	char display[32];
	pid_t xvfb = start_xvfb(display, sizeof(display));
	if (xvfb < 0) {
		printf("CPU share: skipped (no Xvfb)\n");
		return 0;
	}
	char ep[64];
	/* (a) iogram loadgen, as the issue suggests: 64 sources at 1 Hz. Its DELTAs
	 * carry synthetic wall clocks, so the rate panels stay empty. */
	snprintf(ep, sizeof(ep), "tcp://127.0.0.1:%d", free_port());
	char *va[] = { "--listen", ep, "--history", "3600", NULL };
	pid_t v = start_view(view, display, va);
	sleep_ms(2000);
	pid_t lg = fork();
	if (lg == 0) {
		int nul = open("/dev/null", O_RDWR);
		dup2(nul, 1);
		dup2(nul, 2);
		execl(iogram, iogram, "loadgen", "--sources", "64", "--rate", "1", "--endpoint", ep,
		      "--duration", "45", "--quiet", (char *)NULL);
		_exit(127);
	}
	sleep_ms(10000);
	measure("loadgen 64 sources at 1 Hz", v, xvfb, 30);
	kill(lg, SIGTERM);
	waitpid(lg, NULL, 0);
	kill(v, SIGTERM);
	waitpid(v, NULL, 0);

	/* (b) 64 sources on real clocks with an hour of history: every panel full */
	snprintf(ep, sizeof(ep), "tcp://127.0.0.1:%d", free_port());
	char *vb[] = { "--listen", ep, "--history", "3600", NULL };
	v = start_view(view, display, vb);
	sleep_ms(2000);
	pid_t snd = fork();
	if (snd == 0) {
		sender(ep, 120);
		_exit(0);
	}
	sleep_ms(25000);   /* backfill, then settle */
	measure("64 sources at 1 Hz, 1 h of history, all panels", v, xvfb, 30);
	kill(snd, SIGTERM);
	waitpid(snd, NULL, 0);
	kill(v, SIGTERM);
	waitpid(v, NULL, 0);
	kill(xvfb, SIGTERM);
	waitpid(xvfb, NULL, 0);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "--sender")) {   /* the live load alone, for a look */
		sender(argv[2], atof(argv[3]));
		return 0;
	}
	const char *view = getenv("IOGRAM_VIEW"), *synth = getenv("IOGRAM_SYNTH");
	const char *iogram = getenv("IOGRAM_BIN");
	if (!view || !synth || !iogram) {
		fprintf(stderr, "bench_view: set IOGRAM_VIEW, IOGRAM_SYNTH and IOGRAM_BIN\n");
		return 1;
	}
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	printf("bench_view (2-core machine)\n");
	int rc = bench_draw(synth);
	if (!rc && !getenv("IOGRAM_BENCH_NO_CPU"))
		rc = bench_cpu(view, iogram);
	char cmd[700];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (!getenv("IOGRAM_KEEP") && system(cmd) != 0)
		fprintf(stderr, "bench_view: could not remove %s\n", dir);
	return rc ? 1 : 0;
}
