/* cmd_record.c - `iogram record`: subscribe and append every message to a
 * replay file, with keyframes; flushed every second so a kill -9 loses at
 * most the last second. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "iogp.h"
#include "iogp_sub.h"
#include "iogram_cli.h"

#define MAX_EP 16
/* Messages ZeroMQ queues per connection before it stops reading from it
 * (the sender then drops: the recorder sees it as sequence gaps). 10,000
 * realistic DELTAs are ~5-10 MB, so a flood over a few connections stays
 * within tens of MB (README: "When the recorder cannot keep up"). */
#define QUEUE_DEFAULT 10000
/* Loss warnings without a terminal: at most one per this many seconds. */
#define WARN_EVERY_NS (10ull * 1000000000ull)

static void record_usage(FILE *out)
{
	fprintf(out,
	"usage: iogram record [--listen ENDPOINT]... [--connect ENDPOINT]... -o FILE.iogr\n"
	"                     [--duration SECONDS] [--queue N] [--plain] [--force] [--any-address]\n"
	"                     [--quiet]\n\n"
	"Subscribes to agents (they connect to a --listen endpoint) or to relays\n"
	"(--connect to their --publish endpoint) and appends every message, unchanged,\n"
	"to FILE with keyframes and an index. With neither option it listens on\n"
	IOGP_DEFAULT_ENDPOINT ", where agents connect by default. SIGINT or SIGTERM\n"
	"closes the file cleanly; the file is flushed every second. On a terminal a\n"
	"status line shows sources, messages/s, losses and bytes.\n\n"
	"Losses are never silent: messages lost before the recorder (sequence gaps:\n"
	"a sender's or relay's full queue, or ours, see --queue) and messages refused\n"
	"(malformed, hostile, over the stream model's caps: not written) are counted\n"
	"on the status line, in a warning on stderr at most every 10 s when they grow\n"
	"(without a terminal), in the last line, and in the file, where 'iogram info'\n"
	"shows them.\n\n"
	"  --queue N      messages queued per connection while the recorder is busy\n"
	"                 (default %d); beyond, the sender drops (seen as gaps)\n"
	"  --plain        no compression (bigger files)\n"
	"  --force        replace FILE if it exists (else it is refused; files are 0600)\n"
	"  --any-address  allow listening beyond loopback\n\n"
	"EXAMPLES\n"
	"  iogram record -o job.iogr\n"
	"  iogram record --connect tcp://login1:7462 -o job.iogr --duration 3600\n",
	QUEUE_DEFAULT);
}

/* "N lost (gaps), M refused": the one wording of the status line, the
 * warnings and the last line (iogram info says the same of the file). */
static void fmt_losses(char *buf, size_t len, const iogp_recorder_stats *st)
{
	snprintf(buf, len, "%" PRIu64 " lost (gaps), %" PRIu64 " refused", st->gaps, st->rejected);
}

/* Once a second: the status line on a terminal; else, when the losses grew,
 * a warning at most every WARN_EVERY_NS. */
static void record_status(iogp_recorder *r, const char *out, int tty, uint64_t per_s,
                          uint64_t now, uint64_t *warned_at, uint64_t *warned_losses)
{
	iogp_recorder_stats st;
	iogp_recorder_get_stats(r, &st);
	char loss[96], sz[32];
	fmt_losses(loss, sizeof(loss), &st);
	if (tty) {
		iogp_fmt_bytes(sz, sizeof(sz), (double)st.file.file_bytes, IOGP_UNITS_WIDE);
		fprintf(stderr, "\rrecording %s: %zu sources, %" PRIu64 " msg/s, %s, %s   ", out,
		        iogp_model_source_count(iogp_recorder_model(r)), per_s, loss, sz);
		return;
	}
	uint64_t losses = st.gaps + st.rejected;
	if (losses > *warned_losses && now - *warned_at >= WARN_EVERY_NS) {
		iogram_err("record: warning: %s so far (%" PRIu64 " msg/s now)", loss, per_s);
		*warned_at = now;
		*warned_losses = losses;
	}
}

static int record_exec(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "connect", required_argument, NULL, 'c' },
		{ "output", required_argument, NULL, 'o' },
		{ "duration", required_argument, NULL, 'd' },
		{ "plain", no_argument, NULL, 'p' },
		{ "queue", required_argument, NULL, 'Q' },
		{ "force", no_argument, NULL, 'F' },
		{ "any-address", no_argument, NULL, 'A' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *listen[MAX_EP], *conn[MAX_EP], *out = NULL;
	int nl = 0, nc = 0, plain = 0, force = 0, wide = 0, quiet = 0, c;
	double duration = 0, queue = QUEUE_DEFAULT;
	optind = 1;
	while ((c = getopt_long(argc, argv, "l:c:o:d:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'l':
		case 'c':
			if ((c == 'l' ? nl : nc) >= MAX_EP) {
				iogram_err("record: at most %d endpoints of each kind", MAX_EP);
				return IOGP_EXIT_USAGE;
			}
			if (c == 'l')
				listen[nl++] = optarg;
			else
				conn[nc++] = optarg;
			break;
		case 'o': out = optarg; break;
		case 'd':
			if (iogram_parse_double(optarg, &duration) < 0 || duration <= 0) {
				iogram_err("record: bad --duration '%s'", optarg);
				return IOGP_EXIT_USAGE;
			}
			break;
		case 'p': plain = 1; break;
		case 'Q':
			if (iogram_parse_double(optarg, &queue) < 0 || queue < 1 || queue > 1e7 ||
			    queue != (double)(int)queue) {
				iogram_err("record: bad --queue '%s' (1 .. 10000000 messages)", optarg);
				return IOGP_EXIT_USAGE;
			}
			break;
		case 'F': force = 1; break;
		case 'A': wide = 1; break;
		case 'q': quiet = 1; break;
		case 'h': record_usage(stdout); return IOGP_EXIT_OK;
		default: record_usage(stderr); return IOGP_EXIT_USAGE;
		}
	}
	if (optind != argc || !out) {
		iogram_err("record: -o FILE is required (and no other arguments)");
		record_usage(stderr);
		return IOGP_EXIT_USAGE;
	}
	if (!nl && !nc)
		listen[nl++] = IOGP_DEFAULT_ENDPOINT;
	for (int i = 0; i < nl; i++)
		if (!iogram_wide_ok("record", listen[i], wide))
			return IOGP_EXIT_USAGE;

	void *ctx = zmq_ctx_new();
	void *sub = iogp_sub_socket(ctx, (int)queue);
	if (sub == NULL) {
		iogram_err("record: cannot create a ZeroMQ socket: %s", zmq_strerror(zmq_errno()));
		zmq_ctx_term(ctx);
		return IOGP_EXIT_ERROR;
	}
	int rc = 0;
	for (int i = 0; i < nl && !rc; i++)
		rc = iogram_bind(ctx, sub, listen[i]);
	for (int i = 0; i < nc && !rc; i++)
		rc = iogram_connect(ctx, sub, conn[i]);
	if (rc) {
		zmq_close(sub);
		zmq_ctx_term(ctx);
		return IOGP_EXIT_ERROR;
	}
	iogp_recorder *r;
	char err[512] = "";
	iogp_recorder_opts ro = { .creator = "iogram record " IOGRAM_VERSION, .plain = plain,
	                          .replace = force };
	if (iogp_recorder_open(&r, out, &ro, err, sizeof(err)) < 0) {
		iogram_err("record: %s", err);
		zmq_close(sub);
		zmq_ctx_term(ctx);
		return IOGP_EXIT_ERROR;
	}
	uint8_t *buf = malloc(IOGP_MAX_PAYLOAD);
	iogram_catch_signals();
	int tty = iogram_isatty_stderr() && !quiet;
	uint64_t start = iogp_mono_ns(), next_flush = start + 1000000000ull;
	uint64_t msgs = 0, last_msgs = 0, warned_at = 0, warned_losses = 0;
	int status = IOGP_EXIT_OK;
	while (!iogram_stop && buf) {
		zmq_pollitem_t pi = { sub, 0, ZMQ_POLLIN, 0 };
		zmq_poll(&pi, 1, 100);
		for (int k = 0; k < 100000; k++) {
			long n = iogp_sub_recv(sub, buf, IOGP_MAX_PAYLOAD);
			if (n == -1)
				break;
			if (n == -2) {
				iogp_recorder_refused(r, 1);
				continue;
			}
			/* a refused message is counted by the recorder */
			rc = iogp_recorder_add(r, buf, (size_t)n, iogp_wall_ns());
			if (rc == IOGP_EIO)
				break;
			if (rc >= 0 || rc == IOGP_EUNKNOWN)
				msgs++;
		}
		uint64_t now = iogp_mono_ns();
		if (rc != IOGP_EIO && now >= next_flush) {
			rc = iogp_recorder_flush(r);
			next_flush = now + 1000000000ull;
			if (!quiet)
				record_status(r, out, tty, msgs - last_msgs, now, &warned_at, &warned_losses);
			last_msgs = msgs;
		}
		if (rc == IOGP_EIO) {
			iogram_err("record: writing %s failed (%s); stopping. The file is readable up to "
			           "the last flush.", out, strerror(errno ? errno : EIO));
			status = IOGP_EXIT_ERROR;
			break;
		}
		if (duration > 0 && (double)(now - start) / 1e9 >= duration)
			break;
	}
	if (tty)
		fputc('\n', stderr);
	iogp_recorder_stats st;
	iogp_recorder_get_stats(r, &st);
	char loss[96];
	fmt_losses(loss, sizeof(loss), &st);
	size_t ns = iogp_model_source_count(iogp_recorder_model(r));
	if (status == IOGP_EXIT_OK) {
		if (iogp_recorder_close(r) < 0) {
			iogram_err("record: closing %s failed: %s", out, strerror(errno ? errno : EIO));
			status = IOGP_EXIT_ERROR;
		}
	} else {
		iogp_recorder_abandon(r);
	}
	if (!quiet && st.snapshots_skipped)
		fprintf(stderr, "iogram: recorded %" PRIu64 " messages from %zu sources to %s (%" PRIu64
		        " SNAPSHOTs equal to the recorded state left out); %s\n",
		        msgs - st.snapshots_skipped, ns, out, st.snapshots_skipped, loss);
	else if (!quiet)
		fprintf(stderr, "iogram: recorded %" PRIu64 " messages from %zu sources to %s; %s\n",
		        msgs, ns, out, loss);
	free(buf);
	zmq_close(sub);
	zmq_ctx_term(ctx);
	return status;
}

const struct iogram_cmd iogram_cmd_record = {
	.name = "record",
	.summary = "subscribe and append every message to a replay file",
	.exec = record_exec,
};
