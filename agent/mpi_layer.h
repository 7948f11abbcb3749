/* mpi_layer.h - state shared by the MPI layer's wrappers (libiogram-mpi.so):
 * start-up, labels and messages (mpi.c), collectives (mpi_coll.c) and
 * MPI-IO (mpi_io.c). The wrappers are the MPI_* names; each calls the MPI
 * library's PMPI_* entry, found with dlsym, so the layer links no MPI
 * library and a program that never loads one never notices it. Not
 * installed. */
#ifndef IOG_MPI_H
#define IOG_MPI_H

#include <mpi.h>
#include <stdint.h>
#include <string.h>

#include "agent.h"
#include "iogp_metrics.h"
#include "peers.h"

/* Open MPI's MPI_COMM_WORLD is the address of a library object: weak, so
 * loading this layer into a program without Open MPI needs no such symbol. */
#ifdef OPEN_MPI
#pragma weak ompi_mpi_comm_world
#endif

#define EXPORT __attribute__((visibility("default")))

/* 1 from a successful MPI_Init (metrics registered, labels set) until
 * MPI_Finalize; before and after, every wrapper only calls through. */
extern int iog__mpi_on;

/* The MPI library's function: dlsym(RTLD_NEXT), else RTLD_DEFAULT. */
void *iog__mpi_sym(const char *name);
#define IOG_PMPI(fn) ({ \
	static __typeof__(&P##fn) f_; \
	__typeof__(&P##fn) g_ = __atomic_load_n(&f_, __ATOMIC_RELAXED); \
	if (__builtin_expect(g_ == NULL, 0)) { \
		g_ = (__typeof__(g_))iog__mpi_sym("P" #fn); \
		__atomic_store_n(&f_, g_, __ATOMIC_RELAXED); \
	} \
	g_; })
/* Call the real fn(args...), MPI_ERR_INTERN if the library has none. */
#define IOG_CALL(fn, ...) ({ __typeof__(&P##fn) h_ = IOG_PMPI(fn); \
	h_ ? h_(__VA_ARGS__) : MPI_ERR_INTERN; })

/* Counting is on for this call (not an agent thread, MPI initialised). */
static inline int iog__mpi_counting(void)
{
	return __builtin_expect(__atomic_load_n(&iog__mpi_on, __ATOMIC_RELAXED) &&
	                        !iog__tls_in_agent, 1);
}

/* count elements of t in bytes (0 for a negative count or a bad type). */
uint64_t iog__mpi_bytes(MPI_Datatype t, int64_t count);

/* Slots of the layer's metrics (registered at MPI_Init). */
typedef struct iog_mpi_slots {
	uint32_t io_ops[2], io_bytes[2], io_coll[2], io_indep[2], io_nb[2];
	uint32_t io_meta, io_sync, io_errors;
	uint32_t p2p_ops, p2p_bytes, p2p_unmapped, coll_ops, coll_bytes;
	uint32_t coll_kind_ops[IOGP_MPI_NCOLL], coll_kind_bytes[IOGP_MPI_NCOLL];
} iog_mpi_slots;
typedef struct iog_mpi_hists {
	iog_metric *io_size[2], *io_lat[2], *io_meta_lat, *p2p_size;
} iog_mpi_hists;
extern iog_mpi_slots iog__ms;
extern iog_mpi_hists iog__mh;

/* A collective of kind IOGP_MPI_COLL_* moving bytes (mpi_coll.c's rule). */
static inline void iog__mpi_coll(int kind, uint64_t bytes)
{
	iog_shard *s = iog__shard();
	if (__builtin_expect(s == NULL, 0))
		return;
	s->counters[iog__ms.coll_ops]++;
	s->counters[iog__ms.coll_bytes] += bytes;
	s->counters[iog__ms.coll_kind_ops[kind]]++;
	s->counters[iog__ms.coll_kind_bytes[kind]] += bytes;
}

#endif
