/* panel_rates.c - read/write bytes/s per node (or per source of the chosen
 * node): min/avg/max/total across them, the top ones as sparklines, and a
 * node x time heatmap when there are more than lines fit. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "top.h"

/* the panel's metrics, as the catalog names them, in the view's layer: read
 * bytes, write bytes (every layer has them) */
#define RATE_READ frame_metric(f, iogp_panel_get(IOGP_PANEL_RATES)->metrics[0])
#define RATE_WRITE frame_metric(f, iogp_panel_get(IOGP_PANEL_RATES)->metrics[1])
#define MAX_BINS 86400

typedef struct rline {
	char name[80];
	iogp_sel sel;
	double *v[2];          /* read, write per bin (NAN: not covered) */
	double cur[2];         /* last bin */
	int covered[2];        /* last bin covered */
	double key;            /* sort: current total */
} rline;

typedef struct rset {
	size_t n;
	rline *l;
	size_t nb;             /* bins */
	uint64_t first_ns, bin_ns;
	double *store;
	int kept;              /* l and store are the frame's kept memory */
} rset;

/* Bins shown: the window, or since the first data (bounded by the ring),
 * ending with the last whole bin. */
static void span(const top_frame *f, size_t *nb, uint64_t *end_ns, uint64_t *bin_ns)
{
	const iogp_model_opts *o = iogp_model_get_opts(f->m);
	uint64_t bin = o && o->bin_ns ? o->bin_ns : 1000000000ull;
	size_t ring = o && o->ring_bins ? o->ring_bins : 300;
	if (ring > MAX_BINS)
		ring = MAX_BINS;
	/* the bin before the one now is in: agents whose intervals end a
	 * little after a bin edge have reported it by now */
	uint64_t end = f->now_ns / bin * bin;
	end = end > bin ? end - bin : 0;
	/* sources whose clocks are far off ours (no NTP, an emulator): follow
	 * their data rather than show an empty ring */
	double r;
	uint8_t c;
	uint64_t first = 0, sp = (uint64_t)ring * bin;
	if (iogp_model_rate(f->m, RATE_READ, NULL, 0, 1, &r, &c, &first) == 0 && first) {
		uint64_t newest = first + bin;
		if (newest + sp < end || newest > end + sp)
			end = newest > bin ? newest - bin : newest;
	}
	double w = view_window(f->v);
	size_t n = ring;
	if (w > 0) {
		n = (size_t)ceil(w * 1e9 / (double)bin);
	} else {
		double *v = malloc(ring * sizeof(double));
		uint8_t *cov = malloc(ring);
		if (v && cov && iogp_model_rate(f->m, RATE_READ, NULL, end, ring, v, cov, &first) == 0) {
			size_t k = 0;
			while (k < ring && !cov[k])
				k++;
			n = k < ring ? ring - k : 1;
		}
		free(v);
		free(cov);
	}
	if (n < 10)
		n = 10;
	if (n > ring)
		n = ring;
	*nb = n;
	*end_ns = end;
	*bin_ns = bin;
}

static void rset_free(rset *rs)
{
	if (!rs->kept) {
		free(rs->l);
		free(rs->store);
	}
	memset(rs, 0, sizeof(*rs));
}

void rates_mem_free(top_rates_mem *r)
{
	free(r->l);
	free(r->store);
	memset(r, 0, sizeof(*r));
}

/* Room for cap lines of nb bins: the frame's kept memory when it has
 * some (grown as needed), else the set's own. */
static int rset_alloc(const top_frame *f, rset *rs, size_t cap)
{
	size_t nv = cap * 2 * rs->nb;
	top_rates_mem *k = f->rates;
	if (!k) {
		rs->l = calloc(cap, sizeof(*rs->l));
		rs->store = malloc(nv * sizeof(double));
		return rs->l && rs->store ? 0 : IOGP_ENOMEM;
	}
	if (cap > k->lcap) {
		free(k->l);
		k->l = malloc(cap * sizeof(rline));
		k->lcap = k->l ? cap : 0;
	}
	if (nv > k->scap) {
		free(k->store);
		k->store = malloc(nv * sizeof(double));
		k->scap = k->store ? nv : 0;
	}
	if (!k->l || !k->store)
		return IOGP_ENOMEM;
	rs->l = k->l;
	rs->store = k->store;
	rs->kept = 1;
	memset(rs->l, 0, cap * sizeof(rline));
	return 0;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(((const rline *)a)->name, ((const rline *)b)->name);
}

/* One line per node (all), per source (a node), or the source itself. */
static int rset_get(const top_frame *f, rset *rs)
{
	memset(rs, 0, sizeof(*rs));
	uint64_t end;
	span(f, &rs->nb, &end, &rs->bin_ns);
	const top_view *v = f->v;
	size_t cap;
	if (v->sel == IOGP_SEL_ALL)
		cap = iogp_model_node_count(f->m);
	else
		cap = iogp_model_source_count(f->m);
	if (!cap)
		return 0;
	int arc = rset_alloc(f, rs, cap);
	double *tmp = malloc(rs->nb * sizeof(double));
	uint8_t *cov = malloc(rs->nb);
	if (arc < 0 || !tmp || !cov) {
		free(tmp);
		free(cov);
		rset_free(rs);
		return IOGP_ENOMEM;
	}
	for (size_t i = 0; i < cap; i++) {
		rline *l = &rs->l[rs->n];
		if (v->sel == IOGP_SEL_ALL) {
			const char *node = iogp_model_node(f->m, i);
			l->sel = (iogp_sel){ .kind = IOGP_SEL_NODE, .node = node };
			snprintf(l->name, sizeof(l->name), "%s", node ? node : "?");
		} else {
			iogp_source_info si;
			if (iogp_model_source(f->m, i, &si) < 0)
				continue;
			if (v->sel == IOGP_SEL_NODE && strcmp(si.node, v->sel_node))
				continue;
			if (v->sel == IOGP_SEL_SOURCE && si.id != v->sel_source)
				continue;
			l->sel = (iogp_sel){ .kind = IOGP_SEL_SOURCE, .source = si.id };
			if (si.rank >= 0)
				snprintf(l->name, sizeof(l->name), "rank %" PRId64, si.rank);
			else
				snprintf(l->name, sizeof(l->name), "pid %" PRId64, si.pid);
		}
		for (int d = 0; d < 2; d++) {
			l->v[d] = rs->store + (rs->n * 2 + (size_t)d) * rs->nb;
			uint64_t first = 0;
			int rc = iogp_model_rate(f->m, d ? RATE_WRITE : RATE_READ, &l->sel, end, rs->nb,
			                         tmp, cov, &first);
			for (size_t b = 0; b < rs->nb; b++)
				l->v[d][b] = rc >= 0 && cov[b] ? tmp[b] : NAN;
			if (rc >= 0 && first)
				rs->first_ns = first;
			l->covered[d] = rc >= 0 && cov[rs->nb - 1];
			l->cur[d] = l->covered[d] ? tmp[rs->nb - 1] : 0;
		}
		l->key = (v->dir != DIR_WRITE ? l->cur[0] : 0) + (v->dir != DIR_READ ? l->cur[1] : 0);
		rs->n++;
	}
	free(tmp);
	free(cov);
	return 0;
}

/* Value of line l at bin b for direction dir; NAN when uncovered. */
static double lval(int dir, const rline *l, size_t b)
{
	switch (dir) {
	case DIR_READ: return l->v[0][b];
	case DIR_WRITE: return l->v[1][b];
	default:
		if (isnan(l->v[0][b]) && isnan(l->v[1][b]))
			return NAN;
		return (isnan(l->v[0][b]) ? 0 : l->v[0][b]) + (isnan(l->v[1][b]) ? 0 : l->v[1][b]);
	}
}

/* Column c of gw: mean of its bins (NAN if none covered). */
static double colval(int dir, const rline *l, size_t nb, int c, int gw)
{
	size_t b0 = (size_t)c * nb / (size_t)gw, b1 = (size_t)(c + 1) * nb / (size_t)gw;
	if (b1 <= b0)
		b1 = b0 + 1;
	double sum = 0;
	int n = 0;
	for (size_t b = b0; b < b1 && b < nb; b++) {
		double x = lval(dir, l, b);
		if (!isnan(x)) {
			sum += x;
			n++;
		}
	}
	return n ? sum / n : NAN;
}

static void summary(const top_frame *f, top_surf *s, int y, int x, int w, const rset *rs, int d)
{
	double min = 0, max = 0, tot = 0;
	const char *minn = "", *maxn = "";
	int n = 0;
	for (size_t i = 0; i < rs->n; i++) {
		const rline *l = &rs->l[i];
		if (!l->covered[d])
			continue;
		double v = l->cur[d];
		if (!n || v < min) {
			min = v;
			minn = l->name;
		}
		if (!n || v > max) {
			max = v;
			maxn = l->name;
		}
		tot += v;
		n++;
	}
	char tok[5][192];
	int narrow = w < 70;
	const char *u = narrow ? "" : "/s";
	char v[24];
	iogp_fmt_rate(v, sizeof(v), "bytes", tot, IOGP_UNITS_CELL);
	v[strlen(v) - 2] = '\0';   /* the unit goes back on below, or not */
	snprintf(tok[0], sizeof(tok[0]), "%s", d ? "write" : "read ");
	snprintf(tok[1], sizeof(tok[1]), "%s %s%s", narrow ? "tot" : "total", v, u);
	iogp_fmt_rate(v, sizeof(v), "bytes", n ? tot / n : 0, IOGP_UNITS_CELL);
	v[strlen(v) - 2] = '\0';
	snprintf(tok[2], sizeof(tok[2]), "avg %s%s", v, u);
	iogp_fmt_rate(v, sizeof(v), "bytes", min, IOGP_UNITS_CELL);
	v[strlen(v) - 2] = '\0';
	snprintf(tok[3], sizeof(tok[3]), "min %s%s%s%s", v, u, narrow ? "" : " ", narrow ? "" : minn);
	iogp_fmt_rate(v, sizeof(v), "bytes", max, IOGP_UNITS_CELL);
	v[strlen(v) - 2] = '\0';
	snprintf(tok[4], sizeof(tok[4]), "max %s%s%s%s", v, u, narrow ? "" : " ", narrow ? "" : maxn);
	int st = d ? ST_WRITE : ST_READ;
	if (!n) {
		int k = draw_text(s, y, x, w, st, tok[0]);
		draw_text(s, y, x + k, w - k, ST_DIM, " no data in the last whole second");
		return;
	}
	int cx = x;
	for (int i = 0; i < 5; i++) {
		int len = (int)strlen(tok[i]);
		if (cx > x && cx + 1 + len > x + w)
			break;
		if (cx > x)
			cx++;
		cx += draw_text(s, y, cx, x + w - cx, i ? ST_NORMAL : st, tok[i]);
	}
	(void)f;
}

static void draw_lines(const top_frame *f, top_surf *s, top_rect r, rset *rs)
{
	/* by name: a line stays where it is from one second to the next */
	if (rs->n > 1)
		qsort(rs->l, rs->n, sizeof(*rs->l), cmp_name);
	int lw = 4;
	for (size_t i = 0; i < rs->n; i++) {
		int n = (int)strlen(rs->l[i].name);
		lw = n > lw ? n : lw;
	}
	if (lw > 14)
		lw = 14;
	int two = f->v->dir == DIR_BOTH && r.w >= 70;
	int valw = 9;
	/* name gw value [gw value] */
	int gw = two ? (r.w - lw - 2 * valw - 4) / 2 : r.w - lw - 1 - valw - 1;
	if (gw < 4)
		gw = 4;
	double *cols = malloc((size_t)gw * sizeof(double));
	if (!cols)
		return;
	/* one scale for every line, so lines compare */
	double vmax = 0;
	for (size_t i = 0; i < rs->n; i++)
		for (int d = 0; d < (two ? 2 : 1); d++)
			for (int c = 0; c < gw; c++) {
				double x = colval(two ? (d ? DIR_WRITE : DIR_READ) : f->v->dir, &rs->l[i], rs->nb, c, gw);
				if (!isnan(x) && x > vmax)
					vmax = x;
			}
	for (size_t i = 0; i < rs->n && (int)i < r.h; i++) {
		const rline *l = &rs->l[i];
		int y = r.y + (int)i;
		draw_text(s, y, r.x, lw, ST_LABEL, l->name);
		int x = r.x + lw + 1;
		for (int d = 0; d < (two ? 2 : 1); d++) {
			int dir = two ? (d ? DIR_WRITE : DIR_READ) : f->v->dir;
			for (int c = 0; c < gw; c++) {
				double x2 = colval(dir, l, rs->nb, c, gw);
				cols[c] = isnan(x2) ? -1 : f->v->logscale ? log1p(x2) : x2;
			}
			double m = f->v->logscale ? log1p(vmax) : vmax;
			int st = dir == DIR_READ ? ST_READ : dir == DIR_WRITE ? ST_WRITE : ST_BOTH;
			draw_spark(s, y, x, cols, gw, m, st);
			double cur = dir == DIR_READ ? l->cur[0] : dir == DIR_WRITE ? l->cur[1]
			           : l->cur[0] + l->cur[1];
			char t[24];
			iogp_fmt_rate(t, sizeof(t), "bytes", cur, IOGP_UNITS_CELL);
			int tl = (int)strlen(t);
			draw_text(s, y, x + gw + 1 + (valw > tl ? valw - tl : 0), valw, ST_NORMAL, t);
			x += gw + 1 + valw + 1;
		}
	}
	free(cols);
	if ((int)rs->n > r.h && r.h > 0) {
		char t[48];
		snprintf(t, sizeof(t), "+%zu more", rs->n - (size_t)r.h + 1);
		draw_clear(s, (top_rect){ r.y + r.h - 1, r.x, 1, r.w });
		draw_text(s, r.y + r.h - 1, r.x, r.w, ST_DIM, t);
	}
}

static void draw_heatmap(const top_frame *f, top_surf *s, top_rect r, rset *rs)
{
	if (rs->n > 1)
		qsort(rs->l, rs->n, sizeof(*rs->l), cmp_name);
	if (r.h <= 0 || rs->n == 0)
		return;
	size_t per = (rs->n + (size_t)r.h - 1) / (size_t)r.h;
	size_t rows = (rs->n + per - 1) / per;
	int lw = 4;
	for (size_t i = 0; i < rs->n; i++) {
		int n = (int)strlen(rs->l[i].name) + (per > 1 ? 5 : 0);
		lw = n > lw ? n : lw;
	}
	if (lw > 16)
		lw = 16;
	int valw = 9;
	int gw = r.w - lw - 1 - valw - 1;
	if (gw < 4)
		return;
	double *cells = malloc(rows * (size_t)gw * sizeof(double));
	double *cur = calloc(rows, sizeof(double));
	if (!cells || !cur) {
		free(cells);
		free(cur);
		return;
	}
	double vmax = 0;
	for (size_t g = 0; g < rows; g++) {
		for (int c = 0; c < gw; c++) {
			double sum = NAN;
			for (size_t i = g * per; i < (g + 1) * per && i < rs->n; i++) {
				double x = colval(f->v->dir, &rs->l[i], rs->nb, c, gw);
				if (!isnan(x))
					sum = isnan(sum) ? x : sum + x;
			}
			cells[g * (size_t)gw + (size_t)c] = sum;
			if (!isnan(sum) && sum > vmax)
				vmax = sum;
		}
		for (size_t i = g * per; i < (g + 1) * per && i < rs->n; i++) {
			const rline *l = &rs->l[i];
			cur[g] += f->v->dir == DIR_READ ? l->cur[0] : f->v->dir == DIR_WRITE ? l->cur[1]
			        : l->cur[0] + l->cur[1];
		}
	}
	for (size_t g = 0; g < rows; g++) {
		int y = r.y + (int)g;
		char name[96];
		if (per > 1) {
			size_t last = (g + 1) * per < rs->n ? (g + 1) * per : rs->n;
			snprintf(name, sizeof(name), "%.*s+%zu", lw - 4, rs->l[g * per].name, last - g * per - 1);
		} else {
			snprintf(name, sizeof(name), "%s", rs->l[g].name);
		}
		draw_text(s, y, r.x, lw, ST_LABEL, name);
		for (int c = 0; c < gw; c++) {
			double x = cells[g * (size_t)gw + (size_t)c];
			double lev = isnan(x) ? -1 : vmax <= 0 ? 0
			           : f->v->logscale ? log1p(x) / log1p(vmax) : x / vmax;
			if (!isnan(x) && x > 0 && lev < 0.01)
				lev = 0.01;
			draw_heat(s, y, r.x + lw + 1 + c, lev);
		}
		char t[24];
		iogp_fmt_rate(t, sizeof(t), "bytes", cur[g], IOGP_UNITS_CELL);
		int tl = (int)strlen(t);
		draw_text(s, y, r.x + lw + 1 + gw + 1 + (valw > tl ? valw - tl : 0), valw, ST_NORMAL, t);
	}
	free(cells);
	free(cur);
}

/* Each node's latency p99 over the same time as the rates (the model's
 * windows hold the last few minutes; older columns stay empty), on a log
 * colour scale between the smallest and the largest shown; rows that
 * stand for several nodes show the slowest of them. */
static void draw_heat_p99(const top_frame *f, top_surf *s, top_rect r, const rset *rs)
{
	iogp_heat *h = f->heat;
	uint64_t j0, j1;
	if (r.h <= 0 || !h || !iogp_heat_slots(h, &j0, &j1)) {
		if (r.h > 0)
			draw_text(s, r.y, r.x, r.w, ST_DIM, "no latency history (needs the live windows)");
		return;
	}
	uint64_t S = iogp_heat_slots(h, &j0, &j1);
	size_t nn = iogp_heat_nodes(h), *idx = malloc((nn ? nn : 1) * sizeof(size_t)), n = 0;
	if (!idx)
		return;
	/* the nodes the rates panel shows: all, or the selection's */
	char node[128] = "";
	if (f->v->sel == IOGP_SEL_NODE)
		snprintf(node, sizeof(node), "%s", f->v->sel_node);
	else if (f->v->sel == IOGP_SEL_SOURCE) {
		size_t i;
		iogp_source_info si;
		if (iogp_model_source_index(f->m, f->v->sel_source, &i) == 0 &&
		    iogp_model_source(f->m, i, &si) == 0)
			snprintf(node, sizeof(node), "%s", si.node ? si.node : "");
	}
	for (size_t i = 0; i < nn; i++)
		if (!node[0] || !strcmp(node, iogp_heat_node(h, i)))
			idx[n++] = i;
	/* by name */
	for (size_t i = 1; i < n; i++)
		for (size_t k = i; k > 0 && strcmp(iogp_heat_node(h, idx[k - 1]), iogp_heat_node(h, idx[k])) > 0; k--) {
			size_t x = idx[k];
			idx[k] = idx[k - 1];
			idx[k - 1] = x;
		}
	if (!n || !S) {
		draw_text(s, r.y, r.x, r.w, ST_DIM, "no nodes yet");
		free(idx);
		return;
	}
	size_t per = (n + (size_t)r.h - 1) / (size_t)r.h, rows = (n + per - 1) / per;
	int lw = 4;
	for (size_t i = 0; i < n; i++) {
		int l = (int)strlen(iogp_heat_node(h, idx[i])) + (per > 1 ? 5 : 0);
		lw = l > lw ? l : lw;
	}
	if (lw > 16)
		lw = 16;
	int valw = 9, gw = r.w - lw - 1 - valw - 1;
	double *cells = gw >= 4 ? malloc(rows * (size_t)gw * sizeof(double)) : NULL;
	if (!cells) {
		free(idx);
		return;
	}
	uint64_t t0 = rs->first_ns ? rs->first_ns : (j1 + 1) * S - (uint64_t)rs->nb * rs->bin_ns;
	uint64_t span = (uint64_t)rs->nb * rs->bin_ns;
	double lo = INFINITY, hi = 0;
	for (size_t g = 0; g < rows; g++)
		for (int c = 0; c < gw; c++) {
			uint64_t ta = t0 + span * (uint64_t)c / (uint64_t)gw;
			uint64_t tb = t0 + span * (uint64_t)(c + 1) / (uint64_t)gw;
			double v = NAN;
			for (uint64_t j = ta / S; j <= (tb > ta ? tb - 1 : ta) / S; j++)
				for (size_t i = g * per; i < (g + 1) * per && i < n; i++) {
					uint64_t ns;
					if (iogp_heat_get(h, idx[i], j, &ns) && (isnan(v) || (double)ns > v))
						v = (double)ns;
				}
			cells[g * (size_t)gw + (size_t)c] = v;
			if (!isnan(v) && v > 0) {
				lo = v < lo ? v : lo;
				hi = v > hi ? v : hi;
			}
		}
	for (size_t g = 0; g < rows; g++) {
		int y = r.y + (int)g;
		char name[96], t[24];
		const char *first = iogp_heat_node(h, idx[g * per]);
		size_t last = (g + 1) * per < n ? (g + 1) * per : n;
		if (per > 1)
			snprintf(name, sizeof(name), "%.*s+%zu", lw - 4, first, last - g * per - 1);
		else
			snprintf(name, sizeof(name), "%s", first);
		draw_text(s, y, r.x, lw, ST_LABEL, name);
		for (int c = 0; c < gw; c++) {
			double v = cells[g * (size_t)gw + (size_t)c];
			double lev = isnan(v) ? -1 : !(hi > lo) ? 1 : log(v / lo) / log(hi / lo);
			if (!isnan(v) && lev < 0.01)
				lev = 0.01;
			draw_heat(s, y, r.x + lw + 1 + c, lev);
		}
		/* the latest whole slot's p99, else the current one's */
		double now = NAN;
		for (size_t i = g * per; i < last; i++) {
			uint64_t ns;
			if ((iogp_heat_get(h, idx[i], j1 ? j1 - 1 : j1, &ns) || iogp_heat_get(h, idx[i], j1, &ns)) &&
			    (isnan(now) || (double)ns > now))
				now = (double)ns;
		}
		if (isnan(now))
			snprintf(t, sizeof(t), "-");
		else
			iogp_fmt_ns(t, sizeof(t), now, IOGP_UNITS_CELL);
		int tl = (int)strlen(t);
		draw_text(s, y, r.x + lw + 1 + gw + 1 + (valw > tl ? valw - tl : 0), valw, ST_NORMAL, t);
	}
	free(cells);
	free(idx);
}

void panel_rates_draw(const top_frame *f, top_surf *s, top_rect r)
{
	if (r.h <= 0)
		return;
	rset rs;
	int rc = rset_get(f, &rs);
	double secs = (double)rs.nb * (double)rs.bin_ns / 1e9;
	char right[96];
	int nd = f->v->dir == DIR_BOTH ? 2 : 1;
	int avail = r.h - 1 - nd;
	int p99 = f->v->rates_mode == RATES_HEAT_P99;
	int heat = f->v->rates_mode == RATES_HEAT || p99 ||
	           (f->v->rates_mode == RATES_AUTO && (int)rs.n > avail);
	if (p99 && f->heat)
		iogp_heat_update(f->heat, f->m, f->v->layer);   /* failed: it has no slots to show */
	uint64_t j0, j1, slot = f->heat ? iogp_heat_slots(f->heat, &j0, &j1) : 0;
	if (p99)
		snprintf(right, sizeof(right), "heatmap, read+write latency p99 %gs (%gs slots)", secs,
		         (double)(slot ? slot : 1000000000ull) / 1e9);
	else
		snprintf(right, sizeof(right), "%s%s %gs", heat ? "heatmap, " : "",
		         f->v->dir == DIR_READ ? "read B/s" : f->v->dir == DIR_WRITE ? "write B/s" : "B/s",
		         secs);
	panel_title(f, s, r, IOGP_PANEL_RATES, f->v->sel == IOGP_SEL_ALL ? NULL : "source rates", right);
	if (rc < 0 || rs.n == 0) {
		if (r.h > 1)
			draw_text(s, r.y + 1, r.x, r.w, ST_DIM, rc < 0 ? iogp_strerror(rc) : "no sources yet");
		rset_free(&rs);
		return;
	}
	int y = r.y + 1;
	for (int d = 0; d < 2 && y < r.y + r.h; d++) {
		if ((d == 0 && f->v->dir == DIR_WRITE) || (d == 1 && f->v->dir == DIR_READ))
			continue;
		summary(f, s, y++, r.x, r.w, &rs, d);
	}
	top_rect body = { y, r.x, r.y + r.h - y, r.w };
	if (p99)
		draw_heat_p99(f, s, body, &rs);
	else if (heat)
		draw_heatmap(f, s, body, &rs);
	else
		draw_lines(f, s, body, &rs);
	rset_free(&rs);
}

int panel_rates_series(const top_frame *f, const char *metric, int ncols, iogp_series *out)
{
	(void)ncols;
	memset(out, 0, sizeof(*out));
	int d = !strcmp(metric, RATE_WRITE);
	rset rs;
	int rc = rset_get(f, &rs);
	if (rc < 0)
		return rc;
	if (rs.n > 1)
		qsort(rs.l, rs.n, sizeof(*rs.l), cmp_name);
	out->step_s = (double)rs.bin_ns / 1e9;
	out->origin_ns = rs.first_ns;
	out->nbins = out->cap = rs.nb;
	out->kind = IOGP_COUNTER;
	snprintf(out->unit, sizeof(out->unit), "bytes");
	out->nodes = calloc(rs.n ? rs.n : 1, sizeof(char *));
	out->v = calloc(rs.n ? rs.n : 1, sizeof(double *));
	out->covered = calloc(rs.n ? rs.n : 1, sizeof(uint8_t *));
	if (!out->nodes || !out->v || !out->covered) {
		rset_free(&rs);
		iogp_series_free(out);
		return IOGP_ENOMEM;
	}
	for (size_t i = 0; i < rs.n; i++) {
		out->nodes[i] = strdup(rs.l[i].name);
		out->v[i] = calloc(rs.nb, sizeof(double));
		out->covered[i] = calloc(rs.nb, 1);
		out->nnodes = i + 1;
		if (!out->nodes[i] || !out->v[i] || !out->covered[i]) {
			rset_free(&rs);
			iogp_series_free(out);
			return IOGP_ENOMEM;
		}
		for (size_t b = 0; b < rs.nb; b++) {
			double x = rs.l[i].v[d][b];
			out->covered[i][b] = !isnan(x);
			out->v[i][b] = isnan(x) ? 0 : x;
		}
	}
	rset_free(&rs);
	return 0;
}

void panel_rates_span(const top_frame *f, size_t *nb, uint64_t *end_ns, uint64_t *bin_ns)
{
	span(f, nb, end_ns, bin_ns);
}
