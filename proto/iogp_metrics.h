/* iogp_metrics.h - the POSIX layer's metric catalog, declared once: the
 * interposer registers from it, and the model, both viewers, the synthetic
 * generator and the exports take their names from it. The names are part
 * of the interface (they are in recordings and in users' scripts). */
#ifndef IOGP_METRICS_H
#define IOGP_METRICS_H

#define IOGP_M_READ_OPS "posix.read.ops"
#define IOGP_M_READ_BYTES "posix.read.bytes"
#define IOGP_M_WRITE_OPS "posix.write.ops"
#define IOGP_M_WRITE_BYTES "posix.write.bytes"
#define IOGP_M_META_OPS "posix.meta.ops"
#define IOGP_M_SYNC_OPS "posix.sync.ops"
#define IOGP_M_ERRORS "posix.errors"
#define IOGP_M_READ_CONSEC "posix.read.consecutive"
#define IOGP_M_READ_SEQ "posix.read.sequential"
#define IOGP_M_READ_RANDOM "posix.read.random"
#define IOGP_M_WRITE_CONSEC "posix.write.consecutive"
#define IOGP_M_WRITE_SEQ "posix.write.sequential"
#define IOGP_M_WRITE_RANDOM "posix.write.random"
#define IOGP_M_READ_SIZE "posix.read.size"
#define IOGP_M_WRITE_SIZE "posix.write.size"
#define IOGP_M_READ_LATENCY "posix.read.latency"
#define IOGP_M_WRITE_LATENCY "posix.write.latency"
#define IOGP_M_META_LATENCY "posix.meta.latency"
#define IOGP_M_QUEUE_DEPTH "posix.queue_depth"
#define IOGP_M_ACCESS "posix.access"

/* X(ID, name, kind, unit, label) in wire order (ids of the synthetic
 * generator are positions + 1). kind is an iogp_metric_kind. */
#define IOGP_POSIX_METRICS(X) \
	X(READ_OPS, IOGP_M_READ_OPS, IOGP_COUNTER, "ops", "read requests") \
	X(READ_BYTES, IOGP_M_READ_BYTES, IOGP_COUNTER, "bytes", "bytes read") \
	X(WRITE_OPS, IOGP_M_WRITE_OPS, IOGP_COUNTER, "ops", "write requests") \
	X(WRITE_BYTES, IOGP_M_WRITE_BYTES, IOGP_COUNTER, "bytes", "bytes written") \
	X(META_OPS, IOGP_M_META_OPS, IOGP_COUNTER, "ops", "metadata operations") \
	X(SYNC_OPS, IOGP_M_SYNC_OPS, IOGP_COUNTER, "ops", "calls asking for durability (fsync, fdatasync, sync_file_range, syncfs, msync, ...)") \
	X(ERRORS, IOGP_M_ERRORS, IOGP_COUNTER, "ops", "failed calls") \
	X(READ_CONSEC, IOGP_M_READ_CONSEC, IOGP_COUNTER, "ops", "reads where the last ended") \
	X(READ_SEQ, IOGP_M_READ_SEQ, IOGP_COUNTER, "ops", "reads after the last") \
	X(READ_RANDOM, IOGP_M_READ_RANDOM, IOGP_COUNTER, "ops", "reads before the last") \
	X(WRITE_CONSEC, IOGP_M_WRITE_CONSEC, IOGP_COUNTER, "ops", "writes where the last ended") \
	X(WRITE_SEQ, IOGP_M_WRITE_SEQ, IOGP_COUNTER, "ops", "writes after the last") \
	X(WRITE_RANDOM, IOGP_M_WRITE_RANDOM, IOGP_COUNTER, "ops", "writes before the last") \
	X(READ_SIZE, IOGP_M_READ_SIZE, IOGP_HISTOGRAM, "bytes", "read request size") \
	X(WRITE_SIZE, IOGP_M_WRITE_SIZE, IOGP_HISTOGRAM, "bytes", "write request size") \
	X(READ_LATENCY, IOGP_M_READ_LATENCY, IOGP_HISTOGRAM, "ns", "read latency") \
	X(WRITE_LATENCY, IOGP_M_WRITE_LATENCY, IOGP_HISTOGRAM, "ns", "write latency") \
	X(META_LATENCY, IOGP_M_META_LATENCY, IOGP_HISTOGRAM, "ns", "metadata and sync latency") \
	X(QUEUE_DEPTH, IOGP_M_QUEUE_DEPTH, IOGP_HISTOGRAM, "requests", "requests in flight at start") \
	X(ACCESS, IOGP_M_ACCESS, IOGP_ACCESS, "", "access samples (file, offset, size, time)")

enum iogp_posix_metric {
#define IOGP_X_ENUM(id, name, kind, unit, label) IOGP_POSIX_##id,
	IOGP_POSIX_METRICS(IOGP_X_ENUM)
#undef IOGP_X_ENUM
	IOGP_POSIX_NMETRICS
};

/* The histograms a snapshot exports, in panel order. */
#define IOGP_POSIX_HISTS IOGP_M_READ_SIZE, IOGP_M_WRITE_SIZE, IOGP_M_READ_LATENCY, \
	IOGP_M_WRITE_LATENCY, IOGP_M_META_LATENCY, IOGP_M_QUEUE_DEPTH

/* Memory-mapped files: the pages a mapping brings in and writes back are
 * moved by the CPU and the kernel, never as requests the interposer sees, so
 * they cannot be counted per request; these show that it happens and how
 * much is mapped (mmap/mmap64 of regular files; MAP_ANONYMOUS, devices and
 * failed calls not counted). Registered after the catalog above (its wire
 * order is unchanged). */
#define IOGP_M_MMAP_OPS "posix.mmap.ops"
#define IOGP_M_MMAP_BYTES "posix.mmap.bytes"
#define IOGP_POSIX_MMAP_METRICS(X) \
	X(MMAP_OPS, IOGP_M_MMAP_OPS, IOGP_COUNTER, "ops", "files mapped") \
	X(MMAP_BYTES, IOGP_M_MMAP_BYTES, IOGP_COUNTER, "bytes", "bytes of files mapped")

/* What is not storage, and O_DIRECT. By default posix.* counts only regular
 * files and block devices (regular files under /proc, /sys and /dev, and
 * memfds, are not storage); the data requests on pipes, FIFOs and character
 * devices, and on those files, are counted apart in other.* (counters
 * only). IOGRAM_ALL_FILES=1 counts them in posix.* instead; files under
 * IOGRAM_EXCLUDE_DIRS are counted nowhere. posix.{read,write}.direct.ops:
 * the successful posix.* requests on descriptors opened with O_DIRECT or
 * switched to it with fcntl(F_SETFL). posix.sync.opens: opens of storage
 * with O_SYNC or O_DSYNC (their writes are durable without a sync call,
 * so posix.sync.ops alone would hide them). Registered after the catalog above
 * (its wire order is unchanged). */
#define IOGP_M_OTHER_READ_OPS "other.read.ops"
#define IOGP_M_OTHER_READ_BYTES "other.read.bytes"
#define IOGP_M_OTHER_WRITE_OPS "other.write.ops"
#define IOGP_M_OTHER_WRITE_BYTES "other.write.bytes"
#define IOGP_M_READ_DIRECT_OPS "posix.read.direct.ops"
#define IOGP_M_WRITE_DIRECT_OPS "posix.write.direct.ops"
#define IOGP_M_SYNC_OPENS "posix.sync.opens"
#define IOGP_POSIX_CLASS_METRICS(X) \
	X(OTHER_READ_OPS, IOGP_M_OTHER_READ_OPS, IOGP_COUNTER, "ops", "reads of what is not storage") \
	X(OTHER_READ_BYTES, IOGP_M_OTHER_READ_BYTES, IOGP_COUNTER, "bytes", "bytes read from what is not storage") \
	X(OTHER_WRITE_OPS, IOGP_M_OTHER_WRITE_OPS, IOGP_COUNTER, "ops", "writes to what is not storage") \
	X(OTHER_WRITE_BYTES, IOGP_M_OTHER_WRITE_BYTES, IOGP_COUNTER, "bytes", "bytes written to what is not storage") \
	X(READ_DIRECT_OPS, IOGP_M_READ_DIRECT_OPS, IOGP_COUNTER, "ops", "reads with O_DIRECT") \
	X(WRITE_DIRECT_OPS, IOGP_M_WRITE_DIRECT_OPS, IOGP_COUNTER, "ops", "writes with O_DIRECT") \
	X(SYNC_OPENS, IOGP_M_SYNC_OPENS, IOGP_COUNTER, "ops", "storage opened with O_SYNC or O_DSYNC (every write waits)")

/* The stdio layer, counted apart from the syscalls (posix.* is only what
 * the program itself asks of the kernel: glibc's own read/write inside
 * stdio never pass the interposer). Calls on streams whose descriptor is
 * storage (as posix.* decides it), stdout and stderr included: reads
 * (fread, fgetc/getc, fgets, getline/getdelim, fscanf, ... and their
 * _unlocked and fortified forms), writes (fwrite, fputc/putc, fputs, puts,
 * fprintf/printf, ...), and meta ops (fopen/fdopen/freopen, fclose,
 * fseek/fsetpos/rewind, ftell/fgetpos, fflush), and the wide-character
 * calls (fgetwc/fputwc, fgetws/fputws, fwprintf, fwscanf, ...). Bytes are
 * what the call says it moved; fscanf and the wide calls count 0 B; a call
 * that fails or moves nothing is an op of 0 B. Where the stream's position
 * is known (stdio's own offset, not the descriptor's: from fopen, or asked
 * once, advanced by each call's bytes, set by seeks and tells) a read or
 * write is classified as posix's are (consecutive/sequential/random per
 * stream and direction) and sampled into stdio.access; the classes then
 * add up to the calls whose position was known, not to all calls.
 * Registered after the catalogs above (their wire order is unchanged; the
 * classes and stdio.access after the stdio layer's first nine). */
#define IOGP_M_STDIO_READ_OPS "stdio.read.ops"
#define IOGP_M_STDIO_READ_BYTES "stdio.read.bytes"
#define IOGP_M_STDIO_WRITE_OPS "stdio.write.ops"
#define IOGP_M_STDIO_WRITE_BYTES "stdio.write.bytes"
#define IOGP_M_STDIO_META_OPS "stdio.meta.ops"
#define IOGP_M_STDIO_READ_SIZE "stdio.read.size"
#define IOGP_M_STDIO_WRITE_SIZE "stdio.write.size"
#define IOGP_M_STDIO_READ_LATENCY "stdio.read.latency"
#define IOGP_M_STDIO_WRITE_LATENCY "stdio.write.latency"
#define IOGP_M_STDIO_READ_CONSEC "stdio.read.consecutive"
#define IOGP_M_STDIO_READ_SEQ "stdio.read.sequential"
#define IOGP_M_STDIO_READ_RANDOM "stdio.read.random"
#define IOGP_M_STDIO_WRITE_CONSEC "stdio.write.consecutive"
#define IOGP_M_STDIO_WRITE_SEQ "stdio.write.sequential"
#define IOGP_M_STDIO_WRITE_RANDOM "stdio.write.random"
#define IOGP_M_STDIO_ACCESS "stdio.access"
#define IOGP_STDIO_METRICS(X) \
	X(READ_OPS, IOGP_M_STDIO_READ_OPS, IOGP_COUNTER, "ops", "stdio read calls") \
	X(READ_BYTES, IOGP_M_STDIO_READ_BYTES, IOGP_COUNTER, "bytes", "bytes read through stdio") \
	X(WRITE_OPS, IOGP_M_STDIO_WRITE_OPS, IOGP_COUNTER, "ops", "stdio write calls") \
	X(WRITE_BYTES, IOGP_M_STDIO_WRITE_BYTES, IOGP_COUNTER, "bytes", "bytes written through stdio") \
	X(META_OPS, IOGP_M_STDIO_META_OPS, IOGP_COUNTER, "ops", "stdio open/close/seek/tell/flush") \
	X(READ_SIZE, IOGP_M_STDIO_READ_SIZE, IOGP_HISTOGRAM, "bytes", "stdio read size") \
	X(WRITE_SIZE, IOGP_M_STDIO_WRITE_SIZE, IOGP_HISTOGRAM, "bytes", "stdio write size") \
	X(READ_LATENCY, IOGP_M_STDIO_READ_LATENCY, IOGP_HISTOGRAM, "ns", "stdio read latency") \
	X(WRITE_LATENCY, IOGP_M_STDIO_WRITE_LATENCY, IOGP_HISTOGRAM, "ns", "stdio write latency") \
	X(READ_CONSEC, IOGP_M_STDIO_READ_CONSEC, IOGP_COUNTER, "ops", "stdio reads where the last ended") \
	X(READ_SEQ, IOGP_M_STDIO_READ_SEQ, IOGP_COUNTER, "ops", "stdio reads after the last") \
	X(READ_RANDOM, IOGP_M_STDIO_READ_RANDOM, IOGP_COUNTER, "ops", "stdio reads before the last") \
	X(WRITE_CONSEC, IOGP_M_STDIO_WRITE_CONSEC, IOGP_COUNTER, "ops", "stdio writes where the last ended") \
	X(WRITE_SEQ, IOGP_M_STDIO_WRITE_SEQ, IOGP_COUNTER, "ops", "stdio writes after the last") \
	X(WRITE_RANDOM, IOGP_M_STDIO_WRITE_RANDOM, IOGP_COUNTER, "ops", "stdio writes before the last") \
	X(ACCESS, IOGP_M_STDIO_ACCESS, IOGP_ACCESS, "", "stdio access samples (file, stream offset, size, time)")

enum iogp_stdio_metric {
#define IOGP_X_ENUM(id, name, kind, unit, label) IOGP_STDIO_##id,
	IOGP_STDIO_METRICS(IOGP_X_ENUM)
#undef IOGP_X_ENUM
	IOGP_STDIO_NMETRICS
};

/* The MPI-IO layer (libiogram-mpi.so): the application's MPI-IO calls, what
 * it asked of MPI (the POSIX layer shows what the aggregators made of it).
 * A read or write counts at its call (non-blocking i* forms at their start,
 * split collectives at _begin) with size = count x the datatype's size (what
 * was asked, as in Darshan) and latency = the call's duration; a failed call
 * counts in mpiio.errors only. ops = coll + indep: collective are the _all,
 * _at_all, _ordered, split (_begin) and iread_all/iwrite_all forms,
 * independent the plain, _at, _shared and their i* forms; nb counts the
 * non-blocking and split ones among them. Meta: open, close, set_view,
 * set_size, preallocate, seek, seek_shared, get_size; sync: MPI_File_sync
 * (its time in mpiio.meta.latency too). Registered at MPI_Init. */
#define IOGP_MPIIO_METRICS(X) \
	X(READ_OPS, "mpiio.read.ops", IOGP_COUNTER, "ops", "MPI-IO reads") \
	X(READ_BYTES, "mpiio.read.bytes", IOGP_COUNTER, "bytes", "bytes asked of MPI-IO reads") \
	X(WRITE_OPS, "mpiio.write.ops", IOGP_COUNTER, "ops", "MPI-IO writes") \
	X(WRITE_BYTES, "mpiio.write.bytes", IOGP_COUNTER, "bytes", "bytes given to MPI-IO writes") \
	X(READ_COLL, "mpiio.read.coll.ops", IOGP_COUNTER, "ops", "collective MPI-IO reads") \
	X(READ_INDEP, "mpiio.read.indep.ops", IOGP_COUNTER, "ops", "independent MPI-IO reads") \
	X(WRITE_COLL, "mpiio.write.coll.ops", IOGP_COUNTER, "ops", "collective MPI-IO writes") \
	X(WRITE_INDEP, "mpiio.write.indep.ops", IOGP_COUNTER, "ops", "independent MPI-IO writes") \
	X(READ_NB, "mpiio.read.nb.ops", IOGP_COUNTER, "ops", "non-blocking and split MPI-IO reads") \
	X(WRITE_NB, "mpiio.write.nb.ops", IOGP_COUNTER, "ops", "non-blocking and split MPI-IO writes") \
	X(META_OPS, "mpiio.meta.ops", IOGP_COUNTER, "ops", "MPI-IO open/close/set_view/seek/size") \
	X(SYNC_OPS, "mpiio.sync.ops", IOGP_COUNTER, "ops", "MPI_File_sync calls") \
	X(ERRORS, "mpiio.errors", IOGP_COUNTER, "ops", "failed MPI-IO calls") \
	X(READ_SIZE, "mpiio.read.size", IOGP_HISTOGRAM, "bytes", "MPI-IO read request size") \
	X(WRITE_SIZE, "mpiio.write.size", IOGP_HISTOGRAM, "bytes", "MPI-IO write request size") \
	X(READ_LATENCY, "mpiio.read.latency", IOGP_HISTOGRAM, "ns", "MPI-IO read latency") \
	X(WRITE_LATENCY, "mpiio.write.latency", IOGP_HISTOGRAM, "ns", "MPI-IO write latency") \
	X(META_LATENCY, "mpiio.meta.latency", IOGP_HISTOGRAM, "ns", "MPI-IO metadata and sync latency")

enum iogp_mpiio_metric {
#define IOGP_X_ENUM(id, name, kind, unit, label) IOGP_MPIIO_##id,
	IOGP_MPIIO_METRICS(IOGP_X_ENUM)
#undef IOGP_X_ENUM
	IOGP_MPIIO_NMETRICS
};

/* MPI messages (libiogram-mpi.so). Point-to-point sends (MPI_Send, Bsend,
 * Ssend, Rsend, the I* forms, Sendrecv, Sendrecv_replace, and persistent
 * requests each time MPI_Start/Startall starts them), size = count x the
 * datatype's size, counted when the call succeeds; MPI_PROC_NULL is no
 * message. Each is also counted by destination (its rank in MPI_COMM_WORLD)
 * for the traffic matrix (the wire's PEERS section); mpi.p2p.unmapped counts
 * those whose destination has no place (world rank past 16384, or not
 * translatable). Collectives count by kind: ops, and bytes = this rank's
 * part: the send buffer (count x size; alltoall: per destination x
 * communicator size; alltoallv: the sum of its counts; reduce_scatter: the
 * sum of recvcounts), bcast the buffer, scatter/scatterv what the rank
 * receives, barrier 0; non-blocking forms count under their kind. */
#define IOGP_MPI_METRICS(X) \
	X(P2P_OPS, "mpi.p2p.ops", IOGP_COUNTER, "ops", "point-to-point messages sent") \
	X(P2P_BYTES, "mpi.p2p.bytes", IOGP_COUNTER, "bytes", "point-to-point bytes sent") \
	X(P2P_SIZE, "mpi.p2p.size", IOGP_HISTOGRAM, "bytes", "message size") \
	X(P2P_UNMAPPED, "mpi.p2p.unmapped", IOGP_COUNTER, "ops", "messages whose destination has no place in the matrix") \
	X(COLL_OPS, "mpi.coll.ops", IOGP_COUNTER, "ops", "collective calls") \
	X(COLL_BYTES, "mpi.coll.bytes", IOGP_COUNTER, "bytes", "bytes of collective calls")

enum iogp_mpi_metric {
#define IOGP_X_ENUM(id, name, kind, unit, label) IOGP_MPI_##id,
	IOGP_MPI_METRICS(IOGP_X_ENUM)
#undef IOGP_X_ENUM
	IOGP_MPI_NMETRICS
};

/* Collective kinds: counters mpi.coll.<name>.ops and mpi.coll.<name>.bytes. */
#define IOGP_MPI_COLLS(X) \
	X(BARRIER, "barrier") X(BCAST, "bcast") X(REDUCE, "reduce") X(ALLREDUCE, "allreduce") \
	X(GATHER, "gather") X(GATHERV, "gatherv") X(ALLGATHER, "allgather") \
	X(ALLGATHERV, "allgatherv") X(SCATTER, "scatter") X(SCATTERV, "scatterv") \
	X(ALLTOALL, "alltoall") X(ALLTOALLV, "alltoallv") X(REDUCE_SCATTER, "reduce_scatter") \
	X(REDUCE_SCATTER_BLOCK, "reduce_scatter_block") X(SCAN, "scan") X(EXSCAN, "exscan")

enum iogp_mpi_coll {
#define IOGP_X_ENUM(id, name) IOGP_MPI_COLL_##id,
	IOGP_MPI_COLLS(IOGP_X_ENUM)
#undef IOGP_X_ENUM
	IOGP_MPI_NCOLL
};

#endif
