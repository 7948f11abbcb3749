/* panel_access.c - file offset against time for one file, a braille dot
 * per access sample (reads and writes told apart by colour or weight). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "top.h"

typedef struct afile {
	const char *path;
	uint64_t n, nread, nwrite, maxoff;
} afile;

typedef struct alist {
	afile *f;
	size_t n, cap;
	size_t *hash;          /* index + 1, 0 = empty */
	size_t hcap;
} alist;

static uint64_t hstr(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

static afile *alist_get(alist *l, const char *path)
{
	if ((l->n + 1) * 2 > l->hcap) {
		size_t nc = l->hcap ? l->hcap * 2 : 64;
		size_t *nh = calloc(nc, sizeof(*nh));
		afile *nf = realloc(l->f, nc / 2 * sizeof(*nf));
		if (!nh || !nf) {
			free(nh);
			if (nf)
				l->f = nf;
			return NULL;
		}
		l->f = nf;
		for (size_t i = 0; i < l->n; i++) {
			size_t k = hstr(l->f[i].path) & (nc - 1);
			while (nh[k])
				k = (k + 1) & (nc - 1);
			nh[k] = i + 1;
		}
		free(l->hash);
		l->hash = nh;
		l->hcap = nc;
	}
	size_t k = hstr(path) & (l->hcap - 1);
	while (l->hash[k]) {
		afile *f = &l->f[l->hash[k] - 1];
		if (!strcmp(f->path, path))
			return f;
		k = (k + 1) & (l->hcap - 1);
	}
	l->hash[k] = l->n + 1;
	afile *f = &l->f[l->n++];
	memset(f, 0, sizeof(*f));
	f->path = path;
	return f;
}

static void alist_free(alist *l)
{
	free(l->f);
	free(l->hash);
	memset(l, 0, sizeof(*l));
}

static int in_sel(const top_frame *f, const iogp_source_info *si)
{
	switch (f->v->sel) {
	case IOGP_SEL_NODE: return !strcmp(si->node, f->v->sel_node);
	case IOGP_SEL_SOURCE: return si->id == f->v->sel_source;
	default: return 1;
	}
}

static uint64_t sample_wall(const iogp_source_info *si, uint64_t t)
{
	if (t >= si->last_mono_ns)
		return si->last_wall_ns + (t - si->last_mono_ns);
	uint64_t back = si->last_mono_ns - t;
	return si->last_wall_ns > back ? si->last_wall_ns - back : 0;
}

static uint64_t window_start(const top_frame *f)
{
	double w = view_window(f->v);
	uint64_t wn = (uint64_t)(w * 1e9);
	return w > 0 && f->now_ns > wn ? f->now_ns - wn : 0;
}

/* Visit every sample of the selection in the window: fn(ctx, si, sample, path, wall). */
typedef void (*visit_fn)(void *ctx, const iogp_access *a, const char *path, uint64_t wall);

static void visit(const top_frame *f, visit_fn fn, void *ctx)
{
	uint64_t t0 = window_start(f);
	size_t ns = iogp_model_source_count(f->m);
	for (size_t i = 0; i < ns; i++) {
		iogp_source_info si;
		if (iogp_model_source(f->m, i, &si) < 0 || !in_sel(f, &si))
			continue;
		const iogp_access *seg[2];
		size_t n[2];
		n[0] = iogp_model_access(f->m, i, &seg[0], &n[1], &seg[1]);
		uint64_t last_id = UINT64_MAX;
		const char *last_path = NULL;
		for (int g = 0; g < 2; g++) {
			for (size_t k = 0; k < n[g]; k++) {
				const iogp_access *a = &seg[g][k];
				uint64_t wall = sample_wall(&si, a->t_ns);
				if (wall < t0 || wall > f->now_ns)
					continue;
				if (a->file != last_id) {
					last_id = a->file;
					last_path = iogp_model_file_path(f->m, i, a->file);
				}
				fn(ctx, a, last_path ? last_path : "(unnamed)", wall);
			}
		}
	}
}

static void count_fn(void *ctx, const iogp_access *a, const char *path, uint64_t wall)
{
	(void)wall;
	afile *f = alist_get(ctx, path);
	if (!f)
		return;
	f->n++;
	if (a->op == IOGP_OP_WRITE)
		f->nwrite++;
	else
		f->nread++;
	uint64_t end = a->offset + a->size;
	if (end < a->offset)
		end = UINT64_MAX;
	if (end > f->maxoff)
		f->maxoff = end;
}

static int cmp_path(const void *a, const void *b)
{
	return strcmp(((const afile *)a)->path, ((const afile *)b)->path);
}

/* Files sorted by path; *sel = index of the shown one (-1 if none). */
static void files(const top_frame *f, alist *l, long *sel)
{
	memset(l, 0, sizeof(*l));
	visit(f, count_fn, l);
	if (l->n > 1)
		qsort(l->f, l->n, sizeof(*l->f), cmp_path);
	*sel = -1;
	for (size_t i = 0; i < l->n && f->v->file_path[0]; i++)
		if (!strcmp(l->f[i].path, f->v->file_path))
			*sel = (long)i;
	if (*sel < 0)   /* auto: the busiest */
		for (size_t i = 0; i < l->n; i++)
			if (*sel < 0 || l->f[i].n > l->f[*sel].n)
				*sel = (long)i;
}

void panel_access_cycle(const top_frame *f, int dir)
{
	alist l;
	long sel;
	files(f, &l, &sel);
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
	alist_free(&l);
}

struct plot {
	const char *path;
	top_canvas *c;
	uint64_t t0, t1, ymax;
	FILE *csv;
	uint64_t n;
};

static void plot_fn(void *ctx, const iogp_access *a, const char *path, uint64_t wall)
{
	struct plot *p = ctx;
	if (strcmp(path, p->path))
		return;
	p->n++;
	if (p->csv) {
		iogp_access_csv_row(p->csv, wall, path, a->op, a->offset, a->size);
		return;
	}
	top_canvas *c = p->c;
	int W = 2 * c->cw, H = 4 * c->ch;
	double fx = p->t1 > p->t0 ? (double)(wall - p->t0) / (double)(p->t1 - p->t0) : 1;
	double fy = p->ymax ? ((double)a->offset + (double)a->size / 2) / (double)p->ymax : 0;
	int px = (int)(fx * (W - 1) + 0.5), py = H - 1 - (int)(fy * (H - 1) + 0.5);
	canvas_dot(c, px, py, a->op == IOGP_OP_WRITE ? 2 : 1);
}

struct tmin {
	const char *path;
	uint64_t min;
};

static void tmin_fn(void *ctx, const iogp_access *a, const char *path, uint64_t wall)
{
	(void)a;
	struct tmin *t = ctx;
	if (!strcmp(path, t->path) && wall < t->min)
		t->min = wall;
}

static const char *tail(const char *p, int w)
{
	int n = (int)strlen(p);
	return n > w ? p + (n - w) : p;
}

void panel_access_draw(const top_frame *f, top_surf *s, top_rect r)
{
	if (r.h <= 0)
		return;
	alist l;
	long sel;
	files(f, &l, &sel);
	char right[96] = "";
	if (l.n) {
		uint64_t t0 = window_start(f);
		if (!t0) {
			struct tmin t = { l.f[sel].path, UINT64_MAX };
			visit(f, tmin_fn, &t);
			t0 = t.min == UINT64_MAX ? f->now_ns : t.min;
		}
		char span[24];
		iogp_fmt_duration(span, sizeof(span), (double)(f->now_ns - t0) / 1e9);
		if (r.w >= 60)
			snprintf(right, sizeof(right), "%sfile %ld/%zu, %s", f->v->file_path[0] ? "" : "busiest ",
			         sel + 1, l.n, span);
		else
			snprintf(right, sizeof(right), "%ld/%zu %s", sel + 1, l.n, span);
	}
	panel_title(f, s, r, IOGP_PANEL_ACCESS, NULL, right);
	if (r.h < 2) {
		alist_free(&l);
		return;
	}
	if (sel < 0) {
		draw_text(s, r.y + 1, r.x, r.w, ST_DIM, "no access samples yet");
		alist_free(&l);
		return;
	}
	const afile *af = &l.f[sel];
	char info[64];
	snprintf(info, sizeof(info), " r %" PRIu64 " w %" PRIu64, af->nread, af->nwrite);
	int il = (int)strlen(info);
	int pw = r.w - il;
	if (pw < 8) {
		pw = r.w;
		il = 0;
	}
	int tl = (int)strlen(af->path);
	if (tl > pw) {
		draw_text(s, r.y + 1, r.x, 3, ST_DIM, "...");
		draw_text(s, r.y + 1, r.x + 3, pw - 3, ST_LABEL, tail(af->path, pw - 3));
	} else {
		draw_text(s, r.y + 1, r.x, pw, ST_LABEL, af->path);
	}
	if (il) {
		int x = r.x + (tl < pw ? tl : pw);
		x += draw_text(s, r.y + 1, x, 3, ST_READ, " r ");
		x += draw_textf(s, r.y + 1, x, 24, ST_NORMAL, "%" PRIu64, af->nread);
		x += draw_text(s, r.y + 1, x, 3, ST_WRITE, " w ");
		draw_textf(s, r.y + 1, x, 24, ST_NORMAL, "%" PRIu64, af->nwrite);
	}
	int ph = r.h - 2;
	char ytop[24];
	iogp_fmt_bytes(ytop, sizeof(ytop), (double)af->maxoff, IOGP_UNITS_CELL);
	int gut = (int)strlen(ytop);
	if (gut < 1)
		gut = 1;
	int cw = r.w - gut - 1;
	top_canvas c;
	if (ph < 1 || cw < 4 || canvas_init(&c, cw, ph) < 0) {
		alist_free(&l);
		return;
	}
	struct plot p = { af->path, &c, window_start(f), f->now_ns, af->maxoff, NULL, 0 };
	if (!p.t0) {
		struct tmin t = { af->path, UINT64_MAX };
		visit(f, tmin_fn, &t);
		p.t0 = t.min == UINT64_MAX ? f->now_ns : t.min;
	}
	visit(f, plot_fn, &p);
	canvas_paint(s, &c, r.y + 2, r.x + gut + 1);
	draw_text(s, r.y + 2, r.x + gut - (int)strlen(ytop), gut, ST_DIM, ytop);
	draw_text(s, r.y + 2 + ph - 1, r.x + gut - 1, 1, ST_DIM, "0");
	canvas_free(&c);
	alist_free(&l);
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
	iogp_access_csv_header(out);
	struct plot p = { l.f[sel].path, NULL, 0, 0, 0, out, 0 };
	visit(f, plot_fn, &p);
	alist_free(&l);
	return ferror(out) ? IOGP_EIO : 0;
}
