/* check_top_access.c - iogram-top's access panel and the small things that
 * cost trust, in real terminals (tmux): a 60 s recording of a busy file
 * shows samples in every 10 s of its time axis, with clock labels, offsets
 * in binary units, the file's name and node, a legend, and the count of
 * requests sampled that the model gives; f walks the files in the order of
 * iogp_model_files; a stdio-only program's samples appear on the STDIO
 * layer only; the ? overlay lists the action table; panels are numbered in
 * reading order; the focused title is readable; a status message is never
 * cut in a word; the empty live screen says what to run; -w means --window
 * with a number, else --record. Every tmux server lives under this test's
 * TMUX_TMPDIR and is killed at the end. */
#include <check.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "iogp.h"
#include "iogp_actions.h"
#include "iogp_layers.h"
#include "iogp_units.h"
#include "testutil.h"
#include "testutil_tmux.h"
#include "testutil_access.h"

static const char *top_bin;
static char dir[256], rec[512];
static tu_acc_job job = {
	.seconds = 60, .nsources = 1, .nfiles = 3, .filerecs = 1,
	/* bytes: zeta 196 MB/s > alpha 82 MB/s > mid; requests: alpha first */
	.files = { { "/data/alpha.dat", IOGP_FR_POSIX, 20000, 4096, IOGP_OP_READ, 1ull << 30, 1, 0, 0 },
	           { "/data/zeta.dat", IOGP_FR_POSIX, 3000, 65536, IOGP_OP_WRITE, 0, 0, 0, 0 },
	           { "/data/mid.dat", IOGP_FR_POSIX, 50, 512, IOGP_OP_READ, 1ull << 20, 1, 0, 0 } },
};

/* Screen line i (0-based) into out. */
static const char *line_at(int i, char *out, size_t len)
{
	const char *p = tu_screen;
	for (int k = 0; k < i && p; k++) {
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	out[0] = '\0';
	if (!p)
		return out;
	const char *e = strchr(p, '\n');
	snprintf(out, len, "%.*s", (int)(e ? e - p : (long)strlen(p)), p);
	return out;
}

/* The line holding text: its index, -1 if none. */
static int line_of(const char *text)
{
	const char *p = strstr(tu_screen, text);
	if (!p)
		return -1;
	int n = 0;
	for (const char *q = tu_screen; q < p; q++)
		n += *q == '\n';
	return n;
}

/* Column (in cells, UTF-8 aware) where text starts on its line, -1 if none. */
static int col_of(const char *text)
{
	const char *p = strstr(tu_screen, text);
	if (!p)
		return -1;
	const char *a = p;
	while (a > tu_screen && a[-1] != '\n')
		a--;
	int c = 0;
	for (const char *q = a; q < p; q++)
		c += (*q & 0xC0) != 0x80;
	return c;
}

/* Cells of a line holding a braille dot (U+2801..U+28FF), as a map of
 * columns: dots[c] = 1. Returns the line's cells. */
static int braille_cols(const char *line, char *dots, int max)
{
	int c = 0;
	for (const unsigned char *u = (const unsigned char *)line; *u && c < max;) {
		if (u[0] == 0xe2 && (u[1] >= 0xa0 && u[1] <= 0xa3) && !(u[1] == 0xa0 && u[2] == 0x80))
			dots[c] = 1;
		if (*u >= 0xc0)
			u += *u >= 0xf0 ? 4 : *u >= 0xe0 ? 3 : 2;
		else
			u++;
		c++;
	}
	return c;
}

static iogp_model *load(const char *path)
{
	iogp_model_opts o = { .live = 1 };
	iogp_model *m = iogp_model_new(&o);
	iogp_replay_reader *r;
	char err[256];
	ck_assert_msg(iogp_replay_open(&r, path, err, sizeof(err)) == 0, "%s", err);
	iogp_replay_rec x;
	while (iogp_replay_next(r, &x) == 0)
		iogp_model_feed(m, x.payload, x.len, x.recv_ns);
	iogp_replay_close_reader(r);
	return m;
}

static void thousands(char *buf, size_t len, uint64_t v)
{
	char d[32];
	int n = snprintf(d, sizeof(d), "%" PRIu64, v), o = 0;
	for (int i = 0; i < n && o + 2 < (int)len; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = d[i];
	}
	buf[o] = '\0';
}

/* The job's recording, written by the first test that needs it (Check's
 * asserts work inside tests only); its truth in this process. */
static void job_rec(void)
{
	tu_acc_run(&job, NULL, access(rec, F_OK) == 0 ? NULL : rec);
}

/* ---- the access panel --------------------------------------------------- */

/* 120x40, zoomed (4), at the end: the busiest by bytes, every 10 s slice
 * of the axis has dots, the labels and the note are the model's. */
START_TEST(access_60s)
{
	job_rec();
	tu_tmux_start(dir, 120, 40, "TERM=xterm-256color LANG=C.UTF-8", tu_fmt("%s --replay %s", top_bin, rec));
	TU_EXPECT("REPLAY", 10);
	tu_tmux_keys("G");
	TU_EXPECT(" END", 10);
	tu_tmux_keys("4");
	TU_EXPECT("busiest file 1/3", 10);
	TU_EXPECT("/data/zeta.dat", 5);
	/* the note: the model's numbers, the truth's requests */
	iogp_model *m = load(rec);
	iogp_access_query q = { .metric = "posix.access", .path = "/data/zeta.dat", .max = 50000 };
	iogp_access_set set;
	ck_assert_int_eq(iogp_model_access_query(m, &q, &set), 0);
	/* the samples estimate it (several files an interval); the per-file
	 * records count it, and the note says what they count */
	ck_assert_int_eq(set.exact, 0);
	char n[32], r[32], note[96];
	thousands(n, sizeof(n), set.n);
	thousands(r, sizeof(r), job.requests[1]);
	snprintf(note, sizeof(note), "sampled %s of %s requests", n, r);
	TU_EXPECT(note, 5);
	uint64_t yend = 0, p = 1;
	for (size_t i = 0; i < set.n; i++)
		if (set.s[i].offset + set.s[i].size > yend)
			yend = set.s[i].offset + set.s[i].size;
	while (p <= yend / 2)
		p <<= 1;
	for (uint64_t k = 4; k <= 8; k++)
		if (p / 4 * k >= yend) {
			yend = p / 4 * k;
			break;
		}
	iogp_access_set_free(&set);
	iogp_model_free(m);
	TU_SCREEN_CHECK(strstr(tu_screen, "node001 rank 0"), "no node");
	TU_SCREEN_CHECK(strstr(tu_screen, " read ") || strstr(tu_screen, " read\n"), "no legend (read)");
	TU_SCREEN_CHECK(strstr(tu_screen, "write"), "no legend (write)");
	/* the time axis: the run's first and last second, and the span */
	char a[16], b[16];
	time_t t0 = (time_t)(job.t0_wall / 1000000000ull), t1 = (time_t)(job.t1_wall / 1000000000ull);
	struct tm tm;
	strftime(a, sizeof(a), "%H:%M:%S", localtime_r(&t0, &tm));
	strftime(b, sizeof(b), "%H:%M:%S", localtime_r(&t1, &tm));
	int axis = line_of(b);
	TU_SCREEN_CHECK(axis > 0, "no %s on the time axis", b);
	char line[4096];
	line_at(axis, line, sizeof(line));
	TU_SCREEN_CHECK(strstr(line, a), "the axis does not start at %s: %s", a, line);
	TU_SCREEN_CHECK(strstr(line, "1:00"), "no span on the axis: %s", line);
	/* offsets in binary units: the top label is the samples' end, rounded
	 * up to 1, 1.25, 1.5 or 1.75 x 2^k */
	int top = line_of("/data/zeta.dat") + 1;
	line_at(top, line, sizeof(line));
	char ylab[24];
	iogp_fmt_bytes(ylab, sizeof(ylab), (double)yend, IOGP_UNITS_CELL);
	TU_SCREEN_CHECK(!strncmp(line + strspn(line, " "), ylab, strlen(ylab)), "top offset label: %s, want %s",
	      line, ylab);
	line_at(axis - 1, line, sizeof(line));
	TU_SCREEN_CHECK(strchr(line, '0'), "no 0 at the bottom: %s", line);
	/* dots in every 10 s of the axis */
	char dots[512] = { 0 };
	int first = 1000, last = -1;
	for (int y = top; y < axis; y++) {
		line_at(y, line, sizeof(line));
		braille_cols(line, dots, (int)sizeof(dots));
	}
	for (int c = 0; c < (int)sizeof(dots); c++)
		if (dots[c]) {
			first = c < first ? c : first;
			last = c;
		}
	/* the axis' clocks end where the plot does */
	int x0 = col_of(a), w = col_of(b) + (int)strlen(b) - x0;
	TU_SCREEN_CHECK(x0 > 0 && w > 60, "plot at %d, %d wide", x0, w);
	for (int k = 0; k < 6; k++) {
		int any = 0;
		for (int c = x0 + k * w / 6; c < x0 + (k + 1) * w / 6; c++)
			any |= dots[c];
		TU_SCREEN_CHECK(any, "no samples in the 10 s slice #%d (dots from %d to %d)", k, first, last);
	}
	tu_tmux_keys("q");
	TU_EXPECT("IOGTOP-EXIT=0", 5);
	tu_tmux_kill();
}
END_TEST

/* f walks the files in iogp_model_files' order (bytes), F back, then auto. */
START_TEST(files_by_bytes)
{
	job_rec();
	iogp_model *m = load(rec);
	iogp_file_info *fi;
	size_t nfi;
	ck_assert_int_eq(iogp_model_files(m, NULL, IOGP_FR_POSIX, &fi, &nfi), 0);
	const char *order[8];
	size_t n = 0;
	for (size_t i = 0; i < nfi && n < 8; i++)
		if (!fi[i].other && fi[i].total.op[0].ops + fi[i].total.op[1].ops)
			order[n++] = fi[i].path;
	ck_assert_uint_eq(n, 3);
	/* not the order of the paths, nor of the requests */
	ck_assert_str_eq(order[0], "/data/zeta.dat");
	tu_tmux_start(dir, 120, 40, "TERM=xterm-256color LANG=C.UTF-8", tu_fmt("%s --replay %s", top_bin, rec));
	tu_tmux_keys("G");
	TU_EXPECT(" END", 10);
	tu_tmux_keys("4");
	TU_EXPECT("busiest file 1/3", 10);
	for (size_t i = 0; i < n; i++) {
		tu_tmux_keys("f");
		TU_SCREEN_CHECK(tu_tmux_wait("busiest", 0, 5), "f did not pick a file");
		char t[32];
		snprintf(t, sizeof(t), "file %zu/3 by bytes", i + 1);
		TU_SCREEN_CHECK(tu_tmux_wait(t, 1, 5) && tu_tmux_wait(order[i], 1, 5), "f #%zu: want %s", i + 1, order[i]);
		int l = line_of(t);
		char line[1024];
		line_at(l + 1, line, sizeof(line));
		TU_SCREEN_CHECK(!strncmp(line, order[i], strlen(order[i])), "file %zu is %s, want %s", i + 1, line,
		      order[i]);
	}
	tu_tmux_keys("F");
	TU_EXPECT("file 2/3 by bytes", 5);
	TU_EXPECT(order[1], 5);
	tu_tmux_keys("f");
	tu_tmux_keys("f");
	TU_EXPECT("busiest file 1/3", 5);   /* past the end: auto again */
	iogp_model_files_free(fi);
	iogp_model_free(m);
	tu_tmux_keys("q");
	TU_EXPECT("IOGTOP-EXIT=0", 5);
	tu_tmux_kill();
}
END_TEST

/* A stdio-only program under the interposer: its samples on the STDIO
 * layer only. */
START_TEST(stdio_layer)
{
	char prog[512], out[600], data[600];
	snprintf(prog, sizeof(prog), "%s/prog_stdio_lines", tu_env("IOGRAM_PROGS"));
	snprintf(out, sizeof(out), "%s/stdio.iogr", dir);
	snprintf(data, sizeof(data), "%s/lines.txt", dir);
	ck_assert_int_eq(tu_run((char *[]){ (char *)tu_env("IOGRAM_RUN"), "--endpoint", "none",
	                                    "--output", out, "--interval", "100", "--", prog, data,
	                                    "200000", NULL }, NULL, 120), 0);
	iogp_model *m = load(out);
	iogp_access_query q = { .metric = "posix.access" };
	iogp_access_set set;
	ck_assert_int_eq(iogp_model_access_query(m, &q, &set), 0);
	ck_assert_uint_eq(set.n, 0);
	iogp_access_set_free(&set);
	q.metric = "stdio.access";
	ck_assert_int_eq(iogp_model_access_query(m, &q, &set), 0);
	ck_assert_uint_gt(set.n, 0);
	iogp_access_set_free(&set);
	iogp_model_free(m);
	tu_tmux_start(dir, 120, 40, "TERM=xterm-256color LANG=C.UTF-8", tu_fmt("%s --replay %s", top_bin, out));
	tu_tmux_keys("G");
	TU_EXPECT(" END", 10);
	tu_tmux_keys("4");
	TU_EXPECT("no POSIX access samples yet", 5);
	TU_SCREEN_CHECK(!strstr(tu_screen, "lines.txt"), "a stdio file on the POSIX layer");
	tu_tmux_keys("y");
	TU_EXPECT("STDIO", 5);
	TU_EXPECT("lines.txt", 5);
	int l = line_of("lines.txt"), dots = 0;
	for (int y = l + 1; y < l + 30; y++) {
		char line[4096], map[512] = { 0 };
		line_at(y, line, sizeof(line));
		int c = braille_cols(line, map, (int)sizeof(map));
		for (int k = 0; k < c; k++)
			dots += map[k];
	}
	TU_SCREEN_CHECK(dots > 10, "%d dots on the STDIO layer", dots);
	TU_SCREEN_CHECK(strstr(tu_screen, " requests"), "no sampling note");
	tu_tmux_keys("y");   /* MPI-IO has no access samples, then back to POSIX */
	TU_EXPECT("| MPI-IO", 5);
	tu_tmux_keys("y");
	TU_EXPECT("no POSIX access samples yet", 5);
	tu_tmux_keys("q");
	TU_EXPECT("IOGTOP-EXIT=0", 5);
	tu_tmux_kill();
}
END_TEST

/* ---- help and the small things ------------------------------------------ */

/* Every row of the table on one line of the ? overlay, then the marks. */
START_TEST(help_overlay)
{
	job_rec();
	tu_tmux_start(dir, 200, 60, "TERM=xterm-256color LANG=C.UTF-8", tu_fmt("%s --replay %s", top_bin, rec));
	TU_EXPECT("REPLAY", 10);
	tu_tmux_keys("?");
	TU_EXPECT("iogram-top keys", 5);
	/* the overlay's last row: the title alone can be captured while the
	 * rest is still being written (CI at f8292c0: cut off at "Esc") */
	TU_EXPECT("access: N dots, M requests", 5);
	size_t pos = 0, rows = 0;
	char label[32];
	const iogp_action *a;
	int lw = 8;   /* the keys' column is as wide as the longest label */
	while (iogp_help_next(&pos, IOGP_VIEWER_TUI, label, sizeof(label)))
		lw = (int)strlen(label) > lw ? (int)strlen(label) : lw;
	pos = 0;
	while ((a = iogp_help_next(&pos, IOGP_VIEWER_TUI, label, sizeof(label)))) {
		char want[128];
		snprintf(want, sizeof(want), "%-*s %s", lw, label, iogp_action_help(a, IOGP_VIEWER_TUI));
		TU_SCREEN_CHECK(strstr(tu_screen, want), "the overlay lacks '%s'", want);
		rows++;
	}
	ck_assert_uint_gt(rows, 20);
	static const char *const marks[4][2] = { { "~", "empty bins skipped here" },
		{ "k=N", "2^N bins per power of 2" }, { "merged", "bins joined to fit" },
		{ "N of M", "access: N dots, M requests" } };
	for (int k = 0; k < 4; k++)
		TU_SCREEN_CHECK(strstr(tu_screen, tu_fmt("%-*s %s", lw, marks[k][0], marks[k][1])), "%s not explained",
		      marks[k][0]);
	TU_SCREEN_CHECK(strstr(tu_screen, "any key closes"), "no footer");
	tu_tmux_keys("Escape");
	tu_tmux_wait("iogram-top keys", 0, 5);
	/* 80x24: all of it, or says how many rows did not fit */
	tu_tmux_start(dir, 80, 24, "TERM=xterm-256color LANG=C.UTF-8", tu_fmt("%s --replay %s", top_bin, rec));
	TU_EXPECT("REPLAY", 10);
	tu_tmux_keys("?");
	TU_EXPECT("iogram-top keys", 5);
	size_t missing = 0;
	for (pos = 0; (a = iogp_help_next(&pos, IOGP_VIEWER_TUI, label, sizeof(label)));) {
		char want[128];
		snprintf(want, sizeof(want), "%-*s %.12s", lw, label, iogp_action_help(a, IOGP_VIEWER_TUI));
		missing += !strstr(tu_screen, want);
	}
	if (missing) {
		const char *f = strstr(tu_screen, " more in a taller terminal");
		TU_SCREEN_CHECK(f, "%zu rows missing at 80x24 and no word of it", missing);
	}
	tu_tmux_keys("q");
	TU_EXPECT("IOGTOP-EXIT=0", 5);
	tu_tmux_kill();
}
END_TEST

/* Panel titles in reading order of their keys, at three sizes. */
START_TEST(panel_order)
{
	job_rec();
	static const int sizes[3][2] = { { 80, 24 }, { 120, 40 }, { 200, 60 } };
	for (int k = 0; k < 3; k++) {
		tu_tmux_start(dir, sizes[k][0], sizes[k][1], "TERM=xterm-256color LANG=C.UTF-8",
		           tu_fmt("%s --replay %s", top_bin, rec));
		TU_EXPECT("1 request size", 10);
		/* the first title can be on screen before the terminal has the
		 * rest of the frame (seen once under load): look again a while */
		int seen = 0;
		for (int tries = 0; tries < 50 && seen < 5; tries++) {
			if (tries) {
				usleep(100000);
				tu_tmux_capture(0);
			}
			int prev_y = -1, prev_x = -1;
			seen = 0;
			for (int p = 0; p < IOGP_PANEL_N; p++) {
				const iogp_panel *e = iogp_panel_get(p);
				if (!e->key || !(e->viewers & IOGP_VIEWER_TUI))
					continue;
				char t[96];
				snprintf(t, sizeof(t), "%c %s", e->key, e->short_title);
				int y = line_of(t), x = col_of(t);
				if (y < 0)
					continue;   /* not on this layout (zoom only) */
				TU_SCREEN_CHECK(y > prev_y || (y == prev_y && x > prev_x),
				      "%dx%d: panel '%s' at %d,%d comes after %d,%d", sizes[k][0], sizes[k][1], t, y,
				      x, prev_y, prev_x);
				prev_y = y;
				prev_x = x;
				seen++;
			}
		}
		TU_SCREEN_CHECK(seen >= 5, "%dx%d: %d panels", sizes[k][0], sizes[k][1], seen);
		tu_tmux_keys("q");
		TU_EXPECT("IOGTOP-EXIT=0", 5);
	}
	tu_tmux_kill();
}
END_TEST

/* Relative luminance of an xterm colour (0-15) and the contrast of two. */
static double lum(int c)
{
	static const int rgb[16][3] = {
		{ 0, 0, 0 }, { 205, 0, 0 }, { 0, 205, 0 }, { 205, 205, 0 }, { 0, 0, 238 },
		{ 205, 0, 205 }, { 0, 205, 205 }, { 229, 229, 229 }, { 127, 127, 127 }, { 255, 0, 0 },
		{ 0, 255, 0 }, { 255, 255, 0 }, { 92, 92, 255 }, { 255, 0, 255 }, { 0, 255, 255 },
		{ 255, 255, 255 },
	};
	double v[3];
	for (int i = 0; i < 3; i++) {
		double s = rgb[c][i] / 255.0;
		v[i] = s <= 0.03928 ? s / 12.92 : pow((s + 0.055) / 1.055, 2.4);
	}
	return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2];
}

/* The focused panel's title: its colours (as xterm's palette draws them,
 * bold dark colours bright) at a contrast of 4.5 or more. */
START_TEST(focus_contrast)
{
	job_rec();
	tu_tmux_start(dir, 120, 40, "TERM=xterm-256color LANG=C.UTF-8", tu_fmt("%s --replay %s", top_bin, rec));
	TU_EXPECT("3 latency", 10);
	tu_tmux_capture(1);
	const char *t = strstr(tu_screen, "3 latency");
	TU_SCREEN_CHECK(t, "no latency title");
	/* the SGR sequences of this line before the title set its colours */
	const char *a = t;
	while (a > tu_screen && a[-1] != '\n')
		a--;
	int fg = 7, bg = 0, bold = 0, rev = 0;
	for (const char *p = a; p < t; p++) {
		if (p[0] != '\033' || p[1] != '[')
			continue;
		for (const char *q = p + 2; q < t && *q != 'm';) {
			int v = (int)strtol(q, (char **)&q, 10);
			if (v == 0)
				fg = 7, bg = 0, bold = 0, rev = 0;
			else if (v == 1)
				bold = 1;
			else if (v == 7)
				rev = 1;
			else if (v == 22)
				bold = 0;
			else if ((v == 38 || v == 48) && q[0] == ';' && q[1] == '5' && q[2] == ';') {
				q += 3;   /* 256 colours: the first 16 are the palette */
				int c = (int)strtol(q, (char **)&q, 10);
				if (c < 16)
					*(v == 38 ? &fg : &bg) = c;
			} else if (v >= 30 && v <= 37)
				fg = v - 30;
			else if (v == 39)
				fg = 7;
			else if (v >= 40 && v <= 47)
				bg = v - 40;
			else if (v == 49)
				bg = 0;
			else if (v >= 90 && v <= 97)
				fg = v - 90 + 8;
			else if (v >= 100 && v <= 107)
				bg = v - 100 + 8;
			if (*q == ';')
				q++;
			else if (*q != 'm')
				break;
		}
	}
	if (bold && fg < 8)
		fg += 8;   /* xterm's bold: the bright colour */
	if (rev) {
		int x = fg;
		fg = bg;
		bg = x;
	}
	double l1 = lum(fg), l2 = lum(bg), c = (fmax(l1, l2) + 0.05) / (fmin(l1, l2) + 0.05);
	TU_SCREEN_CHECK(c >= 4.5, "focused title fg %d on bg %d: contrast %.2f", fg, bg, c);
	tu_tmux_keys("q");
	TU_EXPECT("IOGTOP-EXIT=0", 5);
	tu_tmux_kill();
}
END_TEST

/* Live with nobody sending: what to run; -w FILE records, -w 60 is the
 * window; a long message cut at a space. */
START_TEST(live_small_things)
{
	job_rec();
	int port = tu_free_port();
	char ep[64], recf[600];
	snprintf(ep, sizeof(ep), "tcp://127.0.0.1:%d", port);
	snprintf(recf, sizeof(recf), "%s/w.iogr", dir);
	tu_tmux_start(dir, 160, 40, "TERM=xterm-256color LANG=C.UTF-8",
	           tu_fmt("%s --listen %s -w %s", top_bin, ep, recf));
	char want[160];
	snprintf(want, sizeof(want), "IOGRAM_ENDPOINT=%s iogram-run -- ./app", ep);
	TU_EXPECT("no sources yet: run", 10);
	TU_EXPECT(want, 5);
	TU_EXPECT("REC w.iogr", 5);
	tu_tmux_keys("q");
	TU_EXPECT("IOGTOP-EXIT=0", 5);
	ck_assert(tu_wait_file(recf, 5));
	/* 80 columns: "recording stopped: PATH (0)" does not fit beside the rest */
	snprintf(recf, sizeof(recf), "%s/o.iogr", dir);
	tu_tmux_start(dir, 80, 24, "TERM=xterm-256color LANG=C.UTF-8",
	           tu_fmt("%s --listen %s -o %s", top_bin, ep, recf));
	TU_EXPECT("REC o.iogr", 10);
	tu_tmux_keys("R");
	TU_EXPECT("recording stopped", 5);
	char msg[1024], line[1024];
	snprintf(msg, sizeof(msg), "recording stopped: %s (0B)", recf);
	line_at(1, line, sizeof(line));
	char *end = strstr(line, "  rec off");
	TU_SCREEN_CHECK(end, "no 'rec off' on the second line: %s", line);
	while (end > line && end[-1] == ' ')
		end--;
	*end = '\0';
	size_t n = strlen(line);
	TU_SCREEN_CHECK(n > 0 && n < strlen(msg) && !strncmp(line, msg, n) && msg[n] == ' ',
	      "message cut in a word: '%s'", line);
	tu_tmux_keys("q");
	TU_EXPECT("IOGTOP-EXIT=0", 5);
	tu_tmux_start(dir, 120, 40, "TERM=xterm-256color LANG=C.UTF-8",
	           tu_fmt("%s --replay %s -w 60", top_bin, rec));
	TU_EXPECT("| last 60s |", 10);
	tu_tmux_keys("q");
	TU_EXPECT("IOGTOP-EXIT=0", 5);
	tu_tmux_kill();
}
END_TEST

static void sweep(void)
{
	tu_tmux_kill();
	tu_tmux_sweep(dir);   /* those of tests that failed before their kill */
}

int main(void)
{
	top_bin = getenv("IOGRAM_TOP");
	if (!top_bin) {
		fprintf(stderr, "check_top_access: set IOGRAM_TOP\n");
		return 1;
	}
	if (tu_tmux_suite_begin("top_access", dir, sizeof(dir)) < 0)
		return 1;
	tu_asan_option("verify_asan_link_order=0");
	snprintf(rec, sizeof(rec), "%s/access.iogr", dir);
	Suite *s = suite_create("top_access");
	TCase *tc = tcase_create("tmux");
	tcase_set_timeout(tc, 120);
	tcase_add_unchecked_fixture(tc, NULL, sweep);
	tcase_add_test(tc, access_60s);
	tcase_add_test(tc, files_by_bytes);
	tcase_add_test(tc, stdio_layer);
	tcase_add_test(tc, help_overlay);
	tcase_add_test(tc, panel_order);
	tcase_add_test(tc, focus_contrast);
	tcase_add_test(tc, live_small_things);
	suite_add_tcase(s, tc);
	int failed = tu_run_srunner(s);
	tu_tmux_kill();
	return tu_tmux_suite_end("top_access", dir, failed);
}
