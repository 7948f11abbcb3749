/* iogp_node_table.h - nodes and ranks side by side, as both viewers show
 * them: a row per node (or per source: a rank or a process) with read and
 * write bytes/s and requests/s, latency p50 and p99, the share of time
 * spent inside I/O calls (the "I/O cost" of Darshan's job summary), queue
 * depth p99, and its I/O time against the median (the stragglers); a
 * stable order by any column; the lines that fit (top and bottom N and a
 * count of the rest); the texts of every cell; CSV. And the per-node
 * latency p99 over time of the heatmaps. iogram-top, iogram-view and plot/
 * build their tables here (not installed). */
#ifndef IOGP_NODE_TABLE_H
#define IOGP_NODE_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "iogp_model.h"
#include "iogp_units.h"   /* IOGP_UNITS_WIDE / IOGP_UNITS_CELL: the texts' style */

/* Columns, in the order the table shows them. */
enum iogp_nt_col {
	IOGP_NT_NAME = 0,
	IOGP_NT_READ_BPS,    /* bytes read per second */
	IOGP_NT_WRITE_BPS,
	IOGP_NT_READ_OPS,    /* read requests per second */
	IOGP_NT_WRITE_OPS,
	IOGP_NT_P50,         /* ns, the layer's read and write latency merged */
	IOGP_NT_P99,
	IOGP_NT_SHARE,       /* time inside I/O calls / wall time (0.25 = 25%) */
	IOGP_NT_QD99,        /* queue depth p99, requests */
	IOGP_NT_IOTIME,      /* seconds inside I/O calls (read, write, metadata) */
	IOGP_NT_VSMED,       /* I/O time / the median I/O time */
	IOGP_NT_NCOLS
};

/* What a row is. */
enum { IOGP_NT_NODES = 0, IOGP_NT_SOURCES, IOGP_NT_NSCOPES };

typedef struct iogp_nt_opts {
	int scope;            /* IOGP_NT_NODES or IOGP_NT_SOURCES */
	const char *node;     /* IOGP_NT_SOURCES: only this node's (NULL: every node's) */
	int layer;            /* IOGP_LAYER_*: whose metrics */
	double window_s;      /* 0: since start; else the last window_s seconds (at
	                       * the window slots' granularity, as the histograms) */
	uint64_t settle_ns;   /* rows over nodes: 0: every node's logged histogram bins
	                       * applied first (iogp_model_settle), exact; else for at
	                       * most this long, the longest-waiting first, and the rows
	                       * read the sums as they stand (t->unsettled) */
	int (*stop)(void *arg); /* NULL, or asked between the exact settle's steps
	                       * (settle_ns 0) and every 64 rows: non-zero ends the
	                       * build with IOGP_ESTOPPED
	                       * and t's rows undefined (a viewer's data frame gives
	                       * way to a key and shows the table it had) */
	void *stop_arg;
	int lazy;             /* 1: every row's name, I/O time (its share, vs median, the
	                       * median, the worst) and column lazy_col only; the other
	                       * columns wait for iogp_node_table_fill (a viewer shows
	                       * ~50 rows of 50,000; live at 50,000 sources whole rows
	                       * took 110-250 ms, a key's budget 100) */
	int lazy_col;         /* IOGP_NT_*: the column the viewer orders by */
} iogp_nt_opts;

typedef struct iogp_nt_row {
	char name[160];       /* node name; a source: "rank 3 (node001)", "pid 77 (node001)",
	                       * without " (node)" when the table is one node's */
	char node[128];
	uint64_t source;      /* a source's id; 0 in a node's row */
	int64_t rank, pid;    /* a source's; -1 otherwise */
	uint32_t sources;     /* processes in the row */
	double v[IOGP_NT_NCOLS];  /* by column (v[IOGP_NT_NAME] unused); NAN: no data */
	double span_s;        /* wall time the rates are over */
	double proc_s;        /* the processes' wall time the share is over (summed) */
	uint64_t requests;    /* read and write requests in the window */
	uint8_t pending;      /* a lazy build's: columns not yet filled (iogp_node_table_fill) */
} iogp_nt_row;

typedef struct iogp_node_table {
	iogp_nt_row *rows;    /* the model's order (first appearance) */
	size_t n;
	int scope, layer;
	double window_s;
	long worst;           /* the row with the largest I/O share (ties: the first by
	                       * name), -1 when none has one */
	double median_io_s;   /* median I/O time of the rows that did I/O; NAN: none */
	size_t with_io;       /* rows that did I/O */
	int has_qd;           /* the layer has a queue depth */
	size_t from_summaries; /* rows from a relay's summaries */
	size_t unsettled;     /* nodes whose rows lack their newest histogram bins
	                       * (settle_ns ran out; 0: exact) */
	uint64_t win_start, win_now; /* window_s > 0: the build's window (lazy fills) */
	size_t cap;           /* rows allocated; the rest the build's own */
	void *scratch;
	size_t scratch_len;
} iogp_node_table;

/* Build t (free with iogp_node_table_free, also after an error) from the
 * model as it is now. Since start: counters over each source's wall span
 * (its first interval's start to its last message); last N s: the live
 * windows (bytes and requests from the rate rings where they hold the
 * metric, else the size histograms), over the part of the window each
 * source was there. A node's rates are over the span of its sources
 * together; its share is its sources' time in I/O calls over their wall
 * times added up (threads and asynchronous requests can take it past
 * 100%).
 * Behind an aggregating relay (`iogram relay --aggregate node|job
 * --summaries`, iogp_model_source_roles): a node's row comes from its
 * node aggregate (its "sources" members counted as its sources, their
 * wall times as the aggregate's span each), never from the summaries on
 * it; a node without one (behind a job aggregate) from its members'
 * summaries; a job aggregate is a row "job NAME" only while no summary of
 * its members is here. A source row per summary ("rank 3 (node001)"),
 * none for a summarised aggregate; an aggregate without summaries is one
 * row "48 sources (node001)". Rows from summaries: read/write bytes/s,
 * ops/s (reads and writes are one count: all in the direction that moved
 * bytes, NAN for both when both did), I/O time, I/O share and vs median
 * since start or, in a window, from the summaries' rate rings (the
 * viewers' rate set holds them: iogp_layer_rate_set; NAN when the model
 * keeps no rate of them or its ring does not reach back over the window);
 * p99: the member's last relay interval (a node: NAN); p50 and QD p99:
 * NAN. Returns 0, IOGP_ENOMEM, IOGP_ESTOPPED (o->stop). */
int iogp_node_table_build(iogp_node_table *t, const iogp_model *m, const iogp_nt_opts *o);
/* The same into t from an earlier build (or zeroed), its memory reused: a
 * viewer that builds a table each frame allocates nothing once it has
 * grown. The same rows, errors and freeing as iogp_node_table_build. */
int iogp_node_table_rebuild(iogp_node_table *t, const iogp_model *m, const iogp_nt_opts *o);
/* A lazy build's other columns for rows[0..n) (indices into t->rows; rows
 * already whole are skipped), from m as it is now (the model of the
 * build: a frame fills the rows it shows right after building), the I/O
 * time kept as built (the median, the shares and the worst are of it).
 * Whole rows equal those of a build that is not lazy on the same model.
 * Returns 0 or IOGP_ENOMEM (the row left pending). */
int iogp_node_table_fill(iogp_node_table *t, const iogp_model *m, const size_t *rows, size_t n);
void iogp_node_table_free(iogp_node_table *t);

/* ---- columns ---- */
/* "name", "read_bps", ..., "vs_median" (what a --sort takes); "?" out of range. */
const char *iogp_nt_col_name(int col);
int iogp_nt_col_find(const char *name);        /* -1 if unknown */
/* Header text: WIDE "Read B/s", "p99", "I/O share"; CELL "rd B/s", "p99", "I/O%". */
const char *iogp_nt_col_title(int col, int style);
/* The order a column sorts in first: names ascending, numbers descending. */
int iogp_nt_col_desc(int col);

/* ---- order ---- */
/* The rows ordered by col (desc: largest first), into order[0..n-1].
 * Stable whatever the values: ties, and rows without a value (always
 * last), go by name (digits compared as numbers: node2 before node10),
 * then by source id. */
void iogp_node_table_order(const iogp_node_table *t, int col, int desc, size_t *order);
/* The first k rows of that order (fewer when the table has fewer), in it,
 * into top[0..]: the stragglers' bars and the slowest row without sorting
 * every row each frame. Returns how many. */
size_t iogp_node_table_top(const iogp_node_table *t, int col, int desc, size_t k, size_t *top);

/* The lines max lines can show of the rows in order: all of them when they
 * fit, else the first and the last rows with a gap line between that counts
 * what it hides ("... 4,990 more ..."); the worst row stays in view (a gap
 * each side of it when it falls in the hidden middle). A line is a row
 * (row = its index in t->rows) or a gap (row = -1, gap = rows it hides). */
typedef struct iogp_nt_line {
	long row;
	size_t gap;
} iogp_nt_line;
size_t iogp_node_table_lines(const iogp_node_table *t, const size_t *order, size_t max,
                             iogp_nt_line *out);
/* The same lines for the order by col without ordering every row: the
 * first and last max rows picked (n log max), the worst's place counted
 * (a sort of 50,000 rows by name took ~40 ms). Returns how many, 0 also
 * when out of memory. */
size_t iogp_node_table_lines_by(const iogp_node_table *t, int col, int desc, size_t max,
                                iogp_nt_line *out);
/* The last of the rows that did I/O in the order by I/O time, largest
 * first (the stragglers' "fastest"): iogp_node_table_order's entry
 * with_io - 1, without the order. -1 when no row did I/O. */
long iogp_node_table_fastest(const iogp_node_table *t);
/* Where row a goes against row b in the order by col: < 0 before, > 0
 * after (never 0 for two rows). */
int iogp_node_table_cmp(const iogp_node_table *t, int col, int desc, size_t a, size_t b);

/* A gap line's text: "... 4,990 more nodes ..." (exact count; WIDE with
 * ellipses "…"), "processes" for a table of sources. */
int iogp_node_table_gap(const iogp_node_table *t, size_t gap, int style, char *buf, size_t len);

/* Cell text of row r, column col in style: rates "12.3 MiB/s" (CELL
 * "12.3M/s"), requests "1.2k/s" (CELL "1234"), latencies "52.1 µs" (CELL
 * "52.1us"), the share "12.3%", I/O time "4.1 s", "2.31×" (CELL "2.31x");
 * "–" (CELL "-") without data. Returns its length. */
int iogp_node_table_cell(const iogp_node_table *t, size_t r, int col, int style, char *buf,
                         size_t len);

/* One line per row in order (NULL: the model's), units in the header:
 * name,node,rank,pid,sources,span_s,read_bytes_per_s,write_bytes_per_s,
 * read_ops_per_s,write_ops_per_s,latency_p50_ns,latency_p99_ns,io_share_pct,
 * queue_depth_p99,io_time_s,io_time_vs_median; rates and shares with 3
 * decimals, latencies integers, empty without data. IOGP_EIO on a write error. */
int iogp_node_table_write_csv(const iogp_node_table *t, const size_t *order, FILE *out);

/* ---- latency over time (node_heat.c) ----
 * Each node's p99 of the layer's read and write latency merged, per window
 * slot, for the slots the model's windows hold: kept between frames, so a
 * frame computes only its newest slots (and a new node's history once). */
typedef struct iogp_heat iogp_heat;
iogp_heat *iogp_heat_new(void);
void iogp_heat_free(iogp_heat *h);
/* Up to the model's clock; starts over for another model, layer, or a clock
 * that went back (a replay seek). Returns 0 or an error. */
int iogp_heat_update(iogp_heat *h, const iogp_model *m, int layer);
/* The slot width and the slots held, [*first, *last] (0, 0 when none). */
uint64_t iogp_heat_slots(const iogp_heat *h, uint64_t *first, uint64_t *last);
size_t iogp_heat_nodes(const iogp_heat *h);
const char *iogp_heat_node(const iogp_heat *h, size_t i);
/* Node i's p99 in slot j: 1 and *ns, or 0 when it had no request then. */
int iogp_heat_get(const iogp_heat *h, size_t i, uint64_t j, uint64_t *ns);

#endif
