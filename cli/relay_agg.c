/* relay_agg.c - the aggregator of `iogram relay --aggregate node|job` (see
 * relay_agg.h).
 *
 * Exactness. Every member's messages go into an iogp_model, which already
 * does what a viewer does with them: sequence numbers (duplicates ignored,
 * gaps counted, false jumps undone), SNAPSHOTs replacing a source's state,
 * restarts as new sources, the caps. For every member the aggregator keeps
 * what it has counted of it so far (its cumulative state at the previous
 * flush); at a flush, each member that received a message since is read
 * back from the model (iogp_model_snapshot) and the difference is added to
 * its group. So a group's current totals are always the sum of its members'
 * model states, whatever happened in between (a SNAPSHOT adds only its
 * difference, a late joiner its whole state, a BYE nothing). A group sends
 * the difference between its current totals and what it sent before; when
 * some total went down (a member's SNAPSHOT said less than its DELTAs had
 * added), it sends a SNAPSHOT instead, so downstream totals stay the sum.
 * An aggregate is an ordinary source, so a relay above aggregates it again.
 *
 * A metric is a group's by name; a member's metric with that name but
 * another kind or histogram bin scheme is left out of the group (counted in
 * conflicts), never merged into the wrong bins.
 *
 * A member belongs to the group its labels name when it is first read
 * (its host, as the model's node, or its job); a later change of labels
 * does not move what it has counted. Group ids come from the names alone,
 * so one node's (or job's) sources must go through one aggregating relay
 * at each level (two relays sending the same group would collide above).
 *
 * Per-file records and access samples are not carried: both are per
 * process (file ids from each source's table, times on each source's
 * CLOCK_MONOTONIC), and at the scale aggregation is for (thousands of
 * sources a node) neither can be summed into one meaningful record; they
 * are counted as skipped. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iogp.h"
#include "iogp_metrics.h"
#include "iogp_sys.h"
#include "relay_agg.h"

#define NONE UINT32_MAX
#define MAX_LABEL 256

/* A sparse vector of (key, count): histogram bins or exact values. */
typedef struct sv {
	iogp_bin *b;
	uint32_t n, cap;
} sv;

struct gm {                 /* a group's metric; its id is its index + 1 */
	char *name, *unit;
	iogp_metric_kind kind;
	iogp_bins *bins;        /* HISTOGRAM */
	uint64_t cur_c, sent_c;
	int64_t cur_g, sent_g;
	int gauge_sent;
	sv cur_h, sent_h, cur_x, sent_x;
};

struct group {
	char *name;
	uint64_t id, seq;
	struct gm *m;
	uint32_t nm, capm;
	uint32_t members;
	char *job;              /* NODE mode: the members' job when they share one */
	int job_mixed;
	int need_hello;         /* labels or catalog changed */
	uint32_t hello_nm;      /* metrics announced */
	uint64_t start_mono, last_mono;
};

struct mslot {              /* what has been counted of one member metric */
	uint32_t id, gm;        /* gm NONE: left out (conflict or unusable) */
	int role;               /* R_*: what the member's summary takes from it */
	uint64_t c;
	int64_t g;
	sv h, x;
	int seen;
};

/* The per-source summary (--summaries): what it takes from a member. */
enum { R_NONE, R_RBYTES, R_WBYTES, R_ROPS, R_WOPS, R_RLAT, R_WLAT, R_MLAT };
enum { S_RBYTES = 1, S_WBYTES, S_OPS, S_TIME, S_P99, S_N = S_P99 };
static const struct {
	const char *name, *unit;
	iogp_metric_kind kind;
} summary_cat[S_N] = {
	{ "summary.read.bytes", "bytes", IOGP_COUNTER },
	{ "summary.write.bytes", "bytes", IOGP_COUNTER },
	{ "summary.ops", "ops", IOGP_COUNTER },
	{ "summary.io_time", "ns", IOGP_COUNTER },
	{ "summary.latency.p99", "ns", IOGP_GAUGE },
};

struct member {
	uint32_t group;
	int passthrough;        /* a summary source from a relay below: forwarded as is */
	int sum_hello;          /* its summary's HELLO was sent */
	int sum_active;         /* something to summarise since the last one */
	uint64_t sum_seq;
	uint64_t sums[S_N + 1];  /* the interval's summary values */
	sv lat;                 /* the interval's read + write latency bins */
	const iogp_bins *lat_bins; /* their scheme (the first seen; a->schemes) */
	struct mslot *s;
	uint32_t ns, caps;
	int dirty;
};

struct relay_agg {
	int mode, summaries;
	uint64_t seq0, now_mono, last_flush;
	relay_agg_out pass_out;
	void *pass_ctx;
	iogp_model *model;
	iogp_msg in, snap, out;
	struct member *mem;
	uint32_t nmem, capmem;
	uint32_t *dirty;
	uint32_t ndirty, capdirty;
	struct group *g;
	uint32_t ng, capg;
	uint8_t *buf;
	relay_agg_stats st;
	/* scratch for building messages */
	iogp_counter_val *cv;
	iogp_gauge_val *gv;
	iogp_hist_val *hv;
	iogp_exact_val *xv;
	iogp_metric_def *md;
	sv *tmp;                /* per metric: DELTA bins / exact */
	iogp_hist *qh;          /* for the summaries' p99 */
	iogp_bins *schemes[16]; /* the summaries' latency schemes (an iogp_bins is 8 KB) */
	uint32_t nschemes;
	uint32_t scratch_cap;
};

static int grow(void **p, uint32_t *cap, uint32_t need, size_t size)
{
	if (need <= *cap)
		return 0;
	uint32_t c = *cap ? *cap : 8;
	while (c < need)
		c *= 2;
	void *q = realloc(*p, (size_t)c * size);
	if (!q)
		return -1;
	*p = q;
	*cap = c;
	return 0;
}

static void sv_free(sv *v)
{
	free(v->b);
	v->b = NULL;
	v->n = v->cap = 0;
}

static int sv_set(sv *v, const iogp_bin *b, uint32_t n)
{
	if (grow((void **)&v->b, &v->cap, n, sizeof *b) < 0)
		return -1;
	if (n)
		memcpy(v->b, b, n * sizeof *b);
	v->n = n;
	return 0;
}

/* v += now - old, all three ascending by key; counts modulo 2^64 (v stays
 * the sum of non-negative states, so it never really goes below 0). */
static int sv_apply(sv *v, const iogp_bin *now, uint32_t nn, const iogp_bin *old, uint32_t no)
{
	uint32_t cap = v->n + nn + no, i = 0, j = 0, k = 0, n = 0;
	iogp_bin *r = malloc((cap ? cap : 1) * sizeof *r);
	if (!r)
		return -1;
	while (i < v->n || j < nn || k < no) {
		uint64_t key = UINT64_MAX;
		if (i < v->n && v->b[i].idx < key)
			key = v->b[i].idx;
		if (j < nn && now[j].idx < key)
			key = now[j].idx;
		if (k < no && old[k].idx < key)
			key = old[k].idx;
		uint64_t c = 0;
		if (i < v->n && v->b[i].idx == key)
			c += v->b[i++].count;
		if (j < nn && now[j].idx == key)
			c += now[j++].count;
		if (k < no && old[k].idx == key)
			c -= old[k++].count;
		if (c)
			r[n++] = (iogp_bin){ key, c };
	}
	free(v->b);
	v->b = r;
	v->n = n;
	v->cap = cap ? cap : 1;
	return 0;
}

/* d = cur - sent where positive; *neg when some count went down. */
static int sv_diff(sv *d, const sv *cur, const sv *sent, int *neg)
{
	uint32_t i = 0, j = 0;
	d->n = 0;
	if (grow((void **)&d->b, &d->cap, cur->n, sizeof *d->b) < 0)
		return -1;
	while (i < cur->n || j < sent->n) {
		if (j >= sent->n || (i < cur->n && cur->b[i].idx < sent->b[j].idx)) {
			d->b[d->n++] = cur->b[i++];
		} else if (i >= cur->n || sent->b[j].idx < cur->b[i].idx) {
			*neg = 1;
			j++;
		} else {
			if (cur->b[i].count > sent->b[j].count)
				d->b[d->n++] = (iogp_bin){ cur->b[i].idx, cur->b[i].count - sent->b[j].count };
			else if (cur->b[i].count < sent->b[j].count)
				*neg = 1;
			i++;
			j++;
		}
	}
	return 0;
}

static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* Stable id of a group: its mode and name, hashed. */
static uint64_t group_id(int mode, const char *name)
{
	uint64_t h = 1469598103934665603ull ^ (uint64_t)mode;
	for (const char *p = "iogram-agg/"; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	for (const char *p = name; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	return mix64(h) | 1;
}

relay_agg *relay_agg_new(int mode, int summaries, uint64_t seq0)
{
	relay_agg *a = calloc(1, sizeof *a);
	if (!a)
		return NULL;
	a->mode = mode;
	a->summaries = summaries;
	a->seq0 = seq0;
	iogp_model_opts mo = { .max_sources = 1000000, .access_ring = 16,
	                       .max_bytes = 8ull << 30 };
	a->model = iogp_model_new(&mo);
	a->buf = malloc(IOGP_MAX_PAYLOAD);
	a->qh = summaries ? calloc(1, sizeof *a->qh) : NULL;
	if (!a->model || !a->buf || (summaries && !a->qh)) {
		relay_agg_free(a);
		return NULL;
	}
	iogp_msg_init(&a->in);
	iogp_msg_init(&a->snap);
	iogp_msg_init(&a->out);
	return a;
}

void relay_agg_free(relay_agg *a)
{
	if (!a)
		return;
	for (uint32_t i = 0; i < a->nmem; i++) {
		for (uint32_t k = 0; k < a->mem[i].ns; k++) {
			sv_free(&a->mem[i].s[k].h);
			sv_free(&a->mem[i].s[k].x);
		}
		free(a->mem[i].s);
		sv_free(&a->mem[i].lat);
	}
	for (uint32_t i = 0; i < a->nschemes; i++)
		free(a->schemes[i]);
	if (a->qh) {
		iogp_hist_free(a->qh);
		free(a->qh);
	}
	for (uint32_t i = 0; i < a->ng; i++) {
		struct group *g = &a->g[i];
		for (uint32_t k = 0; k < g->nm; k++) {
			struct gm *m = &g->m[k];
			free(m->name);
			free(m->unit);
			free(m->bins);
			sv_free(&m->cur_h);
			sv_free(&m->sent_h);
			sv_free(&m->cur_x);
			sv_free(&m->sent_x);
		}
		free(g->m);
		free(g->name);
		free(g->job);
	}
	for (uint32_t i = 0; i < a->scratch_cap; i++)
		sv_free(&a->tmp[i]);
	free(a->tmp);
	free(a->cv);
	free(a->gv);
	free(a->hv);
	free(a->xv);
	free(a->md);
	free(a->mem);
	free(a->dirty);
	free(a->g);
	free(a->buf);
	iogp_msg_free(&a->in);
	iogp_msg_free(&a->snap);
	iogp_msg_free(&a->out);
	iogp_model_free(a->model);
	free(a);
}

int relay_agg_feed(relay_agg *a, const void *payload, size_t len, uint64_t recv_ns)
{
	a->st.in++;
	if (iogp_msg_decode(&a->in, payload, len, NULL, 0) < 0) {
		a->st.malformed++;
		return IOGP_EINVAL;
	}
	if (a->in.nfilerecs)
		a->st.files_skipped += a->in.nfilerecs;
	if (a->in.naccess)
		a->st.access_skipped += a->in.naccess;
	int r = iogp_model_apply(a->model, &a->in, recv_ns);
	if (r < 0)
		a->st.refused++;
	/* whatever the model did with it (even a refusal after a partial
	 * application), the source's state is read back at the next flush */
	size_t i;
	if (iogp_model_source_index(a->model, a->in.source, &i) < 0)
		return r;
	if (i >= a->nmem) {
		if (grow((void **)&a->mem, &a->capmem, (uint32_t)i + 1, sizeof *a->mem) < 0)
			return IOGP_ENOMEM;
		while (a->nmem <= i)
			a->mem[a->nmem++] = (struct member){ .group = NONE };
	}
	if (!a->mem[i].passthrough && iogp_model_source_label(a->model, i, "summary"))
		a->mem[i].passthrough = 1;
	if (a->mem[i].passthrough) {
		/* a summary source from an aggregating relay below: on, unchanged */
		if (a->pass_out)
			a->pass_out(a->pass_ctx, a->in.kind, a->in.source, payload, len);
		a->st.summaries++;
		return r;
	}
	if (!a->mem[i].dirty) {
		if (grow((void **)&a->dirty, &a->capdirty, a->ndirty + 1, sizeof *a->dirty) < 0)
			return IOGP_ENOMEM;
		a->dirty[a->ndirty++] = (uint32_t)i;
		a->mem[i].dirty = 1;
	}
	return r;
}

static uint32_t group_get(relay_agg *a, const char *name)
{
	for (uint32_t i = 0; i < a->ng; i++)   /* groups are few: nodes or jobs */
		if (!strcmp(a->g[i].name, name))
			return i;
	if (grow((void **)&a->g, &a->capg, a->ng + 1, sizeof *a->g) < 0)
		return NONE;
	struct group *g = &a->g[a->ng];
	memset(g, 0, sizeof *g);
	if (!(g->name = strdup(name)))
		return NONE;
	g->id = group_id(a->mode, name);
	g->seq = a->seq0;
	g->need_hello = 1;
	g->start_mono = g->last_mono = a->now_mono;
	a->st.groups++;
	return a->ng++;
}

/* The group metric for a member's definition d, or NONE (conflict). */
static uint32_t gm_get(relay_agg *a, struct group *g, const iogp_metric_def *d)
{
	for (uint32_t k = 0; k < g->nm; k++) {
		struct gm *m = &g->m[k];
		if (strcmp(m->name, d->name))
			continue;
		if (m->kind != d->kind ||
		    (d->kind == IOGP_HISTOGRAM && !iogp_bins_equal(m->bins, &d->bins))) {
			a->st.conflicts++;
			return NONE;
		}
		return k;
	}
	if (d->kind != IOGP_COUNTER && d->kind != IOGP_GAUGE && d->kind != IOGP_HISTOGRAM)
		return NONE;   /* access metrics: samples are not carried */
	if (g->nm >= IOGP_MAX_METRICS ||
	    grow((void **)&g->m, &g->capm, g->nm + 1, sizeof *g->m) < 0)
		return NONE;
	struct gm *m = &g->m[g->nm];
	memset(m, 0, sizeof *m);
	m->name = strdup(d->name);
	m->unit = strdup(d->unit ? d->unit : "");
	m->kind = d->kind;
	if (d->kind == IOGP_HISTOGRAM && (m->bins = malloc(sizeof *m->bins)))
		*m->bins = d->bins;
	if (!m->name || !m->unit || (d->kind == IOGP_HISTOGRAM && !m->bins)) {
		free(m->name);
		free(m->unit);
		free(m->bins);
		return NONE;
	}
	g->need_hello = 1;
	return g->nm++;
}

static struct mslot *mslot_find(struct member *mb, uint32_t id)
{
	uint32_t lo = 0, hi = mb->ns;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (mb->s[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < mb->ns && mb->s[lo].id == id ? &mb->s[lo] : NULL;
}

static struct mslot *mslot_add(struct member *mb, uint32_t id, uint32_t gm)
{
	uint32_t p = 0;
	if (grow((void **)&mb->s, &mb->caps, mb->ns + 1, sizeof *mb->s) < 0)
		return NULL;
	while (p < mb->ns && mb->s[p].id < id)
		p++;
	memmove(&mb->s[p + 1], &mb->s[p], (mb->ns - p) * sizeof *mb->s);
	memset(&mb->s[p], 0, sizeof mb->s[p]);
	mb->s[p].id = id;
	mb->s[p].gm = gm;
	mb->ns++;
	return &mb->s[p];
}

static const char *group_name(relay_agg *a, size_t i)
{
	if (a->mode == RELAY_AGG_NODE) {
		iogp_source_info si;
		if (iogp_model_source(a->model, i, &si) < 0 || !si.node)
			return "";
		return si.node;
	}
	const char *job = iogp_model_source_label(a->model, i, "job");
	return job ? job : "";
}

/* The shared copy of scheme b, NULL beyond 16 schemes. */
static const iogp_bins *scheme_get(relay_agg *a, const iogp_bins *b)
{
	for (uint32_t i = 0; i < a->nschemes; i++)
		if (iogp_bins_equal(a->schemes[i], b))
			return a->schemes[i];
	if (a->nschemes >= 16 || !(a->schemes[a->nschemes] = malloc(sizeof *b)))
		return NULL;
	*a->schemes[a->nschemes] = *b;
	return a->schemes[a->nschemes++];
}

/* A member's latency change (now - what was counted) into its summary:
 * I/O time as the bins' sums (within the scheme's bucket error), read and
 * write bins kept for the interval's p99. */
static int summary_lat(relay_agg *a, struct member *mb, struct mslot *ms, const iogp_hist_val *h)
{
	sv d = { 0 };
	int neg = 0;
	sv now = { h->bins, h->nbins, h->nbins };
	if (sv_diff(&d, &now, &ms->h, &neg) < 0)
		return -1;
	if (d.n && a->qh) {
		uint64_t lo, hi;
		const iogp_bins *b = mb->lat_bins;
		for (uint32_t k = 0; b && k < d.n; k++)
			if (iogp_bins_bounds(b, d.b[k].idx, &lo, &hi) == 0)
				mb->sums[S_TIME] += d.b[k].count * (lo / 2 + hi / 2);
		if (ms->role != R_MLAT && b && sv_apply(&mb->lat, d.b, d.n, NULL, 0) < 0) {
			sv_free(&d);
			return -1;
		}
		mb->sum_active = 1;
	}
	sv_free(&d);
	return 0;
}

/* Add member i's change since the last fold to its group. */
static int fold(relay_agg *a, uint32_t i)
{
	struct member *mb = &a->mem[i];
	if (mb->group == NONE) {
		uint32_t gi = group_get(a, group_name(a, i));
		if (gi == NONE)
			return IOGP_ENOMEM;
		mb->group = gi;
		struct group *g = &a->g[gi];
		g->members++;
		g->need_hello = 1;
		a->st.members++;
		const char *job = iogp_model_source_label(a->model, i, "job");
		if (!g->job_mixed) {
			if (g->members == 1 && job)
				g->job = strdup(job);
			else if (!job || !g->job || strcmp(job, g->job)) {
				g->job_mixed = 1;
				free(g->job);
				g->job = NULL;
			}
		}
	}
	struct group *g = &a->g[mb->group];
	iogp_msg *s = &a->snap;
	if (iogp_model_snapshot(a->model, i, 0, s) < 0)
		return IOGP_EINVAL;
	for (uint32_t k = 0; k < s->nmetrics; k++) {
		const iogp_metric_def *d = &s->metrics[k];
		struct mslot *ms = mslot_find(mb, d->id);
		if (!ms && !(ms = mslot_add(mb, d->id, gm_get(a, g, d))))
			return IOGP_ENOMEM;
		ms->role = !strcmp(d->name, IOGP_M_READ_BYTES) ? R_RBYTES :
		           !strcmp(d->name, IOGP_M_WRITE_BYTES) ? R_WBYTES :
		           !strcmp(d->name, IOGP_M_READ_OPS) ? R_ROPS :
		           !strcmp(d->name, IOGP_M_WRITE_OPS) ? R_WOPS :
		           !strcmp(d->name, IOGP_M_READ_LATENCY) ? R_RLAT :
		           !strcmp(d->name, IOGP_M_WRITE_LATENCY) ? R_WLAT :
		           !strcmp(d->name, IOGP_M_META_LATENCY) ? R_MLAT : R_NONE;
		if (ms->role >= R_RLAT && d->kind != IOGP_HISTOGRAM)
			ms->role = R_NONE;
		if (a->summaries && ms->role >= R_RLAT && !mb->lat_bins)
			mb->lat_bins = scheme_get(a, &d->bins);
		if (ms->role >= R_RLAT && (!mb->lat_bins || !iogp_bins_equal(mb->lat_bins, &d->bins)))
			ms->role = R_NONE;   /* another scheme: not summed with the first */
	}
	for (uint32_t k = 0; k < mb->ns; k++)
		mb->s[k].seen = 0;
	for (uint32_t k = 0; k < s->ncounters; k++) {
		struct mslot *ms = mslot_find(mb, s->counters[k].id);
		if (!ms || ms->gm == NONE)
			continue;
		g->m[ms->gm].cur_c += s->counters[k].value - ms->c;
		if (a->summaries && ms->role >= R_RBYTES && ms->role <= R_WOPS &&
		    s->counters[k].value > ms->c) {
			uint64_t d = s->counters[k].value - ms->c;
			mb->sums[ms->role == R_RBYTES ? S_RBYTES : ms->role == R_WBYTES ? S_WBYTES : S_OPS] += d;
			mb->sum_active = 1;
		}
		ms->c = s->counters[k].value;
		ms->seen |= 1;
	}
	for (uint32_t k = 0; k < s->ngauges; k++) {
		struct mslot *ms = mslot_find(mb, s->gauges[k].id);
		if (!ms || ms->gm == NONE)
			continue;
		g->m[ms->gm].cur_g += s->gauges[k].value - ms->g;
		ms->g = s->gauges[k].value;
		ms->seen |= 2;
	}
	for (uint32_t k = 0; k < s->nhists; k++) {
		const iogp_hist_val *h = &s->hists[k];
		struct mslot *ms = mslot_find(mb, h->id);
		if (!ms || ms->gm == NONE)
			continue;
		if (sv_apply(&g->m[ms->gm].cur_h, h->bins, h->nbins, ms->h.b, ms->h.n) < 0)
			return IOGP_ENOMEM;
		if (a->summaries && ms->role >= R_RLAT && summary_lat(a, mb, ms, h) < 0)
			return IOGP_ENOMEM;
		if (sv_set(&ms->h, h->bins, h->nbins) < 0)
			return IOGP_ENOMEM;
		ms->seen |= 4;
	}
	for (uint32_t k = 0; k < s->nexact; k++) {
		const iogp_exact_val *x = &s->exact[k];
		struct mslot *ms = mslot_find(mb, x->id);
		if (!ms || ms->gm == NONE)
			continue;
		/* iogp_exact and iogp_bin have the same shape: (key, count) */
		if (sv_apply(&g->m[ms->gm].cur_x, (const iogp_bin *)x->v, x->n, ms->x.b, ms->x.n) < 0 ||
		    sv_set(&ms->x, (const iogp_bin *)x->v, x->n) < 0)
			return IOGP_ENOMEM;
		ms->seen |= 8;
	}
	/* what the state no longer lists is now zero */
	for (uint32_t k = 0; k < mb->ns; k++) {
		struct mslot *ms = &mb->s[k];
		if (ms->gm == NONE)
			continue;
		struct gm *m = &g->m[ms->gm];
		if (!(ms->seen & 1) && ms->c) {
			m->cur_c -= ms->c;
			ms->c = 0;
		}
		if (!(ms->seen & 2) && ms->g) {
			m->cur_g -= ms->g;
			ms->g = 0;
		}
		if (!(ms->seen & 4) && ms->h.n) {
			if (sv_apply(&m->cur_h, NULL, 0, ms->h.b, ms->h.n) < 0)
				return IOGP_ENOMEM;
			ms->h.n = 0;
		}
		if (!(ms->seen & 8) && ms->x.n) {
			if (sv_apply(&m->cur_x, NULL, 0, ms->x.b, ms->x.n) < 0)
				return IOGP_ENOMEM;
			ms->x.n = 0;
		}
	}
	return 0;
}

/* The message arrays and the per-metric scratch for n metrics: each grows
 * as grow() grows it from the same capacity, so they keep one. */
static int scratch(relay_agg *a, uint32_t n)
{
	uint32_t c[6];
	for (int i = 0; i < 6; i++)
		c[i] = a->scratch_cap;
	if (grow((void **)&a->cv, &c[0], n, sizeof *a->cv) < 0 ||
	    grow((void **)&a->gv, &c[1], n, sizeof *a->gv) < 0 ||
	    grow((void **)&a->hv, &c[2], n, sizeof *a->hv) < 0 ||
	    grow((void **)&a->xv, &c[3], n, sizeof *a->xv) < 0 ||
	    grow((void **)&a->md, &c[4], n, sizeof *a->md) < 0 ||
	    grow((void **)&a->tmp, &c[5], n, sizeof *a->tmp) < 0)
		return -1;
	memset(&a->tmp[a->scratch_cap], 0, (c[5] - a->scratch_cap) * sizeof *a->tmp);
	a->scratch_cap = c[5];
	return 0;
}

static int send(relay_agg *a, iogp_msg *m, relay_agg_out out, void *ctx)
{
	if (m->t0_ns > m->t1_ns)
		m->t0_ns = m->t1_ns;
	long n = iogp_msg_encode(m, a->buf, IOGP_MAX_PAYLOAD);
	if (n < 0) {
		a->st.encode_errors++;   /* the totals stay unsent: the next one carries them */
		return -1;
	}
	a->st.bytes_out += (uint64_t)n;
	switch (m->kind) {
	case IOGP_HELLO: a->st.hellos++; break;
	case IOGP_DELTA: a->st.deltas++; break;
	case IOGP_SNAPSHOT: a->st.snapshots++; break;
	case IOGP_BYE: a->st.byes++; break;
	}
	out(ctx, m->kind, m->source, a->buf, (size_t)n);
	return 0;
}

static uint32_t labels(relay_agg *a, struct group *g, iogp_label *l, char *nb)
{
	uint32_t n = 0;
	snprintf(nb, 32, "%u", g->members);
	l[n++] = (iogp_label){ "host", g->name };
	if (a->mode == RELAY_AGG_NODE) {
		l[n++] = (iogp_label){ "node", g->name };
		if (g->job)
			l[n++] = (iogp_label){ "job", g->job };
	} else {
		l[n++] = (iogp_label){ "job", g->name };
	}
	l[n++] = (iogp_label){ "aggregate", a->mode == RELAY_AGG_NODE ? "node" : "job" };
	l[n++] = (iogp_label){ "sources", nb };
	return n;
}

static void catalog(relay_agg *a, struct group *g, iogp_msg *m)
{
	for (uint32_t k = 0; k < g->nm; k++) {
		iogp_metric_def *d = &a->md[k];
		memset(d, 0, offsetof(iogp_metric_def, bins));
		d->id = k + 1;
		d->kind = g->m[k].kind;
		d->name = g->m[k].name;
		d->unit = g->m[k].unit;
		if (d->kind == IOGP_HISTOGRAM)
			d->bins = *g->m[k].bins;
		else
			iogp_bins_native(&d->bins, IOGP_NATIVE_K_DEFAULT);
	}
	m->nmetrics = g->nm;
	m->metrics = a->md;
}

static void hello(relay_agg *a, struct group *g, uint64_t wall, relay_agg_out out, void *ctx)
{
	iogp_label l[8];
	char nb[32];
	iogp_msg *m = &a->out;
	memset(m, 0, sizeof *m);
	m->kind = IOGP_HELLO;
	m->source = g->id;
	m->seq = g->seq++;
	m->wall_ns = wall;
	m->nlabels = labels(a, g, l, nb);
	m->labels = l;
	catalog(a, g, m);
	if (send(a, m, out, ctx) < 0)
		return;
	g->need_hello = 0;
	g->hello_nm = g->nm;
}

/* m with the values gathered in a's scratch (n: counters, gauges,
 * histograms, exact lists) sent; the group's totals then count as sent. */
static int send_values(relay_agg *a, struct group *g, iogp_msg *m, const uint32_t n[4],
                       relay_agg_out out, void *ctx)
{
	m->ncounters = n[0];
	m->counters = a->cv;
	m->ngauges = n[1];
	m->gauges = a->gv;
	m->nhists = n[2];
	m->hists = a->hv;
	m->nexact = n[3];
	m->exact = a->xv;
	if (send(a, m, out, ctx) < 0)
		return -1;
	for (uint32_t k = 0; k < g->nm; k++) {
		struct gm *gm = &g->m[k];
		gm->sent_c = gm->cur_c;
		gm->sent_g = gm->cur_g;
		gm->gauge_sent = gm->gauge_sent || gm->cur_g;
		sv_set(&gm->sent_h, gm->cur_h.b, gm->cur_h.n);
		sv_set(&gm->sent_x, gm->cur_x.b, gm->cur_x.n);
	}
	return 0;
}

static void snapshot(relay_agg *a, struct group *g, uint64_t mono, uint64_t wall, uint16_t flags,
                     relay_agg_out out, void *ctx)
{
	iogp_label l[8];
	char nb[32];
	iogp_msg *m = &a->out;
	uint32_t nc = 0, ng = 0, nh = 0, nx = 0;
	memset(m, 0, sizeof *m);
	m->kind = IOGP_SNAPSHOT;
	m->flags = flags;
	m->source = g->id;
	m->seq = g->seq++;
	m->t0_ns = g->start_mono;
	m->t1_ns = mono;
	m->wall_ns = wall;
	m->nlabels = labels(a, g, l, nb);
	m->labels = l;
	catalog(a, g, m);
	for (uint32_t k = 0; k < g->nm; k++) {
		struct gm *gm = &g->m[k];
		if (gm->kind == IOGP_COUNTER && gm->cur_c)
			a->cv[nc++] = (iogp_counter_val){ k + 1, gm->cur_c };
		else if (gm->kind == IOGP_GAUGE && (gm->cur_g || gm->gauge_sent))
			a->gv[ng++] = (iogp_gauge_val){ k + 1, gm->cur_g };
		else if (gm->kind == IOGP_HISTOGRAM && gm->cur_h.n)
			a->hv[nh++] = (iogp_hist_val){ k + 1, gm->cur_h.n, gm->cur_h.b };
		if (gm->kind == IOGP_HISTOGRAM && gm->cur_x.n) {
			sv *t = &a->tmp[k];
			uint32_t n = gm->cur_x.n < IOGP_MAX_EXACT ? gm->cur_x.n : IOGP_MAX_EXACT;
			if (grow((void **)&t->b, &t->cap, n, sizeof *t->b) == 0) {
				/* the most common, back in ascending order */
				t->n = (uint32_t)iogp_exact_top((const iogp_exact *)gm->cur_x.b, gm->cur_x.n,
				                               (iogp_exact *)t->b, n);
				for (uint32_t p = 1; p < t->n; p++)
					for (uint32_t q = p; q > 0 && t->b[q - 1].idx > t->b[q].idx; q--) {
						iogp_bin x = t->b[q];
						t->b[q] = t->b[q - 1];
						t->b[q - 1] = x;
					}
				a->xv[nx++] = (iogp_exact_val){ k + 1, t->n, (iogp_exact *)t->b };
			}
		}
	}
	if (send_values(a, g, m, (uint32_t[4]){ nc, ng, nh, nx }, out, ctx) < 0)
		return;
	g->need_hello = 0;
	g->hello_nm = g->nm;
	g->last_mono = mono;
}

/* The group's DELTA, or a SNAPSHOT when a total went down. */
static void delta(relay_agg *a, struct group *g, uint64_t mono, uint64_t wall,
                  relay_agg_out out, void *ctx)
{
	uint32_t nc = 0, ng = 0, nh = 0, nx = 0;
	int neg = 0;
	for (uint32_t k = 0; k < g->nm && !neg; k++) {
		struct gm *gm = &g->m[k];
		if (gm->kind == IOGP_COUNTER && gm->cur_c != gm->sent_c) {
			if (gm->cur_c < gm->sent_c)
				neg = 1;
			else
				a->cv[nc++] = (iogp_counter_val){ k + 1, gm->cur_c - gm->sent_c };
		} else if (gm->kind == IOGP_GAUGE && (gm->cur_g != gm->sent_g ||
		                                      (!gm->gauge_sent && gm->cur_g))) {
			a->gv[ng++] = (iogp_gauge_val){ k + 1, gm->cur_g };
		} else if (gm->kind == IOGP_HISTOGRAM) {
			sv *t = &a->tmp[k];
			if (sv_diff(t, &gm->cur_h, &gm->sent_h, &neg) < 0) {
				neg = 1;
				break;
			}
			if (t->n)
				a->hv[nh++] = (iogp_hist_val){ k + 1, t->n, t->b };
			/* exact values: the scratch after the bins */
			sv *x = &a->tmp[g->nm + k];
			if (sv_diff(x, &gm->cur_x, &gm->sent_x, &neg) < 0) {
				neg = 1;
				break;
			}
			if (x->n > IOGP_MAX_EXACT)
				x->n = IOGP_MAX_EXACT;   /* beyond: those bins are not explained */
			if (x->n)
				a->xv[nx++] = (iogp_exact_val){ k + 1, x->n, (iogp_exact *)x->b };
		}
	}
	if (neg) {
		snapshot(a, g, mono, wall, 0, out, ctx);
		return;
	}
	if (!nc && !ng && !nh && !nx)
		return;
	iogp_msg *m = &a->out;
	memset(m, 0, sizeof *m);
	m->kind = IOGP_DELTA;
	m->source = g->id;
	m->seq = g->seq++;
	m->t0_ns = g->last_mono;
	m->t1_ns = mono;
	m->wall_ns = wall;
	if (send_values(a, g, m, (uint32_t[4]){ nc, ng, nh, nx }, out, ctx) < 0)
		return;
	g->last_mono = mono;
}

/* Member i's summary: a tiny DELTA under its own id (HELLO first: its
 * labels and "summary" = "1"), when it did something since the last. */
static void summary_send(relay_agg *a, uint32_t i, uint64_t mono, uint64_t wall,
                         relay_agg_out out, void *ctx)
{
	struct member *mb = &a->mem[i];
	iogp_source_info si;
	if (!mb->sum_active || iogp_model_source(a->model, i, &si) < 0)
		return;
	iogp_msg *m = &a->out;
	if (!mb->sum_hello) {
		const iogp_label *ml;
		size_t n = iogp_model_source_labels(a->model, i, &ml);
		iogp_label l[IOGP_MAX_LABELS];
		uint32_t nl = 0;
		for (size_t k = 0; k < n && nl < IOGP_MAX_LABELS - 1; k++)
			if (strcmp(ml[k].key, "summary"))
				l[nl++] = ml[k];
		l[nl++] = (iogp_label){ "summary", "1" };
		iogp_metric_def d[S_N];
		memset(d, 0, sizeof(d));
		for (int k = 0; k < S_N; k++) {
			d[k].id = (uint32_t)k + 1;
			d[k].kind = summary_cat[k].kind;
			d[k].name = summary_cat[k].name;
			d[k].unit = summary_cat[k].unit;
		}
		memset(m, 0, sizeof *m);
		m->kind = IOGP_HELLO;
		m->source = si.id;
		m->seq = a->seq0 + mb->sum_seq;
		m->wall_ns = wall;
		m->nlabels = nl;
		m->labels = l;
		m->nmetrics = S_N;
		m->metrics = d;
		if (send(a, m, out, ctx) < 0)
			return;
		mb->sum_seq++;
		mb->sum_hello = 1;
	}
	iogp_counter_val c[4];
	iogp_gauge_val g;
	uint32_t nc = 0, ng = 0;
	for (int k = S_RBYTES; k <= S_TIME; k++)
		if (mb->sums[k])
			c[nc++] = (iogp_counter_val){ (uint32_t)k, mb->sums[k] };
	if (mb->lat.n && mb->lat_bins && a->qh) {
		uint64_t v;
		iogp_hist_init(a->qh, mb->lat_bins);
		if (iogp_hist_add_bins(a->qh, mb->lat.b, mb->lat.n) == 0 &&
		    iogp_hist_quantile(a->qh, 0.99, &v) == 0) {
			g = (iogp_gauge_val){ S_P99, (int64_t)v };
			ng = 1;
		}
		iogp_hist_free(a->qh);
	}
	memset(m, 0, sizeof *m);
	m->kind = IOGP_DELTA;
	m->source = si.id;
	m->seq = a->seq0 + mb->sum_seq;
	/* before any flush (a relay started among busy members) no interval
	 * start is known: not 0, which would make its span the host's uptime */
	m->t0_ns = a->last_flush ? a->last_flush : mono;
	m->t1_ns = mono;
	m->wall_ns = wall;
	m->ncounters = nc;
	m->counters = c;
	m->ngauges = ng;
	m->gauges = &g;
	if (send(a, m, out, ctx) == 0) {
		a->st.summaries++;
		mb->sum_seq++;
	}
	memset(mb->sums, 0, sizeof mb->sums);
	mb->lat.n = 0;
	mb->sum_active = 0;
}

int relay_agg_flush(relay_agg *a, uint64_t mono, uint64_t wall, relay_agg_out out, void *ctx)
{
	uint64_t before = a->st.deltas + a->st.snapshots + a->st.hellos;
	a->now_mono = mono;
	for (uint32_t d = 0; d < a->ndirty; d++) {
		uint32_t i = a->dirty[d];
		a->mem[i].dirty = 0;
		(void)fold(a, i);   /* on ENOMEM the member is read again next time */
		if (a->summaries)
			summary_send(a, i, mono, wall, out, ctx);
	}
	a->last_flush = mono;
	a->ndirty = 0;
	for (uint32_t gi = 0; gi < a->ng; gi++) {
		struct group *g = &a->g[gi];
		if (scratch(a, 2 * g->nm + 1) < 0)
			continue;
		if (g->need_hello)
			hello(a, g, wall, out, ctx);
		delta(a, g, mono, wall, out, ctx);
	}
	return (int)(a->st.deltas + a->st.snapshots + a->st.hellos - before);
}

int relay_agg_snapshots(relay_agg *a, uint64_t mono, uint64_t wall, uint16_t flags,
                        relay_agg_out out, void *ctx)
{
	int n = relay_agg_flush(a, mono, wall, out, ctx);
	for (uint32_t gi = 0; gi < a->ng; gi++) {
		struct group *g = &a->g[gi];
		if (scratch(a, 2 * g->nm + 1) < 0)
			continue;
		snapshot(a, g, mono, wall, flags, out, ctx);
		n++;
	}
	return n;
}

int relay_agg_subscriber(relay_agg *a, uint64_t mono, uint64_t wall, relay_agg_out out, void *ctx)
{
	int n = relay_agg_snapshots(a, mono, wall, 0, out, ctx);
	/* the summaries' HELLOs again, and the state of the summary sources
	 * passed on from below */
	for (uint32_t i = 0; i < a->nmem; i++) {
		struct member *mb = &a->mem[i];
		mb->sum_hello = 0;
		if (mb->passthrough && iogp_model_snapshot(a->model, i, 0, &a->snap) == 0 &&
		    send(a, &a->snap, out, ctx) == 0)
			n++;
	}
	return n;
}

int relay_agg_bye(relay_agg *a, relay_agg_out out, void *ctx)
{
	for (uint32_t gi = 0; gi < a->ng; gi++) {
		iogp_msg bye = { .kind = IOGP_BYE, .source = a->g[gi].id, .seq = a->g[gi].seq++ };
		send(a, &bye, out, ctx);
	}
	return (int)a->ng;
}

void relay_agg_passthrough(relay_agg *a, relay_agg_out out, void *ctx)
{
	a->pass_out = out;
	a->pass_ctx = ctx;
}

void relay_agg_get_stats(const relay_agg *a, relay_agg_stats *st)
{
	*st = a->st;
	iogp_model_stats ms;
	iogp_model_get_stats(a->model, &ms);
	st->duplicates = ms.duplicates;
	st->gaps = ms.gaps;
}
