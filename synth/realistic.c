/* realistic.c - a synthetic source with a steady POSIX workload whose
 * messages look like the agent's (see realistic.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iogp_metrics.h"
#include "realistic.h"

#define K 4
#define NCORE 10

enum { R_READ, R_WRITE, R_META, R_ALL };

/* Metric ids are catalog positions + 1. */
static const struct {
	const char *name;
	iogp_metric_kind kind;
	const char *unit;
} catalog[REALISTIC_NMETRICS] = {
#define X(id, name, kind, unit, label) { name, kind, unit },
	IOGP_POSIX_METRICS(X)
#undef X
};
_Static_assert(IOGP_POSIX_NMETRICS == REALISTIC_NMETRICS, "the synthetic source is the POSIX catalog");

enum {
	M_READ_OPS = 1, M_READ_BYTES, M_WRITE_OPS, M_WRITE_BYTES, M_META_OPS,
	M_SYNC_OPS, M_ERRORS, M_READ_CONSEC, M_READ_SEQ, M_READ_RANDOM,
	M_WRITE_CONSEC, M_WRITE_SEQ, M_WRITE_RANDOM, M_READ_SIZE, M_WRITE_SIZE,
	M_READ_LAT, M_WRITE_LAT, M_META_LAT, M_QDEPTH, M_ACCESS,
};

struct shape {
	uint32_t id;
	int ops;            /* R_*: whose operations it counts */
	int tail;           /* latency: occasional slow outliers */
	uint32_t center;    /* native index of the mode */
	double w[NCORE];    /* share of each core bin center-4 .. center+5 */
};

struct realistic {
	uint64_t seed, source, start_ns, wall0_ns, iv_ns;
	uint32_t naccess;
	double rate[R_ALL];         /* ops per second */
	double spatial[2][3];       /* consecutive, sequential, random shares */
	struct shape shape[REALISTIC_NHISTS];

	char text[1024];
	iogp_label labels[REALISTIC_NLABELS];
	iogp_metric_def metrics[REALISTIC_NMETRICS];
	char paths[REALISTIC_NFILES][64];
	iogp_file files[REALISTIC_NFILES];
	iogp_counter_val counters[REALISTIC_NMETRICS];
	iogp_hist_val hists[REALISTIC_NHISTS];
	iogp_bin bins[REALISTIC_NHISTS][REALISTIC_MAX_BINS];
	iogp_access access[REALISTIC_MAX_ACCESS];
};

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* uniform in [0, 1) */
static double unif(uint64_t *s)
{
	return (double)(splitmix64(s) >> 11) * 0x1.0p-53;
}

/* roughly standard normal (Irwin-Hall, 4 terms) */
static double gauss(uint64_t *s)
{
	return (unif(s) + unif(s) + unif(s) + unif(s) - 2.0) * 1.7320508;
}

static uint64_t native_mid(uint32_t idx)
{
	uint32_t s, mant;

	if (idx < (2u << K))
		return idx;
	s = (idx >> K) - 1;
	mant = idx - (s << K);
	return ((uint64_t)mant << s) + ((1ull << s) >> 1);
}

static void shape_init(struct shape *sh, uint32_t id, int ops, uint64_t center,
    double sigma, int tail)
{
	double sum = 0;
	int j;

	sh->id = id;
	sh->ops = ops;
	sh->tail = tail;
	sh->center = iogp_native_index(center, K);
	if (sh->center < 5)
		sh->center = 5;
	for (j = 0; j < NCORE; j++) {
		double x = (j - 4.5) / sigma;

		sh->w[j] = exp(-0.5 * x * x);
		sum += sh->w[j];
	}
	for (j = 0; j < NCORE; j++)
		sh->w[j] /= sum;
}

realistic *realistic_new(uint64_t seed)
{
	realistic *r = calloc(1, sizeof *r);
	uint64_t s = seed ^ 0x5eed5eed5eedull;
	static const uint64_t rsizes[] = { 4096, 65536, 131072, 1048576 };
	static const uint64_t wsizes[] = { 8192, 262144, 1048576, 4194304 };
	char *t;
	size_t left;
	int i, n;

	if (r == NULL)
		return NULL;
	r->seed = seed;
	r->source = splitmix64(&s);
	r->start_ns = 1000000000ull * (3600 + splitmix64(&s) % (30 * 86400));
	r->wall0_ns = 1700000000000000000ull + splitmix64(&s) % 100000000000000000ull;
	r->iv_ns = 1000000000ull;
	r->rate[R_READ] = 800 + 3200 * unif(&s);
	r->rate[R_WRITE] = 200 + 1300 * unif(&s);
	r->rate[R_META] = 20 + 180 * unif(&s);
	for (i = 0; i < 2; i++) {
		double c = 0.5 + 0.4 * unif(&s), q = (1 - c) * unif(&s);

		r->spatial[i][0] = c;
		r->spatial[i][1] = q;
		r->spatial[i][2] = 1 - c - q;
	}
	shape_init(&r->shape[0], M_READ_SIZE, R_READ, rsizes[splitmix64(&s) % 4], 1.6, 0);
	shape_init(&r->shape[1], M_WRITE_SIZE, R_WRITE, wsizes[splitmix64(&s) % 4], 1.6, 0);
	shape_init(&r->shape[2], M_READ_LAT, R_READ, 40000 + splitmix64(&s) % 120000, 2.2, 1);
	shape_init(&r->shape[3], M_WRITE_LAT, R_WRITE, 80000 + splitmix64(&s) % 300000, 2.2, 1);
	shape_init(&r->shape[4], M_META_LAT, R_META, 5000 + splitmix64(&s) % 20000, 2.2, 1);
	shape_init(&r->shape[5], M_QDEPTH, R_ALL, 1 + splitmix64(&s) % 5, 2.0, 0);

	t = r->text;
	left = sizeof r->text;
#define TEXT(fmt, ...) (n = snprintf(t, left, fmt, __VA_ARGS__), t += n + 1, left -= (size_t)n + 1, t - n - 1)
	{
		static const char *const keys[REALISTIC_NLABELS] = {
			"host", "pid", "rank", "job", "exe", "start",
		};
		unsigned node = (unsigned)(seed % 4096), rank = (unsigned)(seed % 100000);

		for (i = 0; i < REALISTIC_NLABELS; i++)
			r->labels[i].key = keys[i];
		r->labels[0].value = TEXT("node%04u", node);
		r->labels[1].value = TEXT("%u", 1000 + (unsigned)(splitmix64(&s) % 4000000));
		r->labels[2].value = TEXT("%u", rank);
		r->labels[3].value = TEXT("%u", 4000000 + (unsigned)(seed % 1000));
		r->labels[4].value = TEXT("%s", "/home/user/bin/analysis");
		r->labels[5].value = TEXT("%llu", (unsigned long long)(r->wall0_ns / 1000000000ull));
		for (i = 0; i < REALISTIC_NFILES; i++) {
			snprintf(r->paths[i], sizeof r->paths[i], "/scratch/job%u/run%u/data.%d.root",
			    4000000 + (unsigned)(seed % 1000), rank, i);
			r->files[i].id = (uint64_t)i + 1;
			r->files[i].path = r->paths[i];
		}
	}
#undef TEXT
	for (i = 0; i < REALISTIC_NMETRICS; i++) {
		iogp_metric_def *d = &r->metrics[i];

		d->id = (uint32_t)i + 1;
		d->kind = catalog[i].kind;
		d->name = catalog[i].name;
		d->unit = catalog[i].unit;
		if (d->kind == IOGP_HISTOGRAM) {
			d->bins.kind = IOGP_BINS_NATIVE;
			d->bins.k = K;
		}
	}
	return r;
}

void realistic_free(realistic *r)
{
	free(r);
}

uint64_t realistic_source(const realistic *r)
{
	return r->source;
}

void realistic_set_interval(realistic *r, uint64_t ns)
{
	r->iv_ns = ns > 0 ? ns : 1;
}

void realistic_set_access(realistic *r, uint32_t n)
{
	r->naccess = n < REALISTIC_MAX_ACCESS ? n : REALISTIC_MAX_ACCESS;
}

static void msg_reset(iogp_msg *m, const realistic *r, iogp_kind kind, uint64_t seq)
{
	void *arena = m->arena;
	size_t len = m->arena_len, cap = m->arena_cap;

	memset(m, 0, sizeof *m);
	m->arena = arena;
	m->arena_len = len;
	m->arena_cap = cap;
	m->version = IOGP_WIRE_VERSION;
	m->kind = kind;
	m->source = r->source;
	m->seq = seq;
}

void realistic_hello(realistic *r, iogp_msg *m)
{
	msg_reset(m, r, IOGP_HELLO, 0);
	m->nlabels = REALISTIC_NLABELS;
	m->labels = r->labels;
	m->nmetrics = REALISTIC_NMETRICS;
	m->metrics = r->metrics;
}

static uint64_t round_random(double x, uint64_t *s)
{
	double f;

	if (x <= 0)
		return 0;
	f = floor(x);
	return (uint64_t)f + (unif(s) < x - f);
}

/* Sparse bins of one interval's (or, cumulative, seq intervals') worth of
 * ops; returns the bin count and adds count * midpoint to *sum. */
static uint32_t fill_bins(const struct shape *sh, iogp_bin *b, double ops, int cumulative,
    uint64_t *s, uint64_t *total, double *sum)
{
	uint32_t n = 0, spread = cumulative ? 8 : 0;
	int64_t j;

	*total = 0;
	*sum = 0;
	for (j = -(int64_t)spread; j < NCORE + (int64_t)spread; j++) {
		int64_t idx = (int64_t)sh->center - 4 + j;
		double w, e;
		uint64_t c;

		if (idx < 1)
			continue;
		if (j < 0)
			w = sh->w[0] * pow(0.4, (double)-j);
		else if (j >= NCORE)
			w = sh->w[NCORE - 1] * pow(0.4, (double)(j - NCORE + 1));
		else
			w = sh->w[j];
		/* a bin's count in a steady workload: multinomial, ~ e +- sqrt(e) */
		e = ops * w;
		c = round_random(cumulative ? e : e + sqrt(e) * gauss(s), s);
		if (c == 0)
			continue;
		b[n].idx = (uint64_t)idx;
		b[n].count = c;
		*total += c;
		*sum += (double)c * (double)native_mid((uint32_t)idx);
		n++;
	}
	if (sh->tail) {
		/* slow outliers: a few per interval, many bins when cumulative */
		uint32_t k, ntail = cumulative ? 20 : (unif(s) < 0.5 ? 1 + (uint32_t)(unif(s) * 3) : 0);
		uint64_t idx = n > 0 ? b[n - 1].idx : sh->center;

		for (k = 0; k < ntail && n < REALISTIC_MAX_BINS; k++) {
			uint64_t c = cumulative ? 1 + (uint64_t)(ops * 0.002 / (k + 1)) : 1;

			idx += cumulative ? 1 : 2 + splitmix64(s) % 6;
			b[n].idx = idx;
			b[n].count = c;
			*total += c;
			*sum += (double)c * (double)native_mid((uint32_t)idx);
			n++;
		}
	}
	return n;
}

static void fill_state(realistic *r, iogp_msg *m, uint64_t seq, int cumulative)
{
	double secs = (double)r->iv_ns / 1e9, ops[R_ALL + 1], bytes[2] = { 0, 0 };
	uint64_t s = r->seed * 0x9e3779b97f4a7c15ull ^ seq * 0xd1b54a32d192ed03ull;
	uint64_t total, nops[R_ALL + 1];
	uint32_t nc = 0;
	int i;

	if (cumulative)
		secs *= (double)seq;
	for (i = 0; i < R_ALL; i++)
		ops[i] = r->rate[i] * secs * (cumulative ? 1 : 1 + 0.1 * (2 * unif(&s) - 1));
	ops[R_ALL] = ops[R_READ] + ops[R_WRITE];

	for (i = 0; i < REALISTIC_NHISTS; i++) {
		const struct shape *sh = &r->shape[i];
		double sum;

		m->hists[i].id = sh->id;
		m->hists[i].bins = r->bins[i];
		m->hists[i].nbins = fill_bins(sh, r->bins[i], ops[sh->ops], cumulative, &s,
		    &total, &sum);
		if (sh->id == M_READ_SIZE || sh->id == M_WRITE_SIZE) {
			nops[sh->ops] = total;
			bytes[sh->ops] = sum;
		}
		if (sh->id == M_META_LAT)
			nops[R_META] = total;
	}
	m->nhists = REALISTIC_NHISTS;

#define COUNTER(mid, v) (r->counters[nc].id = (mid), r->counters[nc].value = (v), nc++)
	COUNTER(M_READ_OPS, nops[R_READ]);
	COUNTER(M_READ_BYTES, (uint64_t)bytes[R_READ]);
	COUNTER(M_WRITE_OPS, nops[R_WRITE]);
	COUNTER(M_WRITE_BYTES, (uint64_t)bytes[R_WRITE]);
	COUNTER(M_META_OPS, nops[R_META]);
	if (cumulative) {
		COUNTER(M_SYNC_OPS, seq / 30);
		COUNTER(M_ERRORS, seq / 1000);
	}
	for (i = 0; i < 2; i++) {
		uint64_t n = nops[i];
		uint64_t c = (uint64_t)((double)n * r->spatial[i][0]);
		uint64_t q = (uint64_t)((double)n * r->spatial[i][1]);

		COUNTER(M_READ_CONSEC + 3 * i, c);
		COUNTER(M_READ_SEQ + 3 * i, q);
		if (cumulative || i == 0)
			COUNTER(M_READ_RANDOM + 3 * i, n - c - q);
	}
#undef COUNTER
	m->ncounters = nc;
	m->counters = r->counters;
}

void realistic_delta(realistic *r, iogp_msg *m, uint64_t seq)
{
	uint64_t s = r->seed ^ seq * 0x2545f4914f6cdd1dull;
	uint32_t i;

	msg_reset(m, r, IOGP_DELTA, seq);
	m->t0_ns = r->start_ns + (seq > 0 ? seq - 1 : 0) * r->iv_ns;
	m->t1_ns = r->start_ns + seq * r->iv_ns + splitmix64(&s) % 20000;
	m->wall_ns = r->wall0_ns + seq * r->iv_ns + splitmix64(&s) % 20000;
	m->hists = r->hists;
	fill_state(r, m, seq, 0);

	if (r->naccess > 0) {
		uint64_t t = m->t0_ns, size = native_mid(r->shape[0].center);

		for (i = 0; i < r->naccess; i++) {
			iogp_access *a = &r->access[i];

			t += splitmix64(&s) % (2 * r->iv_ns / r->naccess + 1);
			a->id = M_ACCESS;
			a->t_ns = t;
			a->file = 1 + splitmix64(&s) % REALISTIC_NFILES;
			a->op = unif(&s) < r->rate[R_READ] / (r->rate[R_READ] + r->rate[R_WRITE]) ?
			    IOGP_OP_READ : IOGP_OP_WRITE;
			a->offset = (seq * r->naccess + i) * size;
			a->size = size;
		}
		m->naccess = r->naccess;
		m->access = r->access;
		m->access_seen = (uint64_t)(r->rate[R_READ] + r->rate[R_WRITE]);
		if (seq == 1) {
			m->nfiles = REALISTIC_NFILES;
			m->files = r->files;
		}
	}
}

void realistic_snapshot(realistic *r, iogp_msg *m, uint64_t seq)
{
	msg_reset(m, r, IOGP_SNAPSHOT, seq);
	m->nlabels = REALISTIC_NLABELS;
	m->labels = r->labels;
	m->nmetrics = REALISTIC_NMETRICS;
	m->metrics = r->metrics;
	m->t0_ns = r->start_ns;
	m->t1_ns = r->start_ns + seq * r->iv_ns;
	m->wall_ns = r->wall0_ns + seq * r->iv_ns;
	m->hists = r->hists;
	fill_state(r, m, seq, 1);
	m->nfiles = REALISTIC_NFILES;
	m->files = r->files;
}
