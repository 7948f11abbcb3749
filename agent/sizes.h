/* sizes.h - the publisher's side of the common-size tables (sizes.c). */
#ifndef IOG_SIZES_H
#define IOG_SIZES_H

#include "agent.h"

/* Per exact metric, the publisher's: the last interval's most common sizes
 * (ascending by value, for the DELTA) and the cumulative list (SNAPSHOT). */
typedef struct iog__xpub {
	iogp_exact top[IOGP_EXACT_TOP];
	uint32_t ntop;
	iogp_exact cum[IOGP_EXACT_KEEP];
	uint32_t ncum;
} iog__xpub;

/* Read every thread's table of m: each count's increase goes to tabd[dense
 * bucket] (tabd has nb entries, zeroed by the caller) and to x. */
int iog__sizes_collect(const iog_metric *m, iog__xpub *x, uint64_t *tabd, uint32_t nb);
/* Once per collection: start a new generation when sizes keep missing. */
void iog__sizes_tick(uint64_t now_ns);

#endif
