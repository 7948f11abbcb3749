/* app.c - iogram-view's GtkApplication: one window fed by the command
 * line's sources (replay, endpoints, --record, --demo); SIGINT/SIGTERM quit
 * cleanly so demo workers and recordings are closed. */
#include <glib-unix.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app.h"

static iogv_win win;

static iogv_session *start_sources(iogv_win *v)
{
	const iogv_args *a = &v->args;
	char err[600] = "";
	iogv_opts o = { .history_s = a->history_s, .any_address = a->any_address };
	iogv_session *s = iogv_session_new(&o);
	if (!s) {
		g_printerr("iogram-view: out of memory\n");
		return NULL;
	}
	if (a->replay) {
		int rc = iogv_open_replay(s, a->replay, err, sizeof(err));
		if (rc < 0) {
			if (strstr(err, a->replay))
				iogv_win_error(v, "cannot open a recording: %s", err);
			else
				iogv_win_error(v, "cannot open %s: %s", a->replay, err[0] ? err : iogp_strerror(rc));
			return s;
		}
		double start, end;
		iogv_replay_span(s, &start, &end);
		/* the start (then it plays, as in iogram-top); --at S: paused at S,
		 * negative (-0: the end) from the end */
		double t = a->have_at ? (signbit(a->at) ? end + a->at : start + a->at) : start;
		iogv_replay_seek(s, t);
		return s;
	}
	int ok = 0;
	for (int i = 0; i < a->nlisten; i++) {
		if (iogv_listen(s, a->listen[i], err, sizeof(err)) < 0)
			iogv_win_error(v, "%s", err);
		else
			ok++;
	}
	for (int i = 0; i < a->nconnect; i++) {
		if (iogv_connect(s, a->connect[i], err, sizeof(err)) < 0)
			iogv_win_error(v, "%s", err);
		else
			ok++;
	}
	if (a->demo) {
		char ep[256];
		if (iogv_listen(s, "tcp://127.0.0.1:*", err, sizeof(err)) < 0 ||
		    iogv_last_endpoint(s, ep, sizeof(ep)) < 0) {
			iogv_win_error(v, "demo: %s", err[0] ? err : "no endpoint");
		} else {
			if (demo_start(&v->demo, ep, err, sizeof(err)) < 0) {
				v->demo = NULL;
				iogv_win_error(v, "%s", err);
			}
			ok++;
		}
	}
	if (!a->nlisten && !a->nconnect && !a->demo) {
		if (iogv_listen(s, IOGP_DEFAULT_ENDPOINT, err, sizeof(err)) < 0)
			iogv_win_error(v, "%s (is iogram-top or iogram record listening there? "
			               "Use --listen or --connect, or open a recording)", err);
		else
			ok++;
	}
	if (a->record && ok) {
		if (iogv_record_start(s, a->record, err, sizeof(err)) < 0)
			iogv_win_error(v, "cannot record: %s", err);
	}
	return s;
}

static void on_destroy(GtkWidget *w, gpointer p)
{
	(void)w;
	iogv_win_destroy(p);
}

static void on_activate(GtkApplication *app, gpointer p)
{
	iogv_win *v = p;
	if (v->win) {
		gtk_window_present(GTK_WINDOW(v->win));
		return;
	}
	v->app = app;
	GtkWidget *w = iogv_win_build(v);
	g_signal_connect(w, "destroy", G_CALLBACK(on_destroy), v);
	iogv_session *s = start_sources(v);
	if (!s) {
		gtk_widget_destroy(w);
		return;
	}
	/* errors from start_sources stay in the bar */
	v->s = s;
	gboolean bar = gtk_widget_get_visible(v->infobar);
	iogv_win_use_session(v, s);
	if (iogv_recording(s)) {
		g_signal_handlers_block_matched(v->rec_btn, G_SIGNAL_MATCH_DATA, 0, 0, NULL, NULL, v);
		gtk_toggle_button_set_active(GTK_TOGGLE_BUTTON(v->rec_btn), TRUE);
		g_signal_handlers_unblock_matched(v->rec_btn, G_SIGNAL_MATCH_DATA, 0, 0, NULL, NULL, v);
	}
	if (v->args.node) {
		v->sel = (iogp_sel){ .kind = IOGP_SEL_NODE, .node = v->args.node };
		v->highlight[0] = g_strdup(v->args.node);
		v->nhighlight = 1;
		v->view_dirty = 1;
		iogv_win_changed(v, 1);
	}
	if (!bar)
		gtk_widget_hide(v->infobar);
	if (v->args.replay && !v->args.have_at)
		iogv_play(v, 1);
}

static gboolean on_signal(gpointer p)
{
	g_application_quit(G_APPLICATION(p));
	return G_SOURCE_CONTINUE;
}

int iogv_app_run(const iogv_args *a, int argc, char **argv)
{
	memset(&win, 0, sizeof(win));
	win.args = *a;
	if (!gtk_init_check(&argc, &argv)) {
		g_printerr("iogram-view: cannot open a display (is DISPLAY or WAYLAND_DISPLAY set?). "
		           "Headless: iogram-view --replay FILE --snapshot OUT.png\n");
		return IOGP_EXIT_ERROR;
	}
	GtkApplication *app = gtk_application_new("org.iogram.View", G_APPLICATION_NON_UNIQUE);
	g_signal_connect(app, "activate", G_CALLBACK(on_activate), &win);
	g_unix_signal_add(SIGINT, on_signal, app);
	g_unix_signal_add(SIGTERM, on_signal, app);
	int status = g_application_run(G_APPLICATION(app), argc, argv);
	if (win.win)
		gtk_widget_destroy(win.win);
	if (win.demo)
		demo_stop(win.demo);
	win.demo = NULL;
	char err[256];
	if (win.s && iogv_recording(win.s) && iogv_record_stop(win.s, err, sizeof(err)) < 0)
		g_printerr("iogram-view: %s\n", err);
	iogv_session_free(win.s);
	win.s = NULL;
	g_object_unref(app);
	return status ? IOGP_EXIT_ERROR : IOGP_EXIT_OK;
}
