/* iogp_model.h - the stream model: per-source state rebuilt from decoded
 * messages (live or replayed) and the query API the viewers and exporters use.
 * The viewers know this API, never the codec. */
#ifndef IOGP_MODEL_H
#define IOGP_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "iogp_hist.h"
#include "iogp_wire.h"

typedef struct iogp_model iogp_model;

typedef struct iogp_model_opts {
	uint32_t max_sources;     /* 0 = 100000; further sources are refused and counted */
	uint32_t access_ring;     /* access samples kept per source, 0 = 4096 */
} iogp_model_opts;

iogp_model *iogp_model_new(const iogp_model_opts *opts);  /* NULL on ENOMEM */
void iogp_model_free(iogp_model *m);

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
 *  Gauges take the latest value. Access samples go to a bounded ring.
 *  Every kind may take a sequence number: any seq > last+1 counts the numbers
 *  in between as gaps (a SNAPSHOT still resyncs). A SNAPSHOT with seq < last
 *  is stale and ignored (counted as a duplicate); seq == last applies (a
 *  keyframe). A rejected message changes nothing (its seq later shows as a
 *  gap). A message breaking the wire limits, with unsorted bins, bins outside
 *  the scheme or a value of the wrong kind for its id is IOGP_EINVAL/ELIMIT
 *  (counted in bad_messages); a new source past max_sources is IOGP_ELIMIT
 *  (counted in refused_sources, per message); kinds from a newer version
 *  are skipped (returns 0). */
int iogp_model_apply(iogp_model *m, const iogp_msg *msg, uint64_t recv_ns);
/* Decode with the model's own scratch message, then apply. Decode errors are
 * counted (iogp_model_stats.bad_messages) and returned. */
int iogp_model_feed(iogp_model *m, const void *payload, size_t len, uint64_t recv_ns);

typedef enum iogp_source_state {
	IOGP_SRC_LIVE = 0,
	IOGP_SRC_GONE = 1,   /* BYE or FINAL snapshot seen */
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
} iogp_source_info;

size_t iogp_model_source_count(const iogp_model *m);
/* i in [0, count): stable order of first appearance. */
int iogp_model_source(const iogp_model *m, size_t i, iogp_source_info *out);
int iogp_model_source_index(const iogp_model *m, uint64_t id, size_t *i);
/* Label value of source i, or NULL. */
const char *iogp_model_source_label(const iogp_model *m, size_t i, const char *key);
size_t iogp_model_source_labels(const iogp_model *m, size_t i, const iogp_label **labels);

/* Nodes: distinct node names in order of first appearance. */
size_t iogp_model_node_count(const iogp_model *m);
const char *iogp_model_node(const iogp_model *m, size_t i);

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
size_t iogp_model_metric_count(const iogp_model *m);
int iogp_model_metric(const iogp_model *m, size_t i, iogp_metric_info *out);
int iogp_model_metric_find(const iogp_model *m, const char *name, size_t *i);

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
int iogp_model_hist(const iogp_model *m, const char *metric, const iogp_sel *sel, iogp_hist *out);
/* Sum of a counter (cumulative) or of the latest gauge values. */
int iogp_model_counter(const iogp_model *m, const char *metric, const iogp_sel *sel, uint64_t *out);
int iogp_model_gauge(const iogp_model *m, const char *metric, const iogp_sel *sel, int64_t *out);

/* Access samples kept for source i (oldest first), and its file table. */
size_t iogp_model_access(const iogp_model *m, size_t i, const iogp_access **a, size_t *n2, const iogp_access **a2);
const char *iogp_model_file_path(const iogp_model *m, size_t i, uint64_t file_id);

typedef struct iogp_model_stats {
	uint64_t messages;      /* applied */
	uint64_t bad_messages;  /* decode failures */
	uint64_t unknown;       /* DELTA for unknown source / metric */
	uint64_t duplicates;    /* seq <= last */
	uint64_t gaps;          /* sum over sources */
	uint64_t refused_sources;
	uint64_t first_recv_ns, last_recv_ns; /* time span of applied messages */
} iogp_model_stats;
void iogp_model_get_stats(const iogp_model *m, iogp_model_stats *st);

/* Build a SNAPSHOT of source i's full state (labels, catalog, files,
 * cumulative counters, gauges, histograms) into msg, pointing into model
 * memory and msg's arena; valid until the model changes. flags are OR-ed in
 * (IOGP_F_KEYFRAME for recorder keyframes; IOGP_F_FINAL is added for a gone
 * source). seq = the source's last seq. Lists are sorted by id, ready for
 * iogp_msg_encode. The access ring is not included. */
int iogp_model_snapshot(const iogp_model *m, size_t i, uint16_t flags, iogp_msg *msg);

#endif
