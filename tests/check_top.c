/* check_top.c - iogram-top in a real terminal: tmux sessions driven with
 * send-keys and read back with capture-pane, on replay files whose contents
 * are known (iogram-synth's ground truth), live with a real program under
 * the interposer, and the demo. Every tmux server started here lives under
 * this test's own TMUX_TMPDIR and is killed at the end. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
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

#include "iogp.h"
#include "iogp_units.h"
#include "testutil.h"
#include "testutil_tmux.h"

static const char *top_bin, *synth_bin, *run_bin, *iogram_bin;
static char dir[256];
static char replay[4200], truth[4200];



/* The screen line holding text, or "". */
static const char *line_with(const char *text)
{
	static char line[4096];
	const char *p = strstr(tu_screen, text);
	line[0] = '\0';
	if (!p)
		return line;
	const char *a = p, *z = p;
	while (a > tu_screen && a[-1] != '\n')
		a--;
	while (*z && *z != '\n')
		z++;
	snprintf(line, sizeof(line), "%.*s", (int)(z - a), a);
	return line;
}

/* ---- ground truth --------------------------------------------------------- */

static void load_truth(iogp_hist *h, const char *metric, const char *scope)
{
	iogp_bins nb;
	iogp_bins_native(&nb, IOGP_NATIVE_K_DEFAULT);
	iogp_hist_init(h, &nb);
	FILE *f = fopen(tu_fmt("%s/%s.%s.csv", truth, metric, scope), "r");
	TU_SCREEN_CHECK(f != NULL, "no truth for %s %s", metric, scope);
	char line[256];
	ck_assert(fgets(line, sizeof(line), f) != NULL);
	uint64_t lo, hi, c;
	while (fscanf(f, "%" SCNu64 ",%" SCNu64 ",%" SCNu64 "\n", &lo, &hi, &c) == 3)
		ck_assert_int_eq(iogp_hist_record(h, lo, c), 0);
	fclose(f);
}

/* A value as a cell: request sizes exact, as the floor of their bin (the
 * size that was asked for), anything else as iogp_fmt_value has it. */
static void fmt_cell(char *buf, size_t len, const iogp_hist *h, const char *unit, uint64_t v)
{
	if (strcmp(unit, "bytes")) {
		iogp_fmt_value(buf, len, unit, (double)v, IOGP_UNITS_CELL);
		return;
	}
	uint64_t lo, hi;
	ck_assert_int_eq(iogp_bins_bounds(&h->scheme, iogp_bins_index(&h->scheme, v), &lo, &hi), 0);
	iogp_fmt_size(buf, len, (double)lo, IOGP_UNITS_CELL);
}

/* "read n=... p50 ... p90 ... p99 ... max ..." as the panels write it. */
static const char *summary_of(const iogp_hist *h, const char *what, const char *unit)
{
	char n[32], a[32], b[32], c[32], d[32];
	uint64_t v;
	iogp_fmt_count(n, sizeof(n), (double)h->total, IOGP_UNITS_CELL);
	iogp_hist_quantile(h, 0.5, &v);
	fmt_cell(a, sizeof(a), h, unit, v);
	iogp_hist_quantile(h, 0.9, &v);
	fmt_cell(b, sizeof(b), h, unit, v);
	iogp_hist_quantile(h, 0.99, &v);
	fmt_cell(c, sizeof(c), h, unit, v);
	iogp_hist_max(h, &v);
	fmt_cell(d, sizeof(d), h, unit, v);
	return tu_fmt("%s n=%s p50 %s p90 %s p99 %s max %s", what, n, a, b, c, d);
}

/* Does the captured (-e) screen set a colour (SGR 30-37, 38, 40-47, 48, 90-107)? */
static int has_colour(const char *t)
{
	for (const char *p = t; (p = strchr(p, '\033')) != NULL; p++) {
		if (p[1] != '[')
			continue;
		const char *q = p + 2;
		while (*q && *q != 'm' && ((*q >= '0' && *q <= '9') || *q == ';')) {
			int v = (int)strtol(q, (char **)&q, 10);
			if ((v >= 30 && v <= 38) || (v >= 40 && v <= 48) || (v >= 90 && v <= 107))
				return 1;
			if (*q == ';')
				q++;
		}
	}
	return 0;
}

/* Is title in reverse video in the captured (-e) screen: does one of the
 * SGR sequences right before it (tmux may add colour resets) set 7? */
static int reversed(const char *title)
{
	const char *e = strstr(tu_screen, title), *q;
	while (e && e > tu_screen && e[-1] == 'm' && (q = memrchr(tu_screen, '\033', (size_t)(e - tu_screen)))) {
		for (const char *v = q + 2; q[1] == '[' && v < e; v++)
			if (*v == '7' && (v[-1] == '[' || v[-1] == ';') && (v[1] == ';' || v[1] == 'm'))
				return 1;
		e = q;
	}
	return 0;
}

static const char *utf8_bar(void)
{
	return "\xe2\x96\x88";   /* U+2588 full block */
}

/* ---- tests ------------------------------------------------------------------ */

START_TEST(test_cli)
{
	ck_assert_int_eq(tu_system(tu_fmt("%s --help | grep -q EXAMPLES", top_bin)), 0);
	ck_assert_int_eq(tu_system(tu_fmt("%s --version | grep -q 'iogram-top '", top_bin)), 0);
	ck_assert_int_eq(tu_system(tu_fmt("%s --bogus >/dev/null 2>&1", top_bin)), 2);
	ck_assert_int_eq(tu_system(tu_fmt("%s --window -3 >/dev/null 2>&1", top_bin)), 2);
	ck_assert_int_eq(tu_system(tu_fmt("%s --demo --replay x >/dev/null 2>&1", top_bin)), 2);
	ck_assert_int_eq(tu_system(tu_fmt("%s --listen tcp://10.1.2.3:9 </dev/null >/dev/null 2>&1",
	                                  top_bin)), 2);
	/* not a replay file, a missing one: a message and 1, never a crash */
	ck_assert_int_eq(tu_system(tu_fmt("head -c 5000 /dev/urandom > %s/garbage.iogr", dir)), 0);
	ck_assert_int_eq(tu_system(tu_fmt("%s --replay %s/garbage.iogr </dev/null >/dev/null 2>%s/g.err",
	                                  top_bin, dir, dir)), 1);
	ck_assert_int_eq(tu_system(tu_fmt("grep -q 'iogram-top: ' %s/g.err", dir)), 0);
	ck_assert_int_eq(tu_system(tu_fmt("%s --replay %s/missing.iogr </dev/null >/dev/null 2>&1", top_bin,
	                                  dir)), 1);
	/* no terminal */
	ck_assert_int_eq(tu_system(tu_fmt("%s --replay %s </dev/null >/dev/null 2>&1", top_bin, replay)), 1);
}
END_TEST

/* 80x24, UTF-8 and colours: titles, counts and quantiles as in the file. */
START_TEST(test_replay_80x24)
{
	tu_tmux_start(dir, 80, 24, "TERM=xterm-256color LANG=C.UTF-8", tu_fmt("%s --replay %s", top_bin, replay));
	TU_EXPECT("REPLAY", 5);
	tu_tmux_keys("G");
	TU_EXPECT("END", 5);
	static const char *const titles[] = { "1 request size", "2 queue depth", "3 latency",
	                                      "4 access pattern", "5 node rates" };
	for (int i = 0; i < 5; i++)
		TU_EXPECT(titles[i], 2);
	TU_EXPECT("0 up 0 quiet 2 gone", 2);
	TU_EXPECT("gaps 0", 1);
	TU_EXPECT("all 2 nodes", 1);
	iogp_hist h;
	load_truth(&h, "posix.read.latency", "all");
	TU_EXPECT(summary_of(&h, "read", "ns"), 2);
	iogp_hist_free(&h);
	load_truth(&h, "posix.write.latency", "all");
	TU_EXPECT(summary_of(&h, "write", "ns"), 2);
	iogp_hist_free(&h);
	TU_SCREEN_CHECK(strstr(tu_tmux_capture(0), utf8_bar()) != NULL, "no block bars");
	/* colours: SGR colour codes are in use */
	TU_SCREEN_CHECK(has_colour(tu_tmux_capture(1)), "no colours");
	/* a node selected: its own numbers */
	tu_tmux_keys("n");
	TU_EXPECT("node node001", 2);
	load_truth(&h, "posix.read.latency", "node001");
	TU_EXPECT(summary_of(&h, "read", "ns"), 2);
	iogp_hist_free(&h);
	tu_tmux_keys("q");
	TU_EXPECT("IOGTOP-EXIT=0", 5);
	tu_tmux_kill();
}
END_TEST

/* 160x48: zoomed panels row by row against the truth. */
START_TEST(test_replay_160x48_rows)
{
	tu_tmux_start(dir, 160, 48, "TERM=xterm-256color LANG=C.UTF-8", tu_fmt("%s --replay %s", top_bin, replay));
	TU_EXPECT("REPLAY", 5);
	tu_tmux_keys("G");
	TU_EXPECT("END", 5);
	/* wide layout: size, latency and queue depth share the first row */
	tu_tmux_capture(0);
	const char *l = line_with("1 request size");
	TU_SCREEN_CHECK(strstr(l, "3 latency") && strstr(l, "2 queue depth"), "not the wide layout");
	/* zoom request size, read only, log2 bins */
	tu_tmux_keys("1 d b");
	TU_EXPECT("| read | log2 |", 3);
	TU_EXPECT_NOT("3 latency", 2);
	iogp_hist h, l2;
	load_truth(&h, "posix.read.size", "all");
	TU_EXPECT(summary_of(&h, "read", "bytes"), 2);
	iogp_bins b;
	iogp_bins_log2(&b);
	ck_assert_int_eq(iogp_hist_rebin(&l2, &h, &b), 0);
	ck_assert_int_gt((int)l2.n, 5);
	for (size_t i = 0; i < l2.n; i++) {
		uint64_t lo, hi;
		iogp_bins_bounds(&b, l2.bins[i].idx, &lo, &hi);
		char a[32], z[32];
		iogp_fmt_size(a, sizeof(a), (double)lo, IOGP_UNITS_CELL);
		iogp_fmt_size(z, sizeof(z), (double)hi, IOGP_UNITS_CELL);
		const char *lab = lo == hi ? tu_fmt("%s ", a) : tu_fmt("%s-%s ", a, z);
		/* the row: label first, then the bar, then the exact count */
		int found = 0;
		for (char *p = tu_screen; (p = strstr(p, lab)) != NULL; p++) {
			if (p != tu_screen && p[-1] != ' ' && p[-1] != '\n')
				continue;
			const char *eol = strchr(p, '\n');
			char row[512];
			snprintf(row, sizeof(row), "%.*s", (int)(eol ? eol - p : (long)strlen(p)), p);
			if (strstr(row, tu_fmt(" %" PRIu64 " ", l2.bins[i].count))) {
				found = 1;
				break;
			}
		}
		TU_SCREEN_CHECK(found, "row %s with %" PRIu64 " missing", lab, l2.bins[i].count);
	}
	/* the snapshot's CSV is the truth at full native resolution, whatever
	 * the screen shows (log2 bins here) */
	tu_tmux_keys("x");
	TU_EXPECT("snapshot ./iogram-snap-", 3);
	const char *m = strstr(tu_screen, "snapshot ./");
	char snapdir[256];
	ck_assert(sscanf(m, "snapshot ./%255[^/]", snapdir) == 1);
	TU_SCREEN_CHECK(strstr(tu_screen, "size-read.bytes.csv"), "file names not shown");
	/* with iogram-view's plot library: a PNG of the zoomed panel */
	TU_SCREEN_CHECK(strstr(tu_screen, "size.png") || strstr(tu_screen, "PNG: not built"), "PNG not mentioned");
	if (strstr(tu_screen, "size.png")) {
		FILE *pf = fopen(tu_fmt("%s/%s/size.png", dir, snapdir), "rb");
		unsigned char magic[8] = { 0 };
		TU_SCREEN_CHECK(pf && fread(magic, 1, 8, pf) == 8 && !memcmp(magic, "\x89PNG\r\n\x1a\n", 8),
		      "size.png is not a PNG");
		fclose(pf);
	}
	FILE *f = fopen(tu_fmt("%s/%s/size-read.bytes.csv", dir, snapdir), "r");
	TU_SCREEN_CHECK(f != NULL, "no %s/size-read.bytes.csv", snapdir);
	char got[65536];
	size_t n = fread(got, 1, sizeof(got) - 1, f);
	got[n] = '\0';
	fclose(f);
	char want[65536];
	FILE *mf = fmemopen(want, sizeof(want), "w");
	iogp_hist_write_csv(&h, mf);
	fclose(mf);
	ck_assert_str_eq(got, want);
	iogp_hist_free(&l2);
	iogp_hist_free(&h);
	/* queue depth: native buckets are exact for 1..8 */
	tu_tmux_keys("2 b b");
	TU_EXPECT("since start, native k=4", 3);
	TU_EXPECT("2 queue depth", 2);
	load_truth(&h, "posix.queue_depth", "all");
	TU_EXPECT(summary_of(&h, "all", "requests"), 2);
	for (size_t i = 0; i < h.n; i++) {
		uint64_t lo, hi;
		iogp_native_bounds((uint32_t)h.bins[i].idx, IOGP_NATIVE_K_DEFAULT, &lo, &hi);
		tu_tmux_capture(0);
		const char *row = NULL;
		for (char *p = tu_screen; *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p)) {
			char num[32], next[32];
			if (*p != '\n' && sscanf(p, "%31s %31s", num, next) == 2 && strcmp(next, "queue") &&
			    !strcmp(num, tu_fmt("%" PRIu64, lo))) {
				row = line_with(p);
				break;
			}
			if (!strchr(p, '\n'))
				break;
		}
		TU_SCREEN_CHECK(row && strstr(row, tu_fmt(" %" PRIu64 " ", h.bins[i].count)),
		              "queue depth %" PRIu64 ": %" PRIu64 " missing", lo, h.bins[i].count);
	}
	iogp_hist_free(&h);
	tu_tmux_keys("q");
	TU_EXPECT("IOGTOP-EXIT=0", 5);
	tu_tmux_kill();
}
END_TEST

/* A request size as a cell writes it ("4K", "1M", "10240"); -1 if not one. */
static int64_t parse_size(const char *t, const char **end)
{
	char *e;
	unsigned long long v = strtoull(t, &e, 10);
	if (e == t)
		return -1;
	int sh = *e == 'K' ? 10 : *e == 'M' ? 20 : *e == 'G' ? 30 : *e == 'T' ? 40 : 0;
	if (sh)
		e++;
	*end = e;
	return (int64_t)(v << sh);
}

/* Requests of truth h in [lo, hi]. */
static uint64_t truth_between(const iogp_hist *h, uint64_t lo, uint64_t hi)
{
	uint64_t n = 0;
	for (size_t i = 0; i < h->n; i++) {
		uint64_t a, z;
		iogp_bins_bounds(&h->scheme, h->bins[i].idx, &a, &z);
		if (a >= lo && z <= hi)
			n += h->bins[i].count;
		else
			TU_SCREEN_CHECK(z < lo || a > hi, "truth bin %" PRIu64 "-%" PRIu64 " split by a row %" PRIu64
			      "-%" PRIu64, a, z, lo, hi);
	}
	return n;
}

/* 120x40, writes of 4 KiB, tar's 10,240 B and 1 MiB: the size rows say
 * exact sizes, each row's label holds exactly what the row counts (the
 * last row of merged bins ">=X"), the quantiles are sizes that were asked for. */
START_TEST(test_size_rows_120x40)
{
	const char *rp = tu_fmt("%s/ws.iogr", dir), *tp = tu_fmt("%s/ws-truth", dir);
	char wrep[4200], wtruth[4200];
	snprintf(wrep, sizeof(wrep), "%s", rp);
	snprintf(wtruth, sizeof(wtruth), "%s", tp);
	ck_assert_int_eq(tu_system(tu_fmt("%s --nodes 2 --seconds 30 --seed 7 --write-sizes 4096,10240,1048576 "
	                                  "-o %s --truth %s", synth_bin, wrep, wtruth)), 0);
	iogp_hist th[2];
	char keep[4200];
	snprintf(keep, sizeof(keep), "%s", truth);
	snprintf(truth, sizeof(truth), "%s", wtruth);
	load_truth(&th[0], "posix.read.size", "all");
	load_truth(&th[1], "posix.write.size", "all");
	snprintf(truth, sizeof(truth), "%s", keep);
	tu_tmux_start(dir, 120, 40, "TERM=xterm-256color LANG=C.UTF-8", tu_fmt("%s --replay %s", top_bin, wrep));
	TU_EXPECT("REPLAY", 5);
	tu_tmux_keys("G");
	TU_EXPECT("END", 5);
	TU_EXPECT(summary_of(&th[0], "read", "bytes"), 2);
	TU_EXPECT(summary_of(&th[1], "write", "bytes"), 2);
	TU_SCREEN_CHECK(strstr(tu_screen, "p50 10240 p90 1M p99 1M max 1M"), "write quantiles not exact sizes");
	/* the size panel's rows: from its title's line to the next title */
	tu_tmux_capture(0);
	const char *title = strstr(tu_screen, "1 request size");
	TU_SCREEN_CHECK(title != NULL, "no size panel");
	const char *l = line_with("1 request size");
	const char *qd = strstr(l, "2 queue depth");
	int right = qd ? (int)(qd - l) : 120;
	const char *kk = strstr(l, "native k=");
	TU_SCREEN_CHECK(kk != NULL, "size panel not in native bins");
	unsigned k = (unsigned)atoi(kk + 9);
	const char *p = strchr(title, '\n');
	p = p ? p + 1 : title;
	/* two summary lines, then the rows */
	for (int i = 0; i < 2 && strchr(p, '\n'); i++)
		p = strchr(p, '\n') + 1;
	uint64_t seen[2] = { 0, 0 };
	int nrows = 0, last_open = 0;
	/* (below them: the common sizes, here a note that none were recorded) */
	while (*p && !strstr(line_with(p), "4 access pattern") && !strstr(line_with(p), "common sizes") &&
	       nrows < 40) {
		const char *eol = strchr(p, '\n');
		/* the row's left part, up to the queue depth panel (columns, UTF-8 bars) */
		char row[1024];
		int col = 0, o = 0;
		for (const char *q = p; q < (eol ? eol : p + strlen(p)) && col < right && o < 1000; q++) {
			row[o++] = *q;
			if (((unsigned char)*q & 0xC0) != 0x80)
				col++;
		}
		row[o] = 0;
		const char *t = row;
		while (*t == ' ')
			t++;
		if (!*t)
			break;
		int open = !strncmp(t, ">=", 2);
		if (open)
			t += 2;
		const char *e;
		int64_t lo = parse_size(t, &e), hi;
		TU_SCREEN_CHECK(lo >= 0, "row label '%s' not a size", row);
		if (open) {
			hi = INT64_MAX;
		} else if (*e == '-') {
			hi = parse_size(e + 1, &e);
			TU_SCREEN_CHECK(hi >= lo, "row label '%s'", row);
		} else {
			uint64_t a, z;
			iogp_native_bounds(iogp_native_index((uint64_t)lo, k), k, &a, &z);
			TU_SCREEN_CHECK(a == (uint64_t)lo, "row label '%s' not a bin's floor", row);
			hi = (int64_t)z;
		}
		TU_SCREEN_CHECK(*e == ' ' || *e == '~', "row label '%s'", row);
		last_open = open;
		/* the counts drawn (read, then write; zeros are not drawn) */
		uint64_t want[2] = { truth_between(&th[0], (uint64_t)lo, (uint64_t)hi),
		                     truth_between(&th[1], (uint64_t)lo, (uint64_t)hi) };
		char wants[64] = "", got[64] = "";
		for (int d = 0; d < 2; d++)
			if (want[d])
				snprintf(wants + strlen(wants), sizeof(wants) - strlen(wants), " %" PRIu64, want[d]);
		for (const char *q = e; *q;) {
			if (*q >= '0' && *q <= '9' && (q[-1] == ' ')) {
				char *z;
				unsigned long long v = strtoull(q, &z, 10);
				if (*z == ' ' || !*z)
					snprintf(got + strlen(got), sizeof(got) - strlen(got), " %llu", v);
				q = z;
			} else {
				q++;
			}
		}
		TU_SCREEN_CHECK(!strcmp(wants, got), "row '%s': counts%s, want%s", row, got, wants);
		seen[0] += want[0];
		seen[1] += want[1];
		nrows++;
		if (!eol)
			break;
		p = eol + 1;
	}
	TU_SCREEN_CHECK(nrows >= 3, "only %d size rows", nrows);
	TU_SCREEN_CHECK(seen[0] == th[0].total && seen[1] == th[1].total, "rows hold %" PRIu64 "+%" PRIu64
	      " of %" PRIu64 "+%" PRIu64, seen[0], seen[1], th[0].total, th[1].total);
	/* the 1 MiB writes sit in the last row, and it says it holds everything above */
	TU_SCREEN_CHECK(last_open, "last size row does not say >=");
	tu_tmux_keys("q");
	TU_EXPECT("IOGTOP-EXIT=0", 5);
	tu_tmux_kill();
	iogp_hist_free(&th[0]);
	iogp_hist_free(&th[1]);
}
END_TEST

/* The first cols columns of the screen line at p (UTF-8 aware), spaces
 * squeezed; *eighths gets the length of the bars in it (U+2588..U+258F). */
static const char *cols_of(const char *p, int cols, int *eighths)
{
	static char out[1024];
	int col = 0, o = 0, sp = 1;
	*eighths = 0;
	for (const char *q = p; *q && *q != '\n' && col < cols && o < 1000; q++) {
		const unsigned char *u = (const unsigned char *)q;
		if (u[0] == 0xe2 && u[1] == 0x96 && u[2] >= 0x88 && u[2] <= 0x8f)
			*eighths += 8 - (u[2] - 0x88);
		if ((*u & 0xC0) != 0x80)
			col++;
		if (*q == ' ' && sp)
			continue;
		sp = *q == ' ';
		out[o++] = *q;
	}
	out[o] = 0;
	return out;
}

/* The size panel's lines (its columns, squeezed) below its title: n of them. */
static int size_lines(char lines[][1024], int *bars, int max)
{
	tu_tmux_capture(0);
	const char *l = line_with("1 request size");
	TU_SCREEN_CHECK(l[0], "no size panel");
	const char *qd = strstr(l, "2 queue depth");
	int right = qd ? (int)(qd - l) : (int)strlen(l), n = 0;
	const char *p = strchr(strstr(tu_screen, "1 request size"), '\n');
	while (p && *++p && n < max && !strstr(line_with(p), "4 access pattern")) {
		snprintf(lines[n], 1024, "%s", cols_of(p, right, &bars[n]));
		n++;
		p = strchr(p, '\n');
	}
	return n;
}

/* iogram-top at w x h on cs.iogr (with args), at its end. */
static void at_end(int w, int h, const char *args)
{
	tu_tmux_start(dir, w, h, "TERM=xterm-256color LANG=C.UTF-8", tu_fmt("%s %s --replay cs.iogr", top_bin, args));
	TU_EXPECT("REPLAY", 5);
	tu_tmux_keys("G");
	TU_EXPECT("END", 5);
}

static int find_line(char lines[][1024], int n, const char *prefix, const char *text)
{
	for (int i = 0; i < n; i++)
		if (!strncmp(lines[i], prefix, strlen(prefix)) && strstr(lines[i], text))
			return i;
	return -1;
}

/* Known request sizes from real programs: dd under the interposer writes
 * 3000 x 4 KiB, 700 x 10,240 B and 5 x 1 MiB and reads 5 x 1 MiB. At
 * 120x40 the size panel's rows are labelled with those sizes, the common
 * sizes tables give their exact counts and shares of the requests and of
 * the bytes, v weights the bars by bytes (as computed), x writes the table,
 * --weight starts by bytes; at 80x24 the table waits for the zoom. */
START_TEST(test_common_sizes)
{
	ck_assert_int_eq(tu_system(tu_fmt("cd %s && env LC_ALL=C %s -e none -o cs-%%p.iogr -i 100 -n csnode -- "
	                                  "sh -c 'dd if=/dev/zero of=cs4k bs=4k count=3000 status=none && "
	                                  "dd if=cs4k of=cs1m bs=1M count=5 status=none && dd if=/dev/zero "
	                                  "of=cs10k bs=10240 count=700 status=none' && %s merge -o cs.iogr "
	                                  "cs-*.iogr >/dev/null 2>&1", dir, run_bin, iogram_bin)), 0);
	const double bytes = 3000.0 * 4096 + 700.0 * 10240 + 5.0 * 1048576;
	static const char *const lab[3] = { "4K", "10240", "1M" };
	static const double size[3] = { 4096, 10240, 1048576 }, cnt[3] = { 3000, 700, 5 };
	at_end(120, 40, "");
	TU_EXPECT("write n=3705 p50 4K p90 10240 p99 10240 max 1M", 5);
	TU_EXPECT("read n=5 p50 1M p90 1M p99 1M max 1M", 2);
	TU_SCREEN_CHECK(strstr(line_with("1 request size"), "by count"), "title does not say by count");
	char lines[40][1024];
	int bars[40], n = size_lines(lines, bars, 40);
	int head = find_line(lines, n, "read size count % reqs % bytes", "write size count % reqs % bytes");
	TU_SCREEN_CHECK(head >= 0, "no common sizes header");
	/* the read table (left) and the write table (right), most common first */
	TU_SCREEN_CHECK(strstr(lines[head + 1], "1M 5 100% 100% 4K 3000 "), "first row '%s'", lines[head + 1]);
	for (int i = 0; i < 3; i++) {
		const char *row = tu_fmt("%s %.0f %.1f%% %.1f%%", lab[i], cnt[i], 100 * cnt[i] / 3705,
		                         100 * size[i] * cnt[i] / bytes);
		TU_SCREEN_CHECK(strstr(lines[head + 1 + i], row), "write row %d: '%s', want '%s'", i, lines[head + 1 + i], row);
	}
	TU_SCREEN_CHECK(head + 4 >= n || !strstr(lines[head + 4], "other"), "an 'other' row for known sizes");
	/* the histogram's rows say the sizes asked for; the bars by count */
	int row[3];
	for (int i = 0; i < 3; i++) {
		row[i] = find_line(lines, head, lab[i], tu_fmt(" %.0f", cnt[i]));
		TU_SCREEN_CHECK(row[i] >= 0, "no histogram row %s with %.0f", lab[i], cnt[i]);
	}
	double r = (double)bars[row[1]] / bars[row[0]];
	TU_SCREEN_CHECK(fabs(r - 700.0 / 3000) < 0.03, "by count: bar 10240/4K %d/%d", bars[row[1]], bars[row[0]]);
	/* by bytes: the bars as the bytes moved, their numbers the bytes */
	tu_tmux_keys("v");
	TU_EXPECT("request sizes by bytes", 3);
	TU_SCREEN_CHECK(strstr(line_with("1 request size"), "by bytes"), "title does not say by bytes");
	n = size_lines(lines, bars, 40);
	char b[3][32];
	for (int i = 0; i < 3; i++) {
		iogp_fmt_bytes(b[i], sizeof(b[i]), size[i] * cnt[i], IOGP_UNITS_CELL);
		row[i] = find_line(lines, n, lab[i], tu_fmt(" %s", b[i]));
		TU_SCREEN_CHECK(row[i] >= 0, "no row %s with %s bytes", lab[i], b[i]);
	}
	r = (double)bars[row[1]] / bars[row[0]];
	TU_SCREEN_CHECK(fabs(r - 7168000.0 / 12288000) < 0.03, "by bytes: bar 10240/4K %d/%d", bars[row[1]],
	      bars[row[0]]);
	/* the 1 MiB writes: a sliver by count, 5/11.7 of the 4K bar by bytes
	 * (the row also holds the reads' full bar) */
	int full = bars[row[0]];
	TU_SCREEN_CHECK(abs(bars[row[2]] - full - (int)lround(full * 5242880.0 / 12288000)) <= 2,
	      "by bytes: 1M row %d eighths, 4K %d", bars[row[2]], full);
	/* x writes the table too */
	tu_tmux_keys("x");
	TU_EXPECT("size-common-write.bytes.csv", 3);
	const char *m = strstr(tu_screen, "snapshot ./");
	char snapdir[256] = "";
	TU_SCREEN_CHECK(m && sscanf(m, "snapshot ./%255[^/]", snapdir) == 1, "no snapshot directory");
	const char *csv = tu_slurp(tu_fmt("%s/%s/size-common-write.bytes.csv", dir, snapdir));
	TU_SCREEN_CHECK(!strncmp(csv, "size,count,pct_requests,pct_bytes\n4096,3000,", 44) &&
	      strstr(csv, tu_fmt("10240,700,%.3f,%.3f\n", 70000.0 / 3705, 100 * 7168000.0 / bytes)), "csv: %s", csv);
	tu_tmux_keys("v");
	TU_EXPECT("request sizes by count", 3);
	tu_tmux_keys("q");
	TU_EXPECT("IOGTOP-EXIT=0", 5);
	/* --weight bytes starts there; a weight that does not exist is a usage error */
	at_end(120, 40, "--weight bytes");
	TU_EXPECT(tu_fmt(" %s", b[0]), 5);
	TU_SCREEN_CHECK(strstr(line_with("1 request size"), "by bytes"), "--weight bytes: not by bytes");
	tu_tmux_keys("q");
	TU_EXPECT("IOGTOP-EXIT=0", 5);
	ck_assert_int_eq(tu_system(tu_fmt("%s --weight volume --replay %s/cs.iogr 2>/dev/null", top_bin, dir)),
	                 IOGP_EXIT_USAGE);
	/* 80x24: no room beside or below the rows; the zoomed panel has it */
	at_end(80, 24, "");
	TU_EXPECT("write n=3705", 3);
	TU_SCREEN_CHECK(!strstr(tu_screen, "write size"), "common sizes squeezed into 80x24");
	tu_tmux_keys("1");
	TU_EXPECT("write size", 3);
	n = size_lines(lines, bars, 40);
	head = find_line(lines, n, "read size count % reqs % bytes", "write size count % reqs % bytes");
	TU_SCREEN_CHECK(head >= 0 && strstr(lines[head + 1], "1M 5 100% 100% 4K 3000 81.0% 49.8%"), "zoomed: no table");
	tu_tmux_keys("q");
	TU_EXPECT("IOGTOP-EXIT=0", 5);
	tu_tmux_kill();
}
END_TEST

/* vt100 and LANG=C: plain ASCII, no colours, still every panel. */
START_TEST(test_vt100_ascii)
{
	tu_tmux_start(dir, 80, 24, "TERM=vt100 LANG=C LC_ALL=C", tu_fmt("%s --replay %s", top_bin, replay));
	TU_EXPECT("REPLAY", 5);
	tu_tmux_keys("G");
	TU_EXPECT("END", 5);
	TU_EXPECT("5 node rates", 2);
	tu_tmux_capture(0);
	for (const unsigned char *p = (const unsigned char *)tu_screen; *p; p++)
		TU_SCREEN_CHECK(*p < 128, "non-ASCII byte on a vt100 in the C locale");
	TU_SCREEN_CHECK(strchr(tu_screen, '#') != NULL, "no ASCII bars");
	iogp_hist h;
	load_truth(&h, "posix.read.latency", "all");
	TU_EXPECT(summary_of(&h, "read", "ns"), 2);
	iogp_hist_free(&h);
	tu_tmux_capture(1);
	TU_SCREEN_CHECK(!has_colour(tu_screen), "colours on a vt100");
	/* monochrome still marks the focused panel (reverse video) */
	TU_SCREEN_CHECK(reversed("3 latency"), "focus not shown");
	tu_tmux_keys("q");
	TU_EXPECT("IOGTOP-EXIT=0", 5);
	tu_tmux_kill();
	/* NO_COLOR on a colour terminal; --no-unicode in UTF-8 */
	tu_tmux_start(dir, 80, 24, "TERM=xterm-256color LANG=C.UTF-8 NO_COLOR=1",
	           tu_fmt("%s --no-unicode --replay %s", top_bin, replay));
	TU_EXPECT("REPLAY", 5);
	tu_tmux_keys("G");
	TU_EXPECT("END", 5);
	tu_tmux_capture(1);
	TU_SCREEN_CHECK(!has_colour(tu_screen), "colours despite NO_COLOR");
	tu_tmux_capture(0);
	for (const unsigned char *p = (const unsigned char *)tu_screen; *p; p++)
		TU_SCREEN_CHECK(*p < 128, "non-ASCII with --no-unicode");
	tu_tmux_kill();
}
END_TEST

static const char *position(void)
{
	static char pos[32];
	tu_tmux_capture(0);
	pos[0] = '\0';
	const char *p = strstr(tu_screen, "REPLAY ");
	if (p && (p = strchr(p + 7, ' ')))
		sscanf(p + 1, "%31[0-9:]", pos);
	return pos;
}

static int wait_pos(const char *want, double secs)
{
	double end = tu_now() + secs;
	do {
		if (!strcmp(position(), want))
			return 1;
		tu_sleep_ms(30);
	} while (tu_now() < end);
	return 0;
}

#define EXPECT_POS(p) TU_SCREEN_CHECK(wait_pos(p, 3), "position %s, want %s", position(), p)

/* Every key in the help, and what it does. */
START_TEST(test_keys)
{
	tu_tmux_start(dir, 160, 48, "TERM=xterm-256color LANG=C.UTF-8 NO_COLOR=1",
	           tu_fmt("%s --replay %s", top_bin, replay));
	TU_EXPECT("REPLAY", 5);
	/* help lists every key; ? and h open it, any key closes it */
	tu_tmux_keys("?");
	TU_EXPECT("iogram-top keys", 2);
	TU_EXPECT("repaint", 5);   /* its last line: the whole overlay has been drawn */
	static const char *const names[][2] = {
		{ "? h", "this help" }, { "q", "quit" }, { "Tab", "focus next" },
		{ "S-Tab", "focus previous" }, { "0-5,7-9,M", "zoom panel N" }, { "z Enter", "zoom focused" },
		{ "Esc", "close help" }, { "n N", "previous node" }, { "s S", "previous source" },
		{ "a", "select everything" }, { "f F", "previous file" }, { "w W", "last N s" },
		{ "d", "read+write / read" }, { "b", "bins native" }, { "v", "sizes by count" },
		{ "l", "counts linear" },
		{ "m", "rates: lines" }, { "o", "sort by next column" }, { "O", "reverse the order" },
		{ "t", "table: nodes / ranks" }, { "space p", "pause" }, { "Left ,", "seek back 10" },
		{ "Right .", "seek forward 10" }, { "PgUp [", "seek back 60" },
		{ "PgDn ]", "seek forward 60" }, { "-", "slower" }, { "+ =", "faster" },
		{ "Home g", "jump to start" }, { "End G", "jump to end" }, { "R", "recording" },
		{ "x", "snapshot" }, { "^L", "repaint" },
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
		const char *l = line_with(names[i][1]);
		const char *k = strstr(l, tu_fmt(" %s ", names[i][0]));
		TU_SCREEN_CHECK(k && k < strstr(l, names[i][1]), "key %s (%s) not in the help", names[i][0], names[i][1]);
	}
	tu_tmux_keys("Escape");
	TU_EXPECT_NOT("iogram-top keys", 2);
	tu_tmux_keys("h");
	TU_EXPECT("iogram-top keys", 2);
	tu_tmux_keys("F1");
	TU_EXPECT_NOT("iogram-top keys", 2);
	/* pause and seek */
	tu_tmux_keys("Space");
	TU_EXPECT("PAUSED", 2);
	tu_tmux_keys("g");
	EXPECT_POS("0:00");
	tu_tmux_keys(".");
	EXPECT_POS("0:10");
	tu_tmux_keys("Right");
	EXPECT_POS("0:20");
	tu_tmux_keys(",");
	EXPECT_POS("0:10");
	tu_tmux_keys("Left");
	EXPECT_POS("0:00");
	tu_tmux_keys("]");
	TU_EXPECT("END", 2);
	tu_tmux_keys("[");
	TU_EXPECT_NOT("END", 2);
	tu_tmux_keys("Home");
	EXPECT_POS("0:00");
	tu_tmux_keys("NPage");
	TU_EXPECT("END", 2);
	tu_tmux_keys("PPage");
	EXPECT_POS("0:00");
	tu_tmux_keys("End");
	TU_EXPECT("END", 2);
	tu_tmux_keys("p");   /* play again from the start */
	TU_EXPECT_NOT("END", 2);
	tu_tmux_keys("Space");
	TU_EXPECT("PAUSED", 2);
	tu_tmux_keys("+");
	TU_EXPECT("x2 ", 2);
	tu_tmux_keys("=");
	TU_EXPECT("x4 ", 2);
	tu_tmux_keys("-");
	TU_EXPECT("x2 ", 2);
	tu_tmux_keys("_");
	TU_EXPECT("x1 ", 2);
	tu_tmux_keys("G");
	TU_EXPECT("END", 2);
	/* selection */
	tu_tmux_keys("n");
	TU_EXPECT("node node001", 2);
	tu_tmux_keys("n");
	TU_EXPECT("node node002", 2);
	tu_tmux_keys("N");
	TU_EXPECT("node node001", 2);
	tu_tmux_keys("a");
	TU_EXPECT("all 2 nodes", 2);
	tu_tmux_keys("s");
	TU_EXPECT("source node001:1000", 2);
	tu_tmux_keys("s");
	TU_EXPECT("source node002:1001", 2);
	tu_tmux_keys("S");
	TU_EXPECT("source node001:1000", 2);
	tu_tmux_keys("a");
	TU_EXPECT("all 2 nodes", 2);
	tu_tmux_keys("w");
	TU_EXPECT("| last 10s |", 2);
	tu_tmux_keys("W");
	TU_EXPECT("| since start |", 2);
	tu_tmux_keys("d");
	TU_EXPECT("| read |", 2);
	tu_tmux_keys("d");
	TU_EXPECT("| write |", 2);
	tu_tmux_keys("d");
	TU_EXPECT("| read+write |", 2);
	tu_tmux_keys("b");
	TU_EXPECT("| log2 |", 2);
	tu_tmux_keys("b");
	TU_EXPECT("| fixed |", 2);
	tu_tmux_keys("b");
	TU_EXPECT("| native |", 2);
	tu_tmux_keys("l");
	TU_EXPECT("| log ", 2);
	tu_tmux_keys("l");
	TU_EXPECT("| linear", 2);
	tu_tmux_keys("m");
	TU_EXPECT("node rates: lines", 2);
	tu_tmux_keys("m");
	TU_EXPECT("node rates: heatmap of bytes/s", 2);
	TU_EXPECT("heatmap, ", 2);
	tu_tmux_keys("m");
	TU_EXPECT("node rates: heatmap of latency p99", 2);
	TU_EXPECT("latency p99", 2);
	tu_tmux_keys("m");
	/* leaving the p99 heatmap waits for its frame (n + 1 window queries a
	 * frame; slow under a loaded test machine) */
	TU_EXPECT("node rates: auto", 8);
	/* files */
	TU_EXPECT("busiest file ", 2);
	tu_tmux_keys("f");
	TU_EXPECT("file 1/2", 2);
	TU_EXPECT_NOT("busiest file", 2);
	tu_tmux_keys("f");
	TU_EXPECT("file 2/2", 2);
	tu_tmux_keys("F");
	TU_EXPECT("file 1/2", 2);
	/* focus and zoom (mono: the focused title is in reverse video) */
	tu_tmux_capture(1);
	TU_SCREEN_CHECK(reversed("3 latency"), "latency not focused first");
	tu_tmux_keys("Tab");
	double end = tu_now() + 2;
	while ((tu_tmux_capture(1), !reversed("4 access")) && tu_now() < end)
		tu_sleep_ms(30);
	TU_SCREEN_CHECK(reversed("4 access"), "Tab did not focus access");
	tu_tmux_keys("BTab");
	end = tu_now() + 2;
	while ((tu_tmux_capture(1), !reversed("3 latency")) && tu_now() < end)
		tu_sleep_ms(30);
	TU_SCREEN_CHECK(reversed("3 latency"), "S-Tab did not go back");
	for (int p = 1; p <= 5; p++) {
		tu_tmux_keys(tu_fmt("%d", p));
		TU_EXPECT_NOT(p == 1 ? "3 latency" : "1 request size", 2);
		tu_tmux_keys(tu_fmt("%d", p));
		TU_EXPECT("1 request size", 2);
		TU_EXPECT("3 latency", 2);
	}
	tu_tmux_keys("z");
	TU_EXPECT_NOT("2 queue depth", 2);
	tu_tmux_keys("Enter");
	TU_EXPECT("2 queue depth", 2);
	tu_tmux_keys("4");
	TU_EXPECT_NOT("2 queue depth", 2);
	tu_tmux_keys("Escape");
	TU_EXPECT("2 queue depth", 2);
	tu_tmux_keys("C-l");
	TU_EXPECT("5 node rates", 2);
	/* recording: R starts, R stops, the file is a replay file */
	tu_tmux_keys("R");
	TU_EXPECT("REC iogram-", 2);
	tu_tmux_keys("R");
	TU_EXPECT("recording stopped: iogram-", 2);
	char name[256] = "";
	sscanf(strstr(tu_screen, "recording stopped: "), "recording stopped: %255s", name);
	iogp_replay_reader *r;
	char err[256];
	TU_SCREEN_CHECK(iogp_replay_open(&r, tu_fmt("%s/%s", dir, name), err, sizeof(err)) == 0, "%s: %s", name, err);
	iogp_replay_rec rec;
	ck_assert_int_eq(iogp_replay_next(r, &rec), 0);
	iogp_replay_close_reader(r);
	/* x writes the visible panels */
	tu_tmux_keys("x");
	TU_EXPECT("snapshot ./iogram-snap-", 2);
	TU_EXPECT("latency-read.ns.csv", 1);
	TU_EXPECT("rates-write.csv", 1);
	tu_tmux_keys("q");
	TU_EXPECT("IOGTOP-EXIT=0", 5);
	/* the terminal is itself again: canonical mode and echo back on (stty
	 * prints after the exit line: wait for it, ASan builds are slow) */
	TU_EXPECT("speed", 5);
	tu_tmux_capture(2);
	const char *modes = line_with("speed");
	TU_SCREEN_CHECK(strstr(modes, " icanon") && strstr(modes, " echo ") && !strstr(modes, "-icanon"),
	              "terminal modes not restored: %s", modes);
	TU_SCREEN_CHECK(!strstr(tu_screen, "5 node rates"), "dashboard left on screen");
	tu_tmux_kill();
}
END_TEST

/* The terminal vanishes (tmux killed outright, as when an SSH link drops):
 * iogram-top must exit, not spin. */
START_TEST(test_terminal_gone)
{
	tu_tmux_start(dir, 80, 24, "TERM=xterm-256color LANG=C.UTF-8", tu_fmt("%s --replay %s", top_bin, replay));
	TU_EXPECT("REPLAY", 5);
	char line[64] = "";
	FILE *p = popen(tu_fmt("tmux -L %s display -p '#{pid}'", tu_tmux_session()), "r");
	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), p));
	pclose(p);
	pid_t server = (pid_t)atoi(line);
	p = popen(tu_fmt("pgrep -f -n -- '%s --replay %s'", top_bin, replay), "r");
	ck_assert_ptr_nonnull(p);
	line[0] = '\0';
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), p));
	pclose(p);
	pid_t top = (pid_t)atoi(line);
	ck_assert_int_gt(server, 1);
	ck_assert_int_gt(top, 1);
	kill(server, SIGKILL);
	int gone = 0;
	for (int i = 0; i < 100 && !gone; i++) {
		usleep(50000);
		gone = kill(top, 0) != 0;
	}
	if (!gone)
		kill(top, SIGKILL);   /* never leave it spinning */
	ck_assert_msg(gone, "iogram-top (pid %d) still runs 5 s after its terminal went away", (int)top);
}
END_TEST

static pid_t top_pid(void);

/* How many times pid's threads waited (poll, ppoll) in secs seconds, as
 * strace counts them. */
static long waits_of(pid_t pid, int secs)
{
	char *out = tu_fmt("%s/waits.%d.txt", dir, (int)pid);
	tu_system(tu_fmt("timeout -s INT %d strace -q -f -c -e trace=poll,ppoll -o %s -p %d >/dev/null 2>&1",
	                 secs, out, (int)pid));
	const char *txt = tu_slurp(out);
	long n = 0;
	/* "% time seconds usecs/call calls [errors] syscall", a line each */
	for (const char *l = txt; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : "") {
		char line[256], *tok[8];
		size_t len = strcspn(l, "\n");
		snprintf(line, sizeof(line), "%.*s", (int)(len < sizeof(line) ? len : sizeof(line) - 1), l);
		int k = 0;
		for (char *sp, *t = strtok_r(line, " \t", &sp); t && k < 8; t = strtok_r(NULL, " \t", &sp))
			tok[k++] = t;
		if ((k == 5 || k == 6) && (!strcmp(tok[k - 1], "poll") || !strcmp(tok[k - 1], "ppoll")))
			n += atol(tok[3]);
	}
	ck_assert_msg(strstr(txt, "total") != NULL, "strace -c of %d said:\n%s", (int)pid, txt);
	fprintf(stderr, "iogram-top %d: %ld waits in %d s\n", (int)pid, n, secs);
	return n;
}

/* With nothing to draw (a replay at its end or paused, a live view paused)
 * iogram-top waits for input: a few wake-ups a second, not a loop that
 * spins (it did at 100% of a core: its next frame was due ever since the
 * last one, and none came). */
START_TEST(test_still_waits)
{
	tu_tmux_start(dir, 120, 40, "TERM=xterm-256color LANG=C.UTF-8", tu_fmt("%s --replay %s", top_bin, replay));
	TU_EXPECT("REPLAY", 5);
	pid_t top = top_pid();
	ck_assert_int_gt(top, 0);
	tu_tmux_keys("End");
	TU_EXPECT(" END ", 30);
	long w = waits_of(top, 3);
	ck_assert_msg(w < 60, "at the end: %ld waits in 3 s", w);
	tu_tmux_keys("Home");
	tu_tmux_keys("space");
	TU_EXPECT("PAUSED", 10);
	w = waits_of(top, 3);
	ck_assert_msg(w < 60, "paused: %ld waits in 3 s", w);
	tu_tmux_keys("space");   /* playing: frames again */
	TU_EXPECT_NOT("PAUSED", 10);
	tu_tmux_kill();
	/* live, paused, nobody sending */
	int port = tu_free_port();
	tu_tmux_start(dir, 120, 40, "TERM=xterm-256color LANG=C.UTF-8",
	              tu_fmt("%s --listen %s", top_bin, tu_ep(port)));
	TU_EXPECT("LIVE", 5);
	top = top_pid();
	ck_assert_int_gt(top, 0);
	tu_tmux_keys("space");
	TU_EXPECT("PAUSED", 5);
	w = waits_of(top, 3);
	ck_assert_msg(w < 60, "live, paused: %ld waits in 3 s", w);
}
END_TEST

/* Seek keys mashed while seeks are under way (a recording past the 300 s
 * warm-up, so seeks start over from keyframes and read on a pump at a
 * time): it stays up, arrives where the last key says, quits cleanly, and
 * a sanitized build reports nothing. A fixed sequence, not a random one. */
START_TEST(test_seek_keys_mashed)
{
	char *rec = tu_fmt("%s/long.iogr", dir);
	ck_assert_int_eq(tu_system(tu_fmt("%s --nodes 4 --sources-per-node 2 --seconds 700 --seed 3 -o %s "
	                                  ">/dev/null 2>&1", synth_bin, rec)), 0);
	tu_tmux_start(dir, 120, 40, "TERM=xterm-256color LANG=C.UTF-8", tu_fmt("%s --replay %s", top_bin, rec));
	TU_EXPECT("REPLAY", 5);
	static const char *const keys[] = { "Left", "Right", "End", "Home", "space", "PPage", "NPage",
	                                    "[", "]", "g", "G", "-", "+", "7", "1", "w" };
	uint32_t x = 12345;
	for (int i = 0; i < 200; i++) {
		x = x * 1103515245u + 12345u;
		tu_tmux_keys(keys[(x >> 16) % (sizeof(keys) / sizeof(keys[0]))]);
		if (i % 8 == 0)
			tu_sleep_ms((x >> 8) % 40);
	}
	tu_tmux_keys("End");
	TU_EXPECT(" END ", 60);   /* the last seek arrived */
	TU_SCREEN_CHECK(strstr(tu_screen, "SEEKING") == NULL, "still seeking at the end");
	tu_tmux_keys("q");
	TU_EXPECT("IOGTOP-EXIT=0", 10);
	ck_assert_int_eq(tu_tmux_report(), 0);
	tu_tmux_kill();
}
END_TEST

START_TEST(test_resize)
{
	tu_tmux_start(dir, 80, 24, "TERM=xterm-256color LANG=C.UTF-8", tu_fmt("%s --replay %s", top_bin, replay));
	TU_EXPECT("5 node rates", 5);
	tu_tmux_capture(0);
	TU_SCREEN_CHECK(!strstr(line_with("1 request size"), "3 latency"), "80 columns: narrow layout");
	tu_system(tu_fmt("tmux -L %s resize-window -x 160 -y 48", tu_tmux_session()));
	double end = tu_now() + 3;
	while (!(strstr(tu_tmux_capture(0), "1 request size") && strstr(line_with("1 request size"), "3 latency")) &&
	       tu_now() < end)
		tu_sleep_ms(50);
	TU_SCREEN_CHECK(strstr(line_with("1 request size"), "3 latency"), "160 columns: wide layout");
	tu_system(tu_fmt("tmux -L %s resize-window -x 50 -y 12", tu_tmux_session()));
	TU_EXPECT("terminal too small: 50x12", 3);
	tu_tmux_keys("3");   /* a zoomed panel fits */
	TU_EXPECT("3 latency", 2);
	tu_tmux_keys("3");
	TU_EXPECT("terminal too small", 2);
	tu_system(tu_fmt("tmux -L %s resize-window -x 80 -y 24", tu_tmux_session()));
	TU_EXPECT("5 node rates", 3);
	TU_EXPECT_NOT("too small", 2);
	tu_tmux_keys("q");
	TU_EXPECT("IOGTOP-EXIT=0", 5);
	tu_tmux_kill();
}
END_TEST

/* A recording cut in the middle: read up to the damage, shown, no crash. */
START_TEST(test_damaged_replay)
{
	struct stat st;
	ck_assert_int_eq(stat(replay, &st), 0);
	ck_assert_int_eq(tu_system(tu_fmt("head -c %lld %s > %s/cut.iogr", (long long)st.st_size / 2, replay,
	                                  dir)), 0);
	tu_tmux_start(dir, 80, 24, "TERM=xterm-256color LANG=C.UTF-8",
	           tu_fmt("%s --replay %s/cut.iogr", top_bin, dir));
	TU_EXPECT("REPLAY", 5);
	tu_tmux_keys("G");
	TU_EXPECT("END", 5);
	TU_EXPECT("damaged ", 2);
	TU_EXPECT("3 latency", 1);
	tu_tmux_keys("q");
	TU_EXPECT("IOGTOP-EXIT=0", 5);
	tu_tmux_kill();
}
END_TEST

/* iogram-top listening on a free port (its endpoint in ep), and dd's count
 * 4 KiB writes under iogram-run as node `node`, on screen. */
static void top_with_dd(char ep[64], const char *node, int count)
{
	snprintf(ep, 64, "%s", tu_ep(tu_free_port()));
	tu_tmux_start(dir, 160, 48, "TERM=xterm-256color LANG=C.UTF-8", tu_fmt("%s --listen %s", top_bin, ep));
	TU_EXPECT("LIVE tcp://127.0.0.1:", 5);
	/* devices are not storage: --all-files counts dd's requests in posix.* */
	ck_assert_int_eq(tu_system(tu_fmt("%s --all-files -e %s -n %s -i 100 -- dd if=/dev/zero of=/dev/null "
	                                  "bs=4k count=%d status=none", run_bin, ep, node, count)), 0);
	const char *want = tu_fmt("write n=%d ", count);
	TU_EXPECT(want, 5);
}

/* Findings over more sources than a frame computes at once (4,096): dd's
 * 4 KiB writes among 5,000 emulated sources. Selecting dd's node starts the
 * findings over every source again, in slices between frames; they end in
 * dd's small-requests finding with dd's own count, drawn also while live is
 * paused. */
START_TEST(test_findings_sliced)
{
	char ep[64];
	top_with_dd(ep, "ddnode", 3000);
	pid_t pid = tu_spawn((char *[]){ (char *)iogram_bin, "loadgen", "--sources", "5000", "--rate", "1",
	                                 "--nodes", "16", "--endpoint", ep, "--quiet", "--duration", "60", NULL },
	                     NULL, NULL, 0);
	TU_EXPECT("sources 5000 up", 30);
	tu_tmux_keys("9");   /* the findings panel */
	tu_tmux_keys("p");   /* paused: no data frames, the findings still come */
	tu_tmux_keys("n");   /* the first node: dd's */
	TU_EXPECT("node ddnode", 5);
	TU_EXPECT("writes: 100% of 3000 requests are under 64 KiB", 20);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	tu_tmux_keys("q");
	TU_EXPECT("IOGTOP-EXIT=0", 5);
	tu_tmux_kill();
}
END_TEST

/* Live: a real program under iogram-run; then a stream that stops (quiet)
 * and a source that restarts. */
START_TEST(test_live)
{
	char ep[64];
	top_with_dd(ep, "livenode", 50000);
	TU_EXPECT("read n=50000 ", 2);
	TU_EXPECT("livenode", 2);
	TU_EXPECT("0 up 0 quiet 1 gone", 5);
	/* emulated agents that stop talking: quiet */
	pid_t pid = tu_spawn((char *[]){ (char *)iogram_bin, "loadgen", "--sources", "3", "--rate", "5",
	                                 "--endpoint", ep, "--quiet", NULL }, NULL, NULL, 0);
	TU_EXPECT("3 up 0 quiet 1 gone", 8);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	TU_EXPECT("0 up 3 quiet 1 gone", 8);
	/* a rank that comes back under a new process: a restart */
	ck_assert_int_eq(tu_system(tu_fmt("SLURM_PROCID=7 SLURM_JOB_ID=99 %s --all-files -e %s -n rnode -i 100 -- dd "
	                                  "if=/dev/zero of=/dev/null bs=4k count=20000 status=none", run_bin,
	                                  ep)), 0);
	ck_assert_int_eq(tu_system(tu_fmt("SLURM_PROCID=7 SLURM_JOB_ID=99 %s --all-files -e %s -n rnode -i 100 -- dd "
	                                  "if=/dev/zero of=/dev/null bs=4k count=20000 status=none", run_bin,
	                                  ep)), 0);
	TU_EXPECT("1 restarted", 5);
	tu_tmux_keys("q");
	TU_EXPECT("IOGTOP-EXIT=0", 5);
	tu_tmux_kill();
}
END_TEST

/* The layer key on a real recording: sort under the interposer reads its
 * input with stdio, whose calls are counted in stdio.*; y shows that layer in
 * every panel and says so in the header, and the size panel's counts are
 * those iogram info gives for the same file. */
START_TEST(test_layer)
{
	const char *in = tu_fmt("%s/sort-in.txt", dir);
	char rec[4200];
	snprintf(rec, sizeof(rec), "%s/sort.iogr", dir);
	ck_assert_int_eq(tu_system(tu_fmt("seq 1 5000 | sort -R > %s", in)), 0);
	ck_assert_int_eq(tu_system(tu_fmt("%s -e none -o %s -i 100 -n sortnode -- sort -o %s/sort-out.txt %s",
	                                  run_bin, rec, dir, in)), 0);
	uint64_t rd = tu_info_counter(iogram_bin, rec, "stdio.read.ops"), wr = tu_info_counter(iogram_bin, rec, "stdio.write.ops");
	ck_assert_msg(rd != UINT64_MAX && rd > 0, "no stdio.read.ops in the recording");
	ck_assert_msg(wr != UINT64_MAX && wr >= 5000, "stdio.write.ops %" PRIu64, wr);
	tu_tmux_start(dir, 160, 48, "TERM=xterm-256color LANG=C.UTF-8", tu_fmt("%s --replay %s", top_bin, rec));
	TU_EXPECT("REPLAY", 5);
	tu_tmux_keys("G");
	TU_EXPECT("END", 5);
	TU_EXPECT("| POSIX", 5);
	tu_tmux_keys("y");
	TU_EXPECT("| STDIO", 5);
	TU_EXPECT(tu_fmt("read n=%" PRIu64 " ", rd), 5);
	TU_EXPECT(tu_fmt("write n=%" PRIu64 " ", wr), 2);
	TU_EXPECT("no queue depth in the STDIO layer", 2);
	TU_SCREEN_CHECK(strstr(line_with("request size"), "1 request size") != NULL, "no size panel");
	/* MPI-IO (this program made none), and back */
	tu_tmux_keys("y");
	TU_EXPECT("| MPI-IO", 5);
	TU_EXPECT("no queue depth in the MPI-IO layer", 2);
	tu_tmux_keys("y");
	TU_EXPECT("| POSIX", 5);
	TU_EXPECT_NOT("no queue depth in the STDIO layer", 2);
	tu_tmux_keys("q");
	TU_EXPECT("IOGTOP-EXIT=0", 5);
	tu_tmux_kill();
	/* --layer stdio starts there */
	tu_tmux_start(dir, 160, 48, "TERM=xterm-256color LANG=C.UTF-8",
	           tu_fmt("%s --layer stdio --replay %s", top_bin, rec));
	TU_EXPECT("REPLAY", 5);
	tu_tmux_keys("G");
	TU_EXPECT("| STDIO", 5);
	TU_EXPECT(tu_fmt("write n=%" PRIu64 " ", wr), 5);
	tu_tmux_keys("q");
	TU_EXPECT("IOGTOP-EXIT=0", 5);
	tu_tmux_kill();
	/* a layer that does not exist: a usage error */
	ck_assert_int_eq(tu_system(tu_fmt("%s --layer hdf5 --replay %s 2>/dev/null", top_bin, rec)),
	                 IOGP_EXIT_USAGE);
}
END_TEST

static int demo_dirs(const char *tmp)
{
	DIR *d = opendir(tmp);
	int n = 0;
	struct dirent *e;
	while (d && (e = readdir(d)))
		n += !strncmp(e->d_name, "iogram-demo-", 12);
	if (d)
		closedir(d);
	return n;
}

/* iogram-top's pid (the pane's shell runs it), and its worker children. */
static pid_t top_pid(void)
{
	long pid = tu_read_long(tu_fmt("pgrep -P $(tmux -L %s display -p '#{pane_pid}') -x iogram-top",
	                               tu_tmux_session()));
	return (pid_t)(pid > 0 ? pid : 0);
}

static int children(pid_t parent, pid_t *out, int max)
{
	FILE *p = popen(tu_fmt("pgrep -P %d", (int)parent), "r");
	int n = 0, pid;
	while (p && n < max && fscanf(p, "%d", &pid) == 1)
		out[n++] = (pid_t)pid;
	if (p)
		pclose(p);
	return n;
}

/* Any of pids still running (not a zombie)? */
static int alive(const pid_t *pids, int n)
{
	for (int i = 0; i < n; i++) {
		char st = 0;
		FILE *f = fopen(tu_fmt("/proc/%d/stat", (int)pids[i]), "r");
		if (!f)
			continue;
		if (fscanf(f, "%*d %*s %c", &st) != 1)
			st = 0;
		fclose(f);
		if (st && st != 'Z')
			return 1;
	}
	return 0;
}

/* The demo: five nodes with real numbers, cleaned up on q and on SIGTERM. */
START_TEST(test_demo)
{
	char tmp[4200];
	snprintf(tmp, sizeof(tmp), "%s/demotmp", dir);
	mkdir(tmp, 0755);
	tu_tmux_start(dir, 80, 24, tu_fmt("TERM=xterm-256color LANG=C.UTF-8 TMPDIR=%s", tmp),
	           tu_fmt("%s --demo", top_bin));
	TU_EXPECT("DEMO 5 workers", 5);
	TU_EXPECT("5 up", 8);
	TU_EXPECT("demo-node", 5);
	ck_assert_int_eq(demo_dirs(tmp), 1);
	pid_t tp = top_pid(), w[16];
	ck_assert_int_gt(tp, 0);
	int nw = children(tp, w, 16);
	ck_assert_int_eq(nw, 5);
	/* real numbers in every panel */
	double end = tu_now() + 8;
	while (tu_now() < end && !(strstr(tu_tmux_capture(0), "write n=") && !strstr(tu_screen, "write n=0 ") &&
	                          strstr(tu_screen, "p99") && strstr(tu_screen, "M/s")))
		tu_sleep_ms(200);
	TU_SCREEN_CHECK(strstr(tu_screen, "M/s") && !strstr(tu_screen, "write n=0 "), "no demo data");
	tu_tmux_keys("q");
	TU_EXPECT("IOGTOP-EXIT=0", 5);
	TU_SCREEN_CHECK(demo_dirs(tmp) == 0, "demo directory left behind");
	TU_SCREEN_CHECK(!alive(w, nw), "demo workers left running");
	tu_tmux_kill();
	/* SIGTERM */
	tu_tmux_start(dir, 80, 24, tu_fmt("TERM=xterm-256color LANG=C.UTF-8 TMPDIR=%s", tmp),
	           tu_fmt("%s --demo", top_bin));
	TU_EXPECT("5 up", 8);
	tp = top_pid();
	ck_assert_int_gt(tp, 0);
	nw = children(tp, w, 16);
	ck_assert_int_eq(nw, 5);
	ck_assert_int_eq(kill(tp, SIGTERM), 0);
	TU_EXPECT("IOGTOP-EXIT=0", 5);
	TU_SCREEN_CHECK(demo_dirs(tmp) == 0, "demo directory left behind after SIGTERM");
	TU_SCREEN_CHECK(!alive(w, nw), "demo workers left running after SIGTERM");
	tu_tmux_kill();
}
END_TEST

static void sweep(void)
{
	tu_tmux_kill();
	if (getenv("TMUX_TMPDIR"))
		tu_tmux_sweep(getenv("TMUX_TMPDIR"));
}

int main(void)
{
	top_bin = getenv("IOGRAM_TOP");
	synth_bin = getenv("IOGRAM_SYNTH");
	run_bin = getenv("IOGRAM_RUN");
	iogram_bin = getenv("IOGRAM_BIN");
	if (!top_bin || !synth_bin || !run_bin || !iogram_bin) {
		fprintf(stderr, "check_top: set IOGRAM_TOP, IOGRAM_SYNTH, IOGRAM_RUN, IOGRAM_BIN\n");
		return 1;
	}
	if (tu_system("tmux -V >/dev/null 2>&1") != 0) {
		fprintf(stderr, "check_top: tmux is needed\n");
		return 1;
	}
	tu_tmpdir(dir, sizeof(dir), "iogram-check-top");
	/* under ASan the interposer (itself instrumented) is preloaded into
	 * programs that are not: let the runtime come second */
	tu_asan_option("verify_asan_link_order=0");
	/* every tmux server of this run lives here */
	setenv("TMUX_TMPDIR", dir, 1);
	unsetenv("TMUX");
	snprintf(replay, sizeof(replay), "%s/job.iogr", dir);
	snprintf(truth, sizeof(truth), "%s/truth", dir);
	if (tu_system(tu_fmt("%s --nodes 2 --seconds 30 --seed 7 -o %s --truth %s", synth_bin, replay,
	                     truth)) != 0) {
		fprintf(stderr, "check_top: iogram-synth failed\n");
		return 1;
	}
	Suite *s = suite_create("top");
	TCase *tc = tcase_create("tmux");
	tcase_set_timeout(tc, 120);
	tcase_add_unchecked_fixture(tc, NULL, sweep);
	tcase_add_test(tc, test_cli);
	tcase_add_test(tc, test_replay_80x24);
	tcase_add_test(tc, test_replay_160x48_rows);
	tcase_add_test(tc, test_size_rows_120x40);
	tcase_add_test(tc, test_common_sizes);
	tcase_add_test(tc, test_vt100_ascii);
	tcase_add_test(tc, test_keys);
	tcase_add_test(tc, test_resize);
	tcase_add_test(tc, test_terminal_gone);
	tcase_add_test(tc, test_still_waits);
	tcase_add_test(tc, test_seek_keys_mashed);
	tcase_add_test(tc, test_damaged_replay);
	tcase_add_test(tc, test_live);
	tcase_add_test(tc, test_findings_sliced);
	tcase_add_test(tc, test_layer);
	tcase_add_test(tc, test_demo);
	suite_add_tcase(s, tc);
	int failed = tu_run_srunner(s);
	sweep();
	tu_tmux_reports_left(dir);   /* those of tests that failed without CHECK */
	if (!failed)
		tu_rmdir_all(dir);
	else
		fprintf(stderr, "check_top: files kept in %s\n", dir);
	return failed ? 1 : 0;
}
