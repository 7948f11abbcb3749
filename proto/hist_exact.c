/* hist_exact.c - exact values beside a histogram's bins (the agent's common
 * request sizes): merging them, and which bins they explain. */
#include <stdlib.h>
#include <string.h>

#include "iogp_err.h"
#include "iogp_hist.h"
#include "hist_priv.h"

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static int exact_reserve(iogp_hist *h, size_t need)
{
	size_t cap = h->exact_cap ? h->exact_cap : 8;
	iogp_exact *ne;

	if (need <= h->exact_cap)
		return 0;
	while (cap < need)
		cap *= 2;
	if ((ne = realloc(h->exact, cap * sizeof *ne)) == NULL)
		return IOGP_ENOMEM;
	h->exact = ne;
	h->exact_cap = cap;
	return 0;
}

int iogp_hist_add_exact(iogp_hist *h, const iogp_exact *e, size_t n)
{
	size_t nz = 0, i, j, w, fresh = 0;
	int have = 0;
	uint64_t last = 0;

	if (n == 0)
		return 0;
	if (e == NULL)
		return IOGP_EINVAL;
	for (i = 0; i < n; i++) {
		if (e[i].count == 0)
			continue;
		if (have && e[i].value <= last)
			return IOGP_EINVAL;
		last = e[i].value;
		have = 1;
		nz++;
	}
	if (nz == 0)
		return 0;
	/* count the values h lacks, then merge from the back in place */
	for (i = 0, j = 0; i < n; i++) {
		if (e[i].count == 0)
			continue;
		while (j < h->nexact && h->exact[j].value < e[i].value)
			j++;
		fresh += j == h->nexact || h->exact[j].value != e[i].value;
	}
	if (h->nexact + fresh > IOGP_HIST_MAX_EXACT) {
		/* add to the values it has; leave the new ones out */
		for (i = 0, j = 0; i < n; i++) {
			if (e[i].count == 0)
				continue;
			while (j < h->nexact && h->exact[j].value < e[i].value)
				j++;
			if (j < h->nexact && h->exact[j].value == e[i].value)
				h->exact[j].count = sat_add(h->exact[j].count, e[i].count);
		}
		return 0;
	}
	if (exact_reserve(h, h->nexact + fresh) < 0)
		return IOGP_ENOMEM;
	w = h->nexact + fresh;
	j = h->nexact;
	for (i = n; i > 0; i--) {
		const iogp_exact *x = &e[i - 1];

		if (x->count == 0)
			continue;
		while (j > 0 && h->exact[j - 1].value > x->value)
			h->exact[--w] = h->exact[--j];
		if (j > 0 && h->exact[j - 1].value == x->value) {
			h->exact[--w] = (iogp_exact){ x->value, sat_add(h->exact[--j].count, x->count) };
		} else {
			h->exact[--w] = *x;
		}
	}
	h->nexact += fresh;
	return 0;
}

int hist__exact_diff(iogp_hist *o, const iogp_hist *a, const iogp_hist *b)
{
	size_t j = 0;

	if (exact_reserve(o, a->nexact) < 0)
		return IOGP_ENOMEM;
	for (size_t i = 0; i < a->nexact; i++) {
		uint64_t c = a->exact[i].count;

		while (j < b->nexact && b->exact[j].value < a->exact[i].value)
			j++;
		if (j < b->nexact && b->exact[j].value == a->exact[i].value)
			c = c > b->exact[j].count ? c - b->exact[j].count : 0;
		if (c)
			o->exact[o->nexact++] = (iogp_exact){ a->exact[i].value, c };
	}
	return 0;
}

/* First exact value >= v. */
static size_t exact_find(const iogp_hist *h, uint64_t v)
{
	size_t lo = 0, hi = h->nexact;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (h->exact[mid].value < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int iogp_hist_bin_exact(const iogp_hist *h, size_t i, size_t *first, size_t *n)
{
	uint64_t lo, hi, sum = 0;
	size_t f, k;

	*first = *n = 0;
	if (h->nexact == 0 || i >= h->n ||
	    iogp_bins_bounds(&h->scheme, h->bins[i].idx, &lo, &hi) < 0)
		return 0;
	f = exact_find(h, lo);
	for (k = f; k < h->nexact && h->exact[k].value <= hi; k++)
		sum = sat_add(sum, h->exact[k].count);
	if (k == f || sum != h->bins[i].count)
		return 0;
	*first = f;
	*n = k - f;
	return 1;
}

double iogp_hist_bin_sum(const iogp_hist *h, size_t i)
{
	uint64_t lo, hi;
	size_t f, n;
	double sum = 0.0;

	if (i >= h->n)
		return 0.0;
	if (iogp_hist_bin_exact(h, i, &f, &n)) {
		for (size_t k = f; k < f + n; k++)
			sum += (double)h->exact[k].value * (double)h->exact[k].count;
		return sum;
	}
	if (iogp_bins_bounds(&h->scheme, h->bins[i].idx, &lo, &hi) < 0)
		return 0.0;
	return ((double)lo + (double)(hi - lo) / 2.0) * (double)h->bins[i].count;
}

static double bin_mid(uint64_t lo, uint64_t hi)
{
	return (double)lo + (double)(hi - lo) / 2.0;
}

void hist__native_mids(unsigned k, double *mid)
{
	uint32_t nb = iogp_native_nbuckets(k);
	for (uint32_t i = 0; i < nb; i++) {
		uint64_t lo, hi;
		hist__native_lo_hi(i, k, &lo, &hi);
		mid[i] = bin_mid(lo, hi);
	}
}

/* iogp_hist_bin_sum of every bin, added in order, from one walk over the
 * bins and the exact values together (both ascending: the first exact
 * value of a bin is never before the last bin's), not a search a bin. */
double hist__sum_mids(const iogp_hist *h, const double *mid, size_t nmid)
{
	double sum = 0.0;
	size_t e = 0;
	/* the native scheme's bounds in line (iogp_native_bounds, its checks
	 * once): every source's I/O time a frame at 50,000 sources */
	unsigned nk = h->scheme.k;
	int native = h->scheme.kind == IOGP_BINS_NATIVE && nk >= IOGP_NATIVE_K_MIN &&
	             nk <= IOGP_NATIVE_K_MAX;
	uint64_t nb = native ? iogp_native_nbuckets(nk) : 0;

	if (!native || nmid != nb)
		mid = NULL;
	for (size_t i = 0; i < h->n; i++) {
		uint64_t lo, hi, c = 0, idx = h->bins[i].idx;
		size_t k;

		if (mid != NULL && idx < nb && e >= h->nexact) {   /* no exact value left to explain it */
			sum += mid[idx] * (double)h->bins[i].count;
			continue;
		}
		if (native && idx < nb)
			hist__native_lo_hi(idx, nk, &lo, &hi);
		else if (native || iogp_bins_bounds(&h->scheme, idx, &lo, &hi) < 0) {
			sum += 0.0;
			continue;
		}
		while (e < h->nexact && h->exact[e].value < lo)
			e++;
		for (k = e; k < h->nexact && h->exact[k].value <= hi; k++)
			c = sat_add(c, h->exact[k].count);
		if (k != e && c == h->bins[i].count) {   /* the bin is its exact values */
			double x = 0.0;

			for (size_t v = e; v < k; v++)
				x += (double)h->exact[v].value * (double)h->exact[v].count;
			sum += x;
			continue;
		}
		sum += bin_mid(lo, hi) * (double)h->bins[i].count;
	}
	return sum;
}

double iogp_hist_sum(const iogp_hist *h)
{
	return hist__sum_mids(h, NULL, 0);
}

static int by_count(const void *a, const void *b)
{
	const iogp_exact *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->value < y->value ? -1 : x->value > y->value;
}

size_t iogp_exact_top(const iogp_exact *in, size_t n, iogp_exact *out, size_t max)
{
	size_t k = 0;

	if (max == 0)
		return 0;
	/* keep the best max in out, sorted; a linear insert (max is small) */
	for (size_t i = 0; i < n; i++) {
		const iogp_exact *x = &in[i];
		size_t p = k;

		while (p > 0 && by_count(x, &out[p - 1]) < 0)
			p--;
		if (p >= max)
			continue;
		if (k < max)
			k++;
		memmove(out + p + 1, out + p, (k - 1 - p) * sizeof *out);
		out[p] = *x;
	}
	return k;
}

size_t iogp_hist_common(const iogp_hist *h, iogp_exact *out, size_t max)
{
	return iogp_exact_top(h->exact, h->nexact, out, max);
}

void iogp_exact_merge(iogp_exact *dst, uint32_t *ndst, uint32_t cap,
                      const iogp_exact *src, uint32_t nsrc)
{
	iogp_exact fresh[IOGP_EXACT_MERGE_MAX];
	uint32_t nf = 0, j = 0, n = *ndst;

	if (cap > IOGP_EXACT_MERGE_MAX)
		cap = IOGP_EXACT_MERGE_MAX;
	for (uint32_t i = 0; i < nsrc; i++) {
		const iogp_exact *x = &src[i];
		uint32_t p;

		if (x->count == 0)
			continue;
		while (j < n && dst[j].value < x->value)
			j++;
		if (j < n && dst[j].value == x->value) {
			dst[j].count = sat_add(dst[j].count, x->count);
			continue;
		}
		/* the most common new values that may still find a place */
		if (nf < cap)
			p = nf++;
		else if (fresh[cap - 1].count >= x->count)
			continue;
		else
			p = cap - 1;
		while (p > 0 && fresh[p - 1].count < x->count) {
			fresh[p] = fresh[p - 1];
			p--;
		}
		fresh[p] = *x;
	}
	for (uint32_t i = 0; i < nf && n < cap; i++) {
		uint32_t p = n++;

		while (p > 0 && dst[p - 1].value > fresh[i].value) {
			dst[p] = dst[p - 1];
			p--;
		}
		dst[p] = fresh[i];
	}
	*ndst = n;
}

/* v as a request size: exact when its bin is explained, else the bin's floor. */
static int size_of(const iogp_hist *h, size_t i, uint64_t v, uint64_t *value)
{
	uint64_t lo, hi;
	size_t f, n;

	if (iogp_hist_bin_exact(h, i, &f, &n)) {
		*value = v;
		return 0;
	}
	if (iogp_bins_bounds(&h->scheme, h->bins[i].idx, &lo, &hi) < 0)
		return IOGP_EINVAL;
	*value = lo;
	return 0;
}

static size_t bin_of(const iogp_hist *h, uint64_t v)
{
	size_t p = hist__find(h, iogp_bins_index(&h->scheme, v));

	return p < h->n ? p : h->n - 1;
}

int iogp_hist_quantile_size(const iogp_hist *h, double q, uint64_t *value)
{
	uint64_t v;
	int rc = iogp_hist_quantile(h, q, &v);

	if (rc < 0)
		return rc;
	return size_of(h, bin_of(h, v), v, value);
}

int iogp_hist_max_size(const iogp_hist *h, uint64_t *value)
{
	size_t f, n;

	if (h->n == 0)
		return IOGP_ENOTFOUND;
	if (iogp_hist_bin_exact(h, h->n - 1, &f, &n)) {
		*value = h->exact[f + n - 1].value;
		return 0;
	}
	return size_of(h, h->n - 1, 0, value);
}
