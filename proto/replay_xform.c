/* replay_xform.c - the replay file's DELTA transform, and helpers its writer and reader share. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iogp_err.h"
#include "iogp_wire.h"
#include "replay_priv.h"

int replay__grow(uint8_t **buf, size_t *cap, size_t need, size_t first)
{
	if (need <= *cap)
		return 0;
	size_t n = *cap ? *cap : first;
	while (n < need)
		n *= 2;
	uint8_t *b = realloc(*buf, n);
	if (!b)
		return IOGP_ENOMEM;
	*buf = b;
	*cap = n;
	return 0;
}

/* ------------------------------------------------ DELTA transform (packs) */

#define XF_TOTAL_ELEMS (2u << 20)   /* of all sources' state: ~16 bytes each */
#define XF_HASH (2 * XF_MAX_SOURCES)

enum {
	X_NEW = 1 << 0, X_FLAGS = 1 << 1, X_SEQ = 1 << 2, X_T0 = 3 << 3,
	X_CLIST = 1 << 5, X_GLIST = 1 << 6, X_HLIST = 1 << 7, X_REST = 1 << 8,
	X_DROPPED = 1 << 9, X_SEEN = 1 << 10, X_CSEL = 1 << 11, X_HSEL = 1 << 12,
	X_ALL = (1 << 13) - 1,
};
#define X_T0_SHIFT 3
enum { T0_PREV_T1, T0_STEP, T0_EXPLICIT };
enum { B_SAME, B_LIST, B_EDIT };

/* A source's state: its last DELTA's numbers, and the predictors chosen for
 * its counters (0: last value; j + 1: last value scaled as counter j moved)
 * and histograms (0: none; k + 1: the total equals counter k). */
struct xsrc {
	uint64_t id, seq, t0, t1, step, wall, dropped, seen;
	uint16_t flags;
	uint32_t nc, ng, nh, nb, cap;   /* cap: of mem, in 16-byte elements */
	iogp_counter_val *c;
	iogp_gauge_val *g;
	iogp_hist_val *h;
	iogp_bin *b;
	uint32_t *cs, *hs;
	void *mem;
};

static const struct xsrc xempty;

void replay__xs_reset(struct xstate *x)
{
	for (uint32_t i = 0; i < x->n; i++) {
		free(x->src[i].mem);
		x->src[i].mem = NULL;
		x->src[i].cap = 0;
	}
	if (x->hash && x->n)
		memset(x->hash, 0, XF_HASH * sizeof *x->hash);
	x->n = x->next = 0;
	x->elems = 0;
}

void replay__xs_free(struct xstate *x)
{
	for (uint32_t i = 0; i < x->cap; i++)
		free(x->src[i].mem);
	free(x->src);
	free(x->hash);
	memset(x, 0, sizeof *x);
}

void replay__xr_free(struct xrec *o)
{
	iogp_msg_free(&o->rest);
	free(o->restbuf);
	free(o->c);
	free(o->g);
	free(o->h);
	free(o->b);
	free(o->tmp);
	free(o->pv);
	free(o->cs);
	free(o->hs);
	free(o->out);
	memset(o, 0, sizeof *o);
}

static uint32_t xs_hash(uint64_t id)
{
	id *= 0x9e3779b97f4a7c15ull;
	return (uint32_t)(id >> 40) & (XF_HASH - 1);
}

/* Index of source id in this frame, or x->n if it has none yet. */
uint32_t replay__xs_find(const struct xstate *x, uint64_t id)
{
	if (!x->hash)
		return x->n;
	for (uint32_t h = xs_hash(id);; h = (h + 1) & (XF_HASH - 1)) {
		uint32_t v = x->hash[h];
		if (!v)
			return x->n;
		if (x->src[v - 1].id == id)
			return v - 1;
	}
}

/* Ask for source id's state to be brought into the cache (a hint, no
 * effect on what is written). */
void replay__xs_prefetch(const struct xstate *x, uint64_t id)
{
	uint32_t i = replay__xs_find(x, id);
	if (i >= x->n)
		return;
	const char *p = x->src[i].mem;
	size_t n = (size_t)x->src[i].cap * 16;
	for (size_t k = 0; k < n && k < 4096; k += 64)
		__builtin_prefetch(p + k);
}

/* Scratch arrays never exceed XF_SRC_ELEMS elements, and exist once
 * asked for (no arithmetic on NULL). */
static int xgrow(void **p, uint32_t *cap, uint64_t need, size_t size)
{
	if (need <= *cap && *p)
		return 0;
	if (need > XF_SRC_ELEMS)
		return IOGP_ECORRUPT;
	uint64_t n = *cap ? *cap : 64;
	while (n < need)
		n *= 2;
	if (n > XF_SRC_ELEMS)
		n = XF_SRC_ELEMS;
	void *q = realloc(*p, (size_t)n * size);
	if (!q)
		return IOGP_ENOMEM;
	*p = q;
	*cap = (uint32_t)n;
	return 0;
}

#define XGROW(arr, cap, need) do { \
	int rc_ = xgrow((void **)&(arr), &(cap), (need), sizeof *(arr)); \
	if (rc_ < 0) \
		return rc_; \
} while (0)
#define VGET(v) do { if (vget(&p, end, &(v)) < 0) return IOGP_ECORRUPT; } while (0)
#define UNZ(v) ((uint64_t)iogp_unzigzag(v))
#define ZZ(d) iogp_zigzag((int64_t)(d))

/* a x b / c rounded, modulo 2^64; a when c is 0 */
static uint64_t xscale(uint64_t a, uint64_t b, uint64_t c)
{
	if (!c)
		return a;
	if (!((a | b | c) >> 32))
		return (a * b + c / 2) / c;
	__extension__ unsigned __int128 x = (unsigned __int128)a * b + c / 2;
	return (uint64_t)(x / c);
}

/* Sum of the counts, or 0 if it does not fit 64 bits. */
static uint64_t xtotal(const iogp_bin *b, uint32_t n)
{
	uint64_t t = 0;
	for (uint32_t k = 0; k < n; k++) {
		if (b[k].count > UINT64_MAX - t)
			return 0;
		t += b[k].count;
	}
	return t;
}

/* Element count plus n must stay within one DELTA's bound. */
static int xbudget(uint64_t *elems, uint64_t n)
{
	if (n > XF_SRC_ELEMS - *elems)
		return IOGP_ECORRUPT;
	*elems += n;
	return 0;
}

/* Next strictly ascending id from a gap: ids of 32 bits (lim UINT32_MAX)
 * or bin indexes of 64 (*next wraps to 0 after UINT64_MAX: nothing may
 * follow). */
static int xgap(uint64_t *next, uint64_t gap, int first, uint64_t lim, uint64_t *id)
{
	if ((!first && !*next) || gap > lim - *next)
		return IOGP_ECORRUPT;
	*id = *next + gap;
	*next = *id + 1;
	return 0;
}

/* A list of n ids: as gaps, or the previous list's. The ids are the
 * leading uint32_t member of structs stride / idstride bytes apart. */
static int xdec_ids(const uint8_t **pp, const uint8_t *end, int given, uint64_t n,
                    const void *prev, size_t stride, uint32_t *ids, size_t idstride)
{
	const uint8_t *p = *pp;
	uint64_t v, next = 0, id;
	for (uint64_t i = 0; i < n; i++) {
		if (given) {
			VGET(v);
			if (xgap(&next, v, !i, UINT32_MAX, &id) < 0)
				return IOGP_ECORRUPT;
		} else {
			id = *(const uint32_t *)(const void *)((const char *)prev + i * stride);
		}
		*(uint32_t *)(void *)((char *)ids + i * idstride) = (uint32_t)id;
	}
	*pp = p;
	return 0;
}

/* One histogram's bins against pb (its last ones): the index set, then the
 * counts. With a total (has_total), the last count is what the others
 * leave of it and the others are predicted scaled to it. */
static int xdec_bins(struct xrec *o, const uint8_t **pp, const uint8_t *end,
                     const iogp_bin *pb, uint32_t np, uint64_t at, uint64_t *elems,
                     int has_total, uint64_t total, uint32_t *nbout)
{
	const uint8_t *p = *pp;
	uint64_t mode, nb, v, next = 0;
	VGET(mode);
	if (mode == B_SAME) {
		nb = np;
		if (xbudget(elems, nb) < 0)
			return IOGP_ECORRUPT;
		XGROW(o->b, o->bcap, at + nb);
		for (uint32_t k = 0; k < nb; k++)
			o->b[at + k].idx = pb[k].idx;
	} else if (mode == B_LIST) {
		VGET(nb);
		if (nb > (uint64_t)(end - p) || xbudget(elems, nb) < 0)
			return IOGP_ECORRUPT;
		XGROW(o->b, o->bcap, at + nb);
		for (uint64_t k = 0; k < nb; k++) {
			VGET(v);
			if (xgap(&next, v, !k, UINT64_MAX, &o->b[at + k].idx) < 0)
				return IOGP_ECORRUPT;
		}
	} else if (mode == B_EDIT) {
		/* pb but for nrem positions, plus nadd new indexes, each placed
		 * after some of the kept ones and given as a gap from the index
		 * before it in the new list (new bins come near old ones) */
		uint64_t nrem, nadd, pos = 0, nkept, k, i, r;
		VGET(nrem);
		if (nrem > np || nrem > (uint64_t)(end - p))
			return IOGP_ECORRUPT;
		XGROW(o->tmp, o->tcap, nrem);
		for (k = 0; k < nrem; k++) {
			VGET(v);
			if (xgap(&pos, v, !k, np - 1, &o->tmp[k]) < 0)
				return IOGP_ECORRUPT;
		}
		VGET(nadd);
		nkept = np - nrem;
		nb = nkept + nadd;
		if (nadd > (uint64_t)(end - p) / 2 || xbudget(elems, nb) < 0)
			return IOGP_ECORRUPT;
		XGROW(o->b, o->bcap, at + nb);
		iogp_bin *b = o->b + at;
		for (i = r = k = 0; i < np; i++) {
			if (r < nrem && o->tmp[r] == i)
				r++;
			else
				b[k++].idx = pb[i].idx;
		}
		XGROW(o->tmp, o->tcap, nadd);
		uint64_t slot = 0, g, x;
		for (k = 0; k < nadd; k++) {
			VGET(v);
			VGET(g);
			if (v > nkept - slot)
				return IOGP_ECORRUPT;
			slot += v;
			if (!slot && !k) {
				x = g;
			} else {
				uint64_t base = !v && k ? o->tmp[k - 1] : b[slot - 1].idx;
				if (base == UINT64_MAX || g > UINT64_MAX - base - 1)
					return IOGP_ECORRUPT;
				x = base + 1 + g;
			}
			if (slot < nkept && x >= b[slot].idx)
				return IOGP_ECORRUPT;
			o->tmp[k] = x;
		}
		/* merge from the back, in place */
		for (i = nkept, r = nadd, k = nb; r > 0;) {
			if (i > 0 && b[i - 1].idx > o->tmp[r - 1])
				b[--k].idx = b[--i].idx;
			else
				b[--k].idx = o->tmp[--r];
		}
	} else {
		return IOGP_ECORRUPT;
	}
	uint64_t ptotal = has_total ? xtotal(pb, np) : 0, sum = 0, last = nb;
	if (has_total) {
		if (!nb) {
			if (total)
				return IOGP_ECORRUPT;
		} else {
			last = nb - 1;
		}
	}
	uint32_t q = 0;
	for (uint64_t k = 0; k < last; k++) {
		iogp_bin *b = &o->b[at + k];
		uint64_t pred;
		VGET(v);
		if (mode == B_SAME) {   /* pb's indexes, in place: no search */
			pred = pb[k].count;
		} else {
			while (q < np && pb[q].idx < b->idx)
				q++;
			pred = q < np && pb[q].idx == b->idx ? pb[q].count : 0;
		}
		b->count = xscale(pred, total, ptotal) + UNZ(v);
		if (!b->count || (has_total && b->count > UINT64_MAX - sum))
			return IOGP_ECORRUPT;
		sum += b->count;
	}
	if (last < nb) {
		if (sum >= total)
			return IOGP_ECORRUPT;
		o->b[at + last].count = total - sum;
	}
	*nbout = (uint32_t)nb;
	*pp = p;
	return 0;
}

/* The REST wire sections [p, p + n) into o->m. */
static int xdec_rest(struct xrec *o, const uint8_t *p, uint64_t n)
{
	if (replay__grow(&o->restbuf, &o->restcap, REST_HDR + n, 256) < 0)
		return IOGP_ENOMEM;
	memcpy(o->restbuf, "IOGW\1\2\0\0\0\0\0\0\0\0\0\0\0", REST_HDR);
	memcpy(o->restbuf + REST_HDR, p, n);
	int rc = iogp_msg_decode(&o->rest, o->restbuf, REST_HDR + n, NULL, 0);
	if (rc < 0)
		return rc == IOGP_ENOMEM ? rc : IOGP_ECORRUPT;
	const iogp_msg *r = &o->rest;
	if (r->t0_ns || r->t1_ns || r->wall_ns || r->ncounters || r->ngauges ||
	    r->nhists || r->dropped || r->access_seen)
		return IOGP_ECORRUPT;
	iogp_msg *m = &o->m;
	m->nlabels = r->nlabels;
	m->labels = r->labels;
	m->nmetrics = r->nmetrics;
	m->metrics = r->metrics;
	m->naccess = r->naccess;
	m->access = r->access;
	m->nfiles = r->nfiles;
	m->files = r->files;
	m->nexact = r->nexact;
	m->exact = r->exact;
	m->nfilerecs = r->nfilerecs;
	m->filerecs = r->filerecs;
	m->npeers = r->npeers;
	m->peers = r->peers;
	return 0;
}

/* Rebuild into o->m the DELTA that body [p, end) encodes, given state x.
 * Nothing in x changes (replay__xs_commit does that). */
int replay__xs_decode(const struct xstate *x, struct xrec *o, const uint8_t *p,
                      const uint8_t *end)
{
	uint64_t mode, v, n, elems = 0;
	const struct xsrc *s;
	iogp_msg *m = &o->m;
	memset(m, 0, sizeof *m);
	VGET(mode);
	if ((mode & ~(uint64_t)X_ALL) || ((mode & X_T0) >> X_T0_SHIFT) > T0_EXPLICIT)
		return IOGP_ECORRUPT;
	if (mode & X_NEW) {
		if (end - p < 8 || x->n >= XF_MAX_SOURCES)
			return IOGP_ECORRUPT;
		m->source = get64(p);
		p += 8;
		o->slot = x->n;
		s = &xempty;
	} else {
		VGET(v);
		uint64_t i = x->next + UNZ(v);
		if (i >= x->n)
			return IOGP_ECORRUPT;
		o->slot = (uint32_t)i;
		s = &x->src[i];
		m->source = s->id;
	}
	m->version = IOGP_WIRE_VERSION;
	m->kind = IOGP_DELTA;
	m->flags = s->flags;
	if (mode & X_FLAGS) {
		VGET(v);
		if (v > UINT16_MAX)
			return IOGP_ECORRUPT;
		m->flags = (uint16_t)v;
	}
	m->seq = s->seq + 1;
	if (mode & X_SEQ) {
		VGET(v);
		m->seq += UNZ(v);
	}
	switch ((mode & X_T0) >> X_T0_SHIFT) {
	case T0_PREV_T1:
		m->t0_ns = s->t1;
		break;
	case T0_STEP:
		m->t0_ns = s->t0 + s->step;
		break;
	default:
		VGET(v);
		m->t0_ns = s->t1 + UNZ(v);
	}
	VGET(v);
	m->t1_ns = m->t0_ns + (m->t0_ns - s->t0) + UNZ(v);
	VGET(v);
	m->wall_ns = s->wall + (m->t1_ns - s->t1) + UNZ(v);
	m->dropped = s->dropped;
	if (mode & X_DROPPED) {
		VGET(v);
		m->dropped += UNZ(v);
	}
	m->access_seen = s->seen;
	if (mode & X_SEEN) {
		VGET(v);
		m->access_seen += UNZ(v);
	}

	/* counters: ids, predictors, then one value each */
	int list = (mode & X_CLIST) != 0;
	n = list ? 0 : s->nc;
	if (list)
		VGET(n);
	if (n > (uint64_t)(end - p) || xbudget(&elems, n) < 0)
		return IOGP_ECORRUPT;
	XGROW(o->c, o->ccap, n);
	XGROW(o->cs, o->cscap, n);
	XGROW(o->pv, o->pvcap, n);
	if (xdec_ids(&p, end, list, n, s->c, sizeof *s->c, &o->c[0].id, sizeof *o->c) < 0)
		return IOGP_ECORRUPT;
	for (uint64_t i = 0, j = 0; i < n; i++) {
		if (mode & X_CSEL) {
			VGET(v);
			if (v > i)
				return IOGP_ECORRUPT;
			o->cs[i] = (uint32_t)v;
		} else {
			o->cs[i] = list ? 0 : s->cs[i];
		}
		if (!list) {
			o->pv[i] = s->c[i].value;
			continue;
		}
		while (j < s->nc && s->c[j].id < o->c[i].id)
			j++;
		o->pv[i] = j < s->nc && s->c[j].id == o->c[i].id ? s->c[j].value : 0;
	}
	for (uint64_t i = 0; i < n; i++) {
		uint64_t pred = o->pv[i];
		if (o->cs[i]) {
			uint32_t j = o->cs[i] - 1;
			pred = xscale(pred, o->c[j].value, o->pv[j]);
		}
		VGET(v);
		o->c[i].value = pred + UNZ(v);
	}
	m->ncounters = (uint32_t)n;
	m->counters = o->c;

	/* gauges: ids, then values against the same id's last one */
	list = (mode & X_GLIST) != 0;
	n = list ? 0 : s->ng;
	if (list)
		VGET(n);
	if (n > (uint64_t)(end - p) || xbudget(&elems, n) < 0)
		return IOGP_ECORRUPT;
	XGROW(o->g, o->gcap, n);
	if (xdec_ids(&p, end, list, n, s->g, sizeof *s->g, &o->g[0].id, sizeof *o->g) < 0)
		return IOGP_ECORRUPT;
	for (uint64_t i = 0, j = 0; i < n; i++) {
		uint64_t pred = 0;
		if (!list) {
			pred = (uint64_t)s->g[i].value;
		} else {
			while (j < s->ng && s->g[j].id < o->g[i].id)
				j++;
			if (j < s->ng && s->g[j].id == o->g[i].id)
				pred = (uint64_t)s->g[j].value;
		}
		VGET(v);
		o->g[i].value = (int64_t)(pred + UNZ(v));
	}
	m->ngauges = (uint32_t)n;
	m->gauges = o->g;

	/* histograms: ids, totals, then bins against the same id's last ones */
	list = (mode & X_HLIST) != 0;
	n = list ? 0 : s->nh;
	if (list)
		VGET(n);
	if (n > (uint64_t)(end - p) || xbudget(&elems, n) < 0)
		return IOGP_ECORRUPT;
	XGROW(o->h, o->hcap, n);
	XGROW(o->hs, o->hscap, n);
	if (xdec_ids(&p, end, list, n, s->h, sizeof *s->h, &o->h[0].id, sizeof *o->h) < 0)
		return IOGP_ECORRUPT;
	for (uint64_t i = 0; i < n; i++) {
		if (mode & X_HSEL) {
			VGET(v);
		} else {
			v = list ? 0 : s->hs[i];
		}
		if (v > m->ncounters)
			return IOGP_ECORRUPT;
		o->hs[i] = (uint32_t)v;
	}
	uint64_t nbins = 0;
	for (uint64_t i = 0, j = 0; i < n; i++) {
		const iogp_hist_val *ph = NULL;
		if (!list) {
			ph = &s->h[i];
		} else {
			while (j < s->nh && s->h[j].id < o->h[i].id)
				j++;
			if (j < s->nh && s->h[j].id == o->h[i].id)
				ph = &s->h[j];
		}
		uint32_t nb, t = o->hs[i];
		int rc = xdec_bins(o, &p, end, ph ? ph->bins : NULL, ph ? ph->nbins : 0, nbins,
		                   &elems, t != 0, t ? o->c[t - 1].value : 0, &nb);
		if (rc < 0)
			return rc;
		o->h[i].nbins = nb;
		o->h[i].bins = (iogp_bin *)(uintptr_t)nbins;   /* an offset until o->b settles */
		nbins += nb;
	}
	for (uint64_t i = 0; i < n; i++)
		o->h[i].bins = o->b + (uintptr_t)o->h[i].bins;
	m->nhists = (uint32_t)n;
	m->hists = o->h;

	/* anything else (labels, metrics, access samples, files, exact values,
	 * file records, MPI destinations) as wire sections */
	if (mode & X_REST) {
		VGET(v);
		if (v > (uint64_t)(end - p) || v > IOGP_MAX_PAYLOAD - REST_HDR)
			return IOGP_ECORRUPT;
		int rc = o->norest ? 0 : xdec_rest(o, p, v);
		if (rc < 0)
			return rc;
		p += v;
	}
	if (p != end)
		return IOGP_ECORRUPT;
	uint64_t held = x->elems - (s == &xempty ? 0 : (uint64_t)s->nc + s->ng + s->nh + s->nb);
	if (held + elems > XF_TOTAL_ELEMS)
		return IOGP_ECORRUPT;
	return 0;
}

/* o->m encoded into o->out: the record's payload. */
int replay__xr_encode(struct xrec *o)
{
	if (!o->out && replay__grow(&o->out, &o->outcap, 1024, 1024) < 0)
		return IOGP_ENOMEM;
	long n = iogp_msg_encode(&o->m, o->out, o->outcap);
	if (n == IOGP_ELIMIT) {
		n = iogp_msg_encode(&o->m, NULL, 0);
		if (n > 0 && replay__grow(&o->out, &o->outcap, (size_t)n, 1024) < 0)
			return IOGP_ENOMEM;
		if (n > 0)
			n = iogp_msg_encode(&o->m, o->out, o->outcap);
	}
	if (n < 0)
		return IOGP_ECORRUPT;
	o->outlen = (size_t)n;
	return 0;
}

/* Whether source slot i (x->n: new) may hold elems state elements: the
 * reader refuses a DELTA that takes the frame's state past its bound. */
int replay__xs_fits(const struct xstate *x, uint32_t i, uint64_t elems)
{
	const struct xsrc *s = i < x->n ? &x->src[i] : &xempty;
	uint64_t held = x->elems - ((uint64_t)s->nc + s->ng + s->nh + s->nb);
	return elems <= XF_SRC_ELEMS && held + elems <= XF_TOTAL_ELEMS;
}

/* Make o->m (just decoded, or written with the predictors chosen for it)
 * its source's state. */
int replay__xs_commit(struct xstate *x, const struct xrec *o)
{
	const iogp_msg *m = &o->m;
	uint32_t i = o->slot;
	if (i == x->n && x->n == x->cap) {
		uint32_t nc = x->cap ? x->cap * 2 : 64;
		if (nc > XF_MAX_SOURCES)
			nc = XF_MAX_SOURCES;
		struct xsrc *q = realloc(x->src, nc * sizeof *q);
		if (!q)
			return IOGP_ENOMEM;
		memset(q + x->cap, 0, (nc - x->cap) * sizeof *q);
		x->src = q;
		x->cap = nc;
	}
	struct xsrc *s = &x->src[i];
	uint64_t nb = 0;
	for (uint32_t k = 0; k < m->nhists; k++)
		nb += m->hists[k].nbins;
	uint64_t elems = (uint64_t)m->ncounters + m->ngauges + m->nhists + nb;
	uint64_t need = elems + ((uint64_t)m->ncounters + m->nhists + 3) / 4;
	if (need > s->cap || !s->mem) {
		uint64_t cap = need + need / 4 + 8;
		void *mem = malloc((size_t)cap * 16);
		if (!mem)
			return IOGP_ENOMEM;
		free(s->mem);
		s->mem = mem;
		s->cap = (uint32_t)cap;
	}
	if (i == x->n) {
		if (x->keyed && !x->hash && !(x->hash = calloc(XF_HASH, sizeof *x->hash)))
			return IOGP_ENOMEM;
		void *mem = s->mem;
		uint32_t cap = s->cap;
		*s = xempty;
		s->mem = mem;
		s->cap = cap;
		s->id = m->source;
		if (x->keyed) {
			uint32_t h = xs_hash(s->id);
			while (x->hash[h])
				h = (h + 1) & (XF_HASH - 1);
			x->hash[h] = i + 1;
		}
		x->n++;
	} else {
		x->elems -= (uint64_t)s->nc + s->ng + s->nh + s->nb;
	}
	x->elems += elems;
	s->c = s->mem;
	s->g = (iogp_gauge_val *)(void *)(s->c + m->ncounters);
	s->h = (iogp_hist_val *)(void *)(s->g + m->ngauges);
	s->b = (iogp_bin *)(void *)(s->h + m->nhists);
	s->cs = (uint32_t *)(void *)(s->b + nb);
	s->hs = s->cs + m->ncounters;
	s->nc = m->ncounters;
	s->ng = m->ngauges;
	s->nh = m->nhists;
	s->nb = (uint32_t)nb;
	if (m->ncounters) {
		memcpy(s->c, m->counters, m->ncounters * sizeof *s->c);
		memcpy(s->cs, o->cs, m->ncounters * sizeof *s->cs);
	}
	if (m->ngauges)
		memcpy(s->g, m->gauges, m->ngauges * sizeof *s->g);
	if (m->nhists)
		memcpy(s->hs, o->hs, m->nhists * sizeof *s->hs);
	iogp_bin *b = s->b;
	for (uint32_t k = 0; k < m->nhists; k++) {
		s->h[k].id = m->hists[k].id;
		s->h[k].nbins = m->hists[k].nbins;
		s->h[k].bins = b;
		if (m->hists[k].nbins)
			memcpy(b, m->hists[k].bins, m->hists[k].nbins * sizeof *b);
		b += m->hists[k].nbins;
	}
	s->step = m->t0_ns - s->t0;
	s->seq = m->seq;
	s->t0 = m->t0_ns;
	s->t1 = m->t1_ns;
	s->wall = m->wall_ns;
	s->flags = m->flags;
	s->dropped = m->dropped;
	s->seen = m->access_seen;
	x->next = i + 1;
	return 0;
}

/* nb's indexes and counts against the state's pb: one walk over both
 * finds each new bin's prediction (pb's count of its index, or 0) and what
 * an edit of pb's list takes (its removed positions, its added bins), in
 * scr (room for 2 n + np). */
static uint8_t *xenc_bins(uint8_t *q, const iogp_bin *pb, uint32_t np,
                          const iogp_bin *nb, uint32_t n, int has_total, uint64_t total,
                          uint64_t *scr)
{
	uint32_t same = np == n, nrem = 0, nadd = 0, i, j;
	for (i = 0; same && i < n; i++)
		same = pb[i].idx == nb[i].idx;
	uint64_t *pred = scr, *rem = scr + n, *add = scr + n + np;
	if (same) {
		*q++ = B_SAME;
	} else {
		for (i = j = 0; i < np || j < n;) {
			if (j == n || (i < np && pb[i].idx < nb[j].idx)) {
				rem[nrem++] = i++;
			} else if (i == np || nb[j].idx < pb[i].idx) {
				pred[j] = 0;
				add[nadd++] = j++;
			} else {
				pred[j++] = pb[i++].count;
			}
		}
		uint64_t next = 0;
		if (nrem + nadd < n) {
			*q++ = B_EDIT;
			q = vput(q, nrem);
			for (i = 0; i < nrem; i++) {
				q = vput(q, rem[i] - next);
				next = rem[i] + 1;
			}
			q = vput(q, nadd);
			/* each added bin: the kept ones since the last added, and
			 * its index's gap from the bin before it in the new list */
			uint64_t slot = 0;
			for (i = 0; i < nadd; i++) {
				uint64_t at = add[i], kept = at - i;
				q = vput(q, kept - slot);
				q = vput(q, at ? nb[at].idx - nb[at - 1].idx - 1 : nb[at].idx);
				slot = kept;
			}
		} else {
			*q++ = B_LIST;
			q = vput(q, n);
			for (j = 0; j < n; j++) {
				q = vput(q, nb[j].idx - next);
				next = nb[j].idx + 1;
			}
		}
	}
	uint64_t ptotal = has_total ? xtotal(pb, np) : 0;
	uint32_t last = has_total && n ? n - 1 : n;
	for (j = 0; j < last; j++) {
		uint64_t p = same ? pb[j].count : pred[j];   /* same: pb's indexes, in place */
		q = vput(q, ZZ(nb[j].count - xscale(p, total, ptotal)));
	}
	return q;
}

/* Predictors for m's counters and histograms (x->cs, x->hs) given its
 * source's state s: the ones s used while they still do well, else the
 * best found. Estimates in floating point: only the choice depends on
 * them, the reader computes what was chosen exactly. */
static int xs_choose(struct xrec *t, const struct xsrc *s, const iogp_msg *m,
                     int clist, int hlist)
{
	uint32_t n = m->ncounters;
	XGROW(t->cs, t->cscap, n);
	XGROW(t->pv, t->pvcap, n);
	XGROW(t->hs, t->hscap, m->nhists);
	for (uint32_t i = 0, j = 0; i < n; i++) {
		uint64_t id = m->counters[i].id;
		if (!clist) {
			t->pv[i] = s->c[i].value;
			continue;
		}
		while (j < s->nc && s->c[j].id < id)
			j++;
		t->pv[i] = j < s->nc && s->c[j].id == id ? s->c[j].value : 0;
	}
	for (uint32_t i = 0; i < n; i++) {
		uint64_t val = m->counters[i].value, pv = t->pv[i];
		uint32_t cur = clist ? 0 : s->cs[i], best = cur;
		uint64_t pred = cur ? xscale(pv, m->counters[cur - 1].value, t->pv[cur - 1]) : pv;
		uint64_t err = val > pred ? val - pred : pred - val;
		/* Change only when off by over 1/16 and for much better (a change
		 * costs a list of them): else the best one flips with noise. */
		if (err > 63 && err > val / 16) {
			double bestd = (double)err / 4;
			for (uint32_t k = 0; k <= i; k++) {
				double p = (double)pv;
				if (k && t->pv[k - 1])
					p = p * (double)m->counters[k - 1].value / (double)t->pv[k - 1];
				double d = p > (double)val ? p - (double)val : (double)val - p;
				if (d < bestd) {
					bestd = d;
					best = k;
				}
			}
		}
		t->cs[i] = best;
	}
	for (uint32_t i = 0; i < m->nhists; i++) {
		const iogp_hist_val *h = &m->hists[i];
		uint64_t tot = xtotal(h->bins, h->nbins);
		uint32_t cur = hlist ? 0 : s->hs[i];
		t->hs[i] = 0;
		if ((!tot && h->nbins) || !n)
			continue;
		if (cur && cur <= n && m->counters[cur - 1].value == tot) {
			t->hs[i] = cur;
			continue;
		}
		/* a new link where it held last time too, not by chance */
		uint64_t ptot = hlist ? 0 : xtotal(s->h[i].bins, s->h[i].nbins);
		for (uint32_t k = 0; k < n && ptot; k++) {
			if (m->counters[k].value == tot && t->pv[k] == ptot) {
				t->hs[i] = k + 1;
				break;
			}
		}
	}
	return 0;
}

/* The transform of m (a decoded DELTA) for source slot i (x->n: new) into
 * q, which has room for replay__xs_bound bytes. rest: m's other sections. t:
 * scratch for the predictors. 0 when out of memory.
 *
 * Why replay__xs_decode, given the same state, rebuilds m's numbers from it
 * whenever m is a DELTA the wire encoder accepts (ids strictly ascending
 * below 2^32, bin indexes strictly ascending, no bin of count 0) and
 * replay__xs_fits: every number is written as a difference from a
 * prediction the decoder computes from the same inputs (the state, and the
 * values it already rebuilt: the predictors point back only, cs[i] <= i),
 * modulo 2^64 both ways; each id or index list is written only in a form
 * whose checks it passes (ascending gaps; B_EDIT positions ascending below
 * np, new indexes between the kept ones); every count is the bins' own
 * (none is 0), and a histogram's total names a counter only if it equals
 * the bins' sum and that fits 64 bits, so the last bin (not 0) is what the
 * others leave; lengths and element counts are those of m, which the
 * writer bounds (XF_SRC_ELEMS, XF_MAX_SOURCES, the REST within the
 * payload). The tests hold the writer to it (iogp__replay_verify). */
size_t replay__xs_encode(const struct xstate *x, struct xrec *t, uint32_t i,
                         const iogp_msg *m, const uint8_t *rest, size_t restlen,
                         uint8_t *q0)
{
	const struct xsrc *s = i < x->n ? &x->src[i] : &xempty;
	uint64_t mode = 0;
	uint32_t k;
	int t0 = m->t0_ns == s->t1 ? T0_PREV_T1 :
	         m->t0_ns == s->t0 + s->step ? T0_STEP : T0_EXPLICIT;
	int same;
	mode |= i == x->n ? X_NEW : 0;
	mode |= m->flags != s->flags ? X_FLAGS : 0;
	mode |= m->seq != s->seq + 1 ? X_SEQ : 0;
	mode |= (uint64_t)t0 << X_T0_SHIFT;
	same = m->ncounters == s->nc;
	for (k = 0; same && k < s->nc; k++)
		same = m->counters[k].id == s->c[k].id;
	mode |= same ? 0 : X_CLIST;
	same = m->ngauges == s->ng;
	for (k = 0; same && k < s->ng; k++)
		same = m->gauges[k].id == s->g[k].id;
	mode |= same ? 0 : X_GLIST;
	same = m->nhists == s->nh;
	for (k = 0; same && k < s->nh; k++)
		same = m->hists[k].id == s->h[k].id;
	mode |= same ? 0 : X_HLIST;
	mode |= restlen ? X_REST : 0;
	mode |= m->dropped != s->dropped ? X_DROPPED : 0;
	mode |= m->access_seen != s->seen ? X_SEEN : 0;
	if (xs_choose(t, s, m, (mode & X_CLIST) != 0, (mode & X_HLIST) != 0) < 0)
		return 0;
	for (k = 0; k < m->ncounters; k++)
		if (t->cs[k] != ((mode & X_CLIST) ? 0 : s->cs[k]))
			mode |= X_CSEL;
	for (k = 0; k < m->nhists; k++)
		if (t->hs[k] != ((mode & X_HLIST) ? 0 : s->hs[k]))
			mode |= X_HSEL;

	uint8_t *q = vput(q0, mode);
	if (mode & X_NEW) {
		put64(q, m->source);
		q += 8;
	} else {
		q = vput(q, ZZ((uint64_t)i - x->next));
	}
	if (mode & X_FLAGS)
		q = vput(q, m->flags);
	if (mode & X_SEQ)
		q = vput(q, ZZ(m->seq - s->seq - 1));
	if (t0 == T0_EXPLICIT)
		q = vput(q, ZZ(m->t0_ns - s->t1));
	q = vput(q, ZZ(m->t1_ns - m->t0_ns - (m->t0_ns - s->t0)));
	q = vput(q, ZZ(m->wall_ns - s->wall - (m->t1_ns - s->t1)));
	if (mode & X_DROPPED)
		q = vput(q, ZZ(m->dropped - s->dropped));
	if (mode & X_SEEN)
		q = vput(q, ZZ(m->access_seen - s->seen));

	uint64_t next;
	if (mode & X_CLIST) {
		q = vput(q, m->ncounters);
		for (k = 0, next = 0; k < m->ncounters; k++) {
			q = vput(q, m->counters[k].id - next);
			next = (uint64_t)m->counters[k].id + 1;
		}
	}
	if (mode & X_CSEL)
		for (k = 0; k < m->ncounters; k++)
			q = vput(q, t->cs[k]);
	for (k = 0; k < m->ncounters; k++) {
		uint64_t pred = t->pv[k];
		if (t->cs[k])
			pred = xscale(pred, m->counters[t->cs[k] - 1].value, t->pv[t->cs[k] - 1]);
		q = vput(q, ZZ(m->counters[k].value - pred));
	}
	if (mode & X_GLIST) {
		q = vput(q, m->ngauges);
		for (k = 0, next = 0; k < m->ngauges; k++) {
			q = vput(q, m->gauges[k].id - next);
			next = (uint64_t)m->gauges[k].id + 1;
		}
	}
	uint32_t j;
	for (k = j = 0; k < m->ngauges; k++) {
		const iogp_gauge_val *g = &m->gauges[k];
		uint64_t pred = 0;
		if (!(mode & X_GLIST)) {
			pred = (uint64_t)s->g[k].value;
		} else {
			while (j < s->ng && s->g[j].id < g->id)
				j++;
			if (j < s->ng && s->g[j].id == g->id)
				pred = (uint64_t)s->g[j].value;
		}
		q = vput(q, ZZ((uint64_t)g->value - pred));
	}
	if (mode & X_HLIST) {
		q = vput(q, m->nhists);
		for (k = 0, next = 0; k < m->nhists; k++) {
			q = vput(q, m->hists[k].id - next);
			next = (uint64_t)m->hists[k].id + 1;
		}
	}
	if (mode & X_HSEL)
		for (k = 0; k < m->nhists; k++)
			q = vput(q, t->hs[k]);
	for (k = j = 0; k < m->nhists; k++) {
		const iogp_hist_val *h = &m->hists[k], *ph = NULL;
		if (!(mode & X_HLIST)) {
			ph = &s->h[k];
		} else {
			while (j < s->nh && s->h[j].id < h->id)
				j++;
			if (j < s->nh && s->h[j].id == h->id)
				ph = &s->h[j];
		}
		uint32_t tk = t->hs[k], np = ph ? ph->nbins : 0;
		if (xgrow((void **)&t->tmp, &t->tcap, 2 * (uint64_t)h->nbins + np + 1, sizeof *t->tmp) < 0)
			return 0;
		q = xenc_bins(q, ph ? ph->bins : NULL, np, h->bins, h->nbins, tk != 0,
		              tk ? m->counters[tk - 1].value : 0, t->tmp);
	}
	if (restlen) {
		q = vput(q, restlen);
		memcpy(q, rest, restlen);
		q += restlen;
	}
	return (size_t)(q - q0);
}

/* Room replay__xs_encode may need: every number a 10-byte varint. */
size_t replay__xs_bound(const struct xstate *x, uint32_t i, const iogp_msg *m,
                        size_t restlen)
{
	const struct xsrc *s = i < x->n ? &x->src[i] : &xempty;
	uint64_t n = 16 + 3 * (uint64_t)m->ncounters + 2 * (uint64_t)m->ngauges +
	             3 * (uint64_t)m->nhists + s->nb;
	for (uint32_t k = 0; k < m->nhists; k++)
		n += 2 * (uint64_t)m->hists[k].nbins;
	return (size_t)(10 * n + restlen);
}
