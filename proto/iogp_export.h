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

/* Per-node series of one metric on fixed bins of step_s seconds of wall time
 * (bins aligned to multiples of the step).
 * Counters and histograms give a rate per second (histograms: events/s);
 * gauges a time-weighted mean. Each DELTA's increment is spread over its own
 * interval [wall - (t1 - t0), wall] and given to bins by overlap, so the sum
 * of rate x step over all bins equals the increments counted. A DELTA whose
 * sequence number repeats or precedes its source's last is a duplicate and
 * left out.
 *
 * With IOGP_SERIES_QUANTILES a histogram metric gives, besides its events/s
 * per node (v), the p50/p90/p99 of the histogram deltas that ended in each
 * bin (the bin holding the interval's last nanosecond), merged over all
 * sources, and each node's p99 (node_p99): quantiles of the merged deltas by
 * iogp_hist_quantile, for a "bytes" histogram by iogp_hist_quantile_size (as
 * iogram info), exact values used where a bin is explained. A source whose
 * scheme differs from the first one seen is re-binned into it. Deltas are
 * held per node until the newest data is 10 minutes of wall time (or 4
 * bins) past their bin, or 256 MiB are held; a delta ending in a bin
 * already written is left out of the quantiles and counted in late.
 * Counters and gauges are unaffected by the flag.
 *
 * Nodes are sorted by name (byte order). nbins x nnodes is bounded (what
 * the cells hold stays within 1.5 GiB: 9 bytes a cell, 18 with quantiles;
 * at most 2^24 bins): beyond, IOGP_ELIMIT with a message asking for a
 * larger step. */
enum { IOGP_SERIES_QUANTILES = 1 };

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
	/* Fields below are 0/NULL for a series filled by hand: the CSV is then
	 * the rate/mean form. */
	int quantiles;         /* 1: histogram quantiles (IOGP_SERIES_QUANTILES) */
	uint64_t *q[3];        /* q[k][bin]: p50, p90, p99 over all sources */
	uint8_t *q_has;        /* q_has[bin]: some delta with events ended in the bin */
	uint64_t **node_p99;   /* node_p99[node][bin] */
	uint8_t **node_p99_has;
	uint64_t late;         /* deltas left out of the quantiles (above) */
	uint64_t duplicates;   /* DELTAs left out as repeated sequence numbers */
	iogp_replay_rstats file; /* the reader's figures (skipped_bytes: damage) */
	uint64_t file_bytes;
} iogp_series;

IOGP_API int iogp_series_from_file(iogp_series *s, const char *path, const char *metric,
                          double step_s, char *err, size_t errlen);
/* As iogp_series_from_file, with IOGP_SERIES_* flags. */
IOGP_API int iogp_series_load(iogp_series *s, const char *path, const char *metric,
                     double step_s, int flags, char *err, size_t errlen);
IOGP_API void iogp_series_free(iogp_series *s);
/* CSV, one row per bin; times are the bin's start: "time" ISO 8601 UTC with
 * milliseconds (2026-11-18T00:00:01.000Z), "epoch_s" the same instant in
 * seconds since the epoch (3 decimals), "elapsed_s" since bin 0 (3 decimals).
 * Node columns in byte order of the name, whatever the order in s. Rate and
 * mean form, U the unit: counters <unit>_per_s (count_per_s when the unit is
 * empty), histograms count_per_s, gauges <unit> (value when empty):
 *   time,epoch_s,elapsed_s,min_node,min_U,avg_U,max_node,max_U,total_U,<node>_U...
 * min/avg/max over the nodes with data in the bin (ties: the first in name
 * order), total their sum; a node without data is empty. Quantile form, U the
 * histogram's unit:
 *   time,epoch_s,elapsed_s,count_per_s,p50_U,p90_U,p99_U,<node>_p99_U...
 * count_per_s the events/s of all nodes (empty when none had data),
 * quantiles empty where no delta with events ended in the bin. Rates and
 * means with 3 decimals, quantiles as integers. */
IOGP_API int iogp_series_write_csv(const iogp_series *s, FILE *out);

/* The files of an export or snapshot directory: open dir/name for writing,
 * adding name to the space-separated list names (NULL: no list); close it,
 * 0 or -1 when anything failed on the way. */
IOGP_API FILE *iogp_export_open(const char *dir, const char *name, char *names, size_t nlen);
IOGP_API int iogp_export_close(FILE *f);

/* Access samples as CSV, one row per sample:
 *   time,epoch_s,file,op,offset_bytes,size_bytes
 * time ISO 8601 UTC with milliseconds, epoch_s seconds with 9 decimals (the
 * sample's nanosecond), file the path from the source's file table (empty
 * when unknown, NULL allowed), op "read" or "write". */
IOGP_API int iogp_access_csv_header(FILE *out);
IOGP_API int iogp_access_csv_row(FILE *out, uint64_t wall_ns, const char *path, int op,
                                 uint64_t offset, uint64_t size);
/* Every access sample in a replay file (iogram export access), in file
 * order, with its node and source:
 *   time,epoch_s,node,source,file,op,offset_bytes,size_bytes
 * source as 16 hex digits; a file missing from the source's table is
 * "#<id in hex>". Only samples of metric (NULL: any access metric), of
 * sources on node (NULL: any) or of source *source (NULL: any); duplicate
 * DELTAs are left out as in the series. */
typedef struct iogp_access_stats {
	uint64_t samples;        /* rows written */
	uint64_t sources;        /* sources that passed the filter */
	uint64_t unknown_files;  /* samples whose file was not in the table */
	int metric_found;        /* some source declared metric (or any access metric) */
	iogp_replay_rstats file;
	uint64_t file_bytes;
} iogp_access_stats;
IOGP_API int iogp_access_export_file(const char *path, const char *metric, const char *node,
                                     const uint64_t *source, FILE *out, iogp_access_stats *st,
                                     char *err, size_t errlen);

/* Time as the CSVs write it: "2026-11-18T00:00:01.000Z" (milliseconds,
 * rounded down). */
IOGP_API void iogp_fmt_iso_ms(char *buf, size_t len, uint64_t wall_ns);

/* str as one CSV field: quoted (quotes doubled) when it holds a comma, a
 * quote or a line break. */
IOGP_API void iogp_csv_field(FILE *out, const char *str);
/* Make a metric name safe as a file name component. */
IOGP_API void iogp_export_filename(char *dst, size_t len, const char *metric);

/* I/O phases (iogp_model_phases) as CSV, one row per phase:
 * start,epoch_start_s,end,epoch_end_s,duration_s,operation,layer,ranks,rank,
 * bytes,requests,mean_request_bytes,max_request_bytes,io_time_s,spatiality,
 * files,fashion,file,open (rank empty unless one; file empty unless one). */
IOGP_API int iogp_phases_csv_header(FILE *out);
IOGP_API int iogp_phases_csv_row(FILE *out, const iogp_phase *p);

/* Per-file records (iogp_model_files) as CSV, one row per entry:
 * file,kind,files,layer,sources,read_ops,read_bytes,read_max_request_bytes,
 * write_ops,write_bytes,write_max_request_bytes,meta_ops,io_time_s. kind:
 * "file" (files 1), "directory" (a directory's record, "<dir>/\*": files =
 * the files it folded) or "other" (beyond the sources' limits, file empty:
 * files = how many). io_time_s: inside reads, writes and metadata calls. */
IOGP_API int iogp_files_csv_header(FILE *out);
IOGP_API int iogp_files_csv_row(FILE *out, const iogp_file_info *f);

/* The MPI traffic matrix (iogp_model_matrix; by: IOGP_MATRIX_NODE or _RANK)
 * as CSV: from_node,to_node,messages_count,bytes (from_rank,to_rank,... by
 * rank), one row per cell (row = sender, in the matrix's order), then each
 * row's total (to = "total"), each column's (from = "total") and the grand
 * total ("total,total"). */
IOGP_API int iogp_matrix_csv(FILE *out, const iogp_matrix *x, int by);

/* The reports of `iogram probe` sources in the replay file path, as CSV:
 * time,epoch_s,node,source,operation,statistic,stat_ns,expected_ns,slowdown
 * (one row per report and operation, from the probe.OP.{stat,expected,
 * slowdown} gauges; a gauge a DELTA does not repeat keeps its last value).
 * *rows gets the number of rows. */
IOGP_API int iogp_probe_write_csv(const char *path, FILE *out, uint64_t *rows, char *err,
                                  size_t errlen);

#endif
