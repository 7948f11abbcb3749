/* check_relay_nodes.c - the nodes and ranks table (iogp_node_table.h) and
 * the straggler finding behind a real `iogram relay --aggregate node
 * --summaries` on loopback: real `iogram loadgen` members (and one slow
 * member made here, loadgen having no straggler) pass through this test,
 * which keeps each member's exact truth in a model of its own, on to the
 * relay; what the relay publishes goes into a viewer's model and into
 * iogram-top in tmux. Node rows against each node's truth (and sources not
 * diluted by the summaries), a row per member with its own bytes, the slow
 * member first by I/O time against the median and named by the insight,
 * and iogram-top's ranks view showing the members and the straggler. */
#include <check.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <zmq.h>

#include "iogp.h"
#include "iogp_insights.h"
#include "iogp_layers.h"
#include "iogp_node_table.h"
#include "iogp_sys.h"
#include "testutil.h"
#include "testutil_tmux.h"

static const char *bin, *top_bin;
static char dir[256];

#define SLOW_ID 0x5eed5105ull
#define SLOW_NAME "rank 999 (node0000)"
#define SLOW_LAT_NS 20000000ull   /* 20 ms a read: loadgen's are tens of us to a few ms */

/* ---- the pipeline ---- */

typedef struct pipe {
	void *ctx, *hub_sub, *hub_pub, *view_sub;
	iogp_model *truth, *view;   /* what the members sent; what the relay published */
	iogp_msg msg;
	uint8_t *buf;
	iogp_bins lat;              /* loadgen's read latency scheme (the slow member's too) */
	int have_lat;
	uint64_t slow_seq, slow_mono0;
} pipe_t;

static void *sock(void *ctx, int type, const char *ep, int bind)
{
	void *s = zmq_socket(ctx, type);
	ck_assert_ptr_nonnull(s);
	int linger = 0, hwm = 0;
	zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof(linger));
	zmq_setsockopt(s, type == ZMQ_SUB ? ZMQ_RCVHWM : ZMQ_SNDHWM, &hwm, sizeof(hwm));
	if (type == ZMQ_SUB)
		zmq_setsockopt(s, ZMQ_SUBSCRIBE, "", 0);
	ck_assert_int_eq(bind ? zmq_bind(s, ep) : zmq_connect(s, ep), 0);
	return s;
}

/* A payload on to the relay, as an agent sends it (topic, payload). */
static void forward(pipe_t *p, const void *data, size_t n)
{
	ck_assert_int_ge(iogp_model_feed(p->truth, data, n, iogp_wall_ns()), 0);
	ck_assert_int_eq(iogp_msg_decode(&p->msg, data, n, NULL, 0), 0);
	char topic[64];
	int tl = iogp_topic(topic, sizeof(topic), p->msg.kind, p->msg.source);
	ck_assert_int_gt(tl, 0);
	ck_assert_int_ge(zmq_send(p->hub_pub, topic, (size_t)tl, ZMQ_SNDMORE), 0);
	ck_assert_int_ge(zmq_send(p->hub_pub, data, n, 0), 0);
}

/* Every message waiting on s: its payload (the last frame) to fn. */
static int drain(pipe_t *p, void *s, int to_relay)
{
	int got = 0;
	zmq_msg_t f;
	zmq_msg_init(&f);
	while (zmq_msg_recv(&f, s, ZMQ_DONTWAIT) >= 0) {
		while (zmq_msg_more(&f))
			ck_assert_int_ge(zmq_msg_recv(&f, s, 0), 0);
		if (to_relay)
			forward(p, zmq_msg_data(&f), zmq_msg_size(&f));
		else
			ck_assert_int_ge(iogp_model_feed(p->view, zmq_msg_data(&f), zmq_msg_size(&f),
			                                 iogp_wall_ns()), 0);
		got++;
	}
	zmq_msg_close(&f);
	return got;
}

/* The slow member: on node0000 with loadgen's members, rank 999; 50 reads
 * of 1 MiB a message, each taking SLOW_LAT_NS. HELLO first. */
static void slow_member(pipe_t *p)
{
	size_t gi;
	iogp_metric_info mi;
	if (!p->have_lat) {
		if (iogp_model_metric_find(p->truth, "posix.read.latency", &gi) < 0 ||
		    iogp_model_metric(p->truth, gi, &mi) < 0)
			return;   /* loadgen's catalog not here yet: the same scheme, or a conflict */
		p->lat = mi.bins;
		p->have_lat = 1;
	}
	iogp_msg m = { .source = SLOW_ID, .seq = ++p->slow_seq };
	uint64_t now = iogp_mono_ns();
	/* what m points to lives until it is encoded */
	iogp_label l[3] = { { "host", "node0000" }, { "rank", "999" }, { "pid", "4242" } };
	iogp_metric_def d[3] = {
		{ .id = 1, .kind = IOGP_COUNTER, .name = "posix.read.bytes", .unit = "bytes" },
		{ .id = 2, .kind = IOGP_COUNTER, .name = "posix.read.ops", .unit = "ops" },
		{ .id = 3, .kind = IOGP_HISTOGRAM, .name = "posix.read.latency", .unit = "ns", .bins = p->lat },
	};
	static iogp_counter_val c[2] = { { 1, 50u << 20 }, { 2, 50 } };
	iogp_bin b = { iogp_bins_index(&p->lat, SLOW_LAT_NS), 50 };
	iogp_hist_val h = { 3, 1, &b };
	if (p->slow_seq == 1) {
		m.kind = IOGP_HELLO;
		m.nlabels = 3;
		m.labels = l;
		m.nmetrics = 3;
		m.metrics = d;
		m.wall_ns = iogp_wall_ns();
		p->slow_mono0 = now;
	} else {
		m.kind = IOGP_DELTA;
		m.t0_ns = p->slow_mono0;
		m.t1_ns = now;
		m.wall_ns = iogp_wall_ns();
		m.ncounters = 2;
		m.counters = c;
		m.nhists = 1;
		m.hists = &h;
		p->slow_mono0 = now;
	}
	long n = iogp_msg_encode(&m, p->buf, IOGP_MAX_PAYLOAD);
	ck_assert_int_gt(n, 0);
	forward(p, p->buf, (size_t)n);
}

/* For secs: members' messages on to the relay (the slow member's every
 * 100 ms while slow is set), the relay's into the viewer's model; when the
 * process until ends (its exit status into *status), 1.5 s more. */
static void pump(pipe_t *p, double secs, int slow, pid_t until, int *status)
{
	double end = tu_now() + secs, next = 0;
	while (tu_now() < end) {
		zmq_pollitem_t pi[2] = { { p->hub_sub, 0, ZMQ_POLLIN, 0 }, { p->view_sub, 0, ZMQ_POLLIN, 0 } };
		zmq_poll(pi, 2, 20);
		drain(p, p->hub_sub, 1);
		drain(p, p->view_sub, 0);
		if (slow && tu_now() >= next) {
			slow_member(p);
			next = tu_now() + 0.1;
		}
		int st;
		if (until > 0 && waitpid(until, &st, WNOHANG) == until) {
			*status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
			until = 0;   /* loadgen ended: a little longer, for the relay's last flush */
			end = tu_now() + 1.5;
			slow = 0;
		}
	}
}

/* Started here, their pids noted in dir/pids: a check that fails first
 * leaves them behind its forked test, for main to stop. */
static pid_t spawn(const char *name, char *const argv[])
{
	tu_opts o = { .out = tu_fmt("%s/%s.out", dir, name), .err = tu_fmt("%s/%s.err", dir, name) };
	pid_t p = tu_spawn_opt(argv, &o);
	FILE *f = fopen(tu_fmt("%s/pids", dir), "a");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "%d\n", (int)p);
	fclose(f);
	return p;
}

/* Those of them still running (still this iogram, not a reused pid): killed. */
static void stop_leftovers(void)
{
	FILE *f = fopen(tu_fmt("%s/pids", dir), "r");
	int pid;
	while (f && fscanf(f, "%d", &pid) == 1) {
		char *cmd = tu_read_file(tu_fmt("/proc/%d/cmdline", pid), NULL);
		if (cmd && !strcmp(cmd, bin))
			kill(pid, SIGKILL);
		free(cmd);
	}
	if (f)
		fclose(f);
}
#define SPAWN(name, ...) spawn(name, (char *const[]){ (char *)bin, __VA_ARGS__, NULL })

/* A total of loadgen's --truth (metric,value lines). */
static uint64_t truth_of(const char *csv, const char *metric)
{
	char *t = tu_read_file(csv, NULL);
	ck_assert_ptr_nonnull(t);
	const char *p = strstr(t, tu_fmt("\n%s,", metric));
	ck_assert_msg(p != NULL, "%s not in %s", metric, csv);
	uint64_t v = strtoull(p + strlen(metric) + 2, NULL, 10);
	free(t);
	return v;
}

static uint64_t count(const iogp_model *m, const char *metric, const iogp_sel *sel)
{
	uint64_t v = 0;
	iogp_model_counter(m, metric, sel, &v);
	return v;
}

/* What a row says it moved: its rate over its span. */
static void check_bytes(const iogp_nt_row *r, uint64_t rd, uint64_t wr)
{
	double got_r = r->v[IOGP_NT_READ_BPS] * r->span_s, got_w = r->v[IOGP_NT_WRITE_BPS] * r->span_s;
	ck_assert_msg(fabs(got_r - (double)rd) <= 1e-6 * (double)rd + 0.5, "%s read %.0f, truth %" PRIu64,
	              r->name, got_r, rd);
	ck_assert_msg(fabs(got_w - (double)wr) <= 1e-6 * (double)wr + 0.5, "%s wrote %.0f, truth %" PRIu64,
	              r->name, got_w, wr);
}

/* Node rows: one per node, bytes and members as each node's truth. */
static void check_node_rows(const iogp_model *truth, const iogp_model *view)
{
	/* the roles the one-pass spans give are the labels' own; the full
	 * roles differ only where an aggregate is summarised */
	size_t ns = iogp_model_source_count(view);
	iogp_source_span *sp = malloc((ns + 1) * sizeof(*sp));
	uint8_t *roles = malloc(ns + 1);
	ck_assert(sp && roles);
	int relayed = -1, any_agg = 0, any_sum = 0;
	ck_assert_int_eq(iogp_model_source_spans(view, sp, &relayed), 0);
	ck_assert_int_eq(iogp_model_source_roles(view, roles), 0);
	for (size_t i = 0; i < ns; i++) {
		ck_assert_msg(sp[i].role == roles[i] ||
		              (sp[i].role == IOGP_ROLE_AGGREGATE && roles[i] == IOGP_ROLE_SUMMARISED),
		              "source %zu: role %d, roles %d", i, sp[i].role, roles[i]);
		any_agg |= sp[i].role == IOGP_ROLE_AGGREGATE;
		any_sum |= sp[i].role == IOGP_ROLE_SUMMARY;
	}
	ck_assert_int_eq(relayed, any_agg && any_sum);
	free(sp);
	free(roles);
	iogp_node_table t;
	iogp_nt_opts o = { .scope = IOGP_NT_NODES };
	ck_assert_int_eq(iogp_node_table_build(&t, view, &o), 0);
	ck_assert_uint_eq(t.n, iogp_model_node_count(truth));
	for (size_t i = 0; i < t.n; i++) {
		const iogp_nt_row *r = &t.rows[i];
		iogp_sel sel = { .kind = IOGP_SEL_NODE, .node = r->node };
		check_bytes(r, count(truth, "posix.read.bytes", &sel), count(truth, "posix.write.bytes", &sel));
		uint32_t members = 0;
		for (size_t k = 0; k < iogp_model_source_count(truth); k++) {
			iogp_source_info si;
			ck_assert_int_eq(iogp_model_source(truth, k, &si), 0);
			members += !strcmp(si.node, r->node);
		}
		/* the aggregate's members, not the summaries beside it */
		ck_assert_msg(r->sources == members, "%s: %u sources, truth %u", r->name, r->sources, members);
		ck_assert(!isnan(r->v[IOGP_NT_P99]) && !isnan(r->v[IOGP_NT_SHARE]));
	}
	iogp_node_table_free(&t);
}

/* A row per member with its own bytes; none for the aggregates; the slow
 * member first against the median. */
static void check_source_rows(const iogp_model *truth, const iogp_model *view, double window_s)
{
	iogp_node_table t;
	iogp_nt_opts o = { .scope = IOGP_NT_SOURCES, .window_s = window_s };
	ck_assert_int_eq(iogp_node_table_build(&t, view, &o), 0);
	size_t ns = iogp_model_source_count(truth);
	ck_assert_uint_eq(t.n, ns);
	for (size_t k = 0; k < ns; k++) {
		iogp_source_info si;
		ck_assert_int_eq(iogp_model_source(truth, k, &si), 0);
		const iogp_nt_row *r = NULL;
		for (size_t i = 0; i < t.n && !r; i++)
			if (t.rows[i].source == si.id)
				r = &t.rows[i];
		ck_assert_msg(r != NULL, "no row for rank %" PRId64, si.rank);
		ck_assert_str_eq(r->name, tu_fmt("rank %" PRId64 " (%s)", si.rank, si.node));
		iogp_sel one = { .kind = IOGP_SEL_SOURCE, .source = si.id };
		check_bytes(r, count(truth, "posix.read.bytes", &one), count(truth, "posix.write.bytes", &one));
		ck_assert_msg(r->v[IOGP_NT_IOTIME] > 0 && r->v[IOGP_NT_P99] > 0, "%s: no I/O time or p99", r->name);
		ck_assert(isnan(r->v[IOGP_NT_P50]) && isnan(r->v[IOGP_NT_QD99]));
	}
	size_t *ord = malloc(t.n * sizeof(*ord));
	iogp_node_table_order(&t, IOGP_NT_VSMED, 1, ord);
	ck_assert_str_eq(t.rows[ord[0]].name, SLOW_NAME);
	ck_assert_msg(t.rows[ord[0]].v[IOGP_NT_VSMED] >= 2, "the slow member at %.2fx the median",
	              t.rows[ord[0]].v[IOGP_NT_VSMED]);
	ck_assert(t.rows[ord[1]].v[IOGP_NT_VSMED] < 2);
	free(ord);
	iogp_node_table_free(&t);
}

static void check_insight(const iogp_model *view)
{
	iogp_insight ins[16];
	size_t n = 0;
	ck_assert_int_eq(iogp_model_insights(view, NULL, ins, 16, &n), 0);
	int found = 0;
	for (size_t i = 0; i < n; i++)
		if (ins[i].rule == IOGP_INS_STRAGGLER) {
			ck_assert_str_eq(ins[i].where, SLOW_NAME);
			found = 1;
		}
	ck_assert_msg(found, "no straggler finding among %zu", n);
}

/* iogram-top's ranks view: every member's row, the slow one first among the stragglers. */
static void check_screen(const iogp_model *truth)
{
	tu_tmux_keys("7");
	TU_SCREEN_CHECK(tu_tmux_wait("nodes by name asc", 1, 5), "no nodes view");
	TU_SCREEN_CHECK(tu_tmux_wait("slowest node0000", 1, 3), "no node0000 row");
	const char *s = tu_tmux_capture(0);
	TU_SCREEN_CHECK(strstr(s, "  node0001 ") && !strstr(s, "rank "), "not a row per node");
	fprintf(stderr, "---- iogram-top behind the relay: nodes ----\n%s\n", s);
	tu_tmux_keys("t");
	TU_SCREEN_CHECK(tu_tmux_wait("ranks by name asc", 1, 5), "no ranks view");
	TU_SCREEN_CHECK(tu_tmux_wait("slowest " SLOW_NAME, 1, 5), "the slow member is not the slowest");
	s = tu_tmux_capture(0);
	for (size_t k = 0; k < iogp_model_source_count(truth); k++) {
		iogp_source_info si;
		ck_assert_int_eq(iogp_model_source(truth, k, &si), 0);
		TU_SCREEN_CHECK(strstr(s, tu_fmt("rank %" PRId64 " (%s)", si.rank, si.node)) != NULL,
		                "rank %" PRId64 " not shown", si.rank);
	}
	TU_SCREEN_CHECK(strstr(s, "sources (node") == NULL, "an aggregate shown as a rank");
	/* the stragglers' list, top down: the slow member first, marked */
	const char *st = strstr(s, "stragglers:");
	TU_SCREEN_CHECK(st && strstr(st, "! " SLOW_NAME), "the slow member is not the first straggler");
	fprintf(stderr, "---- iogram-top behind the relay: ranks ----\n%s\n", s);
	/* in a window the summaries' rate rings answer: the slow member is
	 * still the slowest */
	tu_tmux_keys("w");
	TU_SCREEN_CHECK(tu_tmux_wait("ranks by name asc, last 10s", 1, 5), "no window");
	TU_SCREEN_CHECK(tu_tmux_wait("slowest " SLOW_NAME, 1, 3), "no slowest member in a window");
}

/* ---- a job's aggregate, in process ---- */

static void apply(iogp_model *m, iogp_msg *msg)
{
	static uint8_t buf[1 << 16];
	long n = iogp_msg_encode(msg, buf, sizeof(buf));
	ck_assert_int_gt(n, 0);
	ck_assert_int_ge(iogp_model_feed(m, buf, (size_t)n, 2000000000ull), 0);
}

/* A HELLO then a DELTA of read bytes (a summary's: its five metrics). */
static void source(iogp_model *m, uint64_t id, const iogp_label *l, uint32_t nl, int summary, uint64_t rd,
                   uint64_t io_ns)
{
	iogp_metric_def d[5] = {
		{ .id = 1, .kind = IOGP_COUNTER, .name = summary ? IOGP_M_SUMMARY_READ_BYTES : "posix.read.bytes",
		  .unit = "bytes" },
		{ .id = 2, .kind = IOGP_COUNTER, .name = IOGP_M_SUMMARY_WRITE_BYTES, .unit = "bytes" },
		{ .id = 3, .kind = IOGP_COUNTER, .name = IOGP_M_SUMMARY_OPS, .unit = "ops" },
		{ .id = 4, .kind = IOGP_COUNTER, .name = IOGP_M_SUMMARY_IO_TIME, .unit = "ns" },
		{ .id = 5, .kind = IOGP_GAUGE, .name = IOGP_M_SUMMARY_P99, .unit = "ns" },
	};
	iogp_msg h = { .kind = IOGP_HELLO, .source = id, .seq = 1, .nlabels = nl, .labels = (iogp_label *)l,
	               .nmetrics = summary ? 5 : 1, .metrics = d, .wall_ns = 1000000000ull };
	apply(m, &h);
	iogp_counter_val c[3] = { { 1, rd }, { 3, 10 }, { 4, io_ns } };
	iogp_msg v = { .kind = IOGP_DELTA, .source = id, .seq = 2, .t0_ns = 0, .t1_ns = 1000000000ull,
	               .wall_ns = 2000000000ull, .ncounters = summary ? 3 : 1, .counters = c };
	apply(m, &v);
}

static iogp_node_table table(const iogp_model *m, int scope)
{
	iogp_node_table t;
	iogp_nt_opts o = { .scope = scope };
	ck_assert_int_eq(iogp_node_table_build(&t, m, &o), 0);
	return t;
}

/* Behind `--aggregate job`: the aggregate's host is the job's name. With
 * its members' summaries, nodes from them and no "job" node; without,
 * one row "job NAME" of its members. */
START_TEST(test_job_aggregate)
{
	iogp_model *m = iogp_model_new(NULL);
	iogp_label agg[5] = { { "host", "j7" }, { "job", "j7" }, { "aggregate", "job" }, { "sources", "2" } };
	source(m, 1, agg, 4, 0, 3000, 0);
	iogp_node_table t = table(m, IOGP_NT_NODES);
	ck_assert_uint_eq(t.n, 1);
	ck_assert_str_eq(t.rows[0].name, "job j7");
	ck_assert_uint_eq(t.rows[0].sources, 2);
	iogp_node_table_free(&t);
	t = table(m, IOGP_NT_SOURCES);
	ck_assert_uint_eq(t.n, 1);
	ck_assert_str_eq(t.rows[0].name, "2 sources (j7)");
	iogp_node_table_free(&t);
	/* the members' summaries arrive: they make the rows */
	iogp_label s1[4] = { { "host", "n1" }, { "rank", "0" }, { "job", "j7" }, { "summary", "1" } };
	iogp_label s2[4] = { { "host", "n2" }, { "rank", "1" }, { "job", "j7" }, { "summary", "1" } };
	source(m, 2, s1, 4, 1, 1000, 5000000);
	source(m, 3, s2, 4, 1, 2000, 50000000);
	t = table(m, IOGP_NT_NODES);
	ck_assert_uint_eq(t.n, 2);
	for (size_t i = 0; i < 2; i++) {
		ck_assert_str_eq(t.rows[i].name, i ? "n2" : "n1");
		ck_assert_uint_eq(t.rows[i].sources, 1);
		check_bytes(&t.rows[i], i ? 2000 : 1000, 0);
		ck_assert(t.rows[i].v[IOGP_NT_IOTIME] == (i ? 0.05 : 0.005));
	}
	iogp_node_table_free(&t);
	t = table(m, IOGP_NT_SOURCES);
	ck_assert_uint_eq(t.n, 2);
	ck_assert_str_eq(t.rows[0].name, "rank 0 (n1)");
	ck_assert_str_eq(t.rows[1].name, "rank 1 (n2)");
	/* reads only: all the ops are reads */
	ck_assert(fabs(t.rows[1].v[IOGP_NT_READ_OPS] * t.rows[1].span_s - 10) < 1e-9);
	ck_assert(t.rows[1].v[IOGP_NT_WRITE_OPS] == 0);
	iogp_node_table_free(&t);
	iogp_model_free(m);
}
END_TEST

START_TEST(test_relay_nodes)
{
	int p0 = tu_free_port(), p1 = tu_free_port(), p2 = tu_free_port();
	char *truth_csv = tu_fmt("%s/truth.csv", dir);
	pid_t relay = SPAWN("relay", "relay", "--aggregate", "node", "--summaries", "--interval", "0.2",
	                    "--listen", tu_ep(p1), "--publish", tu_ep(p2));
	ck_assert_int_gt(relay, 0);
	pipe_t p = { 0 };
	p.ctx = zmq_ctx_new();
	p.buf = malloc(IOGP_MAX_PAYLOAD);
	p.truth = iogp_model_new(NULL);
	iogp_model_opts vo = { .live = 1, .bin_ns = 1000000000ull, .ring_bins = 120, .source_ring_bins = 120 };
	vo.nrates = iogp_layer_rate_set(vo.rates, IOGP_MODEL_MAX_RATES, 1);   /* iogram-top's */
	p.view = iogp_model_new(&vo);
	iogp_msg_init(&p.msg);
	ck_assert(p.ctx && p.buf && p.truth && p.view);
	ck_assert(tu_wait_port(p1, 5));
	p.hub_sub = sock(p.ctx, ZMQ_SUB, tu_ep(p0), 1);
	p.hub_pub = sock(p.ctx, ZMQ_PUB, tu_ep(p1), 0);
	p.view_sub = sock(p.ctx, ZMQ_SUB, tu_ep(p2), 0);
	tu_tmux_start(dir, 200, 60, "TERM=xterm LANG=C.UTF-8", tu_fmt("%s --connect %s", top_bin, tu_ep(p2)));
	TU_SCREEN_CHECK(tu_tmux_wait("waiting for the relay", 1, 5), "iogram-top did not start");
	pump(&p, 1.0, 0, 0, NULL);   /* subscriptions through: the relay's to us, ours to it */
	pid_t lg = SPAWN("lg", "loadgen", "--sources", "16", "--rate", "10", "--duration", "3", "--nodes", "2",
	                 "--access", "0", "--endpoint", tu_ep(p0), "--truth", truth_csv);
	int lg_status = -1;
	pump(&p, 30, 1, lg, &lg_status);
	ck_assert_int_eq(lg_status, 0);
	/* the truth is what loadgen sent (its --truth) and the slow member's */
	ck_assert_uint_eq(count(p.truth, "posix.read.bytes", NULL),
	                  truth_of(truth_csv, "posix.read.bytes") + (p.slow_seq - 1) * (50u << 20));
	ck_assert_uint_eq(count(p.truth, "posix.write.bytes", NULL), truth_of(truth_csv, "posix.write.bytes"));
	ck_assert_uint_eq(iogp_model_source_count(p.truth), 17);
	check_node_rows(p.truth, p.view);
	check_source_rows(p.truth, p.view, 0);
	/* the whole run is within the last 60 s: a window's rows, from the
	 * summaries' rate rings, say the same */
	check_source_rows(p.truth, p.view, 60);
	check_insight(p.view);
	check_screen(p.truth);
	tu_tmux_keys("q");
	tu_tmux_wait("IOGTOP-EXIT=0", 1, 5);
	tu_tmux_kill();
	ck_assert_int_eq(tu_stop(relay, SIGTERM, 15), 0);
	zmq_close(p.hub_sub);
	zmq_close(p.hub_pub);
	zmq_close(p.view_sub);
	zmq_ctx_term(p.ctx);
	iogp_msg_free(&p.msg);
	iogp_model_free(p.truth);
	iogp_model_free(p.view);
	free(p.buf);
}
END_TEST

int main(void)
{
	bin = getenv("IOGRAM_BIN");
	top_bin = getenv("IOGRAM_TOP");
	if (!bin || !top_bin) {
		fprintf(stderr, "check_relay_nodes: set IOGRAM_BIN, IOGRAM_TOP\n");
		return 1;
	}
	if (tu_tmux_suite_begin("relay_nodes", dir, sizeof(dir)) < 0)
		return 1;
	Suite *s = suite_create("relay_nodes");
	TCase *tc = tcase_create("relay");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_job_aggregate);
	tcase_add_test(tc, test_relay_nodes);
	suite_add_tcase(s, tc);
	int failed = tu_run_srunner(s);
	stop_leftovers();
	tu_tmux_kill();
	return tu_tmux_suite_end("relay_nodes", dir, failed);
}
