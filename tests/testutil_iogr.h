/* testutil_iogr.h - recordings for tests (testutil_iogr.c). */
#ifndef TESTUTIL_IOGR_H
#define TESTUTIL_IOGR_H

#include "iogp_model.h"

/* Every run-*.iogr of dir in one model (no record may be bad); *nfiles (when
 * not NULL) gets how many files there were. */
iogp_model *tu_load_runs(const char *dir, int *nfiles);

/* An MPI job with a known traffic matrix, written as its ranks' streams
 * would be: TU_MX_RANKS ranks on nodes "mxa" (ranks 0, 1), "mxb" (2, 3) and
 * "mxc" (4), each sending to every other rank tu_mx_msgs(r, d) messages of
 * tu_mx_size(d) bytes, spread evenly over TU_MX_SECONDS DELTAs of 1 s, and
 * mpi.p2p.size histograms of the same messages. 0 or -1. */
#define TU_MX_RANKS 5
#define TU_MX_SECONDS 4
static inline uint64_t tu_mx_msgs(int r, int d)
{
	return r == d ? 0 : (uint64_t)(TU_MX_SECONDS * ((r + 1) * 10 + d));
}
static inline uint64_t tu_mx_size(int d)
{
	return 1024u << d;   /* 1 KiB to rank 0 ... 16 KiB to rank 4 */
}
const char *tu_mx_node(int r);
int tu_matrix_job(const char *path);

#endif
