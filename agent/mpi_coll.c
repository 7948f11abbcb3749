/* mpi_coll.c - libiogram-mpi: collectives counted by kind (mpi.coll.*),
 * bytes by the catalog's rule (iogp_metrics.h): this rank's part. A
 * non-blocking collective counts under its kind when it starts. */
#include "mpi_layer.h"

static int comm_size(MPI_Comm comm)
{
	int n = 0;
	return IOG_CALL(MPI_Comm_size, comm, &n) == MPI_SUCCESS ? n : 0;
}

static int comm_rank(MPI_Comm comm)
{
	int r = -1;
	return IOG_CALL(MPI_Comm_rank, comm, &r) == MPI_SUCCESS ? r : -1;
}

static uint64_t sum_counts(const int *c, int n, MPI_Datatype t)
{
	int64_t k = 0;
	for (int i = 0; c != NULL && i < n; i++)
		k += c[i] > 0 ? c[i] : 0;
	return iog__mpi_bytes(t, k);
}

#define COUNT(kind, bytes_expr) do { \
	if (rc == MPI_SUCCESS && iog__mpi_counting()) \
		iog__mpi_coll(IOGP_MPI_COLL_##kind, (bytes_expr)); \
} while (0)

EXPORT int MPI_Barrier(MPI_Comm comm)
{
	int rc = IOG_CALL(MPI_Barrier, comm);
	COUNT(BARRIER, 0);
	return rc;
}

EXPORT int MPI_Ibarrier(MPI_Comm comm, MPI_Request *req)
{
	int rc = IOG_CALL(MPI_Ibarrier, comm, req);
	COUNT(BARRIER, 0);
	return rc;
}

EXPORT int MPI_Bcast(void *buf, int count, MPI_Datatype t, int root, MPI_Comm comm)
{
	int rc = IOG_CALL(MPI_Bcast, buf, count, t, root, comm);
	COUNT(BCAST, iog__mpi_bytes(t, count));
	return rc;
}

EXPORT int MPI_Ibcast(void *buf, int count, MPI_Datatype t, int root, MPI_Comm comm,
                      MPI_Request *req)
{
	int rc = IOG_CALL(MPI_Ibcast, buf, count, t, root, comm, req);
	COUNT(BCAST, iog__mpi_bytes(t, count));
	return rc;
}

EXPORT int MPI_Reduce(const void *sb, void *rb, int count, MPI_Datatype t, MPI_Op op, int root,
                      MPI_Comm comm)
{
	int rc = IOG_CALL(MPI_Reduce, sb, rb, count, t, op, root, comm);
	COUNT(REDUCE, iog__mpi_bytes(t, count));
	return rc;
}

EXPORT int MPI_Ireduce(const void *sb, void *rb, int count, MPI_Datatype t, MPI_Op op, int root,
                       MPI_Comm comm, MPI_Request *req)
{
	int rc = IOG_CALL(MPI_Ireduce, sb, rb, count, t, op, root, comm, req);
	COUNT(REDUCE, iog__mpi_bytes(t, count));
	return rc;
}

#define REDUCE_LIKE(fn, kind) \
EXPORT int fn(const void *sb, void *rb, int count, MPI_Datatype t, MPI_Op op, MPI_Comm comm) \
{ \
	int rc = IOG_CALL(fn, sb, rb, count, t, op, comm); \
	COUNT(kind, iog__mpi_bytes(t, count)); \
	return rc; \
}
REDUCE_LIKE(MPI_Allreduce, ALLREDUCE)
REDUCE_LIKE(MPI_Scan, SCAN)
REDUCE_LIKE(MPI_Exscan, EXSCAN)

EXPORT int MPI_Iallreduce(const void *sb, void *rb, int count, MPI_Datatype t, MPI_Op op,
                          MPI_Comm comm, MPI_Request *req)
{
	int rc = IOG_CALL(MPI_Iallreduce, sb, rb, count, t, op, comm, req);
	COUNT(ALLREDUCE, iog__mpi_bytes(t, count));
	return rc;
}

/* gather family: what this rank sends (in place at the root: its receive part) */
static uint64_t send_part(const void *sb, int sc, MPI_Datatype st, int rc_, MPI_Datatype rt)
{
	return sb == MPI_IN_PLACE ? iog__mpi_bytes(rt, rc_) : iog__mpi_bytes(st, sc);
}

EXPORT int MPI_Gather(const void *sb, int sc, MPI_Datatype st, void *rb, int rcount,
                      MPI_Datatype rt, int root, MPI_Comm comm)
{
	int rc = IOG_CALL(MPI_Gather, sb, sc, st, rb, rcount, rt, root, comm);
	COUNT(GATHER, send_part(sb, sc, st, rcount, rt));
	return rc;
}

EXPORT int MPI_Igather(const void *sb, int sc, MPI_Datatype st, void *rb, int rcount,
                       MPI_Datatype rt, int root, MPI_Comm comm, MPI_Request *req)
{
	int rc = IOG_CALL(MPI_Igather, sb, sc, st, rb, rcount, rt, root, comm, req);
	COUNT(GATHER, send_part(sb, sc, st, rcount, rt));
	return rc;
}

EXPORT int MPI_Gatherv(const void *sb, int sc, MPI_Datatype st, void *rb, const int rcounts[],
                       const int displs[], MPI_Datatype rt, int root, MPI_Comm comm)
{
	int rc = IOG_CALL(MPI_Gatherv, sb, sc, st, rb, rcounts, displs, rt, root, comm);
	COUNT(GATHERV, sb == MPI_IN_PLACE && rcounts ? iog__mpi_bytes(rt, rcounts[root])
	                                             : iog__mpi_bytes(st, sc));
	return rc;
}

EXPORT int MPI_Allgather(const void *sb, int sc, MPI_Datatype st, void *rb, int rcount,
                         MPI_Datatype rt, MPI_Comm comm)
{
	int rc = IOG_CALL(MPI_Allgather, sb, sc, st, rb, rcount, rt, comm);
	COUNT(ALLGATHER, send_part(sb, sc, st, rcount, rt));
	return rc;
}

EXPORT int MPI_Iallgather(const void *sb, int sc, MPI_Datatype st, void *rb, int rcount,
                          MPI_Datatype rt, MPI_Comm comm, MPI_Request *req)
{
	int rc = IOG_CALL(MPI_Iallgather, sb, sc, st, rb, rcount, rt, comm, req);
	COUNT(ALLGATHER, send_part(sb, sc, st, rcount, rt));
	return rc;
}

EXPORT int MPI_Allgatherv(const void *sb, int sc, MPI_Datatype st, void *rb, const int rcounts[],
                          const int displs[], MPI_Datatype rt, MPI_Comm comm)
{
	int rc = IOG_CALL(MPI_Allgatherv, sb, sc, st, rb, rcounts, displs, rt, comm);
	int me;
	COUNT(ALLGATHERV, sb == MPI_IN_PLACE && rcounts && (me = comm_rank(comm)) >= 0
	                      ? iog__mpi_bytes(rt, rcounts[me]) : iog__mpi_bytes(st, sc));
	return rc;
}

/* scatter family: what this rank receives (in place at the root: its send part) */
EXPORT int MPI_Scatter(const void *sb, int sc, MPI_Datatype st, void *rb, int rcount,
                       MPI_Datatype rt, int root, MPI_Comm comm)
{
	int rc = IOG_CALL(MPI_Scatter, sb, sc, st, rb, rcount, rt, root, comm);
	COUNT(SCATTER, rb == MPI_IN_PLACE ? iog__mpi_bytes(st, sc) : iog__mpi_bytes(rt, rcount));
	return rc;
}

EXPORT int MPI_Iscatter(const void *sb, int sc, MPI_Datatype st, void *rb, int rcount,
                        MPI_Datatype rt, int root, MPI_Comm comm, MPI_Request *req)
{
	int rc = IOG_CALL(MPI_Iscatter, sb, sc, st, rb, rcount, rt, root, comm, req);
	COUNT(SCATTER, rb == MPI_IN_PLACE ? iog__mpi_bytes(st, sc) : iog__mpi_bytes(rt, rcount));
	return rc;
}

EXPORT int MPI_Scatterv(const void *sb, const int scounts[], const int displs[], MPI_Datatype st,
                        void *rb, int rcount, MPI_Datatype rt, int root, MPI_Comm comm)
{
	int rc = IOG_CALL(MPI_Scatterv, sb, scounts, displs, st, rb, rcount, rt, root, comm);
	COUNT(SCATTERV, rb == MPI_IN_PLACE && scounts ? iog__mpi_bytes(st, scounts[root])
	                                              : iog__mpi_bytes(rt, rcount));
	return rc;
}

EXPORT int MPI_Alltoall(const void *sb, int sc, MPI_Datatype st, void *rb, int rcount,
                        MPI_Datatype rt, MPI_Comm comm)
{
	int rc = IOG_CALL(MPI_Alltoall, sb, sc, st, rb, rcount, rt, comm);
	COUNT(ALLTOALL, send_part(sb, sc, st, rcount, rt) * (uint64_t)comm_size(comm));
	return rc;
}

EXPORT int MPI_Ialltoall(const void *sb, int sc, MPI_Datatype st, void *rb, int rcount,
                         MPI_Datatype rt, MPI_Comm comm, MPI_Request *req)
{
	int rc = IOG_CALL(MPI_Ialltoall, sb, sc, st, rb, rcount, rt, comm, req);
	COUNT(ALLTOALL, send_part(sb, sc, st, rcount, rt) * (uint64_t)comm_size(comm));
	return rc;
}

EXPORT int MPI_Alltoallv(const void *sb, const int scounts[], const int sdispls[], MPI_Datatype st,
                         void *rb, const int rcounts[], const int rdispls[], MPI_Datatype rt,
                         MPI_Comm comm)
{
	int rc = IOG_CALL(MPI_Alltoallv, sb, scounts, sdispls, st, rb, rcounts, rdispls, rt, comm);
	COUNT(ALLTOALLV, sb == MPI_IN_PLACE ? sum_counts(rcounts, comm_size(comm), rt)
	                                    : sum_counts(scounts, comm_size(comm), st));
	return rc;
}

EXPORT int MPI_Reduce_scatter(const void *sb, void *rb, const int rcounts[], MPI_Datatype t,
                              MPI_Op op, MPI_Comm comm)
{
	int rc = IOG_CALL(MPI_Reduce_scatter, sb, rb, rcounts, t, op, comm);
	COUNT(REDUCE_SCATTER, sum_counts(rcounts, comm_size(comm), t));
	return rc;
}

EXPORT int MPI_Reduce_scatter_block(const void *sb, void *rb, int rcount, MPI_Datatype t,
                                    MPI_Op op, MPI_Comm comm)
{
	int rc = IOG_CALL(MPI_Reduce_scatter_block, sb, rb, rcount, t, op, comm);
	COUNT(REDUCE_SCATTER_BLOCK, iog__mpi_bytes(t, rcount) * (uint64_t)comm_size(comm));
	return rc;
}
