/* check_top_probe.c - iogram-top's slowdown panel (0) in tmux, read back
 * from the screen: probes with known factors (prog_fake_probe) on three
 * nodes, one of them 8x slower on stat - the factors, the node table, the
 * nodes that differ, the worst probe drawn unless a node is selected, its
 * line above 1x only where it was slow, the header's hint and the CSV of a
 * snapshot; nodes that agree; no probes; and a real `iogram probe`
 * streaming live. Every tmux server lives under this test's own
 * TMUX_TMPDIR and is killed at the end. */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"
#include "testutil_tmux.h"

static const char *top_bin, *fake_bin, *iogram_bin, *synth_bin;
static char dir[256];


static void teardown(void)
{
	tu_tmux_kill();
}

/* Three nodes; pc's stat 8x from report 3 on, pa's write 4x in reports 5-9. */
static const char *job(void)
{
	static char path[600];
	static const tu_probe_spec p[3] = {
		{ "pa", { "read=1000", "write=1000@5-9:4000", "create=1100", "stat=1200", "smallread=900",
		          "delete=1000", NULL } },
		{ "pb", { "read=1050", "write=1000", "create=1000", "stat=1200", "smallread=950", "delete=1000",
		          NULL } },
		{ "pc", { "read=1000", "write=1000", "create=1000", "stat=1200@3-15:8000", "smallread=1000",
		          "delete=1000", NULL } },
	};
	snprintf(path, sizeof(path), "%s/job.iogr", dir);
	if (access(path, R_OK) != 0)
		ck_assert_int_eq(tu_fake_probes(dir, path, p, 3, 16, 30), 0);
	return path;
}

/* The screen line holding text, copied into line; 0 when none. */
static int line_with(const char *text, char *line, size_t len)
{
	const char *p = strstr(tu_screen, text);
	if (!p)
		return 0;
	const char *a = p, *b = strchr(p, '\n');
	while (a > tu_screen && a[-1] != '\n')
		a--;
	size_t n = b ? (size_t)(b - a) : strlen(a);
	snprintf(line, len, "%.*s", (int)n, a);
	return 1;
}

/* Braille dots in a line: where a factor's line runs. */
static int has_braille(const char *line)
{
	/* U+2801..U+28FF in UTF-8: E2 A0 81 .. E2 A3 BF */
	for (const unsigned char *p = (const unsigned char *)line; p[0]; p++)
		if (p[0] == 0xe2 && p[1] >= 0xa0 && p[1] <= 0xa3 && !(p[1] == 0xa0 && p[2] == 0x80))
			return 1;
	return 0;
}

/* The rows of the band of op: its first line (name, factor, top of the
 * axis) and the line below it. */
static void band(const char *op, char *top, char *next, size_t len)
{
	char key[48];
	snprintf(key, sizeof(key), "\n%s ", op);
	const char *p = strstr(tu_screen, key);
	TU_SCREEN_CHECK(p != NULL, "no band for %s", op);
	p++;
	const char *e = strchr(p, '\n');
	snprintf(top, len, "%.*s", (int)(e - p), p);
	const char *f = strchr(e + 1, '\n');
	snprintf(next, len, "%.*s", (int)(f - e - 1), e + 1);
}

START_TEST(test_three_nodes)
{
	tu_tmux_start(dir, 120, 44, "TERM=xterm-256color LANG=C.UTF-8", tu_fmt("%s --replay %s", top_bin, job()));
	TU_EXPECT("END", 10);
	/* the header's hint: the largest factor and the key */
	TU_EXPECT("slowdown 8.00x (0)", 5);
	tu_tmux_keys("0");
	TU_EXPECT("slowdown: median / median of 14400 s", 5);
	/* the worst probe is drawn, and said to be */
	TU_EXPECT("worst now: pc /fake/scratch (fakefs)", 2);
	char line[1024], top[1024], next[1024];
	TU_SCREEN_CHECK(line_with("\npc ", line, sizeof(line)) || line_with("pc  ", line, sizeof(line)),
	                "no table row for pc");
	/* the table: a row per node, in op order, as the specs said */
	TU_SCREEN_CHECK(line_with("read     write", line, sizeof(line)), "no table header");
	TU_SCREEN_CHECK(strstr(line, "create") && strstr(line, "smallread") && strstr(line, "delete"),
	                "header: %s", line);
	TU_SCREEN_CHECK(strstr(tu_screen, "\npa              1.00x     1.00x     1.10x     1.20x     0.90x     1.00x"),
	                "pa's row");
	TU_SCREEN_CHECK(strstr(tu_screen, "\npb              1.05x     1.00x     1.00x     1.20x     0.95x     1.00x"),
	                "pb's row");
	TU_SCREEN_CHECK(strstr(tu_screen, "\npc              1.00x     1.00x     1.00x     8.00x     1.00x     1.00x"),
	                "pc's row");
	/* the nodes differ on stat only, and pc is the odd one */
	TU_EXPECT("stat: nodes differ: pc 8.00x, median 1.20x (3 nodes)", 2);
	TU_SCREEN_CHECK(!strstr(tu_screen, "read: nodes differ") && !strstr(tu_screen, "write: nodes differ"),
	                "only stat differs now");
	/* pc's stat band: 8.00x, 8 ms against 1 ms, and a line above 1x */
	band("stat", top, next, sizeof(top));
	TU_SCREEN_CHECK(strstr(top, "8.00x") != NULL, "stat band: %s", top);
	TU_SCREEN_CHECK(has_braille(top), "stat's line does not reach the top row: %s", top);
	TU_SCREEN_CHECK(strstr(next, "8ms") != NULL, "stat time: %s", next);
	/* pc's read never moved: nothing above 1x */
	band("read", top, next, sizeof(top));
	TU_SCREEN_CHECK(strstr(top, "1.00x") != NULL && !has_braille(top), "read band: %s", top);
	/* selecting node pa draws pa's probe: its write went to 4x and back */
	for (int k = 0; k < 4 && !strstr(tu_tmux_capture(0), "node pa |"); k++) {
		tu_tmux_keys("n");
		tu_tmux_wait("node p", 1, 2);
		tu_sleep_ms(300);
	}
	TU_EXPECT("node pa |", 2);
	TU_EXPECT(" pa /fake/scratch (fakefs)", 3);
	TU_SCREEN_CHECK(!strstr(tu_screen, "worst now:"), "a selected node is not the worst");
	band("write", top, next, sizeof(top));
	TU_SCREEN_CHECK(strstr(top, "1.00x") != NULL, "pa's write now: %s", top);
	TU_SCREEN_CHECK(has_braille(top) || has_braille(next), "pa's write line never rose: %s / %s", top, next);
	/* a snapshot writes the panel's CSV: every probe's operations */
	tu_tmux_keys("x");
	TU_EXPECT("snapshot ", 5);
	const char *csv = tu_snap_file(dir, "slowdown.csv", 5);
	ck_assert_ptr_nonnull(csv);
	ck_assert_msg(strstr(csv, "node,dir,fs,op,statistic,expected_by,stat_ns,expected_ns,slowdown\n"), "%s", csv);
	ck_assert_msg(strstr(csv, "pc,/fake/scratch,fakefs,stat,median,median of 14400 s,8000000,1000000,8.000\n"),
	              "%s", csv);
	ck_assert_msg(strstr(csv, "pa,/fake/scratch,fakefs,smallread,median,median of 14400 s,900000,1000000,0.900\n"),
	              "%s", csv);
	int rows = 0;
	for (const char *p = csv; (p = strchr(p, '\n')); p++)
		rows++;
	ck_assert_int_eq(rows, 1 + 3 * 6);
}
END_TEST

/* Nodes that see the same slowdown say so; a recording without probes
 * says how to start one. */
START_TEST(test_agree_and_none)
{
	const char *path = tu_fmt("%s/agree.iogr", dir);
	static const tu_probe_spec p[2] = { { "qa", { "read=3000", "write=1000", NULL } },
		                            { "qb", { "read=3400", "write=1100", NULL } } };
	ck_assert_int_eq(tu_fake_probes(dir, path, p, 2, 6, 30), 0);
	tu_tmux_start(dir, 100, 30, "TERM=xterm-256color LANG=C.UTF-8", tu_fmt("%s --replay %s", top_bin, path));
	TU_EXPECT("END", 10);
	tu_tmux_keys("0");
	TU_EXPECT("all 2 nodes see the same slowdown (within 1.5x)", 5);
	TU_EXPECT("worst now: qb", 2);
	TU_SCREEN_CHECK(!strstr(tu_screen, "differ"), "nodes that agree");
	/* no probes */
	tu_tmux_kill();
	const char *none = tu_fmt("%s/none.iogr", dir);
	ck_assert_int_eq(tu_system(tu_fmt("%s --nodes 2 --seconds 5 -o %s >/dev/null", synth_bin, none)), 0);
	tu_tmux_start(dir, 100, 30, "TERM=xterm-256color LANG=C.UTF-8", tu_fmt("%s --replay %s", top_bin, none));
	TU_EXPECT("END", 10);
	tu_tmux_keys("0");
	TU_EXPECT("no probes: run `iogram probe DIR --endpoint E`", 5);
	TU_SCREEN_CHECK(!strstr(tu_screen, "slowdown 1"), "no hint without probes");
}
END_TEST

/* The real prober, live: six operations with their factors and times. */
START_TEST(test_live_probe)
{
	char ep[64];
	snprintf(ep, sizeof(ep), "%s", tu_ep(tu_free_port()));
	tu_tmux_start(dir, 120, 44, "TERM=xterm-256color LANG=C.UTF-8", tu_fmt("%s --listen %s", top_bin, ep));
	TU_EXPECT("LIVE tcp://127.0.0.1:", 5);
	tu_tmux_keys("0");
	TU_EXPECT("no probes", 3);
	char *pdir = tu_fmt("%s/pdir", dir);
	ck_assert_int_eq(tu_system(tu_fmt("mkdir -p %s", pdir)), 0);
	char *argv[] = { (char *)iogram_bin, "probe", pdir, "--interval", "0.05", "--report", "0.25",
	                 "--count", "60", "--file-size", "8M", "--pool", "8", "--endpoint", ep, "--node",
	                 "probenode", "--quiet", NULL };
	pid_t pid = tu_spawn(argv, NULL, NULL, 0);
	TU_EXPECT("slowdown: median / median of", 10);
	TU_EXPECT("probenode ", 5);
	static const char *const ops[] = { "read", "write", "create", "stat", "smallread", "delete" };
	for (int k = 0; k < 6; k++) {
		char top[1024], next[1024];
		band(ops[k], top, next, sizeof(top));
		TU_SCREEN_CHECK(strstr(top, "x") != NULL, "%s has no factor: %s", ops[k], top);
	}
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}
END_TEST

int main(void)
{
	top_bin = getenv("IOGRAM_TOP");
	fake_bin = getenv("IOGRAM_FAKE_PROBE");
	iogram_bin = getenv("IOGRAM_BIN");
	synth_bin = getenv("IOGRAM_SYNTH");
	if (!top_bin || !fake_bin || !iogram_bin || !synth_bin) {
		fprintf(stderr, "check_top_probe: set IOGRAM_TOP, IOGRAM_FAKE_PROBE, IOGRAM_BIN, IOGRAM_SYNTH\n");
		return 1;
	}
	if (tu_tmux_suite_begin("top_probe", dir, sizeof(dir)) < 0)
		return 1;
	Suite *s = suite_create("top_probe");
	TCase *tc = tcase_create("tmux");
	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, test_three_nodes);
	tcase_add_test(tc, test_agree_and_none);
	tcase_add_test(tc, test_live_probe);
	suite_add_tcase(s, tc);
	return tu_tmux_suite_end("top_probe", dir, tu_run_srunner(s));
}
