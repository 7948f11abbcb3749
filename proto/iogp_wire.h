/* iogp_wire.h - the message model and its wire codec (HELLO, DELTA,
 * SNAPSHOT, BYE) as carried in frame 2 of a ZeroMQ multipart message and,
 * unchanged, in replay file records. */
#ifndef IOGP_WIRE_H
#define IOGP_WIRE_H

#include "iogp_api.h"

#include <stddef.h>
#include <stdint.h>

#include "iogp_hist.h"

/* Payload layout, all integers little endian:
 *   u32 magic "IOGW" | u8 version | u8 kind | u16 flags | u64 source id |
 *   varint seq | sections...
 * A section is: varint tag | varint length | body. Unknown tags are skipped by
 * length; known ones are parsed strictly and must consume their body exactly.
 * Numbers inside sections are LEB128 varints (max 10 bytes, no overlong
 * encodings past 64 bits), signed ones zigzag. Histograms are sparse lists of
 * (gap, count) pairs: gap = idx - (previous idx + 1), first gap = idx.
 * Every id list (metrics, counters, gauges, histograms, files) is strictly
 * ascending and gap-coded like bins; the encoder rejects unsorted or duplicate
 * ids with IOGP_EINVAL. The payload ends with an END byte (tag 0, no length),
 * so a cut at a section boundary is detected. A kind outside 1..4 decodes
 * (m->kind holds the raw number) so consumers can skip it; kind 0 is corrupt.
 * Section tags are listed at the top of wire.c.
 * A major version change (IOGP_WIRE_VERSION) is rejected with IOGP_EVERSION;
 * additions within a version go in new section tags. */
/* Where viewers and the recorder listen and agents connect when nothing is
 * set: loopback only; anything wider is an explicit flag. */
#define IOGP_DEFAULT_ENDPOINT "tcp://127.0.0.1:7461"

#define IOGP_WIRE_MAGIC "IOGW"
#define IOGP_WIRE_VERSION 1
#define IOGP_WIRE_HEADER_MIN 17 /* 16 fixed header bytes + a 1-byte varint seq at least */

/* Hard limits: a message exceeding any is rejected with IOGP_ELIMIT. */
#define IOGP_MAX_PAYLOAD (4u << 20)
#define IOGP_MAX_LABELS 64
#define IOGP_MAX_KEY 63      /* label key / metric name / unit: bytes, excl. NUL */
#define IOGP_MAX_NAME 127
#define IOGP_MAX_UNIT 31
#define IOGP_MAX_VALUE 1023  /* label value */
#define IOGP_MAX_PATH 4095
#define IOGP_MAX_METRICS 4096
#define IOGP_MAX_HIST_BINS 65536 /* per histogram in one message */
#define IOGP_MAX_EXACT 1024      /* exact values per histogram in one message */
#define IOGP_MAX_ACCESS 65536
#define IOGP_MAX_FILES 65536

typedef enum iogp_kind {
	IOGP_HELLO = 1,
	IOGP_DELTA = 2,
	IOGP_SNAPSHOT = 3,
	IOGP_BYE = 4,
} iogp_kind;

enum {
	IOGP_F_KEYFRAME = 1u << 0, /* a recorder-made SNAPSHOT inside a replay keyframe */
	IOGP_F_FINAL = 1u << 1,    /* last SNAPSHOT of a source (exit) */
};

typedef enum iogp_metric_kind {
	IOGP_COUNTER = 1,   /* monotonically increasing u64; DELTA carries increments */
	IOGP_GAUGE = 2,     /* i64 value; DELTA and SNAPSHOT carry the current value */
	IOGP_HISTOGRAM = 3, /* bins per scheme; DELTA carries increments */
	IOGP_ACCESS = 4,    /* access samples (time, file, op, offset, size) */
} iogp_metric_kind;

typedef struct iogp_label {
	const char *key;    /* NUL-terminated (decoder copies into the arena) */
	const char *value;
} iogp_label;

typedef struct iogp_metric_def {
	uint32_t id;        /* per source, unique, referenced by data sections */
	iogp_metric_kind kind;
	const char *name;   /* e.g. "posix.read.size" */
	const char *unit;   /* "bytes", "ns", "ops", "" */
	iogp_bins bins;     /* HISTOGRAM only */
} iogp_metric_def;

typedef struct iogp_counter_val {
	uint32_t id;
	uint64_t value;     /* DELTA: increment; SNAPSHOT: cumulative */
} iogp_counter_val;

typedef struct iogp_gauge_val {
	uint32_t id;
	int64_t value;
} iogp_gauge_val;

typedef struct iogp_hist_val {
	uint32_t id;
	uint32_t nbins;
	iogp_bin *bins;     /* ascending idx, count > 0 */
} iogp_hist_val;

/* Exact values of histogram metric id (the agent's common request sizes,
 * see iogp_hist.h): DELTA, the interval's most common values with their
 * counts (each also counted in the interval's bins); SNAPSHOT, cumulative.
 * Ascending by value, counts > 0; same wire form as a histogram's bins. */
typedef struct iogp_exact_val {
	uint32_t id;
	uint32_t n;
	iogp_exact *v;
} iogp_exact_val;

enum { IOGP_OP_READ = 0, IOGP_OP_WRITE = 1 };

/* Per-file records (Darshan's per-file counters, streamed): what one source
 * did to one file through one layer. DELTA: the files touched in the
 * interval, counts as increments, first/last/max over the interval; SNAPSHOT:
 * every file, cumulative. Times are the source's CLOCK_MONOTONIC, 0 = none.
 * A source that tracks too many files puts the rest in one record with the
 * IOGP_FR_OTHER flag (file 0) and counts them in `overflow`. A source that
 * aggregates small files by directory (the agent's IOGRAM_DIR_FILES) puts
 * a directory's files beyond the first few in one record with the
 * IOGP_FR_DIRAGG flag, named "<dir>/\*" in the file table, and counts the
 * distinct files it folded in `overflow` (> 0). Both counts are cumulative
 * in DELTA and SNAPSHOT alike. */
enum { IOGP_FR_POSIX = 0, IOGP_FR_STDIO = 1, IOGP_FR_MPIIO = 2, IOGP_FR_LAYERS = 3 };
enum { IOGP_FR_OTHER = 1u << 0, IOGP_FR_DIRAGG = 1u << 1 };
/* A directory's record names its directory (file > 0), counts what it
 * folded, and is no other-files record (the codec refuses it otherwise). */
#define IOGP_FILEREC_DIR_OK(r) \
	(!((r)->flags & IOGP_FR_DIRAGG) || \
	 (!((r)->flags & IOGP_FR_OTHER) && (r)->file != 0 && (r)->overflow != 0))
typedef struct iogp_filerec_op {
	uint64_t ops, bytes;
	uint64_t time_ns;             /* inside the calls */
	uint64_t consec, seq, random; /* Darshan's spatiality counts */
	uint64_t max_req;             /* largest request */
	uint64_t first_ns, last_ns;   /* first call's start, last call's end */
} iogp_filerec_op;
typedef struct iogp_filerec {
	uint64_t file;                /* file table id (0 with IOGP_FR_OTHER, > 0 with DIRAGG) */
	uint32_t layer;               /* IOGP_FR_* */
	uint32_t flags;
	iogp_filerec_op op[2];        /* IOGP_OP_READ, IOGP_OP_WRITE */
	uint64_t meta_ops, meta_ns;   /* open/close/seek/stat/sync and their time */
	uint64_t overflow;            /* OTHER: files beyond the limit; DIRAGG: files
	                               * folded (> 0); cumulative */
} iogp_filerec;
#define IOGP_MAX_FILERECS 65536   /* per message */

/* MPI point-to-point sends by destination (the traffic matrix): what one
 * source (an MPI rank) sent to each destination, by the destination's rank
 * in MPI_COMM_WORLD. DELTA: the destinations sent to in the interval, as
 * increments; SNAPSHOT: every destination, cumulative. Ascending by rank,
 * msgs > 0 (a zero-byte message is a message). */
typedef struct iogp_peer {
	uint32_t rank;                /* destination's world rank, < IOGP_MAX_PEER_RANK */
	uint32_t pad;
	uint64_t msgs, bytes;
} iogp_peer;
#define IOGP_MAX_PEERS 65536      /* per message */
#define IOGP_MAX_PEER_RANK (1u << 24)

typedef struct iogp_access {
	uint32_t id;        /* access metric id */
	uint64_t t_ns;      /* source CLOCK_MONOTONIC */
	uint64_t file;      /* file id from the file table */
	uint32_t op;        /* IOGP_OP_* */
	uint64_t offset;
	uint64_t size;
} iogp_access;

typedef struct iogp_file {
	uint64_t id;
	const char *path;
} iogp_file;

/* A decoded or to-be-encoded message. Pointers refer to caller memory when
 * encoding and to the message's own arena after iogp_msg_decode. */
typedef struct iogp_msg {
	uint8_t version;
	/* Set by iogp_msg_decode: the bytes are exactly what iogp_msg_encode
	 * writes for the message (every other form that decodes: sections
	 * unknown, out of order, or empty where the encoder leaves them out,
	 * a kind it does not write). Encoding ignores it. */
	uint8_t canonical;
	iogp_kind kind;
	uint16_t flags;
	uint64_t source;
	uint64_t seq;

	/* HELLO and SNAPSHOT */
	uint32_t nlabels;
	iogp_label *labels;
	uint32_t nmetrics;
	iogp_metric_def *metrics;

	/* DELTA and SNAPSHOT: interval [t0, t1] on the source's CLOCK_MONOTONIC
	 * (SNAPSHOT: t0 = source start), CLOCK_REALTIME at t1. */
	uint64_t t0_ns, t1_ns, wall_ns;
	uint32_t ncounters;
	iogp_counter_val *counters;
	uint32_t ngauges;
	iogp_gauge_val *gauges;
	uint32_t nhists;
	iogp_hist_val *hists;
	uint32_t nexact;
	iogp_exact_val *exact; /* by id, for histogram metrics */
	uint32_t nfilerecs;
	iogp_filerec *filerecs; /* ascending by (file, layer) */
	uint32_t npeers;
	iogp_peer *peers;      /* MPI sends by destination, ascending by rank */
	uint32_t naccess;
	iogp_access *access;
	uint64_t access_seen;  /* requests the samples were drawn from (reservoir) */
	uint32_t nfiles;
	iogp_file *files;      /* new names (DELTA) or the whole table (SNAPSHOT) */
	uint64_t dropped;      /* messages the source dropped locally, cumulative */

	/* decoder-owned memory; zero-initialise the struct before first use */
	void *arena;
	size_t arena_len, arena_cap;
} iogp_msg;

IOGP_API void iogp_msg_init(iogp_msg *m);
IOGP_API void iogp_msg_free(iogp_msg *m);  /* frees the arena; struct may be reused */

/* Encode m into buf. Returns the encoded length, or IOGP_ELIMIT when it does
 * not fit in cap (call with cap = 0 / buf = NULL to learn the size), or
 * IOGP_EINVAL for an invalid message (unsorted bins, bad kind, a hard limit
 * above exceeded, ...). m->version is ignored; IOGP_WIRE_VERSION is written. */
IOGP_API long iogp_msg_encode(const iogp_msg *m, uint8_t *buf, size_t cap);

/* Decode len bytes into m (previous arena contents are reused/overwritten).
 * Never reads outside [buf, buf+len), never allocates more than a bounded
 * multiple of len (plus at most IOGP_MAX_METRICS metric definitions, each
 * large because of iogp_bins.edges). On failure returns a negative code,
 * leaves m empty (arena kept) and, if err != NULL, writes a one-line
 * description ("hists: bin count 70000 exceeds 65536"). */
IOGP_API int iogp_msg_decode(iogp_msg *m, const uint8_t *buf, size_t len,
                    char *err, size_t errlen);

/* Peek at the fixed header only (for the replay writer and topic building). */
IOGP_API int iogp_msg_peek(const uint8_t *buf, size_t len, iogp_kind *kind,
                  uint16_t *flags, uint64_t *source, uint64_t *seq);

/* ZeroMQ topic for frame 1: "iog1/<kind>/<source id as 16 hex digits>".
 * Returns the length written (excl. NUL), IOGP_ELIMIT if len is too small.
 * Kinds outside 1..4 are named "unknown". */
IOGP_API int iogp_topic(char *buf, size_t len, iogp_kind kind, uint64_t source);
IOGP_API const char *iogp_kind_name(iogp_kind kind);  /* "hello", "delta", ... */

/* Label helpers: value for key or NULL. */
IOGP_API const char *iogp_msg_label(const iogp_msg *m, const char *key);

/* Low-level varint helpers, exposed for tests and the replay index. */
IOGP_API size_t iogp_varint_put(uint8_t *p, uint64_t v);          /* writes <= 10 bytes */
IOGP_API int iogp_varint_get(const uint8_t **p, const uint8_t *end, uint64_t *v);
static inline uint64_t iogp_zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static inline int64_t iogp_unzigzag(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

#endif
