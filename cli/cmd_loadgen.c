/* cmd_loadgen.c - `iogram loadgen`: emulate N agents sending realistic
 * DELTAs, answering each new subscriber with SNAPSHOTs as agents do. Keeps a
 * model of what it sent, so it can print exact ground truth. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#include "iogp.h"
#include "iogram_cli.h"
#include "realistic.h"

static void loadgen_usage(FILE *out)
{
	fprintf(out,
	"usage: iogram loadgen --sources N --rate HZ [--endpoint E] [--duration S] [--restarts S]\n"
	"                      [--access N]\n"
	"                      [--sockets K] [--seed X] [--truth FILE] [--quiet]\n"
	"                      [--nodes M] [--jobs J]\n\n"
	"Emulates N agents, each sending a realistic DELTA (10 counters, 6 histograms\n"
	"of ~10 bins) HZ times a second, a SNAPSHOT as an agent sends them (once its\n"
	"DELTAs since the last add up to 16 times its size, or after 300 s) and to\n"
	"every new subscriber, and a final SNAPSHOT + BYE at the end, over K sockets (default\n"
	"min(N, 16)) connected to E (default " IOGP_DEFAULT_ENDPOINT "). --truth writes the\n"
	"totals it sent (metric,value) when it ends, and every histogram bin\n"
	"(metric@bin,count). --nodes M puts source i on host node%%04u of i mod M,\n"
	"--jobs J in job 4000000 + i mod J (default: hosts and jobs from the seed).\n"
	"--restarts S crashes every source once every S seconds (no BYE, spread over\n"
	"the period) and brings it back as a new source: new id and pid, same host,\n"
	"rank and job, counting from zero. --access N samples of file offsets in\n"
	"every DELTA (default 16, the most a busy agent sends a second; 0 for none).\n"
	"Sends never block: what the\n"
	"socket cannot take is dropped and counted, as in the agent.\n\n"
	"EXAMPLES\n"
	"  iogram loadgen --sources 256 --rate 10 --duration 30\n"
	"  iogram loadgen --sources 10000 --rate 10 --endpoint tcp://127.0.0.1:7462\n\n"
	"--fast sends each source's first DELTA again and again with the next\n"
	"sequence number (no model, no SNAPSHOTs, no --truth): cheap enough to load a\n"
	"recorder or relay at hundreds of thousands of messages per second.\n");
}

/* An emulated source: its identity (id, host, pid, rank: from its own
 * seed, as a realistic source of that seed would have), and what it sent.
 * Its messages come from one of a few shared generators (GENERATORS): a
 * realistic source keeps a full metric catalog (~170 KB), an emulated one
 * only this and the model's state of it. */
#define GENERATORS 64
/* access samples a DELTA carries by default: the most an agent sends a
 * busy source's viewers each second within its budget (agent/publisher.c) */
#define LOADGEN_ACCESS 16
typedef struct gsrc {
	realistic *r;       /* its generator (shared) */
	uint64_t id;
	char host[16], pid[16], rank[16], job[16];
	uint8_t *tmpl;      /* --fast: encoded DELTA with the seq varint cut out */
	size_t tmpl_len;
	uint64_t seq, deltas, next_ns;
	uint64_t since, snap;  /* DELTA bytes since its last SNAPSHOT; that one's bytes */
	uint64_t snap_ns;      /* when it was sent */
	uint64_t restart_ns;   /* --restarts: when it next crashes */
	uint64_t down_until;   /* crashed: silent until then, then a new source */
	int sock;
} gsrc;

static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static void gsrc_init(gsrc *s, uint64_t seed, uint64_t i, uint64_t nodes, uint64_t jobs)
{
	s->id = mix64(seed) | 1;   /* never 0 */
	snprintf(s->host, sizeof(s->host), "node%04u", (unsigned)(nodes ? i % nodes : seed % 4096));
	if (jobs)
		snprintf(s->job, sizeof(s->job), "%u", 4000000u + (unsigned)(i % jobs));
	snprintf(s->pid, sizeof(s->pid), "%u", 1000 + (unsigned)(mix64(seed ^ 0x5bd1e995) % 4000000));
	snprintf(s->rank, sizeof(s->rank), "%u", (unsigned)(seed % 100000));
}

/* A crash and a restart: the process dies without a BYE and comes back
 * as a new source (new id and pid, same host, rank and job, counting from
 * zero), as a job step restarted by its launcher would. */
static void gsrc_restart(gsrc *s)
{
	s->id = mix64(s->id ^ 0x7f4a7c159e3779b9ull) | 1;
	snprintf(s->pid, sizeof(s->pid), "%u", 1000 + (unsigned)(mix64(s->id) % 4000000));
	s->seq = 0;
	s->deltas = 0;
}

typedef struct lg {
	void **socks;
	int nsocks;
	gsrc *src;
	int n;
	iogp_model *model;
	iogp_msg msg, snap;
	uint8_t *buf;
	uint64_t sent, dropped, bytes, restarts;
	int fast;
} lg;

/* --fast: header (16 bytes) + varint seq + the template's sections. */
static void send_fast(lg *g, gsrc *s, uint64_t seq)
{
	memcpy(g->buf, s->tmpl, IOGP_WIRE_HEADER_MIN - 1);
	size_t n = IOGP_WIRE_HEADER_MIN - 1;
	n += iogp_varint_put(g->buf + n, seq);
	memcpy(g->buf + n, s->tmpl + IOGP_WIRE_HEADER_MIN - 1, s->tmpl_len - (IOGP_WIRE_HEADER_MIN - 1));
	n += s->tmpl_len - (IOGP_WIRE_HEADER_MIN - 1);
	char topic[64];
	int tl = iogp_topic(topic, sizeof(topic), IOGP_DELTA, s->id);
	if (zmq_send(g->socks[s->sock], topic, (size_t)tl, ZMQ_DONTWAIT | ZMQ_SNDMORE) < 0 ||
	    zmq_send(g->socks[s->sock], g->buf, n, ZMQ_DONTWAIT) < 0) {
		g->dropped++;
		return;
	}
	g->sent++;
	g->bytes += n;
}

static int make_template(lg *g, gsrc *s)
{
	realistic_delta(s->r, &g->msg, 1);
	g->msg.source = s->id;
	long len = iogp_msg_encode(&g->msg, g->buf, IOGP_MAX_PAYLOAD);
	if (len < 0)
		return -1;
	const uint8_t *p = g->buf + IOGP_WIRE_HEADER_MIN - 1;
	uint64_t seq;
	if (iogp_varint_get(&p, g->buf + len, &seq) < 0)
		return -1;
	size_t skip = (size_t)(p - (g->buf + IOGP_WIRE_HEADER_MIN - 1));
	s->tmpl_len = (size_t)len - skip;
	s->tmpl = malloc(s->tmpl_len);
	if (!s->tmpl)
		return -1;
	memcpy(s->tmpl, g->buf, IOGP_WIRE_HEADER_MIN - 1);
	memcpy(s->tmpl + IOGP_WIRE_HEADER_MIN - 1, p, (size_t)len - (size_t)(p - g->buf));
	return 0;
}

static long send_payload(lg *g, int sock, const iogp_msg *m, uint64_t now)
{
	long len = iogp_msg_encode(m, g->buf, IOGP_MAX_PAYLOAD);
	if (len < 0)
		return 0;
	/* the message as encoded is the message itself (the encoder writes
	 * only what the decoder gives back): applied without decoding it */
	if (!g->fast)
		iogp_model_apply(g->model, m, now);
	char topic[64];
	int tl = iogp_topic(topic, sizeof(topic), m->kind, m->source);
	if (zmq_send(g->socks[sock], topic, (size_t)tl, ZMQ_DONTWAIT | ZMQ_SNDMORE) < 0 ||
	    zmq_send(g->socks[sock], g->buf, (size_t)len, ZMQ_DONTWAIT) < 0) {
		g->dropped++;
		return len;
	}
	g->sent++;
	g->bytes += (uint64_t)len;
	return len;
}

static void send_hello(lg *g, int i, uint64_t now)
{
	gsrc *s = &g->src[i];
	s->since = s->snap = 0;   /* a new life: no SNAPSHOT yet */
	s->snap_ns = now;
	realistic_hello(s->r, &g->msg);
	/* the generator's labels with this source's identity */
	iogp_label lab[IOGP_MAX_LABELS];
	uint32_t n = g->msg.nlabels < IOGP_MAX_LABELS ? g->msg.nlabels : IOGP_MAX_LABELS;
	for (uint32_t k = 0; k < n; k++) {
		lab[k] = g->msg.labels[k];
		if (!strcmp(lab[k].key, "host"))
			lab[k].value = s->host;
		else if (!strcmp(lab[k].key, "pid"))
			lab[k].value = s->pid;
		else if (!strcmp(lab[k].key, "rank"))
			lab[k].value = s->rank;
		else if (!strcmp(lab[k].key, "job") && s->job[0])
			lab[k].value = s->job;
	}
	g->msg.labels = lab;
	g->msg.nlabels = n;
	g->msg.source = s->id;
	g->msg.seq = s->seq++;
	send_payload(g, g->src[i].sock, &g->msg, now);
}

static void send_snapshot(lg *g, int i, uint64_t now, uint16_t flags)
{
	size_t idx;
	if (iogp_model_source_index(g->model, g->src[i].id, &idx) < 0)
		return;
	if (iogp_model_snapshot(g->model, idx, flags, &g->snap) < 0)
		return;
	g->snap.seq = g->src[i].seq++;
	g->snap.flags = flags;
	g->src[i].snap = (uint64_t)send_payload(g, g->src[i].sock, &g->snap, now);
	g->src[i].since = 0;
	g->src[i].snap_ns = now;
}

/* An agent's periodic SNAPSHOT (agent/publisher.c): once the DELTAs since
 * the last one add up to SNAP_RATIO times its size, or SNAP_MAX_NS after it. */
#define SNAP_RATIO 16
#define SNAP_MAX_NS 300000000000ull
static int snapshot_due(const gsrc *s, uint64_t now)
{
	return (s->snap > 0 && s->since >= SNAP_RATIO * s->snap) || now - s->snap_ns >= SNAP_MAX_NS;
}

static void write_truth(lg *g, const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		iogram_err("loadgen: cannot write %s: %s", path, strerror(errno));
		return;
	}
	fprintf(f, "metric,value\n");
	iogp_sel all = { .kind = IOGP_SEL_ALL };
	for (size_t i = 0; i < iogp_model_metric_count(g->model); i++) {
		iogp_metric_info mi;
		if (iogp_model_metric(g->model, i, &mi) < 0)
			continue;
		if (mi.kind == IOGP_COUNTER) {
			uint64_t v = 0;
			iogp_model_counter(g->model, mi.name, &all, &v);
			fprintf(f, "%s,%" PRIu64 "\n", mi.name, v);
		} else if (mi.kind == IOGP_HISTOGRAM) {
			iogp_hist h;
			if (iogp_model_hist(g->model, mi.name, &all, &h) == 0) {
				fprintf(f, "%s,%" PRIu64 "\n", mi.name, h.total);
				for (size_t b = 0; b < h.n; b++)
					fprintf(f, "%s@%" PRIu64 ",%" PRIu64 "\n", mi.name, h.bins[b].idx,
					        h.bins[b].count);
			}
			iogp_hist_free(&h);
		}
	}
	fprintf(f, "sources,%d\n", g->n);
	fprintf(f, "restarts,%" PRIu64 "\n", g->restarts);
	fclose(f);
}

static int loadgen_exec(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "sources", required_argument, NULL, 'n' },
		{ "rate", required_argument, NULL, 'r' },
		{ "endpoint", required_argument, NULL, 'e' },
		{ "duration", required_argument, NULL, 'd' },
		{ "sockets", required_argument, NULL, 'k' },
		{ "seed", required_argument, NULL, 'x' },
		{ "truth", required_argument, NULL, 't' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "fast", no_argument, NULL, 'F' },
		{ "nodes", required_argument, NULL, 'N' },
		{ "jobs", required_argument, NULL, 'J' },
		{ "restarts", required_argument, NULL, 'R' },
		{ "access", required_argument, NULL, 'A' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t n = 0, k = 0, seed = 1, nodes = 0, jobs = 0;
	int fast = 0;
	double rate = 0, duration = 10, restarts = 0;
	uint64_t access = LOADGEN_ACCESS;
	const char *ep = IOGP_DEFAULT_ENDPOINT, *truth = NULL;
	int quiet = 0, c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "n:r:e:d:k:x:t:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (iogram_parse_u64(optarg, &n) < 0 || n < 1 || n > 100000) {
				iogram_err("loadgen: --sources takes 1..100000");
				return IOGP_EXIT_USAGE;
			}
			break;
		case 'r':
			if (iogram_parse_double(optarg, &rate) < 0 || rate <= 0 || rate > 1000) {
				iogram_err("loadgen: --rate takes (0, 1000] messages per second per source");
				return IOGP_EXIT_USAGE;
			}
			break;
		case 'd':
			if (iogram_parse_double(optarg, &duration) < 0 || duration <= 0) {
				iogram_err("loadgen: bad --duration");
				return IOGP_EXIT_USAGE;
			}
			break;
		case 'k':
			if (iogram_parse_u64(optarg, &k) < 0 || k < 1 || k > 1024) {
				iogram_err("loadgen: --sockets takes 1..1024");
				return IOGP_EXIT_USAGE;
			}
			break;
		case 'x':
			if (iogram_parse_u64(optarg, &seed) < 0) {
				iogram_err("loadgen: bad --seed");
				return IOGP_EXIT_USAGE;
			}
			break;
		case 'N':
		case 'J':
			if (iogram_parse_u64(optarg, c == 'N' ? &nodes : &jobs) < 0 ||
			    (c == 'N' ? nodes : jobs) < 1) {
				iogram_err("loadgen: --nodes and --jobs take a positive number");
				return IOGP_EXIT_USAGE;
			}
			break;
		case 'R':
			if (iogram_parse_double(optarg, &restarts) < 0 || restarts < 0.1) {
				iogram_err("loadgen: --restarts takes seconds (at least 0.1)");
				return IOGP_EXIT_USAGE;
			}
			break;
		case 'A':
			if (iogram_parse_u64(optarg, &access) < 0 || access > REALISTIC_MAX_ACCESS) {
				iogram_err("loadgen: --access takes 0..%d samples a DELTA", REALISTIC_MAX_ACCESS);
				return IOGP_EXIT_USAGE;
			}
			break;
		case 'e': ep = optarg; break;
		case 't': truth = optarg; break;
		case 'q': quiet = 1; break;
		case 'F': fast = 1; break;
		case 'h': loadgen_usage(stdout); return IOGP_EXIT_OK;
		default: loadgen_usage(stderr); return IOGP_EXIT_USAGE;
		}
	}
	if (optind != argc || !n || rate <= 0) {
		iogram_err("loadgen: --sources and --rate are required");
		loadgen_usage(stderr);
		return IOGP_EXIT_USAGE;
	}
	if (fast && (truth || restarts > 0)) {
		iogram_err("loadgen: --fast keeps no model, so it cannot write --truth or restart sources");
		return IOGP_EXIT_USAGE;
	}
	if (!k)
		k = n < 16 ? n : 16;
	if (k > n)
		k = n;
	lg g = { .nsocks = (int)k, .n = (int)n, .fast = fast };
	/* every restart is a source of its own in the model of what was sent */
	double lives = restarts > 0 ? 1 + duration / restarts : 1;
	/* the model of what was sent serves --truth and the SNAPSHOTs, which
	 * hold neither access samples nor activity runs: none kept (the
	 * samples were 16 a source a second, 0.6 GB after 30 s at 50,000) */
	iogp_model_opts mo = { .max_sources = (uint32_t)(n * lives < 1e6 ? n * lives + 16 : 1e6),
	                       .no_access = 1, .no_phases = 1 };
	g.model = iogp_model_new(&mo);
	g.buf = malloc(IOGP_MAX_PAYLOAD);
	g.src = calloc(n, sizeof(gsrc));
	g.socks = calloc(k, sizeof(void *));
	iogp_msg_init(&g.msg);
	iogp_msg_init(&g.snap);
	void *ctx = zmq_ctx_new();
	/* A socket queues at most ~4 s of its sources' messages (1,000 to
	 * 100,000), as an agent's queue is bounded: a stalled subscriber costs
	 * a few KB a source, then drops (counted), not gigabytes (100,000 a
	 * socket: 1.6 GB at 50,000 sources behind a stopped recorder). */
	double q = 4 * rate * ((double)n / (double)k + 1);
	int one = 1, hwm = q < 1000 ? 1000 : q > 100000 ? 100000 : (int)q, linger = 2000, ivl = 100;
	for (int s = 0; s < g.nsocks; s++) {
		g.socks[s] = zmq_socket(ctx, ZMQ_XPUB);
		zmq_setsockopt(g.socks[s], ZMQ_XPUB_VERBOSE, &one, sizeof(one));
		zmq_setsockopt(g.socks[s], ZMQ_SNDHWM, &hwm, sizeof(hwm));
		zmq_setsockopt(g.socks[s], ZMQ_LINGER, &linger, sizeof(linger));
		zmq_setsockopt(g.socks[s], ZMQ_RECONNECT_IVL, &ivl, sizeof(ivl));
		if (iogram_connect(ctx, g.socks[s], ep) < 0)
			return IOGP_EXIT_ERROR;
	}
	uint64_t period = (uint64_t)(1e9 / rate), start = iogp_mono_ns();
	uint64_t wall0 = iogp_wall_ns();
	realistic *gen[GENERATORS] = { NULL };
	int ngen = n < GENERATORS ? (int)n : GENERATORS;
	for (int i = 0; i < ngen; i++) {
		if (!(gen[i] = realistic_new(seed * 1000003u + (uint64_t)i))) {
			iogram_err("loadgen: out of memory");
			return IOGP_EXIT_ERROR;
		}
		realistic_set_interval(gen[i], period);
		realistic_set_access(gen[i], (uint32_t)access);
	}
	for (uint64_t i = 0; i < n; i++) {
		g.src[i].r = gen[i % (uint64_t)ngen];
		gsrc_init(&g.src[i], seed * 1000003u + i, i, nodes, jobs);
		g.src[i].sock = (int)(i % k);
		g.src[i].next_ns = start + period + period * i / n;
		if (restarts > 0)   /* spread over one restart period, after the first */
			g.src[i].restart_ns = start + (uint64_t)(restarts * 1e9 * (1.0 + (double)i / (double)n));
		if (fast && make_template(&g, &g.src[i]) < 0) {
			iogram_err("loadgen: cannot build a message template");
			return IOGP_EXIT_ERROR;
		}
		send_hello(&g, (int)i, wall0);
	}
	iogram_catch_signals();
	uint64_t end = start + (uint64_t)(duration * 1e9);
	uint64_t next_status = start + 1000000000ull, last_sent = 0;
	int tty = iogram_isatty_stderr() && !quiet;
	char sub[256];
	/* sources fall due in index order, one every period / n: a cursor finds
	 * the due ones and the next one in O(due), not a scan of every source
	 * per wake-up (which kept a core busy from ~1,000 sources on) */
	int cur = 0;
	while (!iogram_stop) {
		uint64_t now = iogp_mono_ns();
		if (now >= end)
			break;
		/* new subscribers: answer with HELLO + SNAPSHOT for that socket's sources */
		for (int s = 0; s < g.nsocks; s++) {
			int len;
			while ((len = zmq_recv(g.socks[s], sub, sizeof(sub), ZMQ_DONTWAIT)) > 0) {
				if (sub[0] != 1)
					continue;
				for (int i = s; i < g.n; i += g.nsocks) {
					if (g.src[i].down_until)
						continue;
					send_hello(&g, i, iogp_wall_ns());
					if (!fast)
						send_snapshot(&g, i, iogp_wall_ns(), 0);
				}
			}
		}
		uint64_t wall = iogp_wall_ns();
		for (int done = 0; done < g.n; done++, cur = (cur + 1) % g.n) {
			gsrc *s = &g.src[cur];
			if (s->next_ns > now)
				break;
			if (s->down_until && now >= s->down_until) {   /* back from a crash */
				gsrc_restart(s);
				g.restarts++;
				send_hello(&g, cur, wall);
				s->down_until = 0;
			}
			if (s->down_until) {
				/* crashed: silent, keeping its place in the schedule */
			} else if (fast) {
				send_fast(&g, s, s->seq++);
			} else {
				realistic_delta(s->r, &g.msg, ++s->deltas);
				g.msg.source = s->id;
				g.msg.seq = s->seq++;
				g.msg.wall_ns = wall;   /* viewers place rates on the real clock */
				s->since += (uint64_t)send_payload(&g, s->sock, &g.msg, wall);
				if (snapshot_due(s, wall))
					send_snapshot(&g, (int)(s - g.src), wall, 0);
			}
			s->next_ns += period;
			if (s->next_ns < now)   /* fell behind: do not burst */
				s->next_ns = now + period;
			if (s->restart_ns && now >= s->restart_ns) {
				/* silent for 5 intervals, so viewers see it quiet and
				 * link its next life to this one */
				s->down_until = now + 5 * period;
				s->restart_ns += (uint64_t)(restarts * 1e9);
			}
		}
		if (tty && now >= next_status) {
			fprintf(stderr, "\rloadgen: %" PRIu64 " msg/s, %" PRIu64 " sent, %" PRIu64 " dropped   ",
			        g.sent - last_sent, g.sent, g.dropped);
			last_sent = g.sent;
			next_status = now + 1000000000ull;
		}
		/* sleep until the next is due, at least 1 ms (the due ones then go
		 * as a batch), at most 20 ms (subscribers, status) */
		uint64_t soonest = g.src[cur].next_ns < end ? g.src[cur].next_ns : end;
		uint64_t wait = soonest > now ? soonest - now : 0;
		wait = wait < 1000000 ? 1000000 : wait > 20000000 ? 20000000 : wait;
		usleep((useconds_t)(wait / 1000));
	}
	uint64_t wall = iogp_wall_ns();
	for (int i = 0; i < g.n; i++) {
		if (g.src[i].down_until)
			continue;   /* crashed: it says nothing */
		if (!fast)
			send_snapshot(&g, i, wall, IOGP_F_FINAL);
		iogp_msg bye = { .kind = IOGP_BYE, .source = g.src[i].id,
		                 .seq = g.src[i].seq++ };
		send_payload(&g, g.src[i].sock, &bye, wall);
	}
	if (tty)
		fputc('\n', stderr);
	if (!quiet)
		fprintf(stderr, "iogram: loadgen sent %" PRIu64 " messages (%" PRIu64 " bytes) from %d sources"
		        ", dropped %" PRIu64 "\n", g.sent, g.bytes, g.n, g.dropped);
	if (truth)
		write_truth(&g, truth);
	for (int s = 0; s < g.nsocks; s++)
		zmq_close(g.socks[s]);
	zmq_ctx_term(ctx);
	for (int i = 0; i < g.n; i++)
		free(g.src[i].tmpl);
	for (int i = 0; i < ngen; i++)
		realistic_free(gen[i]);
	iogp_msg_free(&g.msg);
	iogp_msg_free(&g.snap);
	iogp_model_free(g.model);
	free(g.src);
	free(g.socks);
	free(g.buf);
	return IOGP_EXIT_OK;
}

const struct iogram_cmd iogram_cmd_loadgen = {
	.name = "loadgen",
	.summary = "emulate N agents sending realistic DELTAs (for scale tests)",
	.exec = loadgen_exec,
};
