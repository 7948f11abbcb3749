/* iogp_export.h - reading a whole replay file into a model, per-node time
 * series in the spirit of Slurm's sh5util, and the CSV writers built on them. */
#ifndef IOGP_EXPORT_H
#define IOGP_EXPORT_H

#include "iogp_api.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "iogp_model.h"
#include "iogp_replay.h"

typedef struct iogp_load_stats {
	uint64_t records;
	uint64_t by_kind[5];          /* indexed by iogp_kind; [0] = unknown kinds */
	uint64_t keyframe_records;
	uint64_t bad;                 /* records that did not decode */
	uint64_t unknown;             /* DELTAs for sources/metrics not yet known */
	iogp_replay_info info;
	iogp_replay_rstats file;
} iogp_load_stats;

/* Apply every record of path to m (keyframe records too: they are snapshots
 * and resync sources after damage). */
IOGP_API int iogp_load_file(const char *path, iogp_model *m, iogp_load_stats *st,
                   char *err, size_t errlen);

/* Per-node series of one metric on fixed bins of step_s seconds of wall time.
 * Counters and histograms give a rate per second (histograms: events/s);
 * gauges a time-weighted mean. Each DELTA's increment is spread over its own
 * interval [wall - (t1 - t0), wall] and given to bins by overlap, so the sum
 * of rate x step over all bins equals the increments counted. */
typedef struct iogp_series {
	double step_s;
	uint64_t origin_ns;    /* wall time of bin 0's start */
	size_t nbins, cap;
	size_t nnodes;
	char **nodes;
	double **v;            /* v[node][bin] */
	uint8_t **covered;     /* covered[node][bin]: some interval overlapped it */
	iogp_metric_kind kind;
	char unit[32];
	uint64_t intervals;    /* DELTAs used */
} iogp_series;

IOGP_API int iogp_series_from_file(iogp_series *s, const char *path, const char *metric,
                          double step_s, char *err, size_t errlen);
IOGP_API void iogp_series_free(iogp_series *s);
/* CSV: time,elapsed_s,min_node,min,avg,max_node,max,total,<node>... ; min/avg/
 * max over the nodes that have data in the bin; a node without data is empty. */
IOGP_API int iogp_series_write_csv(const iogp_series *s, FILE *out);

/* The files of an export or snapshot directory: open dir/name for writing,
 * adding name to the space-separated list names (NULL: no list); close it,
 * 0 or -1 when anything failed on the way. */
IOGP_API FILE *iogp_export_open(const char *dir, const char *name, char *names, size_t nlen);
IOGP_API int iogp_export_close(FILE *f);
/* Access samples as CSV: "time,op,offset,size", time in wall seconds with
 * nanoseconds, op "read" or "write". */
IOGP_API int iogp_access_csv_header(FILE *out);
IOGP_API int iogp_access_csv_row(FILE *out, uint64_t wall_ns, int op, uint64_t offset, uint64_t size);

/* Make a metric name safe as a file name component. */
IOGP_API void iogp_export_filename(char *dst, size_t len, const char *metric);

#endif
