/* iogp_matrix_view.h - the MPI traffic matrix as both viewers show it (panel
 * M, "matrix"): node x node, or rank x rank of the selected node; bytes or
 * messages, per second over the view's window or in total since start; the
 * rows and columns that fit; heat levels; the title and the cells' text.
 * iogram-top, iogram-view and plot/ build on it (not installed); the
 * counts are the model's (iogp_model_matrix). */
#ifndef IOGP_MATRIX_VIEW_H
#define IOGP_MATRIX_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "iogp_model.h"

typedef struct iogp_matrix_view {
	iogp_matrix x;
	int by;             /* IOGP_MATRIX_NODE, or _RANK when a node is chosen */
	char node[128];     /* RANK: the node whose ranks */
	int bytes;          /* 1: bytes, 0: messages */
	double seconds;     /* the window the counts cover; 0: since start (totals) */
	int rc;             /* iogp_model_matrix's: 0, or why there is nothing */
	int empty;          /* 1: no message at all (no MPI, or ranks that never sent) */
} iogp_matrix_view;

/* Fill v from m: node x node, or the ranks of node when it is not NULL or
 * "" (and has ranks; else node x node again); window_s 0 since start.
 * Returns v->rc. Free with iogp_matrix_view_free. */
int iogp_matrix_view_get(iogp_matrix_view *v, const iogp_model *m, const char *node, double window_s,
                         int bytes);
void iogp_matrix_view_free(iogp_matrix_view *v);

/* What a cell, a row's or a column's total and the grand total show: per
 * second over the window, or the count since start. */
double iogp_matrix_view_cell(const iogp_matrix_view *v, uint32_t r, uint32_t c);
double iogp_matrix_view_row(const iogp_matrix_view *v, uint32_t r);
double iogp_matrix_view_col(const iogp_matrix_view *v, uint32_t c);
double iogp_matrix_view_total(const iogp_matrix_view *v);
double iogp_matrix_view_max(const iogp_matrix_view *v);   /* the largest cell */

/* A value in its unit, style IOGP_UNITS_WIDE or _CELL: "1.5 MiB/s",
 * "120/s" (messages), "3.2 GiB", "4,000". */
void iogp_matrix_view_fmt(const iogp_matrix_view *v, double val, char *buf, size_t len, int style);
/* "node x node, bytes/s over 60 s" / "ranks of node03, messages since start". */
void iogp_matrix_view_title(const iogp_matrix_view *v, char *buf, size_t len);
/* How hot a value is, 0 (none) .. 1 (the largest cell), on a log scale
 * over three decades below the largest so small flows still show. */
double iogp_matrix_view_level(const iogp_matrix_view *v, double val);

/* When only max rows (and columns) fit: the busiest by sent + received,
 * in the matrix's order, into idx; returns how many (<= max). */
size_t iogp_matrix_view_pick(const iogp_matrix_view *v, uint32_t *idx, size_t max);

#endif
