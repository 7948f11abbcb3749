/* iogp_replay.h - the .iogr replay file: writer and reader.
 *
 * Layout (integers little endian):
 *   header : "IOGR\r\n\x1a\n" | u16 version | u16 header length H |
 *            u64 creation CLOCK_REALTIME ns | u16 creator length | creator |
 *            u32 crc32c of everything before it            (H bytes in all)
 *   frames : u32 length word | u32 crc32c(length word + receive time bytes
 *            + body) | u64 receive time ns | body[length]
 *   index  : a frame whose receive time is UINT64_MAX, body "IOGX" + entries
 *            u64 offset of a keyframe's marker frame | u64 its receive time
 *   trailer: u64 offset of the index frame | "IOGRTAIL"  (16 bytes)
 *
 * The header's H and final CRC hold for every version; a reader checks the
 * CRC before the version. The length word's low 27 bits are the body length
 * (<= IOGP_REPLAY_MAX_FRAME), its top 5 bits flags, covered by the CRC:
 *   bit 31 PACK  the body is a pack (below)
 *   bit 30 KEY   the record(s) belong to a keyframe
 *   bit 29 NEWZ  the pack starts a new zstd frame
 *   bit 28 MARK  keyframe marker: no record, body "IOGK", receive time = the
 *                one given to keyframe_begin; the keyframe's first frame.
 *                Or a losses note: body "IOGL" | u64 gaps | u64 refused, the
 *                writer's cumulative count of messages lost before it (the
 *                sequence numbers its sources skipped) and refused (not
 *                written: undecodable, hostile, over the caps); readers
 *                keep the last one (iogp_replay_rstats)
 *   bit 27       reserved, 0
 * A frame body is either one record's payload (flags 0 or KEY; a wire
 * payload starts "IOGW": the design's plain record) or a pack (starts
 * "IOGZ"): a zstd stream chunk that inflates to whole inner records, all of
 * the pack's KEY flag. Packs continue one zstd frame from keyframe to
 * keyframe (each writer flush ends a chunk with ZSTD_e_flush, so a torn tail
 * loses only the last chunk); a keyframe starts a new zstd frame, so reading
 * can begin at any keyframe. A pack never mixes keyframe and other records,
 * and holds at most ~64 KiB of inner records or one big record (readers
 * refuse to inflate more). The zstd frame before a keyframe ends with its
 * last pack, or is left open if nothing was pending (its chunks were all
 * flushed: nothing is lost).
 *
 * Inner records (numbers are LEB128 varints, minimal; zz = zigzag of the
 * signed difference, modulo 2^64):
 *   head = body length << 2 | form | zz(receive time - previous one) | body
 * The first record's "previous" receive time is the pack frame's, which is
 * that record's own. form 0: body = the payload. form 1: body = a DELTA's
 * transform (below); the reader rebuilds the DELTA and re-encodes it with
 * iogp_msg_encode, which gives the payload's exact bytes (the writer checks
 * this before choosing form 1, so a payload the wire encoder would not
 * write byte for byte - non-canonical, unknown sections - stays form 0).
 * Forms 2 and 3 are reserved: the pack is damage.
 *
 * The transform predicts each DELTA from its source's previous form-1 DELTA
 * in the same zstd frame ("prev"; all zero and empty for a source new in the
 * frame). Both sides keep that state per source; it is empty at every NEWZ
 * pack, so seeking to a keyframe and resuming after damage work as for plain
 * packs. Sources get indexes 0, 1, ... in order of first appearance in the
 * frame. A body, in this order ([x]: only with its mode bit):
 *   mode   bits 0 NEW source, 1 FLAGS, 2 SEQ, 3-4 t0 rule (0: prev t1,
 *          1: prev t0 + (prev t0 - the t0 before it, 0 if none), 2: given),
 *          5 CLIST, 6 GLIST, 7 HLIST (id lists given), 8 REST, 9 DROPPED,
 *          10 SEEN, 11 CSEL, 12 HSEL (predictor lists given); other bits
 *          and t0 rule 3 are corrupt
 *   source NEW: u64 source id (it gets the next index); else zz(index -
 *          (the frame's previous form-1 record's index + 1, or 0))
 *   [flags] else prev's;  [zz(seq - prev seq - 1)] else prev seq + 1
 *   [zz(t0 - prev t1)] with t0 rule 2
 *   zz(t1 - t0 - (t0 - prev t0)) | zz(wall - prev wall - (t1 - prev t1))
 *   [zz(dropped - prev's)] else prev's;  [zz(access_seen - prev's)] else prev's
 *   counters: [CLIST: n, n id gaps] else prev's ids; [CSEL: n predictors]
 *          else prev's (0s after a CLIST); n x zz(value - prediction).
 *          "last" = prev's value of the same id (0 if none); predictor 0:
 *          last; j + 1 (j < this counter's position): last x value of
 *          counter j / last of counter j, rounded (last when that is 0)
 *   gauges : [GLIST: n, n id gaps] else prev's ids; n x zz(value - last)
 *   hists  : [HLIST: n, n id gaps] else prev's ids; [HSEL: n totals] else
 *          prev's (0s after an HLIST): 0 none, k + 1 the histogram's count
 *          total is counter k's value. Then for each histogram, against
 *          prev's of the same id (P, maybe empty): the bin indexes, as
 *            0  P's
 *            1  n, n idx gaps
 *            2  nrem, nrem gaps of positions in P removed; nadd, nadd x
 *               (how many more of P's kept ones lie before it, gap from the
 *               index before it in the new list, or the index if none)
 *          then the counts: with no total, one zz(count - P's count at that
 *          index or 0) per bin; with a total T, the predictions are scaled
 *          by T / P's total (rounded; unscaled if P's is 0 or does not fit
 *          64 bits) and the last bin's count is T minus the others (which
 *          must leave it > 0; no bins: T = 0). Counts are never 0.
 *   [REST] length, then wire sections (iogp_wire.h) ending with END, holding
 *          only labels, metrics, access samples and files
 * zz is modulo 2^64 throughout; gaps are as in the wire codec (first =
 * value, then value - (previous + 1)); a body must be consumed exactly.
 * The writer picks the predictors (keeping a source's while they still do
 * well), but the reader only follows what the body says.
 * Limits (beyond: the writer stores form 0; a reader finding more treats
 * the pack as damage): 16384 sources per zstd frame, 16384 counters +
 * gauges + histograms + bins per DELTA, 2^21 of them held for all sources;
 * so a reader's transform state stays under ~50 MiB whatever the file.
 * A reader that finds a form-1 record it cannot rebuild counts the pack as
 * a bad frame and resumes at the next keyframe, like a pack that does not
 * inflate. At 64 busy sources this comes to ~90 bytes per source-second
 * with keyframes (plain records ~280, packs without the transform ~160;
 * see bench_disk).
 *
 * A keyframe is a run of records (SNAPSHOTs with IOGP_F_KEYFRAME) that holds
 * the full state of every source; the index lists where each starts. */
#ifndef IOGP_REPLAY_H
#define IOGP_REPLAY_H

#include "iogp_api.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "iogp_wire.h"

#define IOGP_REPLAY_MAGIC "IOGR\r\n\x1a\n"
#define IOGP_REPLAY_VERSION 1
#define IOGP_REPLAY_MAX_FRAME (64u << 20)
/* Largest payload iogp_replay_write takes (its pack must fit a frame). */
#define IOGP_REPLAY_MAX_RECORD (IOGP_REPLAY_MAX_FRAME - (1u << 20))

IOGP_API uint32_t iogp_crc32c(uint32_t crc, const void *buf, size_t len);

/* ---- writer ---- */
typedef struct iogp_replay_writer iogp_replay_writer;

typedef struct iogp_replay_wopts {
	const char *creator;   /* "iogram record 0.1", stored in the header */
	int compress;          /* 1: packs (default for tools), 0: plain records */
	int zstd_level;        /* 0 = default (3) */
	int replace;        /* 1: an existing regular file is replaced; 0 (default):
	                     * refused. Created 0600, never through a symbolic link. */
} iogp_replay_wopts;

/* Create path (0600; an existing file only with opts->replace). err gets a
 * message on failure. */
IOGP_API int iogp_replay_create(iogp_replay_writer **w, const char *path,
                       const iogp_replay_wopts *opts, char *err, size_t errlen);
/* Append one record (payload = wire bytes, unchanged). Buffered. An empty
 * payload is allowed; IOGP_ELIMIT above IOGP_REPLAY_MAX_RECORD; IOGP_EINVAL
 * for recv_ns UINT64_MAX (reserved for the index). After a write error
 * (IOGP_EIO) or a compressor failure every call returns that error. */
IOGP_API int iogp_replay_write(iogp_replay_writer *w, uint64_t recv_ns,
                      const void *payload, size_t len);
/* The same for a payload the caller has decoded into m (what payload
 * decodes to, exactly): spares decoding it again. */
IOGP_API int iogp_replay_write_msg(iogp_replay_writer *w, uint64_t recv_ns,
                                   const void *payload, size_t len, const iogp_msg *m);
/* Begin / end a keyframe: records written in between form it. Begin flushes
 * pending data, starts a new zstd frame and adds an index entry. Begin
 * inside a keyframe or end outside one is IOGP_EINVAL. */
IOGP_API int iogp_replay_keyframe_begin(iogp_replay_writer *w, uint64_t recv_ns);
IOGP_API int iogp_replay_keyframe_end(iogp_replay_writer *w);
/* Push buffered records to the file (one pack chunk) and fflush. After this
 * returns, a crash loses nothing written before it. */
IOGP_API int iogp_replay_flush(iogp_replay_writer *w);
/* Note the writer's losses so far (cumulative; see the MARK frame above):
 * a small frame, outside keyframes (IOGP_EINVAL inside one). */
IOGP_API int iogp_replay_note_losses(iogp_replay_writer *w, uint64_t recv_ns,
                                     uint64_t gaps, uint64_t refused);
/* Flush, write the index and trailer, close. Frees w even on error. */
IOGP_API int iogp_replay_close(iogp_replay_writer *w);
/* Close the file without index or trailer (tests: simulate a crash): what
 * was not flushed is lost, as in a crash. */
IOGP_API void iogp_replay_abandon(iogp_replay_writer *w);

typedef struct iogp_replay_wstats {
	uint64_t records, keyframes;
	uint64_t payload_bytes;      /* sum of record payload lengths */
	uint64_t file_bytes;         /* bytes written to the file so far */
	uint64_t bytes_since_keyframe;/* file bytes since the last keyframe ended */
	uint64_t last_keyframe_bytes;/* file bytes the last keyframe took */
	uint64_t xform_refuted;      /* DELTA transforms the sampled check of the
	                              * reader's inverse refuted (stored as they came,
	                              * none transformed after): a bug, never data lost */
} iogp_replay_wstats;
IOGP_API void iogp_replay_writer_stats(const iogp_replay_writer *w, iogp_replay_wstats *st);

/* ---- reader ---- */
typedef struct iogp_replay_reader iogp_replay_reader;

typedef struct iogp_replay_info {
	uint16_t version;
	uint64_t created_ns;
	char creator[256];
	uint64_t file_bytes;
	int index_found;        /* 1: trailer + index valid; 0: rebuilt by a scan */
} iogp_replay_info;

IOGP_API int iogp_replay_open(iogp_replay_reader **r, const char *path, char *err, size_t errlen);
IOGP_API void iogp_replay_close_reader(iogp_replay_reader *r);
IOGP_API void iogp_replay_get_info(const iogp_replay_reader *r, iogp_replay_info *info);

typedef struct iogp_replay_rec {
	uint64_t recv_ns;
	const uint8_t *payload;  /* valid until the next call on the reader */
	size_t len;
	int keyframe;            /* 1 if inside a keyframe */
	int keyframe_start;      /* 1 for the first record of a keyframe */
	uint64_t offset;         /* file offset of the frame holding it */
} iogp_replay_rec;

/* Next record: 0 and *rec filled, IOGP_EEOF at the end of readable data.
 * Damage never stops with an error: a bad frame (CRC, length, inflate, a
 * transformed DELTA that does not rebuild) is skipped and counted, and
 * reading resumes at the next keyframe (packs) or the next frame (plain); a
 * torn tail ends the data. Only IOGP_EIO (a read failed) and IOGP_ENOMEM
 * end it early. After damage no record is marked keyframe_start until the
 * next keyframe marker. */
IOGP_API int iogp_replay_next(iogp_replay_reader *r, iogp_replay_rec *rec);
/* Position at the start (first record); also zeroes the reader stats. */
IOGP_API int iogp_replay_rewind(iogp_replay_reader *r);

typedef struct iogp_replay_kf {
	uint64_t offset;   /* file offset of the keyframe's first frame */
	uint64_t recv_ns;  /* receive time given to keyframe_begin */
} iogp_replay_kf;
/* Keyframe index (from the trailer or a scan). Pointer valid while r lives. */
IOGP_API size_t iogp_replay_keyframes(iogp_replay_reader *r, const iogp_replay_kf **kf);
/* Position at the last keyframe at or before t (or the start of the file if
 * none); the next records are that keyframe then what follows. */
IOGP_API int iogp_replay_seek(iogp_replay_reader *r, uint64_t recv_ns);

typedef struct iogp_replay_rstats {
	uint64_t records, frames, keyframes;
	uint64_t bad_frames;    /* CRC / length / inflate / DELTA rebuild failures */
	uint64_t skipped_bytes; /* bytes not read as records: torn tail + damage */
	uint64_t first_ns, last_ns; /* receive times of first / last record read */
	int losses_noted;       /* 1: a losses note was read; the last one's counts: */
	uint64_t noted_gaps, noted_refused;
} iogp_replay_rstats;
IOGP_API void iogp_replay_reader_stats(const iogp_replay_reader *r, iogp_replay_rstats *st);

#endif
