/* agent.h - libiogram internals shared by the core (registry, shards,
 * publisher) and the POSIX interposer. Not installed. */
#ifndef IOG_AGENT_H
#define IOG_AGENT_H

#include <stdint.h>
#include <sys/types.h>

#include "iogram.h"
#include "iogp_hist.h"

/* Shared with libiogram-posix (another shared object) and the tests: these
 * internals stay visible although the library hides everything else. */
#pragma GCC visibility push(default)

#define IOG_MAX_METRICS 256
#define IOG_ACCESS_RESERVOIR 256   /* samples per shard per interval */
#define IOG_NATIVE_K 4

struct iog_metric {
	uint32_t slot;          /* index into shard arrays, also the wire metric id */
	int kind;               /* iogp_metric_kind */
	iog_engine engine;
	iogp_bins bins;         /* as announced (LEARNING: FIXED once learned) */
	uint32_t nbuckets;      /* dense array length per shard */
	int fast;               /* NATIVE, k = IOG_NATIVE_K: recorded inline */
	int exact;              /* common values kept exactly (iog__size_record) */
	volatile int ready;     /* LEARNING: 1 once bins are set */
	char name[128];
	char unit[32];
};

typedef struct iog_access_sample {
	uint64_t t_ns, file, offset, size;
	uint32_t op, metric;
} iog_access_sample;

/* Common request sizes, exactly: per thread and size histogram, a table of
 * IOG_SIZES_SLOTS (value, count) places, filled by first use (a multiplicative
 * hash of the value picks the place, its neighbour is the second try). A
 * request whose size holds a place is counted there only; one that finds
 * both taken goes to the histogram as before. The publisher reads the counts
 * (cumulative, diffed like the histograms), puts every one into the
 * interval's histogram and sends the most common as exact values, so a bin
 * holding only tracked sizes is explained exactly (iogp_hist.h).
 * Places are claimed for good within a generation; when sizes keep missing,
 * the publisher starts a new generation (iog__sizes_gen) and threads move to
 * the other table, emptying it first: the publisher has read its old counts
 * for many intervals before that. */
#define IOG_SIZES_SLOTS 32
#define IOG_SIZES_RESET UINT32_MAX   /* a table's gen while its thread empties it */
struct iog_size_ent {
	uint64_t v, n;
};
typedef struct iog_sizes {
	struct iog_size_tab {
		uint32_t gen;                   /* generation it counts for */
		uint32_t miss;                  /* sizes that found no place */
		struct iog_size_ent e[IOG_SIZES_SLOTS];
	} t[2];
	/* the publisher's: counts last read, and of which generation */
	uint64_t seen[2][IOG_SIZES_SLOTS];
	uint32_t seen_gen[2], seen_miss[2];
} iog_sizes;
extern uint32_t iog__sizes_gen;

/* Per-file records (Darshan's per-file counters, streamed; iogp_filerec):
 * the file table gives each file a small index at open (its place in the
 * table; past IOGRAM_MAX_FILES, default 1024, all go to one "other files"
 * record and are counted). Each thread counts into its own records, in
 * chunks of IOG_FREC_CHUNK files allocated when it first touches one, with
 * plain stores (no lock, no lookup: the index travels in the descriptor's
 * entry); the publisher sums the threads' records.
 * A DELTA carries at most iog__frec_budget records (IOGRAM_FILE_BUDGET,
 * default IOG_FREC_BUDGET; 0: no budget), those whose change is largest
 * times the intervals it has waited (so a file that waits rises), and
 * every one that has waited IOG_FREC_MAX_WAIT intervals: a file's record
 * lags at most that (30 s at the default interval), and what waits
 * coalesces (the publisher keeps what it sent, cumulative, so the next
 * increment carries everything since: a phase then spans the waiting
 * intervals). iog_flush(), and the DELTA before every SNAPSHOT (periodic,
 * a new subscriber's, the final one at exit), send every record that
 * waits, so the DELTAs alone add up to every total (live windows, phases)
 * and each SNAPSHOT carries every file's exact totals. Counters never
 * wait; histograms may (publisher.c, HIST_MAX_WAIT). */
#define IOG_FREC_CHUNK 16
#define IOG_FREC_LAYERS 3            /* IOGP_FR_POSIX, IOGP_FR_STDIO, IOGP_FR_MPIIO */
#define IOG_FREC_MAX 8192            /* the most IOGRAM_MAX_FILES may ask for */
#define IOG_FREC_CHUNKS ((IOG_FREC_MAX + 1 + IOG_FREC_CHUNK - 1) / IOG_FREC_CHUNK)
#define IOG_FREC_NONE UINT32_MAX      /* a descriptor without a file record */
#define IOG_FREC_BUDGET 8             /* records a DELTA carries, at most ... */
#define IOG_FREC_MAX_WAIT 30          /* ... but every one that waited this many intervals */
typedef struct iog_frec_op {
	uint64_t ops, bytes, time_ns, spat[3], max_req, first_ns, last_ns;
	uint64_t iv, iv_first;           /* the interval last touched, its first call */
} iog_frec_op;
typedef struct iog_frec {
	iog_frec_op op[2];
	uint64_t meta_ops, meta_ns;
} iog_frec;
typedef struct iog_frec_chunk {
	iog_frec r[IOG_FREC_CHUNK][IOG_FREC_LAYERS];
} iog_frec_chunk;
extern uint32_t iog__frec_limit;     /* IOGRAM_MAX_FILES: index limit = the other record */
extern uint32_t iog__frec_budget;    /* IOGRAM_FILE_BUDGET: records a DELTA carries (0: all) */
/* IOGRAM_DIR_FILES, default 16 (0: off): a directory's first files with
 * a record of their own; every further new file there folds into the
 * directory's record, "<dir>/\*" (IOGP_FR_DIRAGG, counting the files). */
extern uint32_t iog__dir_files;

/* One per thread, never freed (a dead thread's shard is reused by a new one:
 * counts are cumulative, so nothing is lost). Only its thread writes it;
 * the publisher reads it with relaxed loads (no atomic RMW anywhere). */
typedef struct iog_shard {
	uint64_t counters[IOG_MAX_METRICS];
	uint32_t *hist[IOG_MAX_METRICS];   /* lazily allocated, nbuckets each;
	                                    * u32 wraps, the publisher diffs mod 2^32 */
	iog_sizes *sizes[IOG_MAX_METRICS]; /* exact metrics: lazily allocated */
	iog_frec_chunk *fr[IOG_FREC_CHUNKS]; /* per-file records: lazily allocated */
	struct iog_peer_ent *peers;          /* MPI sends by destination (peers.h) */
	int64_t gauge[IOG_MAX_METRICS];
	uint64_t gauge_t[IOG_MAX_METRICS];  /* time of set: the latest across threads wins */
	/* access reservoir, double-buffered by interval parity */
	struct {
		uint64_t interval;
		uint64_t seen;
		uint64_t rng;
		uint64_t next;   /* Algorithm L: the next access that replaces a sample */
		double w;
		iog_access_sample s[IOG_ACCESS_RESERVOIR];
	} acc[2];
	struct iog_shard *next;
	int in_use;
} iog_shard;

/* initial-exec: one %fs-relative load on the record path, no __tls_get_addr
 * (libiogram is linked or preloaded, so its TLS is in the static block). */
extern __thread iog_shard *iog__tls_shard __attribute__((tls_model("initial-exec")));
extern __thread int iog__tls_in_agent __attribute__((tls_model("initial-exec")));   /* 1 on agent threads: never count */
extern int iog__enabled;                 /* 0: disabled (env or failure) */
extern uint64_t iog__interval;           /* access reservoir epoch */

iog_shard *iog__shard_slow(void);        /* allocate/claim this thread's shard */

static inline iog_shard *iog__shard(void)
{
	iog_shard *s = iog__tls_shard;
	return __builtin_expect(s != NULL, 1) ? s : iog__shard_slow();
}

/* Record path helpers (the interposer uses these with its own metrics). */
void iog__hist_record_slow(iog_shard *s, iog_metric *m, uint64_t v, uint64_t n);

static inline void iog__hist_record(iog_metric *m, uint64_t v)
{
	iog_shard *s = iog__shard();
	uint32_t *c = s ? s->hist[m->slot] : NULL;
	if (__builtin_expect(c != NULL && m->fast, 1))
		c[iogp_native_index(v, IOG_NATIVE_K)]++;
	else if (s)
		iog__hist_record_slow(s, m, v, 1);
}

/* A size: its place in the thread's table, else the histogram. */
void iog__size_slow(iog_shard *s, iog_metric *m, uint64_t v);

static inline uint32_t iog__size_place(uint64_t v)
{
	return (uint32_t)((v * 0x9E3779B97F4A7C15ull) >> 59);   /* 32 places */
}

static inline void iog__size_record(iog_shard *s, iog_metric *m, uint32_t slot, uint64_t v)
{
	iog_sizes *z = s->sizes[slot];

	if (__builtin_expect(z != NULL, 1)) {
		uint32_t g = __atomic_load_n(&iog__sizes_gen, __ATOMIC_RELAXED);
		struct iog_size_tab *t = &z->t[g & 1];
		struct iog_size_ent *e = &t->e[iog__size_place(v)];

		if (__builtin_expect(t->gen == g && e->v == v && e->n != 0, 1)) {
			e->n++;
			return;
		}
	}
	iog__size_slow(s, m, v);
}

/* The thread's record of file index ix (< iog__frec_limit, or the limit:
 * other files) in a layer; NULL when it cannot have one. */
iog_frec *iog__frec_slow(iog_shard *s, uint32_t ix, int layer);

static inline iog_frec *iog__frec(iog_shard *s, uint32_t ix, int layer)
{
	iog_frec_chunk *c;

	if (__builtin_expect(ix / IOG_FREC_CHUNK < IOG_FREC_CHUNKS &&
	                     (c = s->fr[ix / IOG_FREC_CHUNK]) != NULL, 1))
		return &c->r[ix % IOG_FREC_CHUNK][layer];
	return iog__frec_slow(s, ix, layer);
}

/* A finished data request (ret bytes, >= 0) on file index ix; spat its
 * spatial class (IOG_SPAT_*), -1 when not known. */
static inline void iog__frec_io(iog_shard *s, uint32_t ix, int layer, int op, uint64_t ret,
                                int spat, uint64_t t0, uint64_t t1)
{
	iog_frec *r;

	if (ix == IOG_FREC_NONE || (r = iog__frec(s, ix, layer)) == NULL)
		return;
	iog_frec_op *o = &r->op[op];
	uint64_t iv = __atomic_load_n(&iog__interval, __ATOMIC_RELAXED);
	o->ops++;
	o->bytes += ret;
	o->time_ns += t1 - t0;
	if (spat >= 0)
		o->spat[spat]++;
	if (ret > o->max_req)
		o->max_req = ret;
	if (o->first_ns == 0)
		o->first_ns = t0;
	if (o->iv != iv) {
		o->iv_first = t0;
		o->iv = iv;
	}
	o->last_ns = t1;
}

static inline void iog__frec_meta(iog_shard *s, uint32_t ix, int layer, uint64_t t0, uint64_t t1)
{
	iog_frec *r;

	if (ix == IOG_FREC_NONE || (r = iog__frec(s, ix, layer)) == NULL)
		return;
	r->meta_ops++;
	r->meta_ns += t1 - t0;
}

static inline void iog__counter_add(iog_metric *m, uint64_t n)
{
	iog_shard *s = iog__shard();
	if (__builtin_expect(s != NULL, 1))
		s->counters[m->slot] += n;
}

/* fdguard.c: the agent's descriptors, in a band just below
 * min(soft RLIMIT_NOFILE, IOG_FD_TOP), hidden from the host. */
#define IOG_FD_BAND 64
#define IOG_FD_TOP 1024
#define IOG_FD_MIN_LIMIT 256   /* below this soft limit the agent stays off */
extern int iog__fdg_lo;
extern uint64_t iog__fdg_owned;
static inline int iog__fdg_owned_fd(int fd)
{
	unsigned i = (unsigned)(fd - __atomic_load_n(&iog__fdg_lo, __ATOMIC_RELAXED));
	return i < IOG_FD_BAND && (__atomic_load_n(&iog__fdg_owned, __ATOMIC_RELAXED) >> i) & 1;
}
extern int iog__fdg_private;
int iog__fdg_private_enter(int keep);  /* agent thread: own table but keep; 0 or -1 */
int iog__fdg_setup(void);      /* 0, or -1: too few descriptors, stay off */
int iog__fdg_adopt(int fd);    /* move fd into the band; -1 (EMFILE, fd closed) if full */
void iog__fdg_forget(int fd);  /* the agent closes it */
int iog__fdg_count(void);
void iog__fdg_child(void);     /* fork child: close the parent's */

/* 1 on the publisher and libzmq's threads only (never on a host thread):
 * an abort() there parks the thread and disables the agent. */
extern __thread int iog__tls_agent_thread __attribute__((tls_model("initial-exec")));
void iog__fault(void);         /* internal failure on an agent thread: off for good */
void iog__surrender(void);     /* the host needs the agent's descriptors: stop now */

void iog__access(iog_metric *m, uint64_t file, int op, uint64_t offset, uint64_t size, uint64_t t_ns);

/* Start the agent (config from the environment) if not yet started. Safe to
 * call often; cheap after the first call. Returns 0 when enabled. */
int iog__ensure_started(void);

/* Clock: TSC-based when invariant, else CLOCK_MONOTONIC. */
uint64_t iog__now_ns(void);

/* File table: id for a path (hash of the path, announced once). */
uint64_t iog__file_id(const char *path);
/* The same, and the file's record index (IOG_FREC_NONE if it has none:
 * the table is full; the limit itself: beyond IOGRAM_MAX_FILES). */
uint64_t iog__file_id_ix(const char *path, uint32_t *ix);
/* The id of the file with record index ix (0: none yet). */
uint64_t iog__file_at(uint32_t ix);
/* The files folded into record ix when it is a directory's (0: none). */
uint64_t iog__file_folded(uint32_t ix);
/* Files past the record limit, and those the table could not take. */
uint64_t iog__file_overflow(void);

/* config.c: which descriptors the interposer counts as storage, from
 * IOGRAM_ALL_FILES and path prefixes: the system's /proc, /sys and /dev,
 * IOGRAM_EXCLUDE_DIRS and IOGRAM_INCLUDE_DIRS (':'-separated absolute
 * directories, whole path components). The longest matching prefix decides;
 * a tie goes to the exclusion, then the inclusion. */
enum { IOG_DIR_NONE, IOG_DIR_SYSTEM, IOG_DIR_INCLUDE, IOG_DIR_EXCLUDE };
#define IOG_SCOPE_DIRS 64
typedef struct iog__scope {
	int all_files;         /* IOGRAM_ALL_FILES=1: everything counts as storage */
	uint32_t n, user;      /* directories; how many the user gave */
	struct iog__scope_dir {
		const char *path;  /* into buf, without trailing slashes */
		size_t len;
		int kind;          /* IOG_DIR_* */
	} dir[IOG_SCOPE_DIRS];
	size_t used;
	char buf[8192];
} iog__scope;
void iog__scope_load(iog__scope *s);                      /* from the environment */
int iog__scope_match(const iog__scope *s, const char *path);  /* IOG_DIR_* of an absolute path */

/* Lifecycle hooks for the interposer. */
void iog__before_exec(void);   /* final SNAPSHOT + BYE, bounded wait */
void iog__at_exit(void);       /* same, for exit()/_exit(); starts no thread (signal handlers call it) */
/* The host is about to change its credentials (setuid and kin, capset):
 * the finals go out and the agent is off for the rest of this process
 * (posix_cred.c says why). */
void iog__creds_changing(void);

/* ---- core internals (registry, shards, clock, config, publisher) -------
 * Not used by the interposer. */
#include "iogp_wire.h"

#define IOG_MAX_FILES 65536          /* file table entries */
#define IOG_MAX_FILE_BYTES (2u << 20) /* file table path bytes (a SNAPSHOT carries them all) */
#define IOG_ACCESS_OUT 256           /* access samples per DELTA, at most (publisher.c budgets them) */
#define IOG_MAX_BINS 65536           /* FIXED / LEARNING nbins */
#define IOG_MAX_LEARN (1u << 20)

/* config.c: iog_init() over the environment over defaults */
struct iog__cfg {
	char endpoint[1024];   /* "" = no live stream */
	char output[4096];     /* replay file template ("" = none) */
	uint32_t interval_ms;
	char node[256];        /* "" = hostname */
	int disable;
	char spool[1024];      /* finals that could not be delivered in time */
	int paths;             /* IOG_PATHS_*: file names in the stream */
	uint32_t exit_wait_ms; /* at exit, for a listener that accepted us */
	uint32_t max_files;    /* IOGRAM_MAX_FILES: files with their own record */
	uint32_t file_budget;  /* IOGRAM_FILE_BUDGET: file records a DELTA carries (0: all) */
	uint32_t dir_files;    /* IOGRAM_DIR_FILES: a directory's files with their own record */
};
void iog__config_load(struct iog__cfg *c);
/* Output template expanded: %p pid, %h host, %% a percent sign. */
int iog__config_expand(char *dst, size_t len, const char *tmpl, const char *host, long pid);

/* registry.c */
enum { IOG_PATHS_FULL, IOG_PATHS_BASENAME, IOG_PATHS_HASH };
extern int iog__paths_mode;
extern iog_metric *iog__metrics[IOG_MAX_METRICS];
extern uint32_t iog__nmetrics;       /* release-stored after the slot is filled */
extern uint32_t iog__catalog_gen;    /* bumped when the catalog or labels change */
int iog__labels_init(const char *node, uint64_t start_wall_ns);
void iog__labels_set_pid(long pid, uint64_t start_wall_ns);
const char *iog__label_host(void);
/* Copies the labels into lab/buf; returns their number or IOG_ELIMIT when buf is short. */
int iog__labels_copy(iogp_label *lab, uint32_t max, char *buf, size_t cap);
uint64_t iog__dense_base(const iog_metric *m);   /* wire bin index of dense bucket 0 */
uint32_t iog__dense_index(const iog_metric *m, uint64_t v);
void iog__learn_record(iog_shard *s, iog_metric *m, uint64_t v, uint64_t n);
void iog__learn_finish_all(void);  /* give learning metrics a scheme from what they have */
/* Files for a message (registry.c): want != NULL, the names of the ids in
 * want not sent before (then marked sent); NULL, every name sent so far.
 * Fills *arr (grown as needed), returns the count or a negative error. */
int iog__files_copy(const uint64_t *want, uint32_t nwant, iogp_file **arr, uint32_t *cap);
void iog__registry_prepare(void);
void iog__registry_parent(void);
void iog__registry_child(void);
void iog__metrics_disable(void);

/* spool.c: final messages (a source's last DELTA, FINAL SNAPSHOT, BYE) that
 * could not be sent within the exit budget are left in the user's spool
 * directory as one file of [u32 length][message]...; any of the user's
 * agents that has a subscriber sends them on (an exec'd image first). */
#define IOG_SPOOL_MAX_FILE (8u << 20)
#define IOG_SPOOL_MAX_FILES 1024
#define IOG_SPOOL_MAX_AGE_S 600   /* older finals are dropped unsent */
int iog__spool_write(const char *dir, uint64_t source, const uint8_t *buf, size_t len);
typedef void (*iog__spool_fn)(const uint8_t *msg, size_t len, void *arg);
/* Sends (through fn) and removes at most max_files spooled files; returns
 * how many messages were passed on. */
int iog__spool_drain(const char *dir, int max_files, iog__spool_fn fn, void *arg);

/* shard.c */
iog_shard *iog__shards(void);      /* head of the list of every shard */
void iog__shards_child(void);      /* fork child: zero every shard, free the others' */
void iog__shard_stats(uint32_t *n, uint32_t *in_use);

/* clock.c */
void iog__clock_start(void);                  /* publisher: check the CPU, first sample */
void iog__clock_tick(uint64_t interval_ns);   /* publisher: calibrate / re-anchor */
int iog__clock_tsc(void);                     /* 1 when the TSC drives iog__now_ns */
uint64_t iog__mono_ns(void);
uint64_t iog__wall_ns(void);

/* publisher.c */
void iog__disable(void);           /* internal failure: stop recording, quietly */
int iog__started(void);            /* 1 once the agent has started (iog_init is too late) */
uint64_t iog__source_id(void);

#pragma GCC visibility pop

#endif
