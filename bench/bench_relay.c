/* bench_relay.c - `iogram relay --aggregate node`: (1) the aggregator in
 * process, realistic DELTAs from N sources on N/64 nodes fed and flushed
 * once a simulated second: DELTAs/s on one core and the reduction in
 * messages and bytes; (2) real processes: `iogram loadgen` N sources at
 * 1 Hz -> relay --aggregate node -> relay --aggregate job -> record, the
 * relays' CPU over a measured window and what reaches the recorder. The
 * arithmetic of how many sources one viewer follows through such a tree is
 * in README ("Live streams"). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "iogp.h"
#include "realistic.h"
#include "relay_agg.h"
#include "testutil.h"

#define PER_NODE 64
#define GENS 64

typedef struct outc {
	uint64_t msgs, bytes;
} outc;

static void count_out(void *ctx, iogp_kind kind, uint64_t source, const uint8_t *p, size_t n)
{
	outc *o = ctx;
	(void)kind;
	(void)source;
	(void)p;
	o->msgs++;
	o->bytes += n + 22;   /* + the topic frame */
}

static void inprocess(int n, int seconds, int summaries)
{
	relay_agg *a = relay_agg_new(RELAY_AGG_NODE, summaries, 1);
	realistic *gen[GENS];
	iogp_msg m;
	iogp_msg_init(&m);
	uint8_t *buf = malloc(IOGP_MAX_PAYLOAD);
	char host[32], rank[32];
	for (int g = 0; g < GENS; g++)
		gen[g] = realistic_new(1000 + (uint64_t)g);
	uint64_t in_bytes = 0, in_msgs = 0;
	/* HELLO of every source: the generator's labels, this source's host and rank */
	for (int i = 0; i < n; i++) {
		realistic_hello(gen[i % GENS], &m);
		iogp_label l[REALISTIC_NLABELS];
		memcpy(l, m.labels, sizeof(l));
		snprintf(host, sizeof(host), "node%05d", i / PER_NODE);
		snprintf(rank, sizeof(rank), "%d", i);
		l[0].value = host;
		l[2].value = rank;
		m.labels = l;
		m.source = 0x100000 + (uint64_t)i;
		long len = iogp_msg_encode(&m, buf, IOGP_MAX_PAYLOAD);
		relay_agg_feed(a, buf, (size_t)len, 1);
	}
	outc o = { 0, 0 };
	relay_agg_flush(a, 1, 1, count_out, &o);
	o.msgs = o.bytes = 0;
	double cpu0 = tu_now();
	struct timespec c0, c1;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
	for (int s = 1; s <= seconds; s++) {
		for (int i = 0; i < n; i++) {
			realistic_delta(gen[i % GENS], &m, (uint64_t)s);
			m.source = 0x100000 + (uint64_t)i;
			m.seq = (uint64_t)s;
			long len = iogp_msg_encode(&m, buf, IOGP_MAX_PAYLOAD);
			relay_agg_feed(a, buf, (size_t)len, 1);
			in_bytes += (uint64_t)len + 22;
			in_msgs++;
		}
		relay_agg_flush(a, 1 + (uint64_t)s * 1000000000ull, (uint64_t)s * 1000000000ull, count_out, &o);
	}
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
	double wall = tu_now() - cpu0;
	double cpu = (double)(c1.tv_sec - c0.tv_sec) + (double)(c1.tv_nsec - c0.tv_nsec) / 1e9;
	relay_agg_stats st;
	relay_agg_get_stats(a, &st);
	printf("in process, %d sources on %d nodes%s, %d s: %.0f DELTAs/s on one core (%.2f us each, "
	       "encode of the input included), out %llu msgs (%.1f per node-second, summaries %llu), "
	       "messages %.1fx fewer, bytes %.1fx fewer (%.0f B/source-s in, %.1f out); wall %.2f s\n",
	       n, (n + PER_NODE - 1) / PER_NODE, summaries ? ", with --summaries" : "", seconds,
	       (double)in_msgs / cpu, cpu / (double)in_msgs * 1e6,
	       (unsigned long long)o.msgs, (double)o.msgs / ((double)st.groups * seconds),
	       (unsigned long long)st.summaries,
	       (double)in_msgs / (double)o.msgs, (double)in_bytes / (double)o.bytes,
	       (double)in_bytes / ((double)n * seconds), (double)o.bytes / ((double)n * seconds), wall);
	fflush(stdout);
	for (int g = 0; g < GENS; g++)
		realistic_free(gen[g]);
	free(buf);
	iogp_msg_free(&m);
	relay_agg_free(a);
}

static void processes(const char *bin, int n, int seconds)
{
	int p1 = tu_free_port(), p2 = tu_free_port(), p3 = tu_free_port();
	char dir[256];
	tu_tmpdir(dir, sizeof(dir), "iogram-bench-relay");
	char *file = tu_fmt("%s/top.iogr", dir);
	char nodes[32], srcs[32], dur[32];
	/* a multiple of the 4 jobs: node k's sources (i = k mod nodes) are all in job k mod 4 */
	snprintf(nodes, sizeof(nodes), "%d", ((n + PER_NODE - 1) / PER_NODE + 3) / 4 * 4);
	snprintf(srcs, sizeof(srcs), "%d", n);
	snprintf(dur, sizeof(dur), "%d", seconds + 20);
	tu_opts q = { .err = tu_fmt("%s/r.err", dir) };
	pid_t rec = tu_spawn_opt((char *const[]){ (char *)bin, "record", "--listen", tu_ep(p3), "-o",
	                                          file, NULL }, NULL);
	tu_opts q2 = { .err = tu_fmt("%s/r2.err", dir) };
	pid_t r2 = tu_spawn_opt((char *const[]){ (char *)bin, "relay", "--aggregate", "job", "--listen",
	                                         tu_ep(p2), "--upstream", tu_ep(p3), NULL }, &q2);
	pid_t r1 = tu_spawn_opt((char *const[]){ (char *)bin, "relay", "--aggregate", "node", "--listen",
	                                         tu_ep(p1), "--upstream", tu_ep(p2), NULL }, &q);
	tu_sleep_ms(500);
	pid_t lg = tu_spawn_opt((char *const[]){ (char *)bin, "loadgen", "--sources", srcs, "--rate",
	                                         "1", "--nodes", nodes, "--jobs", "4", "--duration", dur,
	                                         "--endpoint", tu_ep(p1), "--quiet", NULL }, NULL);
	tu_sleep_ms(15000);   /* HELLOs, SNAPSHOTs, the first periodic ones */
	double c1 = tu_cpu_s(r1), c2 = tu_cpu_s(r2), cl = tu_cpu_s(lg), t0 = tu_now();
	tu_sleep_ms(seconds * 1000);
	double t = tu_now() - t0;
	double d1 = tu_cpu_s(r1) - c1, d2 = tu_cpu_s(r2) - c2, dl = tu_cpu_s(lg) - cl;
	long rss = tu_rss_kib(r1);
	kill(lg, SIGTERM);
	tu_wait(lg, 60);
	tu_sleep_ms(1000);
	tu_stop(r1, SIGTERM, 30);
	tu_sleep_ms(300);
	tu_stop(r2, SIGTERM, 30);
	tu_sleep_ms(300);
	tu_stop(rec, SIGTERM, 30);
	double load[3] = { 0, 0, 0 };
	if (getloadavg(load, 3) < 0)
		load[0] = -1;
	printf("processes, %d sources at 1 Hz on %s nodes in 4 jobs, %.1f s: node relay %.1f%% of a core "
	       "(%.2f us a DELTA), RSS %ld MiB (%.1f KB a source); job relay %.2f%%; loadgen %.1f%%; "
	       "load %.2f\n",
	       n, nodes, t, 100 * d1 / t, d1 / t / n * 1e6, rss / 1024, rss * 1.024 / n, 100 * d2 / t,
	       100 * dl / t, load[0]);
	char *e = tu_read_file(tu_fmt("%s/r.err", dir), NULL), *e2 = tu_read_file(tu_fmt("%s/r2.err", dir), NULL);
	printf("  node relay: %s  job relay: %s", e ? e : "?\n", e2 ? e2 : "?\n");
	free(e);
	free(e2);
	fflush(stdout);
	tu_rmdir_all(dir);
}

int main(int argc, char **argv)
{
	const char *bin = getenv("IOGRAM_BIN");
	int quick = argc > 1 && !strcmp(argv[1], "--quick");
	inprocess(1000, 10, 0);
	inprocess(10000, quick ? 3 : 10, 0);
	inprocess(10000, quick ? 3 : 10, 1);
	if (bin) {
		processes(bin, 5000, quick ? 5 : 20);
		if (!quick)
			processes(bin, 20000, 20);
	}
	return 0;
}
