/* panel_hist.c - request size, queue depth and latency: read and write
 * histograms on shared rows (one bin scheme, re-binned to fit the rows),
 * with count and p50/p90/p99/max from the native histograms; request
 * sizes by count or by bytes, beside their common sizes (panel_sizes.c). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "top.h"

/* Panel p's metric for reads (w 0) or writes (w 1), from the catalog; a
 * panel of one metric (queue depth) has it for both. */
static const char *metric_of(const iogp_panel *e, int w)
{
	return w && e->metrics[1] ? e->metrics[1] : e->metrics[0];
}

/* The histogram of the selection over the view's window. */
int panel_hist_query(const top_frame *f, const char *metric, iogp_hist *out)
{
	iogp_sel sel;
	frame_sel(f, &sel);
	double w = view_window(f->v);
	int rc;
	if (w > 0)
		rc = iogp_model_hist_window(f->m, metric, &sel, (uint64_t)(w * 1e9), out);
	else
		rc = iogp_model_hist(f->m, metric, &sel, out);
	return rc == IOGP_ESCHEME ? 0 : rc;
}

/* A width of 1, 2 or 5 x 10^n (bytes: a power of two), at least w. */
static uint64_t nice_width(uint64_t w, int pow2)
{
	if (w < 1)
		return 1;
	uint64_t d = 1;
	if (pow2) {
		while (d < w && d < (1ull << 62))
			d <<= 1;
		return d;
	}
	for (;;) {
		if (d >= w)
			return d;
		if (2 * d >= w)
			return 2 * d;
		if (5 * d >= w)
			return 5 * d;
		if (d > UINT64_MAX / 100)
			return w;
		d *= 10;
	}
}

/* Union of the shown histograms' first and last bin index. */
static int union_span(const hist_view *hv, uint64_t *first, uint64_t *last)
{
	int any = 0;
	for (int d = 0; d < hv->nd; d++) {
		const iogp_hist *h = &hv->shown[d];
		if (!h->n)
			continue;
		if (!any || h->bins[0].idx < *first)
			*first = h->bins[0].idx;
		if (!any || h->bins[h->n - 1].idx > *last)
			*last = h->bins[h->n - 1].idx;
		any = 1;
	}
	return any;
}

static int replace(iogp_hist *h, int rc, iogp_hist *tmp)
{
	if (rc < 0) {
		iogp_hist_free(tmp);
		return rc;
	}
	iogp_hist_free(h);
	*h = *tmp;
	return 0;
}

static int rebin_all(hist_view *hv, const iogp_bins *b)
{
	for (int d = 0; d < hv->nd; d++) {
		iogp_hist tmp;
		int rc = replace(&hv->shown[d], iogp_hist_rebin(&tmp, &hv->shown[d], b), &tmp);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int choose_bins(const top_frame *f, hist_view *hv, int maxrows)
{
	int rc = 0;
	/* one scheme for every direction, so the rows are shared */
	if (hv->nd == 2 && !iogp_bins_equal(&hv->shown[0].scheme, &hv->shown[1].scheme)) {
		iogp_hist tmp;
		rc = replace(&hv->shown[1], iogp_hist_rebin(&tmp, &hv->shown[1], &hv->shown[0].scheme), &tmp);
		if (rc < 0)
			return rc;
	}
	iogp_bins b;
	uint64_t first = 0, last = 0;
	switch (f->v->bins) {
	case BINS_LOG2:
		iogp_bins_log2(&b);
		snprintf(hv->bins_text, sizeof(hv->bins_text), "log2");
		return rebin_all(hv, &b);
	case BINS_FIXED: {
		/* equal rows from the smallest value to Tukey's upper fence
		 * (p75 + 1.5 x the interquartile range), the rest in a last ">="
		 * row: a few slow requests would otherwise put every other one in
		 * the first row */
		uint64_t lo = UINT64_MAX, hi = 0;
		for (int d = 0; d < hv->nd; d++) {
			uint64_t a, q1, q3, z;
			if (iogp_hist_min(&hv->native[d], &a) == 0 && a < lo)
				lo = a;
			if (iogp_hist_quantile(&hv->native[d], 0.25, &q1) < 0 ||
			    iogp_hist_quantile(&hv->native[d], 0.75, &q3) < 0 ||
			    iogp_hist_max(&hv->native[d], &z) < 0)
				continue;
			uint64_t fence = q3 + (q3 - (q1 < q3 ? q1 : q3)) * 3 / 2;
			fence = fence < z ? fence : z;
			hi = fence > hi ? fence : hi;
		}
		if (lo > hi) {
			snprintf(hv->bins_text, sizeof(hv->bins_text), "fixed");
			return 0;
		}
		uint64_t rowsw = maxrows > 2 ? (uint64_t)maxrows - 1 : 1;
		if (rowsw > IOGP_MAX_EDGES - 1)
			rowsw = IOGP_MAX_EDGES - 1;
		uint64_t w = nice_width((hi - lo) / rowsw + 1, !strcmp(hv->unit, "bytes"));
		uint64_t e[IOGP_MAX_EDGES], start = lo / w * w;
		uint32_t ne = 0;
		e[ne++] = lo;   /* the first row starts at the smallest value */
		for (uint64_t i = 1; i <= rowsw && start + i * w > e[ne - 1]; i++)
			e[ne++] = start + i * w;
		if ((rc = iogp_bins_edges(&b, e, ne)) < 0)
			return rc;
		char ws[32];
		hist_fmt(ws, sizeof(ws), hv, (double)w);
		snprintf(hv->bins_text, sizeof(hv->bins_text), "fixed %s", ws);
		return rebin_all(hv, &b);
	}
	default:
		if (hv->shown[0].scheme.kind != IOGP_BINS_NATIVE) {
			iogp_bins_format(&hv->shown[0].scheme, hv->bins_text, sizeof(hv->bins_text));
			return 0;
		}
		/* coarser native buckets (exact merges) until the span fits */
		while (union_span(hv, &first, &last) && last - first >= (uint64_t)maxrows &&
		       hv->shown[0].scheme.k > 1) {
			for (int d = 0; d < hv->nd; d++) {
				iogp_hist tmp;
				if ((rc = replace(&hv->shown[d], iogp_hist_reduce_k(&tmp, &hv->shown[d]), &tmp)) < 0)
					return rc;
			}
		}
		snprintf(hv->bins_text, sizeof(hv->bins_text), "native k=%u", hv->shown[0].scheme.k);
		return 0;
	}
}

/* Row r's share of h's bin idx (*k walks h's bins): its count and bytes;
 * *value gets the one exact size of an explained bin, else is left. */
static uint64_t count_at(const iogp_hist *h, size_t *k, uint64_t idx, hist_row *r, int d,
                         int *exact, uint64_t *value)
{
	while (*k < h->n && h->bins[*k].idx < idx)
		(*k)++;
	if (*k >= h->n || h->bins[*k].idx != idx)
		return 0;
	size_t first, n;
	r->bytes[d] = iogp_hist_bin_sum(h, *k);
	if (!iogp_hist_bin_exact(h, *k, &first, &n) || n != 1)
		*exact = 0;
	else if (*value != UINT64_MAX && *value != h->exact[first].value)
		*exact = 0;
	else
		*value = h->exact[first].value;
	return h->bins[*k].count;
}

static int make_rows(hist_view *hv, int maxrows)
{
	uint64_t first = 0, last = 0;
	if (!union_span(hv, &first, &last) || maxrows < 1)
		return 0;
	const iogp_bins *sc = &hv->shown[0].scheme;
	size_t cap = hv->shown[0].n + (hv->nd > 1 ? hv->shown[1].n : 0);
	int contiguous = last - first < (uint64_t)maxrows;
	if (contiguous)
		cap = (size_t)(last - first + 1);
	hist_row *rows = calloc(cap ? cap : 1, sizeof(*rows));
	if (!rows)
		return IOGP_ENOMEM;
	size_t n = 0, k[2] = { 0, 0 };
	uint64_t prev = 0;
	for (uint64_t idx = first;;) {
		hist_row *r = &rows[n];
		iogp_bins_bounds(sc, idx, &r->lo, &r->hi);
		r->merged = 1;
		int exact = 1;
		uint64_t value = UINT64_MAX;
		for (int d = 0; d < hv->nd; d++)
			r->count[d] = count_at(&hv->shown[d], &k[d], idx, r, d, &exact, &value);
		r->exact = exact && value != UINT64_MAX;
		r->value = r->exact ? value : 0;
		r->gap = n > 0 && idx != prev + 1;
		prev = idx;
		n++;
		if (idx == last || n == cap)
			break;
		if (contiguous) {
			idx++;
			continue;
		}
		/* next index present in either histogram */
		uint64_t next = UINT64_MAX;
		for (int d = 0; d < hv->nd; d++) {
			const iogp_hist *h = &hv->shown[d];
			size_t j = k[d];
			while (j < h->n && h->bins[j].idx <= idx)
				j++;
			if (j < h->n && h->bins[j].idx < next)
				next = h->bins[j].idx;
		}
		if (next == UINT64_MAX)
			break;
		idx = next;
	}
	if (n > (size_t)maxrows) {   /* neighbours merged: exact counts, wider rows */
		size_t out = 0;
		for (size_t g = 0; g < (size_t)maxrows; g++, out++) {
			size_t i = g * n / (size_t)maxrows, end = (g + 1) * n / (size_t)maxrows;
			hist_row r = rows[i];
			for (size_t j = i + 1; j < end; j++) {
				r.hi = rows[j].hi;
				r.merged += rows[j].merged;
				r.count[0] += rows[j].count[0];
				r.count[1] += rows[j].count[1];
				r.bytes[0] += rows[j].bytes[0];
				r.bytes[1] += rows[j].bytes[1];
				r.exact = 0;
			}
			r.gap = out > 0;
			rows[out] = r;
		}
		n = out;
		size_t u = strlen(hv->bins_text);
		snprintf(hv->bins_text + u, sizeof(hv->bins_text) - u, " merged");
	}
	hv->rows = rows;
	hv->nrows = n;
	return 0;
}

/* hv's native histograms (and copies to re-bin) of panel p. */
static int hist_view_fetch(const top_frame *f, int p, hist_view *hv)
{
	memset(hv, 0, sizeof(*hv));
	iogp_bins nb;
	iogp_bins_native(&nb, IOGP_NATIVE_K_DEFAULT);
	for (int d = 0; d < 2; d++) {
		iogp_hist_init(&hv->native[d], &nb);
		iogp_hist_init(&hv->shown[d], &nb);
	}
	const iogp_panel *e = iogp_panel_get(p);
	if (!e || e->data != IOGP_DATA_HIST || !panel_shown(p))
		return IOGP_EINVAL;
	int single = !e->metrics[1];   /* queue depth: reads and writes together */
	hv->unit = p == IOGP_PANEL_SIZE ? "bytes" : p == IOGP_PANEL_LATENCY ? "ns" : "requests";
	if (single) {
		hv->nd = 1;
		hv->dir[0] = DIR_BOTH;
	} else if (f->v->dir == DIR_BOTH) {
		hv->nd = 2;
		hv->dir[0] = DIR_READ;
		hv->dir[1] = DIR_WRITE;
	} else {
		hv->nd = 1;
		hv->dir[0] = f->v->dir;
	}
	int rc = 0;
	for (int d = 0; d < hv->nd; d++) {
		int w = hv->dir[d] == DIR_WRITE;
		const char *m = frame_metric(f, metric_of(e, w));
		snprintf(hv->metric[d], sizeof(hv->metric[d]), "%s", m ? m : "");
		hv->what[d] = single ? "" : w ? "write" : "read";
		if (!m) {   /* this layer has no such metric (stdio: queue depth) */
			hv->absent = iogp_layer_slot_label(iogp_layer_slot(metric_of(e, w)));
			hv->found[d] = 0;
			continue;
		}
		size_t mi;
		hv->found[d] = iogp_model_metric_find(f->m, hv->metric[d], &mi) == 0;
		if (!hv->found[d])
			continue;
		iogp_hist_free(&hv->native[d]);
		int q = panel_hist_query(f, hv->metric[d], &hv->native[d]);
		if (q < 0 && q != IOGP_ENOTFOUND)
			rc = q;
		iogp_hist_free(&hv->shown[d]);
		q = iogp_hist_copy(&hv->shown[d], &hv->native[d]);
		if (q < 0)
			rc = q;
	}
	if (p == IOGP_PANEL_SIZE)
		hv->weight = f->v->weight;
	return rc;
}

/* hv's rows: one scheme for every direction, at most maxrows of them. */
static int hist_view_rows(const top_frame *f, hist_view *hv, int maxrows)
{
	int rc = choose_bins(f, hv, maxrows);
	return rc < 0 ? rc : make_rows(hv, maxrows);
}

void hist_view_free(hist_view *hv)
{
	for (int d = 0; d < 2; d++) {
		iogp_hist_free(&hv->native[d]);
		iogp_hist_free(&hv->shown[d]);
	}
	free(hv->rows);
	hv->rows = NULL;
	hv->nrows = 0;
}

static int dir_style(int dir)
{
	return dir == DIR_READ ? ST_READ : dir == DIR_WRITE ? ST_WRITE : ST_BOTH;
}

int hist_fmt(char *buf, size_t len, const hist_view *hv, double v)
{
	if (hv->unit && !strcmp(hv->unit, "bytes"))
		return iogp_fmt_size(buf, len, v, IOGP_UNITS_CELL);
	return iogp_fmt_value(buf, len, hv->unit, v, IOGP_UNITS_CELL);
}

/* "read n=1234 p50 4K p90 1M p99 1M max 1M": what fits of it, in order;
 * request sizes exact where known, else the floors of their bins. */
static void summary(top_surf *s, int y, int x, int w, const hist_view *hv, int d)
{
	char tok[6][48];
	const iogp_hist *q = &hv->native[d];
	int have = hv->found[d] && q->total > 0;
	char n[24];
	iogp_fmt_count(n, sizeof(n), (double)(have ? q->total : 0), IOGP_UNITS_CELL);
	snprintf(tok[0], sizeof(tok[0]), "%s", hv->what[d][0] ? hv->what[d] : "all");
	snprintf(tok[1], sizeof(tok[1]), "n=%s", n);
	int ntok = 2;
	if (have) {
		static const double qs[3] = { 0.5, 0.9, 0.99 };
		static const char *const qn[3] = { "p50", "p90", "p99" };
		char t[24];
		int size = !strcmp(hv->unit, "bytes");
		for (int i = 0; i < 3; i++) {
			uint64_t v = 0;
			iogp_hist_quantile(q, qs[i], &v);
			if (size)
				v = iogp_size_shown(q, v);
			hist_fmt(t, sizeof(t), hv, (double)v);
			snprintf(tok[ntok++], sizeof(tok[0]), "%s %s", qn[i], t);
		}
		uint64_t mx = 0;
		if (size)
			iogp_size_max(q, &mx);
		else
			iogp_hist_max(q, &mx);
		hist_fmt(t, sizeof(t), hv, (double)mx);
		snprintf(tok[ntok++], sizeof(tok[0]), "max %s", t);
	}
	/* drop p90, then max, then p99 until the line fits */
	static const int drop[] = { 3, 5, 4 };
	int keep[6] = { 1, 1, 1, 1, 1, 1 };
	for (int k = 0;; k++) {
		int len = -1;
		for (int i = 0; i < ntok; i++)
			if (keep[i])
				len += 1 + (int)strlen(tok[i]);
		if (len <= w || k == 3)
			break;
		if (drop[k] < ntok)
			keep[drop[k]] = 0;
	}
	int cx = x;
	for (int i = 0; i < ntok; i++) {
		if (!keep[i])
			continue;
		if (cx > x)
			cx++;
		cx += draw_text(s, y, cx, x + w - cx, i == 0 ? dir_style(hv->dir[d]) : ST_NORMAL, tok[i]);
	}
}

/* A single bin: its floor (wide: "lo-hi"), or the one size all its
 * requests had ("10240" for tar's records in the 8K-12K bin). Merged bins:
 * "lo-hi", the floor of the first to the top of the last, so the label
 * holds what the row holds; the last row of merged bins (everything from lo
 * up) or a bin open to the top: ">=lo". */
int hist_row_label(char *buf, size_t len, const hist_view *hv, size_t i, int wide)
{
	const hist_row *r = &hv->rows[i];
	char a[32], z[32];
	if (r->exact && r->merged <= 1)
		return hist_fmt(buf, len, hv, (double)r->value);
	hist_fmt(a, sizeof(a), hv, (double)r->lo);
	if (r->hi == UINT64_MAX || (r->merged > 1 && i + 1 == hv->nrows))
		return snprintf(buf, len, ">=%s", a);
	if (r->hi == r->lo || (!wide && r->merged <= 1))
		return snprintf(buf, len, "%s", a);
	hist_fmt(z, sizeof(z), hv, (double)r->hi);
	return snprintf(buf, len, "%s-%s", a, z);
}

/* Row r's weight in direction d: its requests, or (by bytes) its bytes. */
static double row_weight(const hist_view *hv, const hist_row *r, int d)
{
	return hv->weight == IOGP_WEIGHT_BYTES ? r->bytes[d] : (double)r->count[d];
}

/* The number drawn after a bar: requests (wide: exact), or bytes. */
static int row_number(char *buf, size_t len, const hist_view *hv, const hist_row *r, int d, int wide)
{
	if (hv->weight == IOGP_WEIGHT_BYTES)
		return iogp_fmt_bytes(buf, len, r->bytes[d], IOGP_UNITS_CELL);
	if (wide)
		return snprintf(buf, len, "%" PRIu64, r->count[d]);
	return iogp_fmt_count(buf, len, (double)r->count[d], IOGP_UNITS_CELL);
}

static void rows_draw(const top_frame *f, top_surf *s, top_rect rr, const hist_view *hv)
{
	int wide = rr.w >= 70 + (hv->nd - 1) * 30;
	char lab[64], cnt[32];
	int lw = 1, cw[2] = { 1, 1 };
	double maxc[2] = { 0, 0 }, total[2] = { 0, 0 };
	for (size_t i = 0; i < hv->nrows; i++) {
		const hist_row *r = &hv->rows[i];
		int n = hist_row_label(lab, sizeof(lab), hv, i, wide);
		lw = n > lw ? n : lw;
		for (int d = 0; d < hv->nd; d++) {
			int c = row_number(cnt, sizeof(cnt), hv, r, d, wide);
			double v = row_weight(hv, r, d);
			cw[d] = c > cw[d] ? c : cw[d];
			maxc[d] = v > maxc[d] ? v : maxc[d];
			total[d] += v;
		}
	}
	if (lw > rr.w / 3)
		lw = rr.w / 3;
	int pct = wide ? 7 : 0;
	/* label | bar count [pct] | bar count [pct] */
	int fixed = lw + 1;
	for (int d = 0; d < hv->nd; d++)
		fixed += 1 + cw[d] + pct + (d ? 1 : 0);
	int barw = (rr.w - fixed) / hv->nd;
	if (barw < 1)
		barw = 1;
	for (size_t i = 0; i < hv->nrows && (int)i < rr.h; i++) {
		const hist_row *r = &hv->rows[i];
		int y = rr.y + (int)i;
		int l = hist_row_label(lab, sizeof(lab), hv, i, wide);
		draw_text(s, y, rr.x + (lw > l ? lw - l : 0), lw, ST_NORMAL, lab);
		if (r->gap)
			draw_text(s, y, rr.x + lw, 1, ST_DIM, "~");
		int x = rr.x + lw + 1;
		for (int d = 0; d < hv->nd; d++) {
			double c = row_weight(hv, r, d);
			if (r->count[d] && maxc[d] > 0) {
				double len = f->v->logscale ? log1p(c) / log1p(maxc[d]) : c / maxc[d];
				draw_hbar(s, y, x, barw, len * barw, dir_style(hv->dir[d]));
				int n = row_number(cnt, sizeof(cnt), hv, r, d, wide);
				draw_text(s, y, x + barw + 1 + cw[d] - n, n, ST_NORMAL, cnt);
				if (pct && total[d] > 0)
					draw_textf(s, y, x + barw + 1 + cw[d], pct, ST_DIM, " %5.1f%%",
					           100.0 * c / total[d]);
			}
			x += barw + 1 + cw[d] + pct + 1;
		}
	}
}

int panel_hist_view(const top_frame *f, top_rect r, int p, hist_view *hv)
{
	int rc = hist_view_fetch(f, p, hv);
	/* the directions' summaries, then the rows (and the common sizes) */
	top_rect body = { r.y + 1, r.x, r.h - 1, r.w };
	hv->rowsr = (top_rect){ body.y + hv->nd, body.x, body.h - hv->nd, body.w };
	if (rc < 0)
		return rc;
	int maxrows = hv->rowsr.h;
	if (p == IOGP_PANEL_SIZE && !hv->absent)
		maxrows = sizes_place(hv, hv->rowsr);
	return hist_view_rows(f, hv, maxrows > 0 ? maxrows : 1);
}

void panel_hist_draw(const top_frame *f, top_surf *s, top_rect r, int p)
{
	if (r.h <= 0)
		return;
	hist_view hv;
	int rc = panel_hist_view(f, r, p, &hv);
	char win[96];
	iogp_sel sel;
	frame_sel(f, &sel);
	iogp_panel_window_text(f->m, &sel, view_window(f->v), 1, win, sizeof(win));
	top_rect body = { r.y + 1, r.x, r.h - 1, r.w };
	for (int d = 0; d < hv.nd && d < body.h; d++)
		summary(s, body.y + d, body.x, body.w, &hv, d);
	top_rect rr = hv.rowsr;
	if (hv.ntab && hv.tab_side)
		rr.w -= hv.tabr.w + 2;
	if (rr.h > 0) {
		if (rc < 0)
			draw_text(s, rr.y, rr.x, rr.w, ST_BAD, iogp_strerror(rc));
		else if (hv.absent) {   /* on two lines, at a space, when narrow */
			char t[96];
			int n = snprintf(t, sizeof(t), "no %s in the %s layer", hv.absent,
			                 iogp_layer_title(f->v->layer)), cut = rr.w;
			if (n > rr.w && rr.h >= 2) {
				while (cut > 0 && t[cut] != ' ')
					cut--;
				t[cut > 0 ? cut : 0] = '\0';
			}
			draw_text(s, rr.y, rr.x, rr.w, ST_DIM, t);
			if (n > rr.w && rr.h >= 2 && cut > 0)
				draw_text(s, rr.y + 1, rr.x, rr.w, ST_DIM, t + cut + 1);
		}
		else if (!hv.nrows && strchr(win, ':'))   /* the window is not kept: why */
			draw_text(s, rr.y, rr.x, rr.w, ST_DIM, strchr(win, ':') + 2);
		else if (!hv.found[0] && (hv.nd < 2 || !hv.found[1]))
			draw_text(s, rr.y, rr.x, rr.w, ST_DIM, "no data yet");
		else if (!hv.nrows)
			draw_text(s, rr.y, rr.x, rr.w, ST_DIM, "no requests");
		else
			rows_draw(f, s, rr, &hv);
	}
	if (rc >= 0)
		sizes_draw(s, &hv);
	char right[192], wt[16] = "";
	if (p == IOGP_PANEL_SIZE)
		snprintf(wt, sizeof(wt), "%s, ", iogp_size_weight_title(hv.weight));
	char *why = strchr(win, ':');   /* the body says why, the title says which window */
	if (why)
		*why = '\0';
	snprintf(right, sizeof(right), "%s%s%s%s%s", r.w >= 60 ? win : "", r.w >= 60 ? ", " : "", wt,
	         hv.bins_text, f->v->logscale ? ", log" : "");
	panel_title(f, s, r, p, NULL, right);
	hist_view_free(&hv);
}
