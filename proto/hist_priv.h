/* hist_priv.h - shared by hist.c and hist_exact.c (and the model's passes
 * over every source's sums). Not installed. */
#ifndef IOGP_HIST_PRIV_H
#define IOGP_HIST_PRIV_H

#include "iogp_hist.h"

/* o.exact = a.exact - b.exact by value (values where a > b); o is the
 * output of iogp_hist_diff, built fresh. */
int hist__exact_diff(iogp_hist *o, const iogp_hist *a, const iogp_hist *b);
/* The first position of h->bins whose idx >= idx (h->n when none). */
size_t hist__find(const iogp_hist *h, uint64_t idx);

/* Native bucket idx's inclusive bounds (idx < iogp_native_nbuckets(k):
 * iogp_native_bounds after its checks). */
static inline void hist__native_lo_hi(uint64_t idx, unsigned k, uint64_t *lo, uint64_t *hi)
{
	if (idx < (2u << k)) {
		*lo = *hi = idx;
	} else {
		unsigned s = (unsigned)(idx >> k) - 1;
		*lo = (idx - ((uint64_t)s << k)) << s;
		*hi = *lo + ((1ull << s) - 1);
	}
}

/* The midpoint iogp_hist_sum takes for each bin of the native scheme of
 * k, into mid (iogp_native_nbuckets(k) entries). */
void hist__native_mids(unsigned k, double *mid);
/* iogp_hist_sum, to the bit, with the midpoints of h's scheme from mid
 * (hist__native_mids of h's k, nmid entries; NULL: worked out a bin): a
 * pass over 50,000 sources' latency sums. */
double hist__sum_mids(const iogp_hist *h, const double *mid, size_t nmid);

#endif
