/* fake_probe.c - a prober with known answers, for the viewers' slowdown
 * panel tests: it speaks as `iogram probe` does (labels role=probe,
 * probe.dir, probe.fs, probe.statistic, probe.expected; gauges
 * probe.OP.{stat,expected,slowdown}) but reports factors it is told.
 *   fake_probe OUTPUT NODE REPORTS GAP_MS SPEC...
 * SPEC is OP=MILLI or OP=MILLI@FIRST-LAST:MILLI2: the op's factor in
 * thousandths in every report, except reports FIRST..LAST (from 0) which
 * get MILLI2. The expected time is 1 ms, the statistic expected * factor.
 * OUTPUT "-" streams to IOGRAM_ENDPOINT instead of a file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "iogram.h"

#define MAX_OPS 8

int main(int argc, char **argv)
{
	if (argc < 6 || argc - 5 > MAX_OPS) {
		fprintf(stderr, "usage: fake_probe OUTPUT NODE REPORTS GAP_MS OP=MILLI[@A-B:MILLI2]...\n");
		return 2;
	}
	int reports = atoi(argv[3]), gap_ms = atoi(argv[4]), nops = argc - 5;
	char op[MAX_OPS][32];
	long base[MAX_OPS], alt[MAX_OPS], a[MAX_OPS], b[MAX_OPS];
	for (int k = 0; k < nops; k++) {
		a[k] = b[k] = -1;
		alt[k] = 0;
		if (sscanf(argv[5 + k], "%31[^=]=%ld@%ld-%ld:%ld", op[k], &base[k], &a[k], &b[k], &alt[k]) < 2) {
			fprintf(stderr, "fake_probe: bad spec '%s'\n", argv[5 + k]);
			return 2;
		}
	}
	int file = strcmp(argv[1], "-") != 0;
	iog_config cfg = { .endpoint = file ? "none" : NULL, .output = file ? argv[1] : NULL,
	                   .node = argv[2], .interval_ms = 10000 };
	if (iog_init(&cfg) != 0)
		return 1;
	iog_label("role", "probe");
	iog_label("probe.dir", "/fake/scratch");
	iog_label("probe.fs", "fakefs");
	iog_label("probe.statistic", "median");
	iog_label("probe.expected", "median of 14400 s");
	iog_metric *gs[MAX_OPS], *ge[MAX_OPS], *gf[MAX_OPS];
	char name[96];
	for (int k = 0; k < nops; k++) {
		snprintf(name, sizeof(name), "probe.%s.stat", op[k]);
		gs[k] = iog_gauge(name, "ns");
		snprintf(name, sizeof(name), "probe.%s.expected", op[k]);
		ge[k] = iog_gauge(name, "ns");
		snprintf(name, sizeof(name), "probe.%s.slowdown", op[k]);
		gf[k] = iog_gauge(name, "milli");
	}
	struct timespec gap = { gap_ms / 1000, (long)(gap_ms % 1000) * 1000000L };
	for (int r = 0; r < reports; r++) {
		for (int k = 0; k < nops; k++) {
			long f = r >= a[k] && r <= b[k] ? alt[k] : base[k];
			iog_set(gs[k], 1000000LL * f / 1000);
			iog_set(ge[k], 1000000LL);
			iog_set(gf[k], f);
		}
		iog_flush();
		if (r + 1 < reports)
			nanosleep(&gap, NULL);
	}
	iog_shutdown();
	return 0;
}
