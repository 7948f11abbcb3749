/* iogp_size_table.h - request sizes as both viewers show them: the "common
 * sizes" table beside the size histogram (a histogram's exact values, see
 * iogp_hist.h), the histogram's weight (by count or by bytes: the share of
 * the data moved at each size), and sizes a summary may quote. iogram-top,
 * iogram-view and plot/ build their rows and labels here (not installed). */
#ifndef IOGP_SIZE_TABLE_H
#define IOGP_SIZE_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "iogp_hist.h"
#include "iogp_units.h"   /* IOGP_UNITS_WIDE / IOGP_UNITS_CELL: the texts' style */

/* ---- weight of the size histogram ---- */
enum iogp_size_weight {
	IOGP_WEIGHT_COUNT = 0,   /* requests per bin */
	IOGP_WEIGHT_BYTES,       /* bytes moved per bin (iogp_hist_bin_sum) */
	IOGP_WEIGHT_N
};

/* "count", "bytes" (what --weight takes); "?" out of range. */
const char *iogp_size_weight_name(int w);
/* "by count", "by bytes" (panel titles). */
const char *iogp_size_weight_title(int w);
/* By name, case-insensitive; -1 if unknown. */
int iogp_size_weight_find(const char *name);
/* The other weight (the toggle key). */
int iogp_size_weight_step(int w);
/* Bin i of h weighted by w: its count, or the bytes in it. */
double iogp_size_bin_weight(const iogp_hist *h, size_t i, int w);
/* All of h weighted by w: its total, or iogp_hist_sum. */
double iogp_size_weight_total(const iogp_hist *h, int w);

/* ---- sizes a summary quotes ----
 * A quantile of a size histogram is the exact size in an explained bin; in
 * any other bin the bin's floor, a size that was asked for (sizes are round
 * and land on a native bin's floor), where the midpoint would be an invented
 * "1.12M". */
uint64_t iogp_size_shown(const iogp_hist *h, uint64_t v);
/* The largest size: the largest exact value of an explained last bin, else
 * that bin's floor. IOGP_ENOTFOUND when h is empty. */
int iogp_size_max(const iogp_hist *h, uint64_t *v);

/* ---- the common sizes table ---- */
#define IOGP_SIZE_TABLE_ROWS 8

typedef struct iogp_size_row {
	uint64_t size;            /* bytes; 0 in the "other" row */
	uint64_t count;           /* requests of exactly that size */
	double bytes;             /* size x count */
	double req_pct;           /* count / the histogram's requests, x 100 */
	double byte_pct;          /* bytes / iogp_hist_sum, x 100 */
	char size_text[32];       /* iogp_fmt_size: "4 KiB", "10,240 B" (cell: "4K", "10240"); "other" */
	char count_text[32];      /* exact: "3,000" (cell: "3000") */
	char req_text[16];        /* "81.0%", "<0.1%", "100%" */
	char byte_text[16];
} iogp_size_row;

typedef struct iogp_size_table {
	size_t nrows;
	iogp_size_row rows[IOGP_SIZE_TABLE_ROWS];  /* by count, most common first */
	int has_other;            /* requests of other sizes (not kept, or past the rows) */
	iogp_size_row other;      /* their count and shares, size_text "other" */
	uint64_t total;           /* requests in the histogram */
	double bytes;             /* iogp_hist_sum */
	const char *note;         /* NULL when there are rows; else the one line to show */
} iogp_size_table;

/* Column headers, in the order of the row's texts: "size", "count",
 * "% reqs", "% bytes". */
extern const char *const iogp_size_table_heads[4];

/* The max (<= IOGP_SIZE_TABLE_ROWS) most common exact sizes of h with their
 * counts and shares, texts in style (IOGP_UNITS_WIDE or IOGP_UNITS_CELL).
 * With no requests, or none of known size, nrows is 0 and note says so. */
void iogp_size_table_build(iogp_size_table *t, const iogp_hist *h, size_t max, int style);
/* A share as the table writes it: "81.0%", "100%", "<0.1%", "0%". */
int iogp_size_pct(char *buf, size_t len, double pct);
/* The table's rows as CSV ("size,count,pct_requests,pct_bytes", then one
 * line per size, bytes and exact counts; both viewers' snapshots write it as
 * size-common-read.csv, size-common-write.csv). Returns the rows written (0:
 * none, nothing written), IOGP_EIO on a write error. */
int iogp_size_table_write_csv(const iogp_hist *h, FILE *out);

#endif
