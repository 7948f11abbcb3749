/* bench_modelmem.c - what a viewer's model holds per source, and what a
 * DELTA costs to apply, as sources grow: N realistic sources (synth/) with
 * iogram-top's live options (viewer-tui/input.c) each send a HELLO and
 * BENCH_DELTAS DELTAs of 1 s; heap in use (mallinfo2) per source, the
 * live side's share (rate rings, windows) and the apply time per DELTA.
 * Target (issue 16): <= 16 KB per source with the default history.
 * BENCH_N: one size; BENCH_SCATTER=1: a node's 16 sources spread over the
 * order of arrival (as loadgen's), not neighbours; BENCH_SETTLE_AB=R: R
 * more rounds, each followed by a settle of every node's log, fetching
 * ahead and not in turns (the medians of each). */
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iogp.h"
#include "iogp_insights.h"
#include "iogp_layers.h"
#include "iogp_node_table.h"
#include "iogp_testing.h"
#include "realistic.h"
#include "testutil.h"

#define T0_WALL 1790000000000000000ull

/* What iogram-top's access panel asks the model each time it refreshes
 * (viewer-tui/panel_access.c files, samples_of): the layer's files, the
 * files with samples in its 30 s window, and the busiest file's samples. */
static void panel_queries(const iogp_model *m, uint32_t n, uint64_t from_ns)
{
	double t0 = tu_now();
	iogp_file_info *fi = NULL;
	size_t nfi = 0, naf = 0;
	if (iogp_model_files(m, NULL, IOGP_LAYER_POSIX, &fi, &nfi) < 0)
		nfi = 0;
	double t1 = tu_now();
	iogp_access_query q = { .metric = iogp_layer_slot_metric(IOGP_LAYER_POSIX, IOGP_SLOT_ACCESS),
	                        .from_ns = from_ns, .max = 50000 };
	iogp_access_file *af = NULL;
	if (iogp_model_access_files(m, &q, &af, &naf) < 0)
		naf = 0;
	double t2 = tu_now();
	iogp_access_set set;
	memset(&set, 0, sizeof set);
	q.path = naf ? af[0].path : NULL;
	int rc = q.path ? iogp_model_access_query(m, &q, &set) : -1;
	double t3 = tu_now();
	printf("%6u sources: access panel's queries: files %.1f ms (%zu), files with samples %.1f ms (%zu), "
	       "one file's samples %.1f ms (%zu)\n", n, (t1 - t0) * 1e3, nfi, (t2 - t1) * 1e3, naf,
	       (t3 - t2) * 1e3, rc == 0 ? set.n : 0);
	if (rc == 0)
		iogp_access_set_free(&set);
	iogp_model_files_free(fi);
	free(af);
}

/* Source i's DELTA of second s, from its generator g. */
static void delta_of(realistic *g, iogp_msg *msg, uint32_t i, int s)
{
	realistic_delta(g, msg, (uint64_t)s);
	msg->source = 0x100000 + i;
	msg->wall_ns = T0_WALL + (uint64_t)s * 1000000000ull + i;
}

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* What iogram-top's nodes panel (key 7) asks: the node table over a
 * window of 30 s and since the start (iogram-top's default), the first
 * time (every node's logged bins applied first) and again. */
static void nodes_query(const iogp_model *m, uint32_t n)
{
	int reps = getenv("BENCH_NT_REPS") ? atoi(getenv("BENCH_NT_REPS")) : 2;
	int since = getenv("BENCH_NT_SINCE") != NULL;   /* since the start only */
	/* BENCH_NT_WIN=S: every build over the last S s (key w); BENCH_NT_RANKS=1:
	 * a row per source (key t) */
	double win = getenv("BENCH_NT_WIN") ? atof(getenv("BENCH_NT_WIN")) : 30;
	int ranks = getenv("BENCH_NT_RANKS") != NULL;
	iogp_node_table kept, lazy;   /* as iogram-top: rebuilt in the last frame's memory */
	memset(&kept, 0, sizeof kept);
	memset(&lazy, 0, sizeof lazy);
	for (int k = 0; k < reps; k++) {
		iogp_nt_opts o = { .scope = ranks ? IOGP_NT_SOURCES : IOGP_NT_NODES,
		                   .layer = IOGP_LAYER_POSIX,
		                   .window_s = (k % 2 && !getenv("BENCH_NT_WIN")) || since ? 0 : win };
		iogp_node_table t;
		double t0 = tu_now();
		int rc = iogp_node_table_build(&t, m, &o);
		double t1 = tu_now();
		int rk = iogp_node_table_rebuild(&kept, m, &o);
		double t2 = tu_now();
		char ws[32];
		snprintf(ws, sizeof ws, "%g s", o.window_s);
		printf("%6u sources: %s table (key 7) %s, %s %.1f ms (%zu rows); rebuilt in place %.1f ms\n",
		       n, ranks ? "ranks" : "node", o.window_s > 0 ? ws : "since start", k ? "again" : "first", (t1 - t0) * 1e3,
		       rc == 0 ? t.n : 0, rk == 0 ? (t2 - t1) * 1e3 : -1.0);
		/* as iogram-top draws it: lazy rows ordered by name, 45 lines picked
		 * and made whole (and, to compare, every row ordered) */
		o.lazy = 1;
		o.lazy_col = IOGP_NT_NAME;
		double t3 = tu_now();
		int rl = iogp_node_table_rebuild(&lazy, m, &o);
		iogp_nt_line lines[45];
		size_t nl = rl == 0 ? iogp_node_table_lines_by(&lazy, IOGP_NT_NAME, 0, 45, lines) : 0, shown[45], nsh = 0;
		for (size_t i = 0; i < nl; i++)
			if (lines[i].row >= 0)
				shown[nsh++] = (size_t)lines[i].row;
		iogp_node_table_fill(&lazy, m, shown, nsh);
		double t4 = tu_now();
		size_t *ord = rc == 0 ? malloc((t.n ? t.n : 1) * sizeof(*ord)) : NULL;
		if (ord)
			iogp_node_table_order(&t, IOGP_NT_NAME, 0, ord);
		double t5 = tu_now();
		printf("%6u sources: the same drawn lazily (45 lines by name, made whole) %.1f ms; every row "
		       "ordered by name %.1f ms\n", n, rl == 0 ? (t4 - t3) * 1e3 : -1.0, (t5 - t4) * 1e3);
		free(ord);
		if (rc == 0)
			iogp_node_table_free(&t);
	}
	iogp_node_table_free(&kept);
	iogp_node_table_free(&lazy);
}

/* What iogram-top's first line asks every frame: the sources' states (a
 * visit of every source), and the drops and msgs/s, which it once took
 * by visiting every source too and now takes in constant time. */
static void header_query(const iogp_model *m, uint32_t n)
{
	double t0 = tu_now();
	iogp_model_live lv;
	iogp_model_get_live(m, &lv);
	double t1 = tu_now();
	uint64_t drops = 0;
	for (size_t i = 0; i < iogp_model_source_count(m); i++) {
		iogp_source_info si;
		if (iogp_model_source(m, i, &si) == 0)
			drops += si.dropped;
	}
	double t2 = tu_now();
	iogp_model_stats st;
	iogp_model_get_stats(m, &st);
	double mps = iogp_model_msgs_per_s(m);
	double t3 = tu_now();
	printf("%6u sources: header: states %.2f ms (a visit); drops by a visit %.2f ms, from the "
	       "model's sum and msgs/s %.4f ms (%s, %.0f msg/s)\n", n, (t1 - t0) * 1e3, (t2 - t1) * 1e3,
	       (t3 - t2) * 1e3, drops == st.dropped ? "equal" : "DIFFER", mps);
}

/* What iogram-top's header asks each time the data changed (at most
 * every few seconds when slow): the findings of all sources. */
static void insights_query(const iogp_model *m, uint32_t n)
{
	int reps = getenv("BENCH_INS_REPS") ? atoi(getenv("BENCH_INS_REPS")) : 2;
	for (int k = 0; k < reps; k++) {
		iogp_insight v[32];
		size_t nv = 0;
		double t0 = tu_now();
		int rc = iogp_model_insights(m, NULL, v, 32, &nv);
		printf("%6u sources: findings (the header) %.1f ms (%zu)\n", n, (tu_now() - t0) * 1e3,
		       rc == 0 ? nv : 0);
		/* as iogram-top takes them: begun in a frame, then slices of
		 * 1,024 sources between frames; a key waits for one at most */
		double b0 = tu_now(), worst = 0, all;
		iogp_insights_job *j = iogp_insights_begin(m, NULL);
		double begin = tu_now() - b0;
		int more = j ? 1 : -1, slices = 0;
		while (more == 1) {
			double s0 = tu_now();
			more = iogp_insights_step(j, m, 1024);
			double took = tu_now() - s0;
			worst = took > worst ? took : worst;
			slices++;
		}
		double f0 = tu_now();
		rc = j ? iogp_insights_finish(j, m, v, 32, &nv) : -1;
		all = tu_now() - b0;
		printf("%6u sources: findings in slices: begin %.2f ms, %d slices of <= %.2f ms, finish "
		       "%.2f ms, %.1f ms in all (%zu)\n", n, begin * 1e3, slices, worst * 1e3,
		       (tu_now() - f0) * 1e3, all * 1e3, rc == 0 ? nv : 0);
		iogp_insights_free(j);
	}
}

static int run(uint32_t n, int deltas)
{
	iogp_model_opts o = {
		.live = 1, .bin_ns = 1000000000ull, .ring_bins = 600, .source_ring_bins = 120, .rate_total = 128ull << 20,
		.window_slot_ns = 2000000000ull,
		.window_max_ns = 300000000000ull, .window_bytes = 65536, .window_total = 128ull << 20, .access_total = 4u << 20,
	};
	o.nrates = iogp_layer_rate_set(o.rates, IOGP_MODEL_MAX_RATES, 1);   /* iogram-top's */
	if (getenv("BENCH_SOURCE_RING"))
		o.source_ring_bins = (uint32_t)atoi(getenv("BENCH_SOURCE_RING"));
	if (getenv("BENCH_WINDOW_BYTES"))
		o.window_bytes = (uint32_t)atoi(getenv("BENCH_WINDOW_BYTES"));
	int scatter = getenv("BENCH_SCATTER") && atoi(getenv("BENCH_SCATTER")) != 0;
	size_t heap0 = mallinfo2().uordblks;
	iogp_model *m = iogp_model_new(&o);
	enum { GEN = 64 };   /* generators, their messages re-addressed to n sources */
	realistic *src[GEN];
	uint8_t *buf = malloc(1u << 20);
	iogp_msg msg, dec;
	iogp_msg_init(&msg);
	iogp_msg_init(&dec);
	if (!m || !buf)
		return -1;
	for (int g = 0; g < GEN; g++) {
		src[g] = realistic_new(1000 + (uint64_t)g);
		/* as loadgen: a busy agent's samples a second (BENCH_ACCESS=0: none) */
		realistic_set_access(src[g], getenv("BENCH_ACCESS") ? (uint32_t)atoi(getenv("BENCH_ACCESS")) : 16);
	}
	size_t heap1 = mallinfo2().uordblks;
	double apply = 0;
	uint64_t applied = 0;
	for (uint32_t i = 0; i < n; i++) {
		realistic_hello(src[i % GEN], &msg);
		msg.source = 0x100000 + i;
		iogp_label lab[IOGP_MAX_LABELS];
		char host[32];
		/* 16 sources a node, neighbours in order (BENCH_SCATTER=1: spread,
		 * as loadgen's hosts are, so that one node's DELTAs do not come
		 * together and its sums are out of cache for each) */
		uint32_t nodes = n / 16 ? n / 16 : 1;
		snprintf(host, sizeof(host), "node%04u",
		         scatter ? (uint32_t)(((uint64_t)i * 7919u) % nodes) : i / 16);
		for (uint32_t k = 0; k < msg.nlabels && k < IOGP_MAX_LABELS; k++) {
			lab[k] = msg.labels[k];
			if (!strcmp(lab[k].key, "host"))
				lab[k].value = host;
		}
		msg.labels = lab;
		if (iogp_model_apply(m, &msg, T0_WALL) < 0)
			return -1;
	}
	/* the last FEED rounds go in as payloads: one at a time
	 * (iogp_model_feed, as the viewers did) and in batches of 8
	 * (iogp_model_feed_many, as they do), in turns */
	enum { FEED = 4 };
	double feed_t[2] = { 0, 0 };
	uint64_t fed[2] = { 0, 0 };
	size_t cap = (size_t)n * 2048, used;
	uint8_t *pay = malloc(cap);
	size_t *off = malloc(((size_t)n + 1) * sizeof *off);
	if (!pay || !off)
		return -1;
	for (int s = 1; s <= deltas; s++) {
		int feed = s > deltas - FEED ? 1 + s % 2 : 0;   /* 1: singles, 2: batches */
		used = 0;
		for (uint32_t i = 0; i < n; i++) {
			delta_of(src[i % GEN], &msg, i, s);
			if (feed) {
				long len = iogp_msg_encode(&msg, pay + used, cap - used);
				if (len <= 0)
					return -1;
				off[i] = used;
				used += (size_t)len;
				continue;
			}
			double t0 = tu_now();
			if (iogp_model_apply(m, &msg, msg.wall_ns) < 0)
				return -1;
			apply += tu_now() - t0;
			applied++;
		}
		if (!feed)
			continue;
		off[n] = used;
		uint64_t recv = T0_WALL + (uint64_t)s * 1000000000ull + n;
		double t0 = tu_now();
		for (uint32_t i = 0; i < n;) {
			const void *p[8];
			size_t len[8], k = 0;
			for (; k < (feed == 2 ? 8u : 1u) && i < n; k++, i++) {
				p[k] = pay + off[i];
				len[k] = off[i + 1] - off[i];
			}
			if (feed == 1 ? iogp_model_feed(m, p[0], len[0], recv) < 0 :
			    iogp_model_feed_many(m, p, len, k, recv) != k)
				return -1;
		}
		feed_t[feed - 1] += tu_now() - t0;
		fed[feed - 1] += n;
	}
	free(pay);
	free(off);
	/* BENCH_SETTLE_AB=R: R more rounds of a DELTA a source, each followed
	 * by a settle of every node's log, fetching ahead and not in turns
	 * (one process: this machine's noise is a fifth between runs) */
	int ab = getenv("BENCH_SETTLE_AB") ? atoi(getenv("BENCH_SETTLE_AB")) : 0;
	double ab_ms[2][64];
	int ab_n[2] = { 0, 0 };
	ab = ab <= 0 ? 0 : ab > 128 ? 128 : ab + ab % 2;   /* as many each way */
	if (ab > 0)   /* what the rounds before left, settled untimed */
		iogp_model_settle(m, iogp_model_node_count(m));
	for (int r = 0; r < ab; r++) {
		int s = deltas + 1 + r;
		for (uint32_t i = 0; i < n; i++) {
			delta_of(src[i % GEN], &msg, i, s);
			if (iogp_model_apply(m, &msg, msg.wall_ns) < 0)
				return -1;
		}
		int ahead = r % 2;
		iogp__model_settle_ahead(m, ahead);
		double t0 = tu_now();
		iogp_model_settle(m, iogp_model_node_count(m));
		ab_ms[ahead][ab_n[ahead]++] = (tu_now() - t0) * 1e3;
		iogp__model_settle_ahead(m, 1);
	}
	if (ab > 0) {
		deltas += ab;
		for (int k = 0; k < 2; k++)
			qsort(ab_ms[k], (size_t)ab_n[k], sizeof(double), dbl_cmp);
		printf("%6u sources: every node's log settled after a round, median of %d: fetching ahead %.1f ms "
		       "(%.1f-%.1f), one node after another %.1f ms (%.1f-%.1f)\n", n, ab_n[1],
		       ab_ms[1][ab_n[1] / 2], ab_ms[1][0], ab_ms[1][ab_n[1] - 1], ab_ms[0][ab_n[0] / 2], ab_ms[0][0],
		       ab_ms[0][ab_n[0] - 1]);
	}
	iogp_model_tick(m, T0_WALL + (uint64_t)(deltas + 1) * 1000000000ull);
	iogp_model_live lv;
	iogp_model_get_live(m, &lv);
	size_t heap = mallinfo2().uordblks;
	/* the generators' own memory is not the model's */
	double per = ((double)heap - (double)heap0 - (double)(heap1 - heap0)) / n;
	iogp_access_mem am;
	iogp_model_access_mem(m, &am);
	printf("%6u sources x %d DELTAs: model heap %.1f KB per source (live rings and windows %.1f KB, "
	       "node and whole sums %.1f KB, access samples %.1f KB), apply %.2f us per DELTA%s\n", n, deltas, per / 1024,
	       (double)lv.live_bytes / n / 1024, (double)lv.agg_bytes / n / 1024, (double)am.bytes / n / 1024,
	       apply * 1e6 / (double)applied, n >= 50000 && per > 16384 ? "  ABOVE TARGET (16 KB at 50,000)" : "");
	printf("%6u sources: window deltas dropped %" PRIu64 " of %" PRIu64 ", slots evicted %" PRIu64 "\n",
	       n, lv.window_dropped, (uint64_t)n * (uint64_t)deltas * REALISTIC_NHISTS, lv.window_evicted);
	printf("%6u sources: decode and apply %.2f us per DELTA one at a time, %.2f us in batches of 8\n",
	       n, feed_t[0] * 1e6 / (double)(fed[0] ? fed[0] : 1), feed_t[1] * 1e6 / (double)(fed[1] ? fed[1] : 1));
	header_query(m, n);
	/* what a key's first nodes table waits for: every node's logged bins,
	 * the last second's, applied to its sums (iogram-top settles them in
	 * rounds while it idles; a key between rounds finds up to one) */
	double s0 = tu_now();
	size_t had = iogp_model_settle(m, iogp_model_node_count(m));
	if (ab == 0)   /* the A/B's last round settled them all */
		printf("%6u sources: the nodes' logs applied (as a key's first nodes table) %.1f ms, %zu of %zu "
		       "nodes had bins logged\n", n, (tu_now() - s0) * 1e3, had, iogp_model_node_count(m));
	nodes_query(m, n);
	insights_query(m, n);
	for (int k = 0; k < 3; k++)   /* the first one finds the model out of cache, as iogram-top does */
		panel_queries(m, n, T0_WALL + (uint64_t)(deltas - 30) * 1000000000ull);
	for (int g = 0; g < GEN; g++)
		realistic_free(src[g]);
	free(buf);
	iogp_msg_free(&msg);
	iogp_msg_free(&dec);
	iogp_model_free(m);
	return 0;
}

int main(void)
{
	int deltas = getenv("BENCH_DELTAS") ? atoi(getenv("BENCH_DELTAS")) : 40;
	static const uint32_t ns[] = { 1000, 5000, 20000, 50000 };
	int bad = 0;
	uint32_t one = getenv("BENCH_N") ? (uint32_t)atoi(getenv("BENCH_N")) : 0;   /* one size */
	for (size_t k = 0; k < sizeof(ns) / sizeof(*ns); k++)
		if (!one || one == ns[k])
			bad |= run(ns[k], deltas) < 0;
	if (one && one != 1000 && one != 5000 && one != 20000 && one != 50000)
		bad |= run(one, deltas) < 0;
	if (bad)
		fprintf(stderr, "bench_modelmem: a run failed\n");
	return bad;
}
