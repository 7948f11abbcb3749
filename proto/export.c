/* export.c - load replay files into a model; per-node time series (rates,
 * means, histogram quantiles), access samples, and their CSV. */
#include <inttypes.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "iogp_err.h"
#include "iogp_export.h"
#include "export_priv.h"

int iogp_load_file(const char *path, iogp_model *m, iogp_load_stats *st,
                   char *err, size_t errlen)
{
	iogp_replay_reader *r;
	int rc = iogp_replay_open(&r, path, err, errlen);
	if (rc < 0)
		return rc;
	memset(st, 0, sizeof(*st));
	iogp_replay_get_info(r, &st->info);
	iogp_msg msg;
	iogp_msg_init(&msg);
	iogp_replay_rec rec;
	while ((rc = iogp_replay_next(r, &rec)) == 0) {
		st->records++;
		if (rec.keyframe)
			st->keyframe_records++;
		int d = iogp_msg_decode(&msg, rec.payload, rec.len, NULL, 0);
		if (d < 0) {
			st->bad++;
			continue;
		}
		st->by_kind[msg.kind >= 1 && msg.kind <= 4 ? msg.kind : 0]++;
		int a = iogp_model_apply(m, &msg, rec.recv_ns);
		if (a == IOGP_EUNKNOWN)
			st->unknown++;
	}
	iogp_replay_reader_stats(r, &st->file);
	iogp_msg_free(&msg);
	iogp_replay_close_reader(r);
	return rc == IOGP_EEOF ? 0 : rc;
}

/* ---- series ---- */

#define SERIES_MAX_BINS (16u << 20)
#define SERIES_MAX_BYTES (3ull << 29)      /* nodes x bins x what a cell holds: 1.5 GiB */
#define SERIES_MAX_SCHEMES 64
#define Q_HORIZON_NS (600ull * 1000000000ull)
#define Q_BUDGET (256u << 20)
#define GAUGE_HOLD_NS (86400ull * 1000000000ull)   /* a silent source's gauge holds at most a day */

typedef struct src_map {
	uint64_t source;
	uint64_t last_seq;
	int has_seq;
	uint32_t metric_id;   /* id of the metric in this source's catalog */
	int has_metric;
	int scheme;           /* quantiles: index into ctx schemes, -1 unknown */
	size_t node;          /* index into s->nodes */
	int has_node;
	/* gauges: sources send a value when it changes; it holds until then */
	int has_held;
	double held;
	uint64_t held_end;    /* wall end of the last DELTA the value covered */
} src_map;

/* The merged deltas of one node in one bin (sparse bins and exact values). */
typedef struct qacc {
	iogp_bin *bins;
	iogp_exact *ex;
	uint32_t n, cap, nex, excap;
} qacc;

/* One node's open bins: a ring of accumulators for absolute bins
 * base .. base + len - 1 (absolute bin = wall ns / step ns). */
typedef struct qring {
	uint64_t base;
	size_t head, len, cap;   /* cap: a power of two */
	qacc *a;
} qring;

typedef struct series_ctx {
	iogp_series *s;
	const char *metric;
	int flags;
	src_map *src;
	size_t nsrc, srccap;
	idmap srcidx, nodeidx;
	int kind_set;
	int limit_sources;    /* the ELIMIT was for sources, not bins */
	/* quantiles */
	int quant;
	iogp_bins *schemes;   /* distinct schemes seen; [0] is the series' */
	size_t nschemes;
	int tmp_scheme;       /* scheme tmp was initialised with, -1 none */
	iogp_hist tmp, tmp2, qh, qall;
	qring *rings;         /* per node */
	size_t nrings;
	uint64_t first_open;  /* absolute bins below it are written */
	uint64_t newest;      /* newest absolute end bin seen */
	size_t held;          /* bytes the accumulators hold */
} series_ctx;

static uint64_t series_step_ns(const iogp_series *s)
{
	double ns = s->step_s * 1e9;
	return ns >= 1 ? (uint64_t)llround(ns) : 1;
}

static src_map *src_get(series_ctx *c, uint64_t id)
{
	int fresh, full;
	void *arr = c->src;
	src_map *e = iogp__idmap_slot(&c->srcidx, id, &arr, &c->nsrc, &c->srccap, sizeof(*e),
	                              SERIES_MAX_SOURCES, &fresh, &full);
	c->src = arr;
	if (full)
		c->limit_sources = 1;
	if (e && fresh) {
		e->source = id;
		e->scheme = -1;
	}
	return e;
}

/* What nodes x bins cost: a rate and a covered flag per cell, with
 * quantiles a p99 and its flag too. */
static int cells_ok(const iogp_series *s, size_t nodes, size_t bins)
{
	uint64_t cell = s->quantiles ? 2 * (sizeof(double) + 1) : sizeof(double) + 1;
	return (uint64_t)(nodes ? nodes : 1) * (uint64_t)bins * cell <= SERIES_MAX_BYTES;
}

static int node_get(series_ctx *c, const char *name, size_t *idx)
{
	iogp_series *s = c->s;
	uint64_t h = iogp__hash_str(name);
	long f = iogp__name_get(&c->nodeidx, s->nodes, name, h);
	if (f >= 0) {
		*idx = (size_t)f;
		return 0;
	}
	if (!cells_ok(s, s->nnodes + 1, s->cap))
		return IOGP_ELIMIT;
	size_t n = s->nnodes + 1;
	char **nn = realloc(s->nodes, n * sizeof(*nn));
	if (!nn)
		return IOGP_ENOMEM;
	s->nodes = nn;
	double **nv = realloc(s->v, n * sizeof(*nv));
	if (!nv)
		return IOGP_ENOMEM;
	s->v = nv;
	uint8_t **nc = realloc(s->covered, n * sizeof(*nc));
	if (!nc)
		return IOGP_ENOMEM;
	s->covered = nc;
	if (c->quant) {
		uint64_t **np = realloc(s->node_p99, n * sizeof(*np));
		if (!np)
			return IOGP_ENOMEM;
		s->node_p99 = np;
		uint8_t **nh = realloc(s->node_p99_has, n * sizeof(*nh));
		if (!nh)
			return IOGP_ENOMEM;
		s->node_p99_has = nh;
		qring *r = realloc(c->rings, n * sizeof(*r));
		if (!r)
			return IOGP_ENOMEM;
		c->rings = r;
		memset(&c->rings[s->nnodes], 0, sizeof(*r));
		c->nrings = n;
		s->node_p99[s->nnodes] = s->cap ? calloc(s->cap, sizeof(uint64_t)) : NULL;
		s->node_p99_has[s->nnodes] = s->cap ? calloc(s->cap, 1) : NULL;
	}
	s->nodes[s->nnodes] = strdup(name);
	s->v[s->nnodes] = s->cap ? calloc(s->cap, sizeof(double)) : NULL;
	s->covered[s->nnodes] = s->cap ? calloc(s->cap, 1) : NULL;
	int bad = !s->nodes[s->nnodes] || (s->cap && (!s->v[s->nnodes] || !s->covered[s->nnodes]));
	if (c->quant)
		bad |= s->cap && (!s->node_p99[s->nnodes] || !s->node_p99_has[s->nnodes]);
	if (bad || iogp__idmap_put(&c->nodeidx, h, (uint32_t)s->nnodes) < 0) {
		free(s->nodes[s->nnodes]);
		free(s->v[s->nnodes]);
		free(s->covered[s->nnodes]);
		if (c->quant) {
			free(s->node_p99[s->nnodes]);
			free(s->node_p99_has[s->nnodes]);
		}
		return IOGP_ENOMEM;
	}
	*idx = s->nnodes++;
	return 0;
}

static void *grow_array(void *p, size_t elem, size_t old, size_t cap)
{
	uint8_t *n = realloc(p, cap * elem);
	if (n)
		memset(n + old * elem, 0, (cap - old) * elem);
	return n;
}

static int grow_bins(iogp_series *s, size_t need)
{
	if (need <= s->cap)
		return 0;
	if (need > SERIES_MAX_BINS || !cells_ok(s, s->nnodes, need))
		return IOGP_ELIMIT;
	size_t cap = s->cap ? s->cap : 256;
	while (cap < need)
		cap *= 2;
	if (cap > SERIES_MAX_BINS)
		cap = SERIES_MAX_BINS;
	if (!cells_ok(s, s->nnodes, cap))
		cap = need;
	for (size_t i = 0; i < s->nnodes; i++) {
		double *v = grow_array(s->v[i], sizeof(double), s->cap, cap);
		if (!v)
			return IOGP_ENOMEM;
		s->v[i] = v;
		uint8_t *c = grow_array(s->covered[i], 1, s->cap, cap);
		if (!c)
			return IOGP_ENOMEM;
		s->covered[i] = c;
		if (s->quantiles) {
			uint64_t *p = grow_array(s->node_p99[i], sizeof(uint64_t), s->cap, cap);
			if (!p)
				return IOGP_ENOMEM;
			s->node_p99[i] = p;
			uint8_t *h = grow_array(s->node_p99_has[i], 1, s->cap, cap);
			if (!h)
				return IOGP_ENOMEM;
			s->node_p99_has[i] = h;
		}
	}
	if (s->quantiles) {
		for (int k = 0; k < 3; k++) {
			uint64_t *q = grow_array(s->q[k], sizeof(uint64_t), s->cap, cap);
			if (!q)
				return IOGP_ENOMEM;
			s->q[k] = q;
		}
		uint8_t *h = grow_array(s->q_has, 1, s->cap, cap);
		if (!h)
			return IOGP_ENOMEM;
		s->q_has = h;
	}
	s->cap = cap;
	return 0;
}

static void shift(void *p, size_t elem, size_t n, size_t k)
{
	memmove((uint8_t *)p + k * elem, p, n * elem);
	memset(p, 0, k * elem);
}

/* Move the origin earlier by k bins (a drifting source started first). */
static int prepend_bins(iogp_series *s, size_t k)
{
	int rc = grow_bins(s, s->nbins + k);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < s->nnodes; i++) {
		shift(s->v[i], sizeof(double), s->nbins, k);
		shift(s->covered[i], 1, s->nbins, k);
		if (s->quantiles) {
			shift(s->node_p99[i], sizeof(uint64_t), s->nbins, k);
			shift(s->node_p99_has[i], 1, s->nbins, k);
		}
	}
	if (s->quantiles) {
		for (int j = 0; j < 3; j++)
			shift(s->q[j], sizeof(uint64_t), s->nbins, k);
		shift(s->q_has, 1, s->nbins, k);
	}
	s->nbins += k;
	s->origin_ns -= (uint64_t)k * series_step_ns(s);
	return 0;
}

/* Spread amount over [a, b) (ns, wall) into node's bins by overlap. For rates
 * the amount is an increment (divided by the interval and the step); for
 * gauges a value held over the interval. */
static int spread(iogp_series *s, size_t node, uint64_t a, uint64_t b, double amount, int gauge)
{
	if (b <= a || a < s->origin_ns)
		return 0;
	uint64_t step_ns = series_step_ns(s);
	uint64_t ra = a - s->origin_ns, rb = b - s->origin_ns;  /* exact offsets */
	uint64_t first = ra / step_ns, last = (rb - 1) / step_ns;
	if (last >= SERIES_MAX_BINS)
		return IOGP_ELIMIT;
	int rc = grow_bins(s, (size_t)last + 1);
	if (rc < 0)
		return rc;
	double len = (double)(rb - ra);
	for (size_t i = (size_t)first; i <= (size_t)last; i++) {
		uint64_t lo = (uint64_t)i * step_ns, hi = lo + step_ns;
		uint64_t x0 = ra > lo ? ra : lo, x1 = rb < hi ? rb : hi;
		double part = (double)(x1 - x0);
		if (gauge)
			s->v[node][i] += amount * part / (double)step_ns;
		else
			s->v[node][i] += amount * (part / len) / s->step_s;
		s->covered[node][i] = 1;
	}
	if (last + 1 > s->nbins)
		s->nbins = (size_t)last + 1;
	return 0;
}

/* A gauge over the DELTA [a, b) of source e: the value it carries (found),
 * else the one it holds, also over the time since its last DELTA (agents
 * send a gauge only when it changes, and nothing when nothing changed). A
 * bin's value is the time-weighted mean of what held in it; the first value
 * fills its bin and the last lasts to the end of the source's bin. */
static int gauge_held(iogp_series *s, src_map *e, uint64_t a, uint64_t b, int found, double v)
{
	int rc = 0;
	if (e->has_held && e->held_end < a && a - e->held_end <= GAUGE_HOLD_NS)
		rc = spread(s, e->node, e->held_end, a, e->held, 1);
	else if (!e->has_held && found && a >= s->origin_ns)
		a -= (a - s->origin_ns) % series_step_ns(s);   /* the first value fills its bin */
	if (found) {
		e->held = v;
		e->has_held = 1;
	}
	if (rc == 0 && e->has_held)
		rc = spread(s, e->node, a, b, e->held, 1);
	if (b > e->held_end)
		e->held_end = b;
	return rc;
}

/* ---- quantiles: deltas merged per node and end bin ---- */

static size_t qacc_bytes(const qacc *a)
{
	return (size_t)a->cap * sizeof(iogp_bin) + (size_t)a->excap * sizeof(iogp_exact);
}

static void qacc_free(qacc *a)
{
	free(a->bins);
	free(a->ex);
	memset(a, 0, sizeof(*a));
}

/* a += h's bins and exact values (both ascending), saturating. */
static int qacc_add(qacc *a, const iogp_hist *h)
{
	if (h->n) {
		size_t need = (size_t)a->n + h->n;
		if (need > UINT32_MAX)
			return IOGP_ELIMIT;
		iogp_bin *m = malloc(need * sizeof(*m));
		if (!m)
			return IOGP_ENOMEM;
		size_t i = 0, j = 0, k = 0;
		while (i < a->n || j < h->n) {
			if (j == h->n || (i < a->n && a->bins[i].idx < h->bins[j].idx))
				m[k++] = a->bins[i++];
			else if (i == a->n || h->bins[j].idx < a->bins[i].idx)
				m[k++] = h->bins[j++];
			else {
				uint64_t x = a->bins[i].count, y = h->bins[j].count;
				m[k++] = (iogp_bin){ a->bins[i].idx, x + y < x ? UINT64_MAX : x + y };
				i++;
				j++;
			}
		}
		free(a->bins);
		a->bins = m;
		a->n = (uint32_t)k;
		a->cap = (uint32_t)need;
	}
	if (h->nexact) {
		size_t need = (size_t)a->nex + h->nexact;
		iogp_exact *m = malloc(need * sizeof(*m));
		if (!m)
			return IOGP_ENOMEM;
		size_t i = 0, j = 0, k = 0;
		while (i < a->nex || j < h->nexact) {
			if (j == h->nexact || (i < a->nex && a->ex[i].value < h->exact[j].value))
				m[k++] = a->ex[i++];
			else if (i == a->nex || h->exact[j].value < a->ex[i].value)
				m[k++] = h->exact[j++];
			else {
				uint64_t x = a->ex[i].count, y = h->exact[j].count;
				m[k++] = (iogp_exact){ a->ex[i].value, x + y < x ? UINT64_MAX : x + y };
				i++;
				j++;
			}
		}
		if (k > IOGP_HIST_MAX_EXACT)
			k = IOGP_HIST_MAX_EXACT;  /* the rest: their bins no longer explained */
		free(a->ex);
		a->ex = m;
		a->nex = (uint32_t)k;
		a->excap = (uint32_t)need;
	}
	return 0;
}

static qacc *qring_at(qring *r, size_t i)
{
	return &r->a[(r->head + i) & (r->cap - 1)];
}

/* The accumulator of absolute bin b in r, made room for. */
static int qring_slot(qring *r, uint64_t b, qacc **out)
{
	if (!r->len) {
		r->base = b;
		r->head = 0;
	}
	uint64_t lo = b < r->base ? b : r->base;
	uint64_t hi = b >= r->base + r->len ? b + 1 : r->base + r->len;
	if (hi - lo > SERIES_MAX_BINS)
		return IOGP_ELIMIT;
	size_t need = (size_t)(hi - lo);
	if (need > r->cap) {
		size_t cap = r->cap ? r->cap : 8;
		while (cap < need)
			cap *= 2;
		qacc *a = calloc(cap, sizeof(*a));
		if (!a)
			return IOGP_ENOMEM;
		for (size_t i = 0; i < r->len; i++)
			a[i + (size_t)(r->base - lo)] = *qring_at(r, i);
		free(r->a);
		r->a = a;
		r->cap = cap;
		r->head = 0;
		r->base = lo;
		r->len = need;
	} else if (b < r->base) {
		size_t k = (size_t)(r->base - b);
		r->head = (r->head - k) & (r->cap - 1);
		for (size_t i = 0; i < k; i++)
			memset(qring_at(r, i), 0, sizeof(qacc));
		r->base = b;
		r->len += k;
	} else if (b >= r->base + r->len) {
		size_t k = (size_t)(b + 1 - r->base - r->len);
		for (size_t i = 0; i < k; i++)
			memset(qring_at(r, r->len + i), 0, sizeof(qacc));
		r->len += k;
	}
	*out = qring_at(r, (size_t)(b - r->base));
	return 0;
}

static int quantile_of(const iogp_series *s, const iogp_hist *h, double q, uint64_t *v)
{
	if (!strcmp(s->unit, "bytes"))
		return iogp_hist_quantile_size(h, q, v);
	return iogp_hist_quantile(h, q, v);
}

/* Write absolute bin b: every node's p99 and the quantiles of all. */
static int q_finish_bin(series_ctx *c, uint64_t b)
{
	iogp_series *s = c->s;
	uint64_t step_ns = series_step_ns(s), org = s->origin_ns / step_ns;
	size_t at = (size_t)(b - org);
	int rc = 0;
	iogp_hist_clear(&c->qall);
	for (size_t n = 0; n < c->nrings; n++) {
		qring *r = &c->rings[n];
		if (!r->len || r->base != b)
			continue;
		qacc *a = qring_at(r, 0);
		if (a->n && b >= org && at < s->nbins) {
			iogp_hist_clear(&c->qh);
			if ((rc = iogp_hist_add_bins(&c->qh, a->bins, a->n)) < 0 ||
			    (rc = iogp_hist_add_exact(&c->qh, a->ex, a->nex)) < 0 ||
			    (rc = iogp_hist_add_bins(&c->qall, a->bins, a->n)) < 0 ||
			    (rc = iogp_hist_add_exact(&c->qall, a->ex, a->nex)) < 0)
				return rc;
			if (c->qh.total && quantile_of(s, &c->qh, 0.99, &s->node_p99[n][at]) == 0)
				s->node_p99_has[n][at] = 1;
		}
		c->held -= qacc_bytes(a);
		qacc_free(a);
		r->head = (r->head + 1) & (r->cap - 1);
		r->base++;
		r->len--;
	}
	if (c->qall.total && b >= org && at < s->nbins) {
		static const double qs[3] = { 0.5, 0.9, 0.99 };
		for (int k = 0; k < 3; k++)
			if ((rc = quantile_of(s, &c->qall, qs[k], &s->q[k][at])) < 0)
				return rc;
		s->q_has[at] = 1;
	}
	return 0;
}

/* Write every open bin below limit (absolute). */
static int q_finish_upto(series_ctx *c, uint64_t limit)
{
	for (;;) {
		uint64_t next = UINT64_MAX;
		for (size_t n = 0; n < c->nrings; n++)
			if (c->rings[n].len && c->rings[n].base < next)
				next = c->rings[n].base;
		if (next >= limit)
			break;
		int rc = q_finish_bin(c, next);
		if (rc < 0)
			return rc;
	}
	if (limit > c->first_open)
		c->first_open = limit;
	return 0;
}

/* The scheme index of bins, added to the list when new. */
static int scheme_index(series_ctx *c, const iogp_bins *bins)
{
	for (size_t i = 0; i < c->nschemes; i++)
		if (iogp_bins_equal(&c->schemes[i], bins))
			return (int)i;
	if (c->nschemes >= SERIES_MAX_SCHEMES || iogp_bins_valid(bins) < 0)
		return -1;
	iogp_bins *n = realloc(c->schemes, (c->nschemes + 1) * sizeof(*n));
	if (!n)
		return -1;
	c->schemes = n;
	c->schemes[c->nschemes] = *bins;
	if (c->nschemes == 0) {
		iogp_hist_init(&c->qh, bins);
		iogp_hist_init(&c->qall, bins);
	}
	return (int)c->nschemes++;
}

/* One DELTA's histogram of the metric into its node's end bin. */
static int q_add(series_ctx *c, src_map *e, const iogp_msg *msg, const iogp_hist_val *hv,
                 uint64_t end_abs)
{
	if (e->scheme < 0 || !hv->nbins)
		return 0;
	if (end_abs < c->first_open) {
		c->s->late++;
		return 0;
	}
	if (c->tmp_scheme != e->scheme) {
		iogp_hist_free(&c->tmp);
		iogp_hist_init(&c->tmp, &c->schemes[e->scheme]);
		c->tmp_scheme = e->scheme;
	}
	iogp_hist_clear(&c->tmp);
	if (iogp_hist_add_bins(&c->tmp, hv->bins, hv->nbins) < 0)
		return 0;   /* bins outside the scheme: not a histogram of it */
	for (uint32_t i = 0; i < msg->nexact; i++)
		if (msg->exact[i].id == hv->id)
			iogp_hist_add_exact(&c->tmp, msg->exact[i].v, msg->exact[i].n);
	const iogp_hist *h = &c->tmp;
	if (e->scheme != 0) {
		iogp_hist_free(&c->tmp2);
		if (iogp_hist_rebin(&c->tmp2, &c->tmp, &c->schemes[0]) < 0)
			return 0;
		h = &c->tmp2;
	}
	qacc *a;
	int rc = qring_slot(&c->rings[e->node], end_abs, &a);
	if (rc < 0)
		return rc;
	size_t before = qacc_bytes(a);
	if ((rc = qacc_add(a, h)) < 0)
		return rc;
	c->held += qacc_bytes(a) - before;
	if (end_abs > c->newest)
		c->newest = end_abs;
	uint64_t step_ns = series_step_ns(c->s);
	uint64_t hz = Q_HORIZON_NS / step_ns;
	if (hz < 4)
		hz = 4;
	if (c->newest >= c->first_open + hz && (rc = q_finish_upto(c, c->newest + 1 - hz)) < 0)
		return rc;
	while (c->held > Q_BUDGET) {   /* oldest first */
		uint64_t next = UINT64_MAX;
		for (size_t n = 0; n < c->nrings; n++)
			if (c->rings[n].len && c->rings[n].base < next)
				next = c->rings[n].base;
		if (next == UINT64_MAX)
			break;
		if ((rc = q_finish_upto(c, next + 1)) < 0)
			return rc;
	}
	return 0;
}

/* Quantiles on, for the nodes sources without the metric brought in before. */
static int quant_enable(series_ctx *c)
{
	iogp_series *s = c->s;
	size_t n = s->nnodes ? s->nnodes : 1;
	s->node_p99 = calloc(n, sizeof(*s->node_p99));
	s->node_p99_has = calloc(n, sizeof(*s->node_p99_has));
	c->rings = calloc(n, sizeof(*c->rings));
	if (!s->node_p99 || !s->node_p99_has || !c->rings)
		return IOGP_ENOMEM;
	c->nrings = s->nnodes;
	c->quant = 1;
	s->quantiles = 1;   /* from here on grow_bins and prepend_bins keep the arrays */
	if (!s->cap)
		return 0;
	for (size_t i = 0; i < s->nnodes; i++) {
		s->node_p99[i] = calloc(s->cap, sizeof(uint64_t));
		s->node_p99_has[i] = calloc(s->cap, 1);
		if (!s->node_p99[i] || !s->node_p99_has[i])
			return IOGP_ENOMEM;
	}
	for (int k = 0; k < 3; k++)
		if (!(s->q[k] = calloc(s->cap, sizeof(uint64_t))))
			return IOGP_ENOMEM;
	return (s->q_has = calloc(s->cap, 1)) ? 0 : IOGP_ENOMEM;
}

static int series_msg(series_ctx *c, const iogp_msg *msg)
{
	iogp_series *s = c->s;
	src_map *e = src_get(c, msg->source);
	if (!e)
		return c->limit_sources ? IOGP_ELIMIT : IOGP_ENOMEM;
	if (msg->kind == IOGP_HELLO || msg->kind == IOGP_SNAPSHOT) {
		for (uint32_t i = 0; i < msg->nmetrics; i++) {
			const iogp_metric_def *d = &msg->metrics[i];
			if (strcmp(d->name, c->metric))
				continue;
			if (!c->kind_set) {
				s->kind = d->kind;
				snprintf(s->unit, sizeof(s->unit), "%s", d->unit);
				c->kind_set = 1;
				if ((c->flags & IOGP_SERIES_QUANTILES) && d->kind == IOGP_HISTOGRAM) {
					int rc = quant_enable(c);
					if (rc < 0)
						return rc;
				}
			}
			if (d->kind != s->kind)
				continue;   /* another kind under the same name: not this series */
			e->metric_id = d->id;
			e->has_metric = 1;
			if (c->quant)
				e->scheme = scheme_index(c, &d->bins);
		}
		const char *host = iogp_msg_label(msg, "host");
		if (msg->nlabels) {
			int rc = node_get(c, host ? host : "", &e->node);
			if (rc < 0)
				return rc;
			e->has_node = 1;
		}
	}
	if (msg->kind == IOGP_SNAPSHOT || msg->kind == IOGP_DELTA) {
		if (msg->kind == IOGP_DELTA && e->has_seq && msg->seq <= e->last_seq) {
			s->duplicates++;
			return 0;
		}
		if (!e->has_seq || msg->seq > e->last_seq)
			e->last_seq = msg->seq;
		e->has_seq = 1;
	}
	/* a source's last word (its final SNAPSHOT or BYE): its gauge held until then, to the
	 * end of that bin */
	if (msg->kind != IOGP_DELTA && s->kind == IOGP_GAUGE && e->has_held && msg->wall_ns > e->held_end &&
	    msg->wall_ns - e->held_end <= GAUGE_HOLD_NS) {
		uint64_t step_ns = series_step_ns(s), end = msg->wall_ns;
		if (end > s->origin_ns && (end - s->origin_ns) % step_ns)
			end += step_ns - (end - s->origin_ns) % step_ns;
		int rc = spread(s, e->node, e->held_end, end, e->held, 1);
		e->held_end = end;
		return rc;
	}
	if (msg->kind != IOGP_DELTA || !e->has_metric || !e->has_node || msg->t1_ns < msg->t0_ns)
		return 0;
	double amount = 0;
	int found = 0;
	const iogp_hist_val *hv = NULL;
	switch (s->kind) {
	case IOGP_COUNTER:
		for (uint32_t i = 0; i < msg->ncounters; i++)
			if (msg->counters[i].id == e->metric_id) {
				amount = (double)msg->counters[i].value;
				found = 1;
			}
		break;
	case IOGP_GAUGE:
		for (uint32_t i = 0; i < msg->ngauges; i++)
			if (msg->gauges[i].id == e->metric_id) {
				amount = (double)msg->gauges[i].value;
				found = 1;
			}
		break;
	case IOGP_HISTOGRAM:
		for (uint32_t i = 0; i < msg->nhists; i++)
			if (msg->hists[i].id == e->metric_id) {
				for (uint32_t j = 0; j < msg->hists[i].nbins; j++)
					amount += (double)msg->hists[i].bins[j].count;
				hv = &msg->hists[i];
				found = 1;
			}
		break;
	default:
		return 0;
	}
	uint64_t dur = msg->t1_ns - msg->t0_ns;
	if (dur == 0 || msg->wall_ns < dur)
		return 0;
	uint64_t a = msg->wall_ns - dur, b = msg->wall_ns;
	uint64_t step_ns = series_step_ns(s);
	uint64_t aligned = a - a % step_ns;
	if (!s->intervals) {
		s->origin_ns = aligned;
	} else if (aligned < s->origin_ns) {
		uint64_t k = (s->origin_ns - aligned) / step_ns;
		if (k + s->nbins > SERIES_MAX_BINS)
			return IOGP_ELIMIT;
		int rc = prepend_bins(s, (size_t)k);
		if (rc < 0)
			return rc;
	}
	s->intervals++;
	if (s->kind == IOGP_GAUGE)
		return gauge_held(s, e, a, b, found, amount);
	/* counters/histograms with no increment still mark the interval covered */
	int rc = spread(s, e->node, a, b, amount, 0);
	if (rc < 0 || !c->quant || !hv)
		return rc;
	return q_add(c, e, msg, hv, (b - 1) / step_ns);
}

static int cmp_names(const void *a, const void *b, void *names)
{
	char *const *n = names;
	return strcmp(n[*(const size_t *)a], n[*(const size_t *)b]);
}

/* Node indexes in name order (byte order); NULL when out of memory. */
static size_t *name_order(char *const *names, size_t n)
{
	size_t *ord = malloc((n ? n : 1) * sizeof(*ord));
	if (!ord)
		return NULL;
	for (size_t i = 0; i < n; i++)
		ord[i] = i;
	qsort_r(ord, n, sizeof(*ord), cmp_names, (void *)names);
	return ord;
}

static void permute(void **arr, const size_t *ord, size_t n, void **tmp)
{
	if (!arr)
		return;
	for (size_t i = 0; i < n; i++)
		tmp[i] = arr[ord[i]];
	memcpy(arr, tmp, n * sizeof(*arr));
}

static int sort_nodes(iogp_series *s)
{
	if (s->nnodes < 2)
		return 0;
	size_t *ord = name_order(s->nodes, s->nnodes);
	void **tmp = malloc(s->nnodes * sizeof(*tmp));
	if (!ord || !tmp) {
		free(ord);
		free(tmp);
		return IOGP_ENOMEM;
	}
	permute((void **)s->nodes, ord, s->nnodes, tmp);
	permute((void **)s->v, ord, s->nnodes, tmp);
	permute((void **)s->covered, ord, s->nnodes, tmp);
	permute((void **)s->node_p99, ord, s->nnodes, tmp);
	permute((void **)s->node_p99_has, ord, s->nnodes, tmp);
	free(ord);
	free(tmp);
	return 0;
}

static void ctx_free(series_ctx *c)
{
	for (size_t n = 0; n < c->nrings; n++) {
		for (size_t i = 0; i < c->rings[n].len; i++)
			qacc_free(qring_at(&c->rings[n], i));
		free(c->rings[n].a);
	}
	free(c->rings);
	free(c->src);
	free(c->schemes);
	iogp__idmap_free(&c->srcidx);
	iogp__idmap_free(&c->nodeidx);
	iogp_hist_free(&c->tmp);
	iogp_hist_free(&c->tmp2);
	iogp_hist_free(&c->qh);
	iogp_hist_free(&c->qall);
}

int iogp_series_load(iogp_series *s, const char *path, const char *metric,
                     double step_s, int flags, char *err, size_t errlen)
{
	memset(s, 0, sizeof(*s));
	if (!(step_s >= 0.001 && step_s <= 86400.0)) {
		iogp_errf(err, errlen, "step must be between 0.001 and 86400 seconds");
		return IOGP_EINVAL;
	}
	s->step_s = step_s;
	iogp_replay_reader *r;
	int rc = iogp_replay_open(&r, path, err, errlen);
	if (rc < 0)
		return rc;
	iogp_replay_info info;
	iogp_replay_get_info(r, &info);
	s->file_bytes = info.file_bytes;
	series_ctx c = { .s = s, .metric = metric, .flags = flags, .tmp_scheme = -1 };
	iogp_msg msg;
	iogp_msg_init(&msg);
	iogp_replay_rec rec;
	while ((rc = iogp_replay_next(r, &rec)) == 0) {
		if (rec.keyframe)
			continue;   /* state only; intervals come from DELTAs */
		if (iogp_msg_decode(&msg, rec.payload, rec.len, NULL, 0) < 0)
			continue;
		rc = series_msg(&c, &msg);
		if (rc < 0)
			break;
	}
	if (rc == IOGP_EEOF)
		rc = 0;
	if (rc == 0 && c.quant)
		rc = q_finish_upto(&c, UINT64_MAX);
	if (rc == IOGP_ELIMIT && c.limit_sources)
		iogp_errf(err, errlen, "more than %d sources in %s", SERIES_MAX_SOURCES, path);
	else if (rc == IOGP_ELIMIT)
		iogp_errf(err, errlen, "too many time bins for %zu nodes (the file spans more than "
		          "%zu bins of %g s): use a larger --step", s->nnodes ? s->nnodes : 1,
		          s->nbins > s->cap ? s->nbins : s->cap, step_s);
	else if (rc < 0)
		iogp_errf(err, errlen, "%s", iogp_strerror(rc));
	iogp_replay_reader_stats(r, &s->file);
	iogp_msg_free(&msg);
	iogp_replay_close_reader(r);
	ctx_free(&c);
	if (rc == 0 && !c.kind_set) {
		iogp_errf(err, errlen, "no metric named '%s' in %s", metric, path);
		rc = IOGP_ENOTFOUND;
	}
	if (rc == 0)
		rc = sort_nodes(s);
	if (rc < 0)
		iogp_series_free(s);
	return rc;
}

int iogp_series_from_file(iogp_series *s, const char *path, const char *metric,
                          double step_s, char *err, size_t errlen)
{
	return iogp_series_load(s, path, metric, step_s, 0, err, errlen);
}

void iogp_series_free(iogp_series *s)
{
	for (size_t i = 0; i < s->nnodes; i++) {
		free(s->nodes[i]);
		free(s->v[i]);
		free(s->covered[i]);
		if (s->node_p99)
			free(s->node_p99[i]);
		if (s->node_p99_has)
			free(s->node_p99_has[i]);
	}
	free(s->nodes);
	free(s->v);
	free(s->covered);
	free(s->node_p99);
	free(s->node_p99_has);
	for (int k = 0; k < 3; k++)
		free(s->q[k]);
	free(s->q_has);
	memset(s, 0, sizeof(*s));
}

/* ---- CSV ---- */

void iogp_csv_field(FILE *out, const char *str)
{
	if (!strpbrk(str, ",\"\n\r")) {
		fputs(str, out);
		return;
	}
	fputc('"', out);
	for (const char *p = str; *p; p++) {
		if (*p == '"')
			fputc('"', out);
		fputc(*p, out);
	}
	fputc('"', out);
}

/* A unit as a column name component: [A-Za-z0-9_], or dflt when empty. */
static void unit_token(char *dst, size_t len, const char *unit, const char *dflt)
{
	if (!unit || !*unit)
		unit = dflt;
	size_t j = 0;
	for (const char *p = unit; *p && j + 1 < len; p++) {
		char ch = *p;
		int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
		dst[j++] = ok ? ch : '_';
	}
	dst[j] = 0;
}

void iogp_fmt_iso_ms(char *buf, size_t len, uint64_t wall_ns)
{
	time_t sec = (time_t)(wall_ns / 1000000000ull);
	struct tm tm;
	char ts[40];
	gmtime_r(&sec, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%03uZ", ts, (unsigned)(wall_ns % 1000000000ull / 1000000ull));
}

/* "1795000000.000": seconds with 3 decimals, from integer nanoseconds. */
static void fmt_secs_ms(char *buf, size_t len, uint64_t ns)
{
	snprintf(buf, len, "%" PRIu64 ".%03u", (uint64_t)(ns / 1000000000u),
	         (unsigned)(ns % 1000000000ull / 1000000ull));
}

static void fmt_fixed(char *buf, size_t len, double v)
{
	snprintf(buf, len, "%.3f", v);
	if (!strcmp(buf, "-0.000"))
		snprintf(buf, len, "0.000");
}

static void col_name(FILE *out, const char *prefix, const char *suffix)
{
	char name[IOGP_MAX_VALUE + 64];
	snprintf(name, sizeof(name), "%s_%s", prefix, suffix);
	fputc(',', out);
	iogp_csv_field(out, name);
}

int iogp_series_write_csv(const iogp_series *s, FILE *out)
{
	size_t *ord = name_order(s->nodes, s->nnodes);
	if (!ord)
		return IOGP_ENOMEM;
	char u[48], suffix[64], num[64], ts[48];
	fputs("time,epoch_s,elapsed_s", out);
	if (s->quantiles) {
		unit_token(u, sizeof(u), s->unit, "value");
		fprintf(out, ",count_per_s,p50_%s,p90_%s,p99_%s", u, u, u);
		snprintf(suffix, sizeof(suffix), "p99_%s", u);
	} else {
		if (s->kind == IOGP_GAUGE) {
			unit_token(suffix, sizeof(suffix), s->unit, "value");
		} else {
			unit_token(u, sizeof(u), s->kind == IOGP_HISTOGRAM ? "" : s->unit, "count");
			snprintf(suffix, sizeof(suffix), "%s_per_s", u);
		}
		fprintf(out, ",min_node,min_%s,avg_%s,max_node,max_%s,total_%s", suffix, suffix,
		        suffix, suffix);
	}
	for (size_t k = 0; k < s->nnodes; k++)
		col_name(out, s->nodes[ord[k]], suffix);
	fputc('\n', out);
	uint64_t step_ns = series_step_ns(s);
	for (size_t b = 0; b < s->nbins; b++) {
		uint64_t el = (uint64_t)b * step_ns;
		iogp_fmt_iso_ms(ts, sizeof(ts), s->origin_ns + el);
		fputs(ts, out);
		fmt_secs_ms(num, sizeof(num), s->origin_ns + el);
		fprintf(out, ",%s", num);
		fmt_secs_ms(num, sizeof(num), el);
		fprintf(out, ",%s", num);
		size_t cnt = 0, imin = 0, imax = 0;
		double sum = 0;
		for (size_t k = 0; k < s->nnodes; k++) {
			size_t n = ord[k];
			if (!s->covered[n] || !s->covered[n][b])
				continue;
			double v = s->v[n][b];
			if (!cnt || v < s->v[imin][b])
				imin = n;
			if (!cnt || v > s->v[imax][b])
				imax = n;
			sum += v;
			cnt++;
		}
		if (s->quantiles) {
			fputc(',', out);
			if (cnt) {
				fmt_fixed(num, sizeof(num), sum);
				fputs(num, out);
			}
			for (int k = 0; k < 3; k++) {
				fputc(',', out);
				if (s->q_has && s->q_has[b])
					fprintf(out, "%" PRIu64, s->q[k][b]);
			}
			for (size_t k = 0; k < s->nnodes; k++) {
				size_t n = ord[k];
				fputc(',', out);
				if (s->node_p99_has && s->node_p99_has[n] && s->node_p99_has[n][b])
					fprintf(out, "%" PRIu64, s->node_p99[n][b]);
			}
			fputc('\n', out);
			continue;
		}
		if (cnt) {
			fputc(',', out);
			iogp_csv_field(out, s->nodes[imin]);
			fmt_fixed(num, sizeof(num), s->v[imin][b]);
			fprintf(out, ",%s", num);
			fmt_fixed(num, sizeof(num), sum / (double)cnt);
			fprintf(out, ",%s,", num);
			iogp_csv_field(out, s->nodes[imax]);
			fmt_fixed(num, sizeof(num), s->v[imax][b]);
			fprintf(out, ",%s", num);
			fmt_fixed(num, sizeof(num), sum);
			fprintf(out, ",%s", num);
		} else {
			fputs(",,,,,,", out);
		}
		for (size_t k = 0; k < s->nnodes; k++) {
			size_t n = ord[k];
			fputc(',', out);
			if (s->covered[n] && s->covered[n][b]) {
				fmt_fixed(num, sizeof(num), s->v[n][b]);
				fputs(num, out);
			}
		}
		fputc('\n', out);
	}
	free(ord);
	return ferror(out) ? IOGP_EIO : 0;
}

void iogp_export_filename(char *dst, size_t len, const char *metric)
{
	size_t j = 0;
	for (const char *p = metric; *p && j + 1 < len; p++) {
		char ch = *p;
		int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		         (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' || ch == '-';
		dst[j++] = ok ? ch : '_';
	}
	if (len)
		dst[j] = 0;
	if (j && dst[0] == '.')
		dst[0] = '_';
}

FILE *iogp_export_open(const char *dir, const char *name, char *names, size_t nlen)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	if (f && names && nlen) {
		size_t u = strlen(names);
		snprintf(names + u, nlen - u, "%s%s", u ? " " : "", name);
	}
	return f;
}

int iogp_export_close(FILE *f)
{
	int bad = ferror(f);
	return fclose(f) != 0 || bad ? -1 : 0;
}

