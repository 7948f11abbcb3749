/* size_table.c - request sizes as both viewers show them: the common sizes
 * table from a histogram's exact values, by-count / by-bytes weights, and
 * the sizes summaries quote. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "iogp_err.h"
#include "iogp_size_table.h"
#include "iogp_units.h"

static const char *const weight_names[IOGP_WEIGHT_N] = { "count", "bytes" };
static const char *const weight_titles[IOGP_WEIGHT_N] = { "by count", "by bytes" };

const char *const iogp_size_table_heads[4] = { "size", "count", "% reqs", "% bytes" };

const char *iogp_size_weight_name(int w)
{
	return w >= 0 && w < IOGP_WEIGHT_N ? weight_names[w] : "?";
}

const char *iogp_size_weight_title(int w)
{
	return w >= 0 && w < IOGP_WEIGHT_N ? weight_titles[w] : "?";
}

int iogp_size_weight_find(const char *name)
{
	for (int w = 0; w < IOGP_WEIGHT_N && name; w++)
		if (!strcasecmp(name, weight_names[w]))
			return w;
	return -1;
}

int iogp_size_weight_step(int w)
{
	return w == IOGP_WEIGHT_BYTES ? IOGP_WEIGHT_COUNT : IOGP_WEIGHT_BYTES;
}

double iogp_size_bin_weight(const iogp_hist *h, size_t i, int w)
{
	if (i >= h->n)
		return 0;
	return w == IOGP_WEIGHT_BYTES ? iogp_hist_bin_sum(h, i) : (double)h->bins[i].count;
}

double iogp_size_weight_total(const iogp_hist *h, int w)
{
	return w == IOGP_WEIGHT_BYTES ? iogp_hist_sum(h) : (double)h->total;
}

/* The position in h->bins of the bin holding v, or h->n. */
static size_t bin_of(const iogp_hist *h, uint64_t v)
{
	uint64_t idx = iogp_bins_index(&h->scheme, v);
	size_t lo = 0, hi = h->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (h->bins[mid].idx < idx)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < h->n && h->bins[lo].idx == idx ? lo : h->n;
}

uint64_t iogp_size_shown(const iogp_hist *h, uint64_t v)
{
	size_t i = bin_of(h, v), first, n;
	uint64_t lo, hi;
	if (i < h->n && iogp_hist_bin_exact(h, i, &first, &n))
		return v;
	if (iogp_bins_bounds(&h->scheme, iogp_bins_index(&h->scheme, v), &lo, &hi) < 0)
		return v;
	return lo;
}

int iogp_size_max(const iogp_hist *h, uint64_t *v)
{
	size_t first, n;
	uint64_t lo, hi;
	*v = 0;
	if (!h->n || !h->total)
		return IOGP_ENOTFOUND;
	if (iogp_hist_bin_exact(h, h->n - 1, &first, &n)) {
		*v = h->exact[first + n - 1].value;
		return 0;
	}
	if (iogp_bins_bounds(&h->scheme, h->bins[h->n - 1].idx, &lo, &hi) < 0)
		return IOGP_EINVAL;
	*v = lo;
	return 0;
}

int iogp_size_pct(char *buf, size_t len, double pct)
{
	if (!(pct > 0))
		return snprintf(buf, len, "0%%");
	if (pct < 0.05)
		return snprintf(buf, len, "<0.1%%");
	if (pct >= 99.95 && pct < 100)
		return snprintf(buf, len, ">99.9%%");
	if (pct >= 100)
		return snprintf(buf, len, "100%%");
	return snprintf(buf, len, "%.1f%%", pct);
}

/* An exact count: "3,000" (cell: "3000"). */
static void fmt_exact(char *buf, size_t len, uint64_t v, int style)
{
	char d[32];
	int n = snprintf(d, sizeof(d), "%llu", (unsigned long long)v);
	size_t o = 0;
	for (int i = 0; i < n && o + 1 < len; i++) {
		if (style != IOGP_UNITS_CELL && i && (n - i) % 3 == 0 && o + 2 < len)
			buf[o++] = ',';
		buf[o++] = d[i];
	}
	if (len)
		buf[o < len ? o : len - 1] = '\0';
}

static void row_texts(iogp_size_row *r, const iogp_size_table *t, int style)
{
	r->req_pct = t->total ? 100.0 * (double)r->count / (double)t->total : 0;
	r->byte_pct = t->bytes > 0 ? 100.0 * r->bytes / t->bytes : 0;
	if (r->req_pct > 100)
		r->req_pct = 100;
	if (r->byte_pct > 100)
		r->byte_pct = 100;
	fmt_exact(r->count_text, sizeof(r->count_text), r->count, style);
	iogp_size_pct(r->req_text, sizeof(r->req_text), r->req_pct);
	iogp_size_pct(r->byte_text, sizeof(r->byte_text), r->byte_pct);
}

void iogp_size_table_build(iogp_size_table *t, const iogp_hist *h, size_t max, int style)
{
	memset(t, 0, sizeof(*t));
	if (max > IOGP_SIZE_TABLE_ROWS)
		max = IOGP_SIZE_TABLE_ROWS;
	t->total = h->total;
	if (!h->total) {
		t->note = "no requests";
		return;
	}
	t->bytes = iogp_hist_sum(h);
	iogp_exact top[IOGP_SIZE_TABLE_ROWS];
	size_t n = iogp_hist_common(h, top, max);
	if (!n) {
		t->note = "no exact sizes recorded";
		return;
	}
	uint64_t covered = 0;
	double cbytes = 0;
	for (size_t i = 0; i < n; i++) {
		iogp_size_row *r = &t->rows[t->nrows++];
		r->size = top[i].value;
		r->count = top[i].count;
		r->bytes = (double)top[i].value * (double)top[i].count;
		iogp_fmt_size(r->size_text, sizeof(r->size_text), (double)r->size, style);
		row_texts(r, t, style);
		covered += r->count;
		cbytes += r->bytes;
	}
	if (covered < t->total) {
		iogp_size_row *o = &t->other;
		t->has_other = 1;
		o->count = t->total - covered;
		/* the sum is estimated where bins are not explained: never below 0 */
		o->bytes = t->bytes > cbytes ? t->bytes - cbytes : 0;
		snprintf(o->size_text, sizeof(o->size_text), "other");
		row_texts(o, t, style);
	}
}

int iogp_size_table_write_csv(const iogp_hist *h, FILE *out)
{
	iogp_size_table t;
	iogp_size_table_build(&t, h, IOGP_SIZE_TABLE_ROWS, IOGP_UNITS_CELL);
	if (!t.nrows)
		return 0;
	if (fprintf(out, "size,count,pct_requests,pct_bytes\n") < 0)
		return IOGP_EIO;
	for (size_t i = 0; i < t.nrows; i++)
		if (fprintf(out, "%llu,%llu,%.3f,%.3f\n", (unsigned long long)t.rows[i].size,
		            (unsigned long long)t.rows[i].count, t.rows[i].req_pct, t.rows[i].byte_pct) < 0)
			return IOGP_EIO;
	return (int)t.nrows;
}
