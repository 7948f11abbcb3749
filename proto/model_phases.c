/* model_phases.c - I/O phases, live (iogp_model.h): activity runs kept as
 * DELTAs arrive, and phases built from them on demand with SummarIO's
 * steps (runs -> shared-file phases -> merged compatible phases). */
#include <stdlib.h>
#include <string.h>

#include "iogp_err.h"
#include "iogp_model.h"
#include "model_priv.h"

/* ---- activity runs, as DELTAs arrive ------------------------------------------- */

void model__phases_note(iogp_model *m, struct source *s, uint32_t si, const iogp_msg *msg)
{
	if (msg->wall_ns == 0)
		return;
	for (uint32_t i = 0; i < msg->nfilerecs; i++) {
		const iogp_filerec *r = &msg->filerecs[i];
		uint32_t k = model__frec_find(s, r->file, r->layer);

		if (k == NONE || (r->flags & IOGP_FR_OTHER))
			continue;
		for (int o = 0; o < 2; o++) {
			const iogp_filerec_op *x = &r->op[o];

			if (x->ops == 0)
				continue;
			/* source monotonic -> wall, by this DELTA's own pair of clocks */
			uint64_t a = x->first_ns ? x->first_ns : msg->t0_ns, b = x->last_ns ? x->last_ns : msg->t1_ns;
			uint64_t start = msg->wall_ns - (msg->t1_ns > a ? msg->t1_ns - a : 0);
			uint64_t end = msg->wall_ns - (msg->t1_ns > b ? msg->t1_ns - b : 0);
			if (end < start)
				end = start;
			struct punit *u = NULL;
			uint32_t ui = s->fr[k].unit[o];

			if (ui != 0 && ui <= m->nunits) {
				u = &m->units[ui - 1];
				if (u->src != si || u->file != r->file || u->layer != r->layer ||
				    u->op != (uint32_t)o || start > u->end + MODEL_UNIT_GAP_NS)
					u = NULL;
			}
			if (u == NULL) {
				if (m->nunits >= MODEL_MAX_UNITS ||
				    model__grow(&m->units, &m->units_cap, m->nunits + 1, sizeof *m->units) < 0) {
					m->units_dropped++;
					continue;
				}
				u = &m->units[m->nunits++];
				memset(u, 0, sizeof *u);
				*u = (struct punit){ .file = r->file, .src = si, .layer = r->layer,
				                     .op = (uint32_t)o, .start = start, .end = end };
				s->fr[k].unit[o] = m->nunits;
			}
			if (start < u->start)
				u->start = start;
			if (end > u->end)
				u->end = end;
			u->ops += x->ops;
			u->bytes += x->bytes;
			u->time_ns += x->time_ns;
			u->consec += x->consec;
			u->seq += x->seq;
			u->random += x->random;
			if (x->max_req > u->max_req)
				u->max_req = x->max_req;
		}
	}
}

/* ---- the rules ------------------------------------------------------------------ */

int iogp_spatiality(uint64_t ops, uint64_t consec, uint64_t seq, uint64_t random, double threshold)
{
	uint64_t known = consec + seq + random;

	if (ops == 0 || known == 0)
		return IOGP_SPAT_UNKNOWN;
	double need = (1.0 - threshold) * (double)known;
	if ((double)consec >= need)
		return IOGP_SPAT_CONSECUTIVE;
	if ((double)(consec + seq) >= need)
		return IOGP_SPAT_SEQUENTIAL;
	return IOGP_SPAT_RANDOM;
}

const char *iogp_spatiality_name(int spatiality)
{
	static const char *const n[] = { "consecutive", "sequential", "random", "unknown" };
	return spatiality >= 0 && spatiality <= IOGP_SPAT_UNKNOWN ? n[spatiality] : "?";
}

/* ---- building phases ---------------------------------------------------------- */

struct pq {
	const iogp_model *m;
	const char **path;      /* per unit */
};

static const char *unit_path(const iogp_model *m, const struct punit *u)
{
	const struct source *s = &m->src[u->src];
	uint32_t fi = model__file_find(s, u->file);
	return fi != NONE ? s->files[fi].path : "?";
}

/* step 2 order: file, layer, direction, start */
static int by_file(const void *a, const void *b, void *ctx)
{
	const struct pq *q = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	const struct punit *u = &q->m->units[x], *v = &q->m->units[y];
	int c = strcmp(q->path[x], q->path[y]);

	if (c)
		return c;
	if (u->layer != v->layer)
		return u->layer < v->layer ? -1 : 1;
	if (u->op != v->op)
		return u->op < v->op ? -1 : 1;
	return (u->start > v->start) - (u->start < v->start);
}

static int by_start(const void *a, const void *b);

static int by_start_ix(const void *a, const void *b, void *ctx)
{
	const iogp_phase *ph = ctx;
	return by_start(&ph[*(const uint32_t *)a], &ph[*(const uint32_t *)b]);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

static int by_start(const void *a, const void *b)
{
	const iogp_phase *x = a, *y = b;

	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return (x->end_ns > y->end_ns) - (x->end_ns < y->end_ns);
}

/* Counts of a phase while it is built (spatiality is decided from them). */
struct acc {
	uint64_t consec, seq, random;
	uint64_t src_time;     /* the current source's time (step 2) */
};

int iogp_model_phases(const iogp_model *m, const iogp_phase_opts *o, iogp_phase **out, size_t *n,
                      uint64_t *dropped)
{
	double thr = o && o->threshold > 0 && o->threshold < 1 ? o->threshold : 0.2;
	uint64_t dist = o && o->distance_ns ? o->distance_ns : 1000000000ull;
	int layer = o ? o->layer : -1;
	uint32_t nu = 0;

	*out = NULL;
	*n = 0;
	if (dropped)
		*dropped = m ? m->units_dropped : 0;
	if (m == NULL)
		return IOGP_EINVAL;
	uint32_t *idx = malloc((m->nunits + 1) * sizeof *idx);
	const char **path = malloc((m->nunits + 1) * sizeof *path);
	iogp_phase *ph = malloc((m->nunits + 1) * sizeof *ph);
	struct acc *ac = malloc((m->nunits + 1) * sizeof *ac);
	uint32_t *stamp = calloc(m->nsrc + 1, sizeof *stamp);
	uint32_t *member = malloc((m->nunits + 1) * sizeof *member);
	int rc = IOGP_ENOMEM;

	if (!idx || !path || !ph || !ac || !stamp || !member)
		goto done;
	for (uint32_t i = 0; i < m->nunits; i++) {
		if (layer >= 0 && m->units[i].layer != (uint32_t)layer)
			continue;
		path[i] = unit_path(m, &m->units[i]);
		idx[nu++] = i;
	}
	struct pq q = { m, path };
	qsort_r(idx, nu, sizeof *idx, by_file, &q);

	/* step 2: one phase per file, layer and direction while runs overlap or
	 * follow within dist; I/O time the longest source's */
	size_t np = 0;
	for (uint32_t j = 0; j < nu; j++) {
		const struct punit *u = &m->units[idx[j]];
		iogp_phase *p = np ? &ph[np - 1] : NULL;
		if (!p || strcmp(p->file, path[idx[j]]) || p->layer != u->layer || p->op != (int)u->op ||
		    u->start > p->end_ns + dist) {
			p = &ph[np];
			ac[np] = (struct acc){ 0 };
			*p = (iogp_phase){ .start_ns = u->start, .end_ns = u->end, .op = (int)u->op,
			                   .layer = u->layer, .rank = -1, .first_source = u->src,
			                   .files = 1, .file = path[idx[j]] };
			np++;
		}
		if (u->start < p->start_ns)
			p->start_ns = u->start;
		if (u->end > p->end_ns)
			p->end_ns = u->end;
		p->bytes += u->bytes;
		p->requests += u->ops;
		if (u->max_req > p->max_req)
			p->max_req = u->max_req;
		if (u->time_ns > p->io_time_ns)
			p->io_time_ns = u->time_ns;
		ac[np - 1].consec += u->consec;
		ac[np - 1].seq += u->seq;
		ac[np - 1].random += u->random;
		member[idx[j]] = (uint32_t)(np - 1);
		if (stamp[u->src] != np) {
			stamp[u->src] = (uint32_t)np;
			p->ranks++;
		}
	}
	for (size_t i = 0; i < np; i++) {
		ph[i].shared = ph[i].ranks > 1;
		ph[i].spatiality = iogp_spatiality(ph[i].requests, ac[i].consec, ac[i].seq,
		                                   ac[i].random, thr);
	}

	/* step 3: in start order, compatible phases starting within dist of a
	 * phase's end join it */
	uint32_t *ord = malloc((np + 1) * sizeof *ord);
	if (ord == NULL)
		goto done;
	for (size_t i = 0; i < np; i++)
		ord[i] = (uint32_t)i;
	qsort_r(ord, np, sizeof *ord, by_start_ix, ph);
	uint32_t *into = malloc((np + 1) * sizeof *into);
	if (into == NULL) {
		free(ord);
		goto done;
	}
	for (size_t i = 0; i < np; i++)
		into[i] = UINT32_MAX;
	size_t nf = 0;
	iogp_phase *fin = malloc((np + 1) * sizeof *fin);
	uint64_t *pairs = malloc((nu + 1) * sizeof *pairs);
	if (fin == NULL || pairs == NULL) {
		free(fin);
		free(pairs);
		free(into);
		free(ord);
		goto done;
	}
	for (size_t a = 0; a < np; a++) {
		uint32_t i = ord[a];
		if (into[i] != UINT32_MAX)
			continue;
		iogp_phase f = ph[i];
		into[i] = (uint32_t)nf;
		for (size_t b = a + 1; b < np && ph[ord[b]].start_ns <= f.end_ns + dist; b++) {
			const iogp_phase *g = &ph[ord[b]];
			if (into[ord[b]] != UINT32_MAX || g->layer != f.layer || g->op != f.op ||
			    g->spatiality != f.spatiality || g->shared != f.shared)
				continue;
			into[ord[b]] = (uint32_t)nf;
			if (g->end_ns > f.end_ns)
				f.end_ns = g->end_ns;
			f.bytes += g->bytes;
			f.requests += g->requests;
			f.files += g->files;
			if (g->max_req > f.max_req)
				f.max_req = g->max_req;
			if (g->io_time_ns > f.io_time_ns)
				f.io_time_ns = g->io_time_ns;
			f.file = NULL;
		}
		fin[nf++] = f;
	}
	/* ranks of the merged phases: distinct sources of their runs, from
	 * (phase, source) pairs in order */
	for (uint32_t j = 0; j < nu; j++)
		pairs[j] = (uint64_t)into[member[idx[j]]] << 32 | m->units[idx[j]].src;
	qsort(pairs, nu, sizeof *pairs, cmp_u64);
	uint64_t now = model__clock(m);
	for (size_t i = 0; i < nf; i++)
		fin[i].ranks = 0;
	for (size_t i = 0; i < nf; i++)
		fin[i].open = 0;
	for (uint32_t j = 0; j < nu; j++) {
		if (j > 0 && pairs[j] == pairs[j - 1])
			continue;
		iogp_phase *f = &fin[pairs[j] >> 32];
		const struct source *sr = &m->src[(uint32_t)pairs[j]];
		f->ranks++;
		f->first_source = (uint32_t)pairs[j];
		/* open: a source of it still running, its end within the distance */
		if (model__src_state(m, sr, now, m->ticked) != IOGP_SRC_GONE && f->end_ns + dist > now)
			f->open = 1;
	}
	for (size_t i = 0; i < nf; i++)
		fin[i].rank = fin[i].ranks == 1 ? m->src[fin[i].first_source].rank : -1;
	qsort(fin, nf, sizeof *fin, by_start);
	free(into);
	free(ord);
	free(pairs);
	*out = fin;
	*n = nf;
	rc = 0;
done:
	free(idx);
	free(path);
	free(ph);
	free(ac);
	free(stamp);
	free(member);
	return rc;
}
