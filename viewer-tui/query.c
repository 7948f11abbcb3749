/* query.c - the model as the view selects it: selection, "since start" or
 * "last N seconds", the view's own bookkeeping, and the frame panels draw. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "top.h"
#include "iogp_sys.h"

void view_init(top_view *v, double window_s)
{
	static const double defaults[] = { 0, 10, 60, 300 };
	memset(v, 0, sizeof(*v));
	v->sel = IOGP_SEL_ALL;
	v->zoom = -1;
	v->focus = IOGP_PANEL_LATENCY;
	for (size_t i = 0; i < sizeof(defaults) / sizeof(*defaults); i++)
		v->windows[v->nwindows++] = defaults[i];
	v->window = 0;
	if (window_s > 0) {
		int found = -1;
		for (int i = 0; i < v->nwindows; i++)
			if (v->windows[i] == window_s)
				found = i;
		if (found < 0 && v->nwindows < TOP_MAX_WINDOWS) {
			/* keep the list ascending */
			int at = v->nwindows;
			while (at > 1 && v->windows[at - 1] > window_s) {
				v->windows[at] = v->windows[at - 1];
				at--;
			}
			v->windows[at] = window_s;
			v->nwindows++;
			found = at;
		}
		v->window = found < 0 ? 0 : found;
	}
}

double view_window(const top_view *v)
{
	return v->window >= 0 && v->window < v->nwindows ? v->windows[v->window] : 0;
}

void view_message(top_view *v, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(v->msg, sizeof(v->msg), fmt, ap);
	va_end(ap);
	v->msg_until = iogp_mono_ns() + 8000000000ull;
}

void app_frame(top_app *app, top_frame *f, top_status *st)
{
	input_status(app->in, st);
	f->m = iogp_feed_model(input_feed(app->in));
	f->v = &app->view;
	f->st = st;
	f->now_ns = iogp_feed_now(input_feed(app->in));
	f->mono_ns = iogp_mono_ns();
	f->heat = app->heat;
	f->nodes = &app->nodes;
	f->nodes_next = &app->nodes_next;
	f->rates = &app->rates;
	f->key = 0;
	f->stop = NULL;   /* only top.c's data frames give way to keys */
	f->stop_arg = NULL;
}

void frame_sel(const top_frame *f, iogp_sel *sel)
{
	memset(sel, 0, sizeof(*sel));
	sel->kind = f->v->sel;
	sel->node = f->v->sel_node;
	sel->source = f->v->sel_source;
}

const char *frame_metric(const top_frame *f, const char *m)
{
	return iogp_layer_metric(f->v ? f->v->layer : IOGP_LAYER_POSIX, m);
}
