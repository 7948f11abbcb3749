/* model_files.c - per-file records in the stream model: applying them
 * (DELTA increments, SNAPSHOT totals), checking them, and the per-file
 * query that merges sources by path (a file many ranks use is one shared
 * file with its rank count). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iogp_err.h"
#include "iogp_model.h"
#include "iogp_units.h"
#include "model_priv.h"

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* dst += src: counts add, first is the earliest, last and max the largest. */
static void rec_add(iogp_filerec *dst, const iogp_filerec *src)
{
	for (int o = 0; o < 2; o++) {
		iogp_filerec_op *d = &dst->op[o];
		const iogp_filerec_op *s = &src->op[o];

		d->ops = sat_add(d->ops, s->ops);
		d->bytes = sat_add(d->bytes, s->bytes);
		d->time_ns = sat_add(d->time_ns, s->time_ns);
		d->consec = sat_add(d->consec, s->consec);
		d->seq = sat_add(d->seq, s->seq);
		d->random = sat_add(d->random, s->random);
		if (s->max_req > d->max_req)
			d->max_req = s->max_req;
		if (s->first_ns && (!d->first_ns || s->first_ns < d->first_ns))
			d->first_ns = s->first_ns;
		if (s->last_ns > d->last_ns)
			d->last_ns = s->last_ns;
	}
	dst->meta_ops = sat_add(dst->meta_ops, src->meta_ops);
	dst->meta_ns = sat_add(dst->meta_ns, src->meta_ns);
	dst->flags |= src->flags;
}

int model__files_check(const iogp_msg *msg)
{
	if (msg->nfilerecs > IOGP_MAX_FILERECS)
		return IOGP_ELIMIT;
	if (msg->nfilerecs && msg->filerecs == NULL)
		return IOGP_EINVAL;
	for (uint32_t i = 1; i < msg->nfilerecs; i++) {
		const iogp_filerec *a = &msg->filerecs[i - 1], *b = &msg->filerecs[i];

		if (b->file < a->file || (b->file == a->file && b->layer <= a->layer))
			return IOGP_EINVAL;
	}
	for (uint32_t i = 0; i < msg->nfilerecs; i++)
		if (!IOGP_FILEREC_DIR_OK(&msg->filerecs[i]))
			return IOGP_EINVAL;
	return 0;
}

static void frecs_clear(iogp_model *m, struct source *s)
{
	model__cost_sub(m, s, (uint64_t)s->nfr * COST_FREC);
	s->nfr = 0;
	if (s->fr_map.t != NULL)
		memset(s->fr_map.t, 0, ((size_t)s->fr_map.mask + 1) * sizeof *s->fr_map.t);
	s->fr_map.n = 0;
}

int model__files_apply(iogp_model *m, struct source *s, const iogp_filerec *r, uint32_t n,
                       bool snapshot)
{
	if (snapshot)
		frecs_clear(m, s);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t k;

		if (r[i].layer >= IOGP_FR_LAYERS)
			continue;   /* a layer from a newer agent */
		k = model__frec_find(s, r[i].file, r[i].layer);
		if (k == NONE) {
			if (s->nfr >= IOGP_MAX_FILERECS || !model__cost_fits(m, s, COST_FREC)) {
				s->fr_ignored++;
				m->st.refused++;
				continue;
			}
			if (model__grow(&s->fr, &s->frcap, s->nfr + 1, sizeof *s->fr) < 0 ||
			    model__imap_put(&s->fr_map, model__frec_hash(r[i].file, r[i].layer),
			                    s->nfr) < 0)
				return IOGP_ENOMEM;
			model__cost_add(m, s, COST_FREC);
			k = s->nfr++;
			memset(&s->fr[k], 0, sizeof s->fr[k]);   /* unit[]: none open */
			s->fr[k].r.file = r[i].file;
			s->fr[k].r.layer = r[i].layer;
		}
		rec_add(&s->fr[k].r, &r[i]);
		s->fr[k].r.overflow = r[i].overflow;   /* cumulative in both kinds */
		/* a directory's record is one while its latest record says so, so
		 * a SNAPSHOT of it encodes whatever a hostile stream sent */
		s->fr[k].r.flags &= ~(uint32_t)IOGP_FR_DIRAGG;
		if (!(s->fr[k].r.flags & IOGP_FR_OTHER))
			s->fr[k].r.flags |= r[i].flags & IOGP_FR_DIRAGG;
	}
	return 0;
}

/* ---- the per-file query ------------------------------------------------------- */

struct fq {
	iogp_file_info *v;
	size_t n, cap;
	uint32_t *map;     /* index + 1, open addressing on (path, layer) */
	size_t mask;
	uint32_t *last_src;  /* per entry: the last source counted, + 1 */
};

static uint64_t str_hash(const char *p, uint32_t layer)
{
	uint64_t h = 1469598103934665603ull ^ layer;

	while (*p)
		h = (h ^ (unsigned char)*p++) * 1099511628211ull;
	return h;
}

static int fq_grow_map(struct fq *q)
{
	size_t cap = q->mask ? (q->mask + 1) * 2 : 256;
	uint32_t *t = calloc(cap, sizeof *t);

	if (t == NULL)
		return IOGP_ENOMEM;
	for (size_t i = 0; i < q->n; i++) {
		size_t p = str_hash(q->v[i].path, q->v[i].layer) & (cap - 1);

		while (t[p])
			p = (p + 1) & (cap - 1);
		t[p] = (uint32_t)i + 1;
	}
	free(q->map);
	q->map = t;
	q->mask = cap - 1;
	return 0;
}

static int fq_add(struct fq *q, const char *path, const iogp_filerec *r, uint32_t src)
{
	size_t p;

	if (q->n * 2 >= q->mask && fq_grow_map(q) < 0)
		return IOGP_ENOMEM;
	p = str_hash(path, r->layer) & q->mask;
	for (; q->map[p]; p = (p + 1) & q->mask) {
		iogp_file_info *f = &q->v[q->map[p] - 1];

		if (f->layer == r->layer && !strcmp(f->path, path)) {
			rec_add(&f->total, r);
			f->total.overflow = sat_add(f->total.overflow, r->overflow);
			if (q->last_src[q->map[p] - 1] != src + 1) {
				q->last_src[q->map[p] - 1] = src + 1;
				f->sources++;
			}
			return 0;
		}
	}
	if (q->n == q->cap) {
		size_t cap = q->cap ? q->cap * 2 : 64;
		iogp_file_info *nv = realloc(q->v, cap * sizeof *nv);
		uint32_t *ns;

		if (nv == NULL)
			return IOGP_ENOMEM;
		q->v = nv;
		if ((ns = realloc(q->last_src, cap * sizeof *ns)) == NULL)
			return IOGP_ENOMEM;
		q->last_src = ns;
		q->cap = cap;
	}
	iogp_file_info *f = &q->v[q->n];
	memset(f, 0, sizeof *f);
	f->path = path;
	f->layer = r->layer;
	f->other = (r->flags & IOGP_FR_OTHER) != 0;
	f->sources = 1;
	f->first_source = src;
	f->total = *r;
	q->last_src[q->n] = src + 1;
	q->map[p] = (uint32_t)++q->n;
	return 0;
}

static uint64_t bytes_of(const iogp_file_info *f)
{
	return f->total.op[0].bytes + f->total.op[1].bytes;
}

static int by_bytes(const void *a, const void *b)
{
	const iogp_file_info *x = a, *y = b;
	uint64_t bx = bytes_of(x), by = bytes_of(y);

	if (bx != by)
		return bx > by ? -1 : 1;
	if (x->other != y->other)
		return x->other - y->other;
	int c = strcmp(x->path, y->path);
	return c ? c : (x->layer > y->layer) - (x->layer < y->layer);
}

static bool sel_has(const iogp_model *m, const iogp_sel *sel, uint32_t si)
{
	if (sel == NULL || sel->kind == IOGP_SEL_ALL)
		return true;
	if (sel->kind == IOGP_SEL_SOURCE)
		return m->src[si].id == sel->source;
	return sel->node != NULL && !strcmp(m->nodes[m->src[si].node].name, sel->node);
}

int iogp_model_files(const iogp_model *m, const iogp_sel *sel, int layer,
                     iogp_file_info **out, size_t *n)
{
	struct fq q = { 0 };
	int rc = 0;

	*out = NULL;
	*n = 0;
	if (m == NULL)
		return IOGP_EINVAL;
	for (uint32_t si = 0; si < m->nsrc && rc == 0; si++) {
		const struct source *s = &m->src[si];

		if (s->nfr == 0 || !sel_has(m, sel, si))
			continue;
		for (uint32_t k = 0; k < s->nfr && rc == 0; k++) {
			const iogp_filerec *r = &s->fr[k].r;
			const char *path = "";

			if (layer >= 0 && r->layer != (uint32_t)layer)
				continue;
			if (!(r->flags & IOGP_FR_OTHER)) {
				uint32_t fi = model__file_find(s, r->file);
				path = fi != NONE ? s->files[fi].path : "?";
			}
			rc = fq_add(&q, path, r, si);
		}
	}
	free(q.map);
	free(q.last_src);
	if (rc < 0) {
		free(q.v);
		return rc;
	}
	if (q.n > 1)
		qsort(q.v, q.n, sizeof *q.v, by_bytes);
	*out = q.v;
	*n = q.n;
	return 0;
}

void iogp_model_files_free(iogp_file_info *f)
{
	free(f);
}

int iogp_file_label(char *buf, size_t len, const char *path, int other, uint64_t count)
{
	char n[32];

	iogp_fmt_int(n, sizeof n, count);
	if (other)
		return snprintf(buf, len, "(other files: %s beyond the limit)", n);
	if (count)
		return snprintf(buf, len, "%s (%s file%s)", path, n, count == 1 ? "" : "s");
	return snprintf(buf, len, "%s", path);
}

size_t model__files_snapshot(const struct source *s, iogp_filerec *out)
{
	for (uint32_t k = 0; k < s->nfr; k++)
		out[k] = s->fr[k].r;
	return s->nfr;
}
