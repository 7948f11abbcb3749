/* iogp_model.h - the stream model: per-source state rebuilt from decoded
 * messages (live or replayed) and the query API the viewers and exporters use.
 * The viewers know this API, never the codec. */
#ifndef IOGP_MODEL_H
#define IOGP_MODEL_H

#include "iogp_api.h"

#include <stddef.h>
#include <stdint.h>

#include "iogp_hist.h"
#include "iogp_wire.h"

typedef struct iogp_model iogp_model;

#define IOGP_MODEL_MAX_RATES 12

/* All fields 0 = default; fields added here keep 0 meaning "as before". */
typedef struct iogp_model_opts {
	uint32_t max_sources;     /* 0 = 100000; further sources are refused and counted */
	uint32_t access_ring;     /* access samples kept per source, 0 = 4096 */
	uint64_t max_bytes;       /* what all sources may hold (estimated as encoded),
	                           * 0 = 512 MiB; beyond it additions are refused and
	                           * counted. Each source also stays within what one
	                           * SNAPSHOT can carry, so keyframes stay complete. */

	/* Live side: rate rings and "last N seconds" histograms. Off unless
	 * live = 1 (viewers set it; the recorder, export and info leave it off:
	 * apply then costs and holds exactly what it did before). */
	uint32_t live;
	uint32_t nrates;          /* 0 = the four defaults below */
	const char *rates[IOGP_MODEL_MAX_RATES]; /* counter (or histogram: events/s)
	                           * names; copied. Default posix.read.bytes,
	                           * posix.write.bytes, posix.read.ops, posix.write.ops */
	uint64_t bin_ns;          /* rate bin width, 0 = 1 s; bins are aligned to
	                           * multiples of bin_ns on wall time; min 1 ms */
	uint32_t ring_bins;       /* bins kept per node and all, 0 = 300, max 86400 */
	uint32_t source_ring_bins; /* bins kept per source, 0 = ring_bins (at most it): a
	                           * viewer following thousands of sources keeps each
	                           * one's recent rates, the nodes' long history */
	uint64_t rate_total;      /* all sources' rate rings, 0 = no limit: with it a
	                           * source's ring keeps fewer bins (at least 64) as
	                           * sources grow, the newest; iogp_model_rate_span */
	uint64_t window_slot_ns;  /* histogram window granularity, 0 = 5 s, min 1 ms */
	uint64_t window_max_ns;   /* longest window, 0 = 60 s, at most 1024 slots */
	uint32_t window_bytes;    /* window storage per source, 0 = 24576, min 1024 */
	uint64_t window_total;    /* every window ring's storage, 0 = no limit but
	                           * window_bytes each: the node sums' rings take at
	                           * most half (2 KiB to 256 KiB a ring), each source
	                           * what the nodes leave / sources (at most
	                           * window_bytes), so memory stays bounded as sources
	                           * grow and older window slots go first; a source
	                           * whose share is under 512 B a histogram keeps no
	                           * ring (iogp_model_source_window_bytes) */

	/* Lifecycle (always on; time-based states need iogp_model_tick). */
	uint32_t quiet_intervals; /* 0 = 3 */
	uint64_t gone_ns;         /* 0 = 30 s */

	/* Access samples over the whole run (live only, iogp_model_access_query). */
	uint32_t access_keep;     /* samples kept per source, 0 = 8192, min 128 */
	uint64_t access_total;    /* samples all sources keep, ring and run together,
	                           * 0 = no limit: with it each source gets the
	                           * bytes of access_total / sources samples of 32
	                           * bytes, all told: half for its ring (48-byte
	                           * entries, at least 16), half over the run (at
	                           * most access_total / sources / 2 samples), so
	                           * memory stays bounded as sources grow. A ring
	                           * grows as samples come, up to its share; under
	                           * a share of 8 KB there is none (its half goes
	                           * unused: at 50,000 sources 1.3 KB a source). */

	uint32_t no_phases;       /* 1: DELTAs' file records open no activity runs
	                           * (iogp_model_phases is empty); the recorder's
	                           * keyframes do not hold them */
	uint32_t no_access;       /* 1: access samples are checked but not kept
	                           * (iogp_model_access is empty; access_seen still
	                           * adds up): keyframes leave them out */
} iogp_model_opts;

IOGP_API iogp_model *iogp_model_new(const iogp_model_opts *opts);  /* NULL on ENOMEM */
IOGP_API void iogp_model_free(iogp_model *m);
/* A number no other model of this process had: a model is known by it, not
 * by its address, which a model made after another's free may take (a
 * replay's seek). 0 for NULL. */
IOGP_API uint64_t iogp_model_serial(const iogp_model *m);

/* Apply a decoded message received at recv_ns (any clock the caller uses
 * consistently: replay receive time, or CLOCK_REALTIME live).
 * Rules:
 *  - HELLO: create/refresh the source's labels and catalog (metrics may be
 *    added later by another HELLO; an id keeps its definition).
 *  - SNAPSHOT: labels + catalog + files + full cumulative state; replaces the
 *    source's totals, so they are exact again after any gap (resync).
 *  - DELTA: seq == last+1 applies; seq > last+1 counts (seq-last-1) gaps,
 *    applies, and marks the source out of sync until the next SNAPSHOT;
 *    seq <= last is a duplicate/reorder and is ignored (counted). A DELTA
 *    from an unknown source, or naming an unknown metric id, returns
 *    IOGP_EUNKNOWN (counted; a later SNAPSHOT brings the source in).
 *  - BYE: marks the source gone.
 *  Gauges take the latest value. Access samples go to a bounded ring (and,
 *  live, to the per-file samples of iogp_model_access_query).
 *  Every kind may take a sequence number: any seq > last+1 counts the numbers
 *  in between as gaps (a SNAPSHOT still resyncs). A SNAPSHOT with seq < last
 *  is stale and ignored (counted as a duplicate); seq == last applies (a
 *  keyframe). A rejected message changes nothing (its seq later shows as a
 *  gap). A message breaking the wire limits, with unsorted bins, bins outside
 *  the scheme or a value of the wrong kind for its id is IOGP_EINVAL/ELIMIT
 *  (counted in bad_messages); a new source past max_sources is IOGP_ELIMIT
 *  (counted in refused_sources, per message); kinds from a newer version
 *  are skipped (returns 0). The caps are the exception to "changes nothing":
 *  a message whose histogram bins, metric definitions or files would take a
 *  source past what one SNAPSHOT carries (or the model past max_bytes) is
 *  applied without them, counted in refused, leaves the source out of sync
 *  and returns IOGP_ELIMIT. A forward sequence jump proven false by a later
 *  message is undone (counted in seq_spoofs). */
IOGP_API int iogp_model_apply(iogp_model *m, const iogp_msg *msg, uint64_t recv_ns);
/* Decode with the model's own scratch message, then apply. Decode errors are
 * counted (iogp_model_stats.bad_messages) and returned. */
IOGP_API int iogp_model_feed(iogp_model *m, const void *payload, size_t len, uint64_t recv_ns);
/* A hint, no effect on any result: source's slots and their map toward the
 * cache, for a caller with other work to do (decoding its DELTA) before it
 * applies a message of it. */
IOGP_API void iogp_model_prefetch(const iogp_model *m, uint64_t source);
/* iogp_model_feed of n payloads in order, all received at recv_ns, with the
 * same result; faster when sources are many: the state each message touches
 * is fetched from memory for several messages at once, before they are
 * applied (model_batch.c). Returns how many were applied without error. */
IOGP_API size_t iogp_model_feed_many(iogp_model *m, const void *const *payload, const size_t *len,
                                     size_t n, uint64_t recv_ns);

/* Work a query would do first, done ahead in slices while a viewer idles:
 * the logged histogram bins (model_agg.c) of the next `nodes` nodes applied
 * to their sums, round robin, so that the first query over all nodes (the
 * nodes table) does not wait for them. Changes no answer. Returns how many
 * of those nodes had bins logged (0 for NULL). */
IOGP_API size_t iogp_model_settle(iogp_model *m, size_t nodes);
/* Nodes whose logs hold bins not yet in their sums, of any metric (0 for
 * NULL). */
IOGP_API size_t iogp_model_unsettled(const iogp_model *m);
/* on: queries over a node read its sums as they stand, without applying
 * its log first, so they may lack its newest DELTAs' histogram bins (at
 * most a log's worth: what arrived since the node was last settled). For
 * a frame that must not wait (iogp_node_table's settle_ns); off again
 * (the default) for exact answers. */
IOGP_API void iogp_model_read_unsettled(iogp_model *m, int on);
/* Whether it is on. */
IOGP_API int iogp_model_reads_unsettled(const iogp_model *m);

/* NEW and QUIET, and GONE by silence, are judged against the clock given to
 * iogp_model_tick (the recv_ns clock); a model never ticked reports only
 * LIVE and GONE (BYE, FINAL snapshot, or replaced by a restart). */
typedef enum iogp_source_state {
	IOGP_SRC_LIVE = 0,
	IOGP_SRC_GONE = 1,   /* BYE or FINAL snapshot seen (until a message
	                      * numbered after it), restarted under a new id, or
	                      * no message for opts.gone_ns */
	IOGP_SRC_NEW = 2,    /* first message less than its quiet period ago */
	IOGP_SRC_QUIET = 3,  /* no message for quiet_intervals x its interval */
} iogp_source_state;

typedef struct iogp_source_info {
	uint64_t id;
	const char *host;    /* label "host" or "" */
	const char *node;    /* = host label; per-node views group by it */
	int64_t pid, rank;   /* -1 when unknown */
	iogp_source_state state;
	int in_sync;         /* 0 after a gap until the next SNAPSHOT */
	uint64_t last_seq;
	uint64_t messages;   /* applied */
	uint64_t gaps;       /* sequence numbers missed */
	uint64_t dropped;    /* as reported by the source (cumulative) */
	uint64_t first_recv_ns, last_recv_ns;
	uint64_t first_wall_ns, last_wall_ns;   /* source CLOCK_REALTIME at t1 */
	uint64_t start_mono_ns, last_mono_ns;   /* source CLOCK_MONOTONIC */
	int bye;             /* gone by its own word (BYE / FINAL) */
	uint64_t interval_ns;  /* observed DELTA interval (moving average), 0 = none yet */
	/* Restart: a new id whose labels host+pid+exe, or host+rank+job, match a
	 * source that was gone or quiet when the new one announced its labels.
	 * The old one then reports GONE (until it speaks again). */
	int64_t restart_of;    /* source index of the one this restarts, -1 = none */
	int64_t restarted_by;  /* source index of its restart, -1 = none */
	uint64_t restart_of_id, restarted_by_id;  /* their ids, 0 = none */
	size_t node_index;     /* its node: iogp_model_node(m, node_index) is node */
} iogp_source_info;

IOGP_API size_t iogp_model_source_count(const iogp_model *m);
/* i in [0, count): stable order of first appearance. */
IOGP_API int iogp_model_source(const iogp_model *m, size_t i, iogp_source_info *out);
IOGP_API int iogp_model_source_index(const iogp_model *m, uint64_t id, size_t *i);
/* Label value of source i, or NULL. */
IOGP_API const char *iogp_model_source_label(const iogp_model *m, size_t i, const char *key);
IOGP_API size_t iogp_model_source_labels(const iogp_model *m, size_t i, const iogp_label **labels);
/* Behind an aggregating relay (`iogram relay --aggregate node|job
 * --summaries`) a group's sum comes as one source (label "aggregate") and
 * each member's summary under the member's own id (label "summary"). Into
 * roles[0..count-1]: IOGP_ROLE_PLAIN, IOGP_ROLE_SUMMARY, IOGP_ROLE_AGGREGATE,
 * or IOGP_ROLE_SUMMARISED: an aggregate whose members' summaries are here
 * too (a node aggregate with a summary on its node, a job aggregate with a
 * summary of its job), so per-source views show the summaries instead.
 * O(sources). 0, IOGP_EINVAL or IOGP_ENOMEM. */
enum { IOGP_ROLE_PLAIN = 0, IOGP_ROLE_SUMMARY, IOGP_ROLE_AGGREGATE, IOGP_ROLE_SUMMARISED };
IOGP_API int iogp_model_source_roles(const iogp_model *m, uint8_t *roles);
/* Every source's node and times, as iogp_model_source gives them, and
 * its role by its own labels (PLAIN, SUMMARY or AGGREGATE: whether an
 * aggregate is SUMMARISED takes iogp_model_source_roles), into
 * out[0..count-1] in one pass: no state judged, no labels read (a nodes
 * table at 50,000 sources spent half its build in iogp_model_source).
 * *relayed (may be NULL): 1 when an aggregate and a summary are both
 * here, so that iogp_model_source_roles would say more. 0 or IOGP_EINVAL. */
typedef struct iogp_source_span {
	uint64_t last_wall_ns, start_mono_ns, last_mono_ns;
	size_t node_index;
	uint8_t role;
} iogp_source_span;
IOGP_API int iogp_model_source_spans(const iogp_model *m, iogp_source_span *out, int *relayed);
/* A summary's metrics (cli/relay_agg.h), from the member's POSIX layer:
 * counters since its first summary, and the gauge: the p99 (ns) of its
 * reads and writes in the relay's last interval. */
#define IOGP_M_SUMMARY_READ_BYTES "summary.read.bytes"
#define IOGP_M_SUMMARY_WRITE_BYTES "summary.write.bytes"
#define IOGP_M_SUMMARY_OPS "summary.ops"           /* reads + writes */
#define IOGP_M_SUMMARY_IO_TIME "summary.io_time"   /* ns in read, write and meta calls */
#define IOGP_M_SUMMARY_P99 "summary.latency.p99"

/* Nodes: distinct node names in order of first appearance. */
IOGP_API size_t iogp_model_node_count(const iogp_model *m);
IOGP_API const char *iogp_model_node(const iogp_model *m, size_t i);

/* Metrics: union of all sources' catalogs by name, order of first appearance.
 * Metrics with the same name must have the same kind; histograms with
 * different schemes under one name are kept per source and only merged where
 * schemes are equal (queries return IOGP_ESCHEME otherwise). */
typedef struct iogp_metric_info {
	const char *name;
	const char *unit;
	iogp_metric_kind kind;
	iogp_bins bins;      /* HISTOGRAM: scheme of the first source that had it */
} iogp_metric_info;
IOGP_API size_t iogp_model_metric_count(const iogp_model *m);
IOGP_API int iogp_model_metric(const iogp_model *m, size_t i, iogp_metric_info *out);
IOGP_API int iogp_model_metric_find(const iogp_model *m, const char *name, size_t *i);

/* Selection for queries. */
typedef enum iogp_sel_kind { IOGP_SEL_ALL = 0, IOGP_SEL_NODE = 1, IOGP_SEL_SOURCE = 2 } iogp_sel_kind;
typedef struct iogp_sel {
	iogp_sel_kind kind;
	const char *node;    /* IOGP_SEL_NODE */
	uint64_t source;     /* IOGP_SEL_SOURCE */
} iogp_sel;

/* Cumulative histogram of a metric over the selection into out (initialised
 * by the call; free with iogp_hist_free). IOGP_ENOTFOUND if no such metric,
 * node or source. out is initialised on every return, errors included; on
 * IOGP_ESCHEME it holds the merge of the sources whose scheme equals the
 * first one found. A selected source without the metric adds nothing; a
 * NULL sel means IOGP_SEL_ALL. IOGP_EINVAL for a metric of another kind. */
IOGP_API int iogp_model_hist(const iogp_model *m, const char *metric, const iogp_sel *sel, iogp_hist *out);
/* Sum of a counter (cumulative) or of the latest gauge values. */
IOGP_API int iogp_model_counter(const iogp_model *m, const char *metric, const iogp_sel *sel, uint64_t *out);
IOGP_API int iogp_model_gauge(const iogp_model *m, const char *metric, const iogp_sel *sel, int64_t *out);
/* Per source, by index, for the count sources from first (out has room
 * for count; first + count <= iogp_model_source_count, else IOGP_EINVAL):
 * what iogp_model_counter, and iogp_hist_sum of what iogp_model_hist, give
 * for that source alone; 0 for a source without the metric. One pass over
 * the sources instead of a query each (the findings' per-source rules at
 * tens of thousands of sources, in slices). IOGP_ENOTFOUND / IOGP_EINVAL
 * as those. */
IOGP_API int iogp_model_counter_each(const iogp_model *m, const char *metric, size_t first,
                                     size_t count, uint64_t *out);
IOGP_API int iogp_model_hist_sum_each(const iogp_model *m, const char *metric, size_t first,
                                      size_t count, double *out);
/* The same over up to 8 histograms at once, each source's sums added in
 * their order (one pass: a source's slots looked up together; every
 * source's I/O time, its read, write and metadata latencies, for a table
 * of 50,000 ranks). Metrics the model does not have (or NULL) add
 * nothing; IOGP_ENOTFOUND when it has none of them, IOGP_EINVAL when one
 * of them is of another kind and none is a histogram, or for more than 8;
 * IOGP_ENOMEM. */
IOGP_API int iogp_model_hist_sums_each(const iogp_model *m, const char *const *metrics,
                                       size_t nmetrics, size_t first, size_t count, double *out);

/* Access samples kept for source i (oldest first), and its file table.
 * A live model with access_total keeps none where a source's share is
 * under 8 KB (past ~16,000 sources at iogram-top's 4 Mi samples): the
 * viewers draw from the store below. */
IOGP_API size_t iogp_model_access(const iogp_model *m, size_t i, const iogp_access **a, size_t *n2, const iogp_access **a2);
IOGP_API const char *iogp_model_file_path(const iogp_model *m, size_t i, uint64_t file_id);

/* Access samples over the time shown (live on; model_access.c). Besides the
 * ring above, the model keeps per source, access metric and file a sample
 * spread over the whole run: 64 slices of the run and, for the last 300 s,
 * buckets that double in length with age, each at most 64 samples, merged
 * in proportion to the requests each half stands for; a source keeps at
 * most opts.access_keep samples (beyond it the fullest file's buckets are
 * halved) and access_keep / 16 files (beyond them the one with the fewest
 * requests goes): 32 bytes a sample, so at most ~280 KiB per source at the
 * defaults (a busy file alone keeps ~7,000 samples and is not thinned).
 * With opts.access_total a share under 32 KB (thousands of sources) keeps
 * 8 coarse run slices and recent buckets of 8 s and more, a few samples
 * each, and only the files its bytes hold (1 KB each: the first it saw;
 * the others' samples are not kept). Every sample stands for requests: the DELTA's access_seen over
 * its samples (the agent's reservoir is uniform over the interval's
 * requests of every access metric and file).
 *
 * A query returns the samples of the selected sources, metric and file in
 * the wall-time window, thinned so that each stands for the same number of
 * requests (the sparsest bucket's; buckets holding under 1% of the requests
 * do not set it): a sample uniform over the requests of the window, so a
 * busy file's plot covers the whole window, not its last seconds. */
typedef struct iogp_access_query {
	const char *metric;        /* access metric name ("posix.access"); NULL: every one */
	const char *path;          /* one file by path (iogp_model_file_path's; "?" unnamed);
	                            * NULL: every file */
	const iogp_sel *sel;       /* NULL: all sources */
	uint64_t from_ns, to_ns;   /* wall-time window; 0: from the first / up to the last */
	size_t max;                /* at most this many samples, 0 = 100,000 */
	/* NULL, or asked before every IOGP_STOP_EVERY sources the query walks:
	 * non-zero ends it with IOGP_ESTOPPED and nothing out (a viewer gives
	 * up a slow refresh when a key is waiting) */
	int (*stop)(void *arg);
	void *stop_arg;
} iogp_access_query;

#define IOGP_STOP_EVERY 256

typedef struct iogp_access_sample {
	uint64_t wall_ns;          /* the request's wall time (its source's clock) */
	uint64_t offset, size;
	uint64_t file;             /* its source's file id */
	uint32_t op;               /* IOGP_OP_* */
	uint32_t source;           /* iogp_model_source index */
} iogp_access_sample;

typedef struct iogp_access_set {
	iogp_access_sample *s;     /* time order; iogp_access_set_free */
	size_t n;
	uint64_t requests;         /* requests in the window the samples stand for */
	int exact;                 /* requests counted (every DELTA's samples were of
	                            * this file and metric, whole buckets), else estimated */
	uint64_t held;             /* samples the model holds there (n <= held) */
	uint64_t from_ns, to_ns;   /* wall span of those requests, within the window */
} iogp_access_set;

/* IOGP_EINVAL without the live side; IOGP_ENOTFOUND for an unknown metric,
 * node or source; out is emptied on every return. O(buckets of the
 * selection + n log n). */
IOGP_API int iogp_model_access_query(const iogp_model *m, const iogp_access_query *q,
                                     iogp_access_set *out);
IOGP_API void iogp_access_set_free(iogp_access_set *s);

/* Files with samples in the query's window (its path is ignored), merged by
 * path over the sources: requests and bytes as the samples estimate them.
 * Sorted by bytes, most first (ties by path); *out (free()) points into the
 * model: valid until it changes. */
typedef struct iogp_access_file {
	const char *path;
	uint64_t requests, bytes, samples;
	uint32_t sources, first_source;
} iogp_access_file;
IOGP_API int iogp_model_access_files(const iogp_model *m, const iogp_access_query *q,
                                     iogp_access_file **out, size_t *n);

/* What the per-file samples hold over all sources. bytes: all they hold
 * (buckets, tables, malloc's overhead); with access_total a source's
 * bytes + ring bytes stay within access_total x 32 / sources (at least a
 * 16-entry ring and a file's few samples). */
typedef struct iogp_access_mem {
	uint64_t samples, streams, bytes;
	uint64_t ring_bytes;       /* the rings of iogp_model_access (48 B an entry) */
	uint64_t max_source;       /* samples of the fullest source (<= access_keep) */
	uint64_t thinned;          /* samples dropped for access_keep */
	uint64_t evicted;          /* files let go beyond access_keep / 16 per source
	                            * (the fewest requests first) */
} iogp_access_mem;
IOGP_API void iogp_model_access_mem(const iogp_model *m, iogp_access_mem *out);

/* Per-file records (iogp_wire.h, iogp_filerec) of the selected sources,
 * merged by path and layer: a file that many sources (ranks) used is one
 * entry with `sources` > 1 (shared), each source's "other files" record
 * (beyond its file limit) merges into one per layer. layer < 0: every layer.
 * Sorted by bytes moved, most first (ties by path). *out is an array of *n
 * (free with iogp_model_files_free); paths point into the model and stay
 * valid until it changes. Times are each source's CLOCK_MONOTONIC, so first
 * and last compare only within one source. O(records of the selection). */
typedef struct iogp_file_info {
	const char *path;       /* "" for other files, "?" when not yet named */
	uint32_t layer;         /* IOGP_FR_* */
	int other;              /* the sources' records of files beyond their limit */
	uint32_t sources;       /* how many sources used it */
	uint32_t first_source;  /* index of the first one (iogp_model_source) */
	iogp_filerec total;     /* summed; overflow: files beyond the limits (other),
	                         * or folded into a directory's record (IOGP_FR_DIRAGG) */
} iogp_file_info;
IOGP_API int iogp_model_files(const iogp_model *m, const iogp_sel *sel, int layer,
                              iogp_file_info **out, size_t *n);
IOGP_API void iogp_model_files_free(iogp_file_info *f);
/* A per-file record's name as every viewer and `iogram info` show it: the
 * path; a directory's record (IOGP_FR_DIRAGG) with the files it folded,
 * count = total.overflow: "/data/out/\* (1,234 files)"; the other files'
 * record (other): "(other files: 56 beyond the limit)". snprintf's return. */
IOGP_API int iogp_file_label(char *buf, size_t len, const char *path, int other,
                             uint64_t count);

/* I/O phases, live, after SummarIO (I/O forwarding phases report, Appendix
 * A), built from the per-file records of every DELTA:
 *  1. each source's requests to one file through one layer in one
 *     direction form runs of activity (a gap of more than 1 s ends one);
 *  2. runs of the same file, layer and direction from different sources that
 *     overlap or come within `distance` of each other are one phase of a
 *     shared file (ranks: how many sources), its I/O time the longest of
 *     theirs (they ran in parallel);
 *  3. in start order, compatible phases (same layer, direction, spatiality
 *     and fashion) starting within `distance` of a phase's end merge into it
 *     (how file-per-process phases appear: one per rank, then one).
 * Spatiality: consecutive when at least 1 - threshold of the requests were,
 * sequential when consecutive + sequential are, else random; unknown when
 * no request's position was known (stdio streams without one). A phase is
 * open while its end is less than `distance` before the model's clock. */
enum { IOGP_SPAT_CONSECUTIVE = 0, IOGP_SPAT_SEQUENTIAL = 1, IOGP_SPAT_RANDOM = 2,
       IOGP_SPAT_UNKNOWN = 3 };
typedef struct iogp_phase_opts {
	double threshold;        /* 0 = 0.2 */
	uint64_t distance_ns;    /* 0 = 1 s */
	int layer;               /* IOGP_FR_*, -1 every layer */
} iogp_phase_opts;
typedef struct iogp_phase {
	uint64_t start_ns, end_ns;   /* wall time of the first call's start, the last's end */
	int op;                      /* IOGP_OP_READ / IOGP_OP_WRITE */
	uint32_t layer;              /* IOGP_FR_* */
	uint32_t ranks;              /* sources involved */
	int64_t rank;                /* the rank label when one source, else -1 */
	uint32_t first_source;       /* index of one of them (iogp_model_source) */
	uint64_t bytes, requests, io_time_ns, max_req;
	int spatiality;              /* IOGP_SPAT_* */
	uint32_t files;
	int shared;                  /* 1: shared file(s), 0: file per process */
	int open;                    /* still going */
	const char *file;            /* the file when one (model memory), else NULL */
} iogp_phase;
/* Phases sorted by start; *out an array of *n (free()); paths valid until
 * the model changes. Activity runs beyond 200,000 are not kept (counted:
 * *dropped when not NULL). */
IOGP_API int iogp_model_phases(const iogp_model *m, const iogp_phase_opts *o,
                               iogp_phase **out, size_t *n, uint64_t *dropped);
/* The spatiality rule above for counts of one phase. */
IOGP_API int iogp_spatiality(uint64_t ops, uint64_t consec, uint64_t seq, uint64_t random,
                             double threshold);
IOGP_API const char *iogp_spatiality_name(int spatiality);  /* "consecutive", ... */

/* Slowdown probes (live models): sources whose gauges are named
 * probe.OP.{stat,expected,slowdown} (`iogram probe`: the statistic and the
 * expected response time in ns, their ratio in thousandths). Each message
 * that carries any of them is a report; the model keeps the newest 512
 * reports of every operation's factor per probe (at most 1,024 probes,
 * further ones refused and counted). */
#define IOGP_PROBE_MAX_OPS 8
#define IOGP_PROBE_OP_LEN 32
typedef struct iogp_probe {
	uint32_t src;                /* source index (iogp_model_probe_history) */
	uint64_t id;
	const char *node, *dir, *fs; /* labels; "" when absent (model memory) */
	const char *statistic;       /* "median", "p90", ... */
	const char *expected;        /* "median of 14400 s", "baseline FILE" */
	iogp_source_state state;
	uint64_t last_wall, reports; /* newest report's wall time, reports kept or not */
	uint32_t nops;
	const char *op[IOGP_PROBE_MAX_OPS];       /* "read", "write", "create", ... */
	int64_t slowdown_milli[IOGP_PROBE_MAX_OPS];   /* -1: none yet */
	int64_t stat_ns[IOGP_PROBE_MAX_OPS], expected_ns[IOGP_PROBE_MAX_OPS];   /* -1: none */
} iogp_probe;
/* The probes, by node name; fills at most max of out, returns how many
 * there are. O(probes). */
IOGP_API size_t iogp_model_probes(const iogp_model *m, iogp_probe *out, size_t max);
typedef struct iogp_probe_point {
	uint64_t wall_ns;
	int32_t milli[IOGP_PROBE_MAX_OPS];   /* each op's factor from then on; -1 none */
} iogp_probe_point;
/* Probe src's reports from since_wall on (and the one before, whose values
 * hold into the span), oldest first, at most the newest max. */
IOGP_API size_t iogp_model_probe_history(const iogp_model *m, uint32_t src, uint64_t since_wall,
                                         iogp_probe_point *out, size_t max);

typedef struct iogp_model_stats {
	uint64_t messages;      /* applied */
	uint64_t bad_messages;  /* decode failures */
	uint64_t unknown;       /* DELTA for unknown source / metric */
	uint64_t duplicates;    /* seq <= last */
	uint64_t seq_spoofs;    /* forward sequence jumps shown to be false and undone */
	uint64_t refused;       /* metrics, bins, files or names refused for the caps */
	uint64_t gaps;          /* sum over sources */
	uint64_t refused_sources;
	uint64_t first_recv_ns, last_recv_ns; /* time span of applied messages */
	uint64_t dropped;       /* sum over sources of what each last reported
	                         * dropped (iogp_source_info.dropped): kept as
	                         * messages arrive, no visit of the sources */
} iogp_model_stats;
IOGP_API void iogp_model_get_stats(const iogp_model *m, iogp_model_stats *st);

/* ---- live side ------------------------------------------------------------
 * Time: rates and windows live on the sources' CLOCK_REALTIME (wall_ns).
 * iogp_model_tick(m, now) sets the model's clock, in the recv_ns clock
 * (CLOCK_REALTIME live, the recording's receive time in replay); it judges
 * source states and ends "last N seconds" windows. Until the first tick the
 * model's clock is the newest wall time of any applied DELTA.
 *
 * Rates: every DELTA's increment of each rate metric is spread over its own
 * interval [wall - (t1 - t0), wall] and given to fixed bins by overlap
 * (the DAQPIPE report's eq. 1), into rings of source_ring_bins bins per
 * source and ring_bins per node and for all, so sum(rate x bin width) = increments counted and
 * nodes drifting out of step give no double peaks. A bin is covered when
 * some interval of a source that has the metric overlapped it (a DELTA
 * without the metric counts as 0). A DELTA that arrives late, after a gap or
 * out of order across sources, still lands on its own interval; the part of
 * an interval older than a ring's oldest bin is dropped and counted. A gap
 * (lost DELTAs) leaves its bins uncovered; SNAPSHOTs do not touch rates.
 * Rings advance with the newest data they get; once the model is ticked, a
 * DELTA ending more than ring_bins bins after the clock (a broken source
 * clock) feeds only its source's ring, so it cannot blank the shared ones.
 * A DELTA that repeats or precedes its source's last sequence number is
 * ignored here as everywhere (see iogp_model_apply).
 *
 * Windows: every histogram DELTA is added, by its wall time, to a per-source
 * per-metric ring of window_slot_ns slots covering window_max_ns (sparse:
 * 8 bytes per distinct bin per slot; allocated on the metric's first data).
 * A source's rings share window_bytes equally among its histogram metrics;
 * a ring at its share evicts its oldest slots, and a delta that still does
 * not fit is left out (both counted). A SNAPSHOT resets the cumulative state
 * only: the window rings keep the deltas they had, so after a gap a window
 * lacks the lost deltas until they age out of it (approximate until then),
 * while the since-start histogram is exact again.
 *
 * Memory. Without totals (the defaults: 4 rates x 300 bins, 5 s slots x
 * 13) a source's rate ring is 16 + bins x (8 x nrates + 1) = 9,916 bytes
 * and its windows at most window_bytes, so memory grows with the sources.
 * With rate_total, window_total and access_total (iogram-top's options,
 * viewer-tui/input.c) each source gets a share of each total, so the live
 * side stops growing with the sources, but for the floors the options name
 * (a rate ring keeps at least 64 bins, an access ring at least 16 samples
 * and none under a share of 8 KB; a source whose window share is too small
 * for a useful ring keeps none,
 * and its node's sums answer the window queries), plus a rate ring and the
 * sums per node; from 64 nodes on, each node also keeps a log of the
 * histogram bins its sums have yet to take (model_agg.c: 8 KB a node, all
 * of them within 32 MB). Measured with those options
 * (bench_modelmem, realistic sources, 2026-11-24): 13.7-14.3 KB per
 * source at 50,000 sources, 24.3 KB at 20,000, 47.5 KB at 5,000, 138 KB at
 * 1,000 (shares are large while sources are few); with the nodes' logs
 * (2026-11-25, a faster machine) 14.2 KB at 50,000; with slots found
 * through direct tables, 64-byte slots and no access rings at that scale
 * (2026-11-28) 11.6 KB. Applying a realistic
 * DELTA costs 4-5 us at 50,000 sources, most of it cache misses on the
 * source's state. */

/* Set the model's clock (never goes back). */
IOGP_API void iogp_model_tick(iogp_model *m, uint64_t now_ns);

/* Effective options (defaults filled in; rates point into the model). */
IOGP_API const iogp_model_opts *iogp_model_get_opts(const iogp_model *m);

/* Rate series (per second) of a rate metric for the selection (NULL = all):
 * n bins ending with the bin holding end_ns - 1 (end_ns = 0: the newest bin
 * the selection's ring holds). covered[i] = 0 where no interval overlapped
 * bin i (then rate[i] = 0), also for bins older than the ring. *first_ns =
 * wall time of bin 0's start. IOGP_ENOTFOUND for a metric not in the rate
 * set or an unknown node/source; IOGP_EINVAL when live is off. A selection
 * without data yet gives all zeros, not covered (first_ns 0 when end_ns is). */
IOGP_API int iogp_model_rate(const iogp_model *m, const char *metric, const iogp_sel *sel,
                    uint64_t end_ns, size_t n, double *rate, uint8_t *covered,
                    uint64_t *first_ns);

/* Bins the selection's rate ring holds now (a source's may be fewer than
 * source_ring_bins under rate_total; without data yet, what it would
 * hold); 0 for an unknown selection or when live is off. */
IOGP_API uint32_t iogp_model_rate_span(const iogp_model *m, const iogp_sel *sel);

/* Across nodes per bin, over the nodes covered in that bin (Slurm sh5util's
 * columns). Ties go to the node seen first. */
typedef struct iogp_rate_across {
	double min, avg, max, total;   /* per second; 0 when nodes = 0 */
	int32_t min_node, max_node;    /* iogp_model_node() index, -1 when nodes = 0 */
	uint32_t nodes;                /* nodes with data in the bin */
} iogp_rate_across;
/* Same bins as iogp_model_rate with IOGP_SEL_ALL (end_ns = 0: the newest
 * bin of the all ring). */
IOGP_API int iogp_model_rate_across(const iogp_model *m, const char *metric, uint64_t end_ns,
                           size_t n, iogp_rate_across *out, uint64_t *first_ns);

/* Histogram of the deltas of the last window_ns (0 or more than
 * window_max_ns: window_max_ns) before the model's clock, at slot
 * granularity: slot j (wall times [j S, (j+1) S)) counts when it meets
 * (now - window_ns, now]. Same contract as iogp_model_hist (out always
 * initialised; IOGP_ESCHEME; IOGP_ENOTFOUND), IOGP_EINVAL when live is off. */
IOGP_API int iogp_model_hist_window(const iogp_model *m, const char *metric, const iogp_sel *sel,
                           uint64_t window_ns, iogp_hist *out);

/* What source's window rings may hold now, in bytes: 0 when sources are
 * too many for a useful ring each (its window is then kept only in its
 * node's and the whole model's sums, and a window over it answers empty),
 * or when live is off or the source unknown. O(1). */
IOGP_API size_t iogp_model_source_window_bytes(const iogp_model *m, uint64_t source);

/* (model_nodes.c) The histograms of n consecutive window slots from slot
 * first on (slot j: the deltas whose wall time is in [j S, (j+1) S), S =
 * window_slot_ns), one per slot into out[0..n-1]: what a node's latency
 * was, slot by slot (the heatmaps' p99 over time). Slots the rings hold:
 * from window_max_ns before the model's clock to the slot of the clock
 * (IOGP_ENOTFOUND otherwise). Same contract as iogp_model_hist_window
 * (every out[i] initialised, IOGP_ESCHEME, IOGP_EINVAL when live is off).
 * Costs n + 1 window queries. */
IOGP_API int iogp_model_hist_slots(const iogp_model *m, const char *metric, const iogp_sel *sel,
                          uint64_t first, size_t n, iogp_hist *out);

typedef struct iogp_model_live {
	uint64_t now_ns;           /* the model's clock */
	uint32_t sources_new, sources_live, sources_quiet, sources_gone;
	uint32_t restarts;         /* sources linked as a restart of another */
	double msgs_per_s;         /* applied messages/s over the last 5 whole
	                            * seconds of the recv clock */
	uint64_t rate_clipped;     /* DELTAs partly/wholly older than a rate ring */
	uint64_t rate_skipped;     /* DELTAs without a usable interval (wall 0, t1 < t0) */
	uint64_t rate_ahead;       /* DELTAs ending more than ring_bins bins after the
	                            * ticked clock: kept out of the node and all rings */
	uint64_t window_late;      /* histogram deltas older than their window ring */
	uint64_t window_evicted;   /* window slots emptied early for the memory cap */
	uint64_t window_dropped;   /* histogram deltas (or bins >= 2^32) left out */
	uint64_t window_saturated; /* slot counts clamped at 2^32 - 1 */
	size_t live_bytes;         /* held by rate and window rings and probe reports */
	uint64_t probes_refused;   /* probe sources beyond the cap (iogp_model_probes) */
	size_t agg_bytes;          /* held by the per-node and whole-model sums that
	                            * answer all- and node-wide queries */
	uint64_t window_unkept;    /* histogram deltas only the node and whole sums
	                            * keep: sources too many for a useful ring each */
	size_t source_window_bytes; /* what a source's window rings may hold now (0:
	                            * none; a window over sources answers empty) */
} iogp_model_live;
/* O(sources). */
IOGP_API void iogp_model_get_live(const iogp_model *m, iogp_model_live *out);
/* Its msgs_per_s and now_ns alone, without the visit of every source. */
IOGP_API double iogp_model_msgs_per_s(const iogp_model *m);
IOGP_API uint64_t iogp_model_clock(const iogp_model *m);

/* Build a SNAPSHOT of source i's full state (labels, catalog, files,
 * cumulative counters, gauges, histograms) into msg, pointing into model
 * memory and msg's arena; valid until the model changes. flags are OR-ed in
 * (IOGP_F_KEYFRAME for recorder keyframes; IOGP_F_FINAL is added for a gone
 * source). seq = the source's last seq. Lists are sorted by id, ready for
 * iogp_msg_encode. The access ring is not included. */
IOGP_API int iogp_model_snapshot(const iogp_model *m, size_t i, uint16_t flags, iogp_msg *msg);

/* ---- MPI traffic matrix (model_peers.c, model_matrix.c) -------------------
 * Each MPI rank's sends by destination (the wire's PEERS section: cumulative
 * per source, and live in window slots as histograms are). Rows are senders,
 * columns destinations: nodes (IOGP_MATRIX_NODE, every node with a ranked
 * source, by name) or ranks (IOGP_MATRIX_RANK: every ranked source, or
 * those on one node, by rank). A destination rank is the source with that
 * rank label in the sender's job (label "job"; sources without one form one
 * job); sends to a rank no such source announced, or (with a node) to a
 * rank not shown, count in other_*. Row and column totals are the sums of
 * their cells. window_ns = 0: since start; else the deltas of the last
 * window_ns (at most window_max_ns) before the model's clock, at window-slot
 * granularity, as iogp_model_hist_window (live only: IOGP_EINVAL when off);
 * seconds is then the window's length, for rates. */
enum { IOGP_MATRIX_NODE = 0, IOGP_MATRIX_RANK = 1 };
typedef struct iogp_matrix_query {
	int by;                 /* IOGP_MATRIX_NODE or IOGP_MATRIX_RANK */
	const char *node;       /* RANK: only this node's ranks (NULL: all); IOGP_ENOTFOUND if unknown */
	uint64_t window_ns;     /* 0: since start */
} iogp_matrix_query;
typedef struct iogp_matrix {
	uint32_t n;             /* rows = columns */
	const char **names;     /* node names, or ranks as text */
	int64_t *ranks;         /* RANK: each row's rank; NODE: -1 */
	uint64_t *msgs, *bytes; /* n x n: [row * n + column] */
	uint64_t *row_msgs, *row_bytes, *col_msgs, *col_bytes;
	uint64_t total_msgs, total_bytes;
	uint64_t other_msgs, other_bytes;  /* from a row to no column */
	double seconds;         /* window length; 0 since start */
	void *mem;
} iogp_matrix;
/* out is always initialised (free it with iogp_matrix_free). */
IOGP_API int iogp_model_matrix(const iogp_model *m, const iogp_matrix_query *q, iogp_matrix *out);
IOGP_API void iogp_matrix_free(iogp_matrix *x);

#endif
