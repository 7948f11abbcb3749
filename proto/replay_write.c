/* replay_write.c - the replay file's writer: buffered frames, zstd packs, keyframe index. */
#define _FILE_OFFSET_BITS 64
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "iogp_err.h"
#include "iogp_replay.h"
#include "iogp_testing.h"
#include "iogp_wire.h"
#include "replay_priv.h"
#include "iogp_sys.h"

#define OUT_CAP (256u << 10)

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
	uint8_t *xbuf, *rbuf, *cbuf;
	size_t xcap, rcap, ccap;
	uint64_t transformed;
	int verify;                 /* tests: run the reader's inverse on each one too */
	int xf_off;                 /* a sampled check found a wrong transform: none more */
	uint32_t fault, nfault;     /* tests: spoil every fault-th transform */
	uint64_t unproven;          /* tests: accepted, but the inverse disagreed */
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
			replay__xs_reset(&w->xs);
		}
		return 0;
	}
	if (replay__grow(&w->zbuf, &w->zcap, 4 + ZSTD_compressBound(w->packlen) + 64, 1024) < 0)
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
		if (replay__grow(&w->zbuf, &w->zcap, w->zcap + 1, 1024) < 0)
			return w->failed = IOGP_ENOMEM;
		out.dst = w->zbuf;
		out.size = w->zcap;
	}
	w->zopen = !end;
	w->packlen = 0;
	if (end)
		replay__xs_reset(&w->xs);
	return emit_frame(w, flags, w->pack_first_ns, w->zbuf, out.pos, NULL, 0);
}

static void writer_free(iogp_replay_writer *w)
{
	replay__xs_free(&w->xs);
	replay__xr_free(&w->xr);
	replay__xr_free(&w->xe);
	iogp_msg_free(&w->dm);
	free(w->xbuf);
	free(w->rbuf);
	free(w->cbuf);
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
		iogp_errf(err, errlen, "no path given");
		return IOGP_EINVAL;
	}
	*wp = NULL;
	iogp_replay_wopts o = { .creator = "libiogram-proto", .compress = 1 };
	if (opts)
		o = *opts;
	iogp_replay_writer *w = calloc(1, sizeof *w);
	if (!w || !(w->out = malloc(OUT_CAP))) {
		free(w);
		iogp_errf(err, errlen, "out of memory");
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
			iogp_errf(err, errlen, "cannot set up zstd compression");
			return IOGP_ENOMEM;
		}
	}
	/* a recording is the user's own: 0600, never through a link, never
	 * over an existing file unless asked, never into a FIFO or device */
	struct stat ls;
	int exists = lstat(path, &ls) == 0;
	if (exists && (!o.replace || !S_ISREG(ls.st_mode))) {
		int e = !S_ISREG(ls.st_mode) ? EINVAL : EEXIST;
		iogp_errf(err, errlen, S_ISLNK(ls.st_mode) ?
		                "%s is a symbolic link: not written through" :
		                !S_ISREG(ls.st_mode) ? "%s is not a regular file" :
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
		iogp_errf(err, errlen, "cannot create %s: %s", path, strerror(e));
		writer_free(w);
		errno = e;
		return IOGP_EIO;
	}

	const char *creator = o.creator ? o.creator : "";
	size_t clen = strnlen(creator, CREATOR_MAX);
	uint8_t h[HDR_FIXED + CREATOR_MAX];
	size_t hl = HDR_FIXED + clen;
	memcpy(h, IOGP_REPLAY_MAGIC, MAGIC_LEN);
	put16(h + 8, IOGP_REPLAY_VERSION);
	put16(h + 10, (uint16_t)hl);
	put64(h + 12, iogp_wall_ns());
	put16(h + 20, (uint16_t)clen);
	memcpy(h + 22, creator, clen);
	put32(h + 22 + clen, iogp_crc32c(0, h, hl - 4));
	/* Written at once, so even a file cut short right away says what it is. */
	if (emit_raw(w, h, hl) < 0 || drain(w) < 0) {
		int e = errno;
		iogp_errf(err, errlen, "cannot write %s: %s", path, strerror(e));
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

/* The payload's sections a transform keeps as wire bytes (its REST: labels,
 * metrics, access samples, files, exact values, file records, MPI
 * destinations), copied as they are into w->rbuf with the END byte; the
 * length, 0 if there are none. -1 when the payload is not in the form the
 * wire encoder writes (a tag it does not know, tags out of order, no END
 * last): the reader's re-encoding could not give it back, so it is stored as
 * it is without trying. The check after the transform still decides. */
static long rest_gather(iogp_replay_writer *w, const uint8_t *payload, size_t len)
{
	const uint8_t *p = payload + 16, *end = payload + len;
	uint64_t v, tag, n, last = 0;
	size_t rl = 0;
	if (vget(&p, end, &v) < 0)
		return -1;
	for (;;) {
		if (vget(&p, end, &tag) < 0)
			return -1;
		if (tag == W_END)
			break;
		const uint8_t *h = p;
		if (tag <= last || tag > W_MAX || vget(&p, end, &n) < 0 ||
		    n > (uint64_t)(end - p))
			return -1;
		last = tag;
		p += n;
		if (W_NUMBERS >> tag & 1)
			continue;
		/* the tag is one byte (<= W_MAX) */
		size_t k = (size_t)(p - h) + 1;
		if (replay__grow(&w->rbuf, &w->rcap, rl + k + 1, 1024) < 0)
			return -1;
		memcpy(w->rbuf + rl, h - 1, k);
		rl += k;
	}
	if (p != end)
		return -1;
	if (!rl)
		return 0;
	w->rbuf[rl++] = W_END;
	return (long)rl;
}

/* Whether the transform in w->xbuf (n bytes) reads back as payload, by
 * running the reader: its own inverse rebuilds the DELTA into w->xr, the
 * wire encoder encodes it, and the bytes must be the payload's. One step of
 * the reader is not replayed: decoding the REST. Its bytes are the payload's
 * own sections, copied unchanged (rest_gather), and the wire decoder reads
 * each section from its own bytes alone, so they decode to what m (the
 * payload, decoded) holds: m's values stand in for them. Only the tests run
 * it now (iogp__replay_verify): xf_proven decides. */
static int xf_check(iogp_replay_writer *w, const uint8_t *payload, size_t len,
                    const iogp_msg *m, size_t n)
{
	struct xrec *o = &w->xr;
	o->norest = 1;
	if (replay__xs_decode(&w->xs, o, w->xbuf, w->xbuf + n) < 0)
		return 0;
	o->m.nlabels = m->nlabels;
	o->m.labels = m->labels;
	o->m.nmetrics = m->nmetrics;
	o->m.metrics = m->metrics;
	o->m.naccess = m->naccess;
	o->m.access = m->access;
	o->m.nfiles = m->nfiles;
	o->m.files = m->files;
	o->m.nexact = m->nexact;
	o->m.exact = m->exact;
	o->m.nfilerecs = m->nfilerecs;
	o->m.filerecs = m->filerecs;
	o->m.npeers = m->npeers;
	o->m.peers = m->peers;
	return replay__xr_encode(o) == 0 && o->outlen == len && !memcmp(o->out, payload, len);
}

/* Whether the transform of m reads back as payload, without running the
 * reader. The reader's inverse gives back exactly the numbers of any DELTA
 * replay__xs_encode transforms, if the wire encoder accepts it (ids and bin
 * indexes ascending, no empty bin) and the frame's state stays within its
 * bound (replay_xform.c says why, step by step, above replay__xs_encode);
 * it then encodes those numbers with the REST's sections, which decode to
 * m's. So it gives back encode(m), and that must be the payload: a payload
 * the encoder would write otherwise (a hostile or foreign one) is stored
 * as it is. m is what payload decodes to (iogp_replay_write_msg's
 * contract), so m->canonical answers; a message not from the decoder has it
 * 0 and is encoded to see. */
static int xf_proven(iogp_replay_writer *w, const uint8_t *payload, size_t len,
                     const iogp_msg *m, uint32_t i, uint64_t elems)
{
	if (!replay__xs_fits(&w->xs, i, elems))
		return 0;
	/* the decoder says so as it reads (fuzz_decode holds it to that) */
	if (m->canonical)
		return 1;
	if (replay__grow(&w->cbuf, &w->ccap, len + 64, 1024) < 0)
		return 0;
	long k = iogp_msg_encode(m, w->cbuf, w->ccap);
	return k == (long)len && !memcmp(w->cbuf, payload, len);
}

/* Transform payload (a DELTA) into w->xbuf if that is smaller and reads
 * back exactly; returns its length, or 0 to store the payload as it is. */
static size_t xf_try(iogp_replay_writer *w, const uint8_t *payload, size_t len,
                     const iogp_msg *m)
{
	iogp_kind kind;
	if (w->xf_off)
		return 0;
	if (m ? m->kind != IOGP_DELTA :
	    iogp_msg_peek(payload, len, &kind, NULL, NULL, NULL) < 0 || kind != IOGP_DELTA)
		return 0;
	long rl = rest_gather(w, payload, len);
	if (rl < 0)
		return 0;
	size_t restlen = (size_t)rl;
	if (!m) {
		if (iogp_msg_decode(&w->dm, payload, len, NULL, 0) < 0)
			return 0;
		m = &w->dm;
	}
	uint64_t elems = (uint64_t)m->ncounters + m->ngauges + m->nhists;
	for (uint32_t k = 0; k < m->nhists && elems <= XF_SRC_ELEMS; k++)
		elems += m->hists[k].nbins;
	if (elems > XF_SRC_ELEMS)
		return 0;
	uint32_t i = replay__xs_find(&w->xs, m->source);
	if (i == w->xs.n && i >= XF_MAX_SOURCES)
		return 0;
	if (replay__grow(&w->xbuf, &w->xcap, replay__xs_bound(&w->xs, i, m, restlen), 1024) < 0)
		return 0;
	size_t n = replay__xs_encode(&w->xs, &w->xe, i, m, w->rbuf, restlen, w->xbuf);
	/* A source's first DELTA in a frame may grow a little (its id, values
	 * from zero) but sets up the prediction of the next ones. */
	if (!n || n > XF_GROWTH(len))
		return 0;
	if (w->fault && ++w->nfault % w->fault == 0)
		w->xbuf[0] ^= 2;   /* the mode's flags bit: the reader misreads the rest */
	int ok = xf_proven(w, payload, len, m, i, elems);
	/* the proof, checked: the reader's inverse on every XF_CHECK_EVERY-th
	 * (each one in the tests); one it refutes is stored as it came, and
	 * the writer transforms nothing more (counted: xform_refuted) */
	if (ok && (w->verify || w->transformed % XF_CHECK_EVERY == 0) &&
	    !xf_check(w, payload, len, m, n)) {
		w->unproven++;
		w->st.xform_refuted++;
		w->xf_off = !w->verify;
		ok = 0;
	}
	/* the source's state from m and the predictors chosen, as the reader's
	 * inverse leaves it */
	w->xe.m = *m;
	w->xe.slot = i;
	if (!ok || replay__xs_commit(&w->xs, &w->xe) < 0)
		return 0;
	w->transformed++;
	return n;
}

static int write_rec(iogp_replay_writer *w, uint64_t recv_ns, const void *payload,
                     size_t len, const iogp_msg *m);

int iogp_replay_write(iogp_replay_writer *w, uint64_t recv_ns,
                      const void *payload, size_t len)
{
	return write_rec(w, recv_ns, payload, len, NULL);
}

int iogp_replay_write_msg(iogp_replay_writer *w, uint64_t recv_ns,
                          const void *payload, size_t len, const iogp_msg *m)
{
	return write_rec(w, recv_ns, payload, len, m);
}

static int write_rec(iogp_replay_writer *w, uint64_t recv_ns, const void *payload,
                     size_t len, const iogp_msg *m)
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
		if (replay__grow(&w->pack, &w->packcap, w->packlen + INNER_HDR_MAX + XF_GROWTH(len),
		                 PACK_TARGET * 2) < 0)
			return IOGP_ENOMEM;
		const uint8_t *body = payload;
		size_t blen = xf_try(w, payload, len, m);
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

int iogp_replay_note_losses(iogp_replay_writer *w, uint64_t recv_ns, uint64_t gaps,
                            uint64_t refused)
{
	if (!w || w->in_kf || recv_ns == UINT64_MAX)
		return IOGP_EINVAL;
	uint8_t b[NOTE_LEN];
	memcpy(b, "IOGL", 4);
	put64(b + 4, gaps);
	put64(b + 12, refused);
	return emit_frame(w, F_MARK, recv_ns, b, sizeof b, NULL, 0);
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

void replay__prefetch(iogp_replay_writer *w, uint64_t source)
{
	if (w && w->compress)
		replay__xs_prefetch(&w->xs, source);
}

/* Private (tests, benchmarks): DELTAs stored transformed so far. */
uint64_t iogp__replay_transformed(const iogp_replay_writer *w)
{
	return w ? w->transformed : 0;
}

uint64_t iogp__replay_verify(iogp_replay_writer *w, int on, uint32_t fault)
{
	if (!w)
		return 0;
	w->verify = on;
	w->fault = fault;
	return w->unproven;
}

void iogp_replay_writer_stats(const iogp_replay_writer *w, iogp_replay_wstats *st)
{
	if (!w || !st)
		return;
	*st = w->st;
	st->file_bytes = w->pos;
	st->bytes_since_keyframe = w->pos - w->kf_end_pos;
}
