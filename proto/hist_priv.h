/* hist_priv.h - shared by hist.c and hist_exact.c. Not installed. */
#ifndef IOGP_HIST_PRIV_H
#define IOGP_HIST_PRIV_H

#include "iogp_hist.h"

/* o.exact = a.exact - b.exact by value (values where a > b); o is the
 * output of iogp_hist_diff, built fresh. */
int hist__exact_diff(iogp_hist *o, const iogp_hist *a, const iogp_hist *b);
/* The first position of h->bins whose idx >= idx (h->n when none). */
size_t hist__find(const iogp_hist *h, uint64_t idx);

#endif
