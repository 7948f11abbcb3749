/* sidebar.c - nodes and their sources with state and rates; selecting one
 * shows its histograms and access pattern, selecting several nodes
 * compares them in the rates panel. */
#include <string.h>

#include "app.h"

enum { COL_NAME, COL_STATE, COL_READ, COL_WRITE, COL_KIND, COL_KEY, COL_WEIGHT, COL_TIP, NCOLS };
enum { KIND_ALL, KIND_NODE, KIND_SOURCE };

struct iogv_sidebar {
	iogv_win *v;
	GtkTreeStore *store;
	GtkWidget *tree;
	GtkTreeIter all;
	GtkTreeIter *nodes, *srcs;
	size_t nnodes, nsrcs, capn, caps;
	gint64 refreshed_us;
	int updating;
};

static void on_selection(GtkTreeSelection *s, gpointer p);

static void clear(struct iogv_sidebar *sb)
{
	sb->updating = 1;
	gtk_tree_store_clear(sb->store);
	gtk_tree_store_append(sb->store, &sb->all, NULL);
	gtk_tree_store_set(sb->store, &sb->all, COL_NAME, "All nodes", COL_KIND, KIND_ALL, COL_KEY, "",
	                   COL_WEIGHT, 700, COL_TIP, "Every node: the whole job", -1);
	sb->nnodes = sb->nsrcs = 0;
	gtk_tree_selection_select_iter(gtk_tree_view_get_selection(GTK_TREE_VIEW(sb->tree)), &sb->all);
	sb->updating = 0;
	sb->refreshed_us = 0;
}

static void cell_right(GtkTreeViewColumn *c, GtkCellRenderer *r)
{
	(void)c;
	g_object_set(r, "xalign", 1.0, NULL);
}

struct iogv_sidebar *iogv_sidebar_new(iogv_win *v, GtkWidget **widget)
{
	struct iogv_sidebar *sb = g_new0(struct iogv_sidebar, 1);
	sb->v = v;
	sb->store = gtk_tree_store_new(NCOLS, G_TYPE_STRING, G_TYPE_STRING, G_TYPE_STRING,
	                               G_TYPE_STRING, G_TYPE_INT, G_TYPE_STRING, G_TYPE_INT, G_TYPE_STRING);
	sb->tree = gtk_tree_view_new_with_model(GTK_TREE_MODEL(sb->store));
	static const char *const titles[4] = { "Node / source", "Live", "Read/s", "Write/s" };
	for (int c = 0; c < 4; c++) {
		GtkCellRenderer *r = gtk_cell_renderer_text_new();
		GtkTreeViewColumn *col = gtk_tree_view_column_new_with_attributes(titles[c], r, "text", c,
		                                                                  NULL);
		if (c == 0) {
			/* whole names where they fit (node names differ at their ends:
			 * "demo-node-1", "demo-node-2"), cut in the middle where not;
			 * the tooltip has the whole label */
			gtk_tree_view_column_add_attribute(col, r, "weight", COL_WEIGHT);
			gtk_tree_view_column_set_expand(col, TRUE);
			g_object_set(r, "ellipsize", PANGO_ELLIPSIZE_MIDDLE, "width-chars", 14, NULL);
			gtk_tree_view_column_set_min_width(col, 90);
		}
		if (c >= 2)
			cell_right(col, r);
		gtk_tree_view_column_set_resizable(col, TRUE);
		gtk_tree_view_append_column(GTK_TREE_VIEW(sb->tree), col);
	}
	gtk_tree_view_set_enable_search(GTK_TREE_VIEW(sb->tree), TRUE);
	gtk_tree_view_set_search_column(GTK_TREE_VIEW(sb->tree), COL_NAME);
	GtkTreeSelection *sel = gtk_tree_view_get_selection(GTK_TREE_VIEW(sb->tree));
	gtk_tree_selection_set_mode(sel, GTK_SELECTION_MULTIPLE);
	g_signal_connect(sel, "changed", G_CALLBACK(on_selection), sb);
	gtk_tree_view_set_tooltip_column(GTK_TREE_VIEW(sb->tree), COL_TIP);
	GtkWidget *sw = gtk_scrolled_window_new(NULL, NULL);
	/* the tree as wide as the pane: the name column takes what is left */
	gtk_scrolled_window_set_policy(GTK_SCROLLED_WINDOW(sw), GTK_POLICY_NEVER,
	                               GTK_POLICY_AUTOMATIC);
	gtk_container_add(GTK_CONTAINER(sw), sb->tree);
	gtk_widget_set_size_request(sw, 180, -1);
	clear(sb);
	*widget = sw;
	return sb;
}

void iogv_sidebar_free(struct iogv_sidebar *sb)
{
	if (!sb)
		return;
	g_free(sb->nodes);
	g_free(sb->srcs);
	g_object_unref(sb->store);
	g_free(sb);
}

void iogv_sidebar_reset(struct iogv_sidebar *sb)
{
	clear(sb);
	iogv_sidebar_refresh(sb);
}

static const char *state_name(const iogp_source_info *si)
{
	if (!si->in_sync)
		return "resync";
	switch (si->state) {
	case IOGP_SRC_LIVE: return "live";
	case IOGP_SRC_NEW: return "new";
	case IOGP_SRC_QUIET: return "quiet";
	case IOGP_SRC_GONE: return si->restarted_by >= 0 ? "restarted" : "gone";
	default: return "?";
	}
}

static void rate_text(char *buf, size_t len, double v)
{
	if (v <= 0)
		snprintf(buf, len, "–");
	else
		iogp_fmt_bytes(buf, len, v, IOGP_UNITS_WIDE);
}

void iogv_sidebar_refresh(struct iogv_sidebar *sb)
{
	gint64 now = g_get_monotonic_time();
	if (sb->refreshed_us && now - sb->refreshed_us < 1000000)
		return;
	sb->refreshed_us = now;
	iogv_win *v = sb->v;
	const iogp_model *m = iogv_model(v->s);
	size_t nn = iogp_model_node_count(m), ns = iogp_model_source_count(m);
	sb->updating = 1;
	if (nn > sb->capn) {
		sb->capn = nn * 2;
		sb->nodes = g_renew(GtkTreeIter, sb->nodes, sb->capn);
	}
	for (; sb->nnodes < nn; sb->nnodes++) {
		GtkTreeIter *it = &sb->nodes[sb->nnodes];
		const char *name = iogp_model_node(m, sb->nnodes);
		gtk_tree_store_append(sb->store, it, NULL);
		char *tip = g_markup_printf_escaped("<b>%s</b>\nSelect to show this node's histograms and "
		                                    "processes; Ctrl+click several nodes to compare their "
		                                    "rates", name[0] ? name : "(no host)");
		gtk_tree_store_set(sb->store, it, COL_NAME, name[0] ? name : "(no host)", COL_KIND,
		                   KIND_NODE, COL_KEY, name, COL_WEIGHT, 600, COL_TIP, tip, -1);
		g_free(tip);
	}
	if (ns > sb->caps) {
		sb->caps = ns * 2;
		sb->srcs = g_renew(GtkTreeIter, sb->srcs, sb->caps);
	}
	int *live = g_new0(int, nn ? nn : 1), *tot = g_new0(int, nn ? nn : 1);
	for (size_t i = 0; i < ns; i++) {
		iogp_source_info si;
		if (iogp_model_source(m, i, &si) < 0)
			continue;
		size_t k = 0;
		while (k < nn && strcmp(iogp_model_node(m, k), si.node ? si.node : ""))
			k++;
		if (k == nn)
			continue;
		tot[k]++;
		live[k] += si.state == IOGP_SRC_LIVE || si.state == IOGP_SRC_NEW;
		if (i == sb->nsrcs) {
			char name[96], key[20];
			if (si.rank >= 0)
				snprintf(name, sizeof(name), "rank %lld (pid %lld)", (long long)si.rank,
				         (long long)si.pid);
			else
				snprintf(name, sizeof(name), "pid %lld", (long long)si.pid);
			snprintf(key, sizeof(key), "%016llx", (unsigned long long)si.id);
			gtk_tree_store_append(sb->store, &sb->srcs[i], &sb->nodes[k]);
			char *tip = g_markup_printf_escaped("<b>%s</b> on %s\nsource %s", name,
			                                    si.node ? si.node : "", key);
			gtk_tree_store_set(sb->store, &sb->srcs[i], COL_NAME, name, COL_KIND, KIND_SOURCE,
			                   COL_KEY, key, COL_WEIGHT, 400, COL_TIP, tip, -1);
			g_free(tip);
			sb->nsrcs++;
		}
		if (i < sb->nsrcs)
			gtk_tree_store_set(sb->store, &sb->srcs[i], COL_STATE, state_name(&si), -1);
	}
	double sr = 0, sw = 0;
	for (size_t k = 0; k < nn; k++) {
		char st[32], r[32], w[32];
		double rd, wr;
		iogv_node_rates(v->s, iogp_model_node(m, k), &rd, &wr);
		sr += rd;
		sw += wr;
		snprintf(st, sizeof(st), "%d/%d", live[k], tot[k]);
		rate_text(r, sizeof(r), rd);
		rate_text(w, sizeof(w), wr);
		gtk_tree_store_set(sb->store, &sb->nodes[k], COL_STATE, st, COL_READ, r, COL_WRITE, w, -1);
	}
	char st[32], r[32], w[32];
	snprintf(st, sizeof(st), "%zu node%s", nn, nn == 1 ? "" : "s");
	rate_text(r, sizeof(r), sr);
	rate_text(w, sizeof(w), sw);
	gtk_tree_store_set(sb->store, &sb->all, COL_STATE, st, COL_READ, r, COL_WRITE, w, -1);
	g_free(live);
	g_free(tot);
	sb->updating = 0;
}

static void on_selection(GtkTreeSelection *s, gpointer p)
{
	struct iogv_sidebar *sb = p;
	iogv_win *v = sb->v;
	if (sb->updating)
		return;
	GtkTreeModel *tm;
	GList *rows = gtk_tree_selection_get_selected_rows(s, &tm);
	iogp_sel sel = { .kind = IOGP_SEL_ALL };
	for (int i = 0; i < v->nhighlight; i++)
		g_free(v->highlight[i]);
	v->nhighlight = 0;
	int first = 1;
	for (GList *l = rows; l; l = l->next) {
		GtkTreeIter it;
		if (!gtk_tree_model_get_iter(tm, &it, l->data))
			continue;
		int kind;
		char *key = NULL;
		gtk_tree_model_get(tm, &it, COL_KIND, &kind, COL_KEY, &key, -1);
		if (kind == KIND_ALL) {
			sel.kind = IOGP_SEL_ALL;
			first = 0;
		} else if (kind == KIND_NODE) {
			if (first) {
				snprintf(v->sel_node, sizeof(v->sel_node), "%s", key);
				sel = (iogp_sel){ .kind = IOGP_SEL_NODE, .node = v->sel_node };
			}
			if (v->nhighlight < 4)
				v->highlight[v->nhighlight++] = g_strdup(key);
			first = 0;
		} else if (kind == KIND_SOURCE) {
			GtkTreeIter parent;
			if (first) {
				sel = (iogp_sel){ .kind = IOGP_SEL_SOURCE,
				                  .source = g_ascii_strtoull(key, NULL, 16) };
			}
			if (v->nhighlight < 4 && gtk_tree_model_iter_parent(tm, &parent, &it)) {
				char *node = NULL;
				gtk_tree_model_get(tm, &parent, COL_KEY, &node, -1);
				v->highlight[v->nhighlight++] = node;
			}
			first = 0;
		}
		g_free(key);
	}
	g_list_free_full(rows, (GDestroyNotify)gtk_tree_path_free);
	v->sel = sel;
	v->view_dirty = 1;
	iogv_win_changed(v, 1);
}

static void select_iter(struct iogv_sidebar *sb, GtkTreeIter *it)
{
	GtkTreeSelection *s = gtk_tree_view_get_selection(GTK_TREE_VIEW(sb->tree));
	GtkTreePath *path = gtk_tree_model_get_path(GTK_TREE_MODEL(sb->store), it);
	gtk_tree_view_expand_to_path(GTK_TREE_VIEW(sb->tree), path);
	sb->updating = 1;
	gtk_tree_selection_unselect_all(s);
	sb->updating = 0;
	gtk_tree_selection_select_iter(s, it);
	gtk_tree_view_scroll_to_cell(GTK_TREE_VIEW(sb->tree), path, NULL, FALSE, 0, 0);
	gtk_tree_path_free(path);
}

void iogv_sidebar_select_all(struct iogv_sidebar *sb)
{
	select_iter(sb, &sb->all);
}

/* n / N, s / S: the next or previous node or source. */
void iogv_sidebar_step(struct iogv_sidebar *sb, int nodes, int dir)
{
	iogv_win *v = sb->v;
	const iogp_model *m = iogv_model(v->s);
	size_t n = nodes ? sb->nnodes : sb->nsrcs;
	if (!n)
		return;
	long cur = -1;
	if (nodes && v->sel.kind == IOGP_SEL_NODE) {
		for (size_t k = 0; k < sb->nnodes; k++)
			if (!strcmp(iogp_model_node(m, k), v->sel.node))
				cur = (long)k;
	} else if (!nodes && v->sel.kind == IOGP_SEL_SOURCE) {
		size_t i;
		if (iogp_model_source_index(m, v->sel.source, &i) == 0)
			cur = (long)i;
	}
	long next = cur < 0 ? (dir > 0 ? 0 : (long)n - 1) : (cur + dir + (long)n) % (long)n;
	select_iter(sb, nodes ? &sb->nodes[next] : &sb->srcs[next]);
}

/* For the tests' screenshot line: the room the name cells have (the cell
 * area of the first node's row less the renderer's padding) and the widest
 * node name as drawn (semibold), in pixels. */
void iogv_sidebar_widths(struct iogv_sidebar *sb, int *column, int *widest)
{
	*column = *widest = 0;
	GtkTreeViewColumn *col = gtk_tree_view_get_column(GTK_TREE_VIEW(sb->tree), 0);
	if (col && sb->nnodes) {
		GtkTreePath *path = gtk_tree_model_get_path(GTK_TREE_MODEL(sb->store), &sb->nodes[0]);
		GdkRectangle r;
		gtk_tree_view_get_cell_area(GTK_TREE_VIEW(sb->tree), path, col, &r);
		gtk_tree_path_free(path);
		GList *cells = gtk_cell_layout_get_cells(GTK_CELL_LAYOUT(col));
		int xpad = 0, ypad = 0;
		if (cells)
			gtk_cell_renderer_get_padding(cells->data, &xpad, &ypad);
		g_list_free(cells);
		*column = r.width - 2 * xpad;
	}
	const iogp_model *m = iogv_model(sb->v->s);
	for (size_t k = 0; k < iogp_model_node_count(m); k++) {
		char *markup = g_markup_printf_escaped("<span weight=\"600\">%s</span>", iogp_model_node(m, k));
		PangoLayout *l = gtk_widget_create_pango_layout(sb->tree, NULL);
		pango_layout_set_markup(l, markup, -1);
		int w, h;
		pango_layout_get_pixel_size(l, &w, &h);
		*widest = w > *widest ? w : *widest;
		g_object_unref(l);
		g_free(markup);
	}
}
