/* iogram-synth.c - write a synthetic job recording with known contents, and
 * optionally its ground truth (histograms and totals computed directly from
 * the generated values), for tests, benchmarks and the demo. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "iogp.h"

enum { C_ROPS, C_RBYTES, C_WOPS, C_WBYTES, C_META, C_SYNC, C_ERR, NCOUNTERS };
enum { H_RSIZE, H_WSIZE, H_RLAT, H_WLAT, H_MLAT, H_QD, NHISTS };
static const char *const cname[NCOUNTERS] = {
	"posix.read.ops", "posix.read.bytes", "posix.write.ops", "posix.write.bytes",
	"posix.meta.ops", "posix.sync.ops", "posix.errors",
};
static const char *const cunit[NCOUNTERS] = { "ops", "bytes", "ops", "bytes", "ops", "ops", "ops" };
static const char *const hname[NHISTS] = {
	"posix.read.size", "posix.write.size", "posix.read.latency", "posix.write.latency",
	"posix.meta.latency", "posix.queue_depth",
};
static const char *const hunit[NHISTS] = { "bytes", "bytes", "ns", "ns", "ns", "requests" };
#define GAUGE_ID 40
#define ACCESS_ID 50
#define EPOCH_NS 1795000000000000000ull  /* 2026-11-18 */

typedef struct source {
	uint64_t id, seq, rng;
	int node, rank;
	uint64_t mono0, wall0, interval_ns, next_t;   /* next_t: elapsed ns of next send */
	uint64_t last_t;
	uint64_t counters[NCOUNTERS];
	iogp_hist cum[NHISTS], delta[NHISTS];
	uint64_t dcount[NCOUNTERS];
	char host[40], pid[16], rankstr[16], start[32];
	char path[64];
	int file_announced, done;
} source;

static iogp_hist truth_all[NHISTS];
static iogp_hist *truth_node[NHISTS];
static uint64_t *truth_cnt_node[NCOUNTERS];
static uint64_t truth_cnt_all[NCOUNTERS];

static uint64_t rnd(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int nnodes = 2, per_node = 1, idle;
/* --skew X: node k's latencies x (1 + X ((7k + 3) mod nodes)), a known
 * order that is not the name order; --slow-node N:F: node N (1-based) x F */
static double skew, slow_factor = 1;
static const char *node_prefix = "node";   /* --node-prefix: hosts PREFIX001, ... */
static int slow_node = -1;
/* exact truth per node and source (--truth): every latency value of reads
 * and writes per node (for exact quantiles), time in calls per source */
typedef struct vals {
	uint64_t *v;
	size_t n, cap;
} vals;
static vals *lat_node;
static double *io_src[3];   /* read, write, meta latency sums per source, ns */
static uint64_t wsizes[8];   /* --write-sizes: writes of these sizes only */
static int nwsizes;

static uint64_t lat_scale(const source *s, uint64_t v)
{
	double f = 1 + skew * (double)((7 * s->node + 3) % nnodes);
	if (s->node == slow_node)
		f *= slow_factor;
	return (uint64_t)((double)v * f);
}

static void rec_hist(source *s, int h, uint64_t v)
{
	if (h == H_RLAT || h == H_WLAT || h == H_MLAT) {
		v = lat_scale(s, v);
		io_src[h - H_RLAT][s->rank] += (double)v;
		vals *x = &lat_node[s->node];
		if (h != H_MLAT && x->n < (64u << 20)) {
			if (x->n == x->cap) {
				x->cap = x->cap ? x->cap * 2 : 4096;
				x->v = realloc(x->v, x->cap * sizeof(*x->v));
				if (!x->v)
					exit(1);
			}
			x->v[x->n++] = v;
		}
	}
	iogp_hist_record(&s->delta[h], v, 1);
	iogp_hist_record(&truth_all[h], v, 1);
	iogp_hist_record(&truth_node[h][s->node], v, 1);
}

static void rec_cnt(source *s, int c, uint64_t v)
{
	s->dcount[c] += v;
	truth_cnt_all[c] += v;
	truth_cnt_node[c][s->node] += v;
}

/* One interval of a plausible workload; second index t decides bursts. */
static void workload(source *s, uint64_t sec)
{
	if (idle)
		return;
	int nr = 40 + (int)(rnd(&s->rng) % 80);
	for (int i = 0; i < nr; i++) {
		uint64_t r = rnd(&s->rng) % 100, size;
		if (r < 70)
			size = 4096;
		else if (r < 90)
			size = 1 << 20;
		else
			size = 1 + rnd(&s->rng) % 1000000;
		rec_hist(s, H_RSIZE, size);
		rec_hist(s, H_RLAT, 20000 + size / 8 + rnd(&s->rng) % 30000 +
		         (rnd(&s->rng) % 100 == 0 ? 5000000 : 0));
		rec_hist(s, H_QD, 1 + rnd(&s->rng) % 8);
		rec_cnt(s, C_ROPS, 1);
		rec_cnt(s, C_RBYTES, size);
	}
	int burst = (sec + (uint64_t)s->rank) % 10 == 0;
	int nw = burst ? 200 : (int)(rnd(&s->rng) % 6);
	for (int i = 0; i < nw; i++) {
		uint64_t size = nwsizes ? wsizes[rnd(&s->rng) % (uint64_t)nwsizes] : burst ? 65536 : 3901;
		rec_hist(s, H_WSIZE, size);
		rec_hist(s, H_WLAT, 30000 + size / 4 + rnd(&s->rng) % 20000);
		rec_hist(s, H_QD, 1);
		rec_cnt(s, C_WOPS, 1);
		rec_cnt(s, C_WBYTES, size);
	}
	for (int i = 0; i < 5; i++) {
		rec_hist(s, H_MLAT, 2000 + rnd(&s->rng) % 8000);
		rec_cnt(s, C_META, 1);
	}
	if (burst)
		rec_cnt(s, C_SYNC, 1);
}

static iogp_label labels[6];
static iogp_metric_def defs[NCOUNTERS + NHISTS + 2];

static void fill_catalog(iogp_msg *m, source *s)
{
	labels[0] = (iogp_label){ "host", s->host };
	labels[1] = (iogp_label){ "pid", s->pid };
	labels[2] = (iogp_label){ "rank", s->rankstr };
	labels[3] = (iogp_label){ "job", "4242" };
	labels[4] = (iogp_label){ "exe", "/usr/bin/synthetic-app" };
	labels[5] = (iogp_label){ "start", s->start };
	m->labels = labels;
	m->nlabels = 6;
	uint32_t n = 0;
	for (int c = 0; c < NCOUNTERS; c++)
		defs[n++] = (iogp_metric_def){ .id = (uint32_t)c + 1, .kind = IOGP_COUNTER,
		                               .name = cname[c], .unit = cunit[c] };
	for (int h = 0; h < NHISTS; h++) {
		defs[n] = (iogp_metric_def){ .id = (uint32_t)h + 20, .kind = IOGP_HISTOGRAM,
		                             .name = hname[h], .unit = hunit[h] };
		iogp_bins_native(&defs[n].bins, IOGP_NATIVE_K_DEFAULT);
		n++;
	}
	defs[n++] = (iogp_metric_def){ .id = GAUGE_ID, .kind = IOGP_GAUGE,
	                               .name = "synth.open_files", .unit = "files" };
	defs[n++] = (iogp_metric_def){ .id = ACCESS_ID, .kind = IOGP_ACCESS,
	                               .name = "posix.access", .unit = "" };
	m->metrics = defs;
	m->nmetrics = n;
}

static iogp_counter_val cv[NCOUNTERS];
static iogp_hist_val hv[NHISTS];
static iogp_gauge_val gv[1];
static iogp_access av[16];
static iogp_file fv[1];

static void fill_data(iogp_msg *m, source *s, int cumulative)
{
	m->ncounters = 0;
	for (int c = 0; c < NCOUNTERS; c++) {
		uint64_t v = cumulative ? s->counters[c] : s->dcount[c];
		if (v || cumulative)
			cv[m->ncounters++] = (iogp_counter_val){ (uint32_t)c + 1, v };
	}
	m->counters = cv;
	m->nhists = 0;
	for (int h = 0; h < NHISTS; h++) {
		iogp_hist *src = cumulative ? &s->cum[h] : &s->delta[h];
		if (!src->n)
			continue;
		hv[m->nhists++] = (iogp_hist_val){ (uint32_t)h + 20, (uint32_t)src->n, src->bins };
	}
	m->hists = hv;
	gv[0] = (iogp_gauge_val){ GAUGE_ID, (int64_t)(3 + s->rank % 4) };
	m->gauges = gv;
	m->ngauges = 1;
	if (cumulative || !s->file_announced) {
		fv[0] = (iogp_file){ (uint64_t)s->rank + 1, s->path };
		m->files = fv;
		m->nfiles = 1;
		s->file_announced = 1;
	}
}

/* Receive times never go backwards, as in a real recording. */
static void send_msg(iogp_recorder *r, const iogp_msg *m, uint64_t recv_ns)
{
	static uint64_t last;
	if (recv_ns <= last)
		recv_ns = last + 1000;
	last = recv_ns;
	int rc = iogp_recorder_add_msg(r, m, recv_ns);
	if (rc < 0 && rc != IOGP_EUNKNOWN) {
		fprintf(stderr, "iogram-synth: add: %s\n", iogp_strerror(rc));
		exit(1);
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* The value at rank ceil(q n) of sorted v (as iogp_hist_quantile ranks). */
static uint64_t exact_q(const vals *x, double q)
{
	if (!x->n)
		return 0;
	size_t r = (size_t)ceil(q * (double)x->n);
	return x->v[(r ? r : 1) - 1];
}

/* nodes.csv and sources.csv: exact figures of what was generated. */
static void write_exact(const char *dir, const source *src, int ns)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/sources.csv", dir);
	FILE *f = fopen(path, "w");
	if (!f)
		exit(1);
	fprintf(f, "rank,node,span_ns,read_latency_sum_ns,write_latency_sum_ns,meta_latency_sum_ns,io_time_ns\n");
	double *span = calloc((size_t)nnodes, sizeof(double)), *io = calloc((size_t)nnodes, sizeof(double));
	for (int i = 0; i < ns; i++) {
		double t = io_src[0][i] + io_src[1][i] + io_src[2][i];
		fprintf(f, "%d,%s,%" PRIu64 ",%.0f,%.0f,%.0f,%.0f\n", src[i].rank, src[i].host,
		        src[i].last_t, io_src[0][i], io_src[1][i], io_src[2][i], t);
		span[src[i].node] += (double)src[i].last_t;
		io[src[i].node] += t;
	}
	fclose(f);
	snprintf(path, sizeof(path), "%s/nodes.csv", dir);
	if (!(f = fopen(path, "w")))
		exit(1);
	/* latency p50/p99 of reads and writes together; share = io / the sources' spans */
	fprintf(f, "node,requests,latency_p50_ns,latency_p99_ns,io_time_ns,proc_span_ns,io_share\n");
	for (int n = 0; n < nnodes; n++) {
		vals *x = &lat_node[n];
		qsort(x->v, x->n, sizeof(*x->v), cmp_u64);
		fprintf(f, "%.24s%03d,%zu,%" PRIu64 ",%" PRIu64 ",%.0f,%.0f,%.6f\n", node_prefix, n + 1, x->n,
		        exact_q(x, 0.5), exact_q(x, 0.99), io[n], span[n], span[n] > 0 ? io[n] / span[n] : 0);
	}
	fclose(f);
	free(span);
	free(io);
}

static void write_truth(const char *dir)
{
	char path[4096];
	if (mkdir(dir, 0777) < 0 && errno != EEXIST) {
		fprintf(stderr, "iogram-synth: %s: %s\n", dir, strerror(errno));
		exit(1);
	}
	for (int h = 0; h < NHISTS; h++) {
		for (int n = -1; n < nnodes; n++) {
			if (n < 0)
				snprintf(path, sizeof(path), "%s/%s.all.csv", dir, hname[h]);
			else
				snprintf(path, sizeof(path), "%s/%s.node%03d.csv", dir, hname[h], n + 1);
			FILE *f = fopen(path, "w");
			if (!f) {
				fprintf(stderr, "iogram-synth: %s: %s\n", path, strerror(errno));
				exit(1);
			}
			iogp_hist_write_csv(n < 0 ? &truth_all[h] : &truth_node[h][n], f);
			fclose(f);
		}
	}
	snprintf(path, sizeof(path), "%s/counters.csv", dir);
	FILE *f = fopen(path, "w");
	if (!f)
		exit(1);
	fprintf(f, "metric,node,value\n");
	for (int c = 0; c < NCOUNTERS; c++) {
		fprintf(f, "%s,all,%" PRIu64 "\n", cname[c], truth_cnt_all[c]);
		for (int n = 0; n < nnodes; n++)
			fprintf(f, "%s,node%03d,%" PRIu64 "\n", cname[c], n + 1, truth_cnt_node[c][n]);
	}
	fclose(f);
}

static void usage(FILE *out)
{
	fprintf(out, "usage: iogram-synth -o FILE.iogr [--nodes N] [--sources-per-node S]\n"
	             "         [--seconds T] [--interval-ms MS] [--seed X] [--drop-every K]\n"
	             "         [--idle] [--plain] [--crash] [--truth DIR]\n"
	             "         [--write-sizes BYTES,BYTES,...] [--skew X] [--slow-node N:FACTOR]\n"
	             "         [--node-prefix NAME]\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "nodes", required_argument, NULL, 'n' },
		{ "sources-per-node", required_argument, NULL, 'S' },
		{ "seconds", required_argument, NULL, 't' },
		{ "interval-ms", required_argument, NULL, 'i' },
		{ "seed", required_argument, NULL, 'x' },
		{ "drop-every", required_argument, NULL, 'd' },
		{ "idle", no_argument, NULL, 'I' },
		{ "plain", no_argument, NULL, 'p' },
		{ "crash", no_argument, NULL, 'c' },
		{ "truth", required_argument, NULL, 'T' },
		{ "write-sizes", required_argument, NULL, 'W' },
		{ "skew", required_argument, NULL, 'K' },
		{ "slow-node", required_argument, NULL, 'N' },
		{ "node-prefix", required_argument, NULL, 'P' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	long seconds = 30, interval_ms = 1000, drop_every = 0;
	uint64_t seed = 1;
	int plain = 0, crash = 0, c;
	const char *out = NULL, *truth = NULL;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'n': nnodes = atoi(optarg); break;
		case 'S': per_node = atoi(optarg); break;
		case 't': seconds = atol(optarg); break;
		case 'i': interval_ms = atol(optarg); break;
		case 'x': seed = strtoull(optarg, NULL, 0); break;
		case 'd': drop_every = atol(optarg); break;
		case 'I': idle = 1; break;
		case 'p': plain = 1; break;
		case 'c': crash = 1; break;
		case 'T': truth = optarg; break;
		case 'W':
			for (char *p = optarg, *e; *p && nwsizes < 8; p = *e ? e + 1 : e) {
				wsizes[nwsizes] = strtoull(p, &e, 0);
				if (e == p || !wsizes[nwsizes] || (*e && *e != ',')) {
					usage(stderr);
					return 2;
				}
				nwsizes++;
			}
			break;
		case 'K': skew = strtod(optarg, NULL); break;
		case 'P': node_prefix = optarg; break;
		case 'N':
			if (sscanf(optarg, "%d:%lf", &slow_node, &slow_factor) != 2 || slow_node < 1 ||
			    !(slow_factor > 0)) {
				usage(stderr);
				return 2;
			}
			slow_node--;
			break;
		case 'o': out = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (!out || nnodes < 1 || nnodes > 10000 || per_node < 1 || per_node > 1000 ||
	    seconds < 1 || seconds > 86400 || interval_ms < 10 || interval_ms > 60000) {
		usage(stderr);
		return 2;
	}
	int ns = nnodes * per_node;
	source *src = calloc((size_t)ns, sizeof(*src));
	iogp_bins nb;
	iogp_bins_native(&nb, IOGP_NATIVE_K_DEFAULT);
	for (int h = 0; h < NHISTS; h++) {
		iogp_hist_init(&truth_all[h], &nb);
		truth_node[h] = calloc((size_t)nnodes, sizeof(iogp_hist));
		for (int n = 0; n < nnodes; n++)
			iogp_hist_init(&truth_node[h][n], &nb);
	}
	for (int cn = 0; cn < NCOUNTERS; cn++)
		truth_cnt_node[cn] = calloc((size_t)nnodes, sizeof(uint64_t));
	lat_node = calloc((size_t)nnodes, sizeof(*lat_node));
	for (int k = 0; k < 3; k++)
		io_src[k] = calloc((size_t)(nnodes * per_node), sizeof(double));
	if (!lat_node || !io_src[0] || !io_src[1] || !io_src[2])
		return 1;
	for (int i = 0; i < ns; i++) {
		source *s = &src[i];
		s->rng = seed * 1000003u + (uint64_t)i;
		s->id = rnd(&s->rng) | 1;
		s->node = i / per_node;
		s->rank = i;
		/* drifting intervals: each source's clock ticks a little differently */
		s->interval_ns = (uint64_t)interval_ms * 1000000ull + (uint64_t)(i % 7) * 1000000ull;
		s->mono0 = 1000000000000ull + (uint64_t)i * 12345678ull;
		s->wall0 = EPOCH_NS + (uint64_t)(i % 5) * 37000000ull;
		s->next_t = s->interval_ns;
		snprintf(s->host, sizeof(s->host), "%.24s%03d", node_prefix, s->node + 1);
		snprintf(s->pid, sizeof(s->pid), "%d", 1000 + i);
		snprintf(s->rankstr, sizeof(s->rankstr), "%d", i);
		snprintf(s->start, sizeof(s->start), "%" PRIu64, s->wall0);
		snprintf(s->path, sizeof(s->path), "/scratch/job4242/rank%04d.dat", i);
		for (int h = 0; h < NHISTS; h++) {
			iogp_hist_init(&s->cum[h], &nb);
			iogp_hist_init(&s->delta[h], &nb);
		}
	}
	iogp_recorder *r;
	char err[512];
	iogp_recorder_opts ro = { .creator = "iogram-synth " IOGRAM_VERSION, .plain = plain };
	if (iogp_recorder_open(&r, out, &ro, err, sizeof(err)) < 0) {
		fprintf(stderr, "iogram-synth: %s\n", err);
		return 1;
	}
	iogp_msg m;
	for (int i = 0; i < ns; i++) {   /* HELLO */
		memset(&m, 0, sizeof(m));
		m.kind = IOGP_HELLO;
		m.source = src[i].id;
		m.seq = src[i].seq++;
		fill_catalog(&m, &src[i]);
		send_msg(r, &m, src[i].wall0);
	}
	uint64_t end = (uint64_t)seconds * 1000000000ull;
	for (;;) {
		int k = -1;
		for (int i = 0; i < ns; i++)
			if (!src[i].done && (k < 0 || src[i].wall0 + src[i].next_t < src[k].wall0 + src[k].next_t))
				k = i;
		if (k < 0)
			break;
		source *s = &src[k];
		uint64_t t = s->next_t;
		if (t > end) {   /* final snapshot and BYE */
			memset(&m, 0, sizeof(m));
			m.kind = IOGP_SNAPSHOT;
			m.flags = IOGP_F_FINAL;
			m.source = s->id;
			m.seq = s->seq++;
			fill_catalog(&m, s);
			fill_data(&m, s, 1);
			m.t0_ns = s->mono0;
			m.t1_ns = s->mono0 + s->last_t;
			m.wall_ns = s->wall0 + s->last_t;
			send_msg(r, &m, m.wall_ns + 1000000);
			memset(&m, 0, sizeof(m));
			m.kind = IOGP_BYE;
			m.source = s->id;
			m.seq = s->seq++;
			send_msg(r, &m, s->wall0 + s->last_t + 2000000);
			s->done = 1;
			continue;
		}
		workload(s, t / 1000000000ull);
		for (int cn = 0; cn < NCOUNTERS; cn++)
			s->counters[cn] += s->dcount[cn];
		for (int h = 0; h < NHISTS; h++)
			iogp_hist_merge(&s->cum[h], &s->delta[h]);
		memset(&m, 0, sizeof(m));
		m.kind = IOGP_DELTA;
		m.source = s->id;
		m.seq = s->seq++;
		fill_data(&m, s, 0);
		m.t0_ns = s->mono0 + s->last_t;
		m.t1_ns = s->mono0 + t;
		m.wall_ns = s->wall0 + t;
		uint32_t na = 0;
		for (int h = 0; h < 16 && !idle; h++)
			av[na++] = (iogp_access){ ACCESS_ID, m.t0_ns + (uint64_t)h * (t - s->last_t) / 16,
			                          (uint64_t)s->rank + 1, h & 1,
			                          (t / 1000000000ull) * 16 * 4096 + (uint64_t)h * 4096, 4096 };
		m.access = av;
		m.naccess = na;
		m.access_seen = na;
		int empty = !m.ncounters && !m.nhists;
		int dropped = drop_every && m.seq % (uint64_t)drop_every == 0;
		/* idle sources send a heartbeat only every 10 s */
		if (!dropped && (!empty || (t / s->interval_ns) % 10 == 0))
			send_msg(r, &m, m.wall_ns + 1000000);
		else if (empty)
			s->seq--;   /* nothing sent: keep the sequence dense */
		if (!empty && (t / s->interval_ns) % 10 == 0) {   /* periodic SNAPSHOT */
			memset(&m, 0, sizeof(m));
			m.kind = IOGP_SNAPSHOT;
			m.source = s->id;
			m.seq = s->seq++;
			fill_catalog(&m, s);
			fill_data(&m, s, 1);
			m.t0_ns = s->mono0;
			m.t1_ns = s->mono0 + t;
			m.wall_ns = s->wall0 + t;
			send_msg(r, &m, m.wall_ns + 1500000);
		}
		memset(s->dcount, 0, sizeof(s->dcount));
		for (int h = 0; h < NHISTS; h++)
			iogp_hist_clear(&s->delta[h]);
		s->last_t = t;
		s->next_t = t + s->interval_ns;
	}
	if (crash) {
		iogp_recorder_flush(r);
		iogp_recorder_abandon(r);
	} else if (iogp_recorder_close(r) < 0) {
		fprintf(stderr, "iogram-synth: close failed\n");
		return 1;
	}
	if (truth) {
		write_truth(truth);
		write_exact(truth, src, ns);
	}
	return 0;
}
