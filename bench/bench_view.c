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
#include "testutil.h"

static char dir[256];

/* argv with stdout to /dev/null; its exit status */
static int run_wait(char *const argv[])
{
	return tu_wait(tu_spawn_opt(argv, &(tu_opts){ .keep_err = 1 }), 0);
}

/* ---- part 1: drawing ---- */

static int bench_draw(const char *synth)
{
	char rec[600];
	snprintf(rec, sizeof(rec), "%s/hour.iogr", dir);
	double t0 = tu_now();
	char *sargv[] = { (char *)synth, "--nodes", "64", "--seconds", "3600", "-o", rec, NULL };
	if (run_wait(sargv) != 0) {
		fprintf(stderr, "bench_view: iogram-synth failed\n");
		return -1;
	}
	printf("recording: 64 sources on 64 nodes, 3600 s (synth %.1f s)\n", tu_now() - t0);
	char err[512];
	iogv_session *s = iogv_session_new(NULL);
	t0 = tu_now();
	if (iogv_open_replay(s, rec, err, sizeof(err)) < 0) {
		fprintf(stderr, "bench_view: %s\n", err);
		return -1;
	}
	double a, b;
	iogv_replay_span(s, &a, &b);
	iogv_replay_seek(s, b);
	double t_open = tu_now() - t0;
	iogplot_frame f;
	iogplot_frame_init(&f);
	enum { N = 25 };
	double tb[N], tu[N], tc[N], tm[N], th[N];
	for (int i = 0; i < N; i++) {
		t0 = tu_now();
		iogv_frame(s, NULL, 0, &f);
		tb[i] = (tu_now() - t0) * 1e3;
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
		t0 = tu_now();
		iogplot_dashboard(cr, &st, &f, &v, W, H);
		cairo_surface_flush(surf);
		tu[i] = (tu_now() - t0) * 1e3;
		cairo_destroy(cr);
	}
	/* cache, time axes moving by a second each frame (live following) */
	v.cache = iogplot_cache_new();
	iogplot_view_time(&v, &f, &v.t_lo, &v.t_hi);
	for (int i = 0; i < N; i++) {
		v.t_lo += 1;
		v.t_hi += 1;
		cairo_t *cr = cairo_create(surf);
		t0 = tu_now();
		iogplot_dashboard(cr, &st, &f, &v, W, H);
		cairo_surface_flush(surf);
		tm[i] = (tu_now() - t0) * 1e3;
		cairo_destroy(cr);
	}
	/* cache, nothing moved (a redraw after an expose) */
	for (int i = 0; i < N; i++) {
		cairo_t *cr = cairo_create(surf);
		t0 = tu_now();
		iogplot_dashboard(cr, &st, &f, &v, W, H);
		cairo_surface_flush(surf);
		tc[i] = (tu_now() - t0) * 1e3;
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
		t0 = tu_now();
		iogplot_dashboard(cr, &st, &f, &v, W, H);
		cairo_surface_flush(s2);
		th[i] = (tu_now() - t0) * 1e3;
		cairo_destroy(cr);
	}
	char png[700];
	snprintf(png, sizeof(png), "%s/hour.png", dir);
	cairo_surface_write_to_png(surf, png);
	printf("frame: %zu nodes x %zu bins of rates, %zu access samples in %zu files\n",
	       f.rates.nnodes, f.rates.nbins, f.naccess, f.nfiles);
	printf("open + seek to the end:               %8.1f ms\n", t_open * 1e3);
	printf("build frame from the model (median):  %8.2f ms\n", tu_median(tb, N));
	printf("draw 1600x1000, no cache (median):    %8.2f ms\n", tu_median(tu, N));
	printf("draw, cache, time axis moving (med):  %8.2f ms   <- a live frame; target <= 8 ms\n",
	       tu_median(tm, N));
	printf("draw, cache, nothing moved (median):  %8.2f ms\n", tu_median(tc, N));
	printf("draw at scale 2 (3200x2000), moving:  %8.2f ms\n", tu_median(th, N));
	cairo_surface_destroy(surf);
	cairo_surface_destroy(s2);
	iogplot_cache_free(v.cache);
	iogplot_frame_free(&f);
	iogv_session_free(s);
	return 0;
}

/* ---- part 2: CPU share of the window following live sources ---- */

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
	return tu_splitmix(&rng);
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
	tu_sleep_ms(1500);   /* the subscription must arrive first */
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
	tu_sleep_ms(300);
	iogp_counter_val cv[4];
	iogp_bin bins[5][8];
	iogp_hist_val hv[5];
	iogp_access av[16];
	iogp_file fv[1];
	double t0 = tu_now();
	int backfill = 1;
	uint64_t tick = start;
	long sent = 0;
	while (tu_now() - t0 < seconds) {
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
				tu_sleep_ms(40);
			if (tick >= wall_ns()) {
				backfill = 0;
				printf("sender: an hour of history sent (%ld DELTAs in %.1f s)\n", sent,
				       tu_now() - t0);
				fflush(stdout);
			}
		} else {
			tu_sleep_ms(1000);
		}
	}
	free(buf);
	zmq_close(pub);
	zmq_ctx_term(ctx);
}

static pid_t start_view(const char *view, const char *display, char *const extra[])
{
	char *argv[16];
	int n = 0;
	argv[n++] = (char *)view;
	for (int i = 0; extra[i] && n < 15; i++)
		argv[n++] = extra[i];
	argv[n] = NULL;
	char disp[64];
	snprintf(disp, sizeof(disp), "DISPLAY=%s", display);
	const char *env[] = { disp, "GDK_BACKEND=x11", "NO_AT_BRIDGE=1", "GSETTINGS_BACKEND=memory", NULL };
	return tu_spawn_opt(argv, &(tu_opts){ .env = env });
}

static void measure(const char *what, pid_t view, pid_t xvfb, double secs)
{
	double c0 = tu_cpu_s(view), x0 = tu_cpu_s(xvfb), t0 = tu_now();
	tu_sleep_ms((int)(secs * 1000));
	double c1 = tu_cpu_s(view), x1 = tu_cpu_s(xvfb), dt = tu_now() - t0;
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
	pid_t xvfb = tu_xvfb_start(display, sizeof(display), 160, 220, "1600x1000x24", NULL, NULL);
	if (xvfb < 0) {
		printf("CPU share: skipped (no Xvfb)\n");
		return 0;
	}
	char ep[64];
	/* (a) iogram loadgen, as the issue suggests: 64 sources at 1 Hz. Its DELTAs
	 * carry synthetic wall clocks, so the rate panels stay empty. */
	snprintf(ep, sizeof(ep), "%s", tu_ep(tu_free_port()));
	char *va[] = { "--listen", ep, "--history", "3600", NULL };
	pid_t v = start_view(view, display, va);
	tu_sleep_ms(2000);
	pid_t lg = tu_spawn((char *[]){ (char *)iogram, "loadgen", "--sources", "64", "--rate", "1",
	                                "--endpoint", ep, "--duration", "45", "--quiet", NULL },
	                    NULL, NULL, 0);
	tu_sleep_ms(10000);
	measure("loadgen 64 sources at 1 Hz", v, xvfb, 30);
	tu_stop(lg, SIGTERM, 0);
	tu_stop(v, SIGTERM, 0);

	/* (b) 64 sources on real clocks with an hour of history: every panel full */
	snprintf(ep, sizeof(ep), "%s", tu_ep(tu_free_port()));
	char *vb[] = { "--listen", ep, "--history", "3600", NULL };
	v = start_view(view, display, vb);
	tu_sleep_ms(2000);
	pid_t snd = fork();
	if (snd == 0) {
		sender(ep, 120);
		_exit(0);
	}
	tu_sleep_ms(25000);   /* backfill, then settle */
	measure("64 sources at 1 Hz, 1 h of history, all panels", v, xvfb, 30);
	tu_stop(snd, SIGTERM, 0);
	tu_stop(v, SIGTERM, 0);
	tu_xvfb_stop(xvfb);
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
	tu_tmpdir(dir, sizeof(dir), "iogram-bench-view");
	printf("bench_view (2-core machine)\n");
	int rc = bench_draw(synth);
	if (!rc && !getenv("IOGRAM_BENCH_NO_CPU"))
		rc = bench_cpu(view, iogram);
	if (!getenv("IOGRAM_KEEP") && tu_rmdir_all(dir) != 0)
		fprintf(stderr, "bench_view: could not remove %s\n", dir);
	return rc ? 1 : 0;
}
