/* iogp_probe_view.h - slowdown probes as both viewers show them (panel 0,
 * "slowdown"): which probe a view shows, each operation's factor as people
 * read it, the log axis the lines are drawn on, whether probes on many
 * nodes see the same slowdown, and the panel's CSV. iogram-top, iogram-view
 * and plot/ build on it (not installed). The probes themselves are the
 * model's (iogp_model_probes, iogp_model_probe_history). */
#ifndef IOGP_PROBE_VIEW_H
#define IOGP_PROBE_VIEW_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "iogp_model.h"

#define IOGP_PROBE_VIEW_MAX 256   /* probes a view lists (side by side) */

/* What a view shows: every probe (sorted by node) and the one drawn. */
typedef struct iogp_probe_set {
	iogp_probe p[IOGP_PROBE_VIEW_MAX];
	size_t n;          /* listed, <= IOGP_PROBE_VIEW_MAX */
	size_t total;      /* probes in the model */
	int shown;         /* index into p of the drawn probe, -1 when none */
	int worst;         /* 1: chosen as the one with the largest factor now */
} iogp_probe_set;

/* Fill set from m. The drawn probe is the first on node (when not NULL or
 * "" and it has one), else the one with the largest current factor. */
void iogp_probe_set_get(iogp_probe_set *set, const iogp_model *m, const char *node);

/* A factor in thousandths as people read it: "1.00x", "12.3x", "140x";
 * "-" when there is none (< 0). */
void iogp_probe_factor(char *buf, size_t len, int64_t milli);

/* How bad a factor is: 0 normal (< 1.5x), 1 slow (< 3x), 2 very slow;
 * -1 none. Viewers colour by it. */
int iogp_probe_level(int64_t milli);

/* The title's words: "median / median of 14400 s" (statistic against
 * expectation), and where: "node03 /scratch (ext4)". */
void iogp_probe_title(char *buf, size_t len, const iogp_probe *p);
void iogp_probe_where(char *buf, size_t len, const iogp_probe *p);

/* A log axis over factors: from a power of ten at or below the smallest
 * to one at or above the largest, always holding 1x and at least 0.5x-2x;
 * ticks at 1-2-5 steps that fit. */
#define IOGP_PROBE_MAX_TICKS 16
typedef struct iogp_probe_axis {
	double lo, hi;               /* factors at the bottom and the top */
	double tick[IOGP_PROBE_MAX_TICKS];
	int nticks;
} iogp_probe_axis;
void iogp_probe_axis_fit(iogp_probe_axis *a, double min, double max, int max_ticks);
/* Where factor v falls: 0 at lo, 1 at hi (clamped). */
double iogp_probe_axis_pos(const iogp_probe_axis *a, double v);
/* A tick's label: "0.5x", "1x", "10x", "1000x". */
void iogp_probe_tick_label(char *buf, size_t len, double v);

/* Do hosts see the same slowdown? For operation op across the listed
 * probes that have a factor for it: how many, the smallest, median and
 * largest factor, and the probe that stands out most. Hosts agree when
 * every factor is within 1.5x of the median, or within 0.25 of it. */
typedef struct iogp_probe_agree {
	uint32_t n;                  /* probes with a factor for op */
	double min, median, max;     /* factors (1.0 = normal) */
	int agree;                   /* 1 agree, 0 differ, -1 fewer than two */
	int odd;                     /* index into set->p of the farthest from the median, -1 */
	char text[160];              /* "4 nodes agree: 1.0x-1.2x" / "differ: node03 8.4x, median 1.1x" */
} iogp_probe_agree;
void iogp_probe_agreement(const iogp_probe_set *set, const char *op, iogp_probe_agree *out);

/* Operations across the listed probes, in order of first appearance (the
 * prober's order: read, write, create, stat, smallread, delete); returns
 * how many (<= max). Pointers into set. */
size_t iogp_probe_ops(const iogp_probe_set *set, const char **ops, size_t max);
/* Index of op in probe p, -1 when it has none. */
int iogp_probe_op_index(const iogp_probe *p, const char *op);

/* The panel's CSV: a row per probe and operation, now:
 * node,dir,fs,op,statistic,expected_by,stat_ns,expected_ns,slowdown.
 * 0 or IOGP_EIO. */
int iogp_probe_panel_csv(FILE *out, const iogp_probe_set *set);

#endif
