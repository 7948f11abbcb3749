/* check_phases_view.c - the phases and insights panels of both viewers on
 * real jobs run under the interposer: a PERIODIC job (4 processes, 4
 * rounds of a shared file 2 s apart) replayed in iogram-top at 120x40 and
 * 80x24 (4 bars and 4 table rows with their bytes and ranks; the x key's
 * phases.csv equal to iogram export phases) and drawn by iogram-view's
 * headless snapshot (4 bars, 4 table rows, in pixels); dd with 512 B
 * writes (a finding: small requests, which leads to the size panel) and a
 * clean 1 MiB dd (no finding) in both viewers. */
#include <check.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "iogp.h"
#include "iogp_panels.h"
#include "testutil.h"
#include "testutil_tmux.h"
#ifdef HAVE_PLOT
#include "session.h"
#endif

#define N 64
#define SIZE 65536
#define NPROC 4
#define ROUNDS 4

static char dir[256];
static char periodic[600], small[600], clean[600];
static const char *top_bin, *iogram_bin;

/* ---- jobs ---- */

/* Run argv under iogram-run (every process into dir/rec-NAME), merge into out. */
static int record(const char *name, char *const cmd[], const char *out)
{
	const char *rd = tu_fmt("%s/rec-%s", dir, name);
	if (mkdir(rd, 0700) < 0)
		return -1;
	char *argv[32] = { (char *)getenv("IOGRAM_RUN"), "--endpoint", "none", "--interval", "100",
	                   "--output", tu_fmt("%s/run-%%p.iogr", rd), "--" };
	int k = 8;
	for (int i = 0; cmd[i] && k < 31; i++)
		argv[k++] = cmd[i];
	argv[k] = NULL;
	if (tu_run(argv, NULL, 120) != 0)
		return -1;
	return tu_system(tu_fmt("%s merge %s/run-*.iogr -o %s >/dev/null 2>&1", iogram_bin, rd, out));
}

static void tmux_start(int w, int h, const char *cmd)
{
	tu_tmux_start(dir, w, h, "TERM=xterm-256color LANG=C.UTF-8", cmd);
}

/* Screen lines holding every one of the words (NULL-terminated). */
static int lines_with(const char *const words[])
{
	int n = 0;
	for (const char *l = tu_screen; *l;) {
		const char *e = strchr(l, '\n');
		size_t len = e ? (size_t)(e - l) : strlen(l);
		char line[1024];
		snprintf(line, sizeof(line), "%.*s", (int)(len < sizeof(line) ? len : sizeof(line) - 1), l);
		int all = 1;
		for (int k = 0; words[k] && all; k++)
			all = strstr(line, words[k]) != NULL;
		n += all;
		l += len + (e != NULL);
	}
	return n;
}

/* Occurrences of s on the screen. */
static int count(const char *s)
{
	int n = 0;
	for (const char *p = tu_screen; (p = strstr(p, s)) != NULL; p += strlen(s))
		n++;
	return n;
}

/* A replay in iogram-top at its end (G again while it is not there yet:
 * on a loaded machine a key may come before the first frame is done). */
static void top_replay(int w, int h, const char *rec)
{
	tmux_start(w, h, tu_fmt("%s --replay %s", top_bin, rec));
	TU_EXPECT("REPLAY", 30);
	for (int i = 0; i < 6; i++) {
		tu_tmux_keys("G");
		if (tu_tmux_wait("END", 1, 5))
			break;
	}
	TU_EXPECT("END", 1);
}

/* The replay at its end, the phases panel zoomed. */
static void top_phases(int w, int h)
{
	top_replay(w, h, periodic);
	tu_tmux_keys("8");
	TU_EXPECT("8 I/O phases", 10);
	TU_EXPECT("POSIX 4 phases", 10);
}

#ifdef HAVE_PLOT
static int near(cairo_surface_t *s, int x, int y, iogplot_rgba c);

/* Bars of a phases panel PNG drawn in the light style: distinct starts of
 * runs of the write colour, right of the table's swatches and below the
 * title's legend. */
static int png_bars(const char *path)
{
	cairo_surface_t *s = cairo_image_surface_create_from_png(path);
	ck_assert_int_eq(cairo_surface_status(s), CAIRO_STATUS_SUCCESS);
	iogplot_style st;
	iogplot_style_init(&st, 0);
	int w = cairo_image_surface_get_width(s), h = cairo_image_surface_get_height(s), n = 0;
	int starts[64];
	for (int y = 25; y < h; y++)
		for (int x = 40; x < w; x++) {
			if (!near(s, x, y, st.op[1]) || near(s, x - 1, y, st.op[1]))
				continue;
			int seen = 0;
			for (int k = 0; k < n && !seen; k++)
				seen = abs(starts[k] - x) <= 1;
			if (!seen && n < 64)
				starts[n++] = x;
		}
	cairo_surface_destroy(s);
	return n;
}
#endif

/* ---- iogram-top ---- */

START_TEST(top_phases_120x40)
{
	top_phases(120, 40);
	/* 4 bars, each labelled with its bytes, mean request and spatiality */
	char lab[64];
	snprintf(lab, sizeof(lab), "%dM %dK consec", NPROC * N * SIZE >> 20, SIZE >> 10);
	TU_SCREEN_CHECK(count(lab) == ROUNDS, "%d bar labels '%s', not %d", count(lab), lab, ROUNDS);
	/* the table: a row per round, the bytes of 4 ranks, a shared file each */
	const char *const row[] = { " write ", " 4 ", " 1 ", "shared", tu_fmt(" %dM ", NPROC * N * SIZE >> 20),
	                            tu_fmt(" %dK ", SIZE >> 10), "consecutive", NULL };
	TU_SCREEN_CHECK(lines_with(row) == ROUNDS, "%d table rows, not %d", lines_with(row), ROUNDS);
	TU_SCREEN_CHECK(strstr(tu_screen, "ranks") && strstr(tu_screen, "spatiality") && strstr(tu_screen, "mean req"),
	      "no table header");
	TU_SCREEN_CHECK(!strstr(tu_screen, "open"), "a phase still open at the end");
	/* the snapshot writes the phases as iogram export phases does, and the findings */
	tu_tmux_keys("x");
	TU_EXPECT("phases.csv", 5);
	TU_SCREEN_CHECK(strstr(tu_screen, "insights.txt") != NULL, "no insights.txt");
	const char *m = strstr(tu_screen, "snapshot ./");
	char snap[256];
	TU_SCREEN_CHECK(m && sscanf(m, "snapshot ./%255[^/]", snap) == 1, "no snapshot directory");
	char *want = tu_fmt("%s/want.csv", dir);
	ck_assert_int_eq(tu_system(tu_fmt("%s export phases %s --layer posix -o %s", iogram_bin, periodic,
	                                  want)), 0);
	size_t a, b;
	char *got = tu_load(tu_fmt("%s/%s/phases.csv", dir, snap), &a);
	char *exp = tu_load(want, &b);
	ck_assert_str_eq(got, exp);
	int rows = 0;
	for (const char *p = got; (p = strchr(p, '\n')) != NULL; p++)
		rows++;
	ck_assert_int_eq(rows, 1 + ROUNDS);
	free(got);
	free(exp);
	/* the findings, as many as iogram info finds in the recording */
	long nf = tu_read_long(tu_fmt("%s info %s | sed -n 's/^insights: *//p'", iogram_bin, periodic));
	ck_assert_int_ge(nf, 0);
	got = tu_load(tu_fmt("%s/%s/insights.txt", dir, snap), &a);
	const char *first = nf ? tu_fmt("%ld finding%s, ", nf, nf == 1 ? "" : "s") : "no findings";
	ck_assert_msg(!strncmp(got, first, strlen(first)), "%s", got);
	free(got);
#ifdef HAVE_PLOT
	/* built with the plot library: the zoomed panel as PNG, its 4 bars */
	TU_SCREEN_CHECK(strstr(tu_screen, "phases.png") != NULL, "no phases.png");
	int bars = png_bars(tu_fmt("%s/%s/phases.png", dir, snap));
	ck_assert_msg(bars == ROUNDS, "phases.png: %d bars, not %d", bars, ROUNDS);
#endif
	/* the layer: STDIO has none of these phases */
	tu_tmux_keys("y");
	TU_EXPECT("STDIO", 5);
	/* a capture may catch the terminal mid-redraw: the rows must go within 5 s */
	for (int k = 0; k < 100 && lines_with(row) != 0; k++) {
		tu_sleep_ms(50);
		tu_tmux_capture(0);
	}
	TU_SCREEN_CHECK(lines_with(row) == 0, "POSIX phases shown in the STDIO layer");
	tu_tmux_keys("q");
	TU_EXPECT("IOGTOP-EXIT=0", 5);
	tu_tmux_kill();
}
END_TEST

START_TEST(top_phases_80x24)
{
	top_phases(80, 24);
	const char *const row[] = { " write ", " 4 ", tu_fmt(" %dM ", NPROC * N * SIZE >> 20), NULL };
	TU_SCREEN_CHECK(lines_with(row) == ROUNDS, "%d table rows at 80x24, not %d", lines_with(row), ROUNDS);
	char lab[64];
	snprintf(lab, sizeof(lab), "%dM", NPROC * N * SIZE >> 20);
	/* bars: labelled at least with their bytes (4 labels and 4 rows) */
	TU_SCREEN_CHECK(count(lab) >= 2 * ROUNDS, "%d times '%s'", count(lab), lab);
	/* the dashboard leaves it out at 80x24; 8 again goes back */
	tu_tmux_keys("8");
	TU_EXPECT_NOT("8 I/O phases", 5);
	TU_EXPECT("1 request size", 5);
	tu_tmux_keys("q");
	TU_EXPECT("IOGTOP-EXIT=0", 5);
	tu_tmux_kill();
}
END_TEST

START_TEST(top_insights)
{
	top_replay(120, 40, small);
	TU_EXPECT("1 finding (9)", 5);
	tu_tmux_keys("9");
	TU_EXPECT("9 insights", 5);
	TU_EXPECT("HIGH [1 request size] writes: 100% of 3000 requests are under 64 KiB", 5);
	/* its digit goes to the panel that shows it */
	tu_tmux_keys("1");
	TU_EXPECT_NOT("9 insights", 5);
	TU_EXPECT("1 request size", 5);
	TU_EXPECT("p50 512 p90 512 p99 512", 5);
	tu_tmux_keys("q");
	TU_EXPECT("IOGTOP-EXIT=0", 5);
	/* a clean job: nothing */
	top_replay(120, 40, clean);
	tu_tmux_keys("9");
	TU_EXPECT("9 insights", 5);
	TU_EXPECT("0 findings", 5);
	TU_EXPECT("no findings", 5);
	TU_SCREEN_CHECK(!strstr(tu_screen, "HIGH") && !strstr(tu_screen, "WARN") && !strstr(tu_screen, "finding (9)"),
	      "a clean job has a finding");
	tu_tmux_keys("q");
	TU_EXPECT("IOGTOP-EXIT=0", 5);
	tu_tmux_kill();
}
END_TEST

#ifdef HAVE_PLOT
/* ---- iogram-view ---- */

static cairo_surface_t *snapshot(const char *rec, const char *panel, const char *out, int w, int h)
{
	static const char *const no_display[] = { "DISPLAY", "WAYLAND_DISPLAY", NULL };
	char *argv[] = { (char *)getenv("IOGRAM_VIEW"), "--replay", (char *)rec, "--snapshot", (char *)out,
	                 "--panel", (char *)panel, "--size", tu_fmt("%dx%d", w, h), NULL };
	tu_result r = tu_capture(argv, &(tu_opts){ .null_in = 1, .env = no_display }, 60);
	ck_assert_msg(r.status == 0, "snapshot %s: %d %s", out, r.status, r.err);
	tu_result_free(&r);
	cairo_surface_t *s = cairo_image_surface_create_from_png(out);
	ck_assert_int_eq(cairo_surface_status(s), CAIRO_STATUS_SUCCESS);
	return s;
}

static int near(cairo_surface_t *s, int x, int y, iogplot_rgba c)
{
	cairo_surface_flush(s);
	int w = cairo_image_surface_get_width(s), h = cairo_image_surface_get_height(s);
	if (x < 0 || y < 0 || x >= w || y >= h)
		return 0;
	const uint32_t *row = (const uint32_t *)(cairo_image_surface_get_data(s) +
	                                         (size_t)y * (size_t)cairo_image_surface_get_stride(s));
	uint32_t p = row[x];
	int d = abs((int)(p >> 16 & 255) - (int)lround(c.r * 255)) +
	        abs((int)(p >> 8 & 255) - (int)lround(c.g * 255)) + abs((int)(p & 255) - (int)lround(c.b * 255));
	return d < 60;
}

/* The frame the snapshot drew: the replay at its end. */
static void frame_of(const char *rec, iogv_session **s, iogplot_frame *f)
{
	char err[256] = "";
	*s = iogv_session_new(NULL);
	ck_assert_ptr_nonnull(*s);
	ck_assert_msg(iogv_open_replay(*s, rec, err, sizeof(err)) == 0, "%s", err);
	double a, b;
	iogv_replay_span(*s, &a, &b);
	ck_assert_int_ge(iogv_replay_seek(*s, b), 0);
	iogplot_frame_init(f);
	ck_assert_int_eq(iogv_frame(*s, NULL, 0, f), 0);
}

START_TEST(view_phases_bars)
{
	const int W = 900, H = 520;
	iogv_session *ses;
	iogplot_frame f;
	frame_of(periodic, &ses, &f);
	ck_assert_uint_eq(f.nphases, ROUNDS);
	iogplot_style st;
	iogplot_style_init(&st, 0);
	iogplot_view v;
	iogplot_view_init(&v);
	iogplot_geom g;
	ck_assert_int_eq(iogplot_panel_geom(&st, &f, &v, IOGPLOT_PHASES, 0, W, H, &g), 0);
	cairo_surface_t *s = snapshot(periodic, "phases", tu_fmt("%s/phases.png", dir), W, H);
	cairo_surface_flush(s);
	/* every row of the timeline: runs of the write colour; bars are the
	 * distinct runs (by where they start) */
	int starts[64], nstart = 0, read_px = 0;
	for (int y = (int)g.plot.y; y < (int)(g.plot.y + g.plot.h); y++)
		for (int x = (int)g.plot.x; x < (int)(g.plot.x + g.plot.w); x++) {
			read_px += near(s, x, y, st.op[0]);
			if (!near(s, x, y, st.op[1]) || near(s, x - 1, y, st.op[1]))
				continue;
			int seen = 0;
			for (int k = 0; k < nstart && !seen; k++)
				seen = abs(starts[k] - x) <= 1;
			if (!seen && nstart < 64)
				starts[nstart++] = x;
		}
	ck_assert_msg(nstart == ROUNDS, "%d write bars, not %d", nstart, ROUNDS);
	ck_assert_msg(read_px == 0, "%d read-coloured pixels in a job that only writes", read_px);
	/* each where its phase starts */
	for (size_t i = 0; i < f.nphases; i++) {
		double x = iogplot_geom_x(&g, fmax((double)f.phases[i].start_ns / 1e9, g.x0));
		int hit = 0;
		for (int k = 0; k < nstart; k++)
			hit |= fabs(starts[k] - x) <= 2;
		ck_assert_msg(hit, "no bar at phase %zu's start (x %.1f)", i, x);
	}
	/* the table below: a write swatch per row, at its left */
	int rows = 0;
	for (int y = (int)(g.plot.y + g.plot.h) + 1; y < H; y++)
		rows += near(s, 12, y, st.op[1]) && !near(s, 12, y - 1, st.op[1]);
	ck_assert_msg(rows == ROUNDS, "%d table rows, not %d", rows, ROUNDS);
	cairo_surface_destroy(s);
	/* the CSV export has the phases as iogram export phases writes them */
	char names[1024], err[256];
	const char *out = tu_fmt("%s/csv", dir);
	ck_assert_int_ge(iogplot_export_csv(out, &f, IOGPLOT_PHASES, names, sizeof(names), err,
	                                    sizeof(err)), 1);
	ck_assert_str_eq(names, "phases.csv");
	char *want = tu_fmt("%s/want-view.csv", dir);
	ck_assert_int_eq(tu_system(tu_fmt("%s export phases %s --layer posix -o %s", iogram_bin, periodic,
	                                  want)), 0);
	size_t a, b;
	char *got = tu_load(tu_fmt("%s/phases.csv", out), &a), *exp = tu_load(want, &b);
	ck_assert_str_eq(got, exp);
	free(got);
	free(exp);
	iogplot_frame_free(&f);
	iogv_session_free(ses);
}
END_TEST

START_TEST(view_insights)
{
	const int W = 800, H = 400;
	iogplot_style st;
	iogplot_style_init(&st, 0);
	iogplot_view v;
	iogplot_view_init(&v);
	for (int job = 0; job < 2; job++) {
		iogv_session *ses;
		iogplot_frame f;
		frame_of(job ? clean : small, &ses, &f);
		ck_assert_uint_eq(f.ninsights, job ? 0 : 1);
		cairo_surface_t *s = snapshot(job ? clean : small, "insights", tu_fmt("%s/ins%d.png", dir, job),
		                              W, H);
		cairo_surface_flush(s);
		/* a HIGH finding's badge in the severity's colour, left of its text */
		int badge = 0, link = -1, at = -1;
		for (int y = 20; y < 80; y++)
			if (near(s, 14, y, st.warn)) {
				badge++;
				at = y;
			}
		for (int y = 0; y < H; y += 2)
			for (int x = 0; x < W && link < 0; x += 20)
				link = iogplot_panel_link(&st, &f, &v, IOGPLOT_INSIGHTS, W, H, x, y);
		if (job) {
			ck_assert_msg(badge == 0, "a clean job shows a finding");
			ck_assert_int_eq(link, -1);
		} else {
			ck_assert_msg(badge >= 8, "no HIGH badge (%d pixels)", badge);
			/* a click on it opens the size panel */
			ck_assert_int_eq(iogplot_panel_link(&st, &f, &v, IOGPLOT_INSIGHTS, W, H, 200, at),
			                 IOGPLOT_SIZE);
			ck_assert_int_eq(link, IOGPLOT_SIZE);
			ck_assert_str_eq(f.insights[0].panel, "size");
		}
		cairo_surface_destroy(s);
		/* and the export writes them as text */
		char names[1024], err[256];
		const char *out = tu_fmt("%s/ins-csv%d", dir, job);
		ck_assert_int_ge(iogplot_export_csv(out, &f, IOGPLOT_INSIGHTS, names, sizeof(names), err,
		                                    sizeof(err)), 1);
		size_t n;
		char *t = tu_load(tu_fmt("%s/insights.txt", out), &n);
		ck_assert_msg(job ? strstr(t, "no findings") != NULL
		                  : strstr(t, "[high] writes: 100% of 3000 requests") != NULL, "%s", t);
		free(t);
		iogplot_frame_free(&f);
		iogv_session_free(ses);
	}
}
END_TEST
#endif

int main(void)
{
	top_bin = getenv("IOGRAM_TOP");
	iogram_bin = getenv("IOGRAM_BIN");
	if (!top_bin || !iogram_bin || !getenv("IOGRAM_RUN") || !getenv("IOGRAM_PROGS")) {
		fprintf(stderr, "check_phases_view: set IOGRAM_TOP, IOGRAM_BIN, IOGRAM_RUN, IOGRAM_PROGS\n");
		return 1;
	}
	if (tu_tmux_suite_begin("phases_view", dir, sizeof(dir)) < 0)
		return 1;
	tu_asan_option("verify_asan_link_order=0");
	snprintf(periodic, sizeof(periodic), "%s/periodic.iogr", dir);
	snprintf(small, sizeof(small), "%s/small.iogr", dir);
	snprintf(clean, sizeof(clean), "%s/clean.iogr", dir);
	const char *data = tu_fmt("%s/data", dir);
	mkdir(data, 0700);
	char prog[600];
	snprintf(prog, sizeof(prog), "%s/prog_phases", getenv("IOGRAM_PROGS"));
	/* the 4 ranks started by a shell, as mpirun would, not forked by the
	 * program: with GCC 12's libasan a fork that goes on running beside the
	 * agent's thread is unreliable (check_phases) */
	const char *r4 = tu_fmt("%s periodic %s %d %d", prog, data, N, SIZE);
	char *job1[] = { "sh", "-c", tu_fmt("%s 0 & %s 1 & %s 2 & %s 3 & wait", r4, r4, r4, r4), NULL };
	char *job2[] = { "sh", "-c", tu_fmt("dd if=/dev/zero of=%s/small bs=512 count=3000 2>/dev/null", data),
	                 NULL };
	char *job3[] = { "sh", "-c", tu_fmt("dd if=/dev/zero of=%s/big bs=1M count=64 2>/dev/null && "
	                                    "dd if=%s/big of=/dev/null bs=1M 2>/dev/null", data, data), NULL };
	if (record("periodic", job1, periodic) || record("small", job2, small) ||
	    record("clean", job3, clean)) {
		fprintf(stderr, "check_phases_view: recording the jobs failed\n");
		return 1;
	}
	const tu_case cases[] = {
		{ "top_phases_120x40", top_phases_120x40 },
		{ "top_phases_80x24", top_phases_80x24 },
		{ "top_insights", top_insights },
#ifdef HAVE_PLOT
		{ "view_phases_bars", view_phases_bars },
		{ "view_insights", view_insights },
#endif
	};
	const tu_suite_opts o = { .teardown = tu_tmux_kill, .timeout_s = 120 };
	return tu_tmux_suite_end("phases_view", dir,
	                         tu_run_cases("phases_view", cases, sizeof(cases) / sizeof(cases[0]), &o));
}
