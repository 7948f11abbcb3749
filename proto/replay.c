/* replay.c - the .iogr replay file: buffered writer with zstd packs, damage-tolerant reader. */
#define _FILE_OFFSET_BITS 64
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "iogp_err.h"
#include "iogp_replay.h"
#include "iogp_wire.h"

#define F_PACK (1u << 31)
#define F_KEY (1u << 30)
#define F_NEWZ (1u << 29)
#define F_MARK (1u << 28)
#define F_RESERVED (1u << 27)
#define LEN_MASK (F_RESERVED - 1)

#define MAGIC_LEN 8
#define HDR_FIXED 26            /* header without the creator */
#define FRAME_HDR 16
#define INNER_HDR_MAX 20        /* two varints */
#define TRAILER_LEN 16
#define TRAILER_MAGIC "IOGRTAIL"
#define CREATOR_MAX 255
#define PACK_TARGET (64u << 10)
#define OUT_CAP (256u << 10)
#define WIN_CAP (256u << 10)
/* A pack holds at most PACK_TARGET bytes of records or one big record. */
#define CHUNK_MAX ((size_t)IOGP_REPLAY_MAX_RECORD + INNER_HDR_MAX + PACK_TARGET)
#define LEVEL_MAX 19            /* keeps the window within WINDOW_LOG_MAX */
#define WINDOW_LOG_MAX 23

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

__attribute__((format(printf, 3, 4)))
static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	if (!err || !errlen)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static int grow(uint8_t **buf, size_t *cap, size_t need, size_t first)
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

/* Varints as in the wire codec: LEB128, at most 10 bytes, minimal. */
static inline uint8_t *vput(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static inline int vget(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
	const uint8_t *p = *pp;
	if (p < end && *p < 0x80) {
		*v = *p;
		*pp = p + 1;
		return 0;
	}
	uint64_t r = 0;
	for (unsigned s = 0; s < 70 && p < end; s += 7) {
		uint8_t b = *p++;
		if (s == 63 && b > 1)
			return -1;
		r |= (uint64_t)(b & 0x7f) << s;
		if (b < 0x80) {
			if (!b)
				return -1;
			*v = r;
			*pp = p;
			return 0;
		}
	}
	return -1;
}

/* ------------------------------------------------ DELTA transform (packs) */

/* Inside one zstd frame a DELTA is stored as what its source's previous
 * DELTA in that frame does not predict (layout in iogp_replay.h). Writer and
 * reader keep the same per-source state; a new zstd frame clears it, so a
 * reader can start at any keyframe. The writer only stores a transform
 * after running the reader's own inverse on it and getting the payload's
 * bytes back, so what readers get never depends on the writer's choices
 * (of predictors, of edits) being right, only on the inverse being
 * deterministic. */
#define XF_MAX_SOURCES 16384
#define XF_SRC_ELEMS 16384          /* counters + gauges + hists + bins, one DELTA */
#define XF_TOTAL_ELEMS (2u << 20)   /* of all sources' state: ~16 bytes each */
#define XF_HASH (2 * XF_MAX_SOURCES)
#define REST_HDR 17                 /* a wire header with seq 0 */
/* Largest transform kept of a payload of len bytes (no DELTA is longer
 * than IOGP_MAX_PAYLOAD). */
#define XF_GROWTH(len) ((len) <= IOGP_MAX_PAYLOAD ? (len) + (len) / 4 + 64 : (len))

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

struct xstate {
	struct xsrc *src;
	uint32_t n, cap;        /* sources in this zstd frame; slots allocated */
	uint32_t next;          /* predicted source index: previous one + 1 */
	uint64_t elems;         /* state elements of the n sources */
	uint32_t *hash;         /* writer: source id -> index + 1 */
	int keyed;              /* writer: keep hash */
};

/* One DELTA rebuilt from its transform (or, writing, the predictors chosen
 * for one), and the scratch behind it. */
struct xrec {
	iogp_msg m;
	iogp_msg rest;
	uint8_t *restbuf;
	size_t restcap;
	iogp_counter_val *c;
	iogp_gauge_val *g;
	iogp_hist_val *h;
	iogp_bin *b;
	uint64_t *tmp, *pv;     /* edit lists; counters' last values */
	uint32_t *cs, *hs;      /* predictors */
	uint32_t ccap, gcap, hcap, bcap, tcap, pvcap, cscap, hscap;
	uint32_t slot;          /* source index; == xstate.n: a new source */
	uint8_t *out;           /* m encoded */
	size_t outcap, outlen;
};

static const struct xsrc xempty;

static void xs_reset(struct xstate *x)
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

static void xs_free(struct xstate *x)
{
	for (uint32_t i = 0; i < x->cap; i++)
		free(x->src[i].mem);
	free(x->src);
	free(x->hash);
	memset(x, 0, sizeof *x);
}

static void xr_free(struct xrec *o)
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
static uint32_t xs_find(const struct xstate *x, uint64_t id)
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
		while (q < np && pb[q].idx < b->idx)
			q++;
		VGET(v);
		uint64_t pred = q < np && pb[q].idx == b->idx ? pb[q].count : 0;
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

/* Rebuild into o->m the DELTA that body [p, end) encodes, given state x.
 * Nothing in x changes (xs_commit does that). */
static int xs_decode(const struct xstate *x, struct xrec *o, const uint8_t *p,
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

	/* anything else (labels, metrics, access samples, files) as wire sections */
	if (mode & X_REST) {
		VGET(v);
		if (v > (uint64_t)(end - p) || v > IOGP_MAX_PAYLOAD - REST_HDR)
			return IOGP_ECORRUPT;
		if (grow(&o->restbuf, &o->restcap, REST_HDR + v, 256) < 0)
			return IOGP_ENOMEM;
		memcpy(o->restbuf, "IOGW\1\2\0\0\0\0\0\0\0\0\0\0\0", REST_HDR);
		memcpy(o->restbuf + REST_HDR, p, v);
		p += v;
		int rc = iogp_msg_decode(&o->rest, o->restbuf, REST_HDR + v, NULL, 0);
		if (rc < 0)
			return rc == IOGP_ENOMEM ? rc : IOGP_ECORRUPT;
		const iogp_msg *r = &o->rest;
		if (r->t0_ns || r->t1_ns || r->wall_ns || r->ncounters || r->ngauges ||
		    r->nhists || r->dropped || r->access_seen)
			return IOGP_ECORRUPT;
		m->nlabels = r->nlabels;
		m->labels = r->labels;
		m->nmetrics = r->nmetrics;
		m->metrics = r->metrics;
		m->naccess = r->naccess;
		m->access = r->access;
		m->nfiles = r->nfiles;
		m->files = r->files;
	}
	if (p != end)
		return IOGP_ECORRUPT;
	uint64_t held = x->elems - (s == &xempty ? 0 : (uint64_t)s->nc + s->ng + s->nh + s->nb);
	if (held + elems > XF_TOTAL_ELEMS)
		return IOGP_ECORRUPT;
	return 0;
}

/* o->m encoded into o->out: the record's payload. */
static int xr_encode(struct xrec *o)
{
	if (!o->out && grow(&o->out, &o->outcap, 1024, 1024) < 0)
		return IOGP_ENOMEM;
	long n = iogp_msg_encode(&o->m, o->out, o->outcap);
	if (n == IOGP_ELIMIT) {
		n = iogp_msg_encode(&o->m, NULL, 0);
		if (n > 0 && grow(&o->out, &o->outcap, (size_t)n, 1024) < 0)
			return IOGP_ENOMEM;
		if (n > 0)
			n = iogp_msg_encode(&o->m, o->out, o->outcap);
	}
	if (n < 0)
		return IOGP_ECORRUPT;
	o->outlen = (size_t)n;
	return 0;
}

/* Make o->m (just decoded, with its predictors) its source's state. */
static int xs_commit(struct xstate *x, const struct xrec *o)
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

static uint8_t *xenc_bins(uint8_t *q, const iogp_bin *pb, uint32_t np,
                          const iogp_bin *nb, uint32_t n, int has_total, uint64_t total)
{
	uint32_t same = np == n, nrem = 0, nadd = 0, i, j;
	for (i = 0; same && i < n; i++)
		same = pb[i].idx == nb[i].idx;
	if (same) {
		*q++ = B_SAME;
	} else {
		for (i = j = 0; i < np || j < n;) {
			if (j == n || (i < np && pb[i].idx < nb[j].idx))
				nrem++, i++;
			else if (i == np || nb[j].idx < pb[i].idx)
				nadd++, j++;
			else
				i++, j++;
		}
		uint64_t next = 0;
		if (nrem + nadd < n) {
			*q++ = B_EDIT;
			q = vput(q, nrem);
			for (i = j = 0; i < np; i++) {
				while (j < n && nb[j].idx < pb[i].idx)
					j++;
				if (j == n || nb[j].idx != pb[i].idx) {
					q = vput(q, i - next);
					next = i + 1;
				}
			}
			q = vput(q, nadd);
			/* last: the index before in the new list */
			uint64_t kept = 0, slot = 0, last = 0;
			for (i = j = 0; j < n; j++) {
				while (i < np && pb[i].idx < nb[j].idx)
					i++;
				if (i < np && pb[i].idx == nb[j].idx) {
					kept++;
				} else {
					q = vput(q, kept - slot);
					q = vput(q, j ? nb[j].idx - last - 1 : nb[j].idx);
					slot = kept;
				}
				last = nb[j].idx;
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
	for (i = j = 0; j < last; j++) {
		while (i < np && pb[i].idx < nb[j].idx)
			i++;
		uint64_t pred = i < np && pb[i].idx == nb[j].idx ? pb[i].count : 0;
		q = vput(q, ZZ(nb[j].count - xscale(pred, total, ptotal)));
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
 * q, which has room for xs_bound bytes. rest: m's other sections. t:
 * scratch for the predictors. 0 when out of memory. */
static size_t xs_encode(const struct xstate *x, struct xrec *t, uint32_t i,
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
		uint32_t tk = t->hs[k];
		q = xenc_bins(q, ph ? ph->bins : NULL, ph ? ph->nbins : 0, h->bins, h->nbins,
		              tk != 0, tk ? m->counters[tk - 1].value : 0);
	}
	if (restlen) {
		q = vput(q, restlen);
		memcpy(q, rest, restlen);
		q += restlen;
	}
	return (size_t)(q - q0);
}

/* Room xs_encode may need: every number a 10-byte varint. */
static size_t xs_bound(const struct xstate *x, uint32_t i, const iogp_msg *m, size_t restlen)
{
	const struct xsrc *s = i < x->n ? &x->src[i] : &xempty;
	uint64_t n = 16 + 3 * (uint64_t)m->ncounters + 2 * (uint64_t)m->ngauges +
	             3 * (uint64_t)m->nhists + s->nb;
	for (uint32_t k = 0; k < m->nhists; k++)
		n += 2 * (uint64_t)m->hists[k].nbins;
	return (size_t)(10 * n + restlen);
}

/* ---------------------------------------------------------------- writer */

struct iogp_replay_writer {
	int fd;
	int compress;
	int failed;                 /* sticky error */
	uint64_t pos;               /* file size once out[] is written */
	uint8_t *out;               /* whole frames not yet written */
	size_t outlen, outcap;
	uint8_t *pack;              /* inner records not yet compressed */
	size_t packlen, packcap;
	uint64_t pack_first_ns, pack_last_ns;
	struct xstate xs;           /* DELTA transform state of the open zstd frame */
	struct xrec xr, xe;         /* the reader's side (a check); predictors */
	iogp_msg dm;
	uint8_t *xbuf, *rbuf;
	size_t xcap, rcap;
	uint64_t transformed;
	uint8_t *zbuf;
	size_t zcap;
	ZSTD_CCtx *cctx;
	int zopen;                  /* a zstd frame is under way */
	int in_kf;
	uint64_t kf_begin_pos, kf_end_pos;
	iogp_replay_kf *idx;
	size_t nidx, idxcap;
	iogp_replay_wstats st;
};

static int write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t k = write(fd, p, n);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return IOGP_EIO;
		}
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

static int drain(iogp_replay_writer *w)
{
	if (w->failed)
		return w->failed;
	if (w->outlen && write_all(w->fd, w->out, w->outlen) < 0)
		return w->failed = IOGP_EIO;
	w->outlen = 0;
	return 0;
}

static int emit_raw(iogp_replay_writer *w, const uint8_t *p, size_t n)
{
	if (!n)
		return 0;
	if (w->outlen + n > w->outcap) {
		int rc = drain(w);
		if (rc < 0)
			return rc;
	}
	if (n > w->outcap) {
		if (write_all(w->fd, p, n) < 0)
			return w->failed = IOGP_EIO;
	} else {
		memcpy(w->out + w->outlen, p, n);
		w->outlen += n;
	}
	w->pos += n;
	return 0;
}

/* One frame; the body may come in two pieces (magic + data). */
static int emit_frame(iogp_replay_writer *w, uint32_t flags, uint64_t recv_ns,
                      const void *b1, size_t n1, const void *b2, size_t n2)
{
	if (w->failed)
		return w->failed;
	size_t len = n1 + n2;
	if (len > IOGP_REPLAY_MAX_FRAME)
		return IOGP_ELIMIT;
	uint8_t h[FRAME_HDR];
	put32(h, (uint32_t)len | flags);
	put64(h + 8, recv_ns);
	uint32_t crc = iogp_crc32c(0, h, 4);
	crc = iogp_crc32c(crc, h + 8, 8);
	crc = iogp_crc32c(crc, b1, n1);
	crc = iogp_crc32c(crc, b2, n2);
	put32(h + 4, crc);
	int rc;
	if ((rc = emit_raw(w, h, sizeof h)) < 0 || (rc = emit_raw(w, b1, n1)) < 0 ||
	    (rc = emit_raw(w, b2, n2)) < 0)
		return rc;
	return 0;
}

/* Compress the buffered records into one pack frame. end: close the zstd
 * frame, so the next pack starts a new one. */
static int pack_flush(iogp_replay_writer *w, int end)
{
	if (w->failed)
		return w->failed;
	if (!w->packlen) {
		/* Nothing to carry the frame's epilogue: leave the frame open-ended;
		 * every chunk of it was flushed, so no reader needs its end. */
		if (end && w->zopen)
			ZSTD_CCtx_reset(w->cctx, ZSTD_reset_session_only);
		if (end) {
			w->zopen = 0;
			xs_reset(&w->xs);
		}
		return 0;
	}
	if (grow(&w->zbuf, &w->zcap, 4 + ZSTD_compressBound(w->packlen) + 64, 1024) < 0)
		return w->failed = IOGP_ENOMEM;
	memcpy(w->zbuf, "IOGZ", 4);
	uint32_t flags = F_PACK | (w->in_kf ? F_KEY : 0) | (w->zopen ? 0 : F_NEWZ);
	ZSTD_inBuffer in = { w->pack, w->packlen, 0 };
	ZSTD_outBuffer out = { w->zbuf, w->zcap, 4 };
	for (;;) {
		size_t rem = ZSTD_compressStream2(w->cctx, &out, &in,
		                                  end ? ZSTD_e_end : ZSTD_e_flush);
		if (ZSTD_isError(rem))
			return w->failed = IOGP_ENOMEM;
		if (!rem)
			break;
		if (grow(&w->zbuf, &w->zcap, w->zcap + 1, 1024) < 0)
			return w->failed = IOGP_ENOMEM;
		out.dst = w->zbuf;
		out.size = w->zcap;
	}
	w->zopen = !end;
	w->packlen = 0;
	if (end)
		xs_reset(&w->xs);
	return emit_frame(w, flags, w->pack_first_ns, w->zbuf, out.pos, NULL, 0);
}

static void writer_free(iogp_replay_writer *w)
{
	xs_free(&w->xs);
	xr_free(&w->xr);
	xr_free(&w->xe);
	iogp_msg_free(&w->dm);
	free(w->xbuf);
	free(w->rbuf);
	ZSTD_freeCCtx(w->cctx);
	free(w->out);
	free(w->pack);
	free(w->zbuf);
	free(w->idx);
	free(w);
}

int iogp_replay_create(iogp_replay_writer **wp, const char *path,
                       const iogp_replay_wopts *opts, char *err, size_t errlen)
{
	if (!wp || !path) {
		set_err(err, errlen, "no path given");
		return IOGP_EINVAL;
	}
	*wp = NULL;
	iogp_replay_wopts o = { .creator = "libiogram-proto", .compress = 1 };
	if (opts)
		o = *opts;
	iogp_replay_writer *w = calloc(1, sizeof *w);
	if (!w || !(w->out = malloc(OUT_CAP))) {
		free(w);
		set_err(err, errlen, "out of memory");
		return IOGP_ENOMEM;
	}
	w->fd = -1;
	w->outcap = OUT_CAP;
	w->xs.keyed = 1;
	w->compress = o.compress != 0;
	if (w->compress) {
		int level = o.zstd_level ? o.zstd_level : 3;
		if (level > LEVEL_MAX)
			level = LEVEL_MAX;
		if (level < ZSTD_minCLevel())
			level = ZSTD_minCLevel();
		if (!(w->cctx = ZSTD_createCCtx()) ||
		    ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, level)) ||
		    ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_checksumFlag, 0))) {
			writer_free(w);
			set_err(err, errlen, "cannot set up zstd compression");
			return IOGP_ENOMEM;
		}
	}
	/* a recording is the user's own: 0600, never through a link, never
	 * over an existing file unless asked, never into a FIFO or device */
	struct stat ls;
	int exists = lstat(path, &ls) == 0;
	if (exists && (!o.replace || !S_ISREG(ls.st_mode))) {
		int e = !S_ISREG(ls.st_mode) ? EINVAL : EEXIST;
		set_err(err, errlen, S_ISLNK(ls.st_mode) ? "%s is a symbolic link: not written through"
		        : !S_ISREG(ls.st_mode) ? "%s is not a regular file" :
		        "%s exists (use --force to replace it)", path);
		writer_free(w);
		errno = e;
		return IOGP_EIO;
	}
	w->fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW |
	             (exists ? O_TRUNC : O_EXCL), 0600);
	if (w->fd >= 0 && exists && fchmod(w->fd, 0600) < 0) {
		close(w->fd);   /* cannot make the replaced file private: refuse */
		w->fd = -1;
	}
	if (w->fd < 0) {
		int e = errno;
		set_err(err, errlen, "cannot create %s: %s", path, strerror(e));
		writer_free(w);
		errno = e;
		return IOGP_EIO;
	}

	const char *creator = o.creator ? o.creator : "";
	size_t clen = strnlen(creator, CREATOR_MAX);
	uint8_t h[HDR_FIXED + CREATOR_MAX];
	size_t hl = HDR_FIXED + clen;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	memcpy(h, IOGP_REPLAY_MAGIC, MAGIC_LEN);
	put16(h + 8, IOGP_REPLAY_VERSION);
	put16(h + 10, (uint16_t)hl);
	put64(h + 12, (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
	put16(h + 20, (uint16_t)clen);
	memcpy(h + 22, creator, clen);
	put32(h + 22 + clen, iogp_crc32c(0, h, hl - 4));
	/* Written at once, so even a file cut short right away says what it is. */
	if (emit_raw(w, h, hl) < 0 || drain(w) < 0) {
		int e = errno;
		set_err(err, errlen, "cannot write %s: %s", path, strerror(e));
		close(w->fd);
		writer_free(w);
		errno = e;
		return IOGP_EIO;
	}
	w->kf_end_pos = w->pos;
	w->st.file_bytes = w->pos;
	*wp = w;
	return 0;
}

/* Transform payload (a DELTA) into w->xbuf if that is smaller and reads
 * back exactly; returns its length, or 0 to store the payload as it is. */
static size_t xf_try(iogp_replay_writer *w, const uint8_t *payload, size_t len)
{
	iogp_kind kind;
	if (iogp_msg_peek(payload, len, &kind, NULL, NULL, NULL) < 0 || kind != IOGP_DELTA ||
	    iogp_msg_decode(&w->dm, payload, len, NULL, 0) < 0)
		return 0;
	const iogp_msg *m = &w->dm;
	uint64_t elems = (uint64_t)m->ncounters + m->ngauges + m->nhists;
	for (uint32_t k = 0; k < m->nhists && elems <= XF_SRC_ELEMS; k++)
		elems += m->hists[k].nbins;
	if (elems > XF_SRC_ELEMS)
		return 0;
	uint32_t i = xs_find(&w->xs, m->source);
	if (i == w->xs.n && i >= XF_MAX_SOURCES)
		return 0;
	size_t restlen = 0;
	if (m->nlabels || m->nmetrics || m->naccess || m->nfiles) {
		iogp_msg r = { .kind = IOGP_DELTA, .nlabels = m->nlabels, .labels = m->labels,
		               .nmetrics = m->nmetrics, .metrics = m->metrics,
		               .naccess = m->naccess, .access = m->access,
		               .nfiles = m->nfiles, .files = m->files };
		long n = iogp_msg_encode(&r, NULL, 0);
		if (n <= REST_HDR || grow(&w->rbuf, &w->rcap, (size_t)n, 1024) < 0 ||
		    iogp_msg_encode(&r, w->rbuf, w->rcap) != n)
			return 0;
		restlen = (size_t)n - REST_HDR;
	}
	if (grow(&w->xbuf, &w->xcap, xs_bound(&w->xs, i, m, restlen), 1024) < 0)
		return 0;
	size_t n = xs_encode(&w->xs, &w->xe, i, m, w->rbuf + REST_HDR, restlen, w->xbuf);
	/* A source's first DELTA in a frame may grow a little (its id, values
	 * from zero) but sets up the prediction of the next ones. */
	if (!n || n > XF_GROWTH(len) || xs_decode(&w->xs, &w->xr, w->xbuf, w->xbuf + n) < 0 ||
	    xr_encode(&w->xr) < 0 || w->xr.outlen != len || memcmp(w->xr.out, payload, len) ||
	    xs_commit(&w->xs, &w->xr) < 0)
		return 0;
	w->transformed++;
	return n;
}

int iogp_replay_write(iogp_replay_writer *w, uint64_t recv_ns,
                      const void *payload, size_t len)
{
	if (!w || (!payload && len) || recv_ns == UINT64_MAX)
		return IOGP_EINVAL;
	if (w->failed)
		return w->failed;
	if (len > IOGP_REPLAY_MAX_RECORD)
		return IOGP_ELIMIT;
	int rc;
	if (w->compress) {
		/* Room first: once transformed, the record must be written, or
		 * the next ones would be predicted from what no reader sees. */
		if (grow(&w->pack, &w->packcap, w->packlen + INNER_HDR_MAX + XF_GROWTH(len),
		         PACK_TARGET * 2) < 0)
			return IOGP_ENOMEM;
		const uint8_t *body = payload;
		size_t blen = xf_try(w, payload, len);
		uint64_t form = blen ? 1 : 0;
		if (blen)
			body = w->xbuf;
		else
			blen = len;
		if (w->packlen && w->packlen + INNER_HDR_MAX + blen > PACK_TARGET &&
		    (rc = pack_flush(w, 0)) < 0)
			return rc;
		if (!w->packlen)
			w->pack_first_ns = w->pack_last_ns = recv_ns;
		uint8_t *p = w->pack + w->packlen;
		p = vput(p, (uint64_t)blen << 2 | form);
		p = vput(p, iogp_zigzag((int64_t)(recv_ns - w->pack_last_ns)));
		if (blen)
			memcpy(p, body, blen);
		w->packlen = (size_t)(p - w->pack) + blen;
		w->pack_last_ns = recv_ns;
		if (w->packlen >= PACK_TARGET && (rc = pack_flush(w, 0)) < 0)
			return rc;
	} else if ((rc = emit_frame(w, w->in_kf ? F_KEY : 0, recv_ns, payload, len,
	                            NULL, 0)) < 0) {
		return rc;
	}
	w->st.records++;
	w->st.payload_bytes += len;
	return 0;
}

int iogp_replay_keyframe_begin(iogp_replay_writer *w, uint64_t recv_ns)
{
	if (!w || w->in_kf || recv_ns == UINT64_MAX)
		return IOGP_EINVAL;
	int rc;
	if (w->compress && (rc = pack_flush(w, 1)) < 0)
		return rc;
	if (w->failed)
		return w->failed;
	if (w->nidx == w->idxcap) {
		size_t n = w->idxcap ? w->idxcap * 2 : 64;
		iogp_replay_kf *k = realloc(w->idx, n * sizeof *k);
		if (!k)
			return IOGP_ENOMEM;
		w->idx = k;
		w->idxcap = n;
	}
	uint64_t at = w->pos;
	if ((rc = emit_frame(w, F_MARK, recv_ns, "IOGK", 4, NULL, 0)) < 0)
		return rc;
	w->idx[w->nidx++] = (iogp_replay_kf){ .offset = at, .recv_ns = recv_ns };
	w->kf_begin_pos = at;
	w->in_kf = 1;
	w->st.keyframes++;
	return 0;
}

int iogp_replay_keyframe_end(iogp_replay_writer *w)
{
	if (!w || !w->in_kf)
		return IOGP_EINVAL;
	int rc;
	if (w->compress && (rc = pack_flush(w, 0)) < 0)
		return rc;
	w->in_kf = 0;
	w->kf_end_pos = w->pos;
	w->st.last_keyframe_bytes = w->pos - w->kf_begin_pos;
	return 0;
}

int iogp_replay_flush(iogp_replay_writer *w)
{
	if (!w)
		return IOGP_EINVAL;
	int rc;
	if (w->compress && (rc = pack_flush(w, 0)) < 0)
		return rc;
	return drain(w);
}

int iogp_replay_close(iogp_replay_writer *w)
{
	if (!w)
		return IOGP_EINVAL;
	int rc = 0;
	if (w->in_kf)
		rc = iogp_replay_keyframe_end(w);
	if (rc >= 0 && w->compress)
		rc = pack_flush(w, 1);
	/* Too many keyframes for one frame (years of them): readers scan. */
	size_t body = 4 + w->nidx * 16;
	if (rc >= 0 && !w->failed && body <= IOGP_REPLAY_MAX_FRAME) {
		uint8_t *b = malloc(body);
		if (!b) {
			rc = IOGP_ENOMEM;
		} else {
			memcpy(b, "IOGX", 4);
			for (size_t i = 0; i < w->nidx; i++) {
				put64(b + 4 + 16 * i, w->idx[i].offset);
				put64(b + 12 + 16 * i, w->idx[i].recv_ns);
			}
			uint64_t at = w->pos;
			rc = emit_frame(w, 0, UINT64_MAX, b, body, NULL, 0);
			free(b);
			uint8_t t[TRAILER_LEN];
			put64(t, at);
			memcpy(t + 8, TRAILER_MAGIC, 8);
			if (rc >= 0)
				rc = emit_raw(w, t, sizeof t);
		}
	}
	int rc2 = drain(w);
	if (rc >= 0)
		rc = rc2;
	if (close(w->fd) < 0 && rc >= 0)
		rc = IOGP_EIO;
	writer_free(w);
	return rc < 0 ? rc : 0;
}

void iogp_replay_abandon(iogp_replay_writer *w)
{
	if (!w)
		return;
	close(w->fd);
	writer_free(w);
}

/* Private (tests, benchmarks): DELTAs stored transformed so far. */
uint64_t iogp__replay_transformed(const iogp_replay_writer *w);
uint64_t iogp__replay_transformed(const iogp_replay_writer *w)
{
	return w ? w->transformed : 0;
}

void iogp_replay_writer_stats(const iogp_replay_writer *w, iogp_replay_wstats *st)
{
	if (!w || !st)
		return;
	*st = w->st;
	st->file_bytes = w->pos;
	st->bytes_since_keyframe = w->pos - w->kf_end_pos;
}

/* ---------------------------------------------------------------- reader */

struct iogp_replay_reader {
	int fd;                     /* -1: reading mem */
	const uint8_t *mem;
	uint64_t size;
	uint64_t hdr_len;
	uint64_t data_end;          /* the index frame's offset, or size */
	iogp_replay_info info;
	uint8_t *win;               /* a window on the file at win_off */
	uint64_t win_off;
	size_t win_len;
	uint8_t *big;               /* frames larger than the window */
	size_t big_cap;
	int io_errno;

	uint64_t pos;               /* next frame */
	ZSTD_DCtx *dctx;
	int zok;                    /* dctx continues the previous pack */
	uint8_t *ibuf;              /* the current pack, inflated */
	size_t icap, ilen, ipos;
	uint64_t ioff, ifsz, ilast_ns;
	uint32_t iflags;
	struct xstate xs;           /* DELTA transform state of the current zstd frame */
	struct xrec xr;
	int kf_pending;             /* a marker was read, its first record not yet */

	iogp_replay_kf *kf;
	size_t nkf;
	iogp_replay_rstats st;
};

/* Bytes [off, off + n) of the file, or NULL if they are not all there. The
 * pointer is valid until the next call. */
static const uint8_t *rd(iogp_replay_reader *r, uint64_t off, size_t n)
{
	if (off > r->size || n > r->size - off)
		return NULL;
	if (r->mem)
		return r->mem + off;
	if (off >= r->win_off && off - r->win_off + n <= r->win_len)
		return r->win + (off - r->win_off);
	uint8_t *dst;
	size_t want;
	if (n <= WIN_CAP) {
		dst = r->win;
		want = r->size - off < WIN_CAP ? (size_t)(r->size - off) : WIN_CAP;
		r->win_len = 0;
	} else {
		if (grow(&r->big, &r->big_cap, n, WIN_CAP) < 0) {
			r->io_errno = ENOMEM;
			return NULL;
		}
		dst = r->big;
		want = n;
	}
	size_t got = 0;
	while (got < want) {
		ssize_t k = pread(r->fd, dst + got, want - got, (off_t)(off + got));
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			/* The file shrank under us or cannot be read. */
			r->io_errno = k < 0 ? errno : EIO;
			return NULL;
		}
		got += (size_t)k;
	}
	if (dst == r->win) {
		r->win_off = off;
		r->win_len = got;
	}
	return dst;
}

struct frame {
	uint64_t off;
	uint32_t flags, len;
	uint64_t recv_ns;
	const uint8_t *body;
};

enum { FR_OK, FR_SHORT, FR_BADLEN, FR_BADCRC, FR_IO };

/* Is there a whole frame at p, ending by end, whose CRC verifies? */
static int frame_at(iogp_replay_reader *r, uint64_t p, uint64_t end, struct frame *f)
{
	if (p > end || end - p < FRAME_HDR)
		return FR_SHORT;
	const uint8_t *h = rd(r, p, FRAME_HDR);
	if (!h)
		return FR_IO;
	uint32_t word = get32(h), crc = get32(h + 4);
	f->off = p;
	f->len = word & LEN_MASK;
	f->flags = word & ~LEN_MASK;
	f->recv_ns = get64(h + 8);
	if ((word & F_RESERVED) || f->len > IOGP_REPLAY_MAX_FRAME)
		return FR_BADLEN;
	if (end - p - FRAME_HDR < f->len)
		return FR_SHORT;
	const uint8_t *b = rd(r, p, FRAME_HDR + f->len);
	if (!b)
		return FR_IO;
	if (iogp_crc32c(iogp_crc32c(0, b, 4), b + 8, 8 + (size_t)f->len) != crc)
		return FR_BADCRC;
	f->body = b + FRAME_HDR;
	return FR_OK;
}

/* Could this length word start a frame this version writes? */
static int plausible(uint32_t word)
{
	uint32_t len = word & LEN_MASK, fl = word & ~LEN_MASK;
	if (len > IOGP_REPLAY_MAX_FRAME)
		return 0;
	if (fl & F_PACK)
		return !(fl & (F_MARK | F_RESERVED));
	return fl == 0 || fl == F_KEY || (fl == F_MARK && len == 4);
}

/* First offset from `from` where a verified frame starts, or end. Only a
 * plausible length word costs a CRC, and only a matching CRC is accepted.
 * Candidates above RESYNC_SMALL share a CRC budget of RESYNC_BASE +
 * RESYNC_RATE x the bytes scanned, so noise or text claiming huge lengths
 * keeps the scan linear (a big frame right after such damage may be passed
 * over, losing one more record). */
#define RESYNC_SMALL (64u << 10)
#define RESYNC_BASE (8u << 20)
#define RESYNC_RATE 64
static uint64_t resync(iogp_replay_reader *r, uint64_t from, uint64_t end)
{
	struct frame f;
	uint64_t q = from, spent = 0;
	while (q < end && end - q >= FRAME_HDR) {
		/* Half a window: stepping on after a candidate rarely re-reads. */
		size_t n = end - q < WIN_CAP / 2 ? (size_t)(end - q) : WIN_CAP / 2;
		const uint8_t *b = rd(r, q, n);
		if (!b)
			break;
		size_t last = n - FRAME_HDR, i;
		for (i = 0; i <= last; i++) {
			uint32_t word = get32(b + i);
			uint64_t at = q + i, cost = FRAME_HDR + (uint64_t)(word & LEN_MASK);
			if (!plausible(word) || end - at < cost)
				continue;
			if (cost > RESYNC_SMALL) {
				if (spent + cost > RESYNC_BASE + (at - from) * RESYNC_RATE)
					continue;
				spent += cost;
			}
			int k = frame_at(r, at, end, &f);
			if (k == FR_OK)
				return at;
			if (k == FR_IO)
				return end;
			break;  /* b may be stale now */
		}
		q += i + 1;
	}
	return end;
}

static int is_index(const struct frame *f)
{
	return f->recv_ns == UINT64_MAX && !f->flags && f->len >= 4 &&
	       !memcmp(f->body, "IOGX", 4);
}

/* The next verified frame at or after r->pos; damage is skipped and counted
 * in st. IOGP_EEOF at the end of the data. */
static int next_frame(iogp_replay_reader *r, struct frame *f, iogp_replay_rstats *st)
{
	for (;;) {
		uint64_t p = r->pos, end = r->data_end;
		if (p >= end)
			return IOGP_EEOF;
		int k = frame_at(r, p, end, f);
		if (k == FR_IO)
			return IOGP_EIO;
		if (k == FR_OK) {
			r->pos = p + FRAME_HDR + f->len;
			if (is_index(f)) {
				/* Only reached when scanning: with a valid trailer data_end
				 * stops before it. What follows is a broken trailer. */
				st->skipped_bytes += end - r->pos;
				r->pos = end;
				return IOGP_EEOF;
			}
			st->frames++;
			return 0;
		}
		/* A torn tail: the header or the body runs past the end. Unless a
		 * good frame or the index follows, which makes it damage. */
		int damaged = k != FR_SHORT || r->info.index_found;
		uint64_t q;
		struct frame g;
		if (k == FR_SHORT && end - p < FRAME_HDR) {
			q = end;
		} else if (k == FR_BADCRC) {
			/* The length may be right: trust it if a good frame (or the
			 * end) follows, so only this record is lost. */
			uint64_t nx = p + FRAME_HDR + f->len;
			if (nx == end || frame_at(r, nx, end, &g) == FR_OK)
				q = nx;
			else
				q = resync(r, p + 1, end);
		} else {
			q = resync(r, p + 1, end);
		}
		if (r->io_errno)
			return IOGP_EIO;
		if (q < end || damaged)
			st->bad_frames++;
		/* A pack may be lost, so the next cannot continue its stream; a
		 * keyframe's first record may be lost, so none is marked first. */
		r->zok = 0;
		r->kf_pending = 0;
		st->skipped_bytes += q - p;
		r->pos = q;
	}
}

static void reset_position(iogp_replay_reader *r, uint64_t pos)
{
	r->pos = pos;
	r->zok = 0;
	r->ilen = r->ipos = 0;
	r->kf_pending = 0;
}

static int inflate_pack(iogp_replay_reader *r, const uint8_t *src, size_t n)
{
	ZSTD_inBuffer in = { src, n, 0 };
	ZSTD_outBuffer out = { r->ibuf, r->icap, 0 };
	int ended = 0;
	for (;;) {
		if (out.pos == out.size) {
			/* The writer never makes a bigger pack: a bomb, refused. */
			if (r->icap >= CHUNK_MAX)
				return IOGP_ELIMIT;
			size_t nc = r->icap ? r->icap * 2 : 4 * PACK_TARGET;
			if (nc > CHUNK_MAX)
				nc = CHUNK_MAX;
			uint8_t *b = realloc(r->ibuf, nc);
			if (!b)
				return IOGP_ENOMEM;
			r->ibuf = b;
			r->icap = nc;
			out.dst = b;
			out.size = nc;
		}
		size_t ret = ZSTD_decompressStream(r->dctx, &out, &in);
		if (ZSTD_isError(ret))
			return IOGP_ECORRUPT;
		if (!ret) {
			if (in.pos < in.size)
				return IOGP_ECORRUPT;
			ended = 1;
			break;
		}
		if (in.pos == in.size && out.pos < out.size)
			break;
	}
	/* Only whole inner records, or the pack is damage. */
	const uint8_t *p = r->ibuf, *end = r->ibuf + out.pos;
	while (p < end) {
		uint64_t head, dt;
		if (vget(&p, end, &head) < 0 || vget(&p, end, &dt) < 0 || (head & 3) > 1 ||
		    head >> 2 > IOGP_REPLAY_MAX_RECORD || head >> 2 > (uint64_t)(end - p))
			return IOGP_ECORRUPT;
		p += head >> 2;
	}
	r->ilen = out.pos;
	r->ipos = 0;
	if (ended)
		r->zok = 0;
	return 0;
}

/* Made on the first pack: plain files never need one. */
static int make_dctx(iogp_replay_reader *r)
{
	if (!(r->dctx = ZSTD_createDCtx()))
		return IOGP_ENOMEM;
	if (ZSTD_isError(ZSTD_DCtx_setParameter(r->dctx, ZSTD_d_windowLogMax,
	                                        WINDOW_LOG_MAX))) {
		ZSTD_freeDCtx(r->dctx);
		r->dctx = NULL;
		return IOGP_ENOMEM;
	}
	return 0;
}

int iogp_replay_next(iogp_replay_reader *r, iogp_replay_rec *rec)
{
	if (!r || !rec)
		return IOGP_EINVAL;
	for (;;) {
		if (r->ipos < r->ilen) {
			const uint8_t *p = r->ibuf + r->ipos, *end = r->ibuf + r->ilen;
			uint64_t head = 0, dt = 0;
			vget(&p, end, &head);   /* checked by inflate_pack */
			vget(&p, end, &dt);
			size_t blen = (size_t)(head >> 2);
			r->ipos = (size_t)(p - r->ibuf) + blen;
			r->ilast_ns += (uint64_t)iogp_unzigzag(dt);
			if (head & 1) {
				int rc = xs_decode(&r->xs, &r->xr, p, p + blen);
				if (rc >= 0)
					rc = xr_encode(&r->xr);
				if (rc >= 0)
					rc = xs_commit(&r->xs, &r->xr);
				if (rc < 0) {
					/* The rest of its zstd frame depends on this record. */
					r->zok = 0;
					r->ilen = r->ipos = 0;
					r->kf_pending = 0;
					if (rc == IOGP_ENOMEM)
						return rc;
					r->st.bad_frames++;
					r->st.skipped_bytes += r->ifsz;
					continue;
				}
				rec->payload = r->xr.out;
				rec->len = r->xr.outlen;
			} else {
				rec->payload = p;
				rec->len = blen;
			}
			rec->recv_ns = r->ilast_ns;
			rec->keyframe = (r->iflags & F_KEY) != 0;
			rec->keyframe_start = rec->keyframe && r->kf_pending;
			rec->offset = r->ioff;
			r->kf_pending = 0;
			break;
		}
		struct frame f;
		int rc = next_frame(r, &f, &r->st);
		if (rc < 0)
			return rc;
		uint64_t fsz = FRAME_HDR + (uint64_t)f.len;
		if (f.flags == F_MARK && f.len == 4 && !memcmp(f.body, "IOGK", 4)) {
			r->kf_pending = 1;
			r->st.keyframes++;
			continue;
		}
		if ((f.flags & F_PACK) && !(f.flags & F_MARK)) {
			if (f.len < 4 || memcmp(f.body, "IOGZ", 4)) {
				r->st.bad_frames++;
				r->st.skipped_bytes += fsz;
				r->zok = 0;
				continue;
			}
			if (!r->dctx && (rc = make_dctx(r)) < 0)
				return rc;
			if (f.flags & F_NEWZ) {
				ZSTD_DCtx_reset(r->dctx, ZSTD_reset_session_only);
				xs_reset(&r->xs);
				r->zok = 1;
			}
			if (!r->zok) {
				/* Its zstd frame began before a damaged pack (or a seek):
				 * unreadable until the next frame starts. */
				r->st.skipped_bytes += fsz;
				r->kf_pending = 0;
				continue;
			}
			if ((rc = inflate_pack(r, f.body + 4, f.len - 4)) < 0) {
				if (rc == IOGP_ENOMEM)
					return rc;
				r->st.bad_frames++;
				r->st.skipped_bytes += fsz;
				r->zok = 0;
				r->ilen = r->ipos = 0;
				continue;
			}
			r->ioff = f.off;
			r->ifsz = fsz;
			r->ilast_ns = f.recv_ns;
			r->iflags = f.flags;
			if (!(f.flags & F_KEY))
				r->kf_pending = 0;
			continue;
		}
		if ((f.flags & ~F_KEY) || f.recv_ns == UINT64_MAX) {
			/* Verified but of a kind this version does not write. */
			r->st.skipped_bytes += fsz;
			continue;
		}
		rec->recv_ns = f.recv_ns;
		rec->payload = f.body;
		rec->len = f.len;
		rec->keyframe = (f.flags & F_KEY) != 0;
		rec->keyframe_start = rec->keyframe && r->kf_pending;
		rec->offset = f.off;
		r->kf_pending = 0;
		break;
	}
	if (!r->st.records)
		r->st.first_ns = rec->recv_ns;
	r->st.last_ns = rec->recv_ns;
	r->st.records++;
	return 0;
}

int iogp_replay_rewind(iogp_replay_reader *r)
{
	if (!r)
		return IOGP_EINVAL;
	reset_position(r, r->hdr_len);
	memset(&r->st, 0, sizeof r->st);
	return 0;
}

size_t iogp_replay_keyframes(iogp_replay_reader *r, const iogp_replay_kf **kf)
{
	if (kf)
		*kf = r ? r->kf : NULL;
	return r ? r->nkf : 0;
}

int iogp_replay_seek(iogp_replay_reader *r, uint64_t recv_ns)
{
	if (!r)
		return IOGP_EINVAL;
	size_t best = SIZE_MAX;
	for (size_t i = 0; i < r->nkf; i++)
		if (r->kf[i].recv_ns <= recv_ns &&
		    (best == SIZE_MAX || r->kf[i].recv_ns >= r->kf[best].recv_ns))
			best = i;
	reset_position(r, best == SIZE_MAX ? r->hdr_len : r->kf[best].offset);
	return 0;
}

void iogp_replay_reader_stats(const iogp_replay_reader *r, iogp_replay_rstats *st)
{
	if (r && st)
		*st = r->st;
}

void iogp_replay_get_info(const iogp_replay_reader *r, iogp_replay_info *info)
{
	if (r && info)
		*info = r->info;
}

static int check_header(iogp_replay_reader *r, const char *name, char *err, size_t errlen)
{
	if (!r->size) {
		set_err(err, errlen, "%s: empty file (0 bytes), not an iogram replay file", name);
		return IOGP_ETRUNC;
	}
	size_t n = r->size < MAGIC_LEN ? (size_t)r->size : MAGIC_LEN;
	const uint8_t *h = rd(r, 0, n);
	if (!h)
		goto io;
	if (memcmp(h, IOGP_REPLAY_MAGIC, n)) {
		set_err(err, errlen, "%s: not an iogram replay file (bad magic)", name);
		return IOGP_EMAGIC;
	}
	if (r->size < 12 || !(h = rd(r, 0, 12))) {
		if (r->io_errno)
			goto io;
		set_err(err, errlen, "%s: truncated header (file is %llu bytes)", name,
		        (unsigned long long)r->size);
		return IOGP_ETRUNC;
	}
	unsigned version = get16(h + 8), hl = get16(h + 10);
	if (hl < HDR_FIXED) {
		set_err(err, errlen, "%s: corrupt header (length %u)", name, hl);
		return IOGP_ECORRUPT;
	}
	if (hl > r->size) {
		set_err(err, errlen, "%s: truncated header (%u bytes, file is %llu)", name,
		        hl, (unsigned long long)r->size);
		return IOGP_ETRUNC;
	}
	if (!(h = rd(r, 0, hl)))
		goto io;
	if (iogp_crc32c(0, h, hl - 4) != get32(h + hl - 4)) {
		set_err(err, errlen, "%s: corrupt header (checksum mismatch)", name);
		return IOGP_ECRC;
	}
	if (version > IOGP_REPLAY_VERSION) {
		set_err(err, errlen, "%s: file format version %u is newer than this "
		        "iogram reads (%d); use a newer iogram", name, version,
		        IOGP_REPLAY_VERSION);
		return IOGP_EVERSION;
	}
	unsigned clen = get16(h + 20);
	if (!version || HDR_FIXED + clen > hl) {
		set_err(err, errlen, "%s: corrupt header (version %u, creator length %u)",
		        name, version, clen);
		return IOGP_ECORRUPT;
	}
	r->info.version = (uint16_t)version;
	r->info.created_ns = get64(h + 12);
	size_t keep = clen < sizeof r->info.creator ? clen : sizeof r->info.creator - 1;
	for (size_t i = 0; i < keep; i++) {
		uint8_t c = h[22 + i];
		/* Shown on terminals: no control bytes from a hostile file. */
		r->info.creator[i] = (char)(c < 0x20 || c == 0x7f ? '?' : c);
	}
	r->info.creator[keep] = 0;
	r->info.file_bytes = r->size;
	r->hdr_len = hl;
	return 0;
io:
	set_err(err, errlen, "cannot read %s: %s", name, strerror(r->io_errno));
	return IOGP_EIO;
}

/* The index named by the trailer, if everything about it checks out. */
static int load_index(iogp_replay_reader *r)
{
	if (r->size < r->hdr_len + FRAME_HDR + 4 + TRAILER_LEN)
		return 0;
	const uint8_t *t = rd(r, r->size - TRAILER_LEN, TRAILER_LEN);
	if (!t || memcmp(t + 8, TRAILER_MAGIC, 8))
		return 0;
	uint64_t at = get64(t), end = r->size - TRAILER_LEN;
	struct frame f;
	if (at < r->hdr_len || at > end || frame_at(r, at, end, &f) != FR_OK ||
	    at + FRAME_HDR + f.len != end || !is_index(&f) || (f.len - 4) % 16)
		return 0;
	size_t n = (f.len - 4) / 16;
	iogp_replay_kf *kf = malloc(n ? n * sizeof *kf : 1);
	if (!kf)
		return IOGP_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		kf[i].offset = get64(f.body + 4 + 16 * i);
		kf[i].recv_ns = get64(f.body + 12 + 16 * i);
		if (kf[i].offset < r->hdr_len || kf[i].offset >= at ||
		    (i && kf[i].offset <= kf[i - 1].offset)) {
			free(kf);
			return 0;
		}
	}
	r->kf = kf;
	r->nkf = n;
	r->data_end = at;
	return 1;
}

/* No usable index: find the keyframe markers by walking every frame. */
static int scan_keyframes(iogp_replay_reader *r)
{
	iogp_replay_rstats junk = { 0 };
	size_t cap = 0;
	struct frame f;
	int rc;
	reset_position(r, r->hdr_len);
	while ((rc = next_frame(r, &f, &junk)) == 0) {
		if (f.flags != F_MARK || f.len != 4 || memcmp(f.body, "IOGK", 4))
			continue;
		if (r->nkf == cap) {
			size_t n = cap ? cap * 2 : 64;
			iogp_replay_kf *k = realloc(r->kf, n * sizeof *k);
			if (!k)
				return IOGP_ENOMEM;
			r->kf = k;
			cap = n;
		}
		r->kf[r->nkf++] = (iogp_replay_kf){ .offset = f.off, .recv_ns = f.recv_ns };
	}
	reset_position(r, r->hdr_len);
	return rc == IOGP_EEOF ? 0 : rc;
}

static int reader_open(iogp_replay_reader **rp, int fd, const uint8_t *mem,
                       uint64_t size, const char *name, char *err, size_t errlen)
{
	iogp_replay_reader *r = calloc(1, sizeof *r);
	if (!r || (fd >= 0 && !(r->win = malloc(WIN_CAP)))) {
		if (r)
			free(r->win);
		free(r);
		if (fd >= 0)
			close(fd);
		set_err(err, errlen, "out of memory");
		return IOGP_ENOMEM;
	}
	r->fd = fd;
	r->mem = mem;
	r->size = size;
	r->data_end = size;
	int rc = check_header(r, name, err, errlen);
	if (rc >= 0 && (rc = load_index(r)) == 1)
		r->info.index_found = 1;
	else if (rc == 0)
		rc = scan_keyframes(r);
	if (rc < 0 && rc != IOGP_ENOMEM && r->hdr_len)
		set_err(err, errlen, "%s: %s while scanning for keyframes", name,
		        rc == IOGP_EIO ? strerror(r->io_errno) : iogp_strerror(rc));
	else if (rc == IOGP_ENOMEM)
		set_err(err, errlen, "%s: out of memory", name);
	if (rc < 0) {
		iogp_replay_close_reader(r);
		return rc;
	}
	reset_position(r, r->hdr_len);
	*rp = r;
	return 0;
}

int iogp_replay_open(iogp_replay_reader **rp, const char *path, char *err, size_t errlen)
{
	if (!rp || !path) {
		set_err(err, errlen, "no path given");
		return IOGP_EINVAL;
	}
	*rp = NULL;
	/* non-blocking: a FIFO must not hang us in open() */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat sb;
	int e = 0, notreg = 0;
	if (fd < 0 || fstat(fd, &sb) < 0)
		e = errno;
	else if (S_ISDIR(sb.st_mode))
		e = EISDIR;
	else if (!S_ISREG(sb.st_mode))
		e = EINVAL, notreg = 1;
	if (e != 0) {
		if (notreg)
			set_err(err, errlen, "cannot open %s: not a regular file", path);
		else
			set_err(err, errlen, "cannot open %s: %s", path, strerror(e));
		if (fd >= 0)
			close(fd);
		errno = e;
		return IOGP_EIO;
	}
	return reader_open(rp, fd, NULL, (uint64_t)sb.st_size, path, err, errlen);
}

/* Private (tests, fuzzing): read a file image in memory; buf outlives r. */
int iogp__replay_open_mem(iogp_replay_reader **rp, const void *buf, size_t len,
                          char *err, size_t errlen);
int iogp__replay_open_mem(iogp_replay_reader **rp, const void *buf, size_t len,
                          char *err, size_t errlen)
{
	if (!rp || (!buf && len))
		return IOGP_EINVAL;
	*rp = NULL;
	static const uint8_t none[1];
	return reader_open(rp, -1, len ? buf : none, len, "<memory>", err, errlen);
}

void iogp_replay_close_reader(iogp_replay_reader *r)
{
	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	ZSTD_freeDCtx(r->dctx);
	xs_free(&r->xs);
	xr_free(&r->xr);
	free(r->win);
	free(r->big);
	free(r->ibuf);
	free(r->kf);
	free(r);
}
