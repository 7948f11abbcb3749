/* cmd_info.c - `iogram info FILE`: what a replay file holds. */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "iogp.h"
#include "iogram_cli.h"

static void info_usage(FILE *out)
{
	fprintf(out, "usage: iogram info FILE.iogr\n\n"
	             "Prints the file's format, time span, records, keyframes, bytes (and any\n"
	             "skipped as damaged or torn), its sources with their labels, and each\n"
	             "metric's total (histograms: count, p50, p90, p99, max; request sizes\n"
	             "with their most common exact sizes), the files that moved the most, the\n"
	             "I/O phases and the findings (insights).\n\n"
	             "\"losses:\" says how many messages were lost before the recorder (the\n"
	             "sequence numbers its sources skipped) and how many it refused (malformed,\n"
	             "hostile or over its caps: not written), as the recorder noted them.\n\n"
	             "A damaged file is read wherever it can be: stderr says how many bytes\n"
	             "were skipped (\"iogram: warning: FILE: N bytes (P%%) skipped as damaged\")\n"
	             "and the exit status is still 0. Exit status: 0 success, 1 runtime error\n"
	             "(missing or unreadable file), 2 usage error.\n\n"
	             "EXAMPLES\n  iogram info job.iogr\n");
}

/* A size histogram's most common exact sizes: "common 4 KiB x1000 (91%)". */
static void print_common(const iogp_hist *h, int size)
{
	iogp_exact top[IOGP_EXACT_TOP];
	size_t n = size ? iogp_hist_common(h, top, IOGP_EXACT_TOP) : 0;
	if (n == 0)
		return;
	printf("  %-28s", "");
	for (size_t k = 0; k < n; k++) {
		char v[48];
		iogp_fmt_size(v, sizeof(v), (double)top[k].value, IOGP_UNITS_WIDE);
		printf("%s%s x%" PRIu64 " (%.0f%%)", k ? ", " : " common ", v, top[k].count,
		       100.0 * (double)top[k].count / (double)h->total);
	}
	putchar('\n');
}

static void print_metric(const iogp_model *m, const iogp_metric_info *mi)
{
	iogp_sel all = { .kind = IOGP_SEL_ALL };
	char a[48], b[48], c[48], d[48], e[48];
	switch (mi->kind) {
	case IOGP_COUNTER: {
		uint64_t v = 0;
		iogp_model_counter(m, mi->name, &all, &v);
		iogram_fmt_value(a, sizeof(a), (double)v, mi->unit);
		printf("  %-28s counter    %20" PRIu64 "  (%s)\n", mi->name, v, a);
		break;
	}
	case IOGP_GAUGE: {
		int64_t v = 0;
		iogp_model_gauge(m, mi->name, &all, &v);
		printf("  %-28s gauge      %20" PRId64 "  %s\n", mi->name, v, mi->unit);
		break;
	}
	case IOGP_HISTOGRAM: {
		iogp_hist h;
		int rc = iogp_model_hist(m, mi->name, &all, &h);
		if (rc < 0) {
			printf("  %-28s histogram  (%s)\n", mi->name, iogp_strerror(rc));
			break;
		}
		/* request sizes: exact where known, else their bin's floor */
		int size = !strcmp(mi->unit, "bytes");
		uint64_t qv[3] = { 0, 0, 0 }, mx = 0;
		char *qs[3] = { a, b, c };
		for (int k = 0; k < 3 && h.total; k++) {
			double q = (double[]){ 0.5, 0.9, 0.99 }[k];
			if (size)
				iogp_hist_quantile_size(&h, q, &qv[k]);
			else
				iogp_hist_quantile(&h, q, &qv[k]);
		}
		if (h.total && size)
			iogp_hist_max_size(&h, &mx);
		else if (h.total)
			iogp_hist_max(&h, &mx);
		for (int k = 0; k < 3; k++) {
			if (size)
				iogp_fmt_size(qs[k], sizeof(a), (double)qv[k], IOGP_UNITS_WIDE);
			else
				iogram_fmt_value(qs[k], sizeof(a), (double)qv[k], mi->unit);
		}
		if (size)
			iogp_fmt_size(d, sizeof(d), (double)mx, IOGP_UNITS_WIDE);
		else
			iogram_fmt_value(d, sizeof(d), (double)mx, mi->unit);
		iogp_bins_format(&mi->bins, e, sizeof(e));
		printf("  %-28s histogram  %20" PRIu64 "  p50 %s  p90 %s  p99 %s  max %s  [%s]\n",
		       mi->name, h.total, a, b, c, d, e);
		print_common(&h, size);
		iogp_hist_free(&h);
		break;
	}
	case IOGP_ACCESS:
		printf("  %-28s access samples\n", mi->name);
		break;
	}
}

/* The files that moved the most (per layer), the phases and the findings. */
static void print_files(const iogp_model *m)
{
	static const char *const layer[] = { "posix", "stdio", "mpiio" };
	iogp_file_info *f;
	size_t n;
	if (iogp_model_files(m, NULL, -1, &f, &n) < 0 || n == 0) {
		printf("files:      none with a record\n");
		if (n == 0)
			iogp_model_files_free(f);
		return;
	}
	printf("files:      %zu with a record (top 10 by bytes moved)\n", n);
	printf("  %-5s %6s %12s %10s %12s %10s  %s\n", "LAYER", "RANKS", "READ", "READS",
	       "WRITTEN", "WRITES", "FILE");
	for (size_t i = 0; i < n && i < 10; i++) {
		char r[32], w[32];
		iogp_fmt_bytes(r, sizeof(r), (double)f[i].total.op[0].bytes, IOGP_UNITS_WIDE);
		iogp_fmt_bytes(w, sizeof(w), (double)f[i].total.op[1].bytes, IOGP_UNITS_WIDE);
		char name[IOGP_MAX_PATH + 64];
		iogp_file_label(name, sizeof(name), f[i].path, f[i].other, f[i].total.overflow);
		printf("  %-5s %6u %12s %10" PRIu64 " %12s %10" PRIu64 "  %s\n",
		       f[i].layer < 3 ? layer[f[i].layer] : "?", f[i].sources, r, f[i].total.op[0].ops, w,
		       f[i].total.op[1].ops, name);
	}
	iogp_model_files_free(f);
}

static void print_phases(const iogp_model *m)
{
	iogp_phase *p;
	size_t n;
	if (iogp_model_phases(m, NULL, &p, &n, NULL) < 0)
		return;
	printf("phases:     %zu (iogram export phases FILE for all their fields)\n", n);
	for (size_t i = 0; i < n && i < 10; i++) {
		char t[48], b[32], d[32];
		iogram_fmt_wall(t, sizeof(t), p[i].start_ns);
		iogp_fmt_bytes(b, sizeof(b), (double)p[i].bytes, IOGP_UNITS_WIDE);
		iogp_fmt_ns(d, sizeof(d), (double)(p[i].end_ns - p[i].start_ns), IOGP_UNITS_WIDE);
		printf("  %s +%s %-5s %-5s %4u rank%s %3u file%s %-16s %10s %s\n", t, d,
		       p[i].op ? "write" : "read",
		       p[i].layer == IOGP_FR_STDIO ? "stdio" : p[i].layer == IOGP_FR_MPIIO ? "mpiio" : "posix",
		       p[i].ranks, p[i].ranks == 1 ? " " : "s", p[i].files, p[i].files == 1 ? " " : "s",
		       p[i].shared ? "shared" : "file-per-process", b, iogp_spatiality_name(p[i].spatiality));
	}
	free(p);
}

static void print_insights(const iogp_model *m)
{
	iogp_insight v[16];
	size_t n;
	static const char *const sev[] = { "info", "warn", "HIGH" };
	if (iogp_model_insights(m, NULL, v, 16, &n) < 0)
		return;
	printf("insights:   %zu\n", n);
	for (size_t i = 0; i < n; i++)
		printf("  [%s] %s (see the %s panel)\n", sev[v[i].severity], v[i].text, v[i].panel);
}

static int info_exec(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'h') {
			info_usage(stdout);
			return IOGP_EXIT_OK;
		}
		info_usage(stderr);
		return IOGP_EXIT_USAGE;
	}
	if (optind != argc - 1) {
		iogram_err("info: expected exactly one FILE");
		info_usage(stderr);
		return IOGP_EXIT_USAGE;
	}
	const char *path = argv[optind];
	iogp_model *m;
	iogp_load_stats st;
	int rc = iogram_load(path, &m, &st);
	if (rc)
		return rc;
	char t0[48], t1[48], cr[48], sz[48];
	iogram_fmt_wall(cr, sizeof(cr), st.info.created_ns);
	iogp_fmt_bytes(sz, sizeof(sz), (double)st.info.file_bytes, IOGP_UNITS_WIDE);
	printf("file:       %s\n", path);
	printf("format:     iogr version %u, created %s by \"%s\"\n", st.info.version, cr, st.info.creator);
	printf("bytes:      %" PRIu64 " (%s)\n", st.info.file_bytes, sz);
	printf("records:    %" PRIu64 " in %" PRIu64 " frames; keyframes %" PRIu64 " (%" PRIu64
	       " records); index %s\n", st.records, st.file.frames, st.file.keyframes,
	       st.keyframe_records, st.info.index_found ? "found" : "missing, rebuilt by a scan");
	printf("messages:   hello %" PRIu64 ", delta %" PRIu64 ", snapshot %" PRIu64 ", bye %" PRIu64
	       ", unknown kind %" PRIu64 ", undecodable %" PRIu64 "\n", st.by_kind[IOGP_HELLO],
	       st.by_kind[IOGP_DELTA], st.by_kind[IOGP_SNAPSHOT], st.by_kind[IOGP_BYE], st.by_kind[0], st.bad);
	printf("skipped:    %" PRIu64 " bytes (%.1f%% of the file; %" PRIu64 " damaged frames)\n",
	       st.file.skipped_bytes, st.info.file_bytes ?
	       100.0 * (double)st.file.skipped_bytes / (double)st.info.file_bytes : 0.0,
	       st.file.bad_frames);
	if (st.records) {
		iogram_fmt_wall(t0, sizeof(t0), st.file.first_ns);
		iogram_fmt_wall(t1, sizeof(t1), st.file.last_ns);
		printf("span:       %s .. %s (%.1f s)\n", t0, t1,
		       (double)(st.file.last_ns - st.file.first_ns) / 1e9);
	}
	iogp_model_stats ms;
	iogp_model_get_stats(m, &ms);
	size_t ns = iogp_model_source_count(m);
	printf("sources:    %zu on %zu nodes; gaps %" PRIu64 ", duplicates %" PRIu64
	       ", unknown-source deltas %" PRIu64 "\n", ns, iogp_model_node_count(m),
	       ms.gaps, ms.duplicates, ms.unknown);
	/* Lost: the sequence numbers the sources skipped (as this replay sees
	 * them, or as the recorder noted them if more: damage hides some);
	 * refused: what the recorder did not write (its note in the file). */
	uint64_t lost = ms.gaps > st.file.noted_gaps ? ms.gaps : st.file.noted_gaps;
	printf("losses:     %" PRIu64 " messages lost (gaps), %" PRIu64 " refused%s\n", lost,
	       st.file.noted_refused, st.file.losses_noted ? "" : " (the file has no recorder's note)");
	if (ms.refused || ms.seq_spoofs || ms.refused_sources)
		printf("refused:    %" PRIu64 " sources, %" PRIu64 " metrics/bins/files/names over the "
		       "caps; %" PRIu64 " spoofed sequence jumps undone\n", ms.refused_sources, ms.refused,
		       ms.seq_spoofs);
	if (ns) {
		printf("  %-16s  %-16s %8s %6s %-5s %8s %6s %8s  %s\n", "ID", "NODE", "PID", "RANK",
		       "STATE", "MSGS", "GAPS", "DROPPED", "EXE");
		for (size_t i = 0; i < ns; i++) {
			iogp_source_info si;
			if (iogp_model_source(m, i, &si) < 0)
				continue;
			const char *exe = iogp_model_source_label(m, i, "exe");
			char rank[24] = "-";
			if (si.rank >= 0)
				snprintf(rank, sizeof(rank), "%" PRId64, si.rank);
			printf("  %016" PRIx64 "  %-16s %8" PRId64 " %6s %-5s %8" PRIu64 " %6" PRIu64
			       " %8" PRIu64 "  %s\n", si.id, si.node, si.pid, rank,
			       si.state == IOGP_SRC_GONE ? "gone" : "live", si.messages, si.gaps,
			       si.dropped, exe ? exe : "");
		}
	}
	size_t nm = iogp_model_metric_count(m);
	printf("metrics:    %zu\n", nm);
	for (size_t i = 0; i < nm; i++) {
		iogp_metric_info mi;
		if (iogp_model_metric(m, i, &mi) == 0)
			print_metric(m, &mi);
	}
	print_files(m);
	print_phases(m);
	print_insights(m);
	iogp_model_free(m);
	return IOGP_EXIT_OK;
}

const struct iogram_cmd iogram_cmd_info = {
	.name = "info",
	.summary = "describe a replay file: sources, span, records, totals",
	.exec = info_exec,
};
