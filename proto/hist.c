/* hist.c - bin schemes, sparse histograms, quantiles, re-binning and CSV. */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "iogp_err.h"
#include "iogp_hist.h"
#include "hist_priv.h"

/* ---- bin schemes --------------------------------------------------------- */

static unsigned msb64(uint64_t v)
{
	return 63u - (unsigned)__builtin_clzll(v);
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	uint64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return UINT64_MAX;
	return r;
}

/* O(1) checks that keep index/bounds math defined; iogp_bins_valid also
 * checks the edge order. */
static int scheme_sane(const iogp_bins *b)
{
	switch (b->kind) {
	case IOGP_BINS_NATIVE:
		return b->k >= IOGP_NATIVE_K_MIN && b->k <= IOGP_NATIVE_K_MAX;
	case IOGP_BINS_LOG2:
		return 1;
	case IOGP_BINS_FIXED:
		return b->width > 0;
	case IOGP_BINS_EDGES:
		return b->nedges >= 1 && b->nedges <= IOGP_MAX_EDGES;
	}
	return 0;
}

static void scheme_copy(iogp_bins *dst, const iogp_bins *src)
{
	if (dst == src)
		return;
	memset(dst, 0, offsetof(iogp_bins, edges));
	dst->kind = src->kind;
	dst->k = src->k;
	dst->width = src->width;
	dst->offset = src->offset;
	dst->nedges = src->nedges;
	if (src->kind == IOGP_BINS_EDGES && src->nedges <= IOGP_MAX_EDGES)
		memcpy(dst->edges, src->edges, src->nedges * sizeof(src->edges[0]));
}

int iogp_native_bounds(uint32_t idx, unsigned k, uint64_t *lo, uint64_t *hi)
{
	if (k < IOGP_NATIVE_K_MIN || k > IOGP_NATIVE_K_MAX || idx >= iogp_native_nbuckets(k))
		return IOGP_EINVAL;
	hist__native_lo_hi(idx, k, lo, hi);
	return 0;
}

void iogp_bins_native(iogp_bins *b, unsigned k)
{
	memset(b, 0, offsetof(iogp_bins, edges));
	b->kind = IOGP_BINS_NATIVE;
	b->k = k;
}

void iogp_bins_log2(iogp_bins *b)
{
	memset(b, 0, offsetof(iogp_bins, edges));
	b->kind = IOGP_BINS_LOG2;
}

int iogp_bins_fixed(iogp_bins *b, uint64_t width, uint64_t offset)
{
	if (width == 0)
		return IOGP_EINVAL;
	memset(b, 0, offsetof(iogp_bins, edges));
	b->kind = IOGP_BINS_FIXED;
	b->width = width;
	b->offset = offset;
	return 0;
}

int iogp_bins_edges(iogp_bins *b, const uint64_t *edges, uint32_t n)
{
	if (n < 1 || n > IOGP_MAX_EDGES || !edges)
		return IOGP_EINVAL;
	for (uint32_t i = 1; i < n; i++)
		if (edges[i] <= edges[i - 1])
			return IOGP_EINVAL;
	memset(b, 0, offsetof(iogp_bins, edges));
	b->kind = IOGP_BINS_EDGES;
	b->nedges = n;
	memmove(b->edges, edges, n * sizeof(edges[0]));
	return 0;
}

int iogp_bins_valid(const iogp_bins *b)
{
	if (!b || !scheme_sane(b))
		return IOGP_EINVAL;
	if (b->kind == IOGP_BINS_EDGES)
		for (uint32_t i = 1; i < b->nedges; i++)
			if (b->edges[i] <= b->edges[i - 1])
				return IOGP_EINVAL;
	return 0;
}

int iogp_bins_equal(const iogp_bins *a, const iogp_bins *b)
{
	if (a == b)
		return 1;
	if (a->kind != b->kind)
		return 0;
	switch (a->kind) {
	case IOGP_BINS_NATIVE:
		return a->k == b->k;
	case IOGP_BINS_LOG2:
		return 1;
	case IOGP_BINS_FIXED:
		return a->width == b->width && a->offset == b->offset;
	case IOGP_BINS_EDGES:
		return a->nedges == b->nedges && a->nedges <= IOGP_MAX_EDGES &&
		       memcmp(a->edges, b->edges, a->nedges * sizeof(a->edges[0])) == 0;
	}
	return 0;
}

static uint64_t fixed_beta(const iogp_bins *b)
{
	return b->offset / b->width + (b->offset % b->width != 0);
}

static uint64_t fixed_index(const iogp_bins *b, uint64_t v)
{
	uint64_t beta = fixed_beta(b);

	if (v >= b->offset)
		return beta + (v - b->offset) / b->width;
	return beta - ((b->offset - v - 1) / b->width + 1);
}

/* Number of edges <= v. */
static uint64_t edges_index(const iogp_bins *b, uint64_t v)
{
	uint32_t lo = 0, hi = b->nedges;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (b->edges[mid] <= v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

uint64_t iogp_bins_index(const iogp_bins *b, uint64_t v)
{
	if (!scheme_sane(b))
		return 0;
	switch (b->kind) {
	case IOGP_BINS_NATIVE:
		return iogp_native_index(v, b->k);
	case IOGP_BINS_LOG2:
		return v ? msb64(v) + 1 : 0;
	case IOGP_BINS_FIXED:
		return fixed_index(b, v);
	case IOGP_BINS_EDGES:
		return edges_index(b, v);
	}
	return 0;
}

/* Largest valid bin index of a sane scheme. */
static uint64_t max_index(const iogp_bins *b)
{
	return iogp_bins_index(b, UINT64_MAX);
}

/* A bin index that names a non-empty bin of a sane scheme. */
static int index_ok(const iogp_bins *b, uint64_t idx)
{
	switch (b->kind) {
	case IOGP_BINS_NATIVE:
		return idx < iogp_native_nbuckets(b->k);
	case IOGP_BINS_LOG2:
		return idx <= 64;
	case IOGP_BINS_FIXED:
		return idx <= fixed_index(b, UINT64_MAX);
	case IOGP_BINS_EDGES:
		return idx <= b->nedges && !(idx == 0 && b->edges[0] == 0);
	}
	return 0;
}

int iogp_bins_index_ok(const iogp_bins *b, uint64_t idx)
{
	return index_ok(b, idx);
}

uint64_t iogp_bins_count(const iogp_bins *b)
{
	if (!scheme_sane(b))
		return 0;
	return sat_add(max_index(b), 1);
}

int iogp_bins_bounds(const iogp_bins *b, uint64_t idx, uint64_t *lo, uint64_t *hi)
{
	uint64_t beta, d;

	if (!scheme_sane(b) || !index_ok(b, idx))
		return IOGP_EINVAL;
	switch (b->kind) {
	case IOGP_BINS_NATIVE:
		return iogp_native_bounds((uint32_t)idx, b->k, lo, hi);
	case IOGP_BINS_LOG2:
		if (idx == 0) {
			*lo = *hi = 0;
		} else {
			*lo = 1ull << (idx - 1);
			*hi = *lo + (*lo - 1);
		}
		return 0;
	case IOGP_BINS_FIXED:
		beta = fixed_beta(b);
		if (idx >= beta) {
			/* index_ok keeps (idx - beta) * width <= UINT64_MAX - offset */
			*lo = b->offset + (idx - beta) * b->width;
			*hi = *lo > UINT64_MAX - (b->width - 1) ? UINT64_MAX : *lo + (b->width - 1);
		} else {
			d = beta - idx;
			*lo = d <= b->offset / b->width ? b->offset - d * b->width : 0;
			/* (d - 1) * width < offset since d - 1 < offset / width */
			*hi = b->offset - (d - 1) * b->width - 1;
		}
		return 0;
	case IOGP_BINS_EDGES:
		*lo = idx == 0 ? 0 : b->edges[idx - 1];
		*hi = idx == b->nedges ? UINT64_MAX : b->edges[idx] - 1;
		return 0;
	}
	return IOGP_EINVAL;
}

/* ---- parse / format ------------------------------------------------------ */

/* Strict decimal: digits only, no sign or blanks, no overflow. Stops at the
 * first non-digit; *end points there. */
static int parse_u64(const char *s, const char **end, uint64_t *out)
{
	uint64_t v = 0;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return IOGP_EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (__builtin_mul_overflow(v, 10u, &v) ||
		    __builtin_add_overflow(v, (uint64_t)(*p - '0'), &v))
			return IOGP_ELIMIT;
	}
	*end = p;
	*out = v;
	return 0;
}

/* Length of the token at s up to a delimiter, for messages. */
static int toklen(const char *s, const char *delims)
{
	size_t n = strcspn(s, delims);

	return n > 40 ? 40 : (int)n;
}

static int parse_num(const char *s, const char **end, uint64_t *out, const char *what,
		     char *err, size_t errlen)
{
	int rc = parse_u64(s, end, out);

	if (rc == IOGP_ELIMIT)
		iogp_errf(err, errlen, "%s '%.*s' does not fit in 64 bits", what, toklen(s, ":,"), s);
	else if (rc < 0)
		iogp_errf(err, errlen, "%s '%.*s' is not a decimal number", what, toklen(s, ":,"), s);
	return rc;
}

#define BINS_USAGE "native[:K], log2, fixed:W[:O] or edges:A,B,..."

int iogp_bins_parse(iogp_bins *b, const char *spec, char *err, size_t errlen)
{
	const char *p;
	uint64_t v, w, o = 0;
	int rc;

	if (!b || !spec) {
		iogp_errf(err, errlen, "no bin scheme given");
		return IOGP_EINVAL;
	}
	if (strcmp(spec, "native") == 0) {
		iogp_bins_native(b, IOGP_NATIVE_K_DEFAULT);
		return 0;
	}
	if (strcmp(spec, "log2") == 0) {
		iogp_bins_log2(b);
		return 0;
	}
	if (strncmp(spec, "native:", 7) == 0) {
		if ((rc = parse_num(spec + 7, &p, &v, "native: k", err, errlen)) < 0)
			return IOGP_EINVAL;
		if (*p) {
			iogp_errf(err, errlen, "native: unexpected '%s' after k", p);
			return IOGP_EINVAL;
		}
		if (v < IOGP_NATIVE_K_MIN || v > IOGP_NATIVE_K_MAX) {
			iogp_errf(err, errlen, "native: k %" PRIu64 " out of range %d..%d", v,
			       IOGP_NATIVE_K_MIN, IOGP_NATIVE_K_MAX);
			return IOGP_EINVAL;
		}
		iogp_bins_native(b, (unsigned)v);
		return 0;
	}
	if (strncmp(spec, "fixed:", 6) == 0) {
		if ((rc = parse_num(spec + 6, &p, &w, "fixed: width", err, errlen)) < 0)
			return IOGP_EINVAL;
		if (w == 0) {
			iogp_errf(err, errlen, "fixed: width must be greater than 0");
			return IOGP_EINVAL;
		}
		if (*p == ':') {
			if ((rc = parse_num(p + 1, &p, &o, "fixed: offset", err, errlen)) < 0)
				return IOGP_EINVAL;
		}
		if (*p) {
			iogp_errf(err, errlen, "fixed: unexpected '%s' (expected fixed:W or fixed:W:O)", p);
			return IOGP_EINVAL;
		}
		return iogp_bins_fixed(b, w, o);
	}
	if (strncmp(spec, "edges:", 6) == 0) {
		iogp_bins e; /* b stays as it was on failure */

		memset(&e, 0, offsetof(iogp_bins, edges));
		e.kind = IOGP_BINS_EDGES;
		p = spec + 6;
		for (;;) {
			if (e.nedges == IOGP_MAX_EDGES) {
				iogp_errf(err, errlen, "edges: more than %d edges", IOGP_MAX_EDGES);
				return IOGP_EINVAL;
			}
			if ((rc = parse_num(p, &p, &v, "edges: edge", err, errlen)) < 0)
				return IOGP_EINVAL;
			if (e.nedges > 0 && v <= e.edges[e.nedges - 1]) {
				iogp_errf(err, errlen, "edges: %" PRIu64 " after %" PRIu64
				       " is not strictly ascending", v, e.edges[e.nedges - 1]);
				return IOGP_EINVAL;
			}
			e.edges[e.nedges++] = v;
			if (*p == '\0')
				break;
			if (*p != ',') {
				iogp_errf(err, errlen, "edges: unexpected '%s' (expected a comma)", p);
				return IOGP_EINVAL;
			}
			p++;
		}
		scheme_copy(b, &e);
		return 0;
	}
	iogp_errf(err, errlen, "unknown bin scheme '%.40s' (expected " BINS_USAGE ")", spec);
	return IOGP_EINVAL;
}

int iogp_bins_format(const iogp_bins *b, char *buf, size_t len)
{
	size_t used = 0;
	int n;

	if (!b || !buf || iogp_bins_valid(b) < 0)
		return IOGP_EINVAL;
	switch (b->kind) {
	case IOGP_BINS_NATIVE:
		n = snprintf(buf, len, "native:%" PRIu32, b->k);
		break;
	case IOGP_BINS_LOG2:
		n = snprintf(buf, len, "log2");
		break;
	case IOGP_BINS_FIXED:
		if (b->offset)
			n = snprintf(buf, len, "fixed:%" PRIu64 ":%" PRIu64, b->width, b->offset);
		else
			n = snprintf(buf, len, "fixed:%" PRIu64, b->width);
		break;
	case IOGP_BINS_EDGES:
		n = snprintf(buf, len, "edges:");
		for (uint32_t i = 0; i < b->nedges && n >= 0; i++) {
			used += (size_t)n;
			n = snprintf(used < len ? buf + used : NULL, used < len ? len - used : 0,
				     i ? ",%" PRIu64 : "%" PRIu64, b->edges[i]);
		}
		break;
	default:
		return IOGP_EINVAL;
	}
	if (n < 0)
		return IOGP_EINVAL;
	used += (size_t)n;
	if (used >= len || used > INT32_MAX)
		return IOGP_ELIMIT;
	return (int)used;
}

/* ---- sparse histogram ------------------------------------------------------ */

void iogp_hist_init(iogp_hist *h, const iogp_bins *scheme)
{
	h->n = h->cap = 0;
	h->bins = NULL;
	h->total = 0;
	h->nexact = h->exact_cap = 0;
	h->exact = NULL;
	if (scheme)
		scheme_copy(&h->scheme, scheme);
	else
		iogp_bins_native(&h->scheme, IOGP_NATIVE_K_DEFAULT);
}

void iogp_hist_free(iogp_hist *h)
{
	if (!h)
		return;
	free(h->bins);
	free(h->exact);
	h->bins = NULL;
	h->exact = NULL;
	h->n = h->cap = h->nexact = h->exact_cap = 0;
	h->total = 0;
}

void iogp_hist_clear(iogp_hist *h)
{
	h->n = h->nexact = 0;
	h->total = 0;
}

static int hist_reserve(iogp_hist *h, size_t need)
{
	size_t cap;
	iogp_bin *nb;

	if (need <= h->cap)
		return 0;
	/* grows by half: amortised, with less slack left than doubling */
	cap = h->cap ? h->cap : 16;
	while (cap < need) {
		if (cap > SIZE_MAX / 2 / sizeof(iogp_bin))
			return IOGP_ENOMEM;
		cap += cap / 2;
	}
	nb = realloc(h->bins, cap * sizeof(iogp_bin));
	if (!nb)
		return IOGP_ENOMEM;
	h->bins = nb;
	h->cap = cap;
	return 0;
}

/* Move tmp's contents into h (h's old memory is freed). */
static void hist_take(iogp_hist *h, iogp_hist *tmp)
{
	free(h->bins);
	free(h->exact);
	h->exact = tmp->exact;
	h->nexact = tmp->nexact;
	h->exact_cap = tmp->exact_cap;
	tmp->exact = NULL;
	tmp->nexact = tmp->exact_cap = 0;
	scheme_copy(&h->scheme, &tmp->scheme);
	h->bins = tmp->bins;
	h->n = tmp->n;
	h->cap = tmp->cap;
	h->total = tmp->total;
	tmp->bins = NULL;
	tmp->n = tmp->cap = 0;
}

/* Outputs are initialised by the call; when out is also an input it is
 * built in *tmp and moved over at the end, so the input stays readable. */
static iogp_hist *out_begin(iogp_hist *out, int aliased, iogp_hist *tmp, const iogp_bins *scheme)
{
	iogp_hist *o = aliased ? tmp : out;

	iogp_hist_init(o, scheme);
	return o;
}

/* On failure a fresh out is left empty and an aliased one untouched. */
static int out_end(iogp_hist *out, iogp_hist *o, int rc)
{
	if (rc < 0) {
		iogp_hist_free(o);
		return rc;
	}
	if (o != out)
		hist_take(out, o);
	return 0;
}

int iogp_hist_copy(iogp_hist *dst, const iogp_hist *src)
{
	int rc;

	if (dst == src)
		return 0;
	iogp_hist_init(dst, &src->scheme);
	if ((rc = hist_reserve(dst, src->n)) < 0)
		return rc;
	if (src->n)
		memcpy(dst->bins, src->bins, src->n * sizeof(iogp_bin));
	dst->n = src->n;
	dst->total = src->total;
	if ((rc = iogp_hist_add_exact(dst, src->exact, src->nexact)) < 0)
		iogp_hist_free(dst);
	return rc < 0 ? rc : 0;
}

/* First position whose idx >= idx. */
size_t hist__find(const iogp_hist *h, uint64_t idx)
{
	size_t lo = 0, hi = h->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (h->bins[mid].idx < idx)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int iogp_hist_add_bin(iogp_hist *h, uint64_t idx, uint64_t count)
{
	size_t pos;
	int rc;

	if (!scheme_sane(&h->scheme) || !index_ok(&h->scheme, idx))
		return IOGP_EINVAL;
	if (count == 0)
		return 0;
	pos = hist__find(h, idx);
	if (pos < h->n && h->bins[pos].idx == idx) {
		h->bins[pos].count = sat_add(h->bins[pos].count, count);
	} else {
		if ((rc = hist_reserve(h, h->n + 1)) < 0)
			return rc;
		memmove(h->bins + pos + 1, h->bins + pos, (h->n - pos) * sizeof(iogp_bin));
		h->bins[pos].idx = idx;
		h->bins[pos].count = count;
		h->n++;
	}
	h->total = sat_add(h->total, count);
	return 0;
}

int iogp_hist_record(iogp_hist *h, uint64_t value, uint64_t count)
{
	if (!scheme_sane(&h->scheme))
		return IOGP_EINVAL;
	return iogp_hist_add_bin(h, iogp_bins_index(&h->scheme, value), count);
}

/* First p in [i, n) with a[p].idx >= idx, else n; galloping so a short
 * delta costs O(m log(n/m)) against a long histogram. */
static size_t gallop_fwd(const iogp_bin *a, size_t i, size_t n, uint64_t idx)
{
	size_t lo = i, hi, step = 1;

	if (i >= n || a[i].idx >= idx)
		return i;
	while (lo + step < n && a[lo + step].idx < idx) {
		lo += step;
		step *= 2;
	}
	hi = lo + step < n ? lo + step : n;
	lo++;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (a[mid].idx < idx)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* First p in [0, i) with a[p..i) all > idx, else i. */
static size_t gallop_back(const iogp_bin *a, size_t i, uint64_t idx)
{
	size_t lo, hi, step = 1;

	if (i == 0 || a[i - 1].idx <= idx)
		return i;
	hi = i - 1;
	while (hi >= step && a[hi - step].idx > idx) {
		hi -= step;
		step *= 2;
	}
	lo = hi >= step ? hi - step + 1 : 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (a[mid].idx > idx)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* Linear scans predict well and win for deltas that are not much shorter
 * than the histogram; galloping wins for a few bins into many. */
static inline size_t seek_fwd(const iogp_bin *a, size_t i, size_t n, uint64_t idx, int gallop)
{
	if (gallop)
		return gallop_fwd(a, i, n, idx);
	while (i < n && a[i].idx < idx)
		i++;
	return i;
}

static inline size_t seek_back(const iogp_bin *a, size_t i, uint64_t idx, int gallop)
{
	if (gallop)
		return gallop_back(a, i, idx);
	while (i > 0 && a[i - 1].idx > idx)
		i--;
	return i;
}

int iogp_hist_add_bins(iogp_hist *h, const iogp_bin *bins, size_t n)
{
	size_t i, j, k, p, w, fresh, nz = 0, first = SIZE_MAX, last = 0;
	uint64_t sum = 0;
	int gallop, rc;

	if (n == 0)
		return 0;
	if (!bins || !scheme_sane(&h->scheme))
		return IOGP_EINVAL;
	/* Validate everything before touching h, so a bad input changes nothing. */
	for (j = 0; j < n; j++) {
		if (bins[j].count == 0)
			continue;
		if (first == SIZE_MAX)
			first = j;
		else if (bins[j].idx <= bins[last].idx)
			return IOGP_EINVAL;
		last = j;
		nz++;
		sum = sat_add(sum, bins[j].count);
	}
	if (first == SIZE_MAX)
		return 0;
	if (!index_ok(&h->scheme, bins[first].idx) || !index_ok(&h->scheme, bins[last].idx))
		return IOGP_EINVAL;
	if (h->n == 0) {
		/* into an empty histogram (a query's copy of a sum): the bins as
		 * they are, in one more pass (the merge below takes three) */
		if ((rc = hist_reserve(h, nz)) < 0)
			return rc;
		for (j = first; j <= last; j++)
			if (bins[j].count)
				h->bins[h->n++] = bins[j];
		h->total = sat_add(h->total, sum);
		return 0;
	}
	/* Room for every new bin, so nothing can fail half-way: counted when
	 * the room is not there already (a model holds tens of thousands of
	 * cumulative histograms; room for a whole DELTA's bins on top of
	 * each was a quarter of a source's memory at 50,000 sources). */
	if (nz > SIZE_MAX - h->n)
		return IOGP_ENOMEM;
	if (h->n + nz > h->cap) {
		size_t fresh_n = 0;

		for (i = 0, j = first; j <= last; j++) {
			if (bins[j].count == 0)
				continue;
			while (i < h->n && h->bins[i].idx < bins[j].idx)
				i++;
			fresh_n += i == h->n || h->bins[i].idx != bins[j].idx;
		}
		if ((rc = hist_reserve(h, h->n + fresh_n)) < 0)
			return rc;
	}
	gallop = h->n / 16 > n;
	/* Add in place while every bin already exists (the usual case). */
	for (i = 0, j = first; j <= last; j++) {
		if (bins[j].count == 0)
			continue;
		i = seek_fwd(h->bins, i, h->n, bins[j].idx, gallop);
		if (i == h->n || h->bins[i].idx != bins[j].idx)
			break;
		h->bins[i].count = sat_add(h->bins[i].count, bins[j].count);
	}
	if (j <= last) {
		/* bins[j] is new: count the new ones from there, then merge
		 * bins[j..last] into h->bins[i..n) from the back, in place. */
		for (fresh = 0, p = i, k = j; k <= last; k++) {
			if (bins[k].count == 0)
				continue;
			p = seek_fwd(h->bins, p, h->n, bins[k].idx, gallop);
			if (p == h->n || h->bins[p].idx != bins[k].idx)
				fresh++;
		}
		p = h->n;
		w = h->n + fresh;
		for (k = last + 1; k > j; k--) {
			const iogp_bin *s = &bins[k - 1];

			if (s->count == 0)
				continue;
			i = seek_back(h->bins, p, s->idx, gallop);
			if (i < p) {
				w -= p - i;
				memmove(h->bins + w, h->bins + i, (p - i) * sizeof(iogp_bin));
				p = i;
			}
			w--;
			if (p > 0 && h->bins[p - 1].idx == s->idx) {
				h->bins[w].idx = s->idx;
				h->bins[w].count = sat_add(h->bins[--p].count, s->count);
			} else {
				h->bins[w] = *s;
			}
		}
		h->n += fresh;
	}
	h->total = sat_add(h->total, sum);
	return 0;
}

int iogp_hist_merge(iogp_hist *dst, const iogp_hist *src)
{
	if (!iogp_bins_equal(&dst->scheme, &src->scheme))
		return IOGP_ESCHEME;
	if (dst == src) {
		for (size_t i = 0; i < dst->n; i++)
			dst->bins[i].count = sat_add(dst->bins[i].count, dst->bins[i].count);
		for (size_t i = 0; i < dst->nexact; i++)
			dst->exact[i].count = sat_add(dst->exact[i].count, dst->exact[i].count);
		dst->total = sat_add(dst->total, dst->total);
		return 0;
	}
	int rc = iogp_hist_add_bins(dst, src->bins, src->n);
	return rc < 0 ? rc : iogp_hist_add_exact(dst, src->exact, src->nexact);
}

int iogp_hist_diff(iogp_hist *out, const iogp_hist *a, const iogp_hist *b)
{
	iogp_hist tmp, *o;
	size_t i, j = 0;
	int rc;

	o = out_begin(out, out == a || out == b, &tmp, &a->scheme);
	if (!iogp_bins_equal(&a->scheme, &b->scheme))
		return out_end(out, o, IOGP_ESCHEME);
	if ((rc = hist_reserve(o, a->n)) < 0)
		return out_end(out, o, rc);
	for (i = 0; i < a->n; i++) {
		uint64_t c = a->bins[i].count;

		while (j < b->n && b->bins[j].idx < a->bins[i].idx)
			j++;
		if (j < b->n && b->bins[j].idx == a->bins[i].idx)
			c = c > b->bins[j].count ? c - b->bins[j].count : 0;
		if (c) {
			o->bins[o->n].idx = a->bins[i].idx;
			o->bins[o->n++].count = c;
			o->total = sat_add(o->total, c);
		}
	}
	return out_end(out, o, hist__exact_diff(o, a, b));
}

uint64_t iogp_hist_count_at(const iogp_hist *h, uint64_t idx)
{
	size_t pos = hist__find(h, idx);

	return pos < h->n && h->bins[pos].idx == idx ? h->bins[pos].count : 0;
}

/* Append a bin in ascending order, folding into the last one if equal;
 * the caller has reserved room. */
static void push_bin(iogp_hist *o, uint64_t idx, uint64_t count)
{
	if (o->n && o->bins[o->n - 1].idx == idx) {
		o->bins[o->n - 1].count = sat_add(o->bins[o->n - 1].count, count);
	} else {
		o->bins[o->n].idx = idx;
		o->bins[o->n++].count = count;
	}
	o->total = sat_add(o->total, count);
}

int iogp_hist_reduce_k(iogp_hist *out, const iogp_hist *in)
{
	iogp_hist tmp, *o;
	iogp_bins nb;
	uint64_t lo, hi;
	int rc;

	iogp_bins_native(&nb, in->scheme.k > IOGP_NATIVE_K_MIN ? in->scheme.k - 1 : IOGP_NATIVE_K_MIN);
	o = out_begin(out, out == in, &tmp, &nb);
	if (in->scheme.kind != IOGP_BINS_NATIVE)
		return out_end(out, o, IOGP_ESCHEME);
	if (!scheme_sane(&in->scheme) || in->scheme.k <= IOGP_NATIVE_K_MIN)
		return out_end(out, o, IOGP_EINVAL);
	if ((rc = hist_reserve(o, in->n)) < 0)
		return out_end(out, o, rc);
	/* Every k bucket lies inside one k-1 bucket and the map is monotonic. */
	for (size_t i = 0; i < in->n; i++) {
		if ((rc = iogp_bins_bounds(&in->scheme, in->bins[i].idx, &lo, &hi)) < 0)
			return out_end(out, o, rc);
		push_bin(o, iogp_native_index(lo, nb.k), in->bins[i].count);
	}
	return out_end(out, o, iogp_hist_add_exact(o, in->exact, in->nexact));
}

/* Midpoint rounded down, without overflow. */
static uint64_t midpoint(uint64_t lo, uint64_t hi)
{
	return lo + (hi - lo) / 2;
}

int iogp_hist_quantile(const iogp_hist *h, double q, uint64_t *value)
{
	uint64_t rank, cum = 0, lo, hi;
	double r;
	int rc;

	if (!(q >= 0.0 && q <= 1.0))
		return IOGP_EINVAL;
	if (h->n == 0 || h->total == 0)
		return IOGP_ENOTFOUND;
	r = ceil(q * (double)h->total);
	if (r < 1.0)
		rank = 1;
	else if (r >= (double)h->total)
		rank = h->total;
	else
		rank = (uint64_t)r;
	for (size_t i = 0; i < h->n; i++) {
		uint64_t before = cum;

		cum = sat_add(cum, h->bins[i].count);
		if (cum >= rank || i + 1 == h->n) {
			size_t f, ne;

			if (iogp_hist_bin_exact(h, i, &f, &ne)) {
				/* the rank-th request is among this bin's exact values */
				for (size_t j = f; j < f + ne; j++) {
					before = sat_add(before, h->exact[j].count);
					if (before >= rank || j + 1 == f + ne) {
						*value = h->exact[j].value;
						return 0;
					}
				}
			}
			if ((rc = iogp_bins_bounds(&h->scheme, h->bins[i].idx, &lo, &hi)) < 0)
				return rc;
			*value = midpoint(lo, hi);
			return 0;
		}
	}
	return IOGP_ENOTFOUND;
}

int iogp_hist_min(const iogp_hist *h, uint64_t *lo)
{
	uint64_t hi;

	if (h->n == 0)
		return IOGP_ENOTFOUND;
	return iogp_bins_bounds(&h->scheme, h->bins[0].idx, lo, &hi);
}

int iogp_hist_max(const iogp_hist *h, uint64_t *hi)
{
	uint64_t lo;

	if (h->n == 0)
		return IOGP_ENOTFOUND;
	return iogp_bins_bounds(&h->scheme, h->bins[h->n - 1].idx, &lo, hi);
}

double iogp_hist_mean(const iogp_hist *h)
{
	double sum = 0.0, n = 0.0;
	uint64_t lo, hi;

	for (size_t i = 0; i < h->n; i++) {
		if (iogp_bins_bounds(&h->scheme, h->bins[i].idx, &lo, &hi) < 0)
			continue;
		sum += iogp_hist_bin_sum(h, i);
		n += (double)h->bins[i].count;
	}
	return n > 0.0 ? sum / n : 0.0;
}

int iogp_hist_rebin(iogp_hist *out, const iogp_hist *in, const iogp_bins *target)
{
	iogp_hist tmp, *o;
	uint64_t lo, hi;
	int rc;

	if (!target || iogp_bins_valid(target) < 0) {
		if (out != in)
			iogp_hist_init(out, &in->scheme);
		return IOGP_EINVAL;
	}
	o = out_begin(out, out == in, &tmp, target);
	if (!scheme_sane(&in->scheme))
		return out_end(out, o, IOGP_EINVAL);
	if ((rc = hist_reserve(o, in->n)) < 0)
		return out_end(out, o, rc);
	/* Midpoints ascend with the source index and every scheme's index is
	 * monotonic in the value, so the output comes out sorted. */
	for (size_t i = 0; i < in->n; i++) {
		if ((rc = iogp_bins_bounds(&in->scheme, in->bins[i].idx, &lo, &hi)) < 0)
			return out_end(out, o, rc);
		push_bin(o, iogp_bins_index(target, midpoint(lo, hi)), in->bins[i].count);
	}
	return out_end(out, o, iogp_hist_add_exact(o, in->exact, in->nexact));
}

int iogp_hist_rebin_equal(iogp_hist *out, const iogp_hist *in, uint32_t n)
{
	iogp_bins fb;
	uint64_t lo, hi;
	int rc = 0;

	if (n == 0)
		rc = IOGP_EINVAL;
	else if ((rc = iogp_hist_min(in, &lo)) >= 0 && (rc = iogp_hist_max(in, &hi)) >= 0)
		/* ceil((hi - lo + 1) / n) without overflowing; one bin over the
		 * whole 64-bit range gets width 2^64 - 1 */
		rc = iogp_bins_fixed(&fb, sat_add((hi - lo) / n, 1), lo);
	if (rc < 0) {
		if (out != in)
			iogp_hist_init(out, &in->scheme);
		return rc;
	}
	return iogp_hist_rebin(out, in, &fb);
}

int iogp_hist_write_csv(const iogp_hist *h, FILE *out)
{
	uint64_t lo, hi;

	if (fputs("lower_bound,upper_bound,count\n", out) == EOF)
		return IOGP_EIO;
	for (size_t i = 0; i < h->n; i++) {
		size_t f, ne;

		if (iogp_bins_bounds(&h->scheme, h->bins[i].idx, &lo, &hi) < 0)
			return IOGP_EINVAL;
		if (iogp_hist_bin_exact(h, i, &f, &ne)) {
			for (size_t j = f; j < f + ne; j++)
				if (fprintf(out, "%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", h->exact[j].value,
				            h->exact[j].value, h->exact[j].count) < 0)
					return IOGP_EIO;
		} else if (fprintf(out, "%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", lo, hi,
			           h->bins[i].count) < 0) {
			return IOGP_EIO;
		}
	}
	return ferror(out) ? IOGP_EIO : 0;
}
