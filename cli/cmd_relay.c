/* cmd_relay.c - `iogram relay`: an XSUB/XPUB forwarder for relay trees. New
 * subscriptions (XPUB_VERBOSER: every new viewer) go upstream coalesced, at
 * most one per SUB_COALESCE_NS, so each new viewer gets a SNAPSHOT from every
 * agent and a storm of subscriptions gets the agents nothing more. Messages
 * pass unchanged; each subscriber has its own queue, so a slow one loses
 * messages only for itself (it sees them as sequence gaps). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "iogp.h"
#include "iogram_cli.h"
#include "iogp_sub.h"
#include "relay_agg.h"

#define MAX_EP 16
#define SUB_COALESCE_NS 250000000ull

static void relay_usage(FILE *out)
{
	fprintf(out,
	"usage: iogram relay [--listen ENDPOINT]... [--publish ENDPOINT]...\n"
	"                    [--upstream ENDPOINT]... [--any-address] [--quiet]\n"
	"                    [--aggregate node|job [--interval S] [--summaries]]\n\n"
	"Agents (or child relays) connect to --listen; viewers and recorders connect\n"
	"to --publish; --upstream connects this relay to a parent relay's --listen, so\n"
	"relays chain into a tree. Defaults: --listen " IOGP_DEFAULT_ENDPOINT ".\n"
	"Messages pass unchanged; a subscriber too slow to keep up loses messages\n"
	"from its own queue only (it sees them as sequence gaps), never the others.\n"
	"New subscriptions go upstream at most 4 times a second. SIGINT/SIGTERM stop\n"
	"it and print the totals.\n\n"
	"--aggregate node|job forwards one merged stream per node (host label) or\n"
	"job (job label) instead: a source per group (labels host, node, job,\n"
	"aggregate, sources) whose DELTAs every --interval S (default 1) carry the\n"
	"sum of its members' changes: counters and histograms exactly, gauges as the\n"
	"sum of the latest values; per-file records and access samples stay behind.\n"
	"Its totals are the sum of its members' whatever they lose, resend or\n"
	"restart, and a relay above can aggregate it again. --summaries adds, per\n"
	"source active in the interval, a tiny DELTA under its own id (label\n"
	"summary=1): summary.read.bytes, .write.bytes, .ops, .io_time, .latency.p99;\n"
	"relays above pass those on unchanged.\n\n"
	"EXAMPLES\n"
	"  iogram relay --listen tcp://127.0.0.1:7461 --publish tcp://127.0.0.1:7462\n"
	"  iogram relay --listen ipc:///tmp/rack1 --upstream tcp://127.0.0.1:7461\n"
	"  iogram relay --aggregate node --listen tcp://127.0.0.1:7470 --upstream tcp://127.0.0.1:7461\n");
}

typedef struct relay_stats {
	uint64_t msgs, bytes, dropped, malformed, subs, subs_up;
} relay_stats;

/* Subscription messages from viewers: note that one arrived (forwarded
 * later, coalesced); unsubscriptions are not passed on, anything else is
 * malformed. Returns 1 when a message was taken. */
static int take_sub(void *back, relay_stats *st, int *pending)
{
	uint8_t b[IOGP_SUB_MAXSUB];
	int n = zmq_recv(back, b, sizeof(b), ZMQ_DONTWAIT), more = 0;
	size_t ml = sizeof(more);
	if (n < 0)
		return 0;
	zmq_getsockopt(back, ZMQ_RCVMORE, &more, &ml);
	int bad = more || n < 1 || (b[0] != 0 && b[0] != 1);
	while (more && zmq_recv(back, b, sizeof(b), 0) >= 0)
		zmq_getsockopt(back, ZMQ_RCVMORE, &more, &ml);
	if (bad)
		st->malformed++;
	else if (b[0] == 1) {
		st->subs++;
		*pending = 1;
	}
	return 1;
}

/* Move one multipart message from src to dst. Returns 1 moved, 0 nothing
 * waiting, -1 dropped. */
static int move_msg(void *src, void *dst, relay_stats *st)
{
	zmq_msg_t m;
	zmq_msg_init(&m);
	if (zmq_msg_recv(&m, src, ZMQ_DONTWAIT) < 0) {
		zmq_msg_close(&m);
		return 0;
	}
	int more = zmq_msg_more(&m), dropped = 0;
	size_t bytes = zmq_msg_size(&m);
	if (zmq_msg_send(&m, dst, ZMQ_DONTWAIT | (more ? ZMQ_SNDMORE : 0)) < 0) {
		zmq_msg_close(&m);
		dropped = 1;
	}
	while (more) {
		zmq_msg_init(&m);
		if (zmq_msg_recv(&m, src, 0) < 0) {
			zmq_msg_close(&m);
			break;
		}
		more = zmq_msg_more(&m);
		bytes += zmq_msg_size(&m);
		if (dropped || zmq_msg_send(&m, dst, ZMQ_DONTWAIT | (more ? ZMQ_SNDMORE : 0)) < 0) {
			zmq_msg_close(&m);
			dropped = 1;
		}
	}
	if (dropped) {
		st->dropped++;
		return -1;
	}
	st->msgs++;
	st->bytes += bytes;
	return 1;
}

/* ---- --aggregate ---------------------------------------------------------- */

#define AGG_SNAPSHOT_NS 10000000000ull

static void agg_send(void *ctx, iogp_kind kind, uint64_t source, const uint8_t *p, size_t n)
{
	void **sock = ctx;
	char topic[64];
	int tl = iogp_topic(topic, sizeof(topic), kind, source);
	if (tl < 0)
		return;
	/* XPUB: a subscriber whose queue is full loses it alone (a gap it sees) */
	if (zmq_send(*sock, topic, (size_t)tl, ZMQ_DONTWAIT | ZMQ_SNDMORE) >= 0)
		zmq_send(*sock, p, n, ZMQ_DONTWAIT);
}

/* One message from the members: two frames (topic, payload) into the
 * aggregator; anything else is malformed. Returns 1 taken, 0 none waiting. */
static int agg_take(void *front, relay_agg *ag, relay_stats *st, zmq_msg_t *pl)
{
	zmq_msg_t t;
	zmq_msg_init(&t);
	if (zmq_msg_recv(&t, front, ZMQ_DONTWAIT) < 0) {
		zmq_msg_close(&t);
		return 0;
	}
	int more = zmq_msg_more(&t), frames = 1;
	size_t bytes = zmq_msg_size(&t);
	zmq_msg_close(&t);
	while (more) {
		if (zmq_msg_recv(pl, front, 0) < 0)
			break;
		more = zmq_msg_more(pl);
		bytes += zmq_msg_size(pl);
		if (++frames == 2 && !more)
			break;
	}
	st->bytes += bytes;
	if (frames != 2) {
		st->malformed++;
		return 1;
	}
	st->msgs++;
	/* a refusal is counted by the aggregator (malformed or refused) */
	(void)relay_agg_feed(ag, zmq_msg_data(pl), zmq_msg_size(pl), iogp_wall_ns());
	return 1;
}

static int relay_aggregate(void *front, void *back, int mode, uint64_t interval_ns, int summaries,
                           int quiet)
{
	relay_agg *ag = relay_agg_new(mode, summaries, iogp_wall_ns() / 1000000);
	if (!ag) {
		iogram_err("relay: out of memory");
		return IOGP_EXIT_ERROR;
	}
	/* Group ids are stable (from the group's name), so a restarted relay
	 * continues its groups: their sequence numbers start at the wall clock
	 * in ms, above anything the previous run sent (at most 1,000 messages a
	 * second a group; --interval >= 0.01 s sends at most ~104), and its
	 * first SNAPSHOTs replace what the level above held of them. */
	relay_agg_passthrough(ag, agg_send, &back);
	/* the members send only to a subscriber: subscribe to everything */
	zmq_send(front, "\x01", 1, ZMQ_DONTWAIT);
	relay_stats st = { 0 };
	zmq_msg_t pl;
	zmq_msg_init(&pl);
	int tty = iogram_isatty_stderr() && !quiet, sub_pending = 0;
	uint64_t now = iogp_mono_ns(), next_flush = now + interval_ns;
	uint64_t next_snap = now + AGG_SNAPSHOT_NS, sub_next = 0, next_status = now + 1000000000ull;
	uint64_t last_in = 0;
	while (!iogram_stop) {
		zmq_pollitem_t pi[2] = { { front, 0, ZMQ_POLLIN, 0 }, { back, 0, ZMQ_POLLIN, 0 } };
		now = iogp_mono_ns();
		uint64_t soon = next_flush < next_snap ? next_flush : next_snap;
		long wait = soon > now ? (long)((soon - now) / 1000000) + 1 : 0;
		if (sub_pending && wait > 50)
			wait = 50;
		if (zmq_poll(pi, 2, wait > 200 ? 200 : wait) < 0 && zmq_errno() != EINTR)
			break;
		for (int k = 0; k < 4096 && take_sub(back, &st, &sub_pending); k++)
			;
		for (int k = 0; k < 65536 && agg_take(front, ag, &st, &pl); k++)
			;
		now = iogp_mono_ns();
		if (sub_pending && now >= sub_next) {
			/* a new subscriber: every group's state, as an agent does */
			st.subs_up++;
			relay_agg_subscriber(ag, now, iogp_wall_ns(), agg_send, &back);
			sub_pending = 0;
			sub_next = now + SUB_COALESCE_NS;
			next_flush = now + interval_ns;
		}
		if (now >= next_snap) {
			relay_agg_snapshots(ag, now, iogp_wall_ns(), 0, agg_send, &back);
			next_snap = now + AGG_SNAPSHOT_NS;
			next_flush = now + interval_ns;
		} else if (now >= next_flush) {
			relay_agg_flush(ag, now, iogp_wall_ns(), agg_send, &back);
			next_flush += interval_ns;
			if (next_flush <= now)
				next_flush = now + interval_ns;
		}
		if (tty && now >= next_status) {
			relay_agg_stats as;
			relay_agg_get_stats(ag, &as);
			fprintf(stderr, "\rrelay: %" PRIu64 " msg/s in, %" PRIu64 " sources in %" PRIu64
			        " groups, %" PRIu64 " sent   ", st.msgs - last_in, as.members, as.groups,
			        as.deltas + as.snapshots);
			last_in = st.msgs;
			next_status = now + 1000000000ull;
		}
	}
	/* drain what already arrived, then the groups' last word */
	for (int k = 0; k < 65536 && agg_take(front, ag, &st, &pl); k++)
		;
	now = iogp_mono_ns();
	relay_agg_snapshots(ag, now, iogp_wall_ns(), IOGP_F_FINAL, agg_send, &back);
	relay_agg_bye(ag, agg_send, &back);
	zmq_msg_close(&pl);
	if (tty)
		fputc('\n', stderr);
	relay_agg_stats as;
	relay_agg_get_stats(ag, &as);
	if (!quiet)
		fprintf(stderr, "iogram: relay aggregated %" PRIu64 " messages (%" PRIu64 " bytes) from %"
		        PRIu64 " sources into %" PRIu64 " %s streams: sent %" PRIu64 " DELTAs, %" PRIu64
		        " SNAPSHOTs, %" PRIu64 " HELLOs, %" PRIu64 " summaries (%" PRIu64 " bytes); malformed %" PRIu64
		        ", refused %" PRIu64 ", metric conflicts %" PRIu64 ", gaps %" PRIu64 ", duplicates %"
		        PRIu64 ", file records skipped %"
		        PRIu64 ", access samples skipped %" PRIu64 ", subscriptions %" PRIu64 "\n",
		        st.msgs, st.bytes, as.members, as.groups, mode == RELAY_AGG_NODE ? "node" : "job",
		        as.deltas, as.snapshots, as.hellos, as.summaries, as.bytes_out, st.malformed + as.malformed,
		        as.refused, as.conflicts, as.gaps, as.duplicates, as.files_skipped, as.access_skipped, st.subs);
	relay_agg_free(ag);
	return IOGP_EXIT_OK;
}

static int relay_exec(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "publish", required_argument, NULL, 'p' },
		{ "upstream", required_argument, NULL, 'u' },
		{ "any-address", no_argument, NULL, 'A' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "aggregate", required_argument, NULL, 'a' },
		{ "interval", required_argument, NULL, 'i' },
		{ "summaries", no_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *listen[MAX_EP], *pub[MAX_EP], *up[MAX_EP];
	int nl = 0, np = 0, nu = 0, wide = 0, quiet = 0, c, agg = 0, summaries = 0;
	double interval = 1;
	optind = 1;
	while ((c = getopt_long(argc, argv, "l:p:u:qh", opts, NULL)) != -1) {
		int *n = c == 'l' ? &nl : c == 'p' ? &np : &nu;
		const char **v = c == 'l' ? listen : c == 'p' ? pub : up;
		switch (c) {
		case 'l':
		case 'p':
		case 'u':
			if (*n >= MAX_EP) {
				iogram_err("relay: at most %d endpoints of each kind", MAX_EP);
				return IOGP_EXIT_USAGE;
			}
			v[(*n)++] = optarg;
			break;
		case 'A': wide = 1; break;
		case 'q': quiet = 1; break;
		case 'S': summaries = 1; break;
		case 'a':
			if (!strcmp(optarg, "node"))
				agg = RELAY_AGG_NODE;
			else if (!strcmp(optarg, "job"))
				agg = RELAY_AGG_JOB;
			else {
				iogram_err("relay: --aggregate takes node or job");
				return IOGP_EXIT_USAGE;
			}
			break;
		case 'i':
			if (iogram_parse_double(optarg, &interval) < 0 || interval < 0.01 || interval > 3600) {
				iogram_err("relay: --interval takes 0.01 to 3600 seconds");
				return IOGP_EXIT_USAGE;
			}
			break;
		case 'h': relay_usage(stdout); return IOGP_EXIT_OK;
		default: relay_usage(stderr); return IOGP_EXIT_USAGE;
		}
	}
	if (optind != argc) {
		iogram_err("relay: unexpected argument '%s'", argv[optind]);
		return IOGP_EXIT_USAGE;
	}
	if (!agg && (summaries || interval != 1)) {
		iogram_err("relay: --interval and --summaries go with --aggregate");
		return IOGP_EXIT_USAGE;
	}
	if (!np && !nu) {
		iogram_err("relay: give --publish (viewers connect here) or --upstream (a parent relay)");
		relay_usage(stderr);
		return IOGP_EXIT_USAGE;
	}
	if (!nl)
		listen[nl++] = IOGP_DEFAULT_ENDPOINT;
	for (int i = 0; i < nl + np; i++) {
		const char *ep = i < nl ? listen[i] : pub[i - nl];
		if (!iogram_wide_ok("relay", ep, wide))
			return IOGP_EXIT_USAGE;
	}
	void *ctx = zmq_ctx_new();
	void *front = zmq_socket(ctx, ZMQ_XSUB), *back = zmq_socket(ctx, ZMQ_XPUB);
	int one = 1, zero = 0, rhwm = 1000000, shwm = 100000;
	zmq_setsockopt(front, ZMQ_RCVHWM, &rhwm, sizeof(rhwm));
	zmq_setsockopt(front, ZMQ_LINGER, &zero, sizeof(zero));
	iogp_sock_maxmsg(front, IOGP_SUB_MAXMSG);
	zmq_setsockopt(back, ZMQ_SNDHWM, &shwm, sizeof(shwm));
	zmq_setsockopt(back, ZMQ_LINGER, &zero, sizeof(zero));
	zmq_setsockopt(back, ZMQ_XPUB_VERBOSER, &one, sizeof(one));
	iogp_sock_maxmsg(back, IOGP_SUB_MAXSUB);
	/* no XPUB_NODROP: a full queue drops for that subscriber alone */
	int rc = 0;
	for (int i = 0; i < nl && !rc; i++)
		rc = iogram_bind(ctx, front, listen[i]);
	for (int i = 0; i < np && !rc; i++)
		rc = iogram_bind(ctx, back, pub[i]);
	for (int i = 0; i < nu && !rc; i++)
		rc = iogram_connect(ctx, back, up[i]);
	if (rc) {
		zmq_close(front);
		zmq_close(back);
		zmq_ctx_term(ctx);
		return IOGP_EXIT_ERROR;
	}
	iogram_catch_signals();
	if (agg) {
		rc = relay_aggregate(front, back, agg, (uint64_t)(interval * 1e9), summaries, quiet);
		zmq_close(front);
		zmq_close(back);
		zmq_ctx_term(ctx);
		return rc;
	}
	relay_stats st = { 0 };
	int tty = iogram_isatty_stderr() && !quiet;
	uint64_t next = iogp_mono_ns() + 1000000000ull, last_msgs = 0, sub_next = 0;
	int sub_pending = 0;
	while (!iogram_stop) {
		zmq_pollitem_t pi[2] = { { front, 0, ZMQ_POLLIN, 0 }, { back, 0, ZMQ_POLLIN, 0 } };
		if (zmq_poll(pi, 2, sub_pending ? 50 : 200) < 0 && zmq_errno() != EINTR)
			break;
		for (int k = 0; k < 4096 && take_sub(back, &st, &sub_pending); k++)
			;
		for (int k = 0; k < 65536 && move_msg(front, back, &st) != 0; k++)
			;
		uint64_t now = iogp_mono_ns();
		if (sub_pending && now >= sub_next) {
			/* one subscription to everything stands for all that came */
			if (zmq_send(front, "\x01", 1, ZMQ_DONTWAIT) == 1)
				st.subs_up++;
			sub_pending = 0;
			sub_next = now + SUB_COALESCE_NS;
		}
		if (tty && now >= next) {
			fprintf(stderr, "\rrelay: %" PRIu64 " msg/s, %" PRIu64 " passed, %" PRIu64
			        " dropped, %" PRIu64 " subscription changes   ",
			        st.msgs - last_msgs, st.msgs, st.dropped, st.subs);
			last_msgs = st.msgs;
			next = now + 1000000000ull;
		}
	}
	if (tty)
		fputc('\n', stderr);
	if (!quiet)
		fprintf(stderr, "iogram: relay passed %" PRIu64 " messages (%" PRIu64 " bytes), dropped %"
		        PRIu64 ", subscriptions %" PRIu64 " (%" PRIu64 " sent upstream), malformed %" PRIu64 "\n",
		        st.msgs, st.bytes, st.dropped, st.subs, st.subs_up, st.malformed);
	zmq_close(front);
	zmq_close(back);
	zmq_ctx_term(ctx);
	return IOGP_EXIT_OK;
}

const struct iogram_cmd iogram_cmd_relay = {
	.name = "relay",
	.summary = "forward streams (XSUB/XPUB) so relays chain into a tree",
	.exec = relay_exec,
};
