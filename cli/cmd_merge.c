/* cmd_merge.c - `iogram merge`: per-process files into one job file ordered
 * by receive time, like sh5util merging node-step files. */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "iogp.h"
#include "iogram_cli.h"

static void merge_usage(FILE *out)
{
	fprintf(out,
	"usage: iogram merge FILE.iogr... -o JOB.iogr [--plain] [--force]\n\n"
	"Merges replay files (e.g. the per-process files IOGRAM_OUTPUT=%%h-%%p.iogr\n"
	"leaves) into one file ordered by receive time, with fresh keyframes. A\n"
	"message present in two inputs (same source and sequence) is written once.\n"
	"Damaged inputs are read as far as they can be; skipped bytes are reported.\n\n"
	"EXAMPLES\n"
	"  iogram merge run-*.iogr -o job.iogr\n");
}

typedef struct input {
	const char *path;
	iogp_replay_reader *r;
	iogp_replay_rec rec;
	int live;
} input;

static void advance(input *in)
{
	for (;;) {
		if (iogp_replay_next(in->r, &in->rec) < 0) {
			in->live = 0;
			return;
		}
		if (!in->rec.keyframe)   /* the output gets keyframes of its own */
			return;
	}
}

static int merge_exec(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "plain", no_argument, NULL, 'p' },
		{ "force", no_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out = NULL;
	int plain = 0, force = 0, c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'p': plain = 1; break;
		case 'F': force = 1; break;
		case 'h': merge_usage(stdout); return IOGP_EXIT_OK;
		default: merge_usage(stderr); return IOGP_EXIT_USAGE;
		}
	}
	int n = argc - optind;
	if (!out || n < 1) {
		iogram_err("merge: need input files and -o OUTPUT");
		merge_usage(stderr);
		return IOGP_EXIT_USAGE;
	}
	input *in = calloc((size_t)n, sizeof(*in));
	char err[512];
	int status = IOGP_EXIT_OK;
	for (int i = 0; i < n; i++) {
		in[i].path = argv[optind + i];
		if (!strcmp(in[i].path, out)) {
			iogram_err("merge: output %s is also an input", out);
			status = IOGP_EXIT_USAGE;
			break;
		}
		if (iogp_replay_open(&in[i].r, in[i].path, err, sizeof(err)) < 0) {
			iogram_err("merge: %s", err);
			status = IOGP_EXIT_ERROR;
			break;
		}
		in[i].live = 1;
		advance(&in[i]);
	}
	iogp_recorder *rec = NULL;
	iogp_recorder_opts ro = { .creator = "iogram merge " IOGRAM_VERSION, .plain = plain,
	                          .replace = force };
	if (status == IOGP_EXIT_OK && iogp_recorder_open(&rec, out, &ro, err, sizeof(err)) < 0) {
		iogram_err("merge: %s", err);
		status = IOGP_EXIT_ERROR;
	}
	uint64_t written = 0, dups = 0, bad = 0;
	while (status == IOGP_EXIT_OK) {
		int k = -1;
		for (int i = 0; i < n; i++)
			if (in[i].live && (k < 0 || in[i].rec.recv_ns < in[k].rec.recv_ns))
				k = i;
		if (k < 0)
			break;
		iogp_replay_rec *r = &in[k].rec;
		iogp_kind kind;
		uint16_t flags;
		uint64_t src, seq;
		size_t si;
		iogp_source_info info;
		const iogp_model *m = iogp_recorder_model(rec);
		if (iogp_msg_peek(r->payload, r->len, &kind, &flags, &src, &seq) == 0 &&
		    iogp_model_source_index(m, src, &si) == 0 && iogp_model_source(m, si, &info) == 0 &&
		    info.messages > 0 && seq <= info.last_seq) {
			dups++;
		} else {
			int rc = iogp_recorder_add(rec, r->payload, r->len, r->recv_ns);
			if (rc == IOGP_EIO) {
				iogram_err("merge: writing %s failed", out);
				status = IOGP_EXIT_ERROR;
				break;
			}
			if (rc < 0 && rc != IOGP_EUNKNOWN)
				bad++;
			else
				written++;
		}
		advance(&in[k]);
	}
	for (int i = 0; i < n; i++) {
		if (!in[i].r)
			continue;
		iogp_replay_rstats rs;
		iogp_replay_reader_stats(in[i].r, &rs);
		if (rs.skipped_bytes)
			iogram_err("warning: %s: skipped %" PRIu64 " bytes of damaged or torn data",
			           in[i].path, rs.skipped_bytes);
		iogp_replay_close_reader(in[i].r);
	}
	if (rec) {
		size_t ns = iogp_model_source_count(iogp_recorder_model(rec));
		if (status == IOGP_EXIT_OK && iogp_recorder_close(rec) < 0) {
			iogram_err("merge: closing %s failed", out);
			status = IOGP_EXIT_ERROR;
		} else if (status != IOGP_EXIT_OK) {
			iogp_recorder_abandon(rec);
		}
		if (status == IOGP_EXIT_OK)
			fprintf(stderr, "iogram: merged %d files into %s: %" PRIu64 " messages from %zu sources"
			        " (%" PRIu64 " duplicates dropped, %" PRIu64 " undecodable)\n",
			        n, out, written, ns, dups, bad);
	}
	free(in);
	return status;
}

const struct iogram_cmd iogram_cmd_merge = {
	.name = "merge",
	.summary = "merge per-process replay files into one job file",
	.exec = merge_exec,
};
