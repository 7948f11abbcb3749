/* check_panels.c - the panel catalog, the key/action table and the common
 * sizes table both viewers share: lookups, aliases, unique ids, titles and
 * keys, help for every row; the sizes table's rows, shares and texts. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iogp_actions.h"
#include "iogp_err.h"
#include "iogp_layers.h"
#include "iogp_metrics.h"
#include "iogp_panels.h"
#include "iogp_size_table.h"
#include "testutil.h"

START_TEST(lookups)
{
	ck_assert_int_eq(iogp_panel_find("latency"), IOGP_PANEL_LATENCY);
	ck_assert_int_eq(iogp_panel_find("lat"), IOGP_PANEL_LATENCY);
	ck_assert_int_eq(iogp_panel_find("latencies"), IOGP_PANEL_LATENCY);
	ck_assert_int_eq(iogp_panel_find("qd"), IOGP_PANEL_QD);
	ck_assert_int_eq(iogp_panel_find("queue"), IOGP_PANEL_QD);
	ck_assert_int_eq(iogp_panel_find("queue-depth"), IOGP_PANEL_QD);
	ck_assert_int_eq(iogp_panel_find("header"), IOGP_PANEL_HEADER);
	ck_assert_int_eq(iogp_panel_find("heatmap"), IOGP_PANEL_HEATMAP);
	ck_assert_int_eq(iogp_panel_find("dashboard"), IOGP_PANEL_DASHBOARD);
	ck_assert_int_eq(iogp_panel_find("all"), IOGP_PANEL_DASHBOARD);
	ck_assert_int_eq(iogp_panel_find("nope"), -1);
	ck_assert_int_eq(iogp_panel_find(""), -1);
	ck_assert_int_eq(iogp_panel_find(NULL), -1);
	ck_assert_str_eq(iogp_panel_name(IOGP_PANEL_QD), "qd");
	ck_assert_str_eq(iogp_panel_title(IOGP_PANEL_RATES), "Throughput per node");
	ck_assert_str_eq(iogp_panel_name(-1), "dashboard");
	ck_assert_str_eq(iogp_panel_title(IOGP_PANEL_N), "Dashboard");
	ck_assert_ptr_null(iogp_panel_get(IOGP_PANEL_N));
	ck_assert_ptr_null(iogp_panel_get(-1));
	char b[256];
	iogp_panel_names(b, sizeof(b));
	ck_assert_str_eq(b, "size, qd, latency, access, rates, heatmap, nodes, phases, insights, slowdown, "
	                 "matrix, header, msgsize, dashboard");
	/* snapshot and export file names */
	iogp_panel_file(IOGP_PANEL_SIZE, "read", "csv", b, sizeof(b));
	ck_assert_str_eq(b, "size-read.bytes.csv");
	iogp_panel_file(IOGP_PANEL_QD, "", "csv", b, sizeof(b));
	ck_assert_str_eq(b, "queue_depth.requests.csv");
	iogp_panel_file(IOGP_PANEL_QD, "read", "png", b, sizeof(b));
	ck_assert_str_eq(b, "queue_depth.png");
	iogp_panel_file(IOGP_PANEL_RATES, "write", "csv", b, sizeof(b));
	ck_assert_str_eq(b, "rates-write.csv");
	iogp_panel_file(IOGP_PANEL_ACCESS, NULL, "csv", b, sizeof(b));
	ck_assert_str_eq(b, "access.csv");
	/* digit keys: the terminal has five panels, the window six */
	ck_assert_int_eq(iogp_panel_by_key('3', IOGP_VIEWER_TUI), IOGP_PANEL_LATENCY);
	ck_assert_int_eq(iogp_panel_by_key('6', IOGP_VIEWER_GTK), IOGP_PANEL_HEATMAP);
	ck_assert_int_eq(iogp_panel_by_key('6', IOGP_VIEWER_TUI), -1);
	ck_assert_int_eq(iogp_panel_step(IOGP_PANEL_RATES, 1, IOGP_VIEWER_TUI), IOGP_PANEL_NODES);
	ck_assert_int_eq(iogp_panel_step(IOGP_PANEL_SIZE, -1, IOGP_VIEWER_TUI), IOGP_PANEL_MATRIX);
	ck_assert_int_eq(iogp_panel_by_key('7', IOGP_VIEWER_TUI), IOGP_PANEL_NODES);
	ck_assert_int_eq(iogp_panel_by_key('7', IOGP_VIEWER_GTK), IOGP_PANEL_NODES);
	ck_assert_int_eq(iogp_panel_step(IOGP_PANEL_LATENCY, 1, IOGP_VIEWER_TUI), IOGP_PANEL_ACCESS);
}
END_TEST

START_TEST(catalog)
{
	for (int i = 0; i < IOGP_PANEL_N; i++) {
		const iogp_panel *a = iogp_panel_get(i);
		ck_assert_ptr_nonnull(a);
		ck_assert_int_eq(a->id, i);
		ck_assert_msg(a->name && a->title && a->short_title && a->tooltip && a->stem,
		              "panel %d lacks a name, title, tooltip or stem", i);
		ck_assert_msg(a->tooltip[0] && !strchr(a->tooltip, '\n'), "%s: one-line tooltip", a->name);
		ck_assert_int_eq(iogp_panel_find(a->name), i);
		for (int k = 0; k < IOGP_PANEL_MAX_ALIASES && a->aliases[k]; k++)
			ck_assert_msg(iogp_panel_find(a->aliases[k]) == i, "alias %s of %s", a->aliases[k],
			              a->name);
		/* the status strip, nodes, phases, insights and probes are built from more than one metric */
		ck_assert_msg(a->data == IOGP_DATA_STATUS || a->data == IOGP_DATA_NODES ||
		              a->data == IOGP_DATA_PHASES || a->data == IOGP_DATA_INSIGHTS ||
		              a->data == IOGP_DATA_PROBE || a->data == IOGP_DATA_MATRIX || a->metrics[0],
		              "%s: no metric", a->name);
		for (int k = 0; k < IOGP_PANEL_MAX_METRICS && a->metrics[k]; k++)
			ck_assert_msg(!strncmp(a->metrics[k], "posix.", 6) ||
			              (i == IOGP_PANEL_MSGSIZE && !strcmp(a->metrics[k], "mpi.p2p.size")),
			              "%s: metric %s (the layers map posix.* names)", a->name, a->metrics[k]);
		ck_assert_msg(a->viewers, "%s: no viewer shows it", a->name);
		for (int j = 0; j < i; j++) {
			const iogp_panel *b = iogp_panel_get(j);
			ck_assert_str_ne(a->name, b->name);
			ck_assert_str_ne(a->title, b->title);
			ck_assert_str_ne(a->short_title, b->short_title);
			ck_assert_str_ne(a->stem, b->stem);
			ck_assert_msg(!a->key || a->key != b->key, "%s and %s share key %c", a->name,
			              b->name, a->key);
		}
	}
	/* the terminal's five panels keep their keys */
	ck_assert_int_eq(iogp_panel_get(IOGP_PANEL_SIZE)->key, '1');
	ck_assert_int_eq(iogp_panel_get(IOGP_PANEL_RATES)->key, '5');
	ck_assert_str_eq(iogp_panel_get(IOGP_PANEL_LATENCY)->metrics[0], IOGP_M_READ_LATENCY);
}
END_TEST

START_TEST(actions)
{
	ck_assert_uint_gt(iogp_nactions, 10);
	for (size_t i = 0; i < iogp_nactions; i++) {
		const iogp_action *a = &iogp_actions[i];
		ck_assert_msg(a->id >= 0 && a->id < IOGP_ACT_N, "row %zu: id %d", i, a->id);
		ck_assert_msg(a->help && a->help[0], "row %zu has no help text", i);
		ck_assert_msg(a->viewers && !(a->viewers & ~(unsigned)IOGP_VIEWER_ALL), "row %zu: viewers", i);
		ck_assert_msg(a->keys[0].key, "row %zu (%s) has no key", i, a->help);
		for (int k = 0; k < IOGP_ACTION_MAX_KEYS && a->keys[k].key; k++) {
			const char *key = a->keys[k].key;
			/* every key finds its own row, and only it */
			int arg = 0;
			for (unsigned v = IOGP_VIEWER_TUI; v <= IOGP_VIEWER_GTK; v <<= 1)
				if ((a->viewers & v) && a->keys[k].arg != IOGP_ARG_PANEL_KEY)
					ck_assert_msg(iogp_action_find(key, v, &arg) == a && arg == a->keys[k].arg,
					              "key %s: another row or argument", key);
			for (size_t j = 0; j < iogp_nactions; j++)
				for (int m = 0; m < IOGP_ACTION_MAX_KEYS && iogp_actions[j].keys[m].key; m++)
					ck_assert_msg((j == i && m == k) || strcmp(key, iogp_actions[j].keys[m].key),
					              "key %s bound twice ('%s', '%s')", key, a->help,
					              iogp_actions[j].help);
		}
	}
	/* every action the ids name has a row */
	for (int id = 0; id < IOGP_ACT_N; id++) {
		int found = 0;
		for (size_t i = 0; i < iogp_nactions; i++)
			found |= iogp_actions[i].id == id;
		ck_assert_msg(found, "action %d has no row", id);
	}
	/* digits zoom the viewer's own panels */
	int arg = 0;
	const iogp_action *a = iogp_action_find("6", IOGP_VIEWER_GTK, &arg);
	ck_assert_ptr_nonnull(a);
	ck_assert_int_eq(a->id, IOGP_ACT_PANEL);
	ck_assert_int_eq(arg, IOGP_PANEL_HEATMAP);
	ck_assert_ptr_null(iogp_action_find("6", IOGP_VIEWER_TUI, &arg));
	a = iogp_action_find("[", IOGP_VIEWER_TUI, &arg);
	ck_assert_int_eq(a->id, IOGP_ACT_SEEK);
	ck_assert_int_eq(arg, -60);
	ck_assert_ptr_null(iogp_action_find("f", IOGP_VIEWER_GTK, &arg));   /* the terminal's */
	ck_assert_ptr_null(iogp_action_find("C-o", IOGP_VIEWER_TUI, &arg));  /* the window's */
	/* labels as each viewer shows them */
	char b[32];
	ck_assert_str_eq(iogp_action_label(a, IOGP_VIEWER_TUI, b, sizeof(b)), "PgUp [");
	a = iogp_action_find("1", IOGP_VIEWER_TUI, &arg);
	ck_assert_str_eq(iogp_action_label(a, IOGP_VIEWER_TUI, b, sizeof(b)), "0-5,7-9,M");
	ck_assert_str_eq(iogp_action_label(a, IOGP_VIEWER_GTK, b, sizeof(b)), "0-9,M");
	a = iogp_action_find("C-e", IOGP_VIEWER_GTK, &arg);
	ck_assert_str_eq(iogp_action_label(a, IOGP_VIEWER_GTK, b, sizeof(b)), "Ctrl+E");
	/* help lines: each viewer's rows, in order */
	size_t pos = 0, n = 0;
	while ((a = iogp_help_next(&pos, IOGP_VIEWER_TUI, b, sizeof(b)))) {
		ck_assert(a->viewers & IOGP_VIEWER_TUI);
		n++;
	}
	ck_assert_uint_eq(n, 33);   /* iogram-top's overlay */
	/* the layer key, in both viewers */
	a = iogp_action_find("y", IOGP_VIEWER_TUI, &arg);
	ck_assert_ptr_nonnull(a);
	ck_assert_int_eq(a->id, IOGP_ACT_LAYER);
	ck_assert_ptr_eq(iogp_action_find("y", IOGP_VIEWER_GTK, &arg), a);
	/* sizes by count / by bytes: one key, both viewers */
	a = iogp_action_find("v", IOGP_VIEWER_TUI, &arg);
	ck_assert_ptr_nonnull(a);
	ck_assert_int_eq(a->id, IOGP_ACT_WEIGHT);
	ck_assert_ptr_eq(iogp_action_find("v", IOGP_VIEWER_GTK, &arg), a);
	ck_assert_str_eq(iogp_action_label(a, IOGP_VIEWER_GTK, b, sizeof(b)), "v");
	ck_assert_ptr_nonnull(strstr(a->help, "by bytes"));
}
END_TEST

/* A size histogram: n requests of each size (native k=4); the first nexact
 * sizes also counted exactly, as the agent keeps its common sizes. */
static void size_hist(iogp_hist *h, const uint64_t *size, const uint64_t *n, int k, int nexact)
{
	iogp_bins nb;
	iogp_bins_native(&nb, IOGP_NATIVE_K_DEFAULT);
	iogp_hist_init(h, &nb);
	iogp_exact e[16];
	int ne = 0;
	for (int i = 0; i < k; i++) {
		ck_assert_int_eq(iogp_hist_record(h, size[i], n[i]), 0);
		if (i < nexact)
			e[ne++] = (iogp_exact){ size[i], n[i] };
	}
	/* ascending by value, as iogp_hist_add_exact takes them */
	for (int i = 1; i < ne; i++)
		for (int j = i; j > 0 && e[j - 1].value > e[j].value; j--) {
			iogp_exact t = e[j];
			e[j] = e[j - 1];
			e[j - 1] = t;
		}
	ck_assert_int_eq(iogp_hist_add_exact(h, e, (size_t)ne), 0);
}

static const char *pct(double p)
{
	return tu_fmt("%.1f%%", p);
}

/* dd's 4 KiB blocks, tar's 10,240 B records and 1 MiB writes: the rows by
 * count, exact counts, shares of the requests and of the bytes. */
START_TEST(size_table)
{
	static const uint64_t size[3] = { 4096, 10240, 1048576 }, n[3] = { 3000, 700, 5 };
	iogp_hist h;
	size_hist(&h, size, n, 3, 3);
	iogp_size_table t;
	iogp_size_table_build(&t, &h, IOGP_SIZE_TABLE_ROWS, IOGP_UNITS_WIDE);
	ck_assert_ptr_null(t.note);
	ck_assert_uint_eq(t.nrows, 3);
	ck_assert_int_eq(t.has_other, 0);
	ck_assert_uint_eq(t.total, 3705);
	double bytes = 3000.0 * 4096 + 700.0 * 10240 + 5.0 * 1048576;
	ck_assert_double_eq_tol(t.bytes, bytes, 0.5);
	static const char *const wide[3] = { "4 KiB", "10,240 B", "1 MiB" };
	static const char *const cnt[3] = { "3,000", "700", "5" };
	for (int i = 0; i < 3; i++) {
		const iogp_size_row *r = &t.rows[i];
		ck_assert_uint_eq(r->size, size[i]);
		ck_assert_uint_eq(r->count, n[i]);
		ck_assert_str_eq(r->size_text, wide[i]);
		ck_assert_str_eq(r->count_text, cnt[i]);
		double rp = 100.0 * (double)n[i] / 3705, bp = 100.0 * (double)(size[i] * n[i]) / bytes;
		ck_assert_double_eq_tol(r->req_pct, rp, 1e-9);
		ck_assert_double_eq_tol(r->byte_pct, bp, 1e-9);
		ck_assert_str_eq(r->req_text, pct(rp));
		ck_assert_str_eq(r->byte_text, pct(bp));
	}
	ck_assert_str_eq(t.rows[0].req_text, "81.0%");
	ck_assert_str_eq(t.rows[0].byte_text, "49.8%");
	ck_assert_str_eq(t.rows[2].req_text, "0.1%");
	/* cells: "4K", "10240", "1M", bare counts */
	iogp_size_table_build(&t, &h, IOGP_SIZE_TABLE_ROWS, IOGP_UNITS_CELL);
	ck_assert_str_eq(t.rows[0].size_text, "4K");
	ck_assert_str_eq(t.rows[0].count_text, "3000");
	ck_assert_str_eq(t.rows[1].size_text, "10240");
	ck_assert_str_eq(t.rows[2].size_text, "1M");
	/* at most max rows; the rest is "other" */
	iogp_size_table_build(&t, &h, 2, IOGP_UNITS_WIDE);
	ck_assert_uint_eq(t.nrows, 2);
	ck_assert_int_eq(t.has_other, 1);
	ck_assert_uint_eq(t.other.count, 5);
	ck_assert_str_eq(t.other.size_text, "other");
	ck_assert_double_eq_tol(t.other.bytes, 5.0 * 1048576, 0.5);
	ck_assert_str_eq(t.other.req_text, "0.1%");
	/* as CSV: exact sizes and counts, shares to 3 decimals */
	char *csv = NULL;
	size_t clen = 0;
	FILE *mf = open_memstream(&csv, &clen);
	ck_assert_int_eq(iogp_size_table_write_csv(&h, mf), 3);
	fclose(mf);
	ck_assert_str_eq(csv, tu_fmt("size,count,pct_requests,pct_bytes\n4096,3000,%.3f,%.3f\n"
	                             "10240,700,%.3f,%.3f\n1048576,5,%.3f,%.3f\n",
	                             300000 / 3705.0, 100 * 12288000 / bytes, 70000 / 3705.0,
	                             100 * 7168000 / bytes, 500 / 3705.0, 100 * 5242880 / bytes));
	free(csv);
	iogp_hist_free(&h);

	/* one size not kept exactly: its requests are "other", never a row */
	static const uint64_t s2[3] = { 4096, 65536, 7000 }, n2[3] = { 100, 50, 10 };
	size_hist(&h, s2, n2, 3, 2);
	iogp_size_table_build(&t, &h, IOGP_SIZE_TABLE_ROWS, IOGP_UNITS_WIDE);
	ck_assert_uint_eq(t.nrows, 2);
	ck_assert_uint_eq(t.rows[0].size, 4096);
	ck_assert_uint_eq(t.rows[1].size, 65536);
	ck_assert_int_eq(t.has_other, 1);
	ck_assert_uint_eq(t.other.count, 10);
	ck_assert_str_eq(t.other.req_text, pct(100.0 * 10 / 160));
	ck_assert(t.other.bytes > 0);
	iogp_hist_free(&h);

	/* more sizes than rows: the 8 most common, ties to the smaller size */
	uint64_t s3[10], n3[10];
	for (int i = 0; i < 10; i++) {
		s3[i] = 512u * (uint64_t)(i + 1);
		n3[i] = i < 2 ? 7 : (uint64_t)(20 - i);
	}
	size_hist(&h, s3, n3, 10, 10);
	iogp_size_table_build(&t, &h, 100, IOGP_UNITS_CELL);
	ck_assert_uint_eq(t.nrows, IOGP_SIZE_TABLE_ROWS);
	for (size_t i = 1; i < t.nrows; i++)
		ck_assert(t.rows[i - 1].count > t.rows[i].count ||
		          (t.rows[i - 1].count == t.rows[i].count && t.rows[i - 1].size < t.rows[i].size));
	ck_assert_int_eq(t.has_other, 1);
	ck_assert_uint_eq(t.other.count, 14);   /* the two sizes of 7 requests */
	iogp_hist_free(&h);

	/* nothing exact (an older recording): one note, no rows; nothing at all */
	size_hist(&h, size, n, 3, 0);
	iogp_size_table_build(&t, &h, IOGP_SIZE_TABLE_ROWS, IOGP_UNITS_WIDE);
	ck_assert_uint_eq(t.nrows, 0);
	ck_assert_str_eq(t.note, "no exact sizes recorded");
	iogp_hist_free(&h);
	size_hist(&h, size, n, 0, 0);
	iogp_size_table_build(&t, &h, IOGP_SIZE_TABLE_ROWS, IOGP_UNITS_WIDE);
	ck_assert_uint_eq(t.nrows, 0);
	ck_assert_str_eq(t.note, "no requests");
	iogp_hist_free(&h);

	/* shares as the table writes them */
	char b[16];
	iogp_size_pct(b, sizeof(b), 100);
	ck_assert_str_eq(b, "100%");
	iogp_size_pct(b, sizeof(b), 99.97);
	ck_assert_str_eq(b, ">99.9%");
	iogp_size_pct(b, sizeof(b), 0.01);
	ck_assert_str_eq(b, "<0.1%");
	iogp_size_pct(b, sizeof(b), 0);
	ck_assert_str_eq(b, "0%");
	iogp_size_pct(b, sizeof(b), 12.345);
	ck_assert_str_eq(b, "12.3%");
}
END_TEST

/* By count or by bytes: names, the toggle, the bins' weights; the sizes a
 * summary quotes are exact where a bin is explained, else its floor. */
START_TEST(size_weight)
{
	ck_assert_str_eq(iogp_size_weight_name(IOGP_WEIGHT_COUNT), "count");
	ck_assert_str_eq(iogp_size_weight_title(IOGP_WEIGHT_BYTES), "by bytes");
	ck_assert_int_eq(iogp_size_weight_find("bytes"), IOGP_WEIGHT_BYTES);
	ck_assert_int_eq(iogp_size_weight_find("COUNT"), IOGP_WEIGHT_COUNT);
	ck_assert_int_eq(iogp_size_weight_find("volume"), -1);
	ck_assert_int_eq(iogp_size_weight_find(NULL), -1);
	ck_assert_int_eq(iogp_size_weight_step(IOGP_WEIGHT_COUNT), IOGP_WEIGHT_BYTES);
	ck_assert_int_eq(iogp_size_weight_step(IOGP_WEIGHT_BYTES), IOGP_WEIGHT_COUNT);
	static const uint64_t size[3] = { 4096, 10000, 1048576 }, n[3] = { 3000, 700, 5 };
	iogp_hist h;
	size_hist(&h, size, n, 3, 3);
	ck_assert_uint_eq(h.n, 3);
	for (size_t i = 0; i < 3; i++) {
		ck_assert_double_eq(iogp_size_bin_weight(&h, i, IOGP_WEIGHT_COUNT), (double)n[i]);
		ck_assert_double_eq_tol(iogp_size_bin_weight(&h, i, IOGP_WEIGHT_BYTES),
		                        (double)(size[i] * n[i]), 0.5);
	}
	ck_assert_double_eq(iogp_size_bin_weight(&h, 3, IOGP_WEIGHT_BYTES), 0);
	ck_assert_double_eq(iogp_size_weight_total(&h, IOGP_WEIGHT_COUNT), 3705);
	ck_assert_double_eq_tol(iogp_size_weight_total(&h, IOGP_WEIGHT_BYTES),
	                        3000.0 * 4096 + 700.0 * 10000 + 5.0 * 1048576, 0.5);
	/* 10,000 B sits in the bin [9728, 10239]: explained, it is quoted exactly */
	uint64_t v;
	ck_assert_int_eq(iogp_hist_quantile(&h, 0.9, &v), 0);
	ck_assert_uint_eq(iogp_size_shown(&h, v), 10000);
	ck_assert_int_eq(iogp_size_max(&h, &v), 0);
	ck_assert_uint_eq(v, 1048576);
	iogp_hist_free(&h);
	size_hist(&h, size, n, 3, 0);   /* not explained: the bins' floors */
	ck_assert_uint_eq(iogp_size_shown(&h, 10000), 9728);
	ck_assert_int_eq(iogp_size_max(&h, &v), 0);
	ck_assert_uint_eq(v, 1048576);
	iogp_hist_free(&h);
	size_hist(&h, size, n, 0, 0);
	ck_assert_int_eq(iogp_size_max(&h, &v), IOGP_ENOTFOUND);
	iogp_hist_free(&h);
}
END_TEST

START_TEST(layers)
{
	static const char *const posix_hists[IOGP_LAYER_NHISTS] = { IOGP_POSIX_HISTS };
	ck_assert_int_eq(iogp_layer_find("posix"), IOGP_LAYER_POSIX);
	ck_assert_int_eq(iogp_layer_find("STDIO"), IOGP_LAYER_STDIO);
	ck_assert_int_eq(iogp_layer_find("MPIIO"), IOGP_LAYER_MPIIO);
	ck_assert_str_eq(iogp_layer_title(IOGP_LAYER_MPIIO), "MPI-IO");
	ck_assert_int_eq(iogp_layer_find("hdf5"), -1);
	ck_assert_int_eq(iogp_layer_find(NULL), -1);
	ck_assert_str_eq(iogp_layer_title(IOGP_LAYER_POSIX), "POSIX");
	ck_assert_str_eq(iogp_layer_title(IOGP_LAYER_STDIO), "STDIO");
	ck_assert_str_eq(iogp_layer_name(IOGP_LAYER_STDIO), "stdio");
	ck_assert_ptr_null(iogp_layer_get(IOGP_LAYER_N));
	ck_assert_int_eq(iogp_layer_step(IOGP_LAYER_POSIX, 1), IOGP_LAYER_STDIO);
	ck_assert_int_eq(iogp_layer_step(IOGP_LAYER_STDIO, 1), IOGP_LAYER_MPIIO);
	ck_assert_int_eq(iogp_layer_step(IOGP_LAYER_MPIIO, 1), IOGP_LAYER_POSIX);
	ck_assert_int_eq(iogp_layer_step(IOGP_LAYER_POSIX, -1), IOGP_LAYER_MPIIO);
	char b[64];
	ck_assert_str_eq(iogp_layer_names(b, sizeof(b)), "posix, stdio, mpiio");
	for (int l = 0; l < IOGP_LAYER_N; l++) {
		const iogp_layer *e = iogp_layer_get(l);
		ck_assert_int_eq(e->id, l);
		ck_assert_int_eq(iogp_layer_find(e->name), l);
		/* every metric is of its layer: "posix." / "stdio." */
		for (int k = 0; k < IOGP_SLOT_N; k++)
			if (e->metrics[k])
				ck_assert_msg(!strncmp(e->metrics[k], e->name, strlen(e->name)) &&
				              e->metrics[k][strlen(e->name)] == '.', "%s: %s", e->name,
				              e->metrics[k]);
		/* every layer has the rates panels' byte counters and the sizes */
		ck_assert_ptr_nonnull(e->metrics[IOGP_SLOT_READ_BYTES]);
		ck_assert_ptr_nonnull(e->metrics[IOGP_SLOT_WRITE_BYTES]);
		ck_assert_ptr_nonnull(e->metrics[IOGP_SLOT_READ_SIZE]);
	}
	/* POSIX: the six histograms in snapshot order, the catalog's names */
	for (int k = 0; k < IOGP_LAYER_NHISTS; k++) {
		ck_assert_str_eq(iogp_layer_slot_metric(IOGP_LAYER_POSIX, k), posix_hists[k]);
		ck_assert_int_eq(iogp_layer_slot(posix_hists[k]), k);
	}
	ck_assert_str_eq(iogp_layer_slot_metric(IOGP_LAYER_POSIX, IOGP_SLOT_READ_BYTES), IOGP_M_READ_BYTES);
	/* stdio: its names, none for meta latency and queue depth */
	ck_assert_str_eq(iogp_layer_slot_metric(IOGP_LAYER_STDIO, IOGP_SLOT_READ_SIZE), IOGP_M_STDIO_READ_SIZE);
	ck_assert_str_eq(iogp_layer_slot_metric(IOGP_LAYER_STDIO, IOGP_SLOT_WRITE_LATENCY),
	                 IOGP_M_STDIO_WRITE_LATENCY);
	ck_assert_str_eq(iogp_layer_slot_metric(IOGP_LAYER_STDIO, IOGP_SLOT_WRITE_BYTES),
	                 IOGP_M_STDIO_WRITE_BYTES);
	ck_assert_ptr_null(iogp_layer_slot_metric(IOGP_LAYER_STDIO, IOGP_SLOT_QUEUE_DEPTH));
	ck_assert_ptr_null(iogp_layer_slot_metric(IOGP_LAYER_STDIO, IOGP_SLOT_META_LATENCY));
	ck_assert_ptr_null(iogp_layer_slot_metric(IOGP_LAYER_STDIO, IOGP_SLOT_N));
	/* each layer has its own access samples (the access panel shows the
	 * layer's: stdio-only programs have none in POSIX) */
	ck_assert_str_eq(iogp_layer_slot_metric(IOGP_LAYER_POSIX, IOGP_SLOT_ACCESS), IOGP_M_ACCESS);
	ck_assert_str_eq(iogp_layer_slot_metric(IOGP_LAYER_STDIO, IOGP_SLOT_ACCESS), IOGP_M_STDIO_ACCESS);
	ck_assert_str_eq(iogp_layer_metric(IOGP_LAYER_STDIO, IOGP_M_ACCESS), IOGP_M_STDIO_ACCESS);
	ck_assert_str_eq(iogp_layer_slot_label(IOGP_SLOT_ACCESS), "access samples");
	/* the catalog's (POSIX) metrics of every panel resolve in every layer,
	 * or are absent there */
	for (int p = 0; p < IOGP_PANEL_N; p++) {
		const iogp_panel *e = iogp_panel_get(p);
		for (int k = 0; k < IOGP_PANEL_MAX_METRICS && e->metrics[k]; k++) {
			ck_assert_str_eq(iogp_layer_metric(IOGP_LAYER_POSIX, e->metrics[k]), e->metrics[k]);
			if (iogp_layer_slot(e->metrics[k]) < 0)
				ck_assert_str_eq(iogp_layer_metric(IOGP_LAYER_STDIO, e->metrics[k]), e->metrics[k]);
		}
	}
	const iogp_panel *qd = iogp_panel_get(IOGP_PANEL_QD), *rates = iogp_panel_get(IOGP_PANEL_RATES);
	ck_assert_ptr_null(iogp_layer_metric(IOGP_LAYER_STDIO, qd->metrics[0]));
	ck_assert_str_eq(iogp_layer_slot_label(iogp_layer_slot(qd->metrics[0])), "queue depth");
	ck_assert_str_eq(iogp_layer_metric(IOGP_LAYER_STDIO, rates->metrics[0]), IOGP_M_STDIO_READ_BYTES);
	ck_assert_str_eq(iogp_layer_metric(IOGP_LAYER_STDIO, rates->metrics[1]), IOGP_M_STDIO_WRITE_BYTES);
}
END_TEST

int main(void)
{
	const tu_case cases[] = {
		{ "lookups", lookups },
		{ "catalog", catalog },
		{ "actions", actions },
		{ "layers", layers },
		{ "size_table", size_table },
		{ "size_weight", size_weight },
	};
	return tu_run_suite("panels", cases, sizeof(cases) / sizeof(cases[0]), NULL, NULL, 30);
}
