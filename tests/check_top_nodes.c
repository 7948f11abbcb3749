/* check_top_nodes.c - iogram-top's nodes and ranks panel (7) in tmux, read
 * back from the screen and compared with iogram-synth's exact truth: each
 * node's p99 of every generated latency, its I/O time share, the straggler
 * order; the worst row marked; sorting by any column (stable under ties);
 * a row per rank; thousands of nodes as the top and bottom rows and a count;
 * the rates panel's lines by name and its latency p99 heatmap; the panel at
 * 80x24, 120x40 and 200x60. Every tmux server lives under this test's own
 * TMUX_TMPDIR and is killed at the end. */
#include <check.h>
#include <dirent.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "iogp_node_table.h"
#include "testutil.h"
#include "testutil_tmux.h"

static const char *top_bin, *synth_bin;
static char dir[256], rec[600], truth[600], big[600];

/* The screen's lines (of the last capture) into lines[], how many; a
 * character beyond ASCII (an arrow, a block) becomes one '#', so bytes
 * are columns. */
static int screen_lines(char lines[][512], int max)
{
	int n = 0;
	for (const char *p = tu_screen; *p && n < max;) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p), k = 0;
		for (size_t i = 0; i < len && k < 511; i++) {
			unsigned char c = (unsigned char)p[i];
			if (c >= 0x80 && (c & 0xc0) == 0x80)
				continue;   /* a continuation byte */
			lines[n][k++] = c >= 0x80 ? '#' : (char)c;
		}
		lines[n++][k] = '\0';
		p = e ? e + 1 : p + len;
	}
	return n;
}

/* ---- the table as the screen shows it ---- */

typedef struct shown {
	int n;
	char name[64][64];
	int worst[64];            /* the line starts with "! " */
	double v[64][IOGP_NT_NCOLS];
	int col[IOGP_NT_NCOLS];   /* 1: the column is on screen */
	long gap[64];             /* "... N more ..." before row i (0: none) */
	long gaps;                /* rows hidden in all */
} shown;

/* "52.1us" "1.47ms" "850ns" "2.31x" "8.1%" "38.8M" "149" -> a number (ns,
 * fraction, bytes, count) */
static double parse_cell(const char *t)
{
	char *end;
	double v = strtod(t, &end);
	if (end == t)
		return NAN;
	if (!strcmp(end, "ns") || !*end || !strcmp(end, "x"))
		return v;
	if (!strcmp(end, "us"))
		return v * 1e3;
	if (!strcmp(end, "ms"))
		return v * 1e6;
	if (!strcmp(end, "s"))
		return v * 1e9;
	if (!strcmp(end, "%"))
		return v / 100;
	if (!strcmp(end, "K"))
		return v * 1024;
	if (!strcmp(end, "M"))
		return v * 1048576;
	if (!strcmp(end, "G"))
		return v * 1073741824.0;
	if (!strcmp(end, "k"))
		return v * 1e3;
	return NAN;
}

/* The table under the header line holding "rd B/s" (or whatever columns
 * fit): each column's cells end where its title ends. */
static void read_table(shown *t)
{
	char lines[128][512];
	int n = screen_lines(lines, 128), h = -1;
	memset(t, 0, sizeof(*t));
	for (int i = 0; i < n && h < 0; i++)
		if (strstr(lines[i], "p99") && (!strncmp(lines[i], "  node", 6) || !strncmp(lines[i], "  process", 9)))
			h = i;
	TU_SCREEN_CHECK(h >= 0, "no table header");
	int end[IOGP_NT_NCOLS];
	for (int c = 1; c < IOGP_NT_NCOLS; c++) {
		const char *title = iogp_nt_col_title(c, IOGP_UNITS_CELL);
		const char *p = strstr(lines[h], title);
		/* "I/O s" and "I/O%" share a prefix: the whole title, then a space or the end */
		while (p && p[strlen(title)] && p[strlen(title)] != ' ')
			p = strstr(p + 1, title);
		t->col[c] = p != NULL;
		end[c] = p ? (int)(p - lines[h]) + (int)strlen(title) : 0;
	}
	for (int i = h + 1; i < n && t->n < 64; i++) {
		const char *l = lines[i];
		if (strlen(l) < 3 || !strncmp(l, "stragglers", 10) || (l[0] == ' ' && l[2] == ' ') || strlen(l) < 3)
			break;
		if (!strncmp(l + 2, "... ", 4)) {
			long k = strtol(l + 6, NULL, 10);
			/* thousands separators: "4,991" */
			const char *q = l + 6;
			k = 0;
			while ((*q >= '0' && *q <= '9') || *q == ',') {
				if (*q != ',')
					k = k * 10 + (*q - '0');
				q++;
			}
			t->gap[t->n] = k;
			t->gaps += k;
			continue;
		}
		if (l[0] != ' ' && l[0] != '!' && l[0] != '>')
			break;
		t->worst[t->n] = l[0] == '!';
		/* the name: from column 2 to the first double space */
		const char *e = strstr(l + 2, "  ");
		snprintf(t->name[t->n], sizeof(t->name[0]), "%.*s", e ? (int)(e - l - 2) : 60, l + 2);
		for (int c = 1; c < IOGP_NT_NCOLS; c++) {
			t->v[t->n][c] = NAN;
			if (!t->col[c] || end[c] > (int)strlen(l))
				continue;
			int b = end[c];
			while (b > 0 && l[b - 1] != ' ')
				b--;
			char cell[32];
			snprintf(cell, sizeof(cell), "%.*s", end[c] - b, l + b);
			t->v[t->n][c] = parse_cell(cell);
		}
		t->n++;
	}
}

static int row_of(const shown *t, const char *name)
{
	for (int i = 0; i < t->n; i++)
		if (!strcmp(t->name[i], name))
			return i;
	return -1;
}

/* The straggler section's names, top down. */
static int read_stragglers(char names[][64], int max)
{
	char lines[128][512];
	int n = screen_lines(lines, 128), k = 0, in = 0;
	for (int i = 0; i < n && k < max; i++) {
		const char *l = lines[i];
		const char *s = strstr(l, "stragglers:");
		if (s) {
			in = (int)(s - l) + 2;   /* beside the table: its own columns */
			continue;
		}
		if (!in || (int)strlen(l) <= in)
			continue;
		const char *p = s ? s : l + in - 2;
		if (p[2] == ' ' || !strncmp(p + 2, "... ", 4))
			continue;
		/* the name ends before the I/O time's column */
		const char *e = strstr(p + 2, "  ");
		if (e)
			snprintf(names[k++], 64, "%.*s", (int)(e - p - 2), p + 2);
	}
	return k;
}

/* ---- truth ---- */

typedef struct node_truth {
	char node[32];
	uint64_t requests, p50, p99;
	double io_ns, span_ns, share;
} node_truth;

static int read_nodes(const char *tdir, node_truth *t, int max)
{
	FILE *f = fopen(tu_fmt("%s/nodes.csv", tdir), "r");
	ck_assert_ptr_nonnull(f);
	char line[512];
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
	int n = 0;
	while (n < max && fscanf(f, "%31[^,],%" SCNu64 ",%" SCNu64 ",%" SCNu64 ",%lf,%lf,%lf\n", t[n].node,
	                         &t[n].requests, &t[n].p50, &t[n].p99, &t[n].io_ns, &t[n].span_ns,
	                         &t[n].share) == 7)
		n++;
	fclose(f);
	return n;
}

/* Does a line with text carry SGR code (31 red, 7 reverse...) before it? */
static int line_sgr(const char *text, int code)
{
	tu_tmux_capture(1);
	const char *p = strstr(tu_screen, text), *a = p;
	if (!p)
		return 0;
	while (a > tu_screen && a[-1] != '\n')
		a--;
	for (const char *q = a; q < p; q++) {
		if (q[0] != '\033' || q[1] != '[')
			continue;
		for (const char *v = q + 2; *v && *v != 'm'; v++) {
			long x = strtol(v, (char **)&v, 10);
			if (x == code)
				return 1;
			if (*v == 'm')
				break;
		}
	}
	return 0;
}

static void open_at_end(int w, int h, const char *file, const char *env)
{
	tu_tmux_start(dir, w, h, env, tu_fmt("%s --replay %s", top_bin, file));
	TU_EXPECT("REPLAY", 5);
	tu_tmux_keys("G");
	TU_EXPECT("END", 10);
}

/* ---- tests ---- */

/* 120x40, 7 zoomed: every node's numbers against the truth. */
START_TEST(test_truth_120x40)
{
	node_truth tr[8];
	int nt = read_nodes(truth, tr, 8);
	ck_assert_int_eq(nt, 5);
	open_at_end(120, 40, rec, "TERM=xterm-256color LANG=C.UTF-8");
	tu_tmux_keys("7");
	TU_EXPECT("7 nodes and ranks", 5);
	TU_EXPECT("nodes by name asc, since start", 5);
	shown t;
	read_table(&t);
	TU_SCREEN_CHECK(t.n == 5 && !t.gaps, "%d rows, %ld hidden", t.n, t.gaps);
	int worst = 0;
	for (int i = 0; i < nt; i++) {
		int r = row_of(&t, tr[i].node);
		TU_SCREEN_CHECK(r >= 0, "no row %s", tr[i].node);
		/* in name order, as sorted */
		TU_SCREEN_CHECK(r == i, "%s on line %d", tr[i].node, r);
		/* bucket midpoints within 3.1%, three digits on screen */
		TU_SCREEN_CHECK(fabs(t.v[r][IOGP_NT_P99] - (double)tr[i].p99) <= 0.037 * (double)tr[i].p99,
		      "%s p99 %.0f vs exact %" PRIu64, tr[i].node, t.v[r][IOGP_NT_P99], tr[i].p99);
		TU_SCREEN_CHECK(fabs(t.v[r][IOGP_NT_P50] - (double)tr[i].p50) <= 0.037 * (double)tr[i].p50,
		      "%s p50 %.0f vs exact %" PRIu64, tr[i].node, t.v[r][IOGP_NT_P50], tr[i].p50);
		TU_SCREEN_CHECK(fabs(t.v[r][IOGP_NT_SHARE] - tr[i].share) <= 0.032 * tr[i].share + 0.0005,
		      "%s I/O share %.4f vs %.4f", tr[i].node, t.v[r][IOGP_NT_SHARE], tr[i].share);
		TU_SCREEN_CHECK(t.v[r][IOGP_NT_QD99] == 8, "%s qd99", tr[i].node);
		if (tr[i].share > tr[worst].share)
			worst = i;
	}
	/* the worst share marked, and only it, in red */
	for (int i = 0; i < t.n; i++)
		TU_SCREEN_CHECK(t.worst[i] == !strcmp(t.name[i], tr[worst].node), "line %d (%s) marked %d", i, t.name[i],
		      t.worst[i]);
	TU_SCREEN_CHECK(line_sgr(tu_fmt("! %s", tr[worst].node), 31), "the worst row is not red");
	TU_SCREEN_CHECK(!line_sgr("  node001", 31), "another row is red");
	/* stragglers by I/O time, as the truth orders them */
	node_truth by[8];
	memcpy(by, tr, sizeof(by));
	for (int i = 1; i < nt; i++)
		for (int k = i; k > 0 && by[k - 1].io_ns < by[k].io_ns; k--) {
			node_truth x = by[k];
			by[k] = by[k - 1];
			by[k - 1] = x;
		}
	tu_tmux_capture(0);
	char sn[16][64];
	int ns = read_stragglers(sn, 16);
	TU_SCREEN_CHECK(ns == 5, "%d stragglers", ns);
	for (int i = 0; i < ns; i++)
		TU_SCREEN_CHECK(!strcmp(sn[i], by[i].node), "straggler %d: %s, truth %s", i, sn[i], by[i].node);
	char ratio[32];
	snprintf(ratio, sizeof(ratio), "(%.2fx the median)", by[0].io_ns / by[2].io_ns);
	TU_EXPECT(tu_fmt("slowest %s", by[0].node), 2);
	/* the ratio within the midpoints' error */
	const char *p = strstr(tu_screen, "x the median)");
	TU_SCREEN_CHECK(p, "no ratio");
	while (p > tu_screen && p[-1] != '(')
		p--;
	double got = strtod(p, NULL), want = by[0].io_ns / by[2].io_ns;
	TU_SCREEN_CHECK(fabs(got - want) <= 0.07 * want, "ratio %.2f vs %.2f", got, want);
	/* the rows stay where they are: a second later, the same screen */
	char before[65536];
	snprintf(before, sizeof(before), "%s", tu_tmux_capture(0));
	tu_sleep_ms(1500);
	TU_SCREEN_CHECK(!strcmp(before, tu_tmux_capture(0)), "the table moved at the end of a replay");
	tu_tmux_keys("q");
	TU_EXPECT("IOGTOP-EXIT=0", 5);
	tu_tmux_kill();
}
END_TEST

/* Any column sorts; ties go by name whatever the direction. */
START_TEST(test_sort)
{
	node_truth tr[8];
	ck_assert_int_eq(read_nodes(truth, tr, 8), 5);
	open_at_end(120, 40, rec, "TERM=xterm LANG=C NO_COLOR=1");
	tu_tmux_keys("7");
	TU_EXPECT("nodes by name asc", 5);
	/* name -> rd B/s -> wr B/s -> rd op/s -> wr op/s -> p50 -> p99 */
	for (int i = 0; i < 6; i++)
		tu_tmux_keys("o");
	TU_EXPECT("nodes by p99 desc", 5);
	shown t;
	read_table(&t);
	TU_SCREEN_CHECK(t.n == 5, "%d rows", t.n);
	node_truth by[8];
	memcpy(by, tr, sizeof(by));
	for (int i = 1; i < 5; i++)
		for (int k = i; k > 0 && by[k - 1].p99 < by[k].p99; k--) {
			node_truth x = by[k];
			by[k] = by[k - 1];
			by[k - 1] = x;
		}
	for (int i = 0; i < 5; i++)
		TU_SCREEN_CHECK(!strcmp(t.name[i], by[i].node), "p99 line %d: %s, truth %s", i, t.name[i], by[i].node);
	for (int i = 1; i < 5; i++)
		TU_SCREEN_CHECK(t.v[i - 1][IOGP_NT_P99] >= t.v[i][IOGP_NT_P99], "not descending at %d", i);
	tu_tmux_keys("O");
	TU_EXPECT("nodes by p99 asc", 5);
	read_table(&t);
	for (int i = 0; i < 5; i++)
		TU_SCREEN_CHECK(!strcmp(t.name[i], by[4 - i].node), "p99 asc line %d: %s", i, t.name[i]);
	/* p99 -> I/O% -> qd99: every node 8, so by name, both ways */
	tu_tmux_keys("o");
	tu_tmux_keys("o");
	TU_EXPECT("nodes by qd99 desc", 5);
	for (int dir = 0; dir < 2; dir++) {
		if (dir) {
			tu_tmux_keys("O");
			TU_EXPECT("nodes by qd99 asc", 5);
		}
		read_table(&t);
		TU_SCREEN_CHECK(t.n == 5, "%d rows", t.n);
		for (int i = 0; i < 5; i++)
			TU_SCREEN_CHECK(!strcmp(t.name[i], tu_fmt("node%03d", i + 1)) && t.v[i][IOGP_NT_QD99] == 8,
			      "qd99 tie line %d: %s", i, t.name[i]);
	}
	/* the worst stays marked whatever the order (mono: reverse video) */
	TU_SCREEN_CHECK(line_sgr("! node003", 7), "the worst row is not in reverse video without colour");
	tu_tmux_keys("q");
	TU_EXPECT("IOGTOP-EXIT=0", 5);
	tu_tmux_kill();
}
END_TEST

/* t: a row per rank; a node selected: its ranks. */
START_TEST(test_ranks)
{
	open_at_end(120, 40, rec, "TERM=xterm LANG=C");
	tu_tmux_keys("7");
	TU_EXPECT("nodes by name", 5);
	tu_tmux_keys("t");
	TU_EXPECT("ranks by name asc", 5);
	shown t;
	read_table(&t);
	TU_SCREEN_CHECK(t.n == 10, "%d rank rows", t.n);
	FILE *f = fopen(tu_fmt("%s/sources.csv", truth), "r");
	ck_assert_ptr_nonnull(f);
	char line[512];
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
	int rank, k = 0;
	char node[32];
	double span, rl, wl, ml, io;
	while (fscanf(f, "%d,%31[^,],%lf,%lf,%lf,%lf,%lf\n", &rank, node, &span, &rl, &wl, &ml, &io) == 7) {
		int r = row_of(&t, tu_fmt("rank %d (%s)", rank, node));
		TU_SCREEN_CHECK(r == rank, "rank %d on line %d", rank, r);   /* rank 2 before rank 10: numbers */
		TU_SCREEN_CHECK(fabs(t.v[r][IOGP_NT_SHARE] - io / span) <= 0.032 * io / span + 0.0005, "rank %d share", rank);
		k++;
	}
	fclose(f);
	ck_assert_int_eq(k, 10);
	/* node003's ranks */
	tu_tmux_keys("n");
	tu_tmux_keys("n");
	tu_tmux_keys("n");
	TU_EXPECT("  rank 5  ", 5);
	TU_EXPECT("ranks by name", 5);
	read_table(&t);
	TU_SCREEN_CHECK(t.n == 2 && !strcmp(t.name[0], "rank 4") && !strcmp(t.name[1], "rank 5"), "node003: %d rows",
	      t.n);
	tu_tmux_keys("q");
	TU_EXPECT("IOGTOP-EXIT=0", 5);
	tu_tmux_kill();
}
END_TEST

/* Thousands of nodes at 80x24: the top and bottom rows, a count of the
 * rest, and the worst row in view. */
START_TEST(test_thousands_80x24)
{
	open_at_end(80, 24, big, "TERM=xterm LANG=C");
	tu_tmux_keys("7");
	TU_EXPECT("7 nodes and ranks", 10);
	TU_EXPECT("of 3000 nodes", 10);
	shown t;
	read_table(&t);
	TU_SCREEN_CHECK(t.n >= 6 && t.gaps > 0, "%d rows, %ld hidden", t.n, t.gaps);
	TU_SCREEN_CHECK(t.n + t.gaps == 3000, "%d rows + %ld hidden != 3000", t.n, t.gaps);
	/* sorted by name: node001 on top, node3000 at the bottom */
	TU_SCREEN_CHECK(!strcmp(t.name[0], "node001") && !strcmp(t.name[t.n - 1], "node3000"), "%s ... %s",
	      t.name[0], t.name[t.n - 1]);
	int worst = 0;
	for (int i = 0; i < t.n; i++)
		worst += t.worst[i];
	TU_SCREEN_CHECK(worst == 1, "%d rows marked", worst);
	/* the stragglers say how many more */
	TU_EXPECT("more nodes; the fastest", 5);
	/* by p99 the other way: still 3000 */
	for (int i = 0; i < 6; i++)
		tu_tmux_keys("o");
	TU_EXPECT("by p99 desc", 5);
	read_table(&t);
	TU_SCREEN_CHECK(t.n + t.gaps == 3000, "by p99: %d + %ld", t.n, t.gaps);
	for (int i = 1; i < t.n; i++)
		TU_SCREEN_CHECK(t.gap[i] || t.v[i - 1][IOGP_NT_P99] >= t.v[i][IOGP_NT_P99], "p99 not descending at %d", i);
	tu_tmux_keys("q");
	TU_EXPECT("IOGTOP-EXIT=0", 10);
	tu_tmux_kill();
}
END_TEST

/* Sizes: zoomed at 80x24, on the dashboard at 200x60; Tab reaches only
 * panels on screen. */
START_TEST(test_sizes)
{
	open_at_end(80, 24, rec, "TERM=xterm LANG=C");
	TU_SCREEN_CHECK(!strstr(tu_tmux_capture(0), "7 nodes and ranks"), "80x24 dashboard has the nodes panel");
	tu_tmux_keys("7");
	TU_EXPECT("7 nodes and ranks", 5);
	shown t;
	read_table(&t);
	TU_SCREEN_CHECK(t.n == 5 && t.col[IOGP_NT_P99] && t.col[IOGP_NT_SHARE], "80x24: %d rows", t.n);
	tu_tmux_keys("7");
	tu_tmux_kill();
	open_at_end(200, 60, rec, "TERM=xterm-256color LANG=C.UTF-8");
	TU_EXPECT("7 nodes and ranks", 5);
	TU_EXPECT("stragglers:", 5);
	read_table(&t);
	TU_SCREEN_CHECK(t.n == 5, "200x60: %d rows", t.n);
	for (int c = 1; c < IOGP_NT_NCOLS; c++)
		TU_SCREEN_CHECK(t.col[c], "200x60: column %s missing", iogp_nt_col_title(c, IOGP_UNITS_CELL));
	char sn[16][64];
	TU_SCREEN_CHECK(read_stragglers(sn, 16) == 5 && !strcmp(sn[0], "node003"), "200x60 stragglers");
	tu_tmux_kill();
	/* 120x40: the panel is not on the dashboard; Tab passes it by */
	open_at_end(120, 40, rec, "TERM=xterm LANG=C");
	for (int i = 0; i < 12; i++) {
		tu_tmux_keys("Tab");
		tu_tmux_keys("z");   /* zoom what has the focus */
		tu_sleep_ms(150);
		TU_SCREEN_CHECK(!strstr(tu_tmux_capture(0), "7 nodes and ranks"), "Tab %d focused panel 7, not on screen", i);
		tu_tmux_keys("z");
	}
	tu_tmux_keys("q");
	TU_EXPECT("IOGTOP-EXIT=0", 5);
	tu_tmux_kill();
}
END_TEST

/* The rates panel: lines by name (m: lines), the p99 heatmap (m m m). */
START_TEST(test_rates_p99)
{
	open_at_end(120, 40, rec, "TERM=xterm-256color LANG=C.UTF-8");
	tu_tmux_keys("5");
	TU_EXPECT("5 node rates", 5);
	tu_tmux_keys("m");
	TU_EXPECT("node rates: lines", 5);
	char lines[64][512];
	tu_tmux_capture(0);
	int n = screen_lines(lines, 64), k = 0;
	for (int i = 0; i < n; i++)
		if (!strncmp(lines[i], "node00", 6)) {
			TU_SCREEN_CHECK(!strncmp(lines[i], tu_fmt("node%03d", k + 1), 7), "line %d: %.10s", k, lines[i]);
			k++;
		}
	TU_SCREEN_CHECK(k == 5, "%d node lines", k);
	tu_tmux_keys("m");
	TU_EXPECT("heatmap of bytes/s", 5);
	tu_tmux_keys("m");
	TU_EXPECT("read+write latency p99", 5);
	TU_EXPECT("2s slots", 5);
	tu_tmux_capture(0);
	n = screen_lines(lines, 64);
	k = 0;
	for (int i = 0; i < n; i++)
		if (!strncmp(lines[i], "node00", 6)) {
			/* the right column: the node's latest p99 */
			const char *e = lines[i] + strlen(lines[i]);
			while (e > lines[i] && e[-1] == ' ')
				e--;
			const char *b = e;
			while (b > lines[i] && b[-1] != ' ')
				b--;
			char cell[32];
			snprintf(cell, sizeof(cell), "%.*s", (int)(e - b), b);
			double v = parse_cell(cell);
			TU_SCREEN_CHECK(v > 10000 && v < 1e9, "%.7s: p99 '%s'", lines[i], cell);
			k++;
		}
	TU_SCREEN_CHECK(k == 5, "%d heatmap rows", k);
	tu_tmux_keys("m");
	TU_EXPECT("node rates: auto", 5);
	tu_tmux_keys("q");
	TU_EXPECT("IOGTOP-EXIT=0", 5);
	tu_tmux_kill();
}
END_TEST

static void sweep(void)
{
	tu_tmux_kill();
	tu_tmux_sweep(dir);
}

int main(void)
{
	top_bin = getenv("IOGRAM_TOP");
	synth_bin = getenv("IOGRAM_SYNTH");
	if (!top_bin || !synth_bin) {
		fprintf(stderr, "check_top_nodes: set IOGRAM_TOP, IOGRAM_SYNTH\n");
		return 1;
	}
	if (tu_tmux_suite_begin("top_nodes", dir, sizeof(dir)) < 0)
		return 1;
	snprintf(rec, sizeof(rec), "%s/job.iogr", dir);
	snprintf(truth, sizeof(truth), "%s/truth", dir);
	snprintf(big, sizeof(big), "%s/big.iogr", dir);
	if (tu_system(tu_fmt("%s --nodes 5 --sources-per-node 2 --seconds 60 --skew 0.5 --slow-node 3:4 "
	                     "-o %s --truth %s", synth_bin, rec, truth)) != 0 ||
	    tu_system(tu_fmt("%s --nodes 3000 --seconds 5 --skew 0.001 -o %s", synth_bin, big)) != 0) {
		fprintf(stderr, "check_top_nodes: iogram-synth failed\n");
		return 1;
	}
	Suite *s = suite_create("top_nodes");
	TCase *tc = tcase_create("tmux");
	tcase_set_timeout(tc, 120);
	tcase_add_unchecked_fixture(tc, NULL, sweep);
	tcase_add_test(tc, test_truth_120x40);
	tcase_add_test(tc, test_sort);
	tcase_add_test(tc, test_ranks);
	tcase_add_test(tc, test_thousands_80x24);
	tcase_add_test(tc, test_sizes);
	tcase_add_test(tc, test_rates_p99);
	suite_add_tcase(s, tc);
	int failed = tu_run_srunner(s);
	tu_tmux_kill();
	return tu_tmux_suite_end("top_nodes", dir, failed);
}
