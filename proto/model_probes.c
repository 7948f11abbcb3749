/* model_probes.c - slowdown probes, live (iogp_model.h): the reports of
 * `iogram probe` sources (gauges probe.OP.{stat,expected,slowdown}) kept
 * as a bounded history per probe, so a viewer can draw each operation's
 * slowdown over time and set probes of many nodes side by side. */
#include <stdlib.h>
#include <string.h>

#include "iogp_err.h"
#include "iogp_model.h"
#include "model_priv.h"

enum { G_STAT = 0, G_EXPECTED, G_SLOWDOWN, G_N };
static const char *const gname[G_N] = { "stat", "expected", "slowdown" };

struct pentry {
	uint64_t wall;
	int32_t milli[IOGP_PROBE_MAX_OPS];
};

struct pstore {
	uint32_t nops;
	char op[IOGP_PROBE_MAX_OPS][IOGP_PROBE_OP_LEN];
	uint32_t slot[IOGP_PROBE_MAX_OPS][G_N];   /* the source's slot index + 1, 0 = none */
	uint64_t last_wall, reports;
	uint32_t head, n;                         /* ring of MODEL_PROBE_RING entries */
	struct pentry e[MODEL_PROBE_RING];
};

/* probe.OP.WHICH: the op's index in p (added when new) and which; -1 when
 * the name is not one or p is full. */
static int learn(struct pstore *p, const char *name, int *which)
{
	if (strncmp(name, "probe.", 6) != 0)
		return -1;
	const char *op = name + 6, *dot = strrchr(op, '.');
	size_t len = dot ? (size_t)(dot - op) : 0;
	if (len == 0 || len >= IOGP_PROBE_OP_LEN)
		return -1;
	*which = -1;
	for (int k = 0; k < G_N; k++)
		if (strcmp(dot + 1, gname[k]) == 0)
			*which = k;
	if (*which < 0)
		return -1;
	for (uint32_t o = 0; o < p->nops; o++)
		if (strlen(p->op[o]) == len && memcmp(p->op[o], op, len) == 0)
			return (int)o;
	if (p->nops >= IOGP_PROBE_MAX_OPS)
		return -1;
	memcpy(p->op[p->nops], op, len);
	p->op[p->nops][len] = '\0';
	return (int)p->nops++;
}

static int64_t gauge_of(const struct source *s, uint32_t slot1)
{
	return slot1 ? s->slots[slot1 - 1].gauge : -1;
}

void model__probes_note(iogp_model *m, struct source *s, const iogp_msg *msg)
{
	struct pstore *p = s->probe;
	int any = 0;

	for (uint32_t i = 0; i < msg->ngauges; i++) {
		uint32_t k = model__slot_by_id(s, msg->gauges[i].id);
		const char *name = m->gm[s->slots[k].gm].name;
		int which, o;

		if (strncmp(name, "probe.", 6) != 0)
			continue;
		if (p == NULL) {
			if (m->nprobes >= MODEL_MAX_PROBES) {
				m->lst.probes_refused++;
				return;
			}
			if ((p = calloc(1, sizeof(*p))) == NULL)
				return;
			s->probe = p;
			m->probe_src[m->nprobes++] = (uint32_t)(s - m->src);
			m->lst.live_bytes += sizeof(*p);
		}
		if ((o = learn(p, name, &which)) < 0)
			continue;
		p->slot[o][which] = k + 1;
		any = 1;
	}
	if (!any)
		return;
	/* a report: every operation's factor as it stands now (gauges hold) */
	uint64_t wall = msg->wall_ns ? msg->wall_ns : m->wall_hi;
	struct pentry *e;
	if (p->n > 0 && p->e[(p->head + p->n - 1) % MODEL_PROBE_RING].wall == wall) {
		e = &p->e[(p->head + p->n - 1) % MODEL_PROBE_RING];   /* same report again */
	} else if (p->n < MODEL_PROBE_RING) {
		e = &p->e[(p->head + p->n++) % MODEL_PROBE_RING];
	} else {
		e = &p->e[p->head];
		p->head = (p->head + 1) % MODEL_PROBE_RING;
	}
	e->wall = wall;
	for (uint32_t o = 0; o < IOGP_PROBE_MAX_OPS; o++) {
		int64_t v = o < p->nops ? gauge_of(s, p->slot[o][G_SLOWDOWN]) : -1;
		e->milli[o] = v < 0 ? -1 : v > INT32_MAX ? INT32_MAX : (int32_t)v;
	}
	if (wall > p->last_wall)
		p->last_wall = wall;
	p->reports++;
}

static const char *label(const struct source *s, const char *key)
{
	const char *v = model__labels_find(s->labels, s->nlabels, key);
	return v ? v : "";
}

static int by_node(const void *a, const void *b)
{
	const iogp_probe *x = a, *y = b;
	int c = strcmp(x->node, y->node);
	return c ? c : (x->src > y->src) - (x->src < y->src);
}

size_t iogp_model_probes(const iogp_model *m, iogp_probe *out, size_t max)
{
	size_t n = 0;

	if (m == NULL)
		return 0;
	for (uint32_t k = 0; k < m->nprobes; k++) {
		uint32_t i = m->probe_src[k];
		const struct source *s = &m->src[i];
		const struct pstore *p = s->probe;
		if (n < max && out != NULL) {
			iogp_probe *q = &out[n];
			memset(q, 0, sizeof(*q));
			q->src = i;
			q->id = s->id;
			q->node = s->node != NONE ? m->nodes[s->node].name : s->host ? s->host : "";
			q->dir = label(s, "probe.dir");
			q->fs = label(s, "probe.fs");
			q->statistic = label(s, "probe.statistic");
			q->expected = label(s, "probe.expected");
			q->state = model__src_state(m, s, m->now, m->ticked);
			q->last_wall = p->last_wall;
			q->reports = p->reports;
			q->nops = p->nops;
			for (uint32_t o = 0; o < p->nops; o++) {
				q->op[o] = p->op[o];
				q->slowdown_milli[o] = gauge_of(s, p->slot[o][G_SLOWDOWN]);
				q->stat_ns[o] = gauge_of(s, p->slot[o][G_STAT]);
				q->expected_ns[o] = gauge_of(s, p->slot[o][G_EXPECTED]);
			}
		}
		n++;
	}
	if (out != NULL)
		qsort(out, n < max ? n : max, sizeof(*out), by_node);
	return n;
}

size_t iogp_model_probe_history(const iogp_model *m, uint32_t src, uint64_t since_wall,
                                iogp_probe_point *out, size_t max)
{
	if (m == NULL || src >= m->nsrc || m->src[src].probe == NULL)
		return 0;
	const struct pstore *p = m->src[src].probe;
	uint32_t first = 0;
	/* the newest report before since_wall too: its value holds into the span */
	while (first + 1 < p->n && p->e[(p->head + first + 1) % MODEL_PROBE_RING].wall <= since_wall)
		first++;
	if (p->n - first > max)
		first = p->n - (uint32_t)max;   /* the newest max */
	size_t n = 0;
	for (uint32_t k = first; k < p->n && n < max; k++) {
		const struct pentry *e = &p->e[(p->head + k) % MODEL_PROBE_RING];
		out[n].wall_ns = e->wall;
		for (uint32_t o = 0; o < IOGP_PROBE_MAX_OPS; o++)
			out[n].milli[o] = e->milli[o];
		n++;
	}
	return n;
}
