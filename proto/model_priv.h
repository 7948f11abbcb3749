/* model_priv.h - the stream model's internals, shared by model.c (tables,
 * sources, lifecycle), model_apply.c (applying messages), model_live.c (rate
 * rings and windows) and model_query.c (queries, snapshots). Not installed. */
#ifndef IOGP_MODEL_PRIV_H
#define IOGP_MODEL_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "iogp_model.h"

#define NONE UINT32_MAX
/* Dense accumulation is used for merging many sources' histograms when the
 * scheme has at most this many bins. */
#define MODEL_DENSE_MAX 65536u
#define MODEL_MPS_RING 8u                /* per-second message counts kept */

/* Live side rings, defined in model_live.c. */
struct rring;
struct wring;
struct astore;   /* model_access.c: per-file access samples */

/* Open-addressing index over an array owned elsewhere: entries hold the
 * element's hash and index + 1 (0 = empty); load stays <= 1/2. */
struct imap_ent {
	uint32_t h, v;
};

struct imap {
	struct imap_ent *t;
	uint32_t mask, n;
};

typedef int (*imap_eq)(const void *ctx, uint32_t idx, const void *key);

/* A source's slots by a small key (its wire id, its global metric): agents
 * number their metrics from 0 and every source shares the first global
 * metrics, so a direct table (slot + 1, 0 = none) answers in one read and
 * holds 2 bytes a key, where an index map held 16 a slot at its load
 * (1 KB for each of an agent's ~40 slots' two maps). Keys past the table's
 * span (sparse or hostile ids) go to the map. */
struct sidx {
	uint16_t *v;
	uint32_t n;      /* table entries */
	uint32_t cnt;    /* keys held, table and map */
	struct imap far;
};

/* A source's slots are 64 bytes each in a block aligned to 64 (model__slots_reserve):
 * a value a DELTA adds to is one cache line, not two. */
struct slot {        /* laid out without holes: a source has ~30-40 of them */
	uint32_t id;
	uint32_t gm;        /* global metric (by name) */
	uint32_t scheme;    /* HISTOGRAM: interned scheme, else NONE */
	uint8_t kind;
	uint8_t linked;     /* counted in per-name queries (same kind, first of its name) */
	uint8_t rate;       /* rate metric index + 1, 0 = none (linked slots only) */
	uint32_t win_n;     /* its window's entries, to prefetch its newest segment */
	uint32_t nex;
	uint32_t n, cap;    /* HISTOGRAM: bins (n <= IOGP_MAX_HIST_BINS) */
	struct wring *win;  /* window ring, NULL until the first histogram delta (live) */
	union {             /* a slot is of one kind: 16 bytes less a slot */
		uint64_t counter;   /* COUNTER */
		int64_t gauge;      /* GAUGE */
		uint64_t total;     /* HISTOGRAM: its bins' total */
	};
	iogp_bin *bins;     /* HISTOGRAM: sparse cumulative bins */
	iogp_exact *ex;     /* HISTOGRAM: cumulative exact values, ascending, at
	                     * most MODEL_EXACT_MAX (allocated whole on first use) */
};
_Static_assert(sizeof(struct slot) <= 64, "a slot is one cache line at most");

/* A slot whose unit differs from its metric's (rare: kept aside). */
struct ounit {
	uint32_t slot;
	char *unit;
};

struct file {
	uint64_t id;
	char *path;
};

struct source {
	uint64_t id;
	uint32_t node;
	uint32_t nlabels;
	iogp_label *labels;    /* one block: the array, then the strings */
	const char *host;
	int64_t pid, rank;
	iogp_source_state state;
	bool in_sync, has_seq, has_mono, has_wall;
	uint8_t role;          /* IOGP_ROLE_PLAIN, _SUMMARY or _AGGREGATE by its labels (labels_set) */
	uint64_t last_seq, messages, gaps, dropped;
	uint64_t pre_jump_seq, jump_gaps;   /* the last forward jump, until confirmed */
	bool jumped;
	uint64_t cost;         /* upper bound of its SNAPSHOT's encoded size */
	uint64_t first_recv, last_recv, first_wall, last_wall, start_mono, last_mono;

	struct slot *slots;    /* 64-byte aligned (model__slots_reserve) */
	uint32_t nslots, slots_cap;
	struct ounit *ounit;   /* slots with a unit of their own */
	uint32_t nounit;
	struct sidx by_id, by_gm;

	struct file *files;
	uint32_t nfiles, files_cap;
	struct imap file_map;
	uint64_t files_ignored;

	struct frec *fr;       /* per-file records (model_files.c) */
	uint32_t nfr, frcap;
	struct imap fr_map;
	uint64_t fr_ignored;   /* refused for the caps */

	iogp_access *ring;     /* ring_cap entries, grown as samples come (model_access.c);
	                        * none in a live model of many sources */
	uint32_t ring_head, ring_n, ring_cap;
	uint64_t access_seen;
	struct astore *acc;    /* per-file samples over the run (live), model_access.c */
	struct peers *peers;   /* MPI sends by destination, model_peers.c */

	/* lifecycle */
	bool replaced;         /* a restart took over; cleared if it speaks again */
	uint64_t iv;           /* moving average of DELTA intervals, 0 = none yet */
	uint64_t rkey[2];      /* restart keys from its first labels, 0 = none */
	uint32_t restart_of, restarted_by;

	/* live side */
	uint32_t rate_mask;    /* rate metrics in its catalog */
	uint32_t nhist;        /* linked histogram metrics: each gets 1/nhist of the budget */
	uint32_t win_bytes;    /* held by its window rings */
	struct rring *rr;
	struct pstore *probe;  /* probe reports (model_probes.c), NULL unless a probe */
};

struct agg;      /* model_agg.c: a sum of one metric over a node or all */

struct node {
	char *name;
	uint32_t *src;
	uint32_t n, cap;
	struct rring *rr;
	struct agg **agg;      /* by global metric, live only (model_agg.c) */
	uint32_t nagg, nvsum;
	uint64_t *vsum;        /* counter and gauge sums by global metric (model_agg.c) */
	struct npend *pend;    /* histogram bins its sums take late (model_agg.c) */
};

struct holder {
	uint32_t src, slot;
};

struct gmetric {
	char *name, *unit;
	iogp_metric_kind kind;
	uint32_t scheme;
	uint32_t rate;       /* rate metric index + 1 when counter/histogram, else 0 */
	struct holder *h;
	uint32_t n, cap;
};

/* Caps. A source holds at most what one SNAPSHOT can carry (its cost is an
 * upper bound of its encoded size); the model at most opts.max_bytes; names
 * and bin schemes are shared by all sources and capped by count. */
#define MODEL_SRC_MAX_COST (IOGP_MAX_PAYLOAD - (256u << 10))
#define MODEL_MAX_BYTES (512ull << 20)
#define MODEL_MAX_NAMES 65536
#define MODEL_MAX_SCHEMES 4096
#define COST_BIN 20u                 /* a bin: varint gap + varint count, worst case */
#define COST_METRIC 192u             /* a definition, name and unit at their limits */
#define COST_FILE 24u                /* plus the path */
#define MODEL_EXACT_MAX IOGP_EXACT_KEEP  /* exact values kept per histogram of a source */
/* Window rings hold a histogram's exact values as entries past its bins:
 * index MODEL_WIN_EXACT + value (values below 2^31, schemes with fewer bins). */
#define MODEL_WIN_EXACT 0x80000000u

#define MODEL_PROBE_RING 512u      /* reports kept per probe */
#define MODEL_MAX_PROBES 1024u

struct scheme {
	iogp_bins b;
	uint64_t nbins;
};

struct iogp_model {
	iogp_model_opts opts;
	uint64_t serial;        /* iogp_model_serial */

	struct source *src;
	uint32_t nsrc, src_cap;
	struct imap src_map;

	struct node *nodes;
	uint32_t nnodes, nodes_cap;
	struct imap node_map;
	uint32_t settle_next;   /* the node iogp_model_settle takes next */

	struct gmetric *gm;
	uint32_t ngm, gm_cap;
	struct imap gm_map;

	struct scheme **schemes;
	uint32_t nschemes, schemes_cap;
	struct imap scheme_map;

	/* a histogram whose scheme is loaded once and whose bins are swapped
	 * in per slot, so slots need no 8 KiB iogp_bins each */
	iogp_hist hs;
	uint32_t hs_scheme;

	iogp_msg scratch;
	iogp_msg *batch;       /* MODEL_BATCH decoded messages (model_batch.c), NULL until used */
	bool batched;          /* applying a batch: what it touches was fetched */
	iogp_model_stats st;
	uint64_t cost_total;   /* sum of the sources' costs */
	bool have_recv;

	/* lifecycle */
	uint64_t now, cur_recv;
	bool ticked;
	struct imap rk_map[2];
	struct {
		uint64_t sec, n;
	} mps[MODEL_MPS_RING];

	/* live side */
	char *rate_names[IOGP_MODEL_MAX_RATES];
	uint32_t win_slots;    /* slots per window ring */
	uint64_t wall_hi;      /* newest DELTA wall time */
	struct rring *all;
	iogp_model_live lst;   /* counters kept by apply */
	struct agg **agg;      /* sums over all sources, by global metric (model_agg.c) */
	uint32_t nagg, nvsum;
	uint64_t *vsum;
	size_t agg_bytes;      /* the sums hold */
	bool agg_failed;       /* a sum could not be made: queries visit */
	bool agg_off;          /* tests: queries visit (iogp__model_aggregates) */
	int agg_late;          /* node sums late: 0 from AGG_LATE_NODES on, 1 always, -1 never */
	bool settle_plain;     /* iogp_model_settle without fetching ahead (iogp_testing.h) */
	bool read_unsettled;   /* node queries read the sums as they stand (iogp_model_read_unsettled) */
	uint64_t settle_n[3];  /* settles' groups merged, of them added flat, records joined by a scanned link */

	/* phases (model_phases.c) */
	struct punit *units;
	uint32_t nunits, units_cap;
	uint64_t units_dropped;

	/* slowdown probes (model_probes.c) */
	uint32_t nprobes;
	uint32_t probe_src[MODEL_MAX_PROBES];   /* their source indices, in arrival order */
};

typedef void (*visit_fn)(void *ctx, const iogp_model *m, const struct slot *sl);

/* A source's record of one file through one layer (cumulative). */
struct frec {
	iogp_filerec r;
	uint32_t unit[2];      /* its open activity run per direction, index + 1 */
};

/* An activity run (model_phases.c): one source's requests to one file
 * through one layer in one direction, while they keep coming less than
 * MODEL_UNIT_GAP_NS apart; wall times. Phases are built from these. */
struct punit {
	uint64_t file;
	uint32_t src, layer, op;
	uint64_t start, end;
	uint64_t ops, bytes, time_ns, consec, seq, random, max_req;
};
#define MODEL_MAX_UNITS 200000u
#define MODEL_UNIT_GAP_NS 1000000000ull
#define COST_FREC 224u   /* a record encoded at worst */

/* The caps' bookkeeping (model_priv.h's MODEL_SRC_MAX_COST, opts.max_bytes). */
static inline bool model__cost_fits(const iogp_model *m, const struct source *s, uint64_t c)
{
	return s->cost + c <= MODEL_SRC_MAX_COST && m->cost_total + c <= m->opts.max_bytes;
}

static inline void model__cost_add(iogp_model *m, struct source *s, uint64_t c)
{
	s->cost += c;
	m->cost_total += c;
}

static inline void model__cost_sub(iogp_model *m, struct source *s, uint64_t c)
{
	c = c > s->cost ? s->cost : c;
	s->cost -= c;
	m->cost_total -= c;
}

/* model_files.c: per-file records */
int model__files_apply(iogp_model *m, struct source *s, const iogp_filerec *r, uint32_t n,
                       bool snapshot);
int model__files_check(const iogp_msg *msg);
size_t model__files_snapshot(const struct source *s, iogp_filerec *out);
/* model_phases.c: a DELTA's file records extend or start activity runs */
void model__phases_note(iogp_model *m, struct source *s, uint32_t si, const iogp_msg *msg);
uint64_t model__clock(const iogp_model *m);


/* model_probes.c: a message's probe gauges (live); source_free frees s->probe */
void model__probes_note(iogp_model *m, struct source *s, const iogp_msg *msg);

/* model.c: hashing, index maps, arrays */
uint32_t model__hash_u64(uint64_t x);
int model__imap_put(struct imap *im, uint32_t h, uint32_t idx);
int model__sidx_put(struct sidx *x, uint32_t key, uint32_t slot);   /* key absent */
int model__grow(void *p, uint32_t *cap, uint32_t need, size_t sz);
int model__slots_reserve(struct source *s, uint32_t need, bool exact);
const char *model__slot_unit(const iogp_model *m, const struct source *s, uint32_t slot);

/* model.c: lookups (NONE when absent) */
uint32_t model__src_find(const iogp_model *m, uint64_t id);
uint32_t model__node_find(const iogp_model *m, const char *name);
uint32_t model__gm_find(const iogp_model *m, const char *name);
uint32_t model__slot_by_id(const struct source *s, uint32_t id);
const void *model__src_hint(const iogp_model *m, uint64_t id, int stage);
const void *model__slot_hint(const struct source *s, uint32_t gm, int stage);
void model__batch_free(iogp_model *m);   /* model_batch.c */
uint32_t model__slot_by_gm(const struct source *s, uint32_t gm);
uint32_t model__file_find(const struct source *s, uint64_t id);
uint32_t model__frec_find(const struct source *s, uint64_t file, uint32_t layer);
uint32_t model__frec_hash(uint64_t file, uint32_t layer);
const char *model__labels_find(const iogp_label *l, uint32_t n, const char *key);

/* model.c: tables, sources, lifecycle */
uint32_t model__scheme_intern(iogp_model *m, const iogp_bins *b);
uint32_t model__gm_add(iogp_model *m, const iogp_metric_def *d, const char *unit);
uint32_t model__source_new(iogp_model *m, uint64_t id, const char *host, int *err);
int model__labels_set(iogp_model *m, uint32_t si, const iogp_msg *msg);
iogp_source_state model__src_state(const iogp_model *m, const struct source *s, uint64_t now,
                                   bool judge);

/* model_peers.c: MPI sends by destination (the traffic matrix) */
int model__peers_check(const iogp_msg *msg);
int model__peers_apply(iogp_model *m, struct source *s, const iogp_msg *msg, bool snapshot);
size_t model__peers_snapshot(const struct source *s, iogp_peer **out);
const iogp_peer *model__peers_window(const iogp_model *m, const struct source *s, uint64_t window,
                                     iogp_peer **tmp, uint32_t *n);
void model__peers_free(struct source *s);

/* model_access.c: a message's access samples into the ring (and, live, the
 * per-file samples); freeing them with the source */
int model__access_apply(iogp_model *m, struct source *s, const iogp_msg *msg, bool snapshot);
void model__access_free(struct source *s);

/* model_agg.c: per-node and whole-model sums kept on apply (live only).
 * Updates take a linked slot and what changed in it; queries return 1 when
 * answered, 0 when the caller must visit the sources, < 0 on error (out is
 * then initialised). */
void model__agg_link(iogp_model *m, const struct source *s, const struct slot *sl);
void model__agg_counter(iogp_model *m, const struct source *s, const struct slot *sl,
                        uint64_t old, uint64_t now);
void model__agg_gauge(iogp_model *m, const struct source *s, const struct slot *sl, int64_t old,
                      int64_t now);
void model__agg_bins(iogp_model *m, const struct source *s, const struct slot *sl,
                     const iogp_bin *b, uint32_t n, bool sub);
void model__agg_exact(iogp_model *m, const struct source *s, const struct slot *sl,
                      const iogp_exact *old, uint32_t nold, const iogp_exact *now, uint32_t nnow);
/* took: b are the bins model__agg_bins just took for sl (a DELTA's
 * histogram), not others (its exact values as window entries). */
void model__agg_win(iogp_model *m, const struct source *s, const struct slot *sl, uint64_t j,
                    const iogp_bin *b, uint32_t n, bool took);
void model__agg_move(iogp_model *m, uint32_t si, uint32_t from, uint32_t to);
void model__agg_prefetch(const iogp_model *m, const struct source *s, const struct slot *sl);
/* A step later, for a batch (model_batch.c): where sl's record goes in its
 * node's log. */
void model__agg_prefetch_log(const iogp_model *m, const struct source *s, const struct slot *sl);
void model__agg_free(iogp_model *m);
/* Apply node's (all nodes') late histogram bins to its sums (model_agg.c). */
void model__agg_settle(iogp_model *m, uint32_t node);
void model__agg_settle_all(iogp_model *m);
size_t model__agg_bytes(const iogp_model *m);
int model__agg_value(const iogp_model *m, uint32_t gi, const iogp_sel *sel, uint64_t *v);
int model__agg_hist(const iogp_model *m, uint32_t gi, const iogp_sel *sel, iogp_hist *out);
int model__agg_hist_window(const iogp_model *m, uint32_t gi, const iogp_sel *sel, uint64_t jlo,
                           uint64_t jhi, iogp_hist *out);

/* model_window.c: window rings. A ring, segment by segment (slot j, its
 * entries as bins: exact values at MODEL_WIN_EXACT + value); a node sum's
 * ring (model_agg.c: within limit bytes, counted in *bytes); prefetching a
 * slot's ring before a DELTA feeds it. */
void model__win_add(iogp_model *m, struct source *s, struct slot *sl, uint64_t j,
                    const iogp_bin *in, uint32_t nin);
void model__win_each(const iogp_model *m, const struct wring *w,
                     void (*fn)(void *ctx, uint64_t j, const iogp_bin *b, uint32_t n), void *ctx);
/* window_total's split (model_window.c): a node sum's ring limit for a
 * source of nhist histograms, and what a source's rings may hold (0: none). */
size_t model__win_node_limit(const iogp_model *m, uint32_t nhist);
size_t model__win_src_budget(const iogp_model *m, uint32_t nhist);
size_t model__wring_bytes(const struct wring *w);   /* 0 for NULL */
void model__wring_put(iogp_model *m, struct wring **w, size_t limit, size_t *bytes, uint64_t j,
                      const iogp_bin *in, uint32_t nin);
void model__wring_sub(const iogp_model *m, struct wring *w, uint64_t j, const iogp_bin *in,
                      uint32_t nin);
void model__wring_free(const iogp_model *m, struct wring *w, size_t *bytes);
int model__wring_hist(const iogp_model *m, const struct wring *w, uint32_t sc, uint64_t jlo,
                      uint64_t jhi, iogp_hist *out);
void model__wring_prefetch(const iogp_model *m, const struct wring *w, uint32_t n, bool bins);
void model__win_prefetch(const iogp_model *m, const struct slot *sl);
/* The newest segment's bins of sl's window (after model__win_prefetch has
 * brought its header in). */
void model__win_prefetch_bins(const iogp_model *m, const struct slot *sl);

/* model_live.c: what a DELTA feeds on the live side */
void model__live_prefetch(const iogp_model *m, const struct source *s, const iogp_msg *msg);
void model__rates_prefetch(const iogp_model *m, const struct source *s, uint64_t wall_ns);
void model__slot_prefetch(const iogp_model *m, const struct source *s, const struct slot *sl);
void model__live_rates(iogp_model *m, struct source *s, const iogp_msg *msg, const double *amt);

/* model_query.c: selections */
int model__sel_visit(const iogp_model *m, uint32_t gi, const iogp_sel *sel, visit_fn fn,
                     void *ctx);
int model__metric_lookup(const iogp_model *m, const char *metric, iogp_metric_kind kind,
                         uint32_t *gi);
int model__dense_add(iogp_hist *out, const uint64_t *dense, uint64_t nb);
/* the same for a flat array of nb counts of bins first.. */
int model__dense_add_at(iogp_hist *out, const uint64_t *dense, uint64_t first, uint64_t nb);


#endif
