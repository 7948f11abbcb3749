/* replay_read.c - the replay file's damage-tolerant reader: resync, packs, index, seek. */
#define _FILE_OFFSET_BITS 64
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "iogp_err.h"
#include "iogp_replay.h"
#include "iogp_testing.h"
#include "iogp_wire.h"
#include "replay_priv.h"

#define WIN_CAP (256u << 10)

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
		if (replay__grow(&r->big, &r->big_cap, n, WIN_CAP) < 0) {
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
	return fl == 0 || fl == F_KEY || (fl == F_MARK && (len == 4 || len == NOTE_LEN));
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
				int rc = replay__xs_decode(&r->xs, &r->xr, p, p + blen);
				if (rc >= 0)
					rc = replay__xr_encode(&r->xr);
				if (rc >= 0)
					rc = replay__xs_commit(&r->xs, &r->xr);
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
		if (f.flags == F_MARK && f.len == NOTE_LEN && !memcmp(f.body, "IOGL", 4)) {
			r->st.losses_noted = 1;
			r->st.noted_gaps = get64(f.body + 4);
			r->st.noted_refused = get64(f.body + 12);
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
				replay__xs_reset(&r->xs);
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
		iogp_errf(err, errlen, "%s: empty file (0 bytes), not an iogram replay file",
		                name);
		return IOGP_ETRUNC;
	}
	size_t n = r->size < MAGIC_LEN ? (size_t)r->size : MAGIC_LEN;
	const uint8_t *h = rd(r, 0, n);
	if (!h)
		goto io;
	if (memcmp(h, IOGP_REPLAY_MAGIC, n)) {
		iogp_errf(err, errlen, "%s: not an iogram replay file (bad magic)", name);
		return IOGP_EMAGIC;
	}
	if (r->size < 12 || !(h = rd(r, 0, 12))) {
		if (r->io_errno)
			goto io;
		iogp_errf(err, errlen, "%s: truncated header (file is %llu bytes)", name,
		                (unsigned long long)r->size);
		return IOGP_ETRUNC;
	}
	unsigned version = get16(h + 8), hl = get16(h + 10);
	if (hl < HDR_FIXED) {
		iogp_errf(err, errlen, "%s: corrupt header (length %u)", name, hl);
		return IOGP_ECORRUPT;
	}
	if (hl > r->size) {
		iogp_errf(err, errlen, "%s: truncated header (%u bytes, file is %llu)", name,
		                hl, (unsigned long long)r->size);
		return IOGP_ETRUNC;
	}
	if (!(h = rd(r, 0, hl)))
		goto io;
	if (iogp_crc32c(0, h, hl - 4) != get32(h + hl - 4)) {
		iogp_errf(err, errlen, "%s: corrupt header (checksum mismatch)", name);
		return IOGP_ECRC;
	}
	if (version > IOGP_REPLAY_VERSION) {
		iogp_errf(err, errlen, "%s: file format version %u is newer than this "
		                "iogram reads (%d); use a newer iogram", name, version,
		                IOGP_REPLAY_VERSION);
		return IOGP_EVERSION;
	}
	unsigned clen = get16(h + 20);
	if (!version || HDR_FIXED + clen > hl) {
		iogp_errf(err, errlen, "%s: corrupt header (version %u, creator length %u)",
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
	iogp_errf(err, errlen, "cannot read %s: %s", name, strerror(r->io_errno));
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
		iogp_errf(err, errlen, "out of memory");
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
		iogp_errf(err, errlen, "%s: %s while scanning for keyframes", name,
		                rc == IOGP_EIO ? strerror(r->io_errno) : iogp_strerror(rc));
	else if (rc == IOGP_ENOMEM)
		iogp_errf(err, errlen, "%s: out of memory", name);
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
		iogp_errf(err, errlen, "no path given");
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
			iogp_errf(err, errlen, "cannot open %s: not a regular file", path);
		else
			iogp_errf(err, errlen, "cannot open %s: %s", path, strerror(e));
		if (fd >= 0)
			close(fd);
		errno = e;
		return IOGP_EIO;
	}
	return reader_open(rp, fd, NULL, (uint64_t)sb.st_size, path, err, errlen);
}

/* Private (tests, fuzzing): read a file image in memory; buf outlives r. */
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
	replay__xs_free(&r->xs);
	replay__xr_free(&r->xr);
	free(r->win);
	free(r->big);
	free(r->ibuf);
	free(r->kf);
	free(r);
}
