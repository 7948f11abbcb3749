/* app.h - iogram-view's window: state shared by the window, the sidebar and
 * the replay timeline (GTK only). */
#ifndef IOGV_APP_H
#define IOGV_APP_H

#include <gtk/gtk.h>

#include "view.h"
#include "iogp_actions.h"

#include "demo.h"

typedef struct iogv_win {
	GtkApplication *app;
	GtkWidget *win, *header, *infobar, *info_label, *area, *scroll, *paned;
	GtkWidget *rec_btn, *window_combo, *export_btn;
	GtkWidget *help;          /* the keys dialog while it is open */
	iogv_args args;
	iogv_session *s;
	int theme_forced;
	iogplot_style style;
	iogplot_view view;
	iogplot_cache *cache;
	iogplot_frame frame;
	uint64_t frame_gen;       /* session generation the frame was built at */
	int view_dirty;           /* frame must be rebuilt (selection, window, ...) */
	gint64 built_us;          /* when the frame was last built */
	int have_frame;
	/* selection */
	iogp_sel sel;
	char sel_node[256];
	char *highlight[4];
	int nhighlight;
	double window_s;
	int rows;                 /* nodes table: IOGP_NT_NODES / IOGP_NT_SOURCES (t) */
	int zoom_panel;           /* -1: dashboard; else one panel fills the area */
	/* replay */
	int playing;
	double speed;
	guint tick_id;
	gint64 tick_last_us;
	guint seek_id;            /* an idle source reading a seek on (timeline.c) */
	/* live */
	guint poll_id;
	iogram_demo *demo;
	/* pointer */
	int drag_panel;
	double drag_x, drag_lo, drag_hi;
	int dragged;
	double ptr_x, ptr_y;
	/* test hooks */
	char *screenshot_path;
	int screenshot_done;
	gint64 started_us, screenshot_after_us;
	/* parts */
	struct iogv_sidebar *side;
	struct iogv_timeline *tl;
} iogv_win;

/* window.c */
void iogv_win_error(iogv_win *v, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
void iogv_win_info(iogv_win *v, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
/* The model changed or the view did: rebuild the frame (throttled) and redraw. */
void iogv_win_changed(iogv_win *v, int now);
GtkWidget *iogv_win_build(iogv_win *v);
void iogv_win_destroy(iogv_win *v);
int iogv_win_use_session(iogv_win *v, iogv_session *s);
void iogv_win_set_theme(iogv_win *v);
void iogv_win_export(iogv_win *v, const char *path, int panel);
void iogv_win_export_dialog(iogv_win *v, int panel, int csv);
void iogv_win_open(iogv_win *v);                 /* the open-a-recording dialog */
void iogv_win_zoom(iogv_win *v, int panel);      /* panel alone / back (same panel) */
int iogv_win_pointer_panel(iogv_win *v);         /* the zoomed one or under the pointer; -1 */
void iogv_win_toggle_log(iogv_win *v, unsigned *mask, int panel);

/* keys.c: the shared key/action table (iogp_actions.h) on GDK keys */
gboolean iogv_keys_press(GtkWidget *w, GdkEventKey *e, gpointer v);
void iogv_keys_help(iogv_win *v);                /* the keys dialog: open / close */
/* The label of action id as this window shows it ("Ctrl+E"); "" if none. */
const char *iogv_action_label(int id, char *buf, size_t len);

/* sidebar.c: nodes and sources with state and rates; selection */
struct iogv_sidebar *iogv_sidebar_new(iogv_win *v, GtkWidget **widget);
void iogv_sidebar_refresh(struct iogv_sidebar *sb);   /* after data changed */
void iogv_sidebar_reset(struct iogv_sidebar *sb);     /* new session */
void iogv_sidebar_free(struct iogv_sidebar *sb);
void iogv_sidebar_step(struct iogv_sidebar *sb, int nodes, int dir);   /* n N s S */
void iogv_sidebar_select_all(struct iogv_sidebar *sb);
void iogv_sidebar_widths(struct iogv_sidebar *sb, int *column, int *widest);   /* pixels */

/* timeline.c: replay scrubber, play/pause, speed */
struct iogv_timeline *iogv_timeline_new(iogv_win *v, GtkWidget **widget);
void iogv_timeline_reset(struct iogv_timeline *tl);   /* new session */
void iogv_timeline_update(struct iogv_timeline *tl);  /* position moved */
void iogv_timeline_free(struct iogv_timeline *tl);
void iogv_play(iogv_win *v, int on);
void iogv_seek(iogv_win *v, double t);                /* absolute wall seconds */
void iogv_seek_stop(iogv_win *v);                     /* the seek under way left where it is (closing) */
void iogv_seek_by(iogv_win *v, double dt);
void iogv_speed(iogv_win *v, int dir);                /* x2 / 2 */

#endif
