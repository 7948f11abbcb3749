/* realistic.h - plausible iogram messages from one source running a steady
 * POSIX workload, for benchmarks and tests. */
#ifndef IOGRAM_REALISTIC_H
#define IOGRAM_REALISTIC_H

#include <stdint.h>

#include "iogp_wire.h"

#define REALISTIC_NMETRICS 20   /* POSIX catalog: 13 counters, 6 histograms, access */
#define REALISTIC_NCOUNTERS 10  /* counters that move in every DELTA */
#define REALISTIC_NHISTS 6
#define REALISTIC_MAX_BINS 64
#define REALISTIC_NLABELS 6
#define REALISTIC_NFILES 4
#define REALISTIC_MAX_ACCESS 256

typedef struct realistic realistic;

/* A source whose id, labels and workload shape (rates, request sizes,
 * latencies, queue depth) follow from seed. Large (the catalog holds
 * iogp_bins), so it lives on the heap; NULL when out of memory. */
realistic *realistic_new(uint64_t seed);
void realistic_free(realistic *r);
uint64_t realistic_source(const realistic *r);
/* Interval between DELTAs, default 1 s; rates scale with it. */
void realistic_set_interval(realistic *r, uint64_t ns);
/* Access samples per DELTA (default 0, at most REALISTIC_MAX_ACCESS); a DELTA
 * with samples also announces the file table when seq == 1. */
void realistic_set_access(realistic *r, uint32_t n);

/* Each fills m for encoding (pointers into r, valid until r's next call),
 * keeping m's arena. Same (seed, seq) -> same message.
 * HELLO: labels and the 20-metric catalog, seq 0.
 * DELTA seq >= 1: interval [start + (seq-1) * iv, start + seq * iv]; 10
 * counters and 6 histograms of ~10 non-empty native (k=4) bins each whose
 * counts jitter around the workload's rates.
 * SNAPSHOT at seq: labels, catalog, file table and cumulative state near
 * what seq DELTAs add up to (~25-40 bins per histogram). */
void realistic_hello(realistic *r, iogp_msg *m);
void realistic_delta(realistic *r, iogp_msg *m, uint64_t seq);
void realistic_snapshot(realistic *r, iogp_msg *m, uint64_t seq);

#endif
