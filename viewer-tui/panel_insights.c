/* panel_insights.c - the findings of the selection, most severe first: the
 * severity, the digit of the panel that shows it (typing it goes there),
 * and the finding's text with its numbers, wrapped. The header counts them
 * on every frame: they are computed again only when the data changed, and
 * when that took long (a huge job) at most every few seconds. Over many
 * sources the computation runs in slices between frames (insights_work),
 * so that a key never waits for all of it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iogp_phase_view.h"
#include "iogp_sys.h"
#include "top.h"

#define MAX_FINDINGS 32
#define SLOW_NS 10000000ull        /* a computation this long ... */
#define RECOMPUTE_NS 5000000000ull   /* ... is not repeated sooner than this */
#define INLINE_SOURCES 4096u       /* at most this many: all in the frame */
#define SLICE_SOURCES 1024u        /* a slice's steps */

static struct {
	uint64_t serial;      /* the model's (iogp_model_serial): not its address */
	uint64_t messages, last_recv, source;
	iogp_sel_kind sel;
	char node[128];
	uint64_t at, took;    /* CLOCK_MONOTONIC of the last computation, its cost */
	int valid;
	iogp_insight v[MAX_FINDINGS];
	size_t n;
	/* the computation under way: what it was started for and its cost so far */
	iogp_insights_job *job;
	uint64_t job_messages, job_last_recv, job_took;
	int first;            /* the job is the selection's first: nothing to show yet */
	int after_seek;       /* a replay seek went on: the next frame computes anew */
} cache;

int insights_pending(void)
{
	return cache.job != NULL && cache.first;
}

/* The job under way into the findings shown. */
static void job_finish(const iogp_model *m)
{
	uint64_t t0 = iogp_mono_ns();
	if (iogp_insights_finish(cache.job, m, cache.v, MAX_FINDINGS, &cache.n) < 0)
		cache.n = 0;
	cache.took = cache.job_took + (iogp_mono_ns() - t0);
	cache.messages = cache.job_messages;
	cache.last_recv = cache.job_last_recv;
	iogp_insights_free(cache.job);
	cache.job = NULL;
	cache.first = 0;
}

int insights_work(const iogp_model *m, uint64_t budget_ns)
{
	if (cache.job == NULL)
		return 0;
	/* another model (a replay's seek): start over */
	if (iogp_model_serial(m) != cache.serial) {
		iogp_insights_free(cache.job);
		cache.job = NULL;
		cache.valid = 0;
		return 0;
	}
	uint64_t t0 = iogp_mono_ns(), t = t0;
	int more = 1;
	while (more == 1 && t < t0 + budget_ns) {
		more = iogp_insights_step(cache.job, m, SLICE_SOURCES);
		t = iogp_mono_ns();
	}
	cache.job_took += t - t0;
	if (more == 1)
		return 1;
	job_finish(m);
	return 2;
}

const iogp_insight *insights_get(const top_frame *f, size_t *n, int wait)
{
	/* while a replay seek reads on nothing new begins (the model is half
	 * way); the frame after it computes at once, whatever the last took */
	if (f->st && f->st->f.seeking) {
		cache.after_seek = 1;
		*n = cache.n;
		return cache.v;
	}
	int force = cache.after_seek;
	cache.after_seek = 0;
	iogp_model_stats st;
	iogp_model_get_stats(f->m, &st);
	const top_view *v = f->v;
	int same_sel = cache.valid && cache.serial == iogp_model_serial(f->m) && cache.sel == v->sel &&
	               (v->sel != IOGP_SEL_NODE || !strcmp(cache.node, v->sel_node)) &&
	               (v->sel != IOGP_SEL_SOURCE || cache.source == v->sel_source);
	int same_data = cache.messages == st.messages && cache.last_recv == st.last_recv_ns;
	if (!same_sel) {   /* what is under way is for another selection */
		iogp_insights_free(cache.job);
		cache.job = NULL;
		cache.n = 0;
		cache.first = 1;
	}
	if (force && same_sel && !same_data) {   /* what is under way is of the seek's way there */
		iogp_insights_free(cache.job);
		cache.job = NULL;
	}
	if (cache.job == NULL &&
	    (!same_sel || (force && !same_data) ||
	     (!same_data && (cache.took < SLOW_NS || (!f->key && f->mono_ns >= cache.at + RECOMPUTE_NS))))) {
		iogp_sel sel;
		frame_sel(f, &sel);
		uint64_t t0 = iogp_mono_ns();
		cache.job = iogp_insights_begin(f->m, &sel);
		cache.job_took = iogp_mono_ns() - t0;
		cache.job_messages = st.messages;
		cache.job_last_recv = st.last_recv_ns;
		cache.serial = iogp_model_serial(f->m);
		cache.sel = v->sel;
		cache.source = v->sel_source;
		snprintf(cache.node, sizeof(cache.node), "%s", v->sel_node);
		cache.at = f->mono_ns;
		cache.valid = 1;
		if (cache.job == NULL) {   /* out of memory: no findings, try again later */
			cache.n = 0;
			cache.first = 0;
			cache.took = cache.job_took;
			cache.messages = st.messages;
			cache.last_recv = st.last_recv_ns;
		}
	}
	if (cache.job != NULL && (wait || iogp_model_source_count(f->m) <= INLINE_SOURCES))
		job_finish(f->m);
	*n = cache.n;
	return cache.v;
}

/* Words of t into lines of at most w columns; returns how many (<= max).
 * With cut, a last line that leaves words out ends in "...". */
static int wrap(const char *t, int w, char lines[][256], int max, int cut)
{
	int n = 0;
	while (*t && n < max && w > 0) {
		int len = (int)strlen(t), take = len;
		if (take > w) {
			take = w;
			while (take > w / 2 && t[take] != ' ')
				take--;
			if (t[take] != ' ')
				take = w;
		}
		snprintf(lines[n++], 256, "%.*s", take, t);
		t += take;
		while (*t == ' ')
			t++;
	}
	if (cut && *t && n == max && n > 0) {   /* the rest did not fit: say so */
		size_t l = strlen(lines[n - 1]);
		if (l > 3)
			memcpy(lines[n - 1] + l - 3, "...", 3);
	}
	return n;
}

void panel_insights_draw(const top_frame *f, top_surf *s, top_rect r)
{
	if (r.h <= 0)
		return;
	size_t n;
	const iogp_insight *v = insights_get(f, &n, 0);
	char right[64];
	snprintf(right, sizeof(right), "%zu finding%s", n, n == 1 ? "" : "s");
	panel_title(f, s, r, IOGP_PANEL_INSIGHTS, NULL, right);
	if (!n) {
		if (r.h > 1 && insights_pending())
			draw_textf(s, r.y + 1, r.x, r.w, ST_DIM, "looking at %zu sources...",
			           iogp_model_source_count(f->m));
		else if (r.h > 1)
			draw_text(s, r.y + 1, r.x, r.w, ST_DIM,
			          "no findings: nothing stands out (or too little data yet)");
		return;
	}
	/* "HIGH [1 request size] text..." : the digit goes to the panel */
	int y = r.y + 1, end = r.y + r.h;
	size_t shown = 0;
	for (size_t i = 0; i < n && y < end; i++) {
		static const char *const sev[] = { "info", "WARN", "HIGH" };
		int sst = v[i].severity == IOGP_SEV_HIGH ? ST_BAD : v[i].severity == IOGP_SEV_WARN ? ST_WARN
		          : ST_DIM;
		int p = iogp_insight_panel(&v[i], IOGP_VIEWER_TUI);
		const iogp_panel *e = iogp_panel_get(p);
		char go[64] = "";
		if (e && e->key)
			snprintf(go, sizeof(go), "[%c %s]", e->key, e->short_title);
		int x = r.x;
		x += draw_text(s, y, x, 4, sst, v[i].severity >= 0 && v[i].severity <= 2 ? sev[v[i].severity]
		                                                                         : "?");
		x++;
		if (go[0] && r.w >= 60)
			x += draw_text(s, y, x, r.x + r.w - x, ST_LABEL, go) + 1;
		else if (go[0])
			x += draw_textf(s, y, x, r.x + r.w - x, ST_LABEL, "[%c]", e->key) + 1;
		char lines[6][256];
		int indent = 5, room = end - y;
		int nl = wrap(v[i].text, r.x + r.w - x, lines, 1, 0);
		int more = 0;
		if (nl) {
			draw_text(s, y, x, r.x + r.w - x, ST_NORMAL, lines[0]);
			const char *rest = v[i].text + strlen(lines[0]);
			while (*rest == ' ')
				rest++;
			more = *rest ? wrap(rest, r.w - indent, lines, room - 1 < 6 ? room - 1 : 6, 1) : 0;
		}
		y++;
		for (int k = 0; k < more && y < end; k++)
			draw_text(s, y++, r.x + indent, r.w - indent, ST_NORMAL, lines[k]);
		shown++;
	}
	if (shown < n) {
		char m[48];
		int l = snprintf(m, sizeof(m), "+%zu more", n - shown);
		draw_text(s, end - 1, r.x + r.w - l, l, ST_DIM, m);
	}
}

int panel_insights_text(const top_frame *f, FILE *out)
{
	size_t n;
	const iogp_insight *v = insights_get(f, &n, 1);
	return iogp_insights_write_text(out, v, n);
}
