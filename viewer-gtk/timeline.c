/* timeline.c - the replay bar: play/pause, speed, a scrubber with the
 * file's keyframes marked, and playback driven by the frame clock. */
#include <math.h>

#include "app.h"

struct iogv_timeline {
	iogv_win *v;
	GtkWidget *box, *play, *scale, *label, *speed;
	int updating;
	int marked;
};

static void fmt_span(char *buf, size_t len, double s)
{
	long t = (long)floor(s + 0.5);
	if (t >= 3600)
		snprintf(buf, len, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
	else
		snprintf(buf, len, "%02ld:%02ld", t / 60, t % 60);
}

void iogv_timeline_update(struct iogv_timeline *tl)
{
	iogv_win *v = tl->v;
	if (!iogv_is_replay(v->s)) {
		gtk_widget_hide(tl->box);
		return;
	}
	gtk_widget_show(tl->box);
	double a, b, pos = iogv_replay_pos(v->s);
	iogv_replay_span(v->s, &a, &b);
	tl->updating = 1;
	gtk_range_set_range(GTK_RANGE(tl->scale), 0, fmax(b - a, 1));
	gtk_range_set_value(GTK_RANGE(tl->scale), pos - a);
	tl->updating = 0;
	char clock[32], p[32], d[32], text[192];
	iogplot_fmt_clock(clock, sizeof(clock), pos, 1);
	fmt_span(p, sizeof(p), pos - a);
	fmt_span(d, sizeof(d), b - a);
	double to, done;
	if (iogv_replay_seeking(v->s, &to, &done)) {
		char t[32];
		fmt_span(t, sizeof(t), to - a);
		snprintf(text, sizeof(text), "%s   %s / %s   seeking %s %.0f%%", clock, p, d, t, done * 100);
	} else {
		snprintf(text, sizeof(text), "%s   %s / %s", clock, p, d);
	}
	gtk_label_set_text(GTK_LABEL(tl->label), text);
	snprintf(text, sizeof(text), "%gx", v->speed);
	gtk_label_set_text(GTK_LABEL(tl->speed), text);
	gtk_button_set_image(GTK_BUTTON(tl->play),
	                     gtk_image_new_from_icon_name(v->playing ? "media-playback-pause-symbolic" :
	                                                  "media-playback-start-symbolic",
	                                                  GTK_ICON_SIZE_BUTTON));
	if (!tl->marked) {
		double kf[256];
		size_t n = iogv_replay_keyframes(v->s, kf, 256);
		for (size_t i = 0; i < n && i < 256; i++)
			gtk_scale_add_mark(GTK_SCALE(tl->scale), kf[i] - a, GTK_POS_BOTTOM, NULL);
		tl->marked = 1;
	}
}

void iogv_timeline_reset(struct iogv_timeline *tl)
{
	gtk_scale_clear_marks(GTK_SCALE(tl->scale));
	tl->marked = 0;
	iogv_timeline_update(tl);
}

static gboolean on_tick(GtkWidget *w, GdkFrameClock *clock, gpointer p)
{
	(void)w;
	iogv_win *v = p;
	gint64 t = gdk_frame_clock_get_frame_time(clock);
	if (v->seek_id) {   /* a seek under way: play on from where it arrives */
		v->tick_last_us = 0;
		return G_SOURCE_CONTINUE;
	}
	if (v->tick_last_us) {
		double a, b;
		iogv_replay_span(v->s, &a, &b);
		double pos = iogv_replay_pos(v->s) + (double)(t - v->tick_last_us) / 1e6 * v->speed;
		if (pos >= b) {
			pos = b;
			iogv_replay_seek(v->s, pos);
			v->tick_id = 0;   /* removed by returning */
			iogv_play(v, 0);
			return G_SOURCE_REMOVE;
		}
		iogv_replay_seek(v->s, pos);
		iogv_win_changed(v, 0);
	}
	v->tick_last_us = t;
	return G_SOURCE_CONTINUE;
}

void iogv_play(iogv_win *v, int on)
{
	if (on && !iogv_is_replay(v->s))
		return;
	if (on && !v->playing) {
		double a, b;
		iogv_replay_span(v->s, &a, &b);
		if (iogv_replay_pos(v->s) >= b)
			iogv_replay_seek(v->s, a);
		v->tick_last_us = 0;
		v->tick_id = gtk_widget_add_tick_callback(v->area, on_tick, v, NULL);
	} else if (!on && v->playing && v->tick_id) {
		gtk_widget_remove_tick_callback(v->area, v->tick_id);
	}
	if (!on)
		v->tick_id = 0;
	v->playing = on;
	if (v->area && v->s)
		iogv_win_changed(v, 1);
}

/* A seek reads on a pump at a time between the window's events, so keys,
 * the timeline and redraws go on meanwhile (thousands of sources: seconds). */
static gboolean on_seek_idle(gpointer p)
{
	iogv_win *v = p;
	int more = iogv_replay_seek_step(v->s);
	iogv_win_changed(v, !more);
	if (!more)
		v->seek_id = 0;
	return more ? G_SOURCE_CONTINUE : G_SOURCE_REMOVE;
}

void iogv_seek_stop(iogv_win *v)
{
	if (v->seek_id)
		g_source_remove(v->seek_id);
	v->seek_id = 0;
}

void iogv_seek(iogv_win *v, double t)
{
	if (!iogv_is_replay(v->s))
		return;
	double a, b;
	iogv_replay_span(v->s, &a, &b);
	t = t < a ? a : t > b ? b : t;
	int rc = iogv_replay_seek_start(v->s, t);
	if (rc < 0)
		iogv_win_error(v, "seeking failed: %s", iogp_strerror(rc));
	if (iogv_replay_seeking(v->s, NULL, NULL) && !v->seek_id)
		v->seek_id = g_idle_add(on_seek_idle, v);
	iogv_win_changed(v, 1);
}

void iogv_seek_by(iogv_win *v, double dt)
{
	double to;
	iogv_seek(v, (iogv_replay_seeking(v->s, &to, NULL) ? to : iogv_replay_pos(v->s)) + dt);
}

void iogv_speed(iogv_win *v, int dir)
{
	double s = dir > 0 ? v->speed * 2 : v->speed / 2;
	if (s < 1.0 / 16 || s > 256)
		return;
	v->speed = s;
	iogv_win_changed(v, 1);
}

static void on_play(GtkButton *b, gpointer p)
{
	(void)b;
	iogv_win *v = p;
	iogv_play(v, !v->playing);
}

static void on_slower(GtkButton *b, gpointer p)
{
	(void)b;
	iogv_speed(p, -1);
}

static void on_faster(GtkButton *b, gpointer p)
{
	(void)b;
	iogv_speed(p, 1);
}

static void on_scale(GtkRange *r, gpointer p)
{
	struct iogv_timeline *tl = p;
	if (tl->updating)
		return;
	double a, b;
	iogv_replay_span(tl->v->s, &a, &b);
	iogv_seek(tl->v, a + gtk_range_get_value(r));
}

struct iogv_timeline *iogv_timeline_new(iogv_win *v, GtkWidget **widget)
{
	struct iogv_timeline *tl = g_new0(struct iogv_timeline, 1);
	tl->v = v;
	tl->box = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
	g_object_set(tl->box, "margin", 6, NULL);
	tl->play = gtk_button_new_from_icon_name("media-playback-start-symbolic", GTK_ICON_SIZE_BUTTON);
	gtk_widget_set_tooltip_text(tl->play, "Play / pause (space)");
	g_signal_connect(tl->play, "clicked", G_CALLBACK(on_play), v);
	GtkWidget *slower = gtk_button_new_from_icon_name("media-seek-backward-symbolic",
	                                                  GTK_ICON_SIZE_BUTTON);
	gtk_widget_set_tooltip_text(slower, "Slower (-)");
	g_signal_connect(slower, "clicked", G_CALLBACK(on_slower), v);
	GtkWidget *faster = gtk_button_new_from_icon_name("media-seek-forward-symbolic",
	                                                  GTK_ICON_SIZE_BUTTON);
	gtk_widget_set_tooltip_text(faster, "Faster (+)");
	g_signal_connect(faster, "clicked", G_CALLBACK(on_faster), v);
	tl->speed = gtk_label_new("1x");
	gtk_label_set_width_chars(GTK_LABEL(tl->speed), 5);
	tl->scale = gtk_scale_new_with_range(GTK_ORIENTATION_HORIZONTAL, 0, 1, 1);
	gtk_scale_set_draw_value(GTK_SCALE(tl->scale), FALSE);
	gtk_widget_set_tooltip_text(tl->scale, "Seek (Left/Right 10 s, PgUp/PgDn 60 s, Home/End); "
	                            "marks are keyframes");
	g_signal_connect(tl->scale, "value-changed", G_CALLBACK(on_scale), tl);
	tl->label = gtk_label_new("");
	gtk_label_set_width_chars(GTK_LABEL(tl->label), 24);
	gtk_box_pack_start(GTK_BOX(tl->box), tl->play, FALSE, FALSE, 0);
	gtk_box_pack_start(GTK_BOX(tl->box), slower, FALSE, FALSE, 0);
	gtk_box_pack_start(GTK_BOX(tl->box), tl->speed, FALSE, FALSE, 0);
	gtk_box_pack_start(GTK_BOX(tl->box), faster, FALSE, FALSE, 0);
	gtk_box_pack_start(GTK_BOX(tl->box), tl->scale, TRUE, TRUE, 0);
	gtk_box_pack_start(GTK_BOX(tl->box), tl->label, FALSE, FALSE, 0);
	gtk_widget_set_no_show_all(tl->box, TRUE);
	gtk_widget_show(tl->play);
	gtk_widget_show(slower);
	gtk_widget_show(faster);
	gtk_widget_show(tl->speed);
	gtk_widget_show(tl->scale);
	gtk_widget_show(tl->label);
	*widget = tl->box;
	return tl;
}

void iogv_timeline_free(struct iogv_timeline *tl)
{
	g_free(tl);
}
