/* iogram.c - the iogram command: dispatch to verbs, shared CLI helpers. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "iogp.h"
#include "iogram_cli.h"

static const struct iogram_cmd *const cmds[] = {
	&iogram_cmd_info,
	&iogram_cmd_export,
	&iogram_cmd_record,
	&iogram_cmd_relay,
	&iogram_cmd_merge,
	&iogram_cmd_cat,
	&iogram_cmd_keygen,
	&iogram_cmd_loadgen,
	&iogram_cmd_probe,
};

void iogram_err(const char *fmt, ...)
{
	va_list ap;
	fputs("iogram: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* Bytes and durations in the plots' style; counts exact, with their unit. */
void iogram_fmt_value(char *buf, size_t len, double v, const char *unit)
{
	if (!strcmp(unit, "bytes") || !strcmp(unit, "ns"))
		iogp_fmt_value(buf, len, unit, v, IOGP_UNITS_WIDE);
	else
		snprintf(buf, len, "%.0f%s%s", v, *unit ? " " : "", unit);
}

void iogram_fmt_wall(char *buf, size_t len, uint64_t ns)
{
	time_t s = (time_t)(ns / 1000000000ull);
	struct tm tm;
	gmtime_r(&s, &tm);
	char t[40];
	strftime(t, sizeof(t), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%03uZ", t, (unsigned)(ns % 1000000000ull / 1000000ull));
}

void iogram_warn_damage(const char *path, uint64_t skipped, uint64_t file_bytes)
{
	if (!skipped)
		return;
	double p = file_bytes ? 100.0 * (double)skipped / (double)file_bytes : 100.0;
	char pct[16];
	if (p < 0.1)
		snprintf(pct, sizeof(pct), "<0.1");
	else
		snprintf(pct, sizeof(pct), "%.1f", p > 100 ? 100.0 : p);
	iogram_err("warning: %s: %" PRIu64 " bytes (%s%%) skipped as damaged", path, skipped, pct);
}

int iogram_load(const char *path, iogp_model **mp, iogp_load_stats *stp)
{
	iogp_load_stats tmp, *st = stp ? stp : &tmp;
	iogp_model *m = iogp_model_new(NULL);
	if (!m) {
		iogram_err("out of memory");
		return IOGP_EXIT_ERROR;
	}
	char err[512] = "";
	int rc = iogp_load_file(path, m, st, err, sizeof(err));
	if (rc < 0) {
		iogram_err("%s", *err ? err : iogp_strerror(rc));
		iogp_model_free(m);
		return IOGP_EXIT_ERROR;
	}
	iogram_warn_damage(path, st->file.skipped_bytes, st->info.file_bytes);
	*mp = m;
	return 0;
}

int iogram_parse_u64(const char *s, uint64_t *v)
{
	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return -1;
	errno = 0;
	char *end;
	unsigned long long x = strtoull(s, &end, 0);
	if (errno || *end)
		return -1;
	*v = x;
	return 0;
}

int iogram_parse_double(const char *s, double *v)
{
	if (!s || !*s)
		return -1;
	errno = 0;
	char *end;
	double x = strtod(s, &end);
	if (errno || *end || x != x)
		return -1;
	*v = x;
	return 0;
}

static void usage(FILE *out)
{
	fprintf(out, "usage: iogram VERB [ARGS...]\n"
	             "       iogram --help | --version\n\nVerbs:\n");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(out, "  %-8s %s\n", cmds[i]->name, cmds[i]->summary);
	fprintf(out, "\nRun 'iogram VERB --help' for a verb's options.\n"
	             "\nEXAMPLES\n"
	             "  iogram info job.iogr\n"
	             "  iogram export hist job.iogr --metric posix.read.size --bins log2\n"
	             "  iogram export series job.iogr --metric posix.write.bytes -o write.csv\n"
	             "  iogram export all job.iogr -o csv/\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return IOGP_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return IOGP_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("iogram %s\n", IOGRAM_VERSION);
		return IOGP_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i]->name))
			return cmds[i]->exec(argc - 1, argv + 1);
	iogram_err("unknown verb '%s' (try 'iogram --help')", argv[1]);
	return IOGP_EXIT_USAGE;
}
