/* cmd_probe.c - `iogram probe DIR`: the file system's slowdown as a user
 * feels it. Every interval the six operations of probe.c run one after the
 * other; every report their statistic (median by default) is set against
 * the expected response time (a baseline file's, or the median of a sliding
 * window) and the ratio is the slowdown. The prober is an iogram source
 * like any other (libiogram's C API): latency histograms, and gauges with
 * each report's statistic, expectation and slowdown, stream live, record,
 * replay and export. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "iogram.h"
#include "iogram_cli.h"
#include "probe.h"

static void probe_usage(FILE *out)
{
	fprintf(out,
	"usage: iogram probe DIR [--interval S] [--report S] [--statistic median|p90|p95|p99|mean]\n"
	"                    [--window DURATION | --baseline FILE] [--save-baseline FILE]\n"
	"                    [--file-size SIZE] [--pool N] [--direct] [--count N]\n"
	"                    [--endpoint E] [--output F] [--node NAME] [--quiet]\n\n"
	"Probes the file system DIR lives on as a user feels it (Kunkel & Betke): every\n"
	"interval (default 1 s), one after the other, a 1 MiB read and a 1 MiB write at\n"
	"random aligned offsets of a large file, and the create, stat, read and delete\n"
	"of small (3,901-byte) files of a pool, each timed. Every report (default 60 s,\n"
	"that is report/interval rounds, also when rounds catch up after a stall)\n"
	"the chosen statistic of each operation's response times is divided by the\n"
	"expected one: the median over a sliding --window (default 4h), or the values\n"
	"of a --baseline file written by --save-baseline during a quiet period. A\n"
	"factor of 1 is normal, 10 means ten times slower than usual.\n\n"
	"It is an iogram source: probe.OP.latency histograms and probe.OP.{stat,\n"
	"expected,slowdown} gauges (slowdown in thousandths) stream to --endpoint and\n"
	"record to --output; iogram export probe FILE lists the reports.\n\n"
	"--file-size  the large file (default 256M; K, M, G suffixes). Make it larger\n"
	"             than the node's memory to read from storage, not the page cache,\n"
	"             or use --direct (O_DIRECT, where the file system supports it).\n"
	"--pool       small files kept (default 64).\n"
	"--count N    stop after N intervals (default: until SIGINT or SIGTERM).\n"
	"Its files live in DIR/.iogram-probe.HOST.PID and are removed on exit; a DIR it\n"
	"cannot write, or one with less than twice the space it needs, is refused.\n\n"
	"EXAMPLES\n"
	"  iogram probe /scratch/$USER --output probe-%%h.iogr\n"
	"  iogram probe /work --interval 1 --report 600 --window 4h --statistic p90\n");
}

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* "64M", "1G", "4096": bytes. */
static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *s == '-')
		return -1;
	int sh = 0;
	switch (*end) {
	case 'k': case 'K': sh = 10; end++; break;
	case 'm': case 'M': sh = 20; end++; break;
	case 'g': case 'G': sh = 30; end++; break;
	case 't': case 'T': sh = 40; end++; break;
	default: break;
	}
	if (*end == 'i' && end[1] == 'B')
		end += 2;
	if (*end || (sh && v > (UINT64_MAX >> sh)))
		return -1;
	*out = (uint64_t)v << sh;
	return 0;
}

/* "30", "30s", "10m", "4h", "1d": seconds. */
static int parse_duration(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || !(v > 0))
		return -1;
	double mul = !strcmp(end, "") || !strcmp(end, "s") ? 1 : !strcmp(end, "m") ? 60 :
	             !strcmp(end, "h") ? 3600 : !strcmp(end, "d") ? 86400 : -1;
	if (mul < 0)
		return -1;
	*out = v * mul;
	return 0;
}

/* A baseline file: lines "OP,EXPECTED_NS" (a header line allowed). */
static int load_baseline(const char *path, uint64_t expect[PROBE_NOPS])
{
	FILE *f = fopen(path, "r");
	if (!f) {
		iogram_err("--baseline %s: %s", path, strerror(errno));
		return -1;
	}
	char line[256], op[64];
	unsigned long long v;
	int lines = 0;
	while (fgets(line, sizeof(line), f) && lines++ < 1000) {
		if (sscanf(line, "%63[^,],%llu", op, &v) != 2)
			continue;
		for (int k = 0; k < PROBE_NOPS; k++)
			if (!strcmp(op, probe_op_name[k]) && v > 0)
				expect[k] = v;
	}
	fclose(f);
	for (int k = 0; k < PROBE_NOPS; k++)
		if (!expect[k]) {
			iogram_err("--baseline %s: no expected time for '%s' (lines OP,NS)", path,
			           probe_op_name[k]);
			return -1;
		}
	return 0;
}

static int save_baseline(const char *path, const uint64_t expect[PROBE_NOPS])
{
	FILE *f = fopen(path, "w");
	if (!f) {
		iogram_err("--save-baseline %s: %s", path, strerror(errno));
		return -1;
	}
	fprintf(f, "operation,expected_ns\n");
	for (int k = 0; k < PROBE_NOPS; k++)
		fprintf(f, "%s,%" PRIu64 "\n", probe_op_name[k], expect[k]);
	return fclose(f) == 0 ? 0 : -1;
}

struct probe_opts {
	const char *dir, *endpoint, *output, *node, *baseline, *save;
	double interval, report, window;
	uint64_t file_size, count;
	uint32_t pool;
	int stat, direct, quiet;
};

static uint64_t now_mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_until(uint64_t t)
{
	uint64_t n = now_mono();
	if (t <= n)
		return;
	struct timespec ts = { (time_t)((t - n) / 1000000000ull), (long)((t - n) % 1000000000ull) };
	nanosleep(&ts, NULL);   /* a signal ends it early: the loop looks at stop */
}

static int run_probe(const struct probe_opts *o)
{
	uint64_t expect_base[PROBE_NOPS] = { 0 };
	if (o->baseline && load_baseline(o->baseline, expect_base) < 0)
		return IOGP_EXIT_USAGE;
	iog_config cfg = { .endpoint = o->endpoint, .output = o->output, .node = o->node,
	                   .interval_ms = 1000 };
	iog_init(&cfg);
	char fstype[64], err[4400];
	probe_fstype(o->dir, fstype, sizeof(fstype));
	iog_label("role", "probe");
	iog_label("probe.dir", o->dir);
	iog_label("probe.fs", fstype);
	iog_label("probe.statistic", probe_stat_name[o->stat]);
	char win[64];
	if (o->baseline)
		snprintf(win, sizeof(win), "baseline %s", o->baseline);
	else
		snprintf(win, sizeof(win), "median of %.0f s", o->window);
	iog_label("probe.expected", win);
	iog_metric *lat[PROBE_NOPS], *gs[PROBE_NOPS], *ge[PROBE_NOPS], *gf[PROBE_NOPS], *errs;
	char name[96];
	for (int k = 0; k < PROBE_NOPS; k++) {
		snprintf(name, sizeof(name), "probe.%s.latency", probe_op_name[k]);
		lat[k] = iog_histogram(name, "ns", NULL);
		snprintf(name, sizeof(name), "probe.%s.stat", probe_op_name[k]);
		gs[k] = iog_gauge(name, "ns");
		snprintf(name, sizeof(name), "probe.%s.expected", probe_op_name[k]);
		ge[k] = iog_gauge(name, "ns");
		snprintf(name, sizeof(name), "probe.%s.slowdown", probe_op_name[k]);
		gf[k] = iog_gauge(name, "milli");
	}
	errs = iog_counter("probe.errors", "ops");

	probe_files pf;
	if (probe_setup(&pf, o->dir, o->file_size, o->pool, o->direct, err, sizeof(err)) < 0) {
		iogram_err("probe: %s", err);
		iog_shutdown();
		return IOGP_EXIT_ERROR;
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	uint64_t iv = (uint64_t)(o->interval * 1e9);
	uint64_t win_ns = (uint64_t)(o->window * 1e9);
	/* a report every per_report rounds: on the clock while rounds keep
	 * their schedule, and when they catch up after a stall (they run back
	 * to back then) each report still holds the same number of rounds */
	size_t per_report = (size_t)(o->report / o->interval + 0.5);
	if (per_report < 1)
		per_report = 1;
	size_t win_cap = (size_t)(o->window / o->interval) + 2;
	if (win_cap > (1u << 22))
		win_cap = 1u << 22;
	probe_ring ring[PROBE_NOPS];
	uint64_t *cur[PROBE_NOPS], *scratch = malloc(win_cap * sizeof(*scratch));
	size_t ncur[PROBE_NOPS] = { 0 };
	int rc = scratch ? IOGP_EXIT_OK : IOGP_EXIT_ERROR;
	for (int k = 0; k < PROBE_NOPS; k++) {
		cur[k] = malloc(per_report * sizeof(*cur[k]));
		if (probe_ring_init(&ring[k], win_cap) < 0 || !cur[k])
			rc = IOGP_EXIT_ERROR;
	}
	uint64_t expect_now[PROBE_NOPS] = { 0 };
	if (!o->quiet && rc == 0)
		printf("# probing %s (%s) every %.3g s, reporting every %.3g s: %s / expected (%s)\n",
		       o->dir, fstype, o->interval, o->report, probe_stat_name[o->stat], win);
	uint64_t t = now_mono();
	for (uint64_t round = 0; rc == 0 && !stop && (o->count == 0 || round < o->count); round++) {
		uint64_t ns[PROBE_NOPS];
		unsigned failed;
		probe_round(&pf, ns, &failed);
		uint64_t when = now_mono();
		for (int k = 0; k < PROBE_NOPS; k++) {
			if (failed >> k & 1) {
				iog_add(errs, 1);
				continue;
			}
			iog_record(lat[k], ns[k]);
			probe_ring_add(&ring[k], when, ns[k]);
			if (ncur[k] < per_report)
				cur[k][ncur[k]++] = ns[k];
		}
		int last = stop || (o->count && round + 1 == o->count);
		if ((round + 1) % per_report == 0 || last) {
			if (!o->quiet)
				printf("%.3f", (double)when / 1e9);
			for (int k = 0; k < PROBE_NOPS; k++) {
				probe_ring_expire(&ring[k], when, win_ns);
				uint64_t st = probe_stat(cur[k], ncur[k], o->stat);
				uint64_t ex = o->baseline ? expect_base[k] : probe_ring_median(&ring[k], scratch);
				expect_now[k] = ex;
				double f = ex ? (double)st / (double)ex : 0;
				if (ncur[k]) {
					iog_set(gs[k], (int64_t)st);
					iog_set(ge[k], (int64_t)ex);
					iog_set(gf[k], (int64_t)(f * 1000 + 0.5));
				}
				if (!o->quiet)
					printf(" %s %.2fx (%.1f/%.1f us)", probe_op_name[k], f, (double)st / 1e3,
					       (double)ex / 1e3);
				ncur[k] = 0;
			}
			if (!o->quiet) {
				putchar('\n');
				fflush(stdout);
			}
			iog_flush();
		}
		t += iv;
		if (!last)
			sleep_until(t);
	}
	if (o->save && rc == 0 && save_baseline(o->save, expect_now) < 0)
		rc = IOGP_EXIT_ERROR;
	probe_cleanup(&pf);
	for (int k = 0; k < PROBE_NOPS; k++) {
		probe_ring_free(&ring[k]);
		free(cur[k]);
	}
	free(scratch);
	iog_shutdown();
	return rc;
}

static int probe_exec(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "interval", required_argument, NULL, 'i' },
		{ "report", required_argument, NULL, 'r' },
		{ "statistic", required_argument, NULL, 'S' },
		{ "window", required_argument, NULL, 'w' },
		{ "baseline", required_argument, NULL, 'b' },
		{ "save-baseline", required_argument, NULL, 'B' },
		{ "file-size", required_argument, NULL, 'f' },
		{ "pool", required_argument, NULL, 'p' },
		{ "direct", no_argument, NULL, 'd' },
		{ "count", required_argument, NULL, 'c' },
		{ "endpoint", required_argument, NULL, 'e' },
		{ "output", required_argument, NULL, 'o' },
		{ "node", required_argument, NULL, 'n' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct probe_opts o = { .interval = 1, .report = 60, .window = 4 * 3600,
	                        .file_size = 256ull << 20, .pool = 64, .stat = STAT_MEDIAN };
	int c, window_set = 0;
	uint64_t v;
	optind = 1;
	while ((c = getopt_long(argc, argv, "i:r:S:w:b:B:f:p:dc:e:o:n:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			if (parse_duration(optarg, &o.interval) < 0 || o.interval < 0.01 || o.interval > 86400) {
				iogram_err("bad --interval '%s': seconds between 0.01 and 86400", optarg);
				return IOGP_EXIT_USAGE;
			}
			break;
		case 'r':
			if (parse_duration(optarg, &o.report) < 0 || o.report > 7 * 86400) {
				iogram_err("bad --report '%s': a duration (60, 10m, 4h)", optarg);
				return IOGP_EXIT_USAGE;
			}
			break;
		case 'w':
			if (parse_duration(optarg, &o.window) < 0 || o.window > 90 * 86400) {
				iogram_err("bad --window '%s': a duration (30m, 4h, 1d)", optarg);
				return IOGP_EXIT_USAGE;
			}
			window_set = 1;
			break;
		case 'S':
			o.stat = -1;
			for (int k = 0; k < STAT_N; k++)
				if (!strcmp(optarg, probe_stat_name[k]))
					o.stat = k;
			if (o.stat < 0) {
				iogram_err("bad --statistic '%s': median, p90, p95, p99 or mean", optarg);
				return IOGP_EXIT_USAGE;
			}
			break;
		case 'b': o.baseline = optarg; break;
		case 'B': o.save = optarg; break;
		case 'f':
			if (parse_size(optarg, &o.file_size) < 0 || o.file_size < PROBE_BLOCK ||
			    o.file_size > (1ull << 50)) {
				iogram_err("bad --file-size '%s': at least 1M (K, M, G, T suffixes)", optarg);
				return IOGP_EXIT_USAGE;
			}
			break;
		case 'p':
			if (iogram_parse_u64(optarg, &v) < 0 || v < 1 || v > 1000000) {
				iogram_err("bad --pool '%s': 1 to 1000000 files", optarg);
				return IOGP_EXIT_USAGE;
			}
			o.pool = (uint32_t)v;
			break;
		case 'd': o.direct = 1; break;
		case 'c':
			if (iogram_parse_u64(optarg, &o.count) < 0 || o.count == 0) {
				iogram_err("bad --count '%s': a number of intervals", optarg);
				return IOGP_EXIT_USAGE;
			}
			break;
		case 'e': o.endpoint = optarg; break;
		case 'o': o.output = optarg; break;
		case 'n': o.node = optarg; break;
		case 'q': o.quiet = 1; break;
		case 'h':
			probe_usage(stdout);
			return IOGP_EXIT_OK;
		default:
			probe_usage(stderr);
			return IOGP_EXIT_USAGE;
		}
	}
	if (argc - optind != 1) {
		iogram_err("probe: expected one DIR");
		probe_usage(stderr);
		return IOGP_EXIT_USAGE;
	}
	if (o.baseline && window_set) {
		iogram_err("probe: --baseline and --window exclude each other");
		return IOGP_EXIT_USAGE;
	}
	if (o.report < o.interval) {
		iogram_err("probe: --report must be at least --interval");
		return IOGP_EXIT_USAGE;
	}
	o.dir = argv[optind];
	return run_probe(&o);
}

const struct iogram_cmd iogram_cmd_probe = {
	.name = "probe",
	.summary = "probe a file system's slowdown as a user feels it (an iogram source)",
	.exec = probe_exec,
};
