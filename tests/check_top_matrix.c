/* check_top_matrix.c - iogram-top's MPI traffic panel (M) in tmux, read
 * back from the screen and compared with the truth of the job written by
 * tu_matrix_job: every node x node cell, the rows' and columns' totals in
 * messages and in bytes (v), the ranks of one node (n) with what they sent
 * elsewhere, the message-size histogram's count, the snapshot's
 * matrix.csv, and a recording without MPI. Every tmux server lives under
 * this test's own TMUX_TMPDIR and is killed at the end. */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "iogp_units.h"
#include "testutil.h"
#include "testutil_iogr.h"
#include "testutil_tmux.h"

static const char *top_bin, *synth_bin;
static char dir[256], job[600];


static const char *const nodes[3] = { "mxa", "mxb", "mxc" };

static int node_of(int r)
{
	const char *n = tu_mx_node(r);
	return n[2] - 'a';
}

/* node x node truth: messages (bytes 0) or bytes */
static uint64_t truth(int from, int to, int bytes)
{
	uint64_t v = 0;
	for (int r = 0; r < TU_MX_RANKS; r++)
		for (int d = 0; d < TU_MX_RANKS; d++)
			if (node_of(r) == from && node_of(d) == to)
				v += tu_mx_msgs(r, d) * (bytes ? tu_mx_size(d) : 1);
	return v;
}

/* The screen line that starts with label (then a space). */
static const char *row_of(const char *label)
{
	static char line[1024];
	char key[64];
	snprintf(key, sizeof(key), "\n%s ", label);
	const char *p = strstr(tu_screen, key);
	if (!p)
		return NULL;
	p++;
	const char *e = strchr(p, '\n');
	snprintf(line, sizeof(line), "%.*s", (int)(e ? e - p : (long)strlen(p)), p);
	return line;
}

/* The row's cells as text, split at blanks, after the label (heat glyphs,
 * which are not ASCII, dropped). */
static int cells(const char *line, char out[][32], int max)
{
	int n = 0;
	const char *p = strchr(line, ' ');
	while (p && *p && n < max) {
		while (*p == ' ' || (unsigned char)*p >= 0x80)
			p++;
		if (!*p)
			break;
		int k = 0;
		while (*p && *p != ' ' && (unsigned char)*p < 0x80 && k < 31)
			out[n][k++] = *p++;
		out[n][k] = '\0';
		while (*p && (unsigned char)*p >= 0x80)
			p++;
		n++;
	}
	return n;
}

static void start(void)
{
	tu_tmux_start(dir, 110, 40, "TERM=xterm-256color LANG=C.UTF-8", tu_fmt("%s --replay %s", top_bin, job));
	TU_EXPECT("END", 10);
	tu_tmux_keys("M");
	TU_EXPECT("MPI traffic: node x node, messages since start", 5);
}

static void teardown(void)
{
	tu_tmux_kill();
}

START_TEST(test_nodes_messages_and_bytes)
{
	start();
	for (int b = 0; b < 2; b++) {
		for (int i = 0; i < 3; i++) {
			const char *l = row_of(nodes[i]);
			TU_SCREEN_CHECK(l != NULL, "no row for %s", nodes[i]);
			char c[8][32];
			int n = cells(l, c, 8);
			TU_SCREEN_CHECK(n == 4, "%s: %d cells in '%s'", nodes[i], n, l);
			uint64_t sent = 0;
			for (int j = 0; j < 3; j++) {
				uint64_t t = truth(i, j, b);
				char want[32];
				if (!t)
					snprintf(want, sizeof(want), "-");
				else if (b)
					iogp_fmt_value(want, sizeof(want), "bytes", (double)t, IOGP_UNITS_CELL);
				else
					snprintf(want, sizeof(want), "%" PRIu64, t);
				TU_SCREEN_CHECK(!strcmp(c[j], want), "%s -> %s: '%s', want '%s'", nodes[i], nodes[j], c[j],
				                want);
				sent += t;
			}
			if (!b)
				TU_SCREEN_CHECK(strtoull(c[3], NULL, 10) == sent, "%s sent %s, want %" PRIu64, nodes[i], c[3],
				                sent);
		}
		/* what each node received, and everything */
		const char *l = row_of("received");
		TU_SCREEN_CHECK(l != NULL, "no received row");
		char c[8][32];
		TU_SCREEN_CHECK(cells(l, c, 8) == 4, "received: %s", l);
		uint64_t all = 0;
		for (int j = 0; j < 3; j++) {
			uint64_t t = truth(0, j, b) + truth(1, j, b) + truth(2, j, b);
			all += t;
			if (!b)
				TU_SCREEN_CHECK(strtoull(c[j], NULL, 10) == t, "%s received %s, want %" PRIu64, nodes[j], c[j], t);
		}
		if (!b) {
			TU_SCREEN_CHECK(strtoull(c[3], NULL, 10) == all, "total %s, want %" PRIu64, c[3], all);
			/* the message sizes below: every message */
			TU_EXPECT(tu_fmt("all n=%" PRIu64 " ", all), 2);
			tu_tmux_keys("v");
			TU_EXPECT("MPI traffic: node x node, bytes since start", 5);
		}
	}
}
END_TEST

/* A node's ranks: rank x rank, and what they sent to ranks elsewhere. */
START_TEST(test_ranks_of_a_node)
{
	start();
	for (int k = 0; k < 4 && !strstr(tu_tmux_capture(0), "ranks of mxb"); k++) {
		tu_tmux_keys("n");
		tu_sleep_ms(400);
	}
	TU_EXPECT("MPI traffic: ranks of mxb, messages since start", 3);
	char c[8][32];
	const char *l = row_of("2");
	TU_SCREEN_CHECK(l && cells(l, c, 8) == 3, "rank 2's row");
	TU_SCREEN_CHECK(!strcmp(c[0], "-") && strtoull(c[1], NULL, 10) == tu_mx_msgs(2, 3), "rank 2 -> 3: %s", l);
	l = row_of("3");
	TU_SCREEN_CHECK(l && cells(l, c, 8) == 3, "rank 3's row");
	TU_SCREEN_CHECK(strtoull(c[0], NULL, 10) == tu_mx_msgs(3, 2) && !strcmp(c[1], "-"), "rank 3 -> 2: %s", l);
	uint64_t elsewhere = 0;
	for (int r = 2; r <= 3; r++)
		for (int d = 0; d < TU_MX_RANKS; d++)
			if (d != 2 && d != 3)
				elsewhere += tu_mx_msgs(r, d);
	TU_EXPECT(tu_fmt("to ranks not shown: %" PRIu64, elsewhere), 2);
	/* a snapshot writes the matrix as shown */
	tu_tmux_keys("x");
	TU_EXPECT("matrix.csv", 5);
	const char *csv = tu_snap_file(dir, "matrix.csv", 5);
	ck_assert_ptr_nonnull(csv);
	ck_assert_msg(!strncmp(csv, "from_rank,to_rank,messages_count,bytes\n", 39), "%s", csv);
	ck_assert_msg(strstr(csv, tu_fmt("\n2,3,%" PRIu64 ",%" PRIu64 "\n", tu_mx_msgs(2, 3),
	                                 tu_mx_msgs(2, 3) * tu_mx_size(3))), "%s", csv);
}
END_TEST

START_TEST(test_no_mpi)
{
	const char *none = tu_fmt("%s/none.iogr", dir);
	ck_assert_int_eq(tu_system(tu_fmt("%s --nodes 2 --seconds 5 -o %s >/dev/null", synth_bin, none)), 0);
	tu_tmux_start(dir, 100, 30, "TERM=xterm-256color LANG=C.UTF-8", tu_fmt("%s --replay %s", top_bin, none));
	TU_EXPECT("END", 10);
	tu_tmux_keys("M");
	TU_EXPECT("no MPI traffic: run the job with iogram-run --mpi", 5);
}
END_TEST

int main(void)
{
	top_bin = getenv("IOGRAM_TOP");
	synth_bin = getenv("IOGRAM_SYNTH");
	if (!top_bin || !synth_bin) {
		fprintf(stderr, "check_top_matrix: set IOGRAM_TOP, IOGRAM_SYNTH\n");
		return 1;
	}
	if (tu_tmux_suite_begin("top_matrix", dir, sizeof(dir)) < 0)
		return 1;
	snprintf(job, sizeof(job), "%s/job.iogr", dir);
	if (tu_matrix_job(job) < 0) {
		fprintf(stderr, "check_top_matrix: cannot write %s\n", job);
		return 1;
	}
	Suite *s = suite_create("top_matrix");
	TCase *tc = tcase_create("tmux");
	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, test_nodes_messages_and_bytes);
	tcase_add_test(tc, test_ranks_of_a_node);
	tcase_add_test(tc, test_no_mpi);
	suite_add_tcase(s, tc);
	return tu_tmux_suite_end("top_matrix", dir, tu_run_srunner(s));
}
