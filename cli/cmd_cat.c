/* cmd_cat.c - `iogram cat`: one line per message of a replay file. */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "iogp.h"
#include "iogram_cli.h"

static void cat_usage(FILE *out)
{
	fprintf(out,
	"usage: iogram cat FILE.iogr [--follow] [--keyframes]\n\n"
	"One line per message: receive time, source id, kind, sequence number,\n"
	"payload bytes, then what it holds (interval, counters, histogram bins,\n"
	"access samples, files, labels). Keyframe records are left out unless\n"
	"--keyframes. --follow keeps reading as the file grows (until SIGINT).\n\n"
	"EXAMPLES\n"
	"  iogram cat job.iogr | grep delta | head\n"
	"  iogram cat --follow live.iogr\n");
}

static void print_rec(const iogp_replay_rec *rec, iogp_msg *m)
{
	char t[48];
	iogram_fmt_wall(t, sizeof(t), rec->recv_ns);
	char e[160];
	if (iogp_msg_decode(m, rec->payload, rec->len, e, sizeof(e)) < 0) {
		printf("%s  %-16s  %-8s %8s %6zu  undecodable: %s\n", t, "-", "?", "-", rec->len, e);
		return;
	}
	printf("%s  %016" PRIx64 "  %-8s %8" PRIu64 " %6zu ", t, m->source,
	       iogp_kind_name(m->kind), m->seq, rec->len);
	if (rec->keyframe)
		printf(" keyframe");
	if (m->flags & IOGP_F_FINAL)
		printf(" final");
	if (m->kind == IOGP_DELTA || m->kind == IOGP_SNAPSHOT)
		printf(" interval %.3fs", (double)(m->t1_ns - m->t0_ns) / 1e9);
	uint64_t bins = 0;
	for (uint32_t i = 0; i < m->nhists; i++)
		bins += m->hists[i].nbins;
	if (m->nlabels)
		printf(" labels %u", m->nlabels);
	if (m->nmetrics)
		printf(" metrics %u", m->nmetrics);
	if (m->ncounters)
		printf(" counters %u", m->ncounters);
	if (m->ngauges)
		printf(" gauges %u", m->ngauges);
	if (m->nhists)
		printf(" hists %u (%" PRIu64 " bins)", m->nhists, bins);
	if (m->naccess)
		printf(" access %u/%" PRIu64, m->naccess, m->access_seen);
	if (m->nfiles)
		printf(" files %u", m->nfiles);
	if (m->dropped)
		printf(" dropped %" PRIu64, m->dropped);
	const char *host = iogp_msg_label(m, "host");
	if (host)
		printf(" host=%s", host);
	putchar('\n');
}

static int cat_exec(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "follow", no_argument, NULL, 'f' },
		{ "keyframes", no_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int follow = 0, kf = 0, c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "fkh", opts, NULL)) != -1) {
		switch (c) {
		case 'f': follow = 1; break;
		case 'k': kf = 1; break;
		case 'h': cat_usage(stdout); return IOGP_EXIT_OK;
		default: cat_usage(stderr); return IOGP_EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		iogram_err("cat: expected exactly one FILE");
		return IOGP_EXIT_USAGE;
	}
	const char *path = argv[optind];
	iogp_msg m;
	iogp_msg_init(&m);
	uint64_t seen = 0;   /* records already printed (follow re-reads the file) */
	int status = IOGP_EXIT_OK, first = 1;
	if (follow)
		iogram_catch_signals();
	do {
		iogp_replay_reader *r;
		char err[512];
		if (iogp_replay_open(&r, path, err, sizeof(err)) < 0) {
			if (first || !follow) {
				iogram_err("cat: %s", err);
				status = IOGP_EXIT_ERROR;
				break;
			}
		} else {
			iogp_replay_rec rec;
			uint64_t i = 0;
			while (iogp_replay_next(r, &rec) == 0) {
				if (i++ < seen)
					continue;
				seen = i;
				if (rec.keyframe && !kf)
					continue;
				print_rec(&rec, &m);
			}
			iogp_replay_rstats rs;
			iogp_replay_reader_stats(r, &rs);
			if (!follow && rs.skipped_bytes)
				iogram_err("warning: %s: skipped %" PRIu64 " bytes of damaged or torn data",
				           path, rs.skipped_bytes);
			iogp_replay_close_reader(r);
		}
		first = 0;
		fflush(stdout);
		if (follow && !iogram_stop)
			usleep(500000);
	} while (follow && !iogram_stop);
	iogp_msg_free(&m);
	return status;
}

const struct iogram_cmd iogram_cmd_cat = {
	.name = "cat",
	.summary = "print one line per message of a replay file",
	.exec = cat_exec,
};
