/* panel_access.c - file offset against time for one file, a braille dot
 * per sampled request (reads and writes told apart by colour or weight),
 * with its time and offset axes, the file's name and node, a read/write
 * legend and how many requests the dots were sampled from. The files are
 * the layer's, by bytes moved (iogp_model_files), then any other file with
 * samples; the samples are the model's per-file sample over the window
 * (iogp_model_access_query): uniform over the requests of the time shown. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "iogp_sys.h"
#include "top.h"

#define MAX_DOTS 50000   /* samples asked for a plot (a zoomed 200x60 has 47,000 dots) */

typedef struct afile {
	const char *path;
	uint64_t bytes;
	uint32_t sources, first_source;
	uint64_t samples;        /* in the window */
	uint64_t ops;            /* its reads and writes (per-file records), 0: unknown */
	uint64_t folded;         /* a directory's record: the files it folded */
} afile;

/* The paths are the list's own: the model's (iogp_model_files,
 * iogp_model_access_files) are valid only until it changes, and the panel
 * keeps its list between frames, across a replay's seek that replaces the
 * model (proto/feed.c start_over) too. */
typedef struct alist {
	afile *f;
	size_t n;
	char *names;             /* the memory the paths point into */
} alist;

static void alist_free(alist *l)
{
	free(l->f);
	free(l->names);
	memset(l, 0, sizeof(*l));
}

/* Point the files' paths into one block of copies; 0, or IOGP_ENOMEM. */
static int own_paths(alist *l)
{
	size_t total = 1;
	for (size_t i = 0; i < l->n; i++)
		total += strlen(l->f[i].path) + 1;
	if (!(l->names = malloc(total)))
		return IOGP_ENOMEM;
	char *p = l->names;
	for (size_t i = 0; i < l->n; i++) {
		size_t len = strlen(l->f[i].path) + 1;
		memcpy(p, l->f[i].path, len);
		l->f[i].path = p;
		p += len;
	}
	return 0;
}

static const char *access_metric(const top_frame *f)
{
	return iogp_layer_slot_metric(f->v->layer, IOGP_SLOT_ACCESS);
}

static uint64_t window_start(const top_frame *f)
{
	double w = view_window(f->v);
	uint64_t wn = (uint64_t)(w * 1e9);
	return w > 0 && f->now_ns > wn ? f->now_ns - wn : 0;
}

static void query_of(const top_frame *f, const iogp_sel *sel, iogp_access_query *q)
{
	memset(q, 0, sizeof(*q));
	q->metric = access_metric(f);
	q->sel = sel;
	q->from_ns = window_start(f);
	q->max = MAX_DOTS;
	q->stop = f->stop;   /* a data frame's: its refresh gives way to a waiting key */
	q->stop_arg = f->stop_arg;
}

typedef struct pathidx {
	const char *path;
	size_t i;
} pathidx;

static int cmp_pathidx(const void *a, const void *b)
{
	return strcmp(((const pathidx *)a)->path, ((const pathidx *)b)->path);
}

static unsigned lists;   /* file lists gathered (panel_access_lists) */

/* The one shown of l: the file path names ("": auto, the busiest with
 * samples in the window), else the first; -1 when l is empty. */
static long pick_file(const alist *l, const char *path)
{
	for (size_t i = 0; i < l->n && path[0]; i++)
		if (!strcmp(l->f[i].path, path))
			return (long)i;
	for (size_t i = 0; i < l->n; i++)
		if (l->f[i].samples)
			return (long)i;
	return l->n ? 0 : -1;
}

/* The layer's files by bytes moved (iogp_model_files: those with reads or
 * writes), then the files that only the samples know, by their estimated
 * bytes; *sel = the one shown (-1: none): the chosen one, else the first
 * with samples in the window. IOGP_ESTOPPED (and nothing) when the frame's
 * stop hook ended the query, else 0. */
static int files(const top_frame *f, alist *l, long *sel)
{
	memset(l, 0, sizeof(*l));
	*sel = -1;
	iogp_sel s;
	frame_sel(f, &s);
	size_t nfi = 0, naf = 0;
	iogp_file_info *fi = NULL;
	iogp_access_file *af = NULL;
	if (iogp_model_files(f->m, &s, f->v->layer, &fi, &nfi) < 0)
		nfi = 0;
	iogp_access_query q;
	query_of(f, &s, &q);
	int rc = q.metric ? iogp_model_access_files(f->m, &q, &af, &naf) : 0;
	if (rc == IOGP_ESTOPPED) {
		iogp_model_files_free(fi);
		return rc;
	}
	if (rc < 0)
		naf = 0;
	l->f = calloc(nfi + naf + 1, sizeof(*l->f));
	pathidx *known = calloc(nfi + 1, sizeof(*known));
	if (!l->f || !known) {
		free(known);
		iogp_model_files_free(fi);
		free(af);
		alist_free(l);
		return 0;
	}
	for (size_t i = 0; i < nfi; i++) {
		const iogp_file_info *e = &fi[i];
		if (e->other || e->total.op[0].ops + e->total.op[1].ops == 0)
			continue;
		known[l->n] = (pathidx){ e->path, l->n };
		l->f[l->n++] = (afile){ e->path, e->total.op[0].bytes + e->total.op[1].bytes, e->sources,
		                        e->first_source, 0, e->total.op[0].ops + e->total.op[1].ops,
		                        e->total.overflow };
	}
	size_t nk = l->n;
	qsort(known, nk, sizeof(*known), cmp_pathidx);
	for (size_t i = 0; i < naf; i++) {
		const iogp_access_file *a = &af[i];
		pathidx key = { a->path, 0 };
		const pathidx *k = nk ? bsearch(&key, known, nk, sizeof(*known), cmp_pathidx) : NULL;
		if (k)   /* one of the layer's files: note its samples */
			l->f[k->i].samples += a->samples;
		else
			l->f[l->n++] = (afile){ a->path, a->bytes, a->sources, a->first_source, a->samples, 0, 0 };
	}
	free(known);
	rc = own_paths(l);
	iogp_model_files_free(fi);
	free(af);
	if (rc < 0) {
		alist_free(l);
		return 0;
	}
	lists++;
	*sel = pick_file(l, f->v->file_path);
	return 0;
}

/* What the panel shows now, when its file list stands for the frame's
 * view, model and time (whichever file is chosen); NULL if not. */
static const alist *list_shown(const top_frame *f);

void panel_access_cycle(const top_frame *f, int dir)
{
	alist own = { 0 }, l;
	long sel;
	const alist *shown = list_shown(f);   /* the order on screen: no second gathering */
	if (!shown)
		files(f, &own, &sel);
	l = shown ? *shown : own;
	if (l.n == 0) {
		f->v->file_path[0] = '\0';
	} else {
		long cur = -1;
		for (size_t i = 0; i < l.n && f->v->file_path[0]; i++)
			if (!strcmp(l.f[i].path, f->v->file_path))
				cur = (long)i;
		if (cur < 0)
			cur = dir > 0 ? -1 : (long)l.n;
		cur += dir;
		if (cur < 0 || cur >= (long)l.n)
			f->v->file_path[0] = '\0';   /* back to auto */
		else
			snprintf(f->v->file_path, sizeof(f->v->file_path), "%s", l.f[cur].path);
	}
	alist_free(&own);
}

/* The samples of file path in the window. */
static int samples_of_path(const top_frame *f, const char *path, iogp_access_set *set)
{
	iogp_sel s;
	frame_sel(f, &s);
	iogp_access_query q;
	query_of(f, &s, &q);
	q.path = path;
	if (!q.metric) {
		memset(set, 0, sizeof(*set));
		return IOGP_ENOTFOUND;
	}
	return iogp_model_access_query(f->m, &q, set);
}

/* The samples of file af in the window; since the start, the requests
 * they stand for are its per-file records' count when it has them (exact
 * whatever the samples estimate). */
static int samples_of(const top_frame *f, const afile *af, iogp_access_set *set)
{
	int rc = samples_of_path(f, af->path, set);
	if (rc == 0 && af->ops && view_window(f->v) <= 0 && set->n && af->ops >= set->n) {
		set->requests = af->ops;
		set->exact = 1;
	}
	return rc;
}

/* What the panel draws: its files, the one shown and that one's samples.
 * Recomputed each frame while that is cheap; when it is not (the files and
 * samples of tens of thousands of sources: ~50 ms at 50,000), no sooner
 * than 49 times what the last took, so the panel stays within a fiftieth
 * of a core and refreshes every few seconds at most (it was a tenth:
 * 12-14% of iogram-top's time at 50,000 sources, then a twentieth); a
 * frame drawn for a key leaves a refresh that is only due to the next, unless
 * what is shown changed (layer, selection, file, window), or the model did:
 * another one (a replay's seek that starts over), or the time shown went
 * back (a seek back: the same address may hold a new model), or moved
 * while paused (a seek forward: no frame follows by itself to show it). */
static struct acache {
	int valid, rc;
	alist l;
	long sel;
	iogp_access_set set;
	uint64_t serial;   /* the model's (iogp_model_serial): not its address */
	uint64_t now_ns;
	uint64_t due_ns;
	char vsig[sizeof(((top_view *)0)->sel_node) + 128];   /* the view (view_sig) */
	char file[sizeof(((top_view *)0)->file_path)];         /* and its file */
} ac;

static uint64_t hold_ns;
static unsigned stopped;   /* refreshes given up for a key (panel_access_stopped) */

void panel_access_hold(uint64_t ns)
{
	hold_ns = ns;
}

/* What the panel shows: its view (but the file) as text. */
static void view_sig(const top_frame *f, char *buf, size_t len)
{
	snprintf(buf, len, "%d|%d|%s|%" PRIu64 "|%.3f", f->v->layer, (int)f->v->sel, f->v->sel_node,
	         f->v->sel_source, view_window(f->v));
}

/* Whether the cache is of the frame's view (but the file) and model. */
static int same_view(const top_frame *f)
{
	char vsig[sizeof(ac.vsig)];
	view_sig(f, vsig, sizeof(vsig));
	return ac.valid && !strcmp(vsig, ac.vsig) && ac.serial == iogp_model_serial(f->m);
}

/* Whether the cache's file list stands for the frame's view (but the
 * file), model and time: the same time, or later while time moves (paused,
 * no frame comes by itself: one after a seek must show it). */
static int list_stands(const top_frame *f)
{
	int moving = f->st == NULL || !(f->st->f.paused || f->st->f.at_end);
	return same_view(f) && (f->now_ns == ac.now_ns || (moving && f->now_ns > ac.now_ns));
}

static const alist *list_shown(const top_frame *f)
{
	return list_stands(f) ? &ac.l : NULL;
}

static const struct acache *cached(const top_frame *f)
{
	uint64_t t0 = iogp_mono_ns();
	int stands = (t0 < ac.due_ns || f->key) && list_stands(f);
	int same_file = !strcmp(f->v->file_path, ac.file);
	if (stands && same_file)
		return &ac;
	if (stands) {
		/* another file of the same list (f, F): its samples only, the
		 * list kept until it is due (at 50,000 sources gathering it again
		 * took 25-30 ms of the key's frame, and as much in the key) */
		top_frame g = *f;
		g.stop = NULL;
		iogp_access_set_free(&ac.set);
		ac.sel = pick_file(&ac.l, f->v->file_path);
		ac.rc = ac.sel >= 0 ? samples_of(&g, &ac.l.f[ac.sel], &ac.set) : IOGP_ENOTFOUND;
		snprintf(ac.file, sizeof(ac.file), "%s", f->v->file_path);
		return &ac;
	}
	/* a data frame's refresh gives way to a waiting key (top_frame.stop):
	 * the frame shows what the last refresh found, the key's frame comes
	 * at once and the next data frame tries again; a refresh with nothing of
	 * its view and model to show instead always ends */
	top_frame g = *f;
	if (!same_view(f) || !same_file)
		g.stop = NULL;
	struct acache n;
	memset(&n, 0, sizeof(n));
	int rc = files(&g, &n.l, &n.sel);
	if (rc == 0)
		rc = n.rc = n.sel >= 0 ? samples_of(&g, &n.l.f[n.sel], &n.set) : IOGP_ENOTFOUND;
	if (rc == IOGP_ESTOPPED) {
		alist_free(&n.l);
		stopped++;
		return &ac;
	}
	if (ac.valid) {
		alist_free(&ac.l);
		iogp_access_set_free(&ac.set);
	}
	ac = n;
	ac.valid = 1;
	ac.serial = iogp_model_serial(f->m);
	ac.now_ns = f->now_ns;
	uint64_t keep = 49 * (iogp_mono_ns() - t0);
	ac.due_ns = iogp_mono_ns() + (keep > hold_ns ? keep : hold_ns);
	view_sig(f, ac.vsig, sizeof(ac.vsig));
	snprintf(ac.file, sizeof(ac.file), "%s", f->v->file_path);
	return &ac;
}

unsigned panel_access_stopped(void)
{
	return stopped;
}

unsigned panel_access_lists(void)
{
	return lists;
}

/* "1,563,000" */
static void fmt_thousands(char *buf, size_t len, uint64_t v)
{
	char d[32];
	int n = snprintf(d, sizeof(d), "%" PRIu64, v), o = 0;
	for (int i = 0; i < n && o + 2 < (int)len; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = d[i];
	}
	buf[o] = '\0';
}

/* How many requests the dots stand for, in the longest form that fits w:
 * "sampled 4,096 of 1,563,000 requests", "all 312 requests", ... */
static void note_text(char *buf, size_t len, const iogp_access_set *set, int w)
{
	char a[32], b[32], ca[16], cb[16];
	const char *approx = set->exact ? "" : "~";
	fmt_thousands(a, sizeof(a), set->n);
	fmt_thousands(b, sizeof(b), set->requests);
	iogp_fmt_count(ca, sizeof(ca), (double)set->n, IOGP_UNITS_CELL);
	iogp_fmt_count(cb, sizeof(cb), (double)set->requests, IOGP_UNITS_CELL);
	const char *req = set->requests == 1 ? "request" : "requests";
	if (set->n >= set->requests && set->exact) {
		snprintf(buf, len, "all %s %s", a, req);
		if ((int)strlen(buf) > w)
			snprintf(buf, len, "all %s", ca);
		return;
	}
	const char *forms[4][4] = {
		{ "sampled ", a, " of ", b },
		{ "", a, " of ", b },
		{ "", ca, " of ", cb },
		{ "", ca, "/", cb },
	};
	for (int i = 0; i < 4; i++) {
		snprintf(buf, len, "%s%s%s%s%s%s", forms[i][0], forms[i][1], forms[i][2], approx,
		         forms[i][3], i < 2 ? (set->requests == 1 ? " request" : " requests") : i == 2 ? " req" : "");
		if ((int)strlen(buf) <= w)
			return;
	}
}

/* A round binary ceiling for the offset axis: 1, 1.25, 1.5, 1.75 x 2^k. */
static uint64_t nice_bytes(uint64_t v)
{
	if (v <= 8)
		return v ? v : 1;
	uint64_t p = 1;
	while (p <= v / 2)
		p <<= 1;
	for (int q = 4; q <= 8; q++) {
		uint64_t c = p / 4 * (uint64_t)q;
		if (c >= v)
			return c;
	}
	return p * 2;
}

/* "node001 rank 3", "node001 pid 1234", "4 sources" */
static void where_text(const top_frame *f, const afile *af, char *buf, size_t len)
{
	iogp_source_info si;
	buf[0] = '\0';
	if (af->sources > 1) {
		snprintf(buf, len, "%u sources", af->sources);
		return;
	}
	if (iogp_model_source(f->m, af->first_source, &si) < 0)
		return;
	if (si.rank >= 0)
		snprintf(buf, len, "%s rank %" PRId64, si.node, si.rank);
	else if (si.pid >= 0)
		snprintf(buf, len, "%s pid %" PRId64, si.node, si.pid);
	else
		snprintf(buf, len, "%s", si.node);
}

#define LEGEND_W 14   /* "X read X write" */

/* The legend at (y, x): the glyphs as the plot draws them. */
static void draw_legend(top_surf *s, int y, int x)
{
	draw_glyph(s, y, x, ST_READ, 0x28ff, s->color ? '#' : '.');
	draw_text(s, y, x + 2, 4, ST_NORMAL, "read");
	draw_glyph(s, y, x + 7, ST_WRITE, 0x28ff, s->color ? '#' : 'x');
	draw_text(s, y, x + 9, 5, ST_NORMAL, "write");
}

/* Line 1: the file's name (its end when long), where (when it fits), and
 * the legend when asked to. */
static void draw_name(const top_frame *f, top_surf *s, top_rect r, const afile *af, int legend)
{
	char where[160];
	where_text(f, af, where, sizeof(where));
	char name[IOGP_MAX_PATH + 64];
	iogp_file_label(name, sizeof(name), af->path, 0, af->folded);
	int room = r.w - (legend ? LEGEND_W + 1 : 0);
	int wl = (int)strlen(where), pl = (int)strlen(name);
	if (wl && pl + 2 + wl > room && room - wl - 2 < 12)
		wl = 0;   /* the name first */
	int pw = room - (wl ? wl + 2 : 0);
	int x = r.x;
	if (pl > pw) {
		x += draw_text(s, r.y, x, 3, ST_DIM, "...");
		x += draw_text(s, r.y, x, pw - 3, ST_LABEL, name + (pl - (pw - 3)));
	} else {
		x += draw_text(s, r.y, x, pw, ST_LABEL, name);
	}
	if (wl)
		draw_text(s, r.y, x + 2, wl, ST_DIM, where);
	if (legend)
		draw_legend(s, r.y, r.x + r.w - LEGEND_W);
}

void panel_access_draw(const top_frame *f, top_surf *s, top_rect r)
{
	if (r.h <= 0)
		return;
	const struct acache *ch = cached(f);
	const alist *lp = &ch->l;
	long sel = ch->sel;
	char right[96] = "";
	if (lp->n) {
		const char *pre = f->v->file_path[0] ? "" : "busiest ";
		if (r.w >= 50)
			snprintf(right, sizeof(right), "%sfile %ld/%zu by bytes, f next", pre, sel + 1, lp->n);
		else if (r.w >= 34)
			snprintf(right, sizeof(right), "%sfile %ld/%zu", pre, sel + 1, lp->n);
		else
			snprintf(right, sizeof(right), "file %ld/%zu", sel + 1, lp->n);
	}
	panel_title(f, s, r, IOGP_PANEL_ACCESS, NULL, right);
	if (r.h < 2) {
		return;
	}
	if (!access_metric(f)) {
		draw_textf(s, r.y + 1, r.x, r.w, ST_DIM, "no access samples in the %s layer",
		           iogp_layer_title(f->v->layer));
		return;
	}
	if (sel < 0) {
		draw_textf(s, r.y + 1, r.x, r.w, ST_DIM, "no %s access samples yet",
		           iogp_layer_title(f->v->layer));
		if (r.h >= 3 && f->v->layer != IOGP_LAYER_POSIX)
			draw_text(s, r.y + 2, r.x, r.w, ST_DIM, "y shows another layer");
		return;
	}
	const afile *af = &lp->f[sel];
	/* the legend goes beside the note (bottom line) when it fits there */
	char nt[96] = "";
	int legend_top = 1;
	draw_name(f, s, (top_rect){ r.y + 1, r.x, 1, r.w }, af, 0);
	const iogp_access_set *sp = &ch->set;
	if (ch->rc < 0 || sp->n == 0) {
		if (r.h >= 3)
			draw_text(s, r.y + 2, r.x, r.w, ST_DIM,
			          view_window(f->v) > 0 ? "no samples of this file in the window (w)" :
			                                  "no samples of this file");
		return;
	}
	/* rows: title, name, plot..., time axis, note (dropped first when short) */
	int note = r.h >= 6, axis = r.h >= 5;
	int ph = r.h - 2 - axis - note;
	uint64_t ymax = 0;
	for (size_t i = 0; i < sp->n; i++) {
		uint64_t end = sp->s[i].offset + sp->s[i].size;
		end = end < sp->s[i].offset ? UINT64_MAX : end;
		ymax = end > ymax ? end : ymax;
	}
	ymax = nice_bytes(ymax);
	char ytop[24], ymid[24];
	iogp_fmt_bytes(ytop, sizeof(ytop), (double)ymax, IOGP_UNITS_CELL);
	iogp_fmt_bytes(ymid, sizeof(ymid), (double)ymax / 2, IOGP_UNITS_CELL);
	int gut = (int)strlen(ytop) > (int)strlen(ymid) ? (int)strlen(ytop) : (int)strlen(ymid);
	int cw = r.w - gut - 1;
	top_canvas c;
	if (ph < 1 || cw < 4 || canvas_init(&c, cw, ph) < 0) {
		return;
	}
	uint64_t t0 = window_start(f), t1 = f->now_ns;
	if (!t0)
		t0 = sp->from_ns && sp->from_ns < sp->s[0].wall_ns ? sp->from_ns : sp->s[0].wall_ns;
	if (sp->s[sp->n - 1].wall_ns > t1)
		t1 = sp->s[sp->n - 1].wall_ns;
	if (t1 <= t0)
		t1 = t0 + 1;
	int W = 2 * cw, H = 4 * ph;
	for (size_t i = 0; i < sp->n; i++) {
		const iogp_access_sample *a = &sp->s[i];
		if (a->wall_ns < t0)
			continue;
		double fx = (double)(a->wall_ns - t0) / (double)(t1 - t0);
		double fy = ((double)a->offset + (double)a->size / 2) / (double)ymax;
		int px = (int)(fx * (W - 1) + 0.5), py = H - 1 - (int)(fy * (H - 1) + 0.5);
		canvas_dot(&c, px, py, a->op == IOGP_OP_WRITE ? 2 : 1);
	}
	int py0 = r.y + 2;
	canvas_paint(s, &c, py0, r.x + gut + 1);
	canvas_free(&c);
	draw_text(s, py0, r.x + gut - (int)strlen(ytop), gut, ST_DIM, ytop);
	if (ph >= 5)
		draw_text(s, py0 + (ph - 1) / 2, r.x + gut - (int)strlen(ymid), gut, ST_DIM, ymid);
	if (ph >= 2)
		draw_text(s, py0 + ph - 1, r.x + gut - 1, 1, ST_DIM, "0");
	if (axis)
		draw_time_axis(s, py0 + ph, r.x + gut + 1, cw, t0, t1);
	if (note) {
		note_text(nt, sizeof(nt), sp, r.w - LEGEND_W - 1);
		if ((int)strlen(nt) + LEGEND_W + 1 > r.w)
			note_text(nt, sizeof(nt), sp, r.w);
		else
			legend_top = 0;
		draw_text(s, r.y + r.h - 1, r.x, r.w, ST_DIM, nt);
		if (!legend_top)
			draw_legend(s, r.y + r.h - 1, r.x + r.w - LEGEND_W);
	}
	if (legend_top && r.w >= 30)
		draw_name(f, s, (top_rect){ r.y + 1, r.x, 1, r.w }, af, 1);
}

int panel_access_csv(const top_frame *f, FILE *out, char *path, size_t pathlen)
{
	alist l;
	long sel;
	files(f, &l, &sel);
	if (sel < 0) {
		alist_free(&l);
		return IOGP_ENOTFOUND;
	}
	snprintf(path, pathlen, "%s", l.f[sel].path);
	iogp_access_set set;
	int rc = samples_of(f, &l.f[sel], &set);
	if (rc < 0) {
		alist_free(&l);
		return rc;
	}
	iogp_access_csv_header(out);
	for (size_t i = 0; i < set.n; i++)
		iogp_access_csv_row(out, set.s[i].wall_ns, l.f[sel].path, (int)set.s[i].op,
		                    set.s[i].offset, set.s[i].size);
	iogp_access_set_free(&set);
	alist_free(&l);
	return ferror(out) ? IOGP_EIO : 0;
}
