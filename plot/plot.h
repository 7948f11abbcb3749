/* plot.h - private helpers of the cairo plot library: axes, text, layouts. */
#ifndef PLOT_H
#define PLOT_H

#include "iogplot.h"

/* PL_SIZE: request sizes, exact (iogp_fmt_size); PL_BYTES: volumes, offsets */
typedef enum pl_unit { PL_COUNT, PL_BYTES, PL_NS, PL_RATE, PL_TIME, PL_PLAIN, PL_SIZE } pl_unit;

typedef struct pl_axis {
	double lo, hi;      /* data range */
	double p0, p1;      /* pixels of lo and hi (y: p0 is the bottom) */
	int log;
	pl_unit unit;
} pl_axis;

double pl_map(const pl_axis *a, double v);
double pl_unmap(const pl_axis *a, double p);
/* Tick values at least gap pixels apart; returns the count (<= max). */
int pl_ticks(const pl_axis *a, double gap, double *out, int max);
void pl_label(const pl_axis *a, double v, char *buf, size_t len);
/* 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8 x 10^n at or above v (v > 0). */
double pl_nice_ceil(double v);

/* Text: ax 0 left, .5 centre, 1 right; ay 0 top, .5 middle, 1 bottom. */
void pl_font(cairo_t *cr, const iogplot_style *st, double rel, int bold);
void pl_text(cairo_t *cr, double x, double y, double ax, double ay, const char *s);
double pl_text_w(cairo_t *cr, const char *s);
void pl_rgba(cairo_t *cr, iogplot_rgba c, double alpha);

#define PL_MAXSUB 8

typedef struct pl_sub {
	iogplot_rect plot;
	pl_axis x, y, y2;
	int has_y2;
	int xlabels;           /* tick labels under this strip */
	int ylabels;           /* 0: none (categorical axes draw their own) */
	int yticks_max;        /* 0: as many as fit */
} pl_sub;

/* Everything a panel's static layer depends on; compared bytewise for the
 * grid cache, so build it from a zeroed struct. */
typedef struct pl_layout {
	int panel;
	double w, h;
	int nsub;
	pl_sub sub[PL_MAXSUB];
	int empty;
	char empty_msg[192];  /* a line, then lines of advice after '\n' */
	int has_cbar;
	iogplot_rect cbar;
	/* the size panel's common sizes (plot_sizes.c): where, and the lines
	 * each table may take (header included) */
	int ntable;
	iogplot_rect table;
	int table_lines;
	pl_axis caxis;
	double fs;
	int dark;
	/* the nodes panel (plot_nodes.c): the table's box and lines, the
	 * stragglers' box and lines (0: not shown) */
	iogplot_rect ntab, nstrag;
	int ntab_lines, nstrag_lines;
} pl_layout;

/* Margins in font-size units. */
#define PL_TITLE_H 2.0
#define PL_LEFT 5.6
#define PL_BOTTOM 2.1
#define PL_RIGHT 1.2

void pl_layout_base(pl_layout *l, const iogplot_style *st, int panel, double w, double h);

/* Per panel: layout, data layer, title text, tooltip. */
typedef struct pl_panel_ops {
	void (*layout)(pl_layout *l, const iogplot_style *st, const iogplot_frame *f,
	               const iogplot_view *v);
	void (*title)(char *buf, size_t len, const iogplot_frame *f, const iogplot_view *v);
	void (*data)(cairo_t *cr, const pl_layout *l, const iogplot_style *st,
	             const iogplot_frame *f, const iogplot_view *v);
	int (*tooltip)(const pl_layout *l, const iogplot_frame *f, const iogplot_view *v,
	               double x, double y, char *buf, size_t len);
} pl_panel_ops;

extern const pl_panel_ops pl_size_ops, pl_qd_ops, pl_latency_ops;
extern const pl_panel_ops pl_access_ops, pl_rates_ops, pl_heatmap_ops;
extern const pl_panel_ops pl_nodes_ops;   /* plot_nodes.c */
/* (plot_nodes.c) A context to measure text with where there is no drawing
 * one; s cut in the middle with "…" to fit maxw in cr's font into out. */
cairo_t *pl_measure_cr(void);
void pl_fit_middle(cairo_t *cr, const char *s, double maxw, char *out, size_t len);
extern const pl_panel_ops pl_phases_ops, pl_insights_ops;   /* plot_phases.c, plot_insights.c */
/* The frame's phases (of f->layer) and findings (of sel) from the model,
 * and their release (plot_phases.c). */
int pl_frame_phases(iogplot_frame *f, const iogp_model *m, const iogp_sel *sel);
void pl_frame_phases_free(iogplot_frame *f);
/* The slowdown panel (plot_probe.c): the frame's copy of the probes (the
 * drawn one chosen by sel's node) and its release. */
extern const pl_panel_ops pl_probe_ops;
int pl_frame_probes(iogplot_frame *f, const iogp_model *m, const iogp_sel *sel);
void pl_frame_probes_free(iogplot_frame *f);
/* The MPI traffic panel (plot_matrix.c), its frame copy's release, and
 * the message-size histogram it draws inside it (plot_hist.c). */
extern const pl_panel_ops pl_matrix_ops, pl_msgsize_ops;
void pl_frame_matrix_free(iogplot_frame *f);
/* The finding of the insights panel at (x, y), or -1 (plot_insights.c). */
int pl_insight_at(const pl_layout *l, const iogplot_frame *f, double x, double y);

/* The frame's access samples from the model (plot_access.c): the layer's
 * files with samples by bytes moved, the first strips' samples. */
int pl_frame_access(iogplot_frame *f, const iogp_model *m, const iogp_sel *sel);

/* Histograms of a panel: up to 3 series. */
int pl_hist_series(const iogplot_frame *f, int panel, const iogp_hist **h, int *ops);

/* The size panel's common sizes (iogp_size_table.h): room taken from the
 * plot box in l (beside it or below it), and the tables drawn there. */
void pl_sizes_layout(pl_layout *l, const iogplot_style *st, const iogplot_frame *f);
void pl_sizes_draw(cairo_t *cr, const pl_layout *l, const iogplot_style *st,
                   const iogplot_frame *f);

/* Heatmap palette: t in [0,1]. */
void pl_heat_color(double t, double *r, double *g, double *b);

void pl_draw_header(cairo_t *cr, const iogplot_style *st, const iogplot_frame *f, double w, double h);

/* Bin range [*b0, *b1) of s inside [lo, hi] and before t_now. */
void pl_series_window(const iogplot_series *s, double lo, double hi, double t_now,
                      size_t *b0, size_t *b1);

#endif
