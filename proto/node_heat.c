/* node_heat.c - each node's latency p99 per window slot, for the node x
 * time heatmaps: kept between frames, so a frame adds its newest slots
 * (the last whole one and the current one again: late deltas) and a new
 * node's history once (iogp_node_table.h). */
#include <stdlib.h>
#include <string.h>

#include "iogp_err.h"
#include "iogp_layers.h"
#include "iogp_node_table.h"

struct iogp_heat {
	const iogp_model *m;
	uint64_t serial;        /* m's: a later model may take its address */
	int layer;
	uint64_t S, last_now, first, last;
	size_t nslots;          /* cells per node: a ring by slot */
	size_t nnodes, cap;
	char **names;
	uint64_t *done;         /* per node: slots before it are final */
	uint64_t *p99;          /* [node * nslots + slot % nslots] */
	uint64_t *slot;         /* the slot + 1 a cell holds, 0: none (no request) */
};

iogp_heat *iogp_heat_new(void)
{
	return calloc(1, sizeof(iogp_heat));
}

static void reset(iogp_heat *h)
{
	for (size_t i = 0; i < h->nnodes; i++)
		free(h->names[i]);
	free(h->names);
	free(h->done);
	free(h->p99);
	free(h->slot);
	memset(h, 0, sizeof(*h));
}

void iogp_heat_free(iogp_heat *h)
{
	if (!h)
		return;
	reset(h);
	free(h);
}

static int grow(iogp_heat *h, size_t n)
{
	if (n <= h->cap)
		return 0;
	size_t cap = h->cap ? h->cap : 8;
	while (cap < n)
		cap *= 2;
	char **names = realloc(h->names, cap * sizeof(*names));
	if (names)
		h->names = names;
	uint64_t *done = realloc(h->done, cap * sizeof(*done));
	if (done)
		h->done = done;
	uint64_t *p = realloc(h->p99, cap * h->nslots * sizeof(*p));
	if (p)
		h->p99 = p;
	uint64_t *s = realloc(h->slot, cap * h->nslots * sizeof(*s));
	if (s)
		h->slot = s;
	if (!names || !done || !p || !s)
		return IOGP_ENOMEM;
	memset(h->slot + h->cap * h->nslots, 0, (cap - h->cap) * h->nslots * sizeof(*s));
	h->cap = cap;
	return 0;
}

/* Slots [from, to] of node i. */
static int fill(iogp_heat *h, size_t i, const char *rd, const char *wr, uint64_t from, uint64_t to)
{
	size_t n = (size_t)(to - from + 1);
	iogp_hist *a = calloc(n, sizeof(*a)), *b = calloc(n, sizeof(*b));
	if (!a || !b) {
		free(a);
		free(b);
		return IOGP_ENOMEM;
	}
	iogp_sel sel = { .kind = IOGP_SEL_NODE, .node = h->names[i] };
	int ra = rd ? iogp_model_hist_slots(h->m, rd, &sel, from, n, a) : IOGP_ENOTFOUND;
	int rb = wr ? iogp_model_hist_slots(h->m, wr, &sel, from, n, b) : IOGP_ENOTFOUND;
	if (!rd || !wr) {   /* hist_slots initialised only what it was given */
		iogp_bins nb;
		iogp_bins_native(&nb, IOGP_NATIVE_K_DEFAULT);
		for (size_t k = 0; k < n; k++)
			iogp_hist_init(rd ? &b[k] : &a[k], &nb);
	}
	int rc = ra == IOGP_ENOMEM || rb == IOGP_ENOMEM ? IOGP_ENOMEM : 0;
	(void)ra;
	for (size_t k = 0; k < n; k++) {
		uint64_t j = from + k, v;
		size_t cell = i * h->nslots + (size_t)(j % h->nslots);
		const iogp_hist *q = &a[k];
		if (!rc && iogp_hist_merge(&a[k], &b[k]) < 0 && !a[k].total)
			q = &b[k];   /* another scheme: the one that has requests */
		if (!rc && iogp_hist_quantile(q, 0.99, &v) == 0) {
			h->p99[cell] = v;
			h->slot[cell] = j + 1;
		} else {
			h->slot[cell] = 0;
		}
		iogp_hist_free(&a[k]);
		iogp_hist_free(&b[k]);
	}
	free(a);
	free(b);
	return rc;
}

int iogp_heat_update(iogp_heat *h, const iogp_model *m, int layer)
{
	const iogp_model_opts *o = iogp_model_get_opts(m);
	if (!h || !m || !o || !o->live || !o->window_slot_ns)
		return IOGP_EINVAL;
	uint64_t now = iogp_model_clock(m), S = o->window_slot_ns;
	if (h->serial != iogp_model_serial(m) || h->layer != layer || now < h->last_now || h->S != S) {
		reset(h);
		h->m = m;
		h->serial = iogp_model_serial(m);
		h->layer = layer;
		h->S = S;
		h->nslots = (size_t)(o->window_max_ns / S) + 2;
	}
	h->last_now = now;
	uint64_t jhi = now / S;
	uint64_t kmax = o->window_max_ns >= now % S ? (o->window_max_ns - now % S) / S : 0;
	uint64_t lo = kmax > jhi ? 0 : jhi - kmax;
	size_t nn = iogp_model_node_count(m);
	if (grow(h, nn) < 0)
		return IOGP_ENOMEM;
	for (; h->nnodes < nn; h->nnodes++) {
		const char *name = iogp_model_node(m, h->nnodes);
		if (!(h->names[h->nnodes] = strdup(name ? name : "")))
			return IOGP_ENOMEM;
		h->done[h->nnodes] = 0;
	}
	const char *rd = iogp_layer_slot_metric(layer, IOGP_SLOT_READ_LATENCY);
	const char *wr = iogp_layer_slot_metric(layer, IOGP_SLOT_WRITE_LATENCY);
	for (size_t i = 0; i < h->nnodes && (rd || wr); i++) {
		uint64_t from = h->done[i] > lo ? h->done[i] : lo;
		int rc = fill(h, i, rd, wr, from, jhi);
		if (rc < 0)
			return rc;
		h->done[i] = jhi > 0 ? jhi - 1 : 0;   /* the last whole slot may still get late deltas */
	}
	h->first = lo;
	h->last = jhi;
	return 0;
}

uint64_t iogp_heat_slots(const iogp_heat *h, uint64_t *first, uint64_t *last)
{
	*first = h && h->nnodes ? h->first : 0;
	*last = h && h->nnodes ? h->last : 0;
	return h ? h->S : 0;
}

size_t iogp_heat_nodes(const iogp_heat *h)
{
	return h ? h->nnodes : 0;
}

const char *iogp_heat_node(const iogp_heat *h, size_t i)
{
	return h && i < h->nnodes ? h->names[i] : NULL;
}

int iogp_heat_get(const iogp_heat *h, size_t i, uint64_t j, uint64_t *ns)
{
	if (!h || i >= h->nnodes || j < h->first || j > h->last || !h->nslots)
		return 0;
	size_t cell = i * h->nslots + (size_t)(j % h->nslots);
	if (h->slot[cell] != j + 1)
		return 0;
	*ns = h->p99[cell];
	return 1;
}
