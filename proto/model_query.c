/* model_query.c - queries on the stream model: sources, nodes and metrics,
 * counters, gauges and histograms over a selection, access samples and files,
 * and a source's full state as a SNAPSHOT (keyframes). */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hist_priv.h"
#include "iogp_err.h"
#include "iogp_model.h"
#include "model_priv.h"

/* ---- sources, nodes, metrics: queries ----------------------------------------- */

size_t iogp_model_source_count(const iogp_model *m)
{
	return m != NULL ? m->nsrc : 0;
}

int iogp_model_source(const iogp_model *m, size_t i, iogp_source_info *out)
{
	const struct source *s;

	if (m == NULL || out == NULL || i >= m->nsrc)
		return IOGP_EINVAL;
	s = &m->src[i];
	memset(out, 0, sizeof *out);
	out->id = s->id;
	out->host = s->host;
	out->node = m->nodes[s->node].name;
	out->node_index = s->node;
	out->pid = s->pid;
	out->rank = s->rank;
	out->state = model__src_state(m, s, m->now, m->ticked);
	out->in_sync = s->in_sync;
	out->last_seq = s->last_seq;
	out->messages = s->messages;
	out->gaps = s->gaps;
	out->dropped = s->dropped;
	out->first_recv_ns = s->first_recv;
	out->last_recv_ns = s->last_recv;
	out->first_wall_ns = s->first_wall;
	out->last_wall_ns = s->last_wall;
	out->start_mono_ns = s->start_mono;
	out->last_mono_ns = s->last_mono;
	out->bye = s->state == IOGP_SRC_GONE;
	out->interval_ns = s->iv;
	out->restart_of = s->restart_of == NONE ? -1 : (int64_t)s->restart_of;
	out->restarted_by = s->restarted_by == NONE ? -1 : (int64_t)s->restarted_by;
	out->restart_of_id = s->restart_of == NONE ? 0 : m->src[s->restart_of].id;
	out->restarted_by_id = s->restarted_by == NONE ? 0 : m->src[s->restarted_by].id;
	return 0;
}

int iogp_model_source_index(const iogp_model *m, uint64_t id, size_t *i)
{
	uint32_t si;

	if (m == NULL)
		return IOGP_EINVAL;
	si = model__src_find(m, id);
	if (si == NONE)
		return IOGP_ENOTFOUND;
	if (i != NULL)
		*i = si;
	return 0;
}

const char *iogp_model_source_label(const iogp_model *m, size_t i, const char *key)
{
	if (m == NULL || key == NULL || i >= m->nsrc)
		return NULL;
	return model__labels_find(m->src[i].labels, m->src[i].nlabels, key);
}

size_t iogp_model_source_labels(const iogp_model *m, size_t i, const iogp_label **labels)
{
	if (m == NULL || i >= m->nsrc) {
		if (labels != NULL)
			*labels = NULL;
		return 0;
	}
	if (labels != NULL)
		*labels = m->src[i].labels;
	return m->src[i].nlabels;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A source's labels "summary", "aggregate" and "job" in one pass (a
 * viewer asks for every source each frame: thousands of them). */
static void role_labels(const struct source *s, const char **sum, const char **agg, const char **job)
{
	*sum = *agg = *job = NULL;
	for (uint32_t k = 0; k < s->nlabels; k++) {
		const char *key = s->labels[k].key;
		if (key[0] == 's' && strcmp(key, "summary") == 0)
			*sum = s->labels[k].value;
		else if (key[0] == 'a' && strcmp(key, "aggregate") == 0)
			*agg = s->labels[k].value;
		else if (key[0] == 'j' && strcmp(key, "job") == 0)
			*job = s->labels[k].value;
	}
}

int iogp_model_source_roles(const iogp_model *m, uint8_t *roles)
{
	if (m == NULL || roles == NULL)
		return IOGP_EINVAL;
	const char *sum, *agg, *job;
	bool any_agg = false, any_sum = false;
	for (uint32_t i = 0; i < m->nsrc; i++) {
		roles[i] = m->src[i].role;
		any_sum |= roles[i] == IOGP_ROLE_SUMMARY;
		any_agg |= roles[i] == IOGP_ROLE_AGGREGATE;
	}
	if (!any_agg || !any_sum)
		return 0;   /* no aggregate has summaries here */
	/* which nodes and jobs have summaries: their aggregates are summarised */
	bool *node_sum = calloc(m->nnodes ? m->nnodes : 1, sizeof *node_sum);
	const char **jobs = malloc(m->nsrc * sizeof *jobs);
	size_t nj = 0;
	if (node_sum == NULL || jobs == NULL) {
		free(node_sum);
		free(jobs);
		return IOGP_ENOMEM;
	}
	for (uint32_t i = 0; i < m->nsrc; i++) {
		if (roles[i] != IOGP_ROLE_SUMMARY)
			continue;
		role_labels(&m->src[i], &sum, &agg, &job);
		node_sum[m->src[i].node] = true;
		if (job != NULL)
			jobs[nj++] = job;
	}
	qsort(jobs, nj, sizeof *jobs, cmp_str);
	for (uint32_t i = 0; i < m->nsrc; i++) {
		if (roles[i] != IOGP_ROLE_AGGREGATE)
			continue;
		role_labels(&m->src[i], &sum, &agg, &job);
		bool covered = strcmp(agg, "job") != 0 ? node_sum[m->src[i].node]
		               : job != NULL && bsearch(&job, jobs, nj, sizeof *jobs, cmp_str) != NULL;
		if (covered)
			roles[i] = IOGP_ROLE_SUMMARISED;
	}
	free(node_sum);
	free(jobs);
	return 0;
}

int iogp_model_source_spans(const iogp_model *m, iogp_source_span *out, int *relayed)
{
	bool agg = false, sum = false;

	if (m == NULL || (out == NULL && m->nsrc > 0))
		return IOGP_EINVAL;
	for (uint32_t i = 0; i < m->nsrc; i++) {
		const struct source *s = &m->src[i];

		if (i + 4 < m->nsrc)
			__builtin_prefetch(&m->src[i + 4].last_wall);
		out[i] = (iogp_source_span){ s->last_wall, s->start_mono, s->last_mono, s->node, s->role };
		agg |= s->role == IOGP_ROLE_AGGREGATE;
		sum |= s->role == IOGP_ROLE_SUMMARY;
	}
	if (relayed != NULL)
		*relayed = agg && sum;
	return 0;
}

size_t iogp_model_node_count(const iogp_model *m)
{
	return m != NULL ? m->nnodes : 0;
}

const char *iogp_model_node(const iogp_model *m, size_t i)
{
	if (m == NULL || i >= m->nnodes)
		return NULL;
	return m->nodes[i].name;
}

size_t iogp_model_metric_count(const iogp_model *m)
{
	return m != NULL ? m->ngm : 0;
}

int iogp_model_metric(const iogp_model *m, size_t i, iogp_metric_info *out)
{
	const struct gmetric *g;

	if (m == NULL || out == NULL || i >= m->ngm)
		return IOGP_EINVAL;
	g = &m->gm[i];
	memset(out, 0, sizeof *out);
	out->name = g->name;
	out->unit = g->unit;
	out->kind = g->kind;
	if (g->scheme != NONE)
		out->bins = m->schemes[g->scheme]->b;
	return 0;
}

int iogp_model_metric_find(const iogp_model *m, const char *name, size_t *i)
{
	uint32_t gi;

	if (m == NULL || name == NULL)
		return IOGP_EINVAL;
	gi = model__gm_find(m, name);
	if (gi == NONE)
		return IOGP_ENOTFOUND;
	if (i != NULL)
		*i = gi;
	return 0;
}

/* ---- selections ----------------------------------------------------------- */

/* Call fn for every linked slot of metric gi within the selection. */
int model__sel_visit(const iogp_model *m, uint32_t gi, const iogp_sel *sel, visit_fn fn, void *ctx)
{
	iogp_sel all = { .kind = IOGP_SEL_ALL };

	if (sel == NULL)
		sel = &all;
	switch (sel->kind) {
	case IOGP_SEL_ALL: {
		const struct gmetric *g = &m->gm[gi];

		for (uint32_t i = 0; i < g->n; i++)
			fn(ctx, m, &m->src[g->h[i].src].slots[g->h[i].slot]);
		return 0;
	}
	case IOGP_SEL_NODE: {
		uint32_t ni = model__node_find(m, sel->node != NULL ? sel->node : "");
		const struct node *n;

		if (ni == NONE)
			return IOGP_ENOTFOUND;
		n = &m->nodes[ni];
		for (uint32_t i = 0; i < n->n; i++) {
			const struct source *s = &m->src[n->src[i]];
			uint32_t sl = model__slot_by_gm(s, gi);

			if (sl != NONE)
				fn(ctx, m, &s->slots[sl]);
		}
		return 0;
	}
	case IOGP_SEL_SOURCE: {
		uint32_t si = model__src_find(m, sel->source);
		uint32_t sl;

		if (si == NONE)
			return IOGP_ENOTFOUND;
		sl = model__slot_by_gm(&m->src[si], gi);
		if (sl != NONE)
			fn(ctx, m, &m->src[si].slots[sl]);
		return 0;
	}
	}
	return IOGP_EINVAL;
}

int model__metric_lookup(const iogp_model *m, const char *metric, iogp_metric_kind kind,
                         uint32_t *gi)
{
	if (m == NULL || metric == NULL)
		return IOGP_EINVAL;
	*gi = model__gm_find(m, metric);
	if (*gi == NONE)
		return IOGP_ENOTFOUND;
	return m->gm[*gi].kind == kind ? 0 : IOGP_EINVAL;
}

static void visit_counter(void *ctx, const iogp_model *m, const struct slot *sl)
{
	(void)m;
	*(uint64_t *)ctx += sl->counter;
}

static void visit_gauge(void *ctx, const iogp_model *m, const struct slot *sl)
{
	(void)m;
	*(int64_t *)ctx = (int64_t)((uint64_t)*(int64_t *)ctx + (uint64_t)sl->gauge);
}

int iogp_model_counter(const iogp_model *m, const char *metric, const iogp_sel *sel, uint64_t *out)
{
	uint64_t sum = 0;
	uint32_t gi;
	int r;

	if (out == NULL)
		return IOGP_EINVAL;
	*out = 0;
	if ((r = model__metric_lookup(m, metric, IOGP_COUNTER, &gi)) < 0)
		return r;
	if ((r = model__agg_value(m, gi, sel, &sum)) != 0) {   /* model_agg.c */
		*out = r > 0 ? sum : 0;
		return r < 0 ? r : 0;
	}
	if ((r = model__sel_visit(m, gi, sel, visit_counter, &sum)) < 0)
		return r;
	*out = sum;
	return 0;
}

int iogp_model_gauge(const iogp_model *m, const char *metric, const iogp_sel *sel, int64_t *out)
{
	int64_t sum = 0;
	uint32_t gi;
	int r;

	if (out == NULL)
		return IOGP_EINVAL;
	*out = 0;
	if ((r = model__metric_lookup(m, metric, IOGP_GAUGE, &gi)) < 0)
		return r;
	uint64_t v;

	if ((r = model__agg_value(m, gi, sel, &v)) != 0) {     /* model_agg.c */
		*out = r > 0 ? (int64_t)v : 0;
		return r < 0 ? r : 0;
	}
	if ((r = model__sel_visit(m, gi, sel, visit_gauge, &sum)) < 0)
		return r;
	*out = sum;
	return 0;
}

struct hist_ctx {
	uint32_t scheme;     /* of the first slot found, NONE before */
	uint32_t nslots;     /* slots with that scheme and some data */
	bool mismatch;
	uint64_t *dense;
	iogp_hist *out;
	int err;
};

static void visit_hist_scan(void *ctx, const iogp_model *m, const struct slot *sl)
{
	struct hist_ctx *c = ctx;

	(void)m;
	if (c->scheme == NONE)
		c->scheme = sl->scheme;
	if (sl->scheme != c->scheme)
		c->mismatch = true;
	else if (sl->n > 0)
		c->nslots++;
}

static void visit_hist_add(void *ctx, const iogp_model *m, const struct slot *sl)
{
	struct hist_ctx *c = ctx;
	int r;

	(void)m;
	if (sl->scheme != c->scheme || sl->n == 0)
		return;
	if (sl->nex > 0 && (r = iogp_hist_add_exact(c->out, sl->ex, sl->nex)) < 0)
		c->err = r;
	if (c->dense != NULL) {
		for (size_t i = 0; i < sl->n; i++) {
			uint64_t *d = &c->dense[sl->bins[i].idx];

			*d = *d + sl->bins[i].count < *d ? UINT64_MAX : *d + sl->bins[i].count;
		}
		return;
	}
	if ((r = iogp_hist_add_bins(c->out, sl->bins, sl->n)) < 0)
		c->err = r;
}

/* Source i's slot of global metric gi (NULL: none), the sources ahead of
 * it fetched a step at a time (its map bucket, its slot, the slot's bins),
 * so a pass over every source does not wait on each in turn. */
static const struct slot *each_slot(const iogp_model *m, uint32_t gi, uint32_t i)
{
	const void *p;
	uint32_t sl;

	if (i + 8 < m->nsrc && (p = model__slot_hint(&m->src[i + 8], gi, 0)) != NULL)
		__builtin_prefetch(p);
	if (i + 4 < m->nsrc && (p = model__slot_hint(&m->src[i + 4], gi, 1)) != NULL)
		__builtin_prefetch(p);
	if (i + 2 < m->nsrc && (sl = model__slot_by_gm(&m->src[i + 2], gi)) != NONE) {
		const struct slot *s = &m->src[i + 2].slots[sl];

		/* a cumulative histogram's bins run to a few lines */
		for (size_t o = 0; s->bins != NULL && o < (size_t)s->n * sizeof *s->bins && o < 512; o += 64)
			__builtin_prefetch((const char *)s->bins + o);
		if (s->ex != NULL)
			__builtin_prefetch(s->ex);
	}
	sl = model__slot_by_gm(&m->src[i], gi);
	return sl != NONE ? &m->src[i].slots[sl] : NULL;
}

/* The checks both passes make: arguments, the range, the metric. */
static int each_begin(const iogp_model *m, const char *metric, iogp_metric_kind kind, size_t first,
                      size_t count, const void *out, uint32_t *gi)
{
	if (m == NULL || out == NULL || first > m->nsrc || count > m->nsrc - first)
		return IOGP_EINVAL;
	return model__metric_lookup(m, metric, kind, gi);
}

int iogp_model_counter_each(const iogp_model *m, const char *metric, size_t first, size_t count,
                            uint64_t *out)
{
	uint32_t gi;
	int r;

	if ((r = each_begin(m, metric, IOGP_COUNTER, first, count, out, &gi)) < 0)
		return r;
	for (size_t k = 0; k < count; k++) {
		const struct slot *s = each_slot(m, gi, (uint32_t)(first + k));

		out[k] = 0;
		if (s != NULL)
			visit_counter(&out[k], m, s);
	}
	return 0;
}

/* What iogp_model_hist copies for one source (visit_hist_add), read in
 * place: a slot's bins and exact values, in its scheme (copied when it
 * changes: a scheme is 8 KB with its edges) with that scheme's native
 * midpoints (hist__sum_mids: a third of a pass over 50,000 sources was
 * working out each bin's bounds). */
struct sum_view {
	iogp_hist h;
	uint32_t scheme;
	double *mid;
	size_t nmid;
};

static double view_sum(struct sum_view *v, const iogp_model *m, const struct slot *s)
{
	if (s->scheme != v->scheme) {
		const iogp_bins *b = &m->schemes[s->scheme]->b;
		double *p;

		v->scheme = s->scheme;
		v->h.scheme = *b;
		v->nmid = 0;
		if (b->kind == IOGP_BINS_NATIVE && b->k >= IOGP_NATIVE_K_MIN && b->k <= IOGP_NATIVE_K_MAX &&
		    (p = realloc(v->mid, iogp_native_nbuckets(b->k) * sizeof *p)) != NULL) {
			v->mid = p;
			v->nmid = iogp_native_nbuckets(b->k);
			hist__native_mids(b->k, p);
		}
	}
	v->h.n = s->n;
	v->h.bins = s->bins;
	v->h.nexact = s->nex;
	v->h.exact = s->ex;
	return hist__sum_mids(&v->h, v->nmid ? v->mid : NULL, v->nmid);
}

int iogp_model_hist_sum_each(const iogp_model *m, const char *metric, size_t first, size_t count,
                             double *out)
{
	uint32_t gi;
	int r;

	if ((r = each_begin(m, metric, IOGP_HISTOGRAM, first, count, out, &gi)) < 0)
		return r;
	struct sum_view v = { .scheme = NONE };

	for (size_t k = 0; k < count; k++) {
		const struct slot *s = each_slot(m, gi, (uint32_t)(first + k));

		out[k] = s == NULL || s->n == 0 ? 0 : view_sum(&v, m, s);
	}
	free(v.mid);
	return 0;
}

/* Source i's slot of global metric gi (NULL: none), source i + 2's
 * bins of it fetched: the second and later metrics of a pass whose first
 * (each_slot) fetched the sources ahead. */
static const struct slot *each_slot_near(const iogp_model *m, uint32_t gi, uint32_t i)
{
	uint32_t sl;

	if (i + 2 < m->nsrc && (sl = model__slot_by_gm(&m->src[i + 2], gi)) != NONE) {
		const struct slot *s = &m->src[i + 2].slots[sl];

		for (size_t o = 0; s->bins != NULL && o < (size_t)s->n * sizeof *s->bins && o < 512; o += 64)
			__builtin_prefetch((const char *)s->bins + o);
	}
	sl = model__slot_by_gm(&m->src[i], gi);
	return sl != NONE ? &m->src[i].slots[sl] : NULL;
}

int iogp_model_hist_sums_each(const iogp_model *m, const char *const *metrics, size_t nmetrics,
                              size_t first, size_t count, double *out)
{
	uint32_t gi[8];
	size_t ng = 0;
	int r = IOGP_ENOTFOUND;

	if (m == NULL || out == NULL || metrics == NULL || nmetrics > 8 || first > m->nsrc ||
	    count > m->nsrc - first)
		return IOGP_EINVAL;
	for (size_t k = 0; k < nmetrics; k++) {
		int rk = metrics[k] != NULL ? model__metric_lookup(m, metrics[k], IOGP_HISTOGRAM, &gi[ng])
		                            : IOGP_ENOTFOUND;
		if (rk == 0)
			ng++;
		else if (rk == IOGP_EINVAL)
			r = IOGP_EINVAL;   /* of another kind: said when none is a histogram */
	}
	if (ng == 0)
		return r;
	/* as iogp_model_hist_sum_each, a view per metric: its scheme copied
	 * when that metric's changes, not each time the metrics' differ */
	struct sum_view *v = calloc(ng, sizeof *v);

	if (v == NULL)
		return IOGP_ENOMEM;
	for (size_t g = 0; g < ng; g++)
		v[g].scheme = NONE;
	for (size_t k = 0; k < count; k++) {
		uint32_t i = (uint32_t)(first + k);
		double sum = 0;

		for (size_t g = 0; g < ng; g++) {
			const struct slot *s = g == 0 ? each_slot(m, gi[0], i) : each_slot_near(m, gi[g], i);

			sum += s == NULL || s->n == 0 ? 0 : view_sum(&v[g], m, s);
		}
		out[k] = sum;
	}
	for (size_t g = 0; g < ng; g++)
		free(v[g].mid);
	free(v);
	return 0;
}

/* out += the non-zero entries of dense[0, nb): merging many sources is
 * cheaper through one flat array than through repeated sparse merges. */
int model__dense_add(iogp_hist *out, const uint64_t *dense, uint64_t nb)
{
	return model__dense_add_at(out, dense, 0, nb);
}

int model__dense_add_at(iogp_hist *out, const uint64_t *dense, uint64_t first, uint64_t nb)
{
	size_t n = 0;
	iogp_bin few[256];   /* a node's window over a query's slots: no allocation */

	for (uint64_t i = 0; i < nb; i++)
		n += dense[i] != 0;
	if (n == 0)
		return 0;
	iogp_bin *b = n <= sizeof few / sizeof *few ? few : malloc(n * sizeof *b);
	if (b == NULL)
		return IOGP_ENOMEM;
	n = 0;
	for (uint64_t i = 0; i < nb; i++)
		if (dense[i] != 0)
			b[n++] = (iogp_bin){ first + i, dense[i] };
	int rc = iogp_hist_add_bins(out, b, n);
	if (b != few)
		free(b);
	return rc;
}

/* out is always initialised, also on error, so it can always be freed. */
int iogp_model_hist(const iogp_model *m, const char *metric, const iogp_sel *sel, iogp_hist *out)
{
	struct hist_ctx c = { .scheme = NONE, .out = out };
	iogp_bins nat;
	uint32_t gi;
	int r;

	if (out == NULL)
		return IOGP_EINVAL;
	if ((r = model__metric_lookup(m, metric, IOGP_HISTOGRAM, &gi)) == 0 &&
	    (r = model__agg_hist(m, gi, sel, out)) != 0)           /* model_agg.c */
		return r < 0 ? r : 0;
	if (r < 0 || (r = model__sel_visit(m, gi, sel, visit_hist_scan, &c)) < 0) {
		iogp_bins_native(&nat, IOGP_NATIVE_K_DEFAULT);
		iogp_hist_init(out, &nat);
		return r;
	}
	if (c.scheme == NONE)
		c.scheme = m->gm[gi].scheme;
	iogp_hist_init(out, &m->schemes[c.scheme]->b);
	if (c.nslots > 4 && m->schemes[c.scheme]->nbins <= MODEL_DENSE_MAX) {
		uint64_t nb = m->schemes[c.scheme]->nbins;

		c.dense = calloc(nb, sizeof *c.dense);
		if (c.dense != NULL) {
			model__sel_visit(m, gi, sel, visit_hist_add, &c);
			c.err = model__dense_add(out, c.dense, nb);
			free(c.dense);
			if (c.err < 0)
				return c.err;
			return c.mismatch ? IOGP_ESCHEME : 0;
		}
	}
	model__sel_visit(m, gi, sel, visit_hist_add, &c);
	if (c.err < 0)
		return c.err;
	return c.mismatch ? IOGP_ESCHEME : 0;
}

/* ---- access samples and files ---------------------------------------------- */

size_t iogp_model_access(const iogp_model *m, size_t i, const iogp_access **a, size_t *n2,
                         const iogp_access **a2)
{
	const struct source *s;
	size_t n1 = 0, nb = 0;
	const iogp_access *p1 = NULL, *p2 = NULL;

	if (m != NULL && i < m->nsrc && m->src[i].ring_n > 0) {
		s = &m->src[i];
		if (s->ring_n < s->ring_cap) {
			p1 = s->ring;
			n1 = s->ring_n;
		} else {
			p1 = s->ring + s->ring_head;
			n1 = s->ring_cap - s->ring_head;
			if (s->ring_head > 0) {
				p2 = s->ring;
				nb = s->ring_head;
			}
		}
	}
	if (a != NULL)
		*a = p1;
	if (n2 != NULL)
		*n2 = nb;
	if (a2 != NULL)
		*a2 = p2;
	return n1;
}

const char *iogp_model_file_path(const iogp_model *m, size_t i, uint64_t file_id)
{
	uint32_t fi;

	if (m == NULL || i >= m->nsrc)
		return NULL;
	fi = model__file_find(&m->src[i], file_id);
	return fi == NONE ? NULL : m->src[i].files[fi].path;
}

/* ---- snapshots ---------------------------------------------------------------- */

static size_t align16(size_t n)
{
	return (n + 15) & ~(size_t)15;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_file(const void *a, const void *b)
{
	const iogp_file *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int cmp_filerec(const void *a, const void *b)
{
	const iogp_filerec *x = a, *y = b;

	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	return (x->layer > y->layer) - (x->layer < y->layer);
}

/* The arrays go in msg->arena, one block grown with realloc (the layout the
 * decoder uses too; iogp_msg_free releases it). Labels and strings point
 * into the model. Lists are sorted by id, as the encoder requires. The
 * access ring is left out: keyframes stay small, and samples are a recent
 * view that later DELTAs refill. */
int iogp_model_snapshot(const iogp_model *m, size_t i, uint16_t flags, iogp_msg *msg)
{
	const struct source *s;
	size_t off_m, off_c, off_g, off_h, off_x, off_f, off_r, need;
	uint32_t nc = 0, ng = 0, nh = 0, nx = 0;
	uint64_t *order = NULL;
	void *arena;
	size_t cap;
	char *base;

	if (m == NULL || msg == NULL || i >= m->nsrc)
		return IOGP_EINVAL;
	s = &m->src[i];
	for (uint32_t j = 0; j < s->nslots; j++) {
		nc += s->slots[j].kind == IOGP_COUNTER;
		ng += s->slots[j].kind == IOGP_GAUGE;
		nh += s->slots[j].kind == IOGP_HISTOGRAM && s->slots[j].n > 0;
		nx += s->slots[j].kind == IOGP_HISTOGRAM && s->slots[j].nex > 0;
	}
	off_m = 0;
	off_c = align16(off_m + (size_t)s->nslots * sizeof(iogp_metric_def));
	off_g = align16(off_c + (size_t)nc * sizeof(iogp_counter_val));
	off_h = align16(off_g + (size_t)ng * sizeof(iogp_gauge_val));
	off_x = align16(off_h + (size_t)nh * sizeof(iogp_hist_val));
	off_f = align16(off_x + (size_t)nx * sizeof(iogp_exact_val));
	off_r = align16(off_f + (size_t)s->nfiles * sizeof(iogp_file));
	need = align16(off_r + (size_t)s->nfr * sizeof(iogp_filerec));
	if (need == 0)
		need = 16;

	if (s->nslots > 0) {
		order = malloc(s->nslots * sizeof *order);
		if (order == NULL)
			return IOGP_ENOMEM;
		for (uint32_t j = 0; j < s->nslots; j++)
			order[j] = (uint64_t)s->slots[j].id << 32 | j;
		qsort(order, s->nslots, sizeof *order, cmp_u64);
	}
	arena = msg->arena;
	cap = msg->arena_cap;
	if (cap < need) {
		void *p = realloc(arena, need);

		if (p == NULL) {
			free(order);
			return IOGP_ENOMEM;
		}
		arena = p;
		cap = need;
	}
	memset(msg, 0, sizeof *msg);
	msg->arena = arena;
	msg->arena_cap = cap;
	msg->arena_len = need;
	base = arena;

	msg->version = IOGP_WIRE_VERSION;
	msg->kind = IOGP_SNAPSHOT;
	msg->flags = flags | (s->state == IOGP_SRC_GONE ? IOGP_F_FINAL : 0);
	msg->source = s->id;
	msg->seq = s->last_seq;
	msg->nlabels = s->nlabels;
	msg->labels = s->labels;
	msg->t0_ns = s->start_mono;
	msg->t1_ns = s->last_mono > s->start_mono ? s->last_mono : s->start_mono;
	msg->wall_ns = s->last_wall;
	msg->dropped = s->dropped;
	msg->access_seen = s->access_seen;

	msg->metrics = (iogp_metric_def *)(base + off_m);
	msg->counters = (iogp_counter_val *)(base + off_c);
	msg->gauges = (iogp_gauge_val *)(base + off_g);
	msg->hists = (iogp_hist_val *)(base + off_h);
	msg->exact = (iogp_exact_val *)(base + off_x);
	msg->filerecs = (iogp_filerec *)(base + off_r);
	msg->nfilerecs = (uint32_t)model__files_snapshot(s, msg->filerecs);
	if (msg->nfilerecs > 1)
		qsort(msg->filerecs, msg->nfilerecs, sizeof *msg->filerecs, cmp_filerec);
	msg->npeers = (uint32_t)model__peers_snapshot(s, &msg->peers);
	msg->files = (iogp_file *)(base + off_f);
	for (uint32_t j = 0; j < s->nslots; j++) {
		const struct slot *sl = &s->slots[(uint32_t)order[j]];
		iogp_metric_def *d = &msg->metrics[msg->nmetrics++];

		memset(d, 0, offsetof(iogp_metric_def, bins));
		d->id = sl->id;
		d->kind = sl->kind;
		d->name = m->gm[sl->gm].name;
		d->unit = model__slot_unit(m, s, (uint32_t)order[j]);
		if (sl->kind == IOGP_HISTOGRAM)
			d->bins = m->schemes[sl->scheme]->b;
		else
			memset(&d->bins, 0, offsetof(iogp_bins, edges));
		switch (sl->kind) {
		case IOGP_COUNTER:
			msg->counters[msg->ncounters++] = (iogp_counter_val){ sl->id, sl->counter };
			break;
		case IOGP_GAUGE:
			msg->gauges[msg->ngauges++] = (iogp_gauge_val){ sl->id, sl->gauge };
			break;
		case IOGP_HISTOGRAM:
			if (sl->n > 0)
				msg->hists[msg->nhists++] =
				    (iogp_hist_val){ sl->id, (uint32_t)sl->n, sl->bins };
			if (sl->nex > 0)
				msg->exact[msg->nexact++] = (iogp_exact_val){ sl->id, sl->nex, sl->ex };
			break;
		default:
			break;
		}
	}
	free(order);
	for (uint32_t j = 0; j < s->nfiles; j++)
		msg->files[j] = (iogp_file){ s->files[j].id, s->files[j].path };
	msg->nfiles = s->nfiles;
	if (s->nfiles > 1)
		qsort(msg->files, s->nfiles, sizeof *msg->files, cmp_file);
	if (msg->nmetrics == 0)
		msg->metrics = NULL;
	if (msg->ncounters == 0)
		msg->counters = NULL;
	if (msg->ngauges == 0)
		msg->gauges = NULL;
	if (msg->nhists == 0)
		msg->hists = NULL;
	if (msg->nexact == 0)
		msg->exact = NULL;
	if (msg->nfilerecs == 0)
		msg->filerecs = NULL;
	if (msg->nfiles == 0)
		msg->files = NULL;
	return 0;
}
