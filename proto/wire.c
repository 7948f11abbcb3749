/* wire.c - encode and decode iogram wire messages (iogp_wire.h). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iogp_err.h"
#include "iogp_wire.h"

/*
 * After the fixed header come sections "tag, length, body"; all numbers are
 * varints. Tags:
 *   0  END       one 0 byte, no length: the last byte of every payload
 *   1  LABELS    n, n x (key len, key, value len, value)
 *   2  METRICS   n, n x (id gap, kind, name len, name, unit len, unit,
 *                HISTOGRAM only: scheme kind, then NATIVE: k | LOG2: - |
 *                FIXED: width, offset | EDGES: n, e0, n-1 x edge gap)
 *   3  INTERVAL  t0, t1 - t0, wall
 *   4  COUNTERS  n, n x (id gap, value)
 *   5  GAUGES    n, n x (id gap, zigzag value)
 *   6  HISTS     n, n x (id gap, nbins, nbins x (idx gap, count))
 *   7  ACCESS    n, n x (zz d-id, zz d-t, zz d-file, op,
 *                zz (offset - (previous offset + previous size)), size)
 *   8  FILES     n, n x (id gap, path len, path)
 *   9  DROPPED   dropped
 *   10 SEEN      access_seen
 *   11 EXACT     as HISTS (values for bin indices)
 *   12 FILERECS  n, n x (file gap, layer, flags, mask, present fields)
 *   13 PEERS     n, n x (rank gap, msgs, bytes): MPI sends by destination
 * A gap is x - (previous x + 1), the first one x itself, so such lists are
 * strictly ascending. "zz d-x" is zigzag(x - previous x) modulo 2^64 with
 * the previous values starting at 0. Strings carry no NUL. The encoder omits
 * empty sections and writes them in tag order; the decoder accepts any order,
 * each known tag at most once, and skips unknown tags. Varints must be
 * minimal, so every message has exactly one encoding.
 *
 * Header kind 0 is corrupt; any other kind decodes, sections and all, with
 * m->kind holding the raw number so that consumers can skip what they do not
 * know (the encoder writes only kinds 1..4).
 *
 * Decoding makes two passes: the first walks the sections and reads their
 * element counts to size the arena exactly (structs) or by a bound from the
 * body length (bins: 16 bytes per 2 input bytes; strings: never more bytes
 * than their body), the second fills it. Nothing is allocated once the arena
 * is large enough; it grows by at least half. The arena stays below 16 bytes
 * per input byte plus the metric definitions, which are ~8 KiB each
 * (iogp_bins.edges): at most IOGP_MAX_METRICS of them, ~34 MiB.
 */

enum {
	T_END = 0, T_LABELS, T_METRICS, T_INTERVAL, T_COUNTERS, T_GAUGES,
	T_HISTS, T_ACCESS, T_FILES, T_DROPPED, T_SEEN, T_EXACT, T_FILERECS,
	T_PEERS,
	T_MAX = T_PEERS,
};

static const struct sect_info {
	const char *name;
	uint32_t limit;   /* max element count; 0: body is not a counted list */
	uint8_t min;      /* fewest bytes one element encodes to */
	uint16_t size;    /* arena bytes per element */
} sects[T_MAX + 1] = {
	[T_LABELS] = { "labels", IOGP_MAX_LABELS, 2, sizeof(iogp_label) },
	[T_METRICS] = { "metrics", IOGP_MAX_METRICS, 4, sizeof(iogp_metric_def) },
	[T_INTERVAL] = { "interval", 0, 0, 0 },
	[T_COUNTERS] = { "counters", IOGP_MAX_METRICS, 2, sizeof(iogp_counter_val) },
	[T_GAUGES] = { "gauges", IOGP_MAX_METRICS, 2, sizeof(iogp_gauge_val) },
	[T_HISTS] = { "hists", IOGP_MAX_METRICS, 2, sizeof(iogp_hist_val) },
	[T_ACCESS] = { "access", IOGP_MAX_ACCESS, 6, sizeof(iogp_access) },
	[T_FILES] = { "files", IOGP_MAX_FILES, 2, sizeof(iogp_file) },
	[T_DROPPED] = { "dropped", 0, 0, 0 },
	[T_SEEN] = { "access_seen", 0, 0, 0 },
	[T_EXACT] = { "exact", IOGP_MAX_METRICS, 2, sizeof(iogp_exact_val) },
	[T_FILERECS] = { "filerecs", IOGP_MAX_FILERECS, 4, sizeof(iogp_filerec) },
	[T_PEERS] = { "peers", IOGP_MAX_PEERS, 3, sizeof(iogp_peer) },
};

/* Exact values travel as histograms do: (id, n, (gap, count)...). */
_Static_assert(sizeof(iogp_exact_val) == sizeof(iogp_hist_val) &&
    offsetof(iogp_exact_val, n) == offsetof(iogp_hist_val, nbins) &&
    offsetof(iogp_exact_val, v) == offsetof(iogp_hist_val, bins) &&
    sizeof(iogp_exact) == sizeof(iogp_bin) &&
    offsetof(iogp_exact, count) == offsetof(iogp_bin, count), "exact as bins");

_Static_assert(sizeof(iogp_label) % 8 == 0 && sizeof(iogp_metric_def) % 8 == 0 &&
    sizeof(iogp_counter_val) % 8 == 0 && sizeof(iogp_gauge_val) % 8 == 0 &&
    sizeof(iogp_hist_val) % 8 == 0 && sizeof(iogp_access) % 8 == 0 &&
    sizeof(iogp_file) % 8 == 0 && sizeof(iogp_bin) == 16 && sizeof(iogp_filerec) % 8 == 0 &&
    sizeof(iogp_peer) % 8 == 0,
    "arena alignment");

/* A file record's numbers in wire order; a presence mask says which are
 * non-zero. Times are zigzag differences from the section's previous time. */
#define FR_NFIELDS 21
static uint64_t *fr_field(iogp_filerec *r, unsigned k, int *is_time)
{
	*is_time = 0;
	if (k < 18) {
		iogp_filerec_op *o = &r->op[k / 9];
		uint64_t *f[9] = { &o->ops, &o->bytes, &o->time_ns, &o->consec, &o->seq,
		                   &o->random, &o->max_req, &o->first_ns, &o->last_ns };
		*is_time = k % 9 >= 7;
		return f[k % 9];
	}
	return k == 18 ? &r->meta_ops : k == 19 ? &r->meta_ns : &r->overflow;
}
_Static_assert(sizeof(iogp_metric_def) <= UINT16_MAX, "sect_info.size");

/* ---- varints ------------------------------------------------------------ */

static inline size_t varint_put(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

size_t iogp_varint_put(uint8_t *p, uint64_t v)
{
	return varint_put(p, v);
}

static size_t varint_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

/* Rejects more than 10 bytes, bits past 64 and non-minimal forms, so every
 * value has exactly one encoding. */
__attribute__((noinline))
static int varint_slow(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
	const uint8_t *p = *pp;
	uint64_t r = 0;
	unsigned i;

	for (i = 0; i < 10; i++) {
		uint8_t b;

		if (p >= end)
			return IOGP_ETRUNC;
		b = *p++;
		r |= (uint64_t)(b & 0x7f) << (7 * i);
		if (b < 0x80) {
			if ((i == 9 && b > 1) || (b == 0 && i > 0))
				return IOGP_ECORRUPT;
			*v = r;
			*pp = p;
			return 0;
		}
	}
	return IOGP_ECORRUPT;
}

/* inlined everywhere: most numbers take one or two bytes */
__attribute__((always_inline))
static inline int get(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
	const uint8_t *p = *pp;

	if (p < end && *p < 0x80) {
		*v = *p;
		*pp = p + 1;
		return 0;
	}
	if (end - p >= 2 && p[1] < 0x80 && p[1] != 0) {
		*v = (uint64_t)(p[0] & 0x7f) | (uint64_t)p[1] << 7;
		*pp = p + 2;
		return 0;
	}
	return varint_slow(pp, end, v);
}

int iogp_varint_get(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	if (p == NULL || *p == NULL || end == NULL || v == NULL)
		return IOGP_EINVAL;
	return get(p, end, v);
}

/* ---- names ---------------------------------------------------------------- */

const char *iogp_kind_name(iogp_kind kind)
{
	switch (kind) {
	case IOGP_HELLO: return "hello";
	case IOGP_DELTA: return "delta";
	case IOGP_SNAPSHOT: return "snapshot";
	case IOGP_BYE: return "bye";
	}
	return "unknown";
}

int iogp_topic(char *buf, size_t len, iogp_kind kind, uint64_t source)
{
	int n;

	if (buf == NULL)
		return IOGP_EINVAL;
	n = snprintf(buf, len, "iog1/%s/%016" PRIx64, iogp_kind_name(kind), source);
	if (n < 0 || (size_t)n >= len)
		return IOGP_ELIMIT;
	return n;
}

const char *iogp_msg_label(const iogp_msg *m, const char *key)
{
	uint32_t i;

	if (m == NULL || key == NULL || m->labels == NULL)
		return NULL;
	for (i = 0; i < m->nlabels; i++) {
		if (m->labels[i].key != NULL && strcmp(m->labels[i].key, key) == 0)
			return m->labels[i].value;
	}
	return NULL;
}

void iogp_msg_init(iogp_msg *m)
{
	memset(m, 0, sizeof *m);
	m->version = IOGP_WIRE_VERSION;
}

void iogp_msg_free(iogp_msg *m)
{
	if (m == NULL)
		return;
	free(m->arena);
	iogp_msg_init(m);
}

/* ---- encoder ------------------------------------------------------------- */

/* Writes only bytes that fit; pos keeps counting so the size is known even
 * when they do not (full is then set). In exact mode each section's body
 * length (blen) is measured beforehand, so nothing lands past the end. */
struct enc {
	uint8_t *buf;
	size_t cap, pos;
	int full, exact;
	size_t blen;
};

static void put_bytes(struct enc *e, const void *src, size_t n)
{
	if (!e->full && e->pos + n <= e->cap)
		memcpy(e->buf + e->pos, src, n);
	else
		e->full = 1;
	e->pos += n;
}

static inline void put(struct enc *e, uint64_t v)
{
	if (e->pos + 10 <= e->cap) {
		e->pos += varint_put(e->buf + e->pos, v);
	} else {
		uint8_t tmp[10];

		put_bytes(e, tmp, varint_put(tmp, v));
	}
}

/* Reserves 3 bytes for the length (bodies < 2 MiB) and moves the body if
 * the length needs another size. */
static size_t sect_begin(struct enc *e, unsigned tag)
{
	size_t at;

	put(e, tag);
	if (e->exact) {
		put(e, e->blen);
		return e->pos;
	}
	at = e->pos;
	e->pos += 3;
	if (e->pos > e->cap)
		e->full = 1;
	return at;
}

static void sect_end(struct enc *e, size_t at)
{
	size_t blen = e->pos - at - 3;
	uint8_t tmp[10];
	size_t ll;

	if (e->exact)
		return;
	e->blen = blen;
	ll = varint_put(tmp, blen);
	if (!e->full && at + ll + blen > e->cap)
		e->full = 1;
	if (!e->full) {
		if (ll != 3)
			memmove(e->buf + at + ll, e->buf + at + 3, blen);
		memcpy(e->buf + at, tmp, ll);
	}
	e->pos = at + ll + blen;
}

static int put_str(struct enc *e, const char *s, size_t max)
{
	size_t n;

	if (s == NULL)
		return IOGP_EINVAL;
	n = strnlen(s, max + 1);
	if (n > max)
		return IOGP_EINVAL;
	put(e, n);
	put_bytes(e, s, n);
	return 0;
}

/* Gap to the next id of a strictly ascending list; *next = last id + 1. */
static int put_gap(struct enc *e, uint64_t *next, uint64_t id, int first)
{
	if (!first && (id < *next || *next == 0))
		return IOGP_EINVAL;
	put(e, first ? id : id - *next);
	*next = id + 1;
	return 0;
}

static int enc_labels(struct enc *e, const iogp_msg *m)
{
	size_t at;
	uint32_t i;

	if (m->nlabels == 0)
		return 0;
	if (m->nlabels > IOGP_MAX_LABELS || m->labels == NULL)
		return IOGP_EINVAL;
	at = sect_begin(e, T_LABELS);
	put(e, m->nlabels);
	for (i = 0; i < m->nlabels; i++) {
		if (put_str(e, m->labels[i].key, IOGP_MAX_KEY) < 0 ||
		    put_str(e, m->labels[i].value, IOGP_MAX_VALUE) < 0)
			return IOGP_EINVAL;
	}
	sect_end(e, at);
	return 0;
}

static int enc_metrics(struct enc *e, const iogp_msg *m)
{
	uint64_t next = 0;
	size_t at;
	uint32_t i, j;

	if (m->nmetrics == 0)
		return 0;
	if (m->nmetrics > IOGP_MAX_METRICS || m->metrics == NULL)
		return IOGP_EINVAL;
	at = sect_begin(e, T_METRICS);
	put(e, m->nmetrics);
	for (i = 0; i < m->nmetrics; i++) {
		const iogp_metric_def *d = &m->metrics[i];
		const iogp_bins *b = &d->bins;

		if (put_gap(e, &next, d->id, i == 0) < 0)
			return IOGP_EINVAL;
		if (d->kind < IOGP_COUNTER || d->kind > IOGP_ACCESS)
			return IOGP_EINVAL;
		put(e, (uint64_t)d->kind);
		if (put_str(e, d->name, IOGP_MAX_NAME) < 0 ||
		    put_str(e, d->unit != NULL ? d->unit : "", IOGP_MAX_UNIT) < 0)
			return IOGP_EINVAL;
		if (d->kind != IOGP_HISTOGRAM)
			continue;
		if (iogp_bins_valid(b) < 0)
			return IOGP_EINVAL;
		put(e, (uint64_t)b->kind);
		switch (b->kind) {
		case IOGP_BINS_NATIVE:
			put(e, b->k);
			break;
		case IOGP_BINS_LOG2:
			break;
		case IOGP_BINS_FIXED:
			put(e, b->width);
			put(e, b->offset);
			break;
		case IOGP_BINS_EDGES:
			put(e, b->nedges);
			put(e, b->edges[0]);
			for (j = 1; j < b->nedges; j++)
				put(e, b->edges[j] - b->edges[j - 1] - 1);
			break;
		}
	}
	sect_end(e, at);
	return 0;
}

static int enc_interval(struct enc *e, const iogp_msg *m)
{
	size_t at;

	if (m->t0_ns == 0 && m->t1_ns == 0 && m->wall_ns == 0)
		return 0;
	if (m->t1_ns < m->t0_ns)
		return IOGP_EINVAL;
	at = sect_begin(e, T_INTERVAL);
	put(e, m->t0_ns);
	put(e, m->t1_ns - m->t0_ns);
	put(e, m->wall_ns);
	sect_end(e, at);
	return 0;
}

static int enc_counters(struct enc *e, const iogp_msg *m)
{
	uint64_t next = 0;
	size_t at;
	uint32_t i;

	if (m->ncounters == 0)
		return 0;
	if (m->ncounters > IOGP_MAX_METRICS || m->counters == NULL)
		return IOGP_EINVAL;
	at = sect_begin(e, T_COUNTERS);
	put(e, m->ncounters);
	for (i = 0; i < m->ncounters; i++) {
		if (put_gap(e, &next, m->counters[i].id, i == 0) < 0)
			return IOGP_EINVAL;
		put(e, m->counters[i].value);
	}
	sect_end(e, at);
	return 0;
}

static int enc_gauges(struct enc *e, const iogp_msg *m)
{
	uint64_t next = 0;
	size_t at;
	uint32_t i;

	if (m->ngauges == 0)
		return 0;
	if (m->ngauges > IOGP_MAX_METRICS || m->gauges == NULL)
		return IOGP_EINVAL;
	at = sect_begin(e, T_GAUGES);
	put(e, m->ngauges);
	for (i = 0; i < m->ngauges; i++) {
		if (put_gap(e, &next, m->gauges[i].id, i == 0) < 0)
			return IOGP_EINVAL;
		put(e, iogp_zigzag(m->gauges[i].value));
	}
	sect_end(e, at);
	return 0;
}

/* Histograms, and exact values in the same form. */
static int enc_sets(struct enc *e, unsigned tag, uint32_t nh, const iogp_hist_val *hv,
                    uint32_t limit)
{
	uint64_t next = 0;
	size_t at;
	uint32_t i, j;

	if (nh == 0)
		return 0;
	if (nh > IOGP_MAX_METRICS || hv == NULL)
		return IOGP_EINVAL;
	at = sect_begin(e, tag);
	put(e, nh);
	for (i = 0; i < nh; i++) {
		const iogp_hist_val *h = &hv[i];
		uint64_t bnext = 0;

		if (put_gap(e, &next, h->id, i == 0) < 0)
			return IOGP_EINVAL;
		if (h->nbins > limit || (h->nbins > 0 && h->bins == NULL))
			return IOGP_EINVAL;
		put(e, h->nbins);
		for (j = 0; j < h->nbins; j++) {
			const iogp_bin *b = &h->bins[j];

			/* bnext wraps to 0 after idx UINT64_MAX: nothing may follow */
			if (j > 0 && (b->idx < bnext || bnext == 0))
				return IOGP_EINVAL;
			if (b->count == 0)
				return IOGP_EINVAL;
			put(e, b->idx - bnext);
			put(e, b->count);
			bnext = b->idx + 1;
		}
	}
	sect_end(e, at);
	return 0;
}

static int enc_hists(struct enc *e, const iogp_msg *m)
{
	return enc_sets(e, T_HISTS, m->nhists, m->hists, IOGP_MAX_HIST_BINS);
}

static int enc_exact(struct enc *e, const iogp_msg *m)
{
	return enc_sets(e, T_EXACT, m->nexact, (const iogp_hist_val *)(const void *)m->exact,
	                IOGP_MAX_EXACT);
}

static int enc_access(struct enc *e, const iogp_msg *m)
{
	uint64_t id = 0, t = 0, file = 0, expect = 0;
	size_t at;
	uint32_t i;

	if (m->naccess == 0)
		return 0;
	if (m->naccess > IOGP_MAX_ACCESS || m->access == NULL)
		return IOGP_EINVAL;
	at = sect_begin(e, T_ACCESS);
	put(e, m->naccess);
	for (i = 0; i < m->naccess; i++) {
		const iogp_access *a = &m->access[i];

		put(e, iogp_zigzag((int64_t)(a->id - id)));
		put(e, iogp_zigzag((int64_t)(a->t_ns - t)));
		put(e, iogp_zigzag((int64_t)(a->file - file)));
		put(e, a->op);
		put(e, iogp_zigzag((int64_t)(a->offset - expect)));
		put(e, a->size);
		id = a->id;
		t = a->t_ns;
		file = a->file;
		expect = a->offset + a->size;
	}
	sect_end(e, at);
	return 0;
}

static int enc_files(struct enc *e, const iogp_msg *m)
{
	uint64_t next = 0;
	size_t at;
	uint32_t i;

	if (m->nfiles == 0)
		return 0;
	if (m->nfiles > IOGP_MAX_FILES || m->files == NULL)
		return IOGP_EINVAL;
	at = sect_begin(e, T_FILES);
	put(e, m->nfiles);
	for (i = 0; i < m->nfiles; i++) {
		if (put_gap(e, &next, m->files[i].id, i == 0) < 0 ||
		    put_str(e, m->files[i].path, IOGP_MAX_PATH) < 0)
			return IOGP_EINVAL;
	}
	sect_end(e, at);
	return 0;
}

static int enc_filerecs(struct enc *e, const iogp_msg *m)
{
	uint64_t file = 0, t = 0;
	uint32_t layer = 0;
	size_t at;

	if (m->nfilerecs == 0)
		return 0;
	if (m->nfilerecs > IOGP_MAX_FILERECS || m->filerecs == NULL)
		return IOGP_EINVAL;
	at = sect_begin(e, T_FILERECS);
	put(e, m->nfilerecs);
	for (uint32_t i = 0; i < m->nfilerecs; i++) {
		iogp_filerec r = m->filerecs[i];
		uint64_t mask = 0;
		int tm;

		if (i > 0 && (r.file < file || (r.file == file && r.layer <= layer)))
			return IOGP_EINVAL;
		if (!IOGP_FILEREC_DIR_OK(&r))
			return IOGP_EINVAL;
		for (unsigned k = 0; k < FR_NFIELDS; k++)
			mask |= (uint64_t)(*fr_field(&r, k, &tm) != 0) << k;
		put(e, r.file - file);
		put(e, r.layer);
		put(e, r.flags);
		put(e, mask);
		for (unsigned k = 0; k < FR_NFIELDS; k++) {
			uint64_t v = *fr_field(&r, k, &tm);

			if (!(mask >> k & 1))
				continue;
			if (tm) {
				put(e, iogp_zigzag((int64_t)(v - t)));
				t = v;
			} else {
				put(e, v);
			}
		}
		file = r.file;
		layer = r.layer;
	}
	sect_end(e, at);
	return 0;
}

/* T_PEERS: count, then per destination (rank gap, msgs, bytes); ranks
 * strictly ascending, msgs > 0. */
static int enc_peers(struct enc *e, const iogp_msg *m)
{
	uint64_t next = 0;
	size_t at;

	if (m->npeers == 0)
		return 0;
	if (m->npeers > IOGP_MAX_PEERS || m->peers == NULL)
		return IOGP_EINVAL;
	at = sect_begin(e, T_PEERS);
	put(e, m->npeers);
	for (uint32_t i = 0; i < m->npeers; i++) {
		const iogp_peer *q = &m->peers[i];

		if (q->rank >= IOGP_MAX_PEER_RANK || q->msgs == 0 ||
		    put_gap(e, &next, q->rank, i == 0) < 0)
			return IOGP_EINVAL;
		put(e, q->msgs);
		put(e, q->bytes);
	}
	sect_end(e, at);
	return 0;
}

static void enc_value(struct enc *e, unsigned tag, uint64_t v)
{
	if (v == 0)
		return;
	put(e, tag);
	put(e, varint_len(v));
	put(e, v);
}

static int enc_dropped(struct enc *e, const iogp_msg *m)
{
	enc_value(e, T_DROPPED, m->dropped);
	return 0;
}

static int enc_seen(struct enc *e, const iogp_msg *m)
{
	enc_value(e, T_SEEN, m->access_seen);
	return 0;
}

static int (*const encoders[])(struct enc *, const iogp_msg *) = {
	enc_labels, enc_metrics, enc_interval, enc_counters, enc_gauges,
	enc_hists, enc_access, enc_files, enc_dropped, enc_seen, enc_exact, enc_filerecs,
	enc_peers,
};

static int encode(struct enc *e, const iogp_msg *m)
{
	uint8_t hdr[16];
	size_t i;

	memcpy(hdr, IOGP_WIRE_MAGIC, 4);
	hdr[4] = IOGP_WIRE_VERSION;
	hdr[5] = (uint8_t)m->kind;
	hdr[6] = (uint8_t)m->flags;
	hdr[7] = (uint8_t)(m->flags >> 8);
	for (i = 0; i < 8; i++)
		hdr[8 + i] = (uint8_t)(m->source >> (8 * i));
	put_bytes(e, hdr, sizeof hdr);
	put(e, m->seq);
	for (i = 0; i < sizeof encoders / sizeof encoders[0]; i++) {
		if (e->exact) {
			struct enc c = { NULL, 0, 0, 0, 0, 0 };

			if (encoders[i](&c, m) < 0)
				return IOGP_EINVAL;
			if (c.pos == 0)
				continue;
			e->blen = c.blen;
		}
		if (encoders[i](e, m) < 0)
			return IOGP_EINVAL;
	}
	put(e, T_END);
	return 0;
}

long iogp_msg_encode(const iogp_msg *m, uint8_t *buf, size_t cap)
{
	struct enc e = { buf, buf != NULL ? cap : 0, 0, 0, 0, 0 };

	if (m == NULL || m->kind < IOGP_HELLO || m->kind > IOGP_BYE)
		return IOGP_EINVAL;
	if (encode(&e, m) < 0 || e.pos > IOGP_MAX_PAYLOAD)
		return IOGP_EINVAL;
	if (!e.full || e.cap == 0)
		return (long)e.pos;
	if (e.pos > e.cap)
		return IOGP_ELIMIT;
	/* it fits, but a section's length reservation ran past the end */
	e = (struct enc){ buf, cap, 0, 0, 1, 0 };
	if (encode(&e, m) < 0 || e.full)
		return IOGP_ELIMIT;
	return (long)e.pos;
}

/* ---- decoder ------------------------------------------------------------- */

struct dec {
	char *err;
	size_t errlen;
	const char *what;   /* section name for messages */
	uint8_t *s;         /* next struct array (8-aligned) */
	uint8_t *b;         /* next histogram bins */
	char *c;            /* next string */
	int odd;            /* a form the encoder does not write (still valid) */
};

__attribute__((format(printf, 3, 4)))
static int fail(struct dec *d, int code, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (d->err == NULL || d->errlen == 0)
		return code;
	n = snprintf(d->err, d->errlen, "%s: ", d->what);
	if (n < 0 || (size_t)n >= d->errlen)
		return code;
	va_start(ap, fmt);
	vsnprintf(d->err + n, d->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return code;
}

#define GET(v) do { \
	int r_ = get(&p, end, &(v)); \
	if (r_ < 0) \
		return fail(d, r_, r_ == IOGP_ETRUNC ? "ends inside a number" : \
		    "malformed varint"); \
} while (0)

static void *take(struct dec *d, uint64_t n, size_t size)
{
	void *r = d->s;

	d->s += n * size;
	return r;
}

static int get_str(struct dec *d, const uint8_t **pp, const uint8_t *end,
    size_t max, const char **out, const char *field)
{
	const uint8_t *p = *pp;
	uint64_t n;

	GET(n);
	if (n > max)
		return fail(d, IOGP_ELIMIT, "%s length %" PRIu64 " exceeds %zu", field, n, max);
	if (n > (uint64_t)(end - p))
		return fail(d, IOGP_ETRUNC, "%s of %" PRIu64 " bytes past the end", field, n);
	if (memchr(p, 0, n) != NULL)
		return fail(d, IOGP_ECORRUPT, "NUL inside %s", field);
	memcpy(d->c, p, n);
	d->c[n] = '\0';
	*out = d->c;
	d->c += n + 1;
	*pp = p + n;
	return 0;
}

/* Next id of a gap-coded list; *next = 0 before the first. */
static int get_id(struct dec *d, const uint8_t **pp, const uint8_t *end,
    uint64_t *next, uint64_t limit, uint64_t *id)
{
	const uint8_t *p = *pp;
	uint64_t gap;

	GET(gap);
	if (*next > limit || gap > limit - *next)
		return fail(d, IOGP_ECORRUPT, "id out of range");
	*id = *next + gap;
	*next = *id + 1;
	*pp = p;
	return 0;
}

static int dec_count(struct dec *d, const uint8_t **pp, const uint8_t *end,
    unsigned tag, uint64_t *n)
{
	const uint8_t *p = *pp;

	GET(*n);
	if (*n > sects[tag].limit)
		return fail(d, IOGP_ELIMIT, "count %" PRIu64 " exceeds %" PRIu32,
		    *n, sects[tag].limit);
	if (*n > (uint64_t)(end - p) / sects[tag].min)
		return fail(d, IOGP_ECORRUPT, "count %" PRIu64 " does not fit in %zu bytes",
		    *n, (size_t)(end - p));
	*pp = p;
	return 0;
}

#define CALL(x) do { int r_ = (x); if (r_ < 0) return r_; } while (0)

static int dec_labels(struct dec *d, iogp_msg *m, const uint8_t *p, const uint8_t *end)
{
	uint64_t n, i;

	CALL(dec_count(d, &p, end, T_LABELS, &n));
	m->labels = take(d, n, sizeof *m->labels);
	for (i = 0; i < n; i++) {
		CALL(get_str(d, &p, end, IOGP_MAX_KEY, &m->labels[i].key, "key"));
		CALL(get_str(d, &p, end, IOGP_MAX_VALUE, &m->labels[i].value, "value"));
	}
	m->nlabels = (uint32_t)n;
	return (int)(end - p);
}

/* Accepts exactly the schemes iogp_bins_valid does (edges ascend by
 * construction). */
static int dec_bins(struct dec *d, iogp_bins *b, const uint8_t *p, const uint8_t *end,
    const uint8_t **out)
{
	uint64_t v, i;

	memset(b, 0, sizeof *b);
	GET(v);
	switch (v) {
	case IOGP_BINS_NATIVE:
		b->kind = IOGP_BINS_NATIVE;
		GET(v);
		if (v < IOGP_NATIVE_K_MIN || v > IOGP_NATIVE_K_MAX)
			return fail(d, IOGP_ECORRUPT, "native k %" PRIu64 " out of range", v);
		b->k = (uint32_t)v;
		break;
	case IOGP_BINS_LOG2:
		b->kind = IOGP_BINS_LOG2;
		break;
	case IOGP_BINS_FIXED:
		b->kind = IOGP_BINS_FIXED;
		GET(b->width);
		GET(b->offset);
		if (b->width == 0)
			return fail(d, IOGP_ECORRUPT, "fixed bins of width 0");
		break;
	case IOGP_BINS_EDGES:
		b->kind = IOGP_BINS_EDGES;
		GET(v);
		if (v < 1 || v > IOGP_MAX_EDGES)
			return fail(d, v ? IOGP_ELIMIT : IOGP_ECORRUPT,
			    "%" PRIu64 " bin edges (1..%d)", v, IOGP_MAX_EDGES);
		b->nedges = (uint32_t)v;
		GET(b->edges[0]);
		for (i = 1; i < b->nedges; i++) {
			GET(v);
			if (b->edges[i - 1] == UINT64_MAX || v > UINT64_MAX - b->edges[i - 1] - 1)
				return fail(d, IOGP_ECORRUPT, "bin edge overflows");
			b->edges[i] = b->edges[i - 1] + 1 + v;
		}
		break;
	default:
		return fail(d, IOGP_ECORRUPT, "unknown bin scheme %" PRIu64, v);
	}
	*out = p;
	return 0;
}

static int dec_metrics(struct dec *d, iogp_msg *m, const uint8_t *p, const uint8_t *end)
{
	uint64_t n, i, next = 0, id, kind;

	CALL(dec_count(d, &p, end, T_METRICS, &n));
	m->metrics = take(d, n, sizeof *m->metrics);
	for (i = 0; i < n; i++) {
		iogp_metric_def *md = &m->metrics[i];

		CALL(get_id(d, &p, end, &next, UINT32_MAX, &id));
		md->id = (uint32_t)id;
		GET(kind);
		if (kind < IOGP_COUNTER || kind > IOGP_ACCESS)
			return fail(d, IOGP_ECORRUPT, "metric kind %" PRIu64, kind);
		md->kind = (iogp_metric_kind)kind;
		CALL(get_str(d, &p, end, IOGP_MAX_NAME, &md->name, "name"));
		CALL(get_str(d, &p, end, IOGP_MAX_UNIT, &md->unit, "unit"));
		if (kind == IOGP_HISTOGRAM)
			CALL(dec_bins(d, &md->bins, p, end, &p));
		else
			memset(&md->bins, 0, sizeof md->bins);
	}
	m->nmetrics = (uint32_t)n;
	return (int)(end - p);
}

static int dec_interval(struct dec *d, iogp_msg *m, const uint8_t *p, const uint8_t *end)
{
	uint64_t dt;

	GET(m->t0_ns);
	GET(dt);
	GET(m->wall_ns);
	if (dt > UINT64_MAX - m->t0_ns)
		return fail(d, IOGP_ECORRUPT, "t1 overflows");
	d->odd |= !m->t0_ns && !dt && !m->wall_ns;   /* the encoder leaves it out */
	m->t1_ns = m->t0_ns + dt;
	return (int)(end - p);
}

static int dec_counters(struct dec *d, iogp_msg *m, const uint8_t *p, const uint8_t *end)
{
	uint64_t n, i, next = 0, id;

	CALL(dec_count(d, &p, end, T_COUNTERS, &n));
	m->counters = take(d, n, sizeof *m->counters);
	for (i = 0; i < n; i++) {
		CALL(get_id(d, &p, end, &next, UINT32_MAX, &id));
		m->counters[i].id = (uint32_t)id;
		GET(m->counters[i].value);
	}
	m->ncounters = (uint32_t)n;
	return (int)(end - p);
}

static int dec_gauges(struct dec *d, iogp_msg *m, const uint8_t *p, const uint8_t *end)
{
	uint64_t n, i, next = 0, id, v;

	CALL(dec_count(d, &p, end, T_GAUGES, &n));
	m->gauges = take(d, n, sizeof *m->gauges);
	for (i = 0; i < n; i++) {
		CALL(get_id(d, &p, end, &next, UINT32_MAX, &id));
		m->gauges[i].id = (uint32_t)id;
		GET(v);
		m->gauges[i].value = iogp_unzigzag(v);
	}
	m->ngauges = (uint32_t)n;
	return (int)(end - p);
}

static int dec_sets(struct dec *d, unsigned tag, uint32_t limit, uint32_t *nout,
                    iogp_hist_val **out, const uint8_t *p, const uint8_t *end)
{
	uint64_t n, i, j, next = 0, id, nb, gap, bnext;
	iogp_hist_val *hv;

	CALL(dec_count(d, &p, end, tag, &n));
	hv = take(d, n, sizeof *hv);
	*out = hv;
	for (i = 0; i < n; i++) {
		iogp_hist_val *h = &hv[i];
		iogp_bin *b;

		CALL(get_id(d, &p, end, &next, UINT32_MAX, &id));
		h->id = (uint32_t)id;
		GET(nb);
		if (nb > limit)
			return fail(d, IOGP_ELIMIT, "bin count %" PRIu64 " exceeds %" PRIu32,
			    nb, limit);
		if (nb > (uint64_t)(end - p) / 2)
			return fail(d, IOGP_ECORRUPT, "%" PRIu64 " bins do not fit", nb);
		b = (iogp_bin *)(void *)d->b;
		d->b += nb * sizeof *b;
		bnext = 0;
		for (j = 0; j < nb; j++) {
			GET(gap);
			if ((j > 0 && bnext == 0) || gap > UINT64_MAX - bnext)
				return fail(d, IOGP_ECORRUPT, "bin index overflows");
			b[j].idx = bnext + gap;
			bnext = b[j].idx + 1;
			GET(b[j].count);
			if (b[j].count == 0)
				return fail(d, IOGP_ECORRUPT, "empty bin");
		}
		h->nbins = (uint32_t)nb;
		h->bins = b;
	}
	*nout = (uint32_t)n;
	return (int)(end - p);
}

static int dec_hists(struct dec *d, iogp_msg *m, const uint8_t *p, const uint8_t *end)
{
	return dec_sets(d, T_HISTS, IOGP_MAX_HIST_BINS, &m->nhists, &m->hists, p, end);
}

static int dec_exact(struct dec *d, iogp_msg *m, const uint8_t *p, const uint8_t *end)
{
	iogp_hist_val *hv = NULL;
	int r = dec_sets(d, T_EXACT, IOGP_MAX_EXACT, &m->nexact, &hv, p, end);

	m->exact = (iogp_exact_val *)(void *)hv;
	return r;
}

static int dec_access(struct dec *d, iogp_msg *m, const uint8_t *p, const uint8_t *end)
{
	uint64_t n, i, v, id = 0, t = 0, file = 0, expect = 0;

	CALL(dec_count(d, &p, end, T_ACCESS, &n));
	m->access = take(d, n, sizeof *m->access);
	for (i = 0; i < n; i++) {
		iogp_access *a = &m->access[i];

		GET(v);
		id += (uint64_t)iogp_unzigzag(v);
		if (id > UINT32_MAX)
			return fail(d, IOGP_ECORRUPT, "metric id out of range");
		a->id = (uint32_t)id;
		GET(v);
		t += (uint64_t)iogp_unzigzag(v);
		a->t_ns = t;
		GET(v);
		file += (uint64_t)iogp_unzigzag(v);
		a->file = file;
		GET(v);
		if (v > UINT32_MAX)
			return fail(d, IOGP_ECORRUPT, "op %" PRIu64 " out of range", v);
		a->op = (uint32_t)v;
		GET(v);
		a->offset = expect + (uint64_t)iogp_unzigzag(v);
		GET(a->size);
		expect = a->offset + a->size;
	}
	m->naccess = (uint32_t)n;
	return (int)(end - p);
}

static int dec_files(struct dec *d, iogp_msg *m, const uint8_t *p, const uint8_t *end)
{
	uint64_t n, i, next = 0;

	CALL(dec_count(d, &p, end, T_FILES, &n));
	m->files = take(d, n, sizeof *m->files);
	for (i = 0; i < n; i++) {
		CALL(get_id(d, &p, end, &next, UINT64_MAX, &m->files[i].id));
		CALL(get_str(d, &p, end, IOGP_MAX_PATH, &m->files[i].path, "path"));
		if (m->files[i].id == UINT64_MAX && i + 1 < n)
			return fail(d, IOGP_ECORRUPT, "id out of range");
	}
	m->nfiles = (uint32_t)n;
	return (int)(end - p);
}

static int dec_filerecs(struct dec *d, iogp_msg *m, const uint8_t *p, const uint8_t *end)
{
	uint64_t n, v, file = 0, t = 0, mask;
	uint32_t layer = 0;

	CALL(dec_count(d, &p, end, T_FILERECS, &n));
	m->filerecs = take(d, n, sizeof *m->filerecs);
	for (uint64_t i = 0; i < n; i++) {
		iogp_filerec *r = &m->filerecs[i];
		int tm;

		memset(r, 0, sizeof *r);
		GET(v);
		if (v > UINT64_MAX - file)
			return fail(d, IOGP_ECORRUPT, "file id overflows");
		r->file = file + v;
		GET(v);
		if (v > UINT32_MAX)
			return fail(d, IOGP_ECORRUPT, "layer out of range");
		r->layer = (uint32_t)v;
		if (i > 0 && r->file == file && r->layer <= layer)
			return fail(d, IOGP_ECORRUPT, "records not ascending");
		GET(v);
		if (v > UINT32_MAX)
			return fail(d, IOGP_ECORRUPT, "flags out of range");
		r->flags = (uint32_t)v;
		GET(mask);
		if (mask >> FR_NFIELDS)
			return fail(d, IOGP_ECORRUPT, "unknown fields in a file record");
		for (unsigned k = 0; k < FR_NFIELDS; k++) {
			uint64_t *f = fr_field(r, k, &tm);

			if (!(mask >> k & 1))
				continue;
			GET(v);
			if (tm) {
				t += (uint64_t)iogp_unzigzag(v);
				*f = t;
			} else {
				*f = v;
			}
			if (*f == 0)
				return fail(d, IOGP_ECORRUPT, "a present field of 0");
		}
		if (!IOGP_FILEREC_DIR_OK(r))
			return fail(d, IOGP_ECORRUPT, "a directory record without its directory or count");
		file = r->file;
		layer = r->layer;
	}
	m->nfilerecs = (uint32_t)n;
	return (int)(end - p);
}

static int dec_peers(struct dec *d, iogp_msg *m, const uint8_t *p, const uint8_t *end)
{
	uint64_t n, next = 0, rank;

	CALL(dec_count(d, &p, end, T_PEERS, &n));
	m->peers = take(d, n, sizeof *m->peers);
	for (uint64_t i = 0; i < n; i++) {
		iogp_peer *q = &m->peers[i];

		CALL(get_id(d, &p, end, &next, IOGP_MAX_PEER_RANK - 1, &rank));
		q->rank = (uint32_t)rank;
		q->pad = 0;
		GET(q->msgs);
		GET(q->bytes);
		if (q->msgs == 0)
			return fail(d, IOGP_ECORRUPT, "a destination without messages");
	}
	m->npeers = (uint32_t)n;
	return (int)(end - p);
}

static int dec_value(struct dec *d, uint64_t *v, const uint8_t *p, const uint8_t *end)
{
	GET(*v);
	d->odd |= !*v;
	return (int)(end - p);
}

static int dec_header(const uint8_t *buf, size_t len, uint8_t *kind, uint16_t *flags,
    uint64_t *source, uint64_t *seq, const uint8_t **body)
{
	const uint8_t *p, *end;
	uint64_t src = 0;
	int i, r;

	if (buf == NULL)
		return IOGP_EINVAL;
	p = buf + 16;
	end = buf + len;
	if (len < 4 || memcmp(buf, IOGP_WIRE_MAGIC, 4) != 0)
		return len < 4 && memcmp(buf, IOGP_WIRE_MAGIC, len) == 0 ? IOGP_ETRUNC : IOGP_EMAGIC;
	if (len < 5)
		return IOGP_ETRUNC;
	if (buf[4] != IOGP_WIRE_VERSION)
		return IOGP_EVERSION;
	if (len < IOGP_WIRE_HEADER_MIN)
		return IOGP_ETRUNC;
	if (len > IOGP_MAX_PAYLOAD)
		return IOGP_ELIMIT;
	if (buf[5] == 0)
		return IOGP_ECORRUPT;
	for (i = 0; i < 8; i++)
		src |= (uint64_t)buf[8 + i] << (8 * i);
	if ((r = get(&p, end, seq)) < 0)
		return r;
	*kind = buf[5];
	*flags = (uint16_t)(buf[6] | buf[7] << 8);
	*source = src;
	*body = p;
	return 0;
}

int iogp_msg_peek(const uint8_t *buf, size_t len, iogp_kind *kind,
    uint16_t *flags, uint64_t *source, uint64_t *seq)
{
	const uint8_t *body;
	uint8_t k;
	uint16_t f;
	uint64_t src, sq;
	int r;

	if ((r = dec_header(buf, len, &k, &f, &src, &sq, &body)) < 0)
		return r;
	if (kind != NULL)
		*kind = (iogp_kind)k;
	if (flags != NULL)
		*flags = f;
	if (source != NULL)
		*source = src;
	if (seq != NULL)
		*seq = sq;
	return 0;
}

/* Pass 1: check the section framing and size the arena. */
static int prescan(struct dec *d, const uint8_t *p, const uint8_t *end,
    size_t *structs_out, size_t *bins_out, size_t *chars_out)
{
	size_t structs = 0, bins = 0, chars = 0;
	unsigned seen = 0;
	uint64_t last = 0;

	for (;;) {
		uint64_t tag, len, n;
		const uint8_t *bend;

		d->what = "sections";
		if (p >= end)
			return fail(d, IOGP_ETRUNC, "no end marker (truncated)");
		GET(tag);
		if (tag == T_END) {
			if (p != end)
				return fail(d, IOGP_ECORRUPT, "%zu bytes after the end marker",
				    (size_t)(end - p));
			break;
		}
		GET(len);
		if (len > (uint64_t)(end - p))
			return fail(d, IOGP_ETRUNC, "section %" PRIu64 " of %" PRIu64
			    " bytes past the end", tag, len);
		bend = p + len;
		/* the encoder writes the sections it knows, in tag order */
		d->odd |= tag > T_MAX || tag < last;
		last = tag;
		if (tag <= T_MAX) {
			const struct sect_info *si = &sects[tag];

			d->what = si->name;
			if (seen & (1u << tag))
				return fail(d, IOGP_ECORRUPT, "section repeated");
			seen |= 1u << tag;
			if (si->limit != 0) {
				CALL(dec_count(d, &p, bend, (unsigned)tag, &n));
				structs += n * si->size;
				d->odd |= n == 0;   /* an empty list: the encoder leaves it out */
			}
			if (tag == T_HISTS || tag == T_EXACT)
				bins += len / 2 * sizeof(iogp_bin);
			if (tag == T_LABELS || tag == T_METRICS || tag == T_FILES)
				chars += len;
		}
		p = bend;
	}
	*structs_out = structs;
	*bins_out = bins;
	*chars_out = chars;
	return 0;
}

static void msg_clear(iogp_msg *m)
{
	void *arena = m->arena;
	size_t cap = m->arena_cap;

	memset(m, 0, sizeof *m);
	m->arena = arena;
	m->arena_cap = cap;
}

static int msg_decode(struct dec *d, iogp_msg *m, const uint8_t *buf, size_t len)
{
	const uint8_t *p, *end = buf + len;
	uint8_t kind;
	uint16_t flags;
	size_t structs = 0, bins = 0, chars = 0, need;
	int r;

	d->what = "header";
	r = dec_header(buf, len, &kind, &flags, &m->source, &m->seq, &p);
	if (r < 0) {
		static const char *const why[] = {
			[-IOGP_EINVAL] = "no buffer",
			[-IOGP_ETRUNC] = "truncated",
			[-IOGP_EMAGIC] = "bad magic",
			[-IOGP_EVERSION] = "unsupported version",
			[-IOGP_ELIMIT] = "payload larger than the limit",
			[-IOGP_ECORRUPT] = "bad kind or sequence number",
		};
		if (r == IOGP_EVERSION)
			return fail(d, r, "version %u, expected %d", buf[4], IOGP_WIRE_VERSION);
		return fail(d, r, "%s", -r < (int)(sizeof why / sizeof why[0]) && why[-r] ?
		    why[-r] : "invalid");
	}
	m->version = IOGP_WIRE_VERSION;
	m->kind = (iogp_kind)kind;
	m->flags = flags;
	d->odd = kind < IOGP_HELLO || kind > IOGP_BYE;

	CALL(prescan(d, p, end, &structs, &bins, &chars));
	need = structs + bins + chars;
	if (need > m->arena_cap || m->arena == NULL) {
		size_t cap = m->arena_cap + m->arena_cap / 2;
		void *a;

		if (cap < need)
			cap = need;
		if (cap < 1024)
			cap = 1024;
		a = malloc(cap);
		if (a == NULL)
			return fail(d, IOGP_ENOMEM, "arena of %zu bytes", cap);
		free(m->arena);
		m->arena = a;
		m->arena_cap = cap;
	}
	m->arena_len = need;
	d->s = m->arena;
	d->b = (uint8_t *)m->arena + structs;
	d->c = (char *)m->arena + structs + bins;

	for (;;) {
		uint64_t tag, len;
		const uint8_t *bend;

		/* framing was checked by prescan */
		get(&p, end, &tag);
		if (tag == T_END)
			break;
		get(&p, end, &len);
		bend = p + len;
		if (tag <= T_MAX)
			d->what = sects[tag].name;
		switch (tag) {
		case T_LABELS: r = dec_labels(d, m, p, bend); break;
		case T_METRICS: r = dec_metrics(d, m, p, bend); break;
		case T_INTERVAL: r = dec_interval(d, m, p, bend); break;
		case T_COUNTERS: r = dec_counters(d, m, p, bend); break;
		case T_GAUGES: r = dec_gauges(d, m, p, bend); break;
		case T_HISTS: r = dec_hists(d, m, p, bend); break;
		case T_ACCESS: r = dec_access(d, m, p, bend); break;
		case T_FILES: r = dec_files(d, m, p, bend); break;
		case T_DROPPED: r = dec_value(d, &m->dropped, p, bend); break;
		case T_SEEN: r = dec_value(d, &m->access_seen, p, bend); break;
		case T_EXACT: r = dec_exact(d, m, p, bend); break;
		case T_FILERECS: r = dec_filerecs(d, m, p, bend); break;
		case T_PEERS: r = dec_peers(d, m, p, bend); break;
		default: r = 0; break;
		}
		if (r < 0)
			return r;
		if (r > 0)
			return fail(d, IOGP_ECORRUPT, "%d bytes left over in the section", r);
		p = bend;
	}
	m->canonical = !d->odd;
	return 0;
}

int iogp_msg_decode(iogp_msg *m, const uint8_t *buf, size_t len,
                    char *err, size_t errlen)
{
	struct dec d = { .err = err, .errlen = errlen, .what = "header" };
	int r;

	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if (m == NULL)
		return IOGP_EINVAL;
	msg_clear(m);
	if (buf == NULL)
		return fail(&d, IOGP_EINVAL, "no buffer");
	r = msg_decode(&d, m, buf, len);
	if (r < 0)
		msg_clear(m);
	return r;
}
