/* mpi_io.c - libiogram-mpi: the MPI-IO layer (mpiio.*, iogp_metrics.h) and
 * its per-file records (layer IOGP_FR_MPIIO). A file handle finds its
 * record index in a fixed lock-free table filled at MPI_File_open (the file
 * table's id for the opened file's real path, as the POSIX layer names it)
 * and emptied at MPI_File_close. */
#include <limits.h>
#include <stdlib.h>

#include "mpi_layer.h"

#define FH_MAX 4096
#define FH_PROBE 64
static struct fh_ent {
	uint64_t key;    /* 0 free, 1 deleted, 2 being filled, else the handle's bits | tag */
	uint32_t ix;     /* per-file record index (IOG_FREC_NONE: none) */
} fhs[FH_MAX];
static const uint64_t FH_TAG = 1ull << 63;

static uint64_t fh_key(MPI_File fh)
{
	uint64_t k = 0;
	memcpy(&k, &fh, sizeof(fh) < sizeof(k) ? sizeof(fh) : sizeof(k));
	return k | FH_TAG;
}

static uint32_t fh_home(uint64_t key)
{
	return (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 40) % FH_MAX;
}

static struct fh_ent *fh_find(MPI_File fh)
{
	uint64_t key = fh_key(fh);
	uint32_t h = fh_home(key);
	for (uint32_t k = 0; k < FH_PROBE; k++) {
		struct fh_ent *e = &fhs[(h + k) % FH_MAX];
		uint64_t cur = __atomic_load_n(&e->key, __ATOMIC_ACQUIRE);
		if (cur == key)
			return e;
		if (cur == 0)
			return NULL;
	}
	return NULL;
}

static uint32_t fh_ix(MPI_File fh)
{
	struct fh_ent *e = fh_find(fh);
	return e ? e->ix : IOG_FREC_NONE;
}

static void fh_put(MPI_File fh, uint32_t ix)
{
	uint64_t key = fh_key(fh);
	uint32_t h = fh_home(key);
	for (uint32_t k = 0; k < FH_PROBE; k++) {
		struct fh_ent *e = &fhs[(h + k) % FH_MAX];
		uint64_t cur = __atomic_load_n(&e->key, __ATOMIC_ACQUIRE);
		if (cur == key) {
			e->ix = ix;
			return;
		}
		if (cur > 2)
			continue;
		if (cur != 2 && __atomic_compare_exchange_n(&e->key, &cur, 2, 0, __ATOMIC_ACQ_REL,
		                                            __ATOMIC_RELAXED)) {
			e->ix = ix;
			__atomic_store_n(&e->key, key, __ATOMIC_RELEASE);
			return;
		}
	}
}

/* The file's record index: its real path (ROMIO's "ufs:" style prefix
 * dropped), resolved outside counting so nothing of it is counted. */
static uint32_t file_ix(const char *name)
{
	char buf[PATH_MAX];
	const char *colon = strchr(name, ':'), *slash = strchr(name, '/');
	uint32_t ix;

	if (colon != NULL && slash == colon + 1 && colon - name > 1)
		name = colon + 1;
	int saved = iog__tls_in_agent;
	iog__tls_in_agent = 1;
	const char *path = realpath(name, buf) ? buf : name;
	iog__file_id_ix(path, &ix);
	iog__tls_in_agent = saved;
	return ix;
}

/* ---- counting ------------------------------------------------------------------ */

enum { INDEP = 0, COLL = 1 };

static void io_done(int rc, MPI_File fh, int op, int coll, int nb, int count, MPI_Datatype t,
                    uint64_t t0)
{
	uint64_t t1 = iog__now_ns();
	iog_shard *s = iog__shard();
	if (__builtin_expect(s == NULL, 0))
		return;
	if (rc != MPI_SUCCESS) {
		s->counters[iog__ms.io_errors]++;
		return;
	}
	uint64_t bytes = iog__mpi_bytes(t, count);
	iog_metric *sz = iog__mh.io_size[op];
	s->counters[iog__ms.io_ops[op]]++;
	s->counters[iog__ms.io_bytes[op]] += bytes;
	s->counters[coll ? iog__ms.io_coll[op] : iog__ms.io_indep[op]]++;
	if (nb)
		s->counters[iog__ms.io_nb[op]]++;
	iog__size_record(s, sz, sz->slot, bytes);
	iog__hist_record(iog__mh.io_lat[op], t1 - t0);
	iog__frec_io(s, fh_ix(fh), IOGP_FR_MPIIO, op, bytes, -1, t0, t1);
}

static void meta_done(int rc, MPI_File fh, uint32_t ix, int sync, uint64_t t0)
{
	uint64_t t1 = iog__now_ns();
	iog_shard *s = iog__shard();
	if (__builtin_expect(s == NULL, 0))
		return;
	if (rc != MPI_SUCCESS) {
		s->counters[iog__ms.io_errors]++;
		return;
	}
	s->counters[sync ? iog__ms.io_sync : iog__ms.io_meta]++;
	iog__hist_record(iog__mh.io_meta_lat, t1 - t0);
	iog__frec_meta(s, ix != IOG_FREC_NONE ? ix : fh_ix(fh), IOGP_FR_MPIIO, t0, t1);
}

/* ---- metadata -------------------------------------------------------------------- */

EXPORT int MPI_File_open(MPI_Comm comm, const char *name, int amode, MPI_Info info, MPI_File *fh)
{
	if (!iog__mpi_counting())
		return IOG_CALL(MPI_File_open, comm, name, amode, info, fh);
	uint64_t t0 = iog__now_ns();
	int rc = IOG_CALL(MPI_File_open, comm, name, amode, info, fh);
	uint32_t ix = IOG_FREC_NONE;
	if (rc == MPI_SUCCESS && fh != NULL && name != NULL) {
		ix = file_ix(name);
		fh_put(*fh, ix);
	}
	meta_done(rc, fh ? *fh : 0, ix, 0, t0);
	return rc;
}

EXPORT int MPI_File_close(MPI_File *fh)
{
	if (!iog__mpi_counting() || fh == NULL)
		return IOG_CALL(MPI_File_close, fh);
	struct fh_ent *e = fh_find(*fh);
	uint32_t ix = e ? e->ix : IOG_FREC_NONE;
	if (e != NULL)
		__atomic_store_n(&e->key, 1, __ATOMIC_RELEASE);
	uint64_t t0 = iog__now_ns();
	int rc = IOG_CALL(MPI_File_close, fh);
	meta_done(rc, 0, ix, 0, t0);
	return rc;
}

#define META(call, fh, sync) do { \
	if (!iog__mpi_counting()) \
		return IOG_CALL call; \
	uint64_t t0 = iog__now_ns(); \
	int rc = IOG_CALL call; \
	meta_done(rc, fh, IOG_FREC_NONE, sync, t0); \
	return rc; \
} while (0)

EXPORT int MPI_File_sync(MPI_File fh)
{
	META((MPI_File_sync, fh), fh, 1);
}

EXPORT int MPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype et, MPI_Datatype ft,
                             const char *rep, MPI_Info info)
{
	META((MPI_File_set_view, fh, disp, et, ft, rep, info), fh, 0);
}

EXPORT int MPI_File_set_size(MPI_File fh, MPI_Offset size)
{
	META((MPI_File_set_size, fh, size), fh, 0);
}

EXPORT int MPI_File_preallocate(MPI_File fh, MPI_Offset size)
{
	META((MPI_File_preallocate, fh, size), fh, 0);
}

EXPORT int MPI_File_seek(MPI_File fh, MPI_Offset off, int whence)
{
	META((MPI_File_seek, fh, off, whence), fh, 0);
}

EXPORT int MPI_File_seek_shared(MPI_File fh, MPI_Offset off, int whence)
{
	META((MPI_File_seek_shared, fh, off, whence), fh, 0);
}

EXPORT int MPI_File_get_size(MPI_File fh, MPI_Offset *size)
{
	META((MPI_File_get_size, fh, size), fh, 0);
}

/* ---- data: one wrapper per signature shape ---------------------------------------- */

#define IO(call, fh, op, coll, nb, count, t) do { \
	if (!iog__mpi_counting()) \
		return IOG_CALL call; \
	uint64_t t0 = iog__now_ns(); \
	int rc = IOG_CALL call; \
	io_done(rc, fh, op, coll, nb, count, t, t0); \
	return rc; \
} while (0)

/* (fh, buf, count, type, status) */
#define RW(fn, B, op, coll) \
EXPORT int fn(MPI_File fh, B buf, int count, MPI_Datatype t, MPI_Status *st) \
{ IO((fn, fh, buf, count, t, st), fh, op, coll, 0, count, t); }
/* (fh, offset, buf, count, type, status) */
#define RW_AT(fn, B, op, coll) \
EXPORT int fn(MPI_File fh, MPI_Offset off, B buf, int count, MPI_Datatype t, MPI_Status *st) \
{ IO((fn, fh, off, buf, count, t, st), fh, op, coll, 0, count, t); }
/* (fh, buf, count, type, request) */
#define IRW(fn, B, op, coll) \
EXPORT int fn(MPI_File fh, B buf, int count, MPI_Datatype t, MPI_Request *rq) \
{ IO((fn, fh, buf, count, t, rq), fh, op, coll, 1, count, t); }
/* (fh, offset, buf, count, type, request) */
#define IRW_AT(fn, B, op, coll) \
EXPORT int fn(MPI_File fh, MPI_Offset off, B buf, int count, MPI_Datatype t, MPI_Request *rq) \
{ IO((fn, fh, off, buf, count, t, rq), fh, op, coll, 1, count, t); }
/* split collectives, counted at _begin: (fh, buf, count, type) */
#define BEGIN(fn, B, op) \
EXPORT int fn(MPI_File fh, B buf, int count, MPI_Datatype t) \
{ IO((fn, fh, buf, count, t), fh, op, COLL, 1, count, t); }
#define BEGIN_AT(fn, B, op) \
EXPORT int fn(MPI_File fh, MPI_Offset off, B buf, int count, MPI_Datatype t) \
{ IO((fn, fh, off, buf, count, t), fh, op, COLL, 1, count, t); }

#define R void *
#define W const void *
RW(MPI_File_read, R, IOG_OP_READ, INDEP)
RW(MPI_File_read_all, R, IOG_OP_READ, COLL)
RW(MPI_File_read_shared, R, IOG_OP_READ, INDEP)
RW(MPI_File_read_ordered, R, IOG_OP_READ, COLL)
RW(MPI_File_write, W, IOG_OP_WRITE, INDEP)
RW(MPI_File_write_all, W, IOG_OP_WRITE, COLL)
RW(MPI_File_write_shared, W, IOG_OP_WRITE, INDEP)
RW(MPI_File_write_ordered, W, IOG_OP_WRITE, COLL)
RW_AT(MPI_File_read_at, R, IOG_OP_READ, INDEP)
RW_AT(MPI_File_read_at_all, R, IOG_OP_READ, COLL)
RW_AT(MPI_File_write_at, W, IOG_OP_WRITE, INDEP)
RW_AT(MPI_File_write_at_all, W, IOG_OP_WRITE, COLL)
IRW(MPI_File_iread, R, IOG_OP_READ, INDEP)
IRW(MPI_File_iread_shared, R, IOG_OP_READ, INDEP)
IRW(MPI_File_iread_all, R, IOG_OP_READ, COLL)
IRW(MPI_File_iwrite, W, IOG_OP_WRITE, INDEP)
IRW(MPI_File_iwrite_shared, W, IOG_OP_WRITE, INDEP)
IRW(MPI_File_iwrite_all, W, IOG_OP_WRITE, COLL)
IRW_AT(MPI_File_iread_at, R, IOG_OP_READ, INDEP)
IRW_AT(MPI_File_iread_at_all, R, IOG_OP_READ, COLL)
IRW_AT(MPI_File_iwrite_at, W, IOG_OP_WRITE, INDEP)
IRW_AT(MPI_File_iwrite_at_all, W, IOG_OP_WRITE, COLL)
BEGIN(MPI_File_read_all_begin, R, IOG_OP_READ)
BEGIN(MPI_File_read_ordered_begin, R, IOG_OP_READ)
BEGIN(MPI_File_write_all_begin, W, IOG_OP_WRITE)
BEGIN(MPI_File_write_ordered_begin, W, IOG_OP_WRITE)
BEGIN_AT(MPI_File_read_at_all_begin, R, IOG_OP_READ)
BEGIN_AT(MPI_File_write_at_all_begin, W, IOG_OP_WRITE)
