/* keys.c - iogram-view's keys: the shared key/action table (iogp_actions.h)
 * matched against GDK key events, its actions run on the window, and the
 * keys dialog (? h F1) generated from the same table as iogram-top's help. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "iogp_layers.h"
#include "iogp_size_table.h"

/* ---- key spellings as GDK keyvals ---- */

typedef struct gkey {
	guint keyval;
	int ctrl, shift;
} gkey;

static int gkey_of(const char *k, gkey *g)
{
	static const struct {
		const char *name;
		guint keyval;
	} named[] = {
		{ "Space", GDK_KEY_space }, { "Tab", GDK_KEY_Tab }, { "Enter", GDK_KEY_Return },
		{ "Esc", GDK_KEY_Escape }, { "Left", GDK_KEY_Left }, { "Right", GDK_KEY_Right },
		{ "Up", GDK_KEY_Up }, { "Down", GDK_KEY_Down }, { "PgUp", GDK_KEY_Page_Up },
		{ "PgDn", GDK_KEY_Page_Down }, { "Home", GDK_KEY_Home }, { "End", GDK_KEY_End },
		{ "KP_Add", GDK_KEY_KP_Add }, { "KP_Subtract", GDK_KEY_KP_Subtract },
	};
	memset(g, 0, sizeof(*g));
	if (k[0] == 'C' && k[1] == '-' && k[2]) {
		g->ctrl = 1;
		k += 2;
	} else if (k[0] == 'S' && k[1] == '-' && k[2]) {
		g->shift = 1;
		k += 2;
	}
	if (k[0] && !k[1]) {
		g->keyval = gdk_unicode_to_keyval((unsigned char)k[0]);
		return 1;
	}
	if (k[0] == 'F' && k[1] >= '1' && k[1] <= '9') {
		g->keyval = GDK_KEY_F1 + (guint)atoi(k + 1) - 1;
		return 1;
	}
	for (size_t i = 0; i < sizeof(named) / sizeof(*named); i++)
		if (!strcmp(k, named[i].name)) {
			g->keyval = named[i].keyval;
			if (g->shift && g->keyval == GDK_KEY_Tab)
				g->keyval = GDK_KEY_ISO_Left_Tab;
			return 1;
		}
	return 0;
}

/* Does event e type key k? Shift is part of a character ("N", "?"), and
 * must match for the other keys (Left vs S-Left). */
static int typed(const GdkEventKey *e, const char *k)
{
	gkey g;
	if (!gkey_of(k, &g) || g.keyval != e->keyval)
		return 0;
	int ctrl = (e->state & GDK_CONTROL_MASK) != 0, shift = (e->state & GDK_SHIFT_MASK) != 0;
	if (ctrl != g.ctrl)
		return 0;
	return gdk_keyval_to_unicode(e->keyval) >= 0x20 || shift == g.shift;
}

/* ---- actions ---- */

static void cycle_window(iogv_win *v, int dir)
{
	static const char *const ids[4] = { "0", "10", "60", "300" };
	const char *id = gtk_combo_box_get_active_id(GTK_COMBO_BOX(v->window_combo));
	int i = 0;
	while (i < 4 && id && strcmp(ids[i], id))
		i++;
	i = ((i % 4) + dir + 4) % 4;
	gtk_combo_box_set_active_id(GTK_COMBO_BOX(v->window_combo), ids[i]);
}

/* Run action a with arg; FALSE: not done here, the key goes on to the
 * focused widget. */
static gboolean run(iogv_win *v, const iogp_action *a, int arg)
{
	int replay = iogv_is_replay(v->s);
	if (a->replay_only && !replay)
		return FALSE;   /* live: the arrows stay the sidebar's */
	switch (a->id) {
	case IOGP_ACT_HELP: iogv_keys_help(v); return TRUE;
	case IOGP_ACT_QUIT: gtk_widget_destroy(v->win); return TRUE;
	case IOGP_ACT_PANEL: iogv_win_zoom(v, arg); return TRUE;
	case IOGP_ACT_ZOOM: {
		int p = iogv_win_pointer_panel(v);
		if (p > 0)
			iogv_win_zoom(v, p);
		return TRUE;
	}
	case IOGP_ACT_ESCAPE:
		if (v->help)
			gtk_widget_destroy(v->help);
		else if (v->zoom_panel >= 0)
			iogv_win_zoom(v, v->zoom_panel);
		return TRUE;
	case IOGP_ACT_NODE: iogv_sidebar_step(v->side, 1, arg); return TRUE;
	case IOGP_ACT_SOURCE: iogv_sidebar_step(v->side, 0, arg); return TRUE;
	case IOGP_ACT_ALL: iogv_sidebar_select_all(v->side); return TRUE;
	case IOGP_ACT_WINDOW: cycle_window(v, arg); return TRUE;
	case IOGP_ACT_LAYER:
		v->args.layer = iogp_layer_step(iogv_layer(v->s), arg ? arg : 1);
		iogv_set_layer(v->s, v->args.layer);
		iogv_win_changed(v, 1);
		return TRUE;
	case IOGP_ACT_WEIGHT:
		v->args.weight = v->view.size_weight = iogp_size_weight_step(v->view.size_weight);
		gtk_widget_queue_draw(v->area);
		return TRUE;
	case IOGP_ACT_RATES_MODE:   /* the heatmap: bytes/s or latency p99 */
		v->view.heat_p99 = !v->view.heat_p99;
		iogv_set_table(v->s, v->rows, v->view.heat_p99);
		iogv_win_changed(v, 1);
		iogv_win_info(v, "Node heatmap: %s", v->view.heat_p99 ? "read + write latency p99 per window slot"
		                                                      : "read + write bytes/s");
		return TRUE;
	case IOGP_ACT_SORT:
		if (arg) {
			v->view.sort_col = (v->view.sort_col + arg + IOGP_NT_NCOLS) % IOGP_NT_NCOLS;
			v->view.sort_desc = iogp_nt_col_desc(v->view.sort_col);
		} else {
			v->view.sort_desc = !v->view.sort_desc;
		}
		gtk_widget_queue_draw(v->area);
		return TRUE;
	case IOGP_ACT_ROWS:
		v->rows = v->rows == IOGP_NT_NODES ? IOGP_NT_SOURCES : IOGP_NT_NODES;
		iogv_set_table(v->s, v->rows, v->view.heat_p99);
		v->view_dirty = 1;
		iogv_win_changed(v, 1);
		return TRUE;
	case IOGP_ACT_LOG:
	case IOGP_ACT_LOGX: {
		int p = iogv_win_pointer_panel(v);
		iogv_win_toggle_log(v, a->id == IOGP_ACT_LOG ? &v->view.logy : &v->view.logx,
		                    p < 0 ? IOGP_PANEL_SIZE : p);
		return TRUE;
	}
	case IOGP_ACT_PAUSE:
		if (replay)   /* a live stream does not pause here */
			iogv_play(v, !v->playing);
		return replay;
	case IOGP_ACT_SEEK: iogv_seek_by(v, arg); return TRUE;
	case IOGP_ACT_SPEED: iogv_speed(v, arg); return TRUE;
	case IOGP_ACT_JUMP: iogv_seek(v, arg ? INFINITY : -INFINITY); return TRUE;
	case IOGP_ACT_FOLLOW:
		v->view.t_lo = v->view.t_hi = 0;
		gtk_widget_queue_draw(v->area);
		return TRUE;
	case IOGP_ACT_RECORD:
		if (!replay)   /* a replay is recorded already */
			gtk_toggle_button_set_active(GTK_TOGGLE_BUTTON(v->rec_btn),
			                             !gtk_toggle_button_get_active(GTK_TOGGLE_BUTTON(v->rec_btn)));
		return !replay;
	case IOGP_ACT_SNAPSHOT: iogv_win_export_dialog(v, iogv_win_pointer_panel(v), 1); return TRUE;
	case IOGP_ACT_EXPORT: iogv_win_export_dialog(v, -1, 0); return TRUE;
	case IOGP_ACT_OPEN: iogv_win_open(v); return TRUE;
	case IOGP_ACT_REDRAW:
		iogplot_cache_clear(v->cache);
		gtk_widget_queue_draw(v->win);
		return TRUE;
	default:
		return FALSE;   /* the terminal's own (focus, file, bins, ...) */
	}
}

gboolean iogv_keys_press(GtkWidget *w, GdkEventKey *e, gpointer p)
{
	iogv_win *v = p;
	GtkWidget *focus = gtk_window_get_focus(GTK_WINDOW(w));
	if (focus && GTK_IS_EDITABLE(focus))
		return FALSE;
	for (size_t i = 0; i < iogp_nactions; i++) {
		const iogp_action *a = &iogp_actions[i];
		if (!(a->viewers & IOGP_VIEWER_GTK))
			continue;
		for (int k = 0; k < IOGP_ACTION_MAX_KEYS && a->keys[k].key; k++) {
			if (!typed(e, a->keys[k].key))
				continue;
			/* Enter activates the focused button or row, unless that is the dashboard */
			if (!strcmp(a->keys[k].key, "Enter") && focus && focus != v->area)
				return FALSE;
			int arg = iogp_action_arg(&a->keys[k], IOGP_VIEWER_GTK);
			if (a->keys[k].arg == IOGP_ARG_PANEL_KEY && arg < 0)
				return FALSE;
			return run(v, a, arg);
		}
	}
	return FALSE;
}

/* ---- the keys dialog ---- */

const char *iogv_action_label(int id, char *buf, size_t len)
{
	size_t pos = 0;
	const iogp_action *a;
	while ((a = iogp_help_next(&pos, IOGP_VIEWER_GTK, buf, len)))
		if (a->id == id)
			return buf;
	if (len)
		buf[0] = 0;
	return buf;
}

static void grid_row(GtkGrid *g, int row, const char *key, const char *text, int dim)
{
	GtkWidget *k = gtk_label_new(NULL), *t = gtk_label_new(text);
	char *markup = g_markup_printf_escaped("<b>%s</b>", key);
	gtk_label_set_markup(GTK_LABEL(k), markup);
	g_free(markup);
	gtk_label_set_xalign(GTK_LABEL(k), 0);
	gtk_label_set_xalign(GTK_LABEL(t), 0);
	gtk_widget_set_sensitive(t, !dim);
	gtk_grid_attach(g, k, 0, row, 1, 1);
	gtk_grid_attach(g, t, 1, row, 1, 1);
}

static void on_help_destroy(GtkWidget *w, gpointer p)
{
	(void)w;
	((iogv_win *)p)->help = NULL;
}

void iogv_keys_help(iogv_win *v)
{
	if (v->help) {
		gtk_widget_destroy(v->help);
		return;
	}
	GtkWidget *d = gtk_dialog_new_with_buttons("iogram-view keys", GTK_WINDOW(v->win),
	                                           GTK_DIALOG_DESTROY_WITH_PARENT, "_Close",
	                                           GTK_RESPONSE_CLOSE, NULL);
	v->help = d;
	g_signal_connect(d, "response", G_CALLBACK(gtk_widget_destroy), NULL);
	g_signal_connect(d, "destroy", G_CALLBACK(on_help_destroy), v);
	GtkWidget *grid = gtk_grid_new();
	gtk_grid_set_row_spacing(GTK_GRID(grid), 3);
	gtk_grid_set_column_spacing(GTK_GRID(grid), 16);
	g_object_set(grid, "margin", 12, NULL);
	int row = 0, replay = iogv_is_replay(v->s);
	char label[32];
	size_t pos = 0;
	const iogp_action *a;
	while ((a = iogp_help_next(&pos, IOGP_VIEWER_GTK, label, sizeof(label))))
		grid_row(GTK_GRID(grid), row++, label, iogp_action_help(a, IOGP_VIEWER_GTK),
		         a->replay_only && !replay);
	grid_row(GTK_GRID(grid), row++, "", "", 0);
	for (int p = 0; p < IOGP_PANEL_N; p++) {
		const iogp_panel *e = iogp_panel_get(p);
		if (!e->key || !(e->viewers & IOGP_VIEWER_GTK))
			continue;
		char key[8], text[256];
		snprintf(key, sizeof(key), "%c", e->key);
		snprintf(text, sizeof(text), "%s: %s", e->title, e->tooltip);
		grid_row(GTK_GRID(grid), row++, key, text, 0);
	}
	gtk_container_add(GTK_CONTAINER(gtk_dialog_get_content_area(GTK_DIALOG(d))), grid);
	gtk_widget_show_all(d);
}
