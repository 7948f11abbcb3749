/* iogp_testing.h - private hooks for the library's tests and fuzzers (not installed). */
#ifndef IOGP_TESTING_H
#define IOGP_TESTING_H

#include "iogp_api.h"

#include <stddef.h>
#include <stdint.h>

#include "iogp_model.h"
#include "iogp_replay.h"

/* CRC-32C by the portable path, so tests check it on SSE4.2 machines too. */
IOGP_API uint32_t iogp__crc32c_sw(uint32_t crc, const void *buf, size_t len);

/* DELTAs w has stored transformed so far. */
IOGP_API uint64_t iogp__replay_transformed(const iogp_replay_writer *w);

/* Make w also run the reader's inverse on every DELTA it transforms (on:
 * the check the writer relied on before it proved the transform) and store
 * the payload as it is where that disagrees; with fault > 0, spoil every
 * fault-th transform first. Returns how many transforms it found wrong so
 * far that the writer would otherwise have stored. */
IOGP_API uint64_t iogp__replay_verify(iogp_replay_writer *w, int on, uint32_t fault);

/* Open a replay file image in memory, as iogp_replay_open does a file; buf
 * must outlive the reader. */
IOGP_API int iogp__replay_open_mem(iogp_replay_reader **rp, const void *buf, size_t len,
                          char *err, size_t errlen);

/* Whether a live model answers all- and node-wide queries from the sums it
 * keeps (1, the default) or by visiting every source (0): tests compare. */
IOGP_API void iogp__model_aggregates(iogp_model *m, int use);
/* When a live model's node sums take histogram bins late (model_agg.c):
 * 0 from 64 nodes on (the default), 1 always, -1 never: tests run both. */
IOGP_API void iogp__model_agg_late(iogp_model *m, int late);
/* Whether iogp_model_settle fetches the nodes ahead (1, the default) or
 * settles one node after another (0): benchmarks compare in one process. */
IOGP_API void iogp__model_settle_ahead(iogp_model *m, int ahead);
/* What the settles did so far: [0] groups of more than one record merged,
 * [1] of those added in a flat array, [2] records that joined a group
 * along a link found by a scan (a log of more metrics than its short
 * search follows). */
IOGP_API void iogp__model_settle_counts(const iogp_model *m, uint64_t out[3]);
/* Sums that lost an update (their queries visit instead): none, unless an
 * allocation failed. */
IOGP_API size_t iogp__model_agg_broken(const iogp_model *m);
/* Bytes the window rings hold: every source's, every node sum's. */
IOGP_API void iogp__model_window_bytes(const iogp_model *m, size_t *sources, size_t *nodes);

#endif
