/* iogplot.h - iogram's panels as plain cairo drawing: a function of (frame,
 * view, surface, size) with no widget inside, shared by iogram-view's window,
 * its headless snapshots, iogram-top's PNG export and the tests. Needs only
 * cairo and libiogram-proto. */
#ifndef IOGPLOT_H
#define IOGPLOT_H

#include <cairo.h>
#include <stddef.h>
#include <stdint.h>

#include "iogp.h"
#include "iogp_insights.h"
#include "iogp_matrix_view.h"
#include "iogp_node_table.h"
#include "iogp_panels.h"
#include "iogp_probe_view.h"
#include "iogp_units.h"

/* ---- style ---------------------------------------------------------------
 * Colours and font of every panel. Sizes are logical pixels: for HiDPI draw
 * on a surface with a device scale (cairo_surface_set_device_scale). */
typedef struct iogplot_rgba {
	double r, g, b, a;
} iogplot_rgba;

typedef struct iogplot_style {
	int dark;
	double font_size;            /* default 11 */
	char font[64];               /* default "DejaVu Sans" */
	iogplot_rgba bg, panel, fg, dim, grid, axis;
	iogplot_rgba op[3];          /* read, write, meta */
	iogplot_rgba total, accent, warn, select;
} iogplot_style;

void iogplot_style_init(iogplot_style *s, int dark);

/* ---- panels ----------------------------------------------------------------
 * The panel catalog (iogp_panels.h) names them; these are its ids. */
enum iogplot_panel_id {
	IOGPLOT_HEADER = IOGP_PANEL_HEADER,
	IOGPLOT_SIZE = IOGP_PANEL_SIZE,
	IOGPLOT_QD = IOGP_PANEL_QD,
	IOGPLOT_LATENCY = IOGP_PANEL_LATENCY,
	IOGPLOT_ACCESS = IOGP_PANEL_ACCESS,
	IOGPLOT_RATES = IOGP_PANEL_RATES,
	IOGPLOT_HEATMAP = IOGP_PANEL_HEATMAP,
	IOGPLOT_NODES = IOGP_PANEL_NODES,
	IOGPLOT_PHASES = IOGP_PANEL_PHASES,
	IOGPLOT_INSIGHTS = IOGP_PANEL_INSIGHTS,
	IOGPLOT_PROBE = IOGP_PANEL_PROBE,
	IOGPLOT_MATRIX = IOGP_PANEL_MATRIX,
	IOGPLOT_MSGSIZE = IOGP_PANEL_MSGSIZE,
	IOGPLOT_NPANELS = IOGP_PANEL_N
};

/* "header", "size", "qd", "latency", "access", "rates", "heatmap";
 * iogplot_panel_find returns the id or -1 (accepts "dashboard" as -2). */
static inline const char *iogplot_panel_name(int panel)
{
	return iogp_panel_name(panel);
}
static inline const char *iogplot_panel_title(int panel)
{
	return iogp_panel_title(panel);
}
static inline int iogplot_panel_find(const char *name)
{
	return iogp_panel_find(name);
}

/* ---- frame: what the panels draw ---------------------------------------------
 * Everything is copied out of the stream model, so drawing never touches it. */
enum { IOGPLOT_READ = 0, IOGPLOT_WRITE = 1, IOGPLOT_META = 2 };

typedef struct iogplot_series {
	double t0, step;         /* wall-clock seconds of bin 0's start; bin width */
	size_t nbins, nnodes;
	char **nodes;
	float *v[2];             /* [op][node * nbins + bin], bytes/s; NAN: no data */
	/* across nodes, per bin (iogplot_series_stats fills them): */
	float *min[2], *avg[2], *max[2], *total[2];
	float *rwmax;             /* max across nodes of read + write */
} iogplot_series;

typedef struct iogplot_access_pt {
	double t;                /* wall-clock seconds */
	uint64_t offset, size;
	uint32_t file;           /* index into iogplot_frame.files */
	uint32_t op;             /* IOGP_OP_READ / IOGP_OP_WRITE */
} iogplot_access_pt;

typedef struct iogplot_file {
	char *path;
	char *source;            /* "node001 rank 3" */
	uint64_t extent;         /* largest offset + size seen */
	size_t n;                /* samples */
	uint64_t requests;       /* requests they were sampled from */
	int exact;               /* requests counted, not estimated */
	uint64_t folded;         /* a directory's record: the files it folded */
} iogplot_file;

typedef struct iogplot_frame {
	iogp_hist size[2];       /* read, write */
	iogp_hist lat[3];        /* read, write, meta */
	iogp_hist qd;
	iogplot_series rates;
	iogplot_access_pt *access;
	size_t naccess;
	iogplot_file *files;     /* the layer's files with samples, most bytes first */
	size_t nfiles;           /* (samples of the first few strips only) */
	uint64_t access_requests;/* requests the samples were drawn from */
	int access_exact;        /* ... counted, not estimated */
	/* header */
	char title[256];         /* "replay job.iogr", "live tcp://127.0.0.1:7461" */
	char selection[160];     /* "all nodes", "node node003", "source ..." */
	char window[96];         /* "since start", "last 60s" (iogp_panel_window_text) */
	char status[160];        /* "playing 4x", "paused", "" */
	size_t nsources, nlive, nnodes;
	uint64_t messages, gaps, drops, bad;
	double msg_rate;         /* messages/s, caller-computed */
	int recording;
	char record_path[256];
	double t_first, t_now;   /* wall-clock seconds; t_now = replay position or live now */
	int layer;               /* IOGP_LAYER_*: whose metrics the panels show (0: POSIX) */
	uint64_t generation;     /* bumped by the caller when data changed */
	/* I/O phases of the layer (the whole job: phases span sources) and the
	 * findings of the selection; copied (file names included) */
	iogp_phase *phases;
	size_t nphases;
	uint64_t phases_dropped; /* activity runs beyond the model's bound */
	iogp_insight *insights;
	size_t ninsights;
	/* what the findings were computed from: kept while the data and the
	 * selection stay the same, and a costly computation (a huge job) is not
	 * repeated within a few seconds */
	struct iogplot_insights_of {
		uint64_t messages, last_recv, source, at_ns, cost_ns;
		int kind, valid;
		char node[128];
	} insights_of;
	/* nodes and ranks (iogp_node_table.h), and each node's read + write
	 * latency p99 per window slot (lat_heat.v[0], ns; nodes by name): the caller
	 * fills them (iogram-view's session), the frame frees them */
	iogp_node_table nodes;
	iogplot_series lat_heat;
	uint64_t selected_source;/* the selected source's row is marked, 0: none */
	/* slowdown probes (iogp_probe_view.h), their strings copied: every
	 * probe, the one drawn (the selected node's, else the worst now) and
	 * that one's reports, oldest first; NULL / 0 when there are none */
	iogp_probe_set *probes;
	char *probe_text;
	iogp_probe_point *probe_hist;
	size_t nprobe_hist;
	/* MPI traffic (iogp_matrix_view.h): node x node, or the ranks of the
	 * selected node, since start or over the window (messages and bytes
	 * both: the view's weight picks); NULL when there is no matrix; and
	 * the selection's message sizes (mpi.p2p.size) */
	iogp_matrix_view *matrix;
	iogp_hist msgsize;
} iogplot_frame;

void iogplot_frame_init(iogplot_frame *f);
void iogplot_frame_free(iogplot_frame *f);
/* Histograms (of f->layer; empty where the layer has none), access samples
 * and header counts of the selection (NULL: all). Keeps f->rates and the
 * caller's header strings. */
int iogplot_frame_from_model(iogplot_frame *f, const iogp_model *m, const iogp_sel *sel);
/* The MPI traffic matrix and message sizes of sel over the last window_s
 * seconds (0: since start; iogplot_frame_from_model fills them since start). */
int iogplot_frame_mpi(iogplot_frame *f, const iogp_model *m, const iogp_sel *sel, double window_s);
/* f's histograms -= base's (for "last N seconds": base = the state N s ago). */
int iogplot_frame_hist_since(iogplot_frame *f, const iogplot_frame *base);

/* Series: allocate nnodes x nbins of NAN, copy, compute stats, free. */
int iogplot_series_alloc(iogplot_series *s, size_t nnodes, size_t nbins, double t0, double step);
int iogplot_series_set_node(iogplot_series *s, size_t i, const char *name);
/* From two per-node series of one file (read bytes, write bytes; same step). */
int iogplot_series_from_iogp(iogplot_series *s, const iogp_series *rd, const iogp_series *wr);
void iogplot_series_stats(iogplot_series *s);
void iogplot_series_free(iogplot_series *s);
/* Deep copy (dst is overwritten, not freed). */
int iogplot_series_copy(iogplot_series *dst, const iogplot_series *src);
/* Each node's latency p99 per window slot (iogp_node_table.h's heat, brought
 * up to date by the caller) as a series for the heatmap: v[0] in ns, nodes
 * by name; s is overwritten, not freed. */
int iogplot_series_from_heat(iogplot_series *s, const iogp_heat *h);

/* ---- view: how the frame is shown ----------------------------------------- */
typedef struct iogplot_cache iogplot_cache;

typedef struct iogplot_view {
	double t_lo, t_hi;       /* time axis (rates, heatmap, access); t_hi <= t_lo: follow */
	double span;             /* seconds shown when following; default 300 */
	unsigned logx, logy;     /* bit (1 << panel): log scale */
	int size_weight;         /* IOGP_WEIGHT_* (iogp_size_table.h): size bars by count or
	                          * bytes; the MPI traffic matrix's messages or bytes */
	const char *highlight[4];/* nodes drawn as their own lines in the rates panel */
	int nhighlight;
	iogplot_cache *cache;    /* optional: axes and grid drawn once per geometry */
	int sort_col, sort_desc; /* nodes table: IOGP_NT_* column, largest first */
	int heat_p99;            /* the heatmap shows latency p99 (f->lat_heat), not bytes/s */
} iogplot_view;

/* Defaults: follow the last 300 s, log x for size and latency. */
void iogplot_view_init(iogplot_view *v);
/* The time range shown for frame f: [*lo, *hi]. */
void iogplot_view_time(const iogplot_view *v, const iogplot_frame *f, double *lo, double *hi);

/* ---- drawing ------------------------------------------------------------------ */
typedef struct iogplot_rect {
	double x, y, w, h;
} iogplot_rect;

/* The dashboard at w x h: a header strip over a grid of panels that reflows
 * with the width (1, 2 or 3 columns); r[IOGPLOT_HEADER..] get each panel's box. */
void iogplot_dashboard_layout(double w, double h, iogplot_rect r[IOGPLOT_NPANELS]);
/* Minimum height for the dashboard at width w (panels stay readable). */
double iogplot_dashboard_min_height(double w);
void iogplot_dashboard(cairo_t *cr, const iogplot_style *st, const iogplot_frame *f,
                       const iogplot_view *v, double w, double h);
/* One panel filling (0,0)-(w,h) of cr's user space. */
void iogplot_panel(cairo_t *cr, const iogplot_style *st, const iogplot_frame *f,
                   const iogplot_view *v, int panel, double w, double h);

/* Where panel draws its data at w x h (sub: 0, or 1 for the rates panel's
 * write strip): the plot box and its axes, so tests and the window can turn
 * pixels into values. Returns 0, or IOGP_ENOTFOUND when the panel has nothing
 * to draw (empty histogram, no series). */
typedef struct iogplot_geom {
	iogplot_rect plot;
	double x0, x1, y0, y1;   /* data range shown (x: value or wall seconds) */
	int logx, logy;
} iogplot_geom;
int iogplot_panel_geom(const iogplot_style *st, const iogplot_frame *f, const iogplot_view *v,
                       int panel, int sub, double w, double h, iogplot_geom *g);
/* Pixel <-> data along a geom's axes. */
double iogplot_geom_x(const iogplot_geom *g, double value);
double iogplot_geom_y(const iogplot_geom *g, double value);
double iogplot_geom_xval(const iogplot_geom *g, double px);

/* Text for the point (x, y) of panel at w x h: the bin's exact bounds and
 * counts, the line's values, the cell's node and rate. Returns its length,
 * 0 when nothing is there. */
int iogplot_panel_tooltip(const iogplot_style *st, const iogplot_frame *f, const iogplot_view *v,
                          int panel, double w, double h, double x, double y, char *buf, size_t len);

/* The panel a click at (x, y) of panel at w x h leads to (a finding of the
 * insights panel: the panel that shows it), or -1. */
int iogplot_panel_link(const iogplot_style *st, const iogplot_frame *f, const iogplot_view *v,
                       int panel, double w, double h, double x, double y);

/* Grid cache: backgrounds, axes and labels kept as surfaces while the
 * geometry, ranges and style stay the same. */
iogplot_cache *iogplot_cache_new(void);
void iogplot_cache_free(iogplot_cache *c);
void iogplot_cache_clear(iogplot_cache *c);
void iogplot_cache_stats(const iogplot_cache *c, uint64_t *hits, uint64_t *misses);

/* The nodes table's column whose header is at (x, y) of the nodes panel at
 * w x h (a click sorts by it), or -1. */
int iogplot_nodes_header_at(const iogplot_style *st, const iogplot_frame *f, const iogplot_view *v,
                            double w, double h, double x, double y);

/* ---- export -----------------------------------------------------------------
 * Write panel (-1: the whole dashboard) at w x h logical pixels to path; the
 * format follows the extension: .png (scale = device pixels per logical one),
 * .svg, .pdf. err gets a message on failure. */
int iogplot_export(const char *path, const iogplot_style *st, const iogplot_frame *f,
                   const iogplot_view *v, int panel, double w, double h, double scale,
                   char *err, size_t errlen);
/* CSV of panel (-1: every panel) into directory dir (created if missing),
 * named as iogram-top's snapshot: size-read.csv, size-write.csv,
 * queue_depth.csv, latency-{read,write,meta}.csv (lower_bound,upper_bound,count),
 * rates-{read,write}.csv (iogram export's series), access.csv (time,op,
 * offset,size of the busiest file), slowdown.csv (iogp_probe_panel_csv),
 * matrix.csv (iogp_matrix_csv) with msgsize.csv (the message sizes).
 * names gets the file names written.
 * Returns the number of files or an error (err says which file failed). */
int iogplot_export_csv(const char *dir, const iogplot_frame *f, int panel, char *names,
                       size_t nlen, char *err, size_t errlen);
/* "png", "svg", "pdf" from path, or NULL. */
const char *iogplot_export_format(const char *path);

/* ---- wall-clock labels (other units: iogp_units.h) ---- */
void iogplot_fmt_clock(char *buf, size_t len, double wall_s, int seconds); /* "12:03:04" */

#endif
