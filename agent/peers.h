/* peers.h - MPI sends by destination (the traffic matrix, iogp_peer): each
 * thread counts into its own dense table indexed by the destination's world
 * rank, with plain stores (no lock, no atomic RMW); the publisher sums the
 * threads' tables and sends the destinations that changed (DELTA) or all
 * (SNAPSHOT). The table size is set once, at MPI_Init (the world size,
 * capped); before that nothing is counted. Shared by libiogram (publisher
 * side) and libiogram-mpi (record side). Not installed. */
#ifndef IOG_PEERS_H
#define IOG_PEERS_H

#include "agent.h"

#pragma GCC visibility push(default)

#define IOG_PEERS_MAX 16384   /* destinations with a place; the rest are counted apart */

struct iog_peer_ent {
	uint64_t msgs, bytes;
};

extern uint32_t iog__peers_n;         /* places per table, 0: not set up */
int iog__peers_setup(uint32_t world);  /* once; 0, or -1 when already set otherwise */
struct iog_peer_ent *iog__peers_slow(iog_shard *s);

/* One message of bytes to world rank dest; 0, or -1 when dest has no place. */
static inline int iog__peer_add(iog_shard *s, uint32_t dest, uint64_t bytes)
{
	struct iog_peer_ent *t = s->peers;

	if (__builtin_expect(t == NULL, 0) && (t = iog__peers_slow(s)) == NULL)
		return -1;
	if (dest >= __atomic_load_n(&iog__peers_n, __ATOMIC_RELAXED))
		return -1;
	t[dest].msgs++;
	t[dest].bytes += bytes;
	return 0;
}

/* Publisher: msg gets the destinations changed since the last call
 * (increments), or every destination's totals as last collected. */
int iog__peers_collect(iogp_msg *msg);
int iog__peers_snapshot(iogp_msg *msg);
void iog__peers_child(void);   /* fork child: the parent's counts are not its */

#pragma GCC visibility pop

#endif
