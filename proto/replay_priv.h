/* replay_priv.h - internals shared by the replay file's writer, reader and DELTA transform. */
#ifndef IOGP_REPLAY_PRIV_H
#define IOGP_REPLAY_PRIV_H

#include <stddef.h>
#include <stdint.h>

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
#define NOTE_LEN 20              /* "IOGL" + two u64 */
#define TRAILER_LEN 16
#define TRAILER_MAGIC "IOGRTAIL"
#define CREATOR_MAX 255
#define PACK_TARGET (64u << 10)
/* A pack holds at most PACK_TARGET bytes of records or one big record. */
#define CHUNK_MAX ((size_t)IOGP_REPLAY_MAX_RECORD + INNER_HDR_MAX + PACK_TARGET)
#define LEVEL_MAX 19            /* keeps the window within WINDOW_LOG_MAX */
#define WINDOW_LOG_MAX 23

static inline void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
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
 * reader can start at any keyframe. The writer stores a transform only
 * where the reader is sure to get the payload's bytes back: the inverse
 * rebuilds the numbers of whatever the transform was made of (by
 * construction: replay_xform.c), and the payload must be what the wire
 * encoder writes for them (replay_write.c: xf_proven). The tests also run
 * the reader's own inverse on every record the writer transforms
 * (iogp__replay_verify), so a transform that stops being invertible fails
 * them. */
#define XF_MAX_SOURCES 16384
#define XF_CHECK_EVERY 64           /* the writer runs the reader's inverse on one in this many */
#define XF_SRC_ELEMS 16384          /* counters + gauges + hists + bins, one DELTA */
#define REST_HDR 17                 /* a wire header with seq 0 */
/* Wire section tags (wire.c's list, part of the wire format): the ones a
 * transform carries as numbers; every other known one goes in its REST as
 * the payload's own bytes. */
enum {
	W_END = 0, W_INTERVAL = 3, W_COUNTERS = 4, W_GAUGES = 5, W_HISTS = 6,
	W_DROPPED = 9, W_SEEN = 10, W_MAX = 13,
};
#define W_NUMBERS (1u << W_INTERVAL | 1u << W_COUNTERS | 1u << W_GAUGES | 1u << W_HISTS | \
                   1u << W_DROPPED | 1u << W_SEEN)
/* Largest transform kept of a payload of len bytes (no DELTA is longer
 * than IOGP_MAX_PAYLOAD). */
#define XF_GROWTH(len) ((len) <= IOGP_MAX_PAYLOAD ? (len) + (len) / 4 + 64 : (len))

struct xsrc;

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
	int norest;             /* writer's check: REST bytes skipped, not decoded
	                         * (they are the payload's own sections) */
	uint8_t *out;           /* m encoded */
	size_t outcap, outlen;
};


int replay__grow(uint8_t **buf, size_t *cap, size_t need, size_t first);

void replay__xs_reset(struct xstate *x);
void replay__xs_free(struct xstate *x);
void replay__xr_free(struct xrec *o);
uint32_t replay__xs_find(const struct xstate *x, uint64_t id);
void replay__xs_prefetch(const struct xstate *x, uint64_t id);
/* For the recorder (same library): source's transform state into the
 * cache while its model works on the message. */
void replay__prefetch(iogp_replay_writer *w, uint64_t source);
int replay__xs_decode(const struct xstate *x, struct xrec *o, const uint8_t *p,
                      const uint8_t *end);
int replay__xr_encode(struct xrec *o);
int replay__xs_commit(struct xstate *x, const struct xrec *o);
int replay__xs_fits(const struct xstate *x, uint32_t i, uint64_t elems);
size_t replay__xs_encode(const struct xstate *x, struct xrec *t, uint32_t i,
                         const iogp_msg *m, const uint8_t *rest, size_t restlen,
                         uint8_t *q0);
size_t replay__xs_bound(const struct xstate *x, uint32_t i, const iogp_msg *m,
                        size_t restlen);


#endif
