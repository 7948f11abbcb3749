/* window.c - iogram-view's window: header bar, error bar, the dashboard
 * drawing area (cairo plots, tooltips, zoom and pan of the time axes),
 * export and recording (keys: keys.c). Redraws only when the frame or the
 * view changed. */
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "app.h"
#include "iogp_size_table.h"

#define LIVE_REBUILD_US 1000000   /* live: frame at most once a second */
#define IDLE_REBUILD_US 2000000   /* ... and at least every 2 s (states, clock) */
#define PLAY_REBUILD_US 100000    /* replay playing: 10 frames a second */

/* ---- messages ---- */

static void show_bar(iogv_win *v, GtkMessageType type, const char *msg)
{
	gtk_info_bar_set_message_type(GTK_INFO_BAR(v->infobar), type);
	gtk_label_set_text(GTK_LABEL(v->info_label), msg);
	gtk_widget_show(v->infobar);
	gtk_info_bar_set_revealed(GTK_INFO_BAR(v->infobar), TRUE);
}

void iogv_win_error(iogv_win *v, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	g_printerr("iogram-view: %s\n", buf);
	show_bar(v, GTK_MESSAGE_ERROR, buf);
}

void iogv_win_info(iogv_win *v, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	show_bar(v, GTK_MESSAGE_INFO, buf);
}

static void on_bar_response(GtkInfoBar *bar, gint response, gpointer p)
{
	(void)response;
	(void)p;
	gtk_info_bar_set_revealed(bar, FALSE);
	gtk_widget_hide(GTK_WIDGET(bar));
}

/* ---- frame ---- */

static void build_frame(iogv_win *v)
{
	int rc = iogv_frame(v->s, &v->sel, v->window_s, &v->frame);
	if (rc < 0)
		iogv_win_error(v, "building the view failed: %s", iogp_strerror(rc));
	if (v->sel.kind == IOGP_SEL_NODE)
		snprintf(v->frame.selection, sizeof(v->frame.selection), "node %s", v->sel.node);
	else if (v->sel.kind == IOGP_SEL_SOURCE)
		snprintf(v->frame.selection, sizeof(v->frame.selection), "source %016llx",
		         (unsigned long long)v->sel.source);
	else
		snprintf(v->frame.selection, sizeof(v->frame.selection), "all nodes");
	if (iogv_is_replay(v->s))
		snprintf(v->frame.status, sizeof(v->frame.status), v->playing ? "playing %gx" : "paused",
		         v->speed);
	else if (v->demo)
		snprintf(v->frame.status, sizeof(v->frame.status), "demo");
	else
		v->frame.status[0] = 0;
	v->view.nhighlight = 0;
	for (int i = 0; i < v->nhighlight && i < 4; i++)
		v->view.highlight[v->view.nhighlight++] = v->highlight[i];
	v->frame_gen = iogv_generation(v->s);
	v->built_us = g_get_monotonic_time();
	v->view_dirty = 0;
	v->have_frame = 1;
}

void iogv_win_changed(iogv_win *v, int now)
{
	gint64 t = g_get_monotonic_time(), since = t - v->built_us;
	int changed = iogv_generation(v->s) != v->frame_gen;
	gint64 min = iogv_is_replay(v->s) ? PLAY_REBUILD_US : LIVE_REBUILD_US;
	if (!(now || v->view_dirty || (changed && since >= min) || since >= IDLE_REBUILD_US))
		return;
	build_frame(v);
	gtk_widget_queue_draw(v->area);
	if (v->side)
		iogv_sidebar_refresh(v->side);
	if (v->tl)
		iogv_timeline_update(v->tl);
}

/* ---- theme ---- */

void iogv_win_set_theme(iogv_win *v)
{
	int dark;
	if (v->theme_forced) {
		dark = v->args.dark == 1;
	} else {
		GdkRGBA bg;
		GtkStyleContext *ctx = gtk_widget_get_style_context(v->win);
		if (gtk_style_context_lookup_color(ctx, "theme_bg_color", &bg))
			dark = 0.2126 * bg.red + 0.7152 * bg.green + 0.0722 * bg.blue < 0.5;
		else {
			gboolean prefer = FALSE;
			g_object_get(gtk_settings_get_default(), "gtk-application-prefer-dark-theme",
			             &prefer, NULL);
			dark = prefer;
		}
	}
	if (dark != v->style.dark || !v->style.font[0]) {
		iogplot_style_init(&v->style, dark);
		iogplot_cache_clear(v->cache);
		gtk_widget_queue_draw(v->area);
	}
}

static void on_style_updated(GtkWidget *w, gpointer p)
{
	(void)w;
	iogv_win_set_theme(p);
}

static void on_settings_changed(GObject *o, GParamSpec *ps, gpointer p)
{
	(void)o;
	(void)ps;
	iogv_win_set_theme(p);
}

/* ---- the dashboard area ---- */

static int panel_rect(iogv_win *v, int p, iogplot_rect *r)
{
	double w = gtk_widget_get_allocated_width(v->area), h = gtk_widget_get_allocated_height(v->area);
	if (v->zoom_panel >= 0) {
		if (p != v->zoom_panel)
			return 0;
		*r = (iogplot_rect){ 8, 8, w - 16, h - 16 };
		return 1;
	}
	iogplot_rect all[IOGPLOT_NPANELS];
	iogplot_dashboard_layout(w, h, all);
	*r = all[p];
	return 1;
}

static int panel_at(iogv_win *v, double x, double y, iogplot_rect *r)
{
	for (int p = 0; p < IOGPLOT_NPANELS; p++)
		if (panel_rect(v, p, r) && x >= r->x && x < r->x + r->w && y >= r->y && y < r->y + r->h)
			return p;
	return -1;
}

static int is_time_panel(int p)
{
	const iogp_panel *e = iogp_panel_get(p);
	return e && e->time_axis;
}

static gboolean write_screenshot(gpointer p)
{
	iogv_win *v = p;
	int w = gtk_widget_get_allocated_width(v->win), h = gtk_widget_get_allocated_height(v->win);
	int sc = gtk_widget_get_scale_factor(v->win);
	cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, w * sc, h * sc);
	cairo_surface_set_device_scale(s, sc, sc);
	cairo_t *cr = cairo_create(s);
	gtk_widget_draw(v->win, cr);
	cairo_destroy(cr);
	cairo_status_t st = cairo_surface_write_to_png(s, v->screenshot_path);
	cairo_surface_destroy(s);
	if (st != CAIRO_STATUS_SUCCESS)
		iogv_win_error(v, "screenshot %s: %s", v->screenshot_path, cairo_status_to_string(st));
	else {
		/* where the dashboard is, for tests that look at pixels */
		int wx = 0, wy = 0, rx = 0, ry = 0;
		gtk_widget_translate_coordinates(v->area, v->win, 0, 0, &wx, &wy);
		gdk_window_get_origin(gtk_widget_get_window(v->area), &rx, &ry);
		GtkAllocation al;
		gtk_widget_get_allocation(v->area, &al);
		char pos[96] = "";
		if (iogv_is_replay(v->s)) {   /* and where a replay is */
			double a, b;
			iogv_replay_span(v->s, &a, &b);
			snprintf(pos, sizeof(pos), "; replay at %.1f s of %.1f s, %s", iogv_replay_pos(v->s) - a,
			         b - a, v->playing ? "playing" : "paused");
		}
		g_printerr("iogram-view: screenshot written to %s; dashboard %dx%d at window %d,%d "
		           "root %d,%d%s\n", v->screenshot_path, al.width, al.height, wx, wy, rx, ry, pos);
		int col = 0, widest = 0;
		if (v->side)
			iogv_sidebar_widths(v->side, &col, &widest);
		g_printerr("iogram-view: sidebar name column %d px, widest node name %d px\n", col, widest);
	}
	return G_SOURCE_REMOVE;
}

static gboolean on_draw(GtkWidget *w, cairo_t *cr, gpointer p)
{
	iogv_win *v = p;
	if (!v->have_frame || v->view_dirty)
		build_frame(v);
	double W = gtk_widget_get_allocated_width(w), H = gtk_widget_get_allocated_height(w);
	v->view.cache = v->cache;
	if (v->zoom_panel >= 0) {
		cairo_set_source_rgb(cr, v->style.bg.r, v->style.bg.g, v->style.bg.b);
		cairo_paint(cr);
		cairo_translate(cr, 8, 8);
		iogplot_panel(cr, &v->style, &v->frame, &v->view, v->zoom_panel, W - 16, H - 16);
	} else {
		iogplot_dashboard(cr, &v->style, &v->frame, &v->view, W, H);
	}
	/* test hook: once there is something to see (or an error, or 10 s) */
	if (v->screenshot_path && !v->screenshot_done &&
	    g_get_monotonic_time() - v->started_us >= v->screenshot_after_us &&
	    ((v->frame.nsources && v->frame.qd.total + v->frame.size[0].total + v->frame.size[1].total &&
	      (iogv_is_replay(v->s) || v->frame.rates.nbins)) ||
	     (v->frame.probes && v->frame.nprobe_hist) ||   /* a prober has no histograms */
	     v->frame.msgsize.total ||                      /* nor an MPI job without I/O */
	     gtk_widget_get_visible(v->infobar) || g_get_monotonic_time() - v->started_us > 10000000)) {
		v->screenshot_done = 1;
		g_timeout_add(300, write_screenshot, v);
	}
	return TRUE;
}

static gboolean fit_height(gpointer p)
{
	iogv_win *v = p;
	int w = gtk_widget_get_allocated_width(v->scroll);
	int want = v->zoom_panel >= 0 ? -1 : (int)iogplot_dashboard_min_height(w);
	int cur;
	gtk_widget_get_size_request(v->area, NULL, &cur);
	if (cur != want)
		gtk_widget_set_size_request(v->area, -1, want);
	return G_SOURCE_REMOVE;
}

static void on_scroll_allocate(GtkWidget *w, GdkRectangle *a, gpointer p)
{
	(void)w;
	(void)a;
	g_idle_add(fit_height, p);
}

static gboolean on_tooltip(GtkWidget *w, gint x, gint y, gboolean kb, GtkTooltip *tip, gpointer p)
{
	(void)w;
	(void)kb;
	iogv_win *v = p;
	iogplot_rect r;
	int panel = panel_at(v, x, y, &r);
	if (panel <= 0 || v->drag_panel >= 0 || !v->have_frame)
		return FALSE;
	char buf[1024];
	if (iogplot_panel_tooltip(&v->style, &v->frame, &v->view, panel, r.w, r.h, x - r.x, y - r.y,
	                          buf, sizeof(buf)) <= 0)
		return FALSE;
	gtk_tooltip_set_text(tip, buf);
	return TRUE;
}

static void time_range(iogv_win *v, int panel, const iogplot_rect *r, iogplot_geom *g)
{
	iogplot_panel_geom(&v->style, &v->frame, &v->view, panel, 0, r->w, r->h, g);
}

static gboolean on_scroll(GtkWidget *w, GdkEventScroll *e, gpointer p)
{
	(void)w;
	iogv_win *v = p;
	iogplot_rect r;
	int panel = panel_at(v, e->x, e->y, &r);
	if (!is_time_panel(panel))
		return FALSE;
	iogplot_geom g;
	time_range(v, panel, &r, &g);
	if (!(g.x1 > g.x0))
		return FALSE;
	double dir = 0;
	if (e->direction == GDK_SCROLL_UP)
		dir = -1;
	else if (e->direction == GDK_SCROLL_DOWN)
		dir = 1;
	else if (e->direction == GDK_SCROLL_SMOOTH)
		dir = e->delta_y;
	if (dir == 0)
		return FALSE;
	double f = pow(1.25, dir > 0 ? fmin(dir, 4) : fmax(dir, -4));
	double t = iogplot_geom_xval(&g, e->x - r.x);
	t = fmin(fmax(t, g.x0), g.x1);
	double lo = t - (t - g.x0) * f, hi = t + (g.x1 - t) * f;
	if (hi - lo < 5 || hi - lo > 7 * 86400)
		return TRUE;
	v->view.t_lo = lo;
	v->view.t_hi = hi;
	gtk_widget_queue_draw(v->area);
	return TRUE;
}

static void popup_menu(iogv_win *v, int panel, GdkEvent *e);

static gboolean on_press(GtkWidget *w, GdkEventButton *e, gpointer p)
{
	iogv_win *v = p;
	gtk_widget_grab_focus(w);
	iogplot_rect r;
	int panel = panel_at(v, e->x, e->y, &r);
	if (e->button == 3 && panel > 0) {
		popup_menu(v, panel, (GdkEvent *)e);
		return TRUE;
	}
	if (e->button != 1)
		return FALSE;
	if (e->type == GDK_2BUTTON_PRESS) {
		if (is_time_panel(panel)) {
			v->view.t_lo = v->view.t_hi = 0;   /* follow again */
			gtk_widget_queue_draw(v->area);
		}
		return TRUE;
	}
	/* a finding of the insights panel opens the panel that shows it */
	int link = panel > 0 && v->have_frame ? iogplot_panel_link(&v->style, &v->frame, &v->view, panel,
	                                                           r.w, r.h, e->x - r.x, e->y - r.y) : -1;
	if (link >= 0) {
		iogv_win_zoom(v, link);
		return TRUE;
	}
	/* a column header of the nodes table sorts by it (again: the other way) */
	int col = panel == IOGP_PANEL_NODES && v->have_frame ?
	          iogplot_nodes_header_at(&v->style, &v->frame, &v->view, r.w, r.h, e->x - r.x, e->y - r.y) : -1;
	if (col >= 0) {
		v->view.sort_desc = col == v->view.sort_col ? !v->view.sort_desc : iogp_nt_col_desc(col);
		v->view.sort_col = col;
		gtk_widget_queue_draw(v->area);
		return TRUE;
	}
	if (!is_time_panel(panel))
		return FALSE;
	iogplot_geom g;
	time_range(v, panel, &r, &g);
	v->drag_panel = panel;
	v->drag_x = e->x;
	v->drag_lo = g.x0;
	v->drag_hi = g.x1;
	v->dragged = 0;
	return TRUE;
}

static gboolean on_release(GtkWidget *w, GdkEventButton *e, gpointer p)
{
	(void)w;
	(void)e;
	iogv_win *v = p;
	v->drag_panel = -1;
	return FALSE;
}

static gboolean on_motion(GtkWidget *w, GdkEventMotion *e, gpointer p)
{
	(void)w;
	iogv_win *v = p;
	v->ptr_x = e->x;
	v->ptr_y = e->y;
	if (v->drag_panel < 0)
		return FALSE;
	iogplot_rect r;
	if (!panel_rect(v, v->drag_panel, &r))
		return FALSE;
	iogplot_geom g;
	v->view.t_lo = v->drag_lo;
	v->view.t_hi = v->drag_hi;
	time_range(v, v->drag_panel, &r, &g);
	if (g.plot.w < 1)
		return FALSE;
	double shift = -(e->x - v->drag_x) / g.plot.w * (v->drag_hi - v->drag_lo);
	v->view.t_lo = v->drag_lo + shift;
	v->view.t_hi = v->drag_hi + shift;
	v->dragged = 1;
	gtk_widget_queue_draw(v->area);
	return TRUE;
}

/* ---- context menu ---- */

typedef struct menu_ctx {
	iogv_win *v;
	int panel;
} menu_ctx;

static menu_ctx menu_target;

void iogv_win_toggle_log(iogv_win *v, unsigned *mask, int panel)
{
	*mask ^= 1u << panel;
	gtk_widget_queue_draw(v->area);
}

static void on_menu_logy(GtkMenuItem *i, gpointer p)
{
	(void)i;
	(void)p;
	iogv_win_toggle_log(menu_target.v, &menu_target.v->view.logy, menu_target.panel);
}

static void on_menu_logx(GtkMenuItem *i, gpointer p)
{
	(void)i;
	(void)p;
	iogv_win_toggle_log(menu_target.v, &menu_target.v->view.logx, menu_target.panel);
}

static void on_menu_weight(GtkMenuItem *i, gpointer p)
{
	(void)i;
	(void)p;
	iogv_win *v = menu_target.v;
	v->args.weight = v->view.size_weight = iogp_size_weight_step(v->view.size_weight);
	gtk_widget_queue_draw(v->area);
}

static void on_menu_zoom(GtkMenuItem *i, gpointer p)
{
	(void)i;
	(void)p;
	iogv_win *v = menu_target.v;
	v->zoom_panel = v->zoom_panel >= 0 ? -1 : menu_target.panel;
	fit_height(v);
	gtk_widget_queue_draw(v->area);
}

static void on_menu_export(GtkMenuItem *i, gpointer p)
{
	(void)i;
	(void)p;
	iogv_win_export_dialog(menu_target.v, menu_target.panel, 0);
}

static void on_menu_follow(GtkMenuItem *i, gpointer p)
{
	(void)i;
	(void)p;
	menu_target.v->view.t_lo = menu_target.v->view.t_hi = 0;
	gtk_widget_queue_draw(menu_target.v->area);
}

/* "what (key)": the key of the action from the shared table, for panel
 * actions the panel's own digit. */
static void menu_text(char *buf, size_t len, const char *what, int action, int panel)
{
	const iogp_panel *e = iogp_panel_get(panel);
	char label[32] = "";
	if (action == IOGP_ACT_PANEL && e && e->key)
		snprintf(label, sizeof(label), "%c", e->key);
	else
		iogv_action_label(action, label, sizeof(label));
	snprintf(buf, len, label[0] ? "%s (%s)" : "%s", what, label);
}

static void popup_menu(iogv_win *v, int panel, GdkEvent *e)
{
	menu_target = (menu_ctx){ v, panel };
	GtkWidget *m = gtk_menu_new();
	GtkWidget *it;
	char text[96];
	menu_text(text, sizeof(text), "Logarithmic counts / rates", IOGP_ACT_LOG, 0);
	it = gtk_check_menu_item_new_with_label(text);
	gtk_check_menu_item_set_active(GTK_CHECK_MENU_ITEM(it), !!(v->view.logy & (1u << panel)));
	g_signal_connect(it, "activate", G_CALLBACK(on_menu_logy), NULL);
	gtk_menu_shell_append(GTK_MENU_SHELL(m), it);
	if (iogp_panel_get(panel)->data == IOGP_DATA_HIST) {
		menu_text(text, sizeof(text), "Logarithmic values", IOGP_ACT_LOGX, 0);
		it = gtk_check_menu_item_new_with_label(text);
		gtk_check_menu_item_set_active(GTK_CHECK_MENU_ITEM(it), !!(v->view.logx & (1u << panel)));
		g_signal_connect(it, "activate", G_CALLBACK(on_menu_logx), NULL);
		gtk_menu_shell_append(GTK_MENU_SHELL(m), it);
	}
	if (panel == IOGP_PANEL_SIZE) {   /* the share of the data moved at each size */
		menu_text(text, sizeof(text), "Weight by bytes", IOGP_ACT_WEIGHT, 0);
		it = gtk_check_menu_item_new_with_label(text);
		gtk_check_menu_item_set_active(GTK_CHECK_MENU_ITEM(it),
		                               v->view.size_weight == IOGP_WEIGHT_BYTES);
		g_signal_connect(it, "activate", G_CALLBACK(on_menu_weight), NULL);
		gtk_menu_shell_append(GTK_MENU_SHELL(m), it);
	}
	if (is_time_panel(panel)) {
		menu_text(text, sizeof(text), "Follow the latest time", IOGP_ACT_FOLLOW, 0);
		it = gtk_menu_item_new_with_label(text);
		g_signal_connect(it, "activate", G_CALLBACK(on_menu_follow), NULL);
		gtk_menu_shell_append(GTK_MENU_SHELL(m), it);
	}
	if (v->zoom_panel >= 0)
		menu_text(text, sizeof(text), "Back to the dashboard", IOGP_ACT_ESCAPE, 0);
	else
		menu_text(text, sizeof(text), "Show only this panel", IOGP_ACT_PANEL, panel);
	it = gtk_menu_item_new_with_label(text);
	g_signal_connect(it, "activate", G_CALLBACK(on_menu_zoom), NULL);
	gtk_menu_shell_append(GTK_MENU_SHELL(m), it);
	it = gtk_menu_item_new_with_label("Export this panel…");
	g_signal_connect(it, "activate", G_CALLBACK(on_menu_export), NULL);
	gtk_menu_shell_append(GTK_MENU_SHELL(m), it);
	gtk_widget_show_all(m);
	gtk_menu_attach_to_widget(GTK_MENU(m), v->area, NULL);
	gtk_menu_popup_at_pointer(GTK_MENU(m), e);
}

/* ---- export ---- */

void iogv_win_export(iogv_win *v, const char *path, int panel)
{
	char err[600] = "";
	const char *dot = strrchr(path, '.');
	if (!v->have_frame)
		build_frame(v);
	if (dot && !g_ascii_strcasecmp(dot, ".csv")) {
		char *dir = g_strndup(path, (gsize)(dot - path)), names[1024];
		int rc = iogplot_export_csv(dir, &v->frame, panel, names, sizeof(names), err, sizeof(err));
		if (rc < 0)
			iogv_win_error(v, "export failed: %s", err);
		else
			iogv_win_info(v, "Exported %s to %s/", names, dir);
		g_free(dir);
		return;
	}
	if (!iogplot_export_format(path)) {
		iogv_win_error(v, "export failed: %s: use a name ending in .png, .svg, .pdf or .csv", path);
		return;
	}
	iogplot_rect r = { 0, 0, gtk_widget_get_allocated_width(v->area),
	                   gtk_widget_get_allocated_height(v->area) };
	if (panel >= 0 && !panel_rect(v, panel, &r))
		r = (iogplot_rect){ 0, 0, 900, 520 };
	if (r.w < 300 || r.h < 200) {
		r.w = panel >= 0 ? 900 : 1600;
		r.h = panel >= 0 ? 520 : 1000;
	}
	double scale = gtk_widget_get_scale_factor(v->area);
	if (iogplot_export(path, &v->style, &v->frame, &v->view, panel, r.w, r.h, scale, err,
	                   sizeof(err)) < 0)
		iogv_win_error(v, "export failed: %s", err);
	else
		iogv_win_info(v, "Exported %s to %s", panel >= 0 ? iogp_panel_title(panel) :
		              "the dashboard", path);
}

void iogv_win_export_dialog(iogv_win *v, int panel, int csv)
{
	GtkWidget *d = gtk_file_chooser_dialog_new("Export", GTK_WINDOW(v->win),
	                                           GTK_FILE_CHOOSER_ACTION_SAVE, "_Cancel",
	                                           GTK_RESPONSE_CANCEL, "_Export",
	                                           GTK_RESPONSE_ACCEPT, NULL);
	GtkFileChooser *fc = GTK_FILE_CHOOSER(d);
	gtk_file_chooser_set_do_overwrite_confirmation(fc, TRUE);
	GtkWidget *box = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 8);
	GtkWidget *what = gtk_combo_box_text_new();
	gtk_combo_box_text_append(GTK_COMBO_BOX_TEXT(what), "dashboard", "Whole dashboard");
	for (int p = 0; p < IOGP_PANEL_N; p++)
		if (iogp_panel_get(p)->viewers & IOGP_VIEWER_GTK)
			gtk_combo_box_text_append(GTK_COMBO_BOX_TEXT(what), iogp_panel_name(p),
			                          iogp_panel_title(p));
	gtk_combo_box_set_active_id(GTK_COMBO_BOX(what), iogp_panel_name(panel));
	gtk_box_pack_start(GTK_BOX(box), gtk_label_new("Export:"), FALSE, FALSE, 0);
	gtk_box_pack_start(GTK_BOX(box), what, FALSE, FALSE, 0);
	gtk_box_pack_start(GTK_BOX(box),
	                   gtk_label_new("Format by name: .png .svg .pdf, or .csv for a folder of CSV files"),
	                   FALSE, FALSE, 0);
	gtk_widget_show_all(box);
	gtk_file_chooser_set_extra_widget(fc, box);
	char name[64];
	snprintf(name, sizeof(name), "iogram-%s.%s", iogp_panel_name(panel), csv ? "csv" : "png");
	gtk_file_chooser_set_current_name(fc, name);
	if (gtk_dialog_run(GTK_DIALOG(d)) == GTK_RESPONSE_ACCEPT) {
		char *path = gtk_file_chooser_get_filename(fc);
		const char *id = gtk_combo_box_get_active_id(GTK_COMBO_BOX(what));
		int p = iogp_panel_find(id ? id : "dashboard");
		gtk_widget_destroy(d);
		if (path)
			iogv_win_export(v, path, p < 0 ? -1 : p);
		else
			iogv_win_error(v, "export failed: not a local file");
		g_free(path);
		return;
	}
	gtk_widget_destroy(d);
}

static void on_export_clicked(GtkButton *b, gpointer p)
{
	(void)b;
	iogv_win_export_dialog(p, -1, 0);
}

/* ---- open, connect, record ---- */

int iogv_win_use_session(iogv_win *v, iogv_session *s)
{
	if (v->s && v->s != s)
		iogv_session_free(v->s);
	v->s = s;
	iogv_set_table(s, v->rows, v->view.heat_p99);
	iogv_play(v, 0);
	v->view.t_lo = v->view.t_hi = 0;
	v->sel = (iogp_sel){ .kind = IOGP_SEL_ALL };
	v->nhighlight = 0;
	iogplot_series_free(&v->frame.rates);
	v->view_dirty = 1;
	gtk_header_bar_set_subtitle(GTK_HEADER_BAR(v->header), iogv_title(s));
	if (v->side)
		iogv_sidebar_reset(v->side);
	if (v->tl)
		iogv_timeline_reset(v->tl);
	gtk_widget_set_sensitive(v->rec_btn, !iogv_is_replay(s));
	iogv_win_changed(v, 1);
	return 0;
}

static void on_open(GtkButton *b, gpointer p)
{
	(void)b;
	iogv_win *v = p;
	GtkWidget *d = gtk_file_chooser_dialog_new("Open a recording", GTK_WINDOW(v->win),
	                                           GTK_FILE_CHOOSER_ACTION_OPEN, "_Cancel",
	                                           GTK_RESPONSE_CANCEL, "_Open", GTK_RESPONSE_ACCEPT,
	                                           NULL);
	GtkFileFilter *f = gtk_file_filter_new();
	gtk_file_filter_set_name(f, "iogram recordings (*.iogr)");
	gtk_file_filter_add_pattern(f, "*.iogr");
	gtk_file_chooser_add_filter(GTK_FILE_CHOOSER(d), f);
	f = gtk_file_filter_new();
	gtk_file_filter_set_name(f, "All files");
	gtk_file_filter_add_pattern(f, "*");
	gtk_file_chooser_add_filter(GTK_FILE_CHOOSER(d), f);
	char *path = NULL;
	if (gtk_dialog_run(GTK_DIALOG(d)) == GTK_RESPONSE_ACCEPT)
		path = gtk_file_chooser_get_filename(GTK_FILE_CHOOSER(d));
	gtk_widget_destroy(d);
	if (!path)
		return;
	char err[600] = "";
	iogv_opts o = { .history_s = v->args.history_s, .any_address = v->args.any_address,
	                .layer = v->args.layer };
	iogv_session *s = iogv_session_new(&o);
	int rc = s ? iogv_open_replay(s, path, err, sizeof(err)) : IOGP_ENOMEM;
	if (rc < 0) {
		if (strstr(err, path))
			iogv_win_error(v, "cannot open a recording: %s", err);
		else
			iogv_win_error(v, "cannot open %s: %s", path, err[0] ? err : iogp_strerror(rc));
		iogv_session_free(s);
	} else {
		iogv_win_use_session(v, s);
		gtk_widget_hide(v->infobar);
		iogv_play(v, 1);   /* from the start, as iogram-top */
	}
	g_free(path);
}

static void live_endpoint(iogv_win *v, GtkEntry *e, int listen)
{
	const char *ep = gtk_entry_get_text(e);
	if (!ep || !ep[0])
		ep = IOGP_DEFAULT_ENDPOINT;
	char err[600] = "";
	iogv_session *s = v->s;
	int fresh = !iogv_is_live(v->s);
	if (fresh) {
		iogv_opts o = { .history_s = v->args.history_s, .any_address = v->args.any_address,
	                .layer = v->args.layer };
		if (!(s = iogv_session_new(&o))) {
			iogv_win_error(v, "out of memory");
			return;
		}
	}
	int rc = listen ? iogv_listen(s, ep, err, sizeof(err)) : iogv_connect(s, ep, err, sizeof(err));
	if (rc < 0) {
		iogv_win_error(v, "%s", err);
		if (fresh)
			iogv_session_free(s);
		return;
	}
	if (fresh)
		iogv_win_use_session(v, s);
	else
		gtk_header_bar_set_subtitle(GTK_HEADER_BAR(v->header), iogv_title(s));
	iogv_win_info(v, "%s %s", listen ? "Listening on" : "Connecting to", ep);
}

static void on_listen(GtkButton *b, gpointer e)
{
	iogv_win *v = g_object_get_data(G_OBJECT(b), "win");
	live_endpoint(v, e, 1);
}

static void on_connect(GtkButton *b, gpointer e)
{
	iogv_win *v = g_object_get_data(G_OBJECT(b), "win");
	live_endpoint(v, e, 0);
}

static GtkWidget *connect_button(iogv_win *v)
{
	GtkWidget *mb = gtk_menu_button_new();
	gtk_button_set_image(GTK_BUTTON(mb),
	                     gtk_image_new_from_icon_name("network-wired-symbolic", GTK_ICON_SIZE_BUTTON));
	gtk_widget_set_tooltip_text(mb, "Listen on or connect to an endpoint");
	GtkWidget *pop = gtk_popover_new(mb);
	GtkWidget *grid = gtk_grid_new();
	gtk_grid_set_row_spacing(GTK_GRID(grid), 6);
	gtk_grid_set_column_spacing(GTK_GRID(grid), 6);
	g_object_set(grid, "margin", 10, NULL);
	GtkWidget *entry = gtk_entry_new();
	gtk_entry_set_placeholder_text(GTK_ENTRY(entry), IOGP_DEFAULT_ENDPOINT);
	gtk_entry_set_width_chars(GTK_ENTRY(entry), 32);
	GtkWidget *lb = gtk_button_new_with_label("Listen");
	GtkWidget *cb = gtk_button_new_with_label("Connect");
	gtk_widget_set_tooltip_text(lb, "Bind the endpoint: agents connect to it");
	gtk_widget_set_tooltip_text(cb, "Connect to a relay's publish endpoint");
	g_object_set_data(G_OBJECT(lb), "win", v);
	g_object_set_data(G_OBJECT(cb), "win", v);
	g_signal_connect(lb, "clicked", G_CALLBACK(on_listen), entry);
	g_signal_connect(cb, "clicked", G_CALLBACK(on_connect), entry);
	gtk_grid_attach(GTK_GRID(grid), gtk_label_new("Endpoint"), 0, 0, 1, 1);
	gtk_grid_attach(GTK_GRID(grid), entry, 1, 0, 2, 1);
	gtk_grid_attach(GTK_GRID(grid), lb, 1, 1, 1, 1);
	gtk_grid_attach(GTK_GRID(grid), cb, 2, 1, 1, 1);
	gtk_widget_show_all(grid);
	gtk_container_add(GTK_CONTAINER(pop), grid);
	gtk_menu_button_set_popover(GTK_MENU_BUTTON(mb), pop);
	return mb;
}

static void on_record_toggled(GtkToggleButton *b, gpointer p)
{
	iogv_win *v = p;
	char err[600] = "";
	int on = gtk_toggle_button_get_active(b);
	if (on == (iogv_recording(v->s) != NULL))
		return;
	if (!on) {
		const char *path = iogv_recording(v->s);
		char *keep = g_strdup(path);
		if (iogv_record_stop(v->s, err, sizeof(err)) < 0)
			iogv_win_error(v, "recording: %s", err);
		else
			iogv_win_info(v, "Recorded to %s", keep);
		g_free(keep);
		iogv_win_changed(v, 1);
		return;
	}
	GtkWidget *d = gtk_file_chooser_dialog_new("Record to", GTK_WINDOW(v->win),
	                                           GTK_FILE_CHOOSER_ACTION_SAVE, "_Cancel",
	                                           GTK_RESPONSE_CANCEL, "_Record", GTK_RESPONSE_ACCEPT,
	                                           NULL);
	gtk_file_chooser_set_do_overwrite_confirmation(GTK_FILE_CHOOSER(d), TRUE);
	GDateTime *now = g_date_time_new_now_local();
	char *name = g_date_time_format(now, "iogram-%Y%m%d-%H%M%S.iogr");
	gtk_file_chooser_set_current_name(GTK_FILE_CHOOSER(d), name);
	g_free(name);
	g_date_time_unref(now);
	char *path = NULL;
	if (gtk_dialog_run(GTK_DIALOG(d)) == GTK_RESPONSE_ACCEPT)
		path = gtk_file_chooser_get_filename(GTK_FILE_CHOOSER(d));
	gtk_widget_destroy(d);
	if (!path || iogv_record_start(v->s, path, err, sizeof(err)) < 0) {
		if (path)
			iogv_win_error(v, "cannot record: %s", err);
		g_signal_handlers_block_by_func(b, on_record_toggled, p);
		gtk_toggle_button_set_active(b, FALSE);
		g_signal_handlers_unblock_by_func(b, on_record_toggled, p);
	}
	g_free(path);
	iogv_win_changed(v, 1);
}

static void on_window_changed(GtkComboBox *c, gpointer p)
{
	iogv_win *v = p;
	const char *id = gtk_combo_box_get_active_id(c);
	v->window_s = id ? g_ascii_strtod(id, NULL) : 0;
	v->view_dirty = 1;
	iogv_win_changed(v, 1);
}

/* ---- live polling ---- */


static gboolean on_poll(gpointer p)
{
	iogv_win *v = p;
	if (v->demo)
		demo_tick(v->demo);
	if (!iogv_is_live(v->s))
		return G_SOURCE_CONTINUE;
	iogv_poll(v->s, 0);
	char ev[1024];
	if (iogv_take_events(v->s, ev, sizeof(ev)) > 0) {
		size_t n = strlen(ev);
		while (n && ev[n - 1] == '\n')
			ev[--n] = 0;
		if (strstr(ev, "not reachable") || strstr(ev, "failed"))
			iogv_win_error(v, "%s", ev);
		else if (strstr(ev, "connected") && !strstr(ev, "disconnected"))
			iogv_win_info(v, "%s", ev);
	}
	iogv_win_changed(v, 0);
	return G_SOURCE_CONTINUE;
}

/* ---- what keys.c acts on ---- */

int iogv_win_pointer_panel(iogv_win *v)
{
	if (v->zoom_panel >= 0)
		return v->zoom_panel;
	iogplot_rect r;
	int p = panel_at(v, v->ptr_x, v->ptr_y, &r);
	return p > 0 ? p : -1;
}

void iogv_win_zoom(iogv_win *v, int panel)
{
	v->zoom_panel = v->zoom_panel == panel ? -1 : panel;
	fit_height(v);
	gtk_widget_queue_draw(v->area);
}

void iogv_win_open(iogv_win *v)
{
	on_open(NULL, v);
}

/* ---- building ---- */

static GtkWidget *icon_button(const char *icon, const char *tip)
{
	GtkWidget *b = gtk_button_new_from_icon_name(icon, GTK_ICON_SIZE_BUTTON);
	gtk_widget_set_tooltip_text(b, tip);
	return b;
}

GtkWidget *iogv_win_build(iogv_win *v)
{
	v->drag_panel = -1;
	v->zoom_panel = -1;
	v->started_us = g_get_monotonic_time();
	v->speed = v->args.speed > 0 ? v->args.speed : 1;
	v->window_s = v->args.window_s;
	v->cache = iogplot_cache_new();
	iogplot_view_init(&v->view);
	v->view.size_weight = v->args.weight;
	iogplot_frame_init(&v->frame);
	v->sel = (iogp_sel){ .kind = IOGP_SEL_ALL };
	v->theme_forced = v->args.dark >= 0;
	if (v->theme_forced)
		g_object_set(gtk_settings_get_default(), "gtk-application-prefer-dark-theme",
		             v->args.dark == 1, NULL);
	const char *shot = g_getenv("IOGRAM_VIEW_SCREENSHOT");
	if (shot && shot[0])
		v->screenshot_path = g_strdup(shot);
	const char *after = g_getenv("IOGRAM_VIEW_SCREENSHOT_AFTER");   /* seconds */
	if (after)
		v->screenshot_after_us = (gint64)(g_ascii_strtod(after, NULL) * 1e6);

	GtkWidget *win = gtk_application_window_new(v->app);
	v->win = win;
	gtk_window_set_default_size(GTK_WINDOW(win), 1280, 800);
	gtk_window_set_title(GTK_WINDOW(win), "iogram-view");
	gtk_window_set_icon_name(GTK_WINDOW(win), "utilities-system-monitor");

	GtkWidget *hb = gtk_header_bar_new();
	v->header = hb;
	gtk_header_bar_set_show_close_button(GTK_HEADER_BAR(hb), TRUE);
	gtk_header_bar_set_title(GTK_HEADER_BAR(hb), "iogram-view");
	GtkWidget *open = icon_button("document-open-symbolic", "Open a recording (Ctrl+O)");
	g_signal_connect(open, "clicked", G_CALLBACK(on_open), v);
	gtk_header_bar_pack_start(GTK_HEADER_BAR(hb), open);
	gtk_header_bar_pack_start(GTK_HEADER_BAR(hb), connect_button(v));
	v->rec_btn = gtk_toggle_button_new();
	gtk_button_set_image(GTK_BUTTON(v->rec_btn),
	                     gtk_image_new_from_icon_name("media-record-symbolic", GTK_ICON_SIZE_BUTTON));
	gtk_widget_set_tooltip_text(v->rec_btn, "Record the live stream to a file (R)");
	g_signal_connect(v->rec_btn, "toggled", G_CALLBACK(on_record_toggled), v);
	gtk_header_bar_pack_start(GTK_HEADER_BAR(hb), v->rec_btn);
	v->export_btn = icon_button("document-save-as-symbolic", "Export PNG, SVG, PDF or CSV (Ctrl+E)");
	g_signal_connect(v->export_btn, "clicked", G_CALLBACK(on_export_clicked), v);
	gtk_header_bar_pack_end(GTK_HEADER_BAR(hb), v->export_btn);
	v->window_combo = gtk_combo_box_text_new();
	gtk_combo_box_text_append(GTK_COMBO_BOX_TEXT(v->window_combo), "0", "Since start");
	gtk_combo_box_text_append(GTK_COMBO_BOX_TEXT(v->window_combo), "10", "Last 10 s");
	gtk_combo_box_text_append(GTK_COMBO_BOX_TEXT(v->window_combo), "60", "Last 60 s");
	gtk_combo_box_text_append(GTK_COMBO_BOX_TEXT(v->window_combo), "300", "Last 300 s");
	char wid[16];
	snprintf(wid, sizeof(wid), "%.0f", v->window_s);
	if (!gtk_combo_box_set_active_id(GTK_COMBO_BOX(v->window_combo), wid))
		gtk_combo_box_set_active_id(GTK_COMBO_BOX(v->window_combo), "0");
	gtk_widget_set_tooltip_text(v->window_combo, "Histograms since the start or of the last seconds (w)");
	g_signal_connect(v->window_combo, "changed", G_CALLBACK(on_window_changed), v);
	gtk_header_bar_pack_end(GTK_HEADER_BAR(hb), v->window_combo);
	gtk_window_set_titlebar(GTK_WINDOW(win), hb);

	GtkWidget *vbox = gtk_box_new(GTK_ORIENTATION_VERTICAL, 0);
	v->infobar = gtk_info_bar_new();
	gtk_info_bar_set_show_close_button(GTK_INFO_BAR(v->infobar), TRUE);
	v->info_label = gtk_label_new("");
	gtk_label_set_line_wrap(GTK_LABEL(v->info_label), TRUE);
	gtk_label_set_xalign(GTK_LABEL(v->info_label), 0);
	gtk_label_set_selectable(GTK_LABEL(v->info_label), TRUE);
	gtk_container_add(GTK_CONTAINER(gtk_info_bar_get_content_area(GTK_INFO_BAR(v->infobar))),
	                  v->info_label);
	g_signal_connect(v->infobar, "response", G_CALLBACK(on_bar_response), v);
	gtk_box_pack_start(GTK_BOX(vbox), v->infobar, FALSE, FALSE, 0);

	v->paned = gtk_paned_new(GTK_ORIENTATION_HORIZONTAL);
	GtkWidget *side = NULL;
	v->side = iogv_sidebar_new(v, &side);
	gtk_paned_pack1(GTK_PANED(v->paned), side, FALSE, TRUE);
	GtkWidget *right = gtk_box_new(GTK_ORIENTATION_VERTICAL, 0);
	v->scroll = gtk_scrolled_window_new(NULL, NULL);
	gtk_scrolled_window_set_policy(GTK_SCROLLED_WINDOW(v->scroll), GTK_POLICY_NEVER,
	                               GTK_POLICY_AUTOMATIC);
	v->area = gtk_drawing_area_new();
	gtk_widget_set_can_focus(v->area, TRUE);
	gtk_widget_add_events(v->area, GDK_BUTTON_PRESS_MASK | GDK_BUTTON_RELEASE_MASK |
	                      GDK_POINTER_MOTION_MASK | GDK_SCROLL_MASK | GDK_SMOOTH_SCROLL_MASK);
	gtk_widget_set_has_tooltip(v->area, TRUE);
	g_signal_connect(v->area, "draw", G_CALLBACK(on_draw), v);
	g_signal_connect(v->area, "query-tooltip", G_CALLBACK(on_tooltip), v);
	g_signal_connect(v->area, "scroll-event", G_CALLBACK(on_scroll), v);
	g_signal_connect(v->area, "button-press-event", G_CALLBACK(on_press), v);
	g_signal_connect(v->area, "button-release-event", G_CALLBACK(on_release), v);
	g_signal_connect(v->area, "motion-notify-event", G_CALLBACK(on_motion), v);
	g_signal_connect(v->scroll, "size-allocate", G_CALLBACK(on_scroll_allocate), v);
	gtk_container_add(GTK_CONTAINER(v->scroll), v->area);
	gtk_box_pack_start(GTK_BOX(right), v->scroll, TRUE, TRUE, 0);
	GtkWidget *tl = NULL;
	v->tl = iogv_timeline_new(v, &tl);
	gtk_box_pack_start(GTK_BOX(right), tl, FALSE, FALSE, 0);
	gtk_paned_pack2(GTK_PANED(v->paned), right, TRUE, FALSE);
	gtk_paned_set_position(GTK_PANED(v->paned), 340);   /* node names whole beside four columns */
	gtk_box_pack_start(GTK_BOX(vbox), v->paned, TRUE, TRUE, 0);
	gtk_container_add(GTK_CONTAINER(win), vbox);

	g_signal_connect(win, "key-press-event", G_CALLBACK(iogv_keys_press), v);
	g_signal_connect(win, "style-updated", G_CALLBACK(on_style_updated), v);
	g_signal_connect(gtk_settings_get_default(), "notify::gtk-theme-name",
	                 G_CALLBACK(on_settings_changed), v);
	g_signal_connect(gtk_settings_get_default(), "notify::gtk-application-prefer-dark-theme",
	                 G_CALLBACK(on_settings_changed), v);
	v->poll_id = g_timeout_add(100, on_poll, v);
	gtk_widget_show_all(win);
	gtk_widget_hide(v->infobar);
	iogv_win_set_theme(v);
	return win;
}

void iogv_win_destroy(iogv_win *v)
{
	if (v->poll_id)
		g_source_remove(v->poll_id);
	v->poll_id = 0;
	iogv_seek_stop(v);
	g_signal_handlers_disconnect_by_data(gtk_settings_get_default(), v);
	iogv_play(v, 0);
	iogv_sidebar_free(v->side);
	iogv_timeline_free(v->tl);
	v->side = NULL;
	v->tl = NULL;
	iogplot_cache_free(v->cache);
	v->cache = NULL;
	iogplot_frame_free(&v->frame);
	for (int i = 0; i < v->nhighlight; i++)
		g_free(v->highlight[i]);
	v->nhighlight = 0;
	g_free(v->screenshot_path);
	v->screenshot_path = NULL;
}
