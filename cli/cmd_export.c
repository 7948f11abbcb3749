/* cmd_export.c - `iogram export hist|series|all`: CSV from a replay file. */
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
	"       iogram export all FILE -o DIR [--bins SPEC] [--step SECONDS]\n\n"
	"hist    one histogram as lower_bound,upper_bound,count (upper bound\n"
	"        inclusive, empty bins left out), summed over all sources, one node\n"
	"        or one source (ID in hex, as 'iogram info' shows it).\n"
	"series  per-node time series, sh5util style: time,elapsed_s,min_node,min,\n"
	"        avg,max_node,max,total, then one column per node. Counters and\n"
	"        histograms give a rate per second, gauges a time-weighted mean.\n"
	"all     every histogram (all sources and per node) and every series into DIR.\n\n"
	"--bins  native | native:K | log2 | fixed:WIDTH[:OFFSET] | edges:A,B,... |\n"
	"        equal:N (N equal-width bins over the observed range). Default native.\n"
	"--step  series bin width in seconds (default 1).\n\n"
	"EXAMPLES\n"
	"  iogram export hist job.iogr --metric posix.read.size --bins fixed:10000\n"
	"  iogram export hist job.iogr --metric posix.write.latency --node node007\n"
	"  iogram export series job.iogr --metric posix.read.bytes --step 10 -o read.csv\n"
	"  iogram export all job.iogr -o job-csv\n");
}

typedef struct export_opts {
	const char *metric, *node, *source, *bins, *out;
	double step;
} export_opts;

/* Apply a --bins spec to a native histogram. */
static int apply_bins(const char *spec, const iogp_hist *in, iogp_hist *out, char *err, size_t errlen)
{
	if (!spec || !strcmp(spec, "native")) {
		iogp_hist_init(out, &in->scheme);
		return iogp_hist_copy(out, in);
	}
	if (!strncmp(spec, "equal:", 6)) {
		uint64_t n;
		if (iogram_parse_u64(spec + 6, &n) < 0 || n == 0 || n > 100000) {
			snprintf(err, errlen, "bad --bins '%s': equal:N needs N in 1..100000", spec);
			return IOGP_EINVAL;
		}
		if (!in->total) {
			iogp_hist_init(out, &in->scheme);
			return 0;
		}
		return iogp_hist_rebin_equal(out, in, (uint32_t)n);
	}
	iogp_bins b;
	char perr[256] = "";
	int rc = iogp_bins_parse(&b, spec, perr, sizeof(perr));
	if (rc < 0) {
		snprintf(err, errlen, "bad --bins '%s': %s", spec, perr);
		return rc;
	}
	return iogp_hist_rebin(out, in, &b);
}

static int parse_sel(const iogp_model *m, const export_opts *o, iogp_sel *sel, char *err, size_t errlen)
{
	memset(sel, 0, sizeof(*sel));
	if (o->node && o->source) {
		snprintf(err, errlen, "--node and --source exclude each other");
		return IOGP_EXIT_USAGE;
	}
	if (o->node) {
		sel->kind = IOGP_SEL_NODE;
		sel->node = o->node;
		for (size_t i = 0; i < iogp_model_node_count(m); i++)
			if (!strcmp(iogp_model_node(m, i), o->node))
				return 0;
		snprintf(err, errlen, "no node '%s' in the file", o->node);
		return IOGP_EXIT_ERROR;
	}
	if (o->source) {
		const char *s = o->source;
		if (!strncmp(s, "0x", 2) || !strncmp(s, "0X", 2))
			s += 2;
		char *end;
		errno = 0;
		unsigned long long id = strtoull(s, &end, 16);
		if (!*s || *end || errno || *s == '-' || *s == '+') {
			snprintf(err, errlen, "bad --source '%s': expected a hex source id", o->source);
			return IOGP_EXIT_USAGE;
		}
		size_t idx;
		if (iogp_model_source_index(m, id, &idx) < 0) {
			snprintf(err, errlen, "no source %016llx in the file", id);
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
		return IOGP_EXIT_ERROR;
	}
	rc = apply_bins(bins, &h, &out, err, sizeof(err));
	iogp_hist_free(&h);
	if (rc < 0) {
		iogram_err("%s", *err ? err : iogp_strerror(rc));
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

static int check_metric(const iogp_model *m, const char *name, iogp_metric_kind want_hist)
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

static int export_hist(const char *file, const export_opts *o)
{
	if (!o->metric) {
		iogram_err("export hist: --metric is required");
		return IOGP_EXIT_USAGE;
	}
	iogp_model *m;
	int rc = iogram_load(file, &m, NULL);
	if (rc)
		return rc;
	iogp_sel sel;
	char err[256] = "";
	if ((rc = parse_sel(m, o, &sel, err, sizeof(err))) != 0)
		iogram_err("%s", err);
	else if ((rc = check_metric(m, o->metric, IOGP_HISTOGRAM)) == 0)
		rc = write_hist(m, o->metric, &sel, o->bins, o->out);
	iogp_model_free(m);
	return rc;
}

static int write_series(const char *file, const char *metric, double step, const char *path)
{
	iogp_series s;
	char err[512] = "";
	int rc = iogp_series_from_file(&s, file, metric, step, err, sizeof(err));
	if (rc < 0) {
		iogram_err("%s", *err ? err : iogp_strerror(rc));
		return IOGP_EXIT_ERROR;
	}
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
	return write_series(file, o->metric, o->step, o->out);
}

static int export_all(const char *file, const export_opts *o)
{
	if (!o->out || !strcmp(o->out, "-")) {
		iogram_err("export all: -o DIR is required");
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
	char path[4096], name[256], nname[256];
	for (size_t i = 0; i < iogp_model_metric_count(m) && !rc; i++) {
		iogp_metric_info mi;
		if (iogp_model_metric(m, i, &mi) < 0 || mi.kind == IOGP_ACCESS)
			continue;
		iogp_export_filename(name, sizeof(name), mi.name);
		if (mi.kind == IOGP_HISTOGRAM) {
			iogp_sel sel = { .kind = IOGP_SEL_ALL };
			snprintf(path, sizeof(path), "%s/%s.hist.csv", o->out, name);
			if ((rc = write_hist(m, mi.name, &sel, o->bins, path)) == 0)
				written++;
			for (size_t n = 0; n < iogp_model_node_count(m) && !rc; n++) {
				sel.kind = IOGP_SEL_NODE;
				sel.node = iogp_model_node(m, n);
				iogp_export_filename(nname, sizeof(nname), sel.node);
				snprintf(path, sizeof(path), "%s/%s.node-%s.hist.csv", o->out, name, nname);
				if ((rc = write_hist(m, mi.name, &sel, o->bins, path)) == 0)
					written++;
			}
		}
		if (rc)
			break;
		snprintf(path, sizeof(path), "%s/%s.series.csv", o->out, name);
		if ((rc = write_series(file, mi.name, o->step, path)) == 0)
			written++;
	}
	iogp_model_free(m);
	if (!rc)
		fprintf(stderr, "iogram: wrote %zu CSV files to %s\n", written, o->out);
	return rc;
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
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	export_opts o = { .step = 1.0 };
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "m:n:s:b:t:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'm': o.metric = optarg; break;
		case 'n': o.node = optarg; break;
		case 's': o.source = optarg; break;
		case 'b': o.bins = optarg; break;
		case 'o': o.out = optarg; break;
		case 't':
			if (iogram_parse_double(optarg, &o.step) < 0 || o.step < 0.001 || o.step > 86400) {
				iogram_err("bad --step '%s': seconds between 0.001 and 86400", optarg);
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
		iogram_err("export: expected WHAT (hist, series, all) and FILE");
		export_usage(stderr);
		return IOGP_EXIT_USAGE;
	}
	const char *what = argv[optind], *file = argv[optind + 1];
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
	if (!strcmp(what, "all"))
		return export_all(file, &o);
	iogram_err("export: unknown kind '%s' (hist, series or all)", what);
	return IOGP_EXIT_USAGE;
}

const struct iogram_cmd iogram_cmd_export = {
	.name = "export",
	.summary = "write CSV: a histogram, a per-node series, or everything",
	.exec = export_exec,
};
