/* iogp_hist.h - histogram bin schemes, sparse histograms, quantiles and
 * re-binning, shared by the agent (index math) and the viewers (everything). */
#ifndef IOGP_HIST_H
#define IOGP_HIST_H

#include "iogp_api.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- native log-linear layout (HdrHistogram-like) ----------------------
 * Values below 2^(k+1) have a bucket each (exact). Above, the position m of
 * the leading 1 bit picks a power-of-two major bucket and the next k bits a
 * linear sub-bucket, so a bucket spans [mant << s, ((mant+1) << s) - 1] with
 * s = m - k and 2^k <= mant < 2^(k+1): relative width 2^-k, and a value taken
 * at the bucket midpoint is within 2^-(k+1) of any member (k=4: 3.125%).
 *   idx(v) = (s << k) + (v >> s),  s = msb(v | 2^k) - k
 * Bucket count: (65 - k) << k (k=4: 976). 4 KiB, 64 KiB, 1 MiB start buckets. */
#define IOGP_NATIVE_K_DEFAULT 4
#define IOGP_NATIVE_K_MIN 1
#define IOGP_NATIVE_K_MAX 8

static inline uint32_t iogp_native_index(uint64_t v, unsigned k)
{
	unsigned m = 63u - (unsigned)__builtin_clzll(v | (1ull << k));
	unsigned s = m - k;
	return (uint32_t)(((uint64_t)s << k) + (v >> s));
}

static inline uint32_t iogp_native_nbuckets(unsigned k)
{
	return (65u - k) << k;
}

/* Inclusive integer bounds of native bucket idx. Returns IOGP_EINVAL when
 * idx >= iogp_native_nbuckets(k). */
IOGP_API int iogp_native_bounds(uint32_t idx, unsigned k, uint64_t *lo, uint64_t *hi);

/* ---- bin schemes --------------------------------------------------------
 * A scheme maps a value to a bin index (uint64) and a bin index back to
 * inclusive integer bounds [lo, hi]. */
typedef enum iogp_bins_kind {
	IOGP_BINS_NATIVE = 0, /* log-linear, parameter k */
	IOGP_BINS_LOG2 = 1,   /* bin 0 = {0}; bin b>=1 = [2^(b-1), 2^b - 1] (9 -> bin 4 = [8,15]) */
	IOGP_BINS_FIXED = 2,  /* width W, offset O: see iogp_bins_index: beta bins
	                       * below the offset, none of them off by one */
	IOGP_BINS_EDGES = 3,  /* user-given ascending edges e[0..n-1]: bin 0 = [0, e0-1],
	                       * bin i = [e(i-1), e(i)-1], bin n = [e(n-1), UINT64_MAX]
	                       * (e0 = 0: bin 0 is empty and not a valid index) */
} iogp_bins_kind;

#define IOGP_MAX_EDGES 1024

typedef struct iogp_bins {
	iogp_bins_kind kind;
	uint32_t k;        /* NATIVE */
	uint64_t width;    /* FIXED, > 0 */
	uint64_t offset;   /* FIXED */
	uint32_t nedges;   /* EDGES, 1..IOGP_MAX_EDGES */
	uint64_t edges[IOGP_MAX_EDGES]; /* EDGES, strictly ascending, edges[0] > 0 allowed or = 0 */
} iogp_bins;

/* FIXED: beta = ceil(O / W) bins lie below the offset;
 *   key(v) = beta + floor((v - O) / W)   (exact integer math, no underflow)
 * bin key spans [max(0, O + (key - beta) * W), O + (key - beta + 1) * W - 1].
 * (W=10000, O=0: 370000 -> key 37 = [370000, 379999], as in the histogram CSV.) */

IOGP_API void iogp_bins_native(iogp_bins *b, unsigned k);
/* 1 when idx names a bin of the (sane) scheme b. */
IOGP_API int iogp_bins_index_ok(const iogp_bins *b, uint64_t idx);
IOGP_API void iogp_bins_log2(iogp_bins *b);
IOGP_API int iogp_bins_fixed(iogp_bins *b, uint64_t width, uint64_t offset);
IOGP_API int iogp_bins_edges(iogp_bins *b, const uint64_t *edges, uint32_t n);
IOGP_API int iogp_bins_valid(const iogp_bins *b);            /* 0 or IOGP_EINVAL */
IOGP_API int iogp_bins_equal(const iogp_bins *a, const iogp_bins *b); /* 1 if same scheme */
IOGP_API uint64_t iogp_bins_index(const iogp_bins *b, uint64_t v);
/* Number of bins, or UINT64_MAX when unbounded-ish (FIXED: max key + 1). */
IOGP_API uint64_t iogp_bins_count(const iogp_bins *b);
IOGP_API int iogp_bins_bounds(const iogp_bins *b, uint64_t idx, uint64_t *lo, uint64_t *hi);
/* Parse a --bins argument: "native", "native:K", "log2", "fixed:W", "fixed:W:O",
 * "edges:A,B,C". ("equal:N" needs data: see iogp_hist_rebin_equal.) Writes a
 * message to err on failure. */
IOGP_API int iogp_bins_parse(iogp_bins *b, const char *spec, char *err, size_t errlen);
/* Short text form, the inverse of iogp_bins_parse. Returns its length, or
 * IOGP_ELIMIT when it does not fit in len (buf then holds a truncated text). */
IOGP_API int iogp_bins_format(const iogp_bins *b, char *buf, size_t len);

/* ---- sparse histogram ----------------------------------------------------
 * Bins sorted by idx, every count > 0. total = sum of counts. Used for
 * cumulative state (model), deltas (wire) and re-binned views (export).
 * Counts saturate at UINT64_MAX. The result of copy, diff, reduce_k, rebin
 * and rebin_equal (dst/out) is initialised by the call, like iogp_hist_init:
 * free it with iogp_hist_free (also after an error), and free it before
 * reusing it; it may be one of the inputs. */
typedef struct iogp_bin {
	uint64_t idx;
	uint64_t count;
} iogp_bin;

/* An exact value and how many times it was recorded: the agent's common
 * request sizes, kept beside a histogram (see "exact values" below). */
typedef struct iogp_exact {
	uint64_t value;
	uint64_t count;
} iogp_exact;

typedef struct iogp_hist {
	iogp_bins scheme;
	size_t n, cap;
	iogp_bin *bins;
	uint64_t total;
	/* exact values, ascending, every count > 0; at most IOGP_HIST_MAX_EXACT */
	size_t nexact, exact_cap;
	iogp_exact *exact;
} iogp_hist;

IOGP_API void iogp_hist_init(iogp_hist *h, const iogp_bins *scheme);
IOGP_API void iogp_hist_free(iogp_hist *h);
IOGP_API void iogp_hist_clear(iogp_hist *h);                  /* keep scheme and memory */
IOGP_API int iogp_hist_copy(iogp_hist *dst, const iogp_hist *src);
IOGP_API int iogp_hist_record(iogp_hist *h, uint64_t value, uint64_t count);
/* IOGP_EINVAL (h unchanged) for an index outside h's scheme. */
IOGP_API int iogp_hist_add_bin(iogp_hist *h, uint64_t idx, uint64_t count);
/* h += bins (sorted ascending by idx, counts may be 0 and are then ignored).
 * IOGP_EINVAL (h unchanged) if the non-zero bins are not strictly ascending
 * or an index is outside h's scheme. */
IOGP_API int iogp_hist_add_bins(iogp_hist *h, const iogp_bin *bins, size_t n);
/* dst += src; schemes must be equal (IOGP_ESCHEME otherwise). Exact, order-free. */
IOGP_API int iogp_hist_merge(iogp_hist *dst, const iogp_hist *src);
/* out = a - b (bins where a >= b; bins where a < b are left out; used to
 * diff cumulative states). */
IOGP_API int iogp_hist_diff(iogp_hist *out, const iogp_hist *a, const iogp_hist *b);
IOGP_API uint64_t iogp_hist_count_at(const iogp_hist *h, uint64_t idx);
/* Native only: k -> k-1 by merging bucket pairs, exact. */
IOGP_API int iogp_hist_reduce_k(iogp_hist *out, const iogp_hist *in);

/* Quantile q in [0,1]: the value at rank ceil(q * total) (q=0 -> the first),
 * reported as the midpoint of the bucket holding it (rounded down), clamped to
 * the bucket's bounds; for q=1 the bucket's midpoint too; in an explained
 * bucket (exact values, below) the exact value at that rank. Returns IOGP_ENOTFOUND
 * for an empty histogram. Error vs exact: within the bucket's relative width/2. */
IOGP_API int iogp_hist_quantile(const iogp_hist *h, double q, uint64_t *value);
IOGP_API int iogp_hist_min(const iogp_hist *h, uint64_t *lo);  /* lower bound of first bin */
IOGP_API int iogp_hist_max(const iogp_hist *h, uint64_t *hi);  /* upper bound of last bin */
/* Mean from bucket midpoints (exact values in explained buckets). */
IOGP_API double iogp_hist_mean(const iogp_hist *h);

/* Re-bin into another scheme: each source bucket goes whole into the target
 * bin holding its midpoint (exact where target edges fall on source bucket
 * edges, else off by at most one bucket). log2 from native is always exact. */
IOGP_API int iogp_hist_rebin(iogp_hist *out, const iogp_hist *in, const iogp_bins *target);
/* Equal-width bins over the observed range [min, max] of `in`: n bins of
 * width ceil((max - min + 1) / n) starting at min (a FIXED scheme).
 * IOGP_ENOTFOUND if `in` is empty, IOGP_EINVAL if n = 0. */
IOGP_API int iogp_hist_rebin_equal(iogp_hist *out, const iogp_hist *in, uint32_t n);

/* The histogram CSV: "lower_bound,upper_bound,count\n" then one line per
 * non-empty bin, ascending, upper bound inclusive; an explained bin (below)
 * is written as one line per exact value in it (4096,4096,n). Returns
 * IOGP_EIO on error. */
IOGP_API int iogp_hist_write_csv(const iogp_hist *h, FILE *out);

/* ---- exact values (hist_exact.c) ---------------------------------------
 * A histogram may carry exact values beside its bins: the agent counts its
 * most common request sizes exactly (a request is in a size's count and in
 * its bin). A bin is *explained* when the counts of the exact values inside
 * its bounds add up to its count exactly: then every request in it had one
 * of those sizes, and quantiles, the mean, sums and the CSV use the exact
 * values there (4096, not the bin's 4223). Where they fall short (a size
 * that was not kept) the bin is used as before. Copy, merge, diff, reduce_k
 * and rebin carry the exact values along; iogp_hist_add_bins does not touch
 * them. Values beyond IOGP_HIST_MAX_EXACT are left out (the bins holding
 * them are then no longer explained: never a wrong exact answer). */
#define IOGP_HIST_MAX_EXACT 4096

/* h.exact += e (ascending by value, strictly; counts of 0 are ignored).
 * IOGP_EINVAL (h unchanged) when not ascending. */
IOGP_API int iogp_hist_add_exact(iogp_hist *h, const iogp_exact *e, size_t n);
/* 1 when bin i (an index into h->bins) is explained; *first and *n give its
 * exact values in h->exact. */
IOGP_API int iogp_hist_bin_exact(const iogp_hist *h, size_t i, size_t *first, size_t *n);
/* Sum of the values in bin i: exact when explained, else count x midpoint
 * (the weight of a bytes-weighted size histogram). */
IOGP_API double iogp_hist_bin_sum(const iogp_hist *h, size_t i);
/* Sum over all bins (bytes moved, for a size histogram). */
IOGP_API double iogp_hist_sum(const iogp_hist *h);
/* The most common exact values by count (ties: the smaller value first), at
 * most max of them, into out; returns how many. Every exact count is a true
 * count of requests of that size, whether its bin is explained or not. */
IOGP_API size_t iogp_hist_common(const iogp_hist *h, iogp_exact *out, size_t max);
/* Request sizes: the quantile (iogp_hist_quantile) and the largest value,
 * exact where the bin is explained, else the bin's lower bound (sizes are
 * round and land on a native bin's floor: "4K", where the midpoint would be
 * an invented 4223). IOGP_ENOTFOUND when empty. */
IOGP_API int iogp_hist_quantile_size(const iogp_hist *h, double q, uint64_t *value);
IOGP_API int iogp_hist_max_size(const iogp_hist *h, uint64_t *value);
/* The same over any list (any order): the max most common into out. */
IOGP_API size_t iogp_exact_top(const iogp_exact *in, size_t n, iogp_exact *out, size_t max);
/* A bounded cumulative list (the agent's and the model's per source):
 * dst (ascending, *ndst of at most cap <= IOGP_EXACT_MERGE_MAX) += src
 * (ascending). Values it has gain their counts; new ones take free places,
 * the most common first; the rest are left out (their bins are then not
 * explained: never a wrong count). Both sides apply the same merges to the
 * same DELTAs, so a SNAPSHOT equals what a receiver accumulated. */
#define IOGP_EXACT_MERGE_MAX 64
#define IOGP_EXACT_KEEP 32  /* cumulative list per source and histogram */
#define IOGP_EXACT_TOP 8    /* exact values an agent sends per DELTA and histogram */
IOGP_API void iogp_exact_merge(iogp_exact *dst, uint32_t *ndst, uint32_t cap,
                               const iogp_exact *src, uint32_t nsrc);

#endif
