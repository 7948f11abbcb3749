/* plot_access.c - access pattern: file offset vs time, one strip per file
 * (most bytes first), a mark per sampled request coloured by op, and how
 * many requests the marks were sampled from; the frame's samples come from
 * the model's per-file samples of the layer (uniform over the run). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iogp_layers.h"
#include "plot.h"

#define MAX_STRIPS 8
#define MAX_POINTS 200000   /* samples per strip the frame asks for */

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

/* "3,420 of 47,880 requests", "all 312 requests", "1 request" */
static void sampled_text(char *buf, size_t len, size_t n, uint64_t requests, int exact)
{
	char a[32], b[32];
	fmt_thousands(a, sizeof(a), n);
	fmt_thousands(b, sizeof(b), requests);
	const char *req = requests == 1 ? "request" : "requests";
	if (n >= requests && exact)
		snprintf(buf, len, "%s%s %s", requests == 1 ? "" : "all ", b, req);
	else
		snprintf(buf, len, "%s of %s%s %s", a, exact ? "" : "~", b, req);
}

typedef struct fsel {
	const char *path;
	uint64_t bytes;
	uint32_t sources, first_source;
	int placed;
	uint64_t ops;            /* reads and writes of its per-file records, 0: none */
	uint64_t folded;         /* a directory's record: the files it folded */
} fsel;

static int cmp_fsel_path(const void *a, const void *b)
{
	return strcmp(((const fsel *)a)->path, ((const fsel *)b)->path);
}

static int add_file(iogplot_frame *f, const iogp_model *m, const fsel *e)
{
	iogplot_file *nf = realloc(f->files, (f->nfiles + 1) * sizeof(*nf));
	if (!nf)
		return IOGP_ENOMEM;
	f->files = nf;
	char src[160];
	iogp_source_info si;
	if (e->sources > 1)
		snprintf(src, sizeof(src), "%u sources", e->sources);
	else if (iogp_model_source(m, e->first_source, &si) < 0)
		snprintf(src, sizeof(src), "?");
	else if (si.rank >= 0)
		snprintf(src, sizeof(src), "%s rank %lld", si.node ? si.node : "", (long long)si.rank);
	else
		snprintf(src, sizeof(src), "%s pid %lld", si.node ? si.node : "", (long long)si.pid);
	memset(&nf[f->nfiles], 0, sizeof(nf[f->nfiles]));
	nf[f->nfiles].path = strdup(e->path);
	nf[f->nfiles].folded = e->folded;
	nf[f->nfiles].source = strdup(src);
	if (!nf[f->nfiles].path || !nf[f->nfiles].source) {
		free(nf[f->nfiles].path);
		free(nf[f->nfiles].source);
		return IOGP_ENOMEM;
	}
	f->nfiles++;
	return 0;
}

/* The samples of file fi (the frame's f->files[fi]) into f->access; the
 * requests they stand for are ops, the per-file records' count, when known
 * (exact whatever the samples estimate). */
static int add_points(iogplot_frame *f, const iogp_model *m, const iogp_access_query *q0,
                      uint32_t fi, uint64_t ops)
{
	iogp_access_query q = *q0;
	q.path = f->files[fi].path;
	q.max = MAX_POINTS;
	iogp_access_set set;
	int rc = iogp_model_access_query(m, &q, &set);
	if (rc < 0)
		return rc == IOGP_ENOMEM ? rc : 0;
	iogplot_access_pt *np = realloc(f->access, (f->naccess + set.n + 1) * sizeof(*np));
	if (!np) {
		iogp_access_set_free(&set);
		return IOGP_ENOMEM;
	}
	f->access = np;
	iogplot_file *fl = &f->files[fi];
	for (size_t i = 0; i < set.n; i++) {
		const iogp_access_sample *a = &set.s[i];
		f->access[f->naccess++] = (iogplot_access_pt){ (double)a->wall_ns / 1e9, a->offset, a->size,
		                                               fi, a->op };
		uint64_t end = a->offset + a->size;
		end = end < a->offset ? UINT64_MAX : end;
		fl->extent = end > fl->extent ? end : fl->extent;
	}
	if (ops && set.n && ops >= set.n) {
		set.requests = ops;
		set.exact = 1;
	}
	fl->n = set.n;
	fl->requests = set.requests;
	fl->exact = set.exact;
	f->access_requests += set.requests;
	f->access_exact = f->access_exact && set.exact;
	iogp_access_set_free(&set);
	return 0;
}

int pl_frame_access(iogplot_frame *f, const iogp_model *m, const iogp_sel *sel)
{
	f->access_requests = 0;
	f->access_exact = 1;
	iogp_access_query q = { .metric = iogp_layer_slot_metric(f->layer, IOGP_SLOT_ACCESS),
	                        .sel = sel };
	if (!q.metric)
		return 0;
	iogp_file_info *fi = NULL;
	iogp_access_file *af = NULL;
	size_t nfi = 0, naf = 0;
	if (iogp_model_access_files(m, &q, &af, &naf) < 0 || !naf) {
		free(af);
		return 0;
	}
	if (iogp_model_files(m, sel, f->layer, &fi, &nfi) < 0)
		nfi = 0;
	/* the files with samples: first the layer's by bytes moved, then the
	 * others by the bytes their samples estimate */
	fsel *order = calloc(naf, sizeof(*order)), *bypath = calloc(naf, sizeof(*bypath));
	int rc = order && bypath ? 0 : IOGP_ENOMEM;
	size_t n = 0;
	for (size_t i = 0; i < naf && !rc; i++)
		bypath[i] = (fsel){ af[i].path, af[i].bytes, af[i].sources, af[i].first_source, 0, 0, 0 };
	if (!rc)
		qsort(bypath, naf, sizeof(*bypath), cmp_fsel_path);
	for (size_t i = 0; i < nfi && !rc; i++) {
		if (fi[i].other || fi[i].total.op[0].ops + fi[i].total.op[1].ops == 0)
			continue;
		fsel key = { fi[i].path, 0, 0, 0, 0, 0, 0 };
		fsel *k = bsearch(&key, bypath, naf, sizeof(*bypath), cmp_fsel_path);
		if (!k || k->placed)
			continue;
		order[n++] = (fsel){ fi[i].path, 0, fi[i].sources, fi[i].first_source, 1,
		                     fi[i].total.op[0].ops + fi[i].total.op[1].ops, fi[i].total.overflow };
		k->placed = 1;
	}
	for (size_t i = 0; i < naf && !rc; i++) {   /* af is by bytes already */
		fsel key = { af[i].path, 0, 0, 0, 0, 0, 0 };
		fsel *k = bsearch(&key, bypath, naf, sizeof(*bypath), cmp_fsel_path);
		if (k && !k->placed) {
			order[n++] = *k;
			k->placed = 1;
		}
	}
	for (size_t i = 0; i < n && !rc; i++)
		rc = add_file(f, m, &order[i]);
	for (size_t i = 0; i < f->nfiles && i < MAX_STRIPS && !rc; i++)
		rc = add_points(f, m, &q, (uint32_t)i, order[i].ops);
	free(order);
	free(bypath);
	free(af);
	iogp_model_files_free(fi);
	return rc;
}

static void access_layout(pl_layout *l, const iogplot_style *st, const iogplot_frame *f,
                          const iogplot_view *v)
{
	(void)st;
	if (!f->naccess || !f->nfiles) {
		l->empty = 1;
		snprintf(l->empty_msg, sizeof(l->empty_msg), "no access samples yet");
		return;
	}
	double lo, hi, fs = l->fs;
	iogplot_view_time(v, f, &lo, &hi);
	iogplot_rect base = l->sub[0].plot;
	double gap = round(fs * 1.5), smin = fs * 2.6;   /* gap holds the file's name */
	base.y += gap - round(fs * 0.5);
	base.h -= gap - round(fs * 0.5);
	int k = (int)floor((base.h + gap) / (smin + gap));
	if (k > MAX_STRIPS)
		k = MAX_STRIPS;
	if (k > (int)f->nfiles)
		k = (int)f->nfiles;
	if (k < 1)
		k = 1;
	double sh = floor((base.h - gap * (k - 1)) / k);
	l->nsub = k;
	for (int i = 0; i < k; i++) {
		pl_sub *u = &l->sub[i];
		memset(u, 0, sizeof(*u));
		u->plot = (iogplot_rect){ base.x, base.y + i * (sh + gap), base.w, sh };
		u->xlabels = i == k - 1;
		u->ylabels = 1;
		u->yticks_max = 2;
		u->x = (pl_axis){ lo, hi, u->plot.x, u->plot.x + u->plot.w, 0, PL_TIME };
		double ext = (double)f->files[i].extent;
		u->y = (pl_axis){ 0, pl_nice_ceil(fmax(ext, 1)), u->plot.y + u->plot.h, u->plot.y, 0,
		                  PL_BYTES };
	}
}

/* One pass over the samples marks device-independent cells (1 px) per strip
 * and op; marks are then filled from those maps, so the cost follows the
 * samples once and the pixels, not samples x strips. */
static void access_data(cairo_t *cr, const pl_layout *l, const iogplot_style *st,
                        const iogplot_frame *f, const iogplot_view *v)
{
	(void)v;
	double fs = l->fs;
	int ns = l->nsub;
	int w[PL_MAXSUB], h[PL_MAXSUB];
	unsigned char *seen[PL_MAXSUB] = { 0 };
	for (int i = 0; i < ns; i++) {
		w[i] = (int)ceil(l->sub[i].plot.w) + 1;
		h[i] = (int)ceil(l->sub[i].plot.h) + 1;
		seen[i] = calloc((size_t)w[i] * (size_t)h[i], 1);
		if (!seen[i]) {
			while (i-- > 0)
				free(seen[i]);
			return;
		}
	}
	const pl_axis *xa = &l->sub[0].x;
	double xscale = (xa->p1 - xa->p0) / (xa->hi - xa->lo);
	for (size_t k = 0; k < f->naccess; k++) {
		const iogplot_access_pt *a = &f->access[k];
		if (a->file >= (uint32_t)ns || a->t < xa->lo || a->t > xa->hi)
			continue;
		const pl_sub *u = &l->sub[a->file];
		int cx = (int)((a->t - xa->lo) * xscale);
		double ys = u->plot.h / (u->y.hi - u->y.lo);
		int y0 = (int)(u->plot.h - (double)a->offset * ys);
		int y1 = (int)(u->plot.h - ((double)a->offset + (double)a->size) * ys);
		if (y1 < 0)
			y1 = 0;
		if (y0 >= h[a->file])
			y0 = h[a->file] - 1;
		unsigned char bit = (unsigned char)(a->op ? 2 : 1);
		for (int y = y1; y <= y0 && y >= 0; y++)
			seen[a->file][(size_t)y * (size_t)w[a->file] + (size_t)cx] |= bit;
	}
	for (int op = 0; op < 2; op++) {
		for (int i = 0; i < ns; i++) {
			const iogplot_rect *p = &l->sub[i].plot;
			for (int y = 0; y < h[i]; y++) {
				const unsigned char *row = seen[i] + (size_t)y * (size_t)w[i];
				for (int x = 0; x < w[i]; x++) {
					if (!(row[x] & (1 << op)))
						continue;
					int x1 = x;   /* runs of marked cells in one rectangle */
					while (x1 + 1 < w[i] && (row[x1 + 1] & (1 << op)))
						x1++;
					cairo_rectangle(cr, p->x + x - 1, p->y + y - 1, x1 - x + 2, 2);
					x = x1;
				}
			}
		}
		pl_rgba(cr, st->op[op], 0.9);
		cairo_fill(cr);
	}
	for (int i = 0; i < ns; i++)
		free(seen[i]);
	for (int i = 0; i < ns; i++) {
		const iogplot_rect *p = &l->sub[i].plot;
		char lab[512];
		const iogplot_file *fl = &f->files[i];
		char smp[96];
		sampled_text(smp, sizeof(smp), fl->n, fl->requests, fl->exact);
		iogp_file_label(lab, sizeof(lab), fl->path, 0, fl->folded);
		size_t ll = strlen(lab);
		snprintf(lab + ll, sizeof(lab) - ll, "  (%s)  %s", fl->source, smp);
		pl_font(cr, st, 0.8, 0);
		double maxw = p->w - fs * 1.0;
		const char *s = lab;
		char tmp[520];
		if (pl_text_w(cr, lab) > maxw) {
			const char *q = lab;
			do {
				q++;
				while ((*q & 0xc0) == 0x80)
					q++;
				snprintf(tmp, sizeof(tmp), "…%s", q);
			} while (*q && pl_text_w(cr, tmp) > maxw);
			s = tmp;
		}
		pl_rgba(cr, st->fg, 1);
		pl_text(cr, p->x, p->y - fs * 0.55, 0, 1, s);
	}
	/* legend */
	static const char *const nm[2] = { "read", "write" };
	pl_font(cr, st, 0.85, 0);
	double x = l->w - fs * 0.8, ly = fs * 1.05;
	for (int op = 1; op >= 0; op--) {
		pl_rgba(cr, st->fg, 1);
		pl_text(cr, x, ly, 1, 0.5, nm[op]);
		x -= pl_text_w(cr, nm[op]) + fs * 0.3;
		pl_rgba(cr, st->op[op], 1);
		cairo_rectangle(cr, x - fs * 0.6, ly - fs * 0.3, fs * 0.6, fs * 0.6);
		cairo_fill(cr);
		x -= fs * 1.4;
	}
}

static void access_title(char *buf, size_t len, const iogplot_frame *f, const iogplot_view *v)
{
	(void)v;
	char n[32], r[32];
	if (!f->naccess) {
		snprintf(buf, len, "no samples");
		return;
	}
	/* short: the legend shares the line; each strip has the exact numbers */
	iogp_fmt_count(n, sizeof(n), (double)f->naccess, IOGP_UNITS_WIDE);
	iogp_fmt_count(r, sizeof(r), (double)f->access_requests, IOGP_UNITS_WIDE);
	char files[48];
	if (f->nfiles > MAX_STRIPS)   /* the counts are of the strips' files */
		snprintf(files, sizeof(files), "%zu files, the first %d: ", f->nfiles, MAX_STRIPS);
	else
		files[0] = '\0';
	int k = snprintf(buf, len, "%s", files);
	if (k < 0 || (size_t)k >= len)
		return;
	if (f->naccess >= f->access_requests && f->access_exact)
		snprintf(buf + k, len - (size_t)k, "all %s request%s", r, f->access_requests == 1 ? "" : "s");
	else
		snprintf(buf + k, len - (size_t)k, "%s of %s%s requests", n, f->access_exact ? "" : "~", r);
	if (f->nfiles <= MAX_STRIPS && f->nfiles > 1) {
		size_t u = strlen(buf);
		snprintf(buf + u, len - u, ", %zu files", f->nfiles);
	}
}

static int access_tooltip(const pl_layout *l, const iogplot_frame *f, const iogplot_view *v,
                          double x, double y, char *buf, size_t len)
{
	(void)v;
	int strip = -1;
	for (int i = 0; i < l->nsub; i++) {
		const iogplot_rect *p = &l->sub[i].plot;
		if (x >= p->x && x <= p->x + p->w && y >= p->y - 3 && y <= p->y + p->h + 3)
			strip = i;
	}
	if (strip < 0)
		return 0;
	const pl_sub *u = &l->sub[strip];
	double best = 36;
	size_t arg = SIZE_MAX;
	for (size_t k = 0; k < f->naccess; k++) {
		const iogplot_access_pt *a = &f->access[k];
		if (a->file != (uint32_t)strip || a->t < u->x.lo || a->t > u->x.hi)
			continue;
		double dx = pl_map(&u->x, a->t) - x, dy = pl_map(&u->y, (double)a->offset) - y;
		double d = dx * dx + dy * dy;
		if (d < best) {
			best = d;
			arg = k;
		}
	}
	if (arg == SIZE_MAX)
		return 0;
	const iogplot_access_pt *a = &f->access[arg];
	char off[32], sz[32], when[32];
	iogp_fmt_bytes(off, sizeof(off), (double)a->offset, IOGP_UNITS_WIDE);
	iogp_fmt_size(sz, sizeof(sz), (double)a->size, IOGP_UNITS_WIDE);
	iogplot_fmt_clock(when, sizeof(when), a->t, 1);
	int ms = (int)floor((a->t - floor(a->t)) * 1000);
	int n = snprintf(buf, len, "%s at %s.%03d\noffset %llu (%s), size %llu (%s)\n%s\n%s",
	                 a->op ? "write" : "read", when, ms, (unsigned long long)a->offset, off,
	                 (unsigned long long)a->size, sz, f->files[a->file].path,
	                 f->files[a->file].source);
	return n < 0 ? 0 : n >= (int)len ? (int)len - 1 : n;
}

const pl_panel_ops pl_access_ops = { access_layout, access_title, access_data, access_tooltip };
