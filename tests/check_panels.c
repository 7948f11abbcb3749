/* check_panels.c - the panel catalog and the key/action table both viewers
 * share: lookups, aliases, unique ids, titles and keys, help for every row. */
#include <check.h>
#include <string.h>

#include "iogp_actions.h"
#include "iogp_layers.h"
#include "iogp_metrics.h"
#include "iogp_panels.h"
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
	ck_assert_str_eq(b, "size, qd, latency, access, rates, heatmap, header, dashboard");
	/* snapshot and export file names */
	iogp_panel_file(IOGP_PANEL_SIZE, "read", "csv", b, sizeof(b));
	ck_assert_str_eq(b, "size-read.csv");
	iogp_panel_file(IOGP_PANEL_QD, "", "csv", b, sizeof(b));
	ck_assert_str_eq(b, "queue_depth.csv");
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
	ck_assert_int_eq(iogp_panel_step(IOGP_PANEL_RATES, 1, IOGP_VIEWER_TUI), IOGP_PANEL_SIZE);
	ck_assert_int_eq(iogp_panel_step(IOGP_PANEL_SIZE, -1, IOGP_VIEWER_TUI), IOGP_PANEL_RATES);
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
		ck_assert_msg(a->data == IOGP_DATA_STATUS || a->metrics[0], "%s: no metric", a->name);
		for (int k = 0; k < IOGP_PANEL_MAX_METRICS && a->metrics[k]; k++)
			ck_assert_msg(!strncmp(a->metrics[k], "posix.", 6), "%s: metric %s", a->name,
			              a->metrics[k]);
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
	ck_assert_str_eq(iogp_action_label(a, IOGP_VIEWER_TUI, b, sizeof(b)), "1-5");
	ck_assert_str_eq(iogp_action_label(a, IOGP_VIEWER_GTK, b, sizeof(b)), "1-6");
	a = iogp_action_find("C-e", IOGP_VIEWER_GTK, &arg);
	ck_assert_str_eq(iogp_action_label(a, IOGP_VIEWER_GTK, b, sizeof(b)), "Ctrl+E");
	/* help lines: each viewer's rows, in order */
	size_t pos = 0, n = 0;
	while ((a = iogp_help_next(&pos, IOGP_VIEWER_TUI, b, sizeof(b)))) {
		ck_assert(a->viewers & IOGP_VIEWER_TUI);
		n++;
	}
	ck_assert_uint_eq(n, 29);   /* iogram-top's overlay */
	/* the layer key, in both viewers */
	a = iogp_action_find("y", IOGP_VIEWER_TUI, &arg);
	ck_assert_ptr_nonnull(a);
	ck_assert_int_eq(a->id, IOGP_ACT_LAYER);
	ck_assert_ptr_eq(iogp_action_find("y", IOGP_VIEWER_GTK, &arg), a);
}
END_TEST

START_TEST(layers)
{
	static const char *const posix_hists[IOGP_LAYER_NHISTS] = { IOGP_POSIX_HISTS };
	ck_assert_int_eq(iogp_layer_find("posix"), IOGP_LAYER_POSIX);
	ck_assert_int_eq(iogp_layer_find("STDIO"), IOGP_LAYER_STDIO);
	ck_assert_int_eq(iogp_layer_find("mpiio"), -1);
	ck_assert_int_eq(iogp_layer_find(NULL), -1);
	ck_assert_str_eq(iogp_layer_title(IOGP_LAYER_POSIX), "POSIX");
	ck_assert_str_eq(iogp_layer_title(IOGP_LAYER_STDIO), "STDIO");
	ck_assert_str_eq(iogp_layer_name(IOGP_LAYER_STDIO), "stdio");
	ck_assert_ptr_null(iogp_layer_get(IOGP_LAYER_N));
	ck_assert_int_eq(iogp_layer_step(IOGP_LAYER_POSIX, 1), IOGP_LAYER_STDIO);
	ck_assert_int_eq(iogp_layer_step(IOGP_LAYER_STDIO, 1), IOGP_LAYER_POSIX);
	ck_assert_int_eq(iogp_layer_step(IOGP_LAYER_POSIX, -1), IOGP_LAYER_STDIO);
	char b[64];
	ck_assert_str_eq(iogp_layer_names(b, sizeof(b)), "posix, stdio");
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
	/* the catalog's (POSIX) metrics of every panel resolve in every layer,
	 * or are absent there: the access samples are shared */
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
	};
	return tu_run_suite("panels", cases, sizeof(cases) / sizeof(cases[0]), NULL, NULL, 30);
}
