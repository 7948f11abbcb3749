/* cmd_export.c - `iogram export hist|series|access|phases|files|probe|matrix|all`:
 * CSV from a replay file. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "iogp.h"
#include "iogram_cli.h"

static void export_usage(FILE *out)
{
	fprintf(out,
	"usage: iogram export hist FILE --metric NAME [--node N | --source ID]\n"
	"                          [--bins SPEC] [-o OUT.csv]\n"
	"       iogram export series FILE --metric NAME [--step SECONDS] [-o OUT.csv]\n"
	"       iogram export access FILE [--metric NAME] [--node N | --source ID] [-o OUT.csv]\n"
	"       iogram export phases FILE [--threshold T] [--distance SECONDS]\n"
	"                                 [--layer posix|stdio|mpiio] [-o OUT.csv]\n"
	"       iogram export files FILE [--node N | --source ID] [--layer posix|stdio|mpiio]\n"
	"                                [-o OUT.csv]\n"
	"       iogram export probe FILE [-o OUT.csv]\n"
	"       iogram export matrix FILE [--by node|rank] [--node N] [-o OUT.csv]\n"
	"       iogram export all FILE -o DIR [--bins SPEC] [--step SECONDS]\n\n"
	"hist    one histogram as lower_bound,upper_bound,count (integer bounds, upper\n"
	"        bound inclusive, empty bins left out), summed over all sources, one\n"
	"        node or one source (ID in hex, as 'iogram info' shows it). With native\n"
	"        bins, a bin whose requests all had sizes the agent counted exactly is\n"
	"        written as one row per size (4096,4096,1000); other --bins write the\n"
	"        requested bins only.\n"
	"series  one row per time bin: time (ISO 8601 UTC, milliseconds), epoch_s,\n"
	"        elapsed_s, then, U the metric's unit and nodes sorted by name:\n"
	"          counter    min_node,min_U_per_s,avg_U_per_s,max_node,max_U_per_s,\n"
	"                     total_U_per_s, <node>_U_per_s ...\n"
	"          gauge      the same with time-weighted means in U (no _per_s)\n"
	"          histogram  count_per_s,p50_U,p90_U,p99_U of the deltas that ended in\n"
	"                     the bin (all sources), then <node>_p99_U per node\n"
	"        Rates and means with 3 decimals, quantiles as integers; an empty\n"
	"        field means no data in that bin.\n"
	"access  every access sample kept in the file:\n"
	"          time,epoch_s,node,source,file,op,offset_bytes,size_bytes\n"
	"phases  one row per I/O phase (SummarIO's fields, built from the per-file\n"
	"        records: runs of one file across ranks, then compatible phases that\n"
	"        start within --distance of each other's end, default 1 s; spatiality\n"
	"        by --threshold, default 0.2):\n"
	"          start,epoch_start_s,end,epoch_end_s,duration_s,operation,layer,\n"
	"          ranks,rank,bytes,requests,mean_request_bytes,max_request_bytes,\n"
	"          io_time_s,spatiality,files,fashion,file,open\n"
	"files   one row per file with a per-file record, by bytes moved (a file many\n"
	"        sources used is one row; --layer: that layer's records only):\n"
	"          file,kind,files,layer,sources,read_ops,read_bytes,\n"
	"          read_max_request_bytes,write_ops,write_bytes,\n"
	"          write_max_request_bytes,meta_ops,io_time_s\n"
	"        kind file; directory, a directory's record \"DIR/*\" whose files\n"
	"        column counts the files the agent folded into it (IOGRAM_DIR_FILES);\n"
	"        other, the files beyond the agent's limit (files: how many).\n"
	"probe   the reports of iogram probe sources, one row per report and operation:\n"
	"          time,epoch_s,node,source,operation,statistic,stat_ns,expected_ns,\n"
	"          slowdown  (slowdown over time: export series --metric\n"
	"          probe.OP.slowdown, in thousandths)\n"
	"matrix  the MPI traffic matrix (point-to-point sends of the MPI layer, by\n"
	"        destination rank) since start, node x node, or with --by rank rank x\n"
	"        rank (--node N: the ranks on node N only); one row per cell, sender\n"
	"        first, then each row's total, each column's and the grand total:\n"
	"          from_node,to_node,messages_count,bytes  (from_rank,to_rank,...)\n"
	"all     into DIR: phases.csv, files.csv and each histogram as METRIC.UNIT.hist.csv (all sources) and\n"
	"        METRIC.node-NODE.UNIT.hist.csv (each node), e.g.\n"
	"        posix.read.size.bytes.hist.csv, posix.read.latency.ns.hist.csv; each\n"
	"        counter, gauge and histogram as METRIC.series.csv; each access\n"
	"        metric as METRIC.csv. Names are made file-safe (other characters _).\n\n"
	"--bins  native | native:K | log2 | fixed:WIDTH[:OFFSET] | edges:A,B,... |\n"
	"        equal:N (N equal-width bins over the observed range). Default native.\n"
	"--step  series bin width in seconds (default 1).\n\n"
	"A damaged file is read wherever it can be; what was skipped is said on\n"
	"stderr and the export still succeeds. Exit status: 0 success, 1 runtime\n"
	"error (unreadable file, unknown metric, node or source), 2 usage error.\n\n"
	"EXAMPLES\n"
	"  iogram export hist job.iogr --metric posix.read.size --bins fixed:10000\n"
	"  iogram export hist job.iogr --metric posix.write.latency --node node007\n"
	"  iogram export series job.iogr --metric posix.read.bytes --step 10 -o read.csv\n"
	"  iogram export series job.iogr --metric posix.read.latency -o p99.csv\n"
	"  iogram export access job.iogr --node node007 -o access.csv\n"
	"  iogram export matrix job.iogr --by rank --node node007 -o ranks.csv\n"
	"  iogram export all job.iogr -o job-csv\n");
}

typedef struct export_opts {
	const char *metric, *node, *source, *bins, *out, *by;
	double step;
	int step_set;
	iogp_phase_opts ph;
} export_opts;

/* Apply a --bins spec to a native histogram. Only the native scheme keeps
 * the exact rows: other bins are what the user asked to see. */
static int apply_bins(const char *spec, const iogp_hist *in, iogp_hist *out, char *err, size_t errlen)
{
	if (!spec || !strcmp(spec, "native")) {
		iogp_hist_init(out, &in->scheme);
		return iogp_hist_copy(out, in);
	}
	int rc;
	if (!strncmp(spec, "equal:", 6)) {
		uint64_t n;
		if (iogram_parse_u64(spec + 6, &n) < 0 || n == 0 || n > 100000) {
			snprintf(err, errlen, "bad --bins '%s': equal:N needs N in 1..100000", spec);
			iogp_hist_init(out, &in->scheme);
			return IOGP_EINVAL;
		}
		if (!in->total) {
			iogp_hist_init(out, &in->scheme);
			return 0;
		}
		rc = iogp_hist_rebin_equal(out, in, (uint32_t)n);
	} else {
		iogp_bins b;
		char perr[256] = "";
		if ((rc = iogp_bins_parse(&b, spec, perr, sizeof(perr))) < 0) {
			snprintf(err, errlen, "bad --bins '%s': %s", spec, perr);
			iogp_hist_init(out, &in->scheme);
			return rc;
		}
		if (iogp_bins_equal(&b, &in->scheme)) {
			iogp_hist_init(out, &in->scheme);
			return iogp_hist_copy(out, in);
		}
		rc = iogp_hist_rebin(out, in, &b);
	}
	out->nexact = 0;   /* the requested bins' rows, not exact ones */
	return rc;
}

/* A source id in hex (with or without 0x); IOGP_EXIT_USAGE when it is not. */
static int parse_source_id(const char *arg, uint64_t *id)
{
	const char *s = arg;
	if (!strncmp(s, "0x", 2) || !strncmp(s, "0X", 2))
		s += 2;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 16);
	if (!*s || *end || errno || *s == '-' || *s == '+' || *s == ' ') {
		iogram_err("bad --source '%s': expected a hex source id", arg);
		return IOGP_EXIT_USAGE;
	}
	*id = v;
	return 0;
}

static int parse_sel(const iogp_model *m, const export_opts *o, iogp_sel *sel)
{
	memset(sel, 0, sizeof(*sel));
	if (o->node) {
		sel->kind = IOGP_SEL_NODE;
		sel->node = o->node;
		for (size_t i = 0; i < iogp_model_node_count(m); i++)
			if (!strcmp(iogp_model_node(m, i), o->node))
				return 0;
		iogram_err("no node '%s' in the file", o->node);
		return IOGP_EXIT_ERROR;
	}
	if (o->source) {
		uint64_t id;
		size_t idx;
		int rc = parse_source_id(o->source, &id);
		if (rc)
			return rc;
		if (iogp_model_source_index(m, id, &idx) < 0) {
			iogram_err("no source %016" PRIx64 " in the file", id);
			return IOGP_EXIT_ERROR;
		}
		sel->kind = IOGP_SEL_SOURCE;
		sel->source = id;
	}
	return 0;
}

static FILE *open_out(const char *path)
{
	if (!path || !strcmp(path, "-"))
		return stdout;
	FILE *f = fopen(path, "w");
	if (!f)
		iogram_err("cannot write %s: %s", path, strerror(errno));
	return f;
}

static int close_out(FILE *f, const char *path)
{
	int bad = ferror(f);
	if (f == stdout)
		bad |= fflush(f) != 0;
	else
		bad |= fclose(f) != 0;
	if (bad) {
		iogram_err("error writing %s: %s", path ? path : "standard output", strerror(errno));
		return IOGP_EXIT_ERROR;
	}
	return 0;
}

/* Write one histogram of metric/sel to path (or stdout). */
static int write_hist(const iogp_model *m, const char *metric, const iogp_sel *sel,
                      const char *bins, const char *path)
{
	iogp_hist h, out;
	char err[512] = "";
	int rc = iogp_model_hist(m, metric, sel, &h);
	if (rc < 0) {
		iogram_err("%s: %s", metric, rc == IOGP_ESCHEME ?
		           "sources use different bin schemes; pick one with --node or --source" :
		           iogp_strerror(rc));
		iogp_hist_free(&h);
		return IOGP_EXIT_ERROR;
	}
	rc = apply_bins(bins, &h, &out, err, sizeof(err));
	iogp_hist_free(&h);
	if (rc < 0) {
		iogram_err("%s", *err ? err : iogp_strerror(rc));
		iogp_hist_free(&out);
		return rc == IOGP_EINVAL ? IOGP_EXIT_USAGE : IOGP_EXIT_ERROR;
	}
	FILE *f = open_out(path);
	if (!f) {
		iogp_hist_free(&out);
		return IOGP_EXIT_ERROR;
	}
	iogp_hist_write_csv(&out, f);
	iogp_hist_free(&out);
	return close_out(f, path);
}

static int check_metric(const iogp_model *m, const char *name, int want_hist)
{
	size_t i;
	if (iogp_model_metric_find(m, name, &i) < 0) {
		iogram_err("unknown metric '%s'; the file has:", name);
		for (size_t j = 0; j < iogp_model_metric_count(m); j++) {
			iogp_metric_info mi;
			if (iogp_model_metric(m, j, &mi) == 0)
				fprintf(stderr, "  %s\n", mi.name);
		}
		return IOGP_EXIT_ERROR;
	}
	iogp_metric_info mi;
	iogp_model_metric(m, i, &mi);
	if (want_hist && mi.kind != IOGP_HISTOGRAM) {
		iogram_err("metric '%s' is not a histogram (try 'export series')", name);
		return IOGP_EXIT_ERROR;
	}
	return 0;
}

/* The file's model and the selection o names (a bad --source is a usage
 * error before the file is read); *m is the caller's to free. */
static int load_sel(const char *file, const export_opts *o, iogp_model **m, iogp_sel *sel)
{
	uint64_t id;
	if (o->source && parse_source_id(o->source, &id))
		return IOGP_EXIT_USAGE;
	int rc = iogram_load(file, m, NULL);
	if (rc)
		return rc;
	if ((rc = parse_sel(*m, o, sel)) != 0)
		iogp_model_free(*m);
	return rc;
}

static int export_hist(const char *file, const export_opts *o)
{
	if (!o->metric) {
		iogram_err("export hist: --metric is required");
		return IOGP_EXIT_USAGE;
	}
	if (o->step_set) {
		iogram_err("export hist: --step applies to series and all");
		return IOGP_EXIT_USAGE;
	}
	iogp_model *m;
	iogp_sel sel;
	int rc = load_sel(file, o, &m, &sel);
	if (rc)
		return rc;
	if ((rc = check_metric(m, o->metric, 1)) == 0)
		rc = write_hist(m, o->metric, &sel, o->bins, o->out);
	iogp_model_free(m);
	return rc;
}

/* One series CSV; says what was skipped when warn is set. */
static int write_series(const char *file, const char *metric, double step, const char *path,
                        int warn)
{
	iogp_series s;
	char err[512] = "";
	int rc = iogp_series_load(&s, file, metric, step, IOGP_SERIES_QUANTILES, err, sizeof(err));
	if (rc < 0) {
		iogram_err("%s", *err ? err : iogp_strerror(rc));
		return IOGP_EXIT_ERROR;
	}
	if (warn)
		iogram_warn_damage(file, s.file.skipped_bytes, s.file_bytes);
	if (s.kind == IOGP_ACCESS) {
		iogram_err("metric '%s' holds access samples (try 'export access')", metric);
		iogp_series_free(&s);
		return IOGP_EXIT_ERROR;
	}
	if (s.late)
		iogram_err("warning: %s: %" PRIu64 " %s deltas ended more than 10 minutes of wall time "
		           "behind newer data: counted in count_per_s, not in the quantiles",
		           file, s.late, metric);
	FILE *f = open_out(path);
	if (!f) {
		iogp_series_free(&s);
		return IOGP_EXIT_ERROR;
	}
	iogp_series_write_csv(&s, f);
	iogp_series_free(&s);
	return close_out(f, path);
}

static int export_series(const char *file, const export_opts *o)
{
	if (!o->metric) {
		iogram_err("export series: --metric is required");
		return IOGP_EXIT_USAGE;
	}
	if (o->node || o->source) {
		iogram_err("export series: --node/--source do not apply (every node is a column)");
		return IOGP_EXIT_USAGE;
	}
	if (o->bins) {
		iogram_err("export series: --bins applies to hist and all");
		return IOGP_EXIT_USAGE;
	}
	return write_series(file, o->metric, o->step, o->out, 1);
}

/* Every access sample (of metric, when given) into path; warn: say what
 * the reader skipped. */
static int write_access(const char *file, const char *metric, const char *node,
                        const uint64_t *source, const char *path, int warn)
{
	FILE *f = open_out(path);
	if (!f)
		return IOGP_EXIT_ERROR;
	iogp_access_stats st;
	char err[512] = "";
	int rc = iogp_access_export_file(file, metric, node, source, f, &st, err, sizeof(err));
	int wrc = close_out(f, path);
	if (rc < 0) {
		iogram_err("%s", *err ? err : iogp_strerror(rc));
		return IOGP_EXIT_ERROR;
	}
	if (warn)
		iogram_warn_damage(file, st.file.skipped_bytes, st.file_bytes);
	const char *what = NULL;
	if (metric && !st.metric_found)
		what = "unknown access metric";
	else if (node && !st.sources)
		what = "no node";
	else if (source && !st.sources)
		what = "no source";
	if (what) {
		if (metric && !st.metric_found)
			iogram_err("%s '%s' in %s", what, metric, file);
		else if (node)
			iogram_err("%s '%s' in %s", what, node, file);
		else
			iogram_err("%s %016" PRIx64 " in %s", what, *source, file);
		if (path && strcmp(path, "-"))
			remove(path);
		return IOGP_EXIT_ERROR;
	}
	if (!st.metric_found && warn)
		iogram_err("%s has no access samples", file);
	return wrc;
}

static int export_access(const char *file, const export_opts *o)
{
	if (o->bins || o->step_set) {
		iogram_err("export access: --bins and --step do not apply");
		return IOGP_EXIT_USAGE;
	}
	uint64_t id;
	if (o->source && parse_source_id(o->source, &id))
		return IOGP_EXIT_USAGE;
	return write_access(file, o->metric, o->node, o->source ? &id : NULL, o->out, 1);
}

/* dir/METRIC[.node-NODE].UNIT.hist.csv */
static void hist_path(char *path, size_t len, const char *dir, const iogp_metric_info *mi,
                      const char *node)
{
	char name[256], unit[64], nname[256];
	iogp_export_filename(name, sizeof(name), mi->name);
	iogp_export_filename(unit, sizeof(unit), *mi->unit ? mi->unit : "value");
	if (node) {
		iogp_export_filename(nname, sizeof(nname), node);
		snprintf(path, len, "%s/%s.node-%s.%s.hist.csv", dir, name, nname, unit);
	} else {
		snprintf(path, len, "%s/%s.%s.hist.csv", dir, name, unit);
	}
}

static int write_phases(const iogp_model *m, const iogp_phase_opts *po, const char *path)
{
	iogp_phase *p;
	size_t n;
	uint64_t dropped;
	if (iogp_model_phases(m, po, &p, &n, &dropped) < 0) {
		iogram_err("phases: out of memory");
		return IOGP_EXIT_ERROR;
	}
	if (dropped)
		fprintf(stderr, "iogram: warning: %" PRIu64 " activity runs beyond the model's limit "
		        "are left out of the phases\n", dropped);
	FILE *f = open_out(path);
	if (!f) {
		free(p);
		return IOGP_EXIT_ERROR;
	}
	iogp_phases_csv_header(f);
	for (size_t i = 0; i < n; i++)
		iogp_phases_csv_row(f, &p[i]);
	free(p);
	return close_out(f, path);
}

static int write_files(const iogp_model *m, const iogp_sel *sel, int layer, const char *path)
{
	iogp_file_info *fi;
	size_t n;
	if (iogp_model_files(m, sel, layer, &fi, &n) < 0) {
		iogram_err("files: out of memory");
		return IOGP_EXIT_ERROR;
	}
	FILE *f = open_out(path);
	if (!f) {
		iogp_model_files_free(fi);
		return IOGP_EXIT_ERROR;
	}
	iogp_files_csv_header(f);
	for (size_t i = 0; i < n; i++)
		iogp_files_csv_row(f, &fi[i]);
	iogp_model_files_free(fi);
	return close_out(f, path);
}

static int export_all(const char *file, const export_opts *o)
{
	if (!o->out || !strcmp(o->out, "-")) {
		iogram_err("export all: -o DIR is required");
		return IOGP_EXIT_USAGE;
	}
	if (o->node || o->source || o->metric) {
		iogram_err("export all: writes every metric, node and source (no --metric, --node, --source)");
		return IOGP_EXIT_USAGE;
	}
	if (mkdir(o->out, 0777) < 0 && errno != EEXIST) {
		iogram_err("cannot create %s: %s", o->out, strerror(errno));
		return IOGP_EXIT_ERROR;
	}
	iogp_model *m;
	int rc = iogram_load(file, &m, NULL);
	if (rc)
		return rc;
	size_t written = 0;
	char path[4800], name[256];
	for (size_t i = 0; i < iogp_model_metric_count(m) && !rc; i++) {
		iogp_metric_info mi;
		if (iogp_model_metric(m, i, &mi) < 0)
			continue;
		iogp_export_filename(name, sizeof(name), mi.name);
		if (mi.kind == IOGP_ACCESS) {
			snprintf(path, sizeof(path), "%s/%s.csv", o->out, name);
			if ((rc = write_access(file, mi.name, NULL, NULL, path, 0)) == 0)
				written++;
			continue;
		}
		if (mi.kind == IOGP_HISTOGRAM) {
			iogp_sel sel = { .kind = IOGP_SEL_ALL };
			hist_path(path, sizeof(path), o->out, &mi, NULL);
			if ((rc = write_hist(m, mi.name, &sel, o->bins, path)) == 0)
				written++;
			for (size_t n = 0; n < iogp_model_node_count(m) && !rc; n++) {
				sel.kind = IOGP_SEL_NODE;
				sel.node = iogp_model_node(m, n);
				hist_path(path, sizeof(path), o->out, &mi, sel.node);
				if ((rc = write_hist(m, mi.name, &sel, o->bins, path)) == 0)
					written++;
			}
		}
		if (rc)
			break;
		snprintf(path, sizeof(path), "%s/%s.series.csv", o->out, name);
		if ((rc = write_series(file, mi.name, o->step, path, 0)) == 0)
			written++;
	}
	if (!rc) {
		snprintf(path, sizeof(path), "%s/phases.csv", o->out);
		if ((rc = write_phases(m, &o->ph, path)) == 0)
			written++;
	}
	if (!rc) {
		snprintf(path, sizeof(path), "%s/files.csv", o->out);
		if ((rc = write_files(m, NULL, -1, path)) == 0)
			written++;
	}
	iogp_model_free(m);
	if (!rc)
		fprintf(stderr, "iogram: wrote %zu CSV files to %s\n", written, o->out);
	return rc;
}

static int export_phases(const char *file, const export_opts *o)
{
	if (o->metric || o->node || o->source || o->bins || o->step_set) {
		iogram_err("export phases: --metric, --node, --source, --bins and --step do not apply");
		return IOGP_EXIT_USAGE;
	}
	iogp_model *m;
	int rc = iogram_load(file, &m, NULL);
	if (rc)
		return rc;
	rc = write_phases(m, &o->ph, o->out);
	iogp_model_free(m);
	return rc;
}

static int export_files(const char *file, const export_opts *o)
{
	if (o->metric || o->bins || o->step_set) {
		iogram_err("export files: --metric, --bins and --step do not apply");
		return IOGP_EXIT_USAGE;
	}
	iogp_model *m;
	iogp_sel sel;
	int rc = load_sel(file, o, &m, &sel);
	if (rc)
		return rc;
	rc = write_files(m, &sel, o->ph.layer, o->out);
	iogp_model_free(m);
	return rc;
}

static int export_matrix(const char *file, const export_opts *o)
{
	if (o->metric || o->source || o->bins || o->step_set) {
		iogram_err("export matrix: --metric, --source, --bins and --step do not apply");
		return IOGP_EXIT_USAGE;
	}
	int by = IOGP_MATRIX_NODE;
	if (o->by && !strcmp(o->by, "rank"))
		by = IOGP_MATRIX_RANK;
	else if (o->by && strcmp(o->by, "node")) {
		iogram_err("bad --by '%s': node or rank", o->by);
		return IOGP_EXIT_USAGE;
	}
	if (o->node && by != IOGP_MATRIX_RANK) {
		iogram_err("export matrix: --node needs --by rank");
		return IOGP_EXIT_USAGE;
	}
	iogp_model *m;
	int rc = iogram_load(file, &m, NULL);
	if (rc)
		return rc;
	iogp_matrix x;
	iogp_matrix_query q = { .by = by, .node = o->node };
	int r = iogp_model_matrix(m, &q, &x);
	if (r < 0) {
		iogram_err(r == IOGP_ENOTFOUND ? "export matrix: no node '%s'" : "export matrix: %s",
		           r == IOGP_ENOTFOUND ? o->node : iogp_strerror(r));
		iogp_model_free(m);
		return IOGP_EXIT_ERROR;
	}
	if (x.n == 0)
		fprintf(stderr, "iogram: %s holds no MPI ranks\n", file);
	if (x.other_msgs)
		fprintf(stderr, "iogram: %" PRIu64 " messages (%" PRIu64 " bytes) went to ranks not "
		        "shown\n", x.other_msgs, x.other_bytes);
	FILE *f = open_out(o->out);
	rc = f ? 0 : IOGP_EXIT_ERROR;
	if (f) {
		iogp_matrix_csv(f, &x, by);
		rc = close_out(f, o->out);
	}
	iogp_matrix_free(&x);
	iogp_model_free(m);
	return rc;
}

static int export_probe(const char *file, const export_opts *o)
{
	if (o->metric || o->node || o->source || o->bins || o->step_set) {
		iogram_err("export probe: --metric, --node, --source, --bins and --step do not apply");
		return IOGP_EXIT_USAGE;
	}
	FILE *f = open_out(o->out);
	if (!f)
		return IOGP_EXIT_ERROR;
	char err[512] = "";
	uint64_t rows = 0;
	int rc = iogp_probe_write_csv(file, f, &rows, err, sizeof(err));
	if (rc < 0) {
		iogram_err("%s", *err ? err : iogp_strerror(rc));
		if (f != stdout)
			fclose(f);
		return IOGP_EXIT_ERROR;
	}
	if (rows == 0)
		fprintf(stderr, "iogram: %s holds no iogram probe reports\n", file);
	return close_out(f, o->out);
}

static int export_exec(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "metric", required_argument, NULL, 'm' },
		{ "node", required_argument, NULL, 'n' },
		{ "source", required_argument, NULL, 's' },
		{ "bins", required_argument, NULL, 'b' },
		{ "step", required_argument, NULL, 't' },
		{ "output", required_argument, NULL, 'o' },
		{ "threshold", required_argument, NULL, 'T' },
		{ "distance", required_argument, NULL, 'D' },
		{ "layer", required_argument, NULL, 'L' },
		{ "by", required_argument, NULL, 'B' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	export_opts o = { .step = 1.0, .ph = { .layer = -1 } };
	double d;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "m:n:s:b:t:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'm': o.metric = optarg; break;
		case 'n': o.node = optarg; break;
		case 's': o.source = optarg; break;
		case 'b': o.bins = optarg; break;
		case 'o': o.out = optarg; break;
		case 'B': o.by = optarg; break;
		case 't':
			if (iogram_parse_double(optarg, &o.step) < 0 || o.step < 0.001 || o.step > 86400) {
				iogram_err("bad --step '%s': seconds between 0.001 and 86400", optarg);
				return IOGP_EXIT_USAGE;
			}
			o.step_set = 1;
			break;
		case 'T':
			if (iogram_parse_double(optarg, &d) < 0 || !(d > 0 && d < 1)) {
				iogram_err("bad --threshold '%s': a share between 0 and 1 (0.2)", optarg);
				return IOGP_EXIT_USAGE;
			}
			o.ph.threshold = d;
			break;
		case 'D':
			if (iogram_parse_double(optarg, &d) < 0 || !(d >= 0.001 && d <= 86400)) {
				iogram_err("bad --distance '%s': seconds between 0.001 and 86400", optarg);
				return IOGP_EXIT_USAGE;
			}
			o.ph.distance_ns = (uint64_t)(d * 1e9);
			break;
		case 'L':
			if (!strcmp(optarg, "posix"))
				o.ph.layer = IOGP_FR_POSIX;
			else if (!strcmp(optarg, "stdio"))
				o.ph.layer = IOGP_FR_STDIO;
			else if (!strcmp(optarg, "mpiio"))
				o.ph.layer = IOGP_FR_MPIIO;
			else {
				iogram_err("bad --layer '%s': posix, stdio or mpiio", optarg);
				return IOGP_EXIT_USAGE;
			}
			break;
		case 'h':
			export_usage(stdout);
			return IOGP_EXIT_OK;
		default:
			export_usage(stderr);
			return IOGP_EXIT_USAGE;
		}
	}
	if (argc - optind != 2) {
		iogram_err("export: expected WHAT (hist, series, access, phases, files, probe, matrix, all) and FILE");
		export_usage(stderr);
		return IOGP_EXIT_USAGE;
	}
	const char *what = argv[optind], *file = argv[optind + 1];
	if (o.node && o.source) {
		iogram_err("--node and --source exclude each other");
		return IOGP_EXIT_USAGE;
	}
	if (o.bins && strncmp(o.bins, "equal:", 6)) {
		iogp_bins b;
		char err[256] = "";
		if (iogp_bins_parse(&b, o.bins, err, sizeof(err)) < 0) {
			iogram_err("bad --bins '%s': %s", o.bins, err);
			return IOGP_EXIT_USAGE;
		}
	}
	if (!strcmp(what, "hist"))
		return export_hist(file, &o);
	if (!strcmp(what, "series"))
		return export_series(file, &o);
	if (!strcmp(what, "access"))
		return export_access(file, &o);
	if (!strcmp(what, "phases"))
		return export_phases(file, &o);
	if (!strcmp(what, "files"))
		return export_files(file, &o);
	if (!strcmp(what, "probe"))
		return export_probe(file, &o);
	if (!strcmp(what, "matrix"))
		return export_matrix(file, &o);
	if (!strcmp(what, "all"))
		return export_all(file, &o);
	iogram_err("export: unknown kind '%s' (hist, series, access, phases, files, probe, matrix or all)", what);
	return IOGP_EXIT_USAGE;
}

const struct iogram_cmd iogram_cmd_export = {
	.name = "export",
	.summary = "write CSV: a histogram, a per-node series, access samples, or everything",
	.exec = export_exec,
};
