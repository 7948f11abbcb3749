/* check_replay.c - replay file: CRC-32C, round trips (plain, packs, transformed DELTAs), index,
 * seek, torn tails, corruption, hostile packs, bad files. */
#define _FILE_OFFSET_BITS 64
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "iogp_err.h"
#include "iogp_export.h"
#include "iogp_recorder.h"
#include "iogp_replay.h"
#include "iogp_testing.h"
#include "iogp_wire.h"
#include "realistic.h"
#include "testutil.h"

#define SEED 0x5eed2e91a7ULL
#define CREATOR "check_replay"
#define MAXREC 400

/* For hot loops: every ck_assert call writes its location to a log. */
#define CHECK(cond, ...) do { if (!(cond)) ck_abort_msg(__VA_ARGS__); } while (0)

static char tmpdir[64];
static uint64_t rng_state;

static uint64_t rng(void)
{
	return tu_splitmix(&rng_state);
}

static uint64_t rng_below(uint64_t n)
{
	return n ? rng() % n : 0;
}

static void path_of(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", tmpdir, name);
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

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

static uint8_t *slurp(const char *path, size_t *len)
{
	return (uint8_t *)tu_load(path, len);
}

static void spit(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert_msg(fd >= 0, "create %s: %s", path, strerror(errno));
	ck_assert_int_eq(write(fd, buf, len), (ssize_t)len);
	close(fd);
}

static uint64_t file_size(const char *path)
{
	struct stat sb;
	ck_assert_int_eq(stat(path, &sb), 0);
	return (uint64_t)sb.st_size;
}

/* ---- a data set: records plus the writer calls that make the file ---- */

enum { OP_REC, OP_KBEGIN, OP_KEND, OP_FLUSH };
struct op {
	int kind;
	int rec;        /* OP_REC */
	uint64_t t;     /* OP_KBEGIN */
};

struct orec {
	uint64_t t;
	size_t len;
	uint8_t *p;
	int kf, kfs;
};

struct dataset {
	struct orec rec[MAXREC];
	int n;
	struct op ops[4 * MAXREC];
	int nops;
	uint64_t kft[MAXREC];
	int nk;
};

/* Payloads of a data set: random bytes, a compressible pattern, or wire
 * messages (mostly realistic DELTAs, which packs store transformed). */
enum { PL_RANDOM, PL_PATTERN, PL_WIRE };

#define NRSRC 5
static realistic *rsrc[NRSRC];
static uint64_t rseq[NRSRC];
static iogp_msg rmsg;
static uint64_t n_canonical;       /* DELTAs the writer should transform */
static uint64_t last_transformed;  /* what it did (write_dataset) */

static uint8_t *encode_msg(const iogp_msg *m, size_t *len)
{
	long n = iogp_msg_encode(m, NULL, 0);
	ck_assert_int_gt(n, 0);
	uint8_t *p = malloc((size_t)n + 8);
	ck_assert_int_eq(iogp_msg_encode(m, p, (size_t)n), n);
	*len = (size_t)n;
	return p;
}

static void wire_begin(void)
{
	for (int s = 0; s < NRSRC; s++) {
		if (!rsrc[s])
			rsrc[s] = realistic_new(77 + (uint64_t)s);
		ck_assert_ptr_nonnull(rsrc[s]);
		realistic_set_access(rsrc[s], s == 2 ? 8 : 0);
		rseq[s] = 0;
	}
	n_canonical = 0;
}

/* Record i of a realistic stream: in a keyframe a SNAPSHOT, else mostly
 * DELTAs (round robin, with the odd lost interval, flag, drop count or
 * time jump) and now and then what the transform must leave alone: other
 * kinds, random bytes, a DELTA with an unknown section (not canonical). */
static uint8_t *wire_payload(int i, int in_kf, size_t *len)
{
	int s = rng_below(8) ? i % NRSRC : (int)rng_below(NRSRC);
	iogp_msg *m = &rmsg;
	if (in_kf) {
		realistic_snapshot(rsrc[s], m, rseq[s] + 1);
		m->flags |= IOGP_F_KEYFRAME;
		return encode_msg(m, len);
	}
	uint64_t c = rng_below(100);
	if (c < 4) {
		realistic_hello(rsrc[s], m);
		return encode_msg(m, len);
	}
	if (c < 8) {
		realistic_snapshot(rsrc[s], m, rseq[s] + 1);
		return encode_msg(m, len);
	}
	if (c < 11) {
		*len = rng_below(300);
		uint8_t *p = malloc(*len + 1);
		for (size_t k = 0; k < *len; k++)
			p[k] = (uint8_t)rng();
		if (*len >= 4)
			memcpy(p, "IOGW", 4);
		return p;
	}
	rseq[s] += 1 + !rng_below(20);
	realistic_delta(rsrc[s], m, rseq[s]);
	if (c < 14)
		m->flags = (uint16_t)rng();
	else if (c < 16)
		m->dropped = rng_below(1000);
	else if (c < 18)
		m->t0_ns -= rng_below(1000000000);
	if (c >= 18 && c < 22) {
		uint8_t *p = encode_msg(m, len);
		/* an unknown section before END: decodes, but re-encodes without it */
		memcpy(p + *len - 1, "\x28\x02\xab\xcd\x00", 5);
		*len += 4;
		return p;
	}
	n_canonical++;
	return encode_msg(m, len);
}

static size_t draw_len(int big)
{
	uint64_t c = rng_below(100);
	if (c < 4)
		return 0;
	if (c < 20)
		return 1 + rng_below(20);
	if (c < 90)
		return 200 + rng_below(100);
	if (c < 98 || !big)
		return 1000 + rng_below(4000);
	return 70000 + rng_below(30000);
}

/* n records; a keyframe (1-3 records, one empty) every ~10; a flush every
 * flush_every. Payloads as kind says (PL_*). */
static void make_dataset(struct dataset *d, int n, int big, int flush_every, int kind)
{
	memset(d, 0, sizeof *d);
	if (kind == PL_WIRE)
		wire_begin();
	uint64_t t = 1700000000000000000ull;
	int in_kf = 0, kf_left = 0, since_flush = 0;
	for (int i = 0; i < n; i++) {
		t += 1000 + rng_below(1000000);
		if (!in_kf && i % 10 == 3) {
			d->kft[d->nk++] = t - 1;
			d->ops[d->nops++] = (struct op){ .kind = OP_KBEGIN, .t = t - 1 };
			if (i == 23) {
				/* an empty keyframe */
				d->ops[d->nops++] = (struct op){ .kind = OP_KEND };
			} else {
				in_kf = 1;
				kf_left = 1 + (int)rng_below(3);
			}
		}
		struct orec *r = &d->rec[i];
		r->t = t;
		if (kind == PL_WIRE) {
			r->p = wire_payload(i, in_kf, &r->len);
		} else {
			r->len = draw_len(big);
			r->p = malloc(r->len ? r->len : 1);
			for (size_t k = 0; k < r->len; k++)
				r->p[k] = (uint8_t)(kind == PL_RANDOM || !rng_below(8) ? rng() :
				                    k * 7 + (size_t)i);
			if (r->len >= 4)
				memcpy(r->p, "IOGW", 4);
		}
		r->kf = in_kf;
		r->kfs = in_kf && d->ops[d->nops - 1].kind == OP_KBEGIN;
		d->ops[d->nops++] = (struct op){ .kind = OP_REC, .rec = i };
		if (in_kf && !--kf_left) {
			in_kf = 0;
			d->ops[d->nops++] = (struct op){ .kind = OP_KEND };
		}
		if (flush_every && ++since_flush == flush_every) {
			since_flush = 0;
			d->ops[d->nops++] = (struct op){ .kind = OP_FLUSH };
		}
	}
	if (in_kf)
		d->ops[d->nops++] = (struct op){ .kind = OP_KEND };
	d->n = n;
}

static void free_dataset(struct dataset *d)
{
	for (int i = 0; i < d->n; i++)
		free(d->rec[i].p);
}

/* how: 0 close, 1 flush + abandon. Returns the writer's stats before close. */
static iogp_replay_wstats write_dataset(const char *path, const struct dataset *d,
                                        int compress, int how)
{
	iogp_replay_writer *w;
	char err[256] = "";
	iogp_replay_wopts o = { .replace = 1, .creator = CREATOR, .compress = compress };
	int rc = iogp_replay_create(&w, path, &o, err, sizeof err);
	ck_assert_msg(rc == 0, "create: %s", err);
	for (int i = 0; i < d->nops; i++) {
		const struct op *op = &d->ops[i];
		switch (op->kind) {
		case OP_REC:
			rc = iogp_replay_write(w, d->rec[op->rec].t, d->rec[op->rec].p,
			                       d->rec[op->rec].len);
			break;
		case OP_KBEGIN:
			rc = iogp_replay_keyframe_begin(w, op->t);
			break;
		case OP_KEND:
			rc = iogp_replay_keyframe_end(w);
			break;
		case OP_FLUSH:
			rc = iogp_replay_flush(w);
			break;
		}
		ck_assert_msg(rc == 0, "op %d kind %d: %s", i, op->kind, iogp_strerror(rc));
	}
	ck_assert_int_eq(iogp_replay_flush(w), 0);
	iogp_replay_wstats st;
	iogp_replay_writer_stats(w, &st);
	last_transformed = iogp__replay_transformed(w);
	if (how == 0)
		ck_assert_int_eq(iogp_replay_close(w), 0);
	else
		iogp_replay_abandon(w);
	return st;
}

struct rrec {
	uint64_t t;
	size_t len;
	uint8_t *p;
	int kf, kfs;
	uint64_t off;
};

/* Up to max records from r's current position. */
static int read_some(iogp_replay_reader *r, struct rrec *out, int max)
{
	int n = 0, rc;
	iogp_replay_rec rec;
	while (n < max && (rc = iogp_replay_next(r, &rec)) == 0) {
		out[n].t = rec.recv_ns;
		out[n].len = rec.len;
		out[n].p = malloc(rec.len ? rec.len : 1);
		memcpy(out[n].p, rec.payload, rec.len);
		out[n].kf = rec.keyframe;
		out[n].kfs = rec.keyframe_start;
		out[n].off = rec.offset;
		n++;
	}
	if (n < max)
		CHECK(rc == IOGP_EEOF, "next: %s", iogp_strerror(rc));
	return n;
}

static void free_rrecs(struct rrec *r, int n)
{
	for (int i = 0; i < n; i++)
		free(r[i].p);
}

static int same(const struct rrec *a, const struct orec *b, int kfs_exact)
{
	return a->t == b->t && a->len == b->len && !memcmp(a->p, b->p, a->len) &&
	       a->kf == b->kf && (kfs_exact ? a->kfs == b->kfs : !a->kfs || b->kfs);
}

/* Damage loops read most images from memory (fast) and every 16th from a
 * file, so both ways of reading see every kind of damage. */
static int open_image(iogp_replay_reader **r, const char *path, const uint8_t *b,
                      size_t len, size_t i, char *err, size_t errlen)
{
	if (i % 16)
		return iogp__replay_open_mem(r, b, len, err, errlen);
	spit(path, b, len);
	return iogp_replay_open(r, path, err, errlen);
}

static iogp_replay_reader *open_ok(const char *path)
{
	iogp_replay_reader *r;
	char err[256] = "";
	int rc = iogp_replay_open(&r, path, err, sizeof err);
	ck_assert_msg(rc == 0, "open %s: %s (%s)", path, err, iogp_strerror(rc));
	return r;
}

/* ---- an independent walk of the frames, for ground truth ---- */

struct fr {
	uint64_t off, end;
	uint32_t flags;
	uint64_t t;
};

static int walk_frames(const uint8_t *b, size_t len, struct fr *fr, int max, size_t *hdr)
{
	*hdr = b[10] | (size_t)b[11] << 8;
	int n = 0;
	for (size_t p = *hdr; p + 16 <= len && n < max;) {
		uint32_t w = get32(b + p);
		fr[n] = (struct fr){ .off = p, .end = p + 16 + (w & 0x07ffffffu),
		                     .flags = w & 0xf8000000u, .t = get64(b + p + 8) };
		p = fr[n++].end;
		if (fr[n - 1].t == UINT64_MAX)
			break;
	}
	return n;
}

/* ------------------------------------------------------------ tests */

static uint32_t crc_ref(uint32_t crc, const uint8_t *p, size_t n)
{
	crc = ~crc;
	while (n--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0x82f63b78u & (0u - (crc & 1)));
	}
	return ~crc;
}

START_TEST(test_crc32c)
{
	ck_assert_uint_eq(iogp_crc32c(0, "123456789", 9), 0xE3069283u);
	ck_assert_uint_eq(iogp__crc32c_sw(0, "123456789", 9), 0xE3069283u);
	ck_assert_uint_eq(iogp_crc32c(0, "", 0), 0);
	/* RFC 3720 B.4: 32 bytes of zeros */
	uint8_t z[32] = { 0 };
	ck_assert_uint_eq(iogp_crc32c(0, z, 32), 0x8A9136AAu);
	rng_state = SEED;
	static uint8_t buf[4096 + 16];
	for (size_t i = 0; i < sizeof buf; i++)
		buf[i] = (uint8_t)rng();
	for (int it = 0; it < 2000; it++) {
		size_t off = rng_below(16), n = rng_below(it < 1000 ? 64 : 4096);
		uint32_t want = crc_ref(0, buf + off, n);
		ck_assert_msg(iogp_crc32c(0, buf + off, n) == want, "off %zu len %zu", off, n);
		ck_assert_msg(iogp__crc32c_sw(0, buf + off, n) == want, "sw off %zu len %zu", off, n);
		size_t cut = rng_below(n + 1);
		ck_assert_uint_eq(iogp_crc32c(iogp_crc32c(0, buf + off, cut), buf + off + cut,
		                              n - cut), want);
	}
}
END_TEST

static void check_roundtrip(int compress, int big, int wire)
{
	static struct dataset d;
	rng_state = SEED + (uint64_t)compress * 7 + (uint64_t)big + (uint64_t)wire * 13;
	make_dataset(&d, big ? 120 : 300, big, 7, wire ? PL_WIRE : compress);
	char path[128];
	path_of(path, sizeof path, compress ? "rt-z.iogr" : "rt-p.iogr");
	iogp_replay_wstats ws = write_dataset(path, &d, compress, 0);
	if (wire && compress) {
		/* every canonical DELTA, and nothing else, is stored transformed */
		ck_assert_uint_gt(n_canonical, 150);
		ck_assert_uint_eq(last_transformed, n_canonical);
	} else {
		ck_assert_uint_eq(last_transformed, 0);
	}

	uint64_t payload = 0;
	for (int i = 0; i < d.n; i++)
		payload += d.rec[i].len;
	ck_assert_uint_eq(ws.records, (uint64_t)d.n);
	ck_assert_uint_eq(ws.keyframes, (uint64_t)d.nk);
	ck_assert_uint_eq(ws.payload_bytes, payload);
	/* close adds exactly the index frame and the trailer */
	ck_assert_uint_eq(file_size(path), ws.file_bytes + 16 + 4 + 16 * (uint64_t)d.nk + 16);
	ck_assert_uint_gt(ws.last_keyframe_bytes, 0);
	ck_assert_uint_le(ws.bytes_since_keyframe, ws.file_bytes);

	iogp_replay_reader *r = open_ok(path);
	iogp_replay_info info;
	iogp_replay_get_info(r, &info);
	ck_assert_int_eq(info.version, IOGP_REPLAY_VERSION);
	ck_assert_str_eq(info.creator, CREATOR);
	ck_assert_int_eq(info.index_found, 1);
	ck_assert_uint_eq(info.file_bytes, file_size(path));
	ck_assert_uint_gt(info.created_ns, 1600000000ull * 1000000000ull);

	const iogp_replay_kf *kf;
	size_t nk = iogp_replay_keyframes(r, &kf);
	ck_assert_uint_eq(nk, (size_t)d.nk);
	for (size_t i = 0; i < nk; i++)
		ck_assert_uint_eq(kf[i].recv_ns, d.kft[i]);

	static struct rrec got[MAXREC + 1];
	for (int pass = 0; pass < 2; pass++) {
		int n = read_some(r, got, MAXREC + 1);
		ck_assert_int_eq(n, d.n);
		for (int i = 0; i < n; i++)
			ck_assert_msg(same(&got[i], &d.rec[i], 1), "record %d differs (mode %d)",
			              i, compress);
		for (int i = 1; i < n; i++)
			ck_assert_uint_ge(got[i].off, got[i - 1].off);
		iogp_replay_rec rec;
		ck_assert_int_eq(iogp_replay_next(r, &rec), IOGP_EEOF);
		ck_assert_int_eq(iogp_replay_next(r, &rec), IOGP_EEOF);
		iogp_replay_rstats st;
		iogp_replay_reader_stats(r, &st);
		ck_assert_uint_eq(st.records, (uint64_t)d.n);
		ck_assert_uint_eq(st.keyframes, (uint64_t)d.nk);
		ck_assert_uint_eq(st.bad_frames, 0);
		ck_assert_uint_eq(st.skipped_bytes, 0);
		ck_assert_uint_eq(st.first_ns, d.rec[0].t);
		ck_assert_uint_eq(st.last_ns, d.rec[d.n - 1].t);
		ck_assert_uint_gt(st.frames, 0);
		free_rrecs(got, n);
		ck_assert_int_eq(iogp_replay_rewind(r), 0);
	}
	iogp_replay_close_reader(r);
	free_dataset(&d);
}

START_TEST(test_roundtrip_plain) { check_roundtrip(0, 0, 0); }
END_TEST
START_TEST(test_roundtrip_packs) { check_roundtrip(1, 0, 0); }
END_TEST
START_TEST(test_roundtrip_big_plain) { check_roundtrip(0, 1, 0); }
END_TEST
START_TEST(test_roundtrip_big_packs) { check_roundtrip(1, 1, 0); }
END_TEST
START_TEST(test_roundtrip_wire_plain) { check_roundtrip(0, 0, 1); }
END_TEST
START_TEST(test_roundtrip_wire_packs) { check_roundtrip(1, 0, 1); }
END_TEST

/* A record bigger than the reader's window and the pack target. */
/* Recordings are the user's own: created 0600, an existing file, a link or
 * a FIFO is never written through without --force (a link or FIFO never);
 * a FIFO given to the reader is refused at once instead of hanging. */
START_TEST(test_create_safety)
{
	char path[128], link[128], fifo[128], err[256];
	iogp_replay_writer *w;
	iogp_replay_reader *r;
	iogp_replay_wopts o = { .compress = 1 };
	struct stat st;

	path_of(path, sizeof path, "safe.iogr");
	path_of(link, sizeof link, "safe-link.iogr");
	path_of(fifo, sizeof fifo, "safe.fifo");
	unlink(path);
	mode_t old = umask(0);
	ck_assert_int_eq(iogp_replay_create(&w, path, &o, err, sizeof err), 0);
	umask(old);
	ck_assert_int_eq(iogp_replay_write(w, 1, "a", 1), 0);
	ck_assert_int_eq(iogp_replay_close(w), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0600);
	off_t size = st.st_size;
	/* no replacing without being asked */
	ck_assert_int_eq(iogp_replay_create(&w, path, &o, err, sizeof err), IOGP_EIO);
	ck_assert_ptr_nonnull(strstr(err, "exists"));
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_size, size);
	/* a symbolic link is not followed, even with replace */
	unlink(link);
	ck_assert_int_eq(symlink(path, link), 0);
	o.replace = 1;
	ck_assert_int_eq(iogp_replay_create(&w, link, &o, err, sizeof err), IOGP_EIO);
	ck_assert_ptr_nonnull(strstr(err, "symbolic link"));
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_size, size);
	/* a FIFO: neither written nor read, and nothing hangs */
	unlink(fifo);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	ck_assert_int_eq(iogp_replay_create(&w, fifo, &o, err, sizeof err), IOGP_EIO);
	ck_assert_ptr_nonnull(strstr(err, "not a regular file"));
	ck_assert_int_eq(iogp_replay_open(&r, fifo, err, sizeof err), IOGP_EIO);
	ck_assert_ptr_nonnull(strstr(err, "not a regular file"));
	ck_assert_int_eq(iogp_replay_open(&r, "/dev/null", err, sizeof err), IOGP_EIO);
	/* replace = 1 replaces a regular file, and makes it private */
	ck_assert_int_eq(chmod(path, 0644), 0);
	ck_assert_int_eq(iogp_replay_create(&w, path, &o, err, sizeof err), 0);
	ck_assert_int_eq(iogp_replay_close(w), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0600);
	unlink(link);
	unlink(fifo);
}
END_TEST

START_TEST(test_huge_record)
{
	for (int compress = 0; compress < 2; compress++) {
		char path[128];
		path_of(path, sizeof path, "huge.iogr");
		size_t n = 3u << 20;
		uint8_t *p = malloc(n);
		rng_state = SEED + 99;
		for (size_t i = 0; i < n; i++)
			p[i] = (uint8_t)(i % 251 == 0 ? rng() : i);
		iogp_replay_writer *w;
		iogp_replay_wopts o = { .replace = 1, .compress = compress };
		ck_assert_int_eq(iogp_replay_create(&w, path, &o, NULL, 0), 0);
		ck_assert_int_eq(iogp_replay_write(w, 5, "a", 1), 0);
		ck_assert_int_eq(iogp_replay_write(w, 6, p, n), 0);
		ck_assert_int_eq(iogp_replay_write(w, 7, "bc", 2), 0);
		ck_assert_int_eq(iogp_replay_close(w), 0);
		iogp_replay_reader *r = open_ok(path);
		iogp_replay_rec rec;
		ck_assert_int_eq(iogp_replay_next(r, &rec), 0);
		ck_assert_uint_eq(rec.len, 1);
		ck_assert_int_eq(iogp_replay_next(r, &rec), 0);
		ck_assert_uint_eq(rec.recv_ns, 6);
		ck_assert_uint_eq(rec.len, n);
		ck_assert(!memcmp(rec.payload, p, n));
		ck_assert_int_eq(iogp_replay_next(r, &rec), 0);
		ck_assert_uint_eq(rec.len, 2);
		ck_assert(!memcmp(rec.payload, "bc", 2));
		ck_assert_int_eq(iogp_replay_next(r, &rec), IOGP_EEOF);
		iogp_replay_close_reader(r);
		free(p);
	}
}
END_TEST

static void check_abandon_and_seek(int compress, int wire)
{
	static struct dataset d;
	rng_state = SEED + 11 + (uint64_t)compress + (uint64_t)wire * 13;
	make_dataset(&d, 200, 0, 9, wire ? PL_WIRE : compress);
	char pc[128], pa[128];
	path_of(pc, sizeof pc, "closed.iogr");
	path_of(pa, sizeof pa, "abandoned.iogr");
	write_dataset(pc, &d, compress, 0);
	iogp_replay_wstats ws = write_dataset(pa, &d, compress, 1);
	ck_assert_uint_eq(file_size(pa), ws.file_bytes);

	iogp_replay_reader *rc = open_ok(pc), *ra = open_ok(pa);
	iogp_replay_info ic, ia;
	iogp_replay_get_info(rc, &ic);
	iogp_replay_get_info(ra, &ia);
	ck_assert_int_eq(ic.index_found, 1);
	ck_assert_int_eq(ia.index_found, 0);
	const iogp_replay_kf *kc, *ka;
	size_t nc = iogp_replay_keyframes(rc, &kc), na = iogp_replay_keyframes(ra, &ka);
	ck_assert_uint_eq(nc, (size_t)d.nk);
	ck_assert_uint_eq(na, nc);
	for (size_t i = 0; i < nc; i++) {
		ck_assert_uint_eq(kc[i].offset, ka[i].offset);
		ck_assert_uint_eq(kc[i].recv_ns, ka[i].recv_ns);
	}

	static struct rrec got[MAXREC + 1];
	iogp_replay_reader *rs[2] = { rc, ra };
	for (int which = 0; which < 2; which++) {
		iogp_replay_reader *r = rs[which];
		int n = read_some(r, got, MAXREC + 1);
		ck_assert_int_eq(n, d.n);
		for (int i = 0; i < n; i++)
			ck_assert(same(&got[i], &d.rec[i], 1));
		free_rrecs(got, n);

		/* seek to each keyframe, just after it, and just before it */
		for (int k = 0; k < d.nk; k++) {
			for (int delta = 0; delta < 3; delta++) {
				uint64_t t = d.kft[k] + (delta == 1 ? 1 : 0) - (delta == 2 ? 1 : 0);
				int kk = delta == 2 ? k - 1 : k;
				ck_assert_int_eq(iogp_replay_seek(r, t), 0);
				/* first record at or after the keyframe begins */
				int first = 0;
				if (kk >= 0)
					while (first < d.n && d.rec[first].t < d.kft[kk])
						first++;
				int m = read_some(r, got, MAXREC + 1);
				ck_assert_msg(m == d.n - first, "kf %d delta %d: %d records, want %d",
				              k, delta, m, d.n - first);
				for (int i = 0; i < m; i++)
					ck_assert_msg(same(&got[i], &d.rec[first + i], 1),
					              "kf %d delta %d record %d", k, delta, i);
				free_rrecs(got, m);
			}
		}
		ck_assert_int_eq(iogp_replay_seek(r, 0), 0);
		ck_assert_int_eq(read_some(r, got, 1), 1);
		ck_assert(same(&got[0], &d.rec[0], 1));
		free_rrecs(got, 1);
		ck_assert_int_eq(iogp_replay_seek(r, UINT64_MAX), 0);
		int m = read_some(r, got, MAXREC + 1);
		int first = 0;
		while (d.rec[first].t < d.kft[d.nk - 1])
			first++;
		ck_assert_int_eq(m, d.n - first);
		free_rrecs(got, m);
	}
	iogp_replay_close_reader(rc);
	iogp_replay_close_reader(ra);

	/* Records written after the last flush die with the process. */
	iogp_replay_writer *w;
	iogp_replay_wopts o = { .replace = 1, .compress = compress };
	ck_assert_int_eq(iogp_replay_create(&w, pa, &o, NULL, 0), 0);
	ck_assert_int_eq(iogp_replay_write(w, 10, "flushed", 7), 0);
	ck_assert_int_eq(iogp_replay_flush(w), 0);
	ck_assert_int_eq(iogp_replay_write(w, 11, "lost", 4), 0);
	iogp_replay_abandon(w);
	iogp_replay_reader *r = open_ok(pa);
	ck_assert_int_eq(read_some(r, got, 10), 1);
	ck_assert_uint_eq(got[0].t, 10);
	free_rrecs(got, 1);
	iogp_replay_close_reader(r);
	free_dataset(&d);
}

START_TEST(test_abandon_seek_plain) { check_abandon_and_seek(0, 0); }
END_TEST
START_TEST(test_abandon_seek_packs) { check_abandon_and_seek(1, 0); }
END_TEST
START_TEST(test_abandon_seek_wire) { check_abandon_and_seek(1, 1); }
END_TEST

/* Packs: every byte near a frame boundary (headers, ends, the index and
 * trailer), a stride elsewhere: inside a pack body all bytes behave alike,
 * and each pack image costs a zstd context (slow under ASan). */
static int near_boundary(uint64_t pos, const struct fr *fr, int nf, int compress, int stride)
{
	if (!compress || pos % (uint64_t)stride == 0)
		return 1;
	for (int k = 0; k < nf; k++)
		if ((pos >= fr[k].off && pos < fr[k].off + 24) ||
		    (pos + 8 >= fr[k].end && pos <= fr[k].end))
			return 1;
	/* the last frame (the index if any) and the trailer: every byte */
	return nf == 0 || pos >= fr[nf - 1].off;
}

/* Cut a copy of a ~50-record file at every byte (plain). */
static void check_torn(int compress, int how, int wire)
{
	static struct dataset d;
	rng_state = SEED + 21 + (uint64_t)compress + (uint64_t)wire * 13;
	make_dataset(&d, 50, 0, wire ? 8 : 4, wire ? PL_WIRE : compress);
	char path[128], cutp[128];
	path_of(path, sizeof path, "torn-src.iogr");
	path_of(cutp, sizeof cutp, "torn.iogr");
	write_dataset(path, &d, compress, how);
	size_t len, hdr;
	uint8_t *b = slurp(path, &len);
	static struct fr fr[4 * MAXREC];
	int nf = walk_frames(b, len, fr, 4 * MAXREC, &hdr);

	/* where each record's frame ends, from a full read */
	static struct rrec got[MAXREC + 1];
	iogp_replay_reader *r = open_ok(path);
	int n = read_some(r, got, MAXREC + 1);
	iogp_replay_close_reader(r);
	ck_assert_int_eq(n, d.n);
	uint64_t rec_end[MAXREC];
	for (int i = 0; i < n; i++) {
		rec_end[i] = 0;
		for (int k = 0; k < nf; k++)
			if (fr[k].off == got[i].off)
				rec_end[i] = fr[k].end;
		ck_assert_uint_gt(rec_end[i], 0);
	}
	free_rrecs(got, n);

	for (size_t cut = 0; cut <= len; cut++) {
		if (!near_boundary(cut, fr, nf, compress, wire ? 23 : 7))
			continue;
		char err[256] = "";
		int rc = open_image(&r, cutp, b, cut, cut, err, sizeof err);
		if (cut < hdr) {
			CHECK(rc < 0, "cut %zu: header torn but open succeeded", cut);
			CHECK(err[0], "cut %zu: no message", cut);
			continue;
		}
		CHECK(rc == 0, "cut %zu: %s", cut, err);
		int m = read_some(r, got, MAXREC + 1);
		int want = 0;
		while (want < n && rec_end[want] <= cut)
			want++;
		CHECK(m == want, "cut %zu (mode %d): %d records, want %d", cut,
		              compress, m, want);
		for (int i = 0; i < m; i++)
			CHECK(same(&got[i], &d.rec[i], 1), "cut %zu record %d", cut, i);
		free_rrecs(got, m);
		uint64_t last = hdr;
		for (int k = 0; k < nf; k++)
			if (fr[k].end <= cut)
				last = fr[k].end;
		iogp_replay_rstats st;
		iogp_replay_reader_stats(r, &st);
		iogp_replay_info info;
		iogp_replay_get_info(r, &info);
		uint64_t want_skip = cut == len && how == 0 ? 0 : cut - last;
		CHECK(st.skipped_bytes == want_skip, "cut %zu: skipped %" PRIu64
		              " want %" PRIu64, cut, st.skipped_bytes, want_skip);
		CHECK(st.bad_frames == 0, "cut %zu: bad frames", cut);
		CHECK(info.index_found == (cut == len && how == 0), "cut %zu: index", cut);
		iogp_replay_close_reader(r);
	}
	free(b);
	free_dataset(&d);
}

START_TEST(test_torn_plain) { check_torn(0, 0, 0); }
END_TEST
START_TEST(test_torn_packs) { check_torn(1, 0, 0); }
END_TEST
START_TEST(test_torn_packs_abandoned) { check_torn(1, 1, 0); }
END_TEST
START_TEST(test_torn_wire) { check_torn(1, 1, 1); }
END_TEST

/* Flip one byte at every position after the header (plain). */
static void check_corrupt(int compress, int wire)
{
	static struct dataset d;
	rng_state = SEED + 31 + (uint64_t)compress + (uint64_t)wire * 13;
	make_dataset(&d, 50, 0, wire ? 8 : 4, wire ? PL_WIRE : compress);
	char path[128], badp[128];
	path_of(path, sizeof path, compress ? "corrupt-src-z.iogr" : "corrupt-src-p.iogr");
	path_of(badp, sizeof badp, compress ? "corrupt-z.iogr" : "corrupt-p.iogr");
	write_dataset(path, &d, compress, 0);
	size_t len, hdr;
	uint8_t *b = slurp(path, &len);
	static struct fr fr[4 * MAXREC];
	int nf = walk_frames(b, len, fr, 4 * MAXREC, &hdr);
	static struct rrec got[MAXREC + 1];
	iogp_replay_reader *r = open_ok(path);
	int n = read_some(r, got, MAXREC + 1);
	iogp_replay_close_reader(r);
	ck_assert_int_eq(n, d.n);
	uint64_t rec_off[MAXREC];
	for (int i = 0; i < n; i++)
		rec_off[i] = got[i].off;
	free_rrecs(got, n);

	uint8_t *c = malloc(len);
	for (size_t pos = hdr; pos < len; pos++) {
		if (!near_boundary(pos, fr, nf, compress, wire ? 23 : 7))
			continue;
		memcpy(c, b, len);
		c[pos] ^= (uint8_t)(1 + rng_below(255));
		char err[256] = "";
		int rc = open_image(&r, badp, c, len, pos, err, sizeof err);
		CHECK(rc == 0, "pos %zu: %s", pos, err);
		int m = read_some(r, got, MAXREC + 1);
		iogp_replay_rstats st;
		iogp_replay_reader_stats(r, &st);
		iogp_replay_close_reader(r);

		/* the damaged frame, and in packs the span its zstd frame covers */
		int k = 0;
		while (k < nf && fr[k].end <= pos)
			k++;
		uint64_t lost_from = UINT64_MAX, lost_to = 0;
		if (k < nf && fr[k].t != UINT64_MAX && !(fr[k].flags & (1u << 28))) {
			lost_from = fr[k].off;
			lost_to = fr[k].end;
			if (compress)
				for (int j = k + 1; j < nf && !(fr[j].flags & (1u << 29)) &&
				                    !(fr[j].flags & (1u << 28)) && fr[j].t != UINT64_MAX; j++)
					lost_to = fr[j].end;
		}
		int want = 0;
		for (int i = 0; i < n; i++)
			want += !(rec_off[i] >= lost_from && rec_off[i] < lost_to);
		CHECK(m == want, "pos %zu (mode %d, frame %d): %d records, want %d",
		              pos, compress, k, m, want);
		for (int i = 0, j = 0; i < m; i++, j++) {
			while (rec_off[j] >= lost_from && rec_off[j] < lost_to)
				j++;
			CHECK(same(&got[i], &d.rec[j], 0), "pos %zu record %d", pos, i);
		}
		free_rrecs(got, m);
		if (k < nf && fr[k].t == UINT64_MAX) {
			/* the index, the last frame: a bad length looks like a torn tail */
			CHECK(st.bad_frames <= 1, "pos %zu: bad frames", pos);
			CHECK(st.skipped_bytes == len - fr[k].off, "pos %zu: skipped", pos);
		} else if (k < nf) {
			CHECK(st.bad_frames == 1, "pos %zu: %" PRIu64 " bad frames", pos,
			              st.bad_frames);
			uint64_t skip = lost_to ? lost_to - lost_from : fr[k].end - fr[k].off;
			CHECK(st.skipped_bytes == skip, "pos %zu: skipped %" PRIu64
			              ", want %" PRIu64, pos, st.skipped_bytes, skip);
		} else {
			/* the trailer: the index is rebuilt, the trailer skipped */
			CHECK(st.bad_frames == 0 && st.skipped_bytes == 16, "pos %zu: trailer", pos);
		}
	}
	free(c);
	free(b);
	free_dataset(&d);
}

START_TEST(test_corrupt_plain) { check_corrupt(0, 0); }
END_TEST
START_TEST(test_corrupt_packs) { check_corrupt(1, 0); }
END_TEST
START_TEST(test_corrupt_wire) { check_corrupt(1, 1); }
END_TEST

/* Plain mode: a run of garbage between frames is resynced past. */
START_TEST(test_garbage_resync)
{
	static struct dataset d;
	rng_state = SEED + 41;
	make_dataset(&d, 40, 0, 0, 0);
	char path[128];
	path_of(path, sizeof path, "garbage.iogr");
	write_dataset(path, &d, 0, 0);
	size_t len, hdr;
	uint8_t *b = slurp(path, &len);
	static struct fr fr[4 * MAXREC];
	int nf = walk_frames(b, len, fr, 4 * MAXREC, &hdr);
	ck_assert_int_gt(nf, 30);
	/* overwrite frames 10..12 with junk that keeps claiming long lengths */
	uint64_t from = fr[10].off, to = fr[13].off;
	for (uint64_t p = from; p < to; p++)
		b[p] = (uint8_t)rng();
	for (uint64_t p = from; p + 4 <= to; p += 37)
		put32(b + p, 1000);
	spit(path, b, len);
	iogp_replay_reader *r = open_ok(path);
	static struct rrec got[MAXREC + 1];
	int m = read_some(r, got, MAXREC + 1);
	int lost = 0;
	for (int k = 10; k < 13; k++)
		lost += !(fr[k].flags & (1u << 28));
	ck_assert_int_eq(m, d.n - lost);
	iogp_replay_rstats st;
	iogp_replay_reader_stats(r, &st);
	ck_assert_uint_eq(st.bad_frames, 1);
	ck_assert_uint_eq(st.skipped_bytes, to - from);
	free_rrecs(got, m);
	iogp_replay_close_reader(r);
	free(b);
	free_dataset(&d);
}
END_TEST

static void frame(uint8_t *out, uint32_t flags, uint64_t t, const void *body, uint32_t n)
{
	put32(out, n | flags);
	put64(out + 8, t);
	memcpy(out + 16, body, n);
	put32(out + 4, iogp_crc32c(iogp_crc32c(0, out, 4), out + 8, 8 + (size_t)n));
}

/* 1 MiB of junk whose every 4th word claims a 2 MiB frame that would fit:
 * checking each claim would cost 512 GiB of CRC; the budget keeps it to
 * well under 100 MiB and the records after the junk are found. */
START_TEST(test_resync_bounded)
{
	char path[128];
	path_of(path, sizeof path, "junk.iogr");
	iogp_replay_writer *w;
	iogp_replay_wopts o = { .replace = 1, .compress = 0, .creator = "junk" };
	ck_assert_int_eq(iogp_replay_create(&w, path, &o, NULL, 0), 0);
	ck_assert_int_eq(iogp_replay_write(w, 1, "first", 5), 0);
	ck_assert_int_eq(iogp_replay_flush(w), 0);
	iogp_replay_abandon(w);
	size_t hl;
	uint8_t *start = slurp(path, &hl);
	size_t junk = 1u << 20, bigrec = 3u << 20;
	size_t total = hl + junk + 16 + 6 + 16 + bigrec + 16 + 5;
	uint8_t *f = malloc(total), *big = malloc(bigrec);
	rng_state = SEED + 61;
	for (size_t i = 0; i < bigrec; i++)
		big[i] = (uint8_t)rng();
	memcpy(f, start, hl);
	size_t p = hl;
	for (size_t i = 0; i < junk; i += 4)
		memcpy(f + p + i, "\x11\x11\x20\x00", 4);
	p += junk;
	frame(f + p, 0, 2, "second", 6);
	p += 16 + 6;
	frame(f + p, 0, 3, big, (uint32_t)bigrec);
	p += 16 + bigrec;
	frame(f + p, 0, 4, "forth", 5);
	p += 16 + 5;
	ck_assert_uint_eq(p, total);
	spit(path, f, total);
	double t0 = tu_now();
	iogp_replay_reader *r = open_ok(path);
	static struct rrec got[8];
	int m = read_some(r, got, 8);
	double dt = tu_now() - t0;
	ck_assert_msg(dt < 10, "resync took %.1f s", dt);
	ck_assert_int_eq(m, 4);
	ck_assert_uint_eq(got[0].t, 1);
	ck_assert_uint_eq(got[1].t, 2);
	ck_assert_uint_eq(got[2].t, 3);
	ck_assert(got[2].len == bigrec && !memcmp(got[2].p, big, bigrec));
	ck_assert_uint_eq(got[3].t, 4);
	iogp_replay_rstats st;
	iogp_replay_reader_stats(r, &st);
	ck_assert_uint_eq(st.bad_frames, 1);
	ck_assert_uint_eq(st.skipped_bytes, junk);
	free_rrecs(got, m);
	iogp_replay_close_reader(r);
	free(f);
	free(big);
	free(start);
}
END_TEST

/* Packs whose CRC is right but whose content is hostile. */
START_TEST(test_hostile_packs)
{
	char path[128];
	path_of(path, sizeof path, "hostile.iogr");
	iogp_replay_writer *w;
	iogp_replay_wopts o = { .replace = 1, .compress = 0, .creator = "x" };
	ck_assert_int_eq(iogp_replay_create(&w, path, &o, NULL, 0), 0);
	ck_assert_int_eq(iogp_replay_flush(w), 0);
	iogp_replay_abandon(w);
	size_t hl;
	uint8_t *hdr = slurp(path, &hl);

	/* a bomb: 80 MiB of zeros in one pack */
	size_t big = 80u << 20;
	uint8_t *zeros = calloc(1, big);
	size_t zb = ZSTD_compressBound(big);
	uint8_t *body = malloc(4 + zb);
	memcpy(body, "IOGZ", 4);
	size_t zn = ZSTD_compress(body + 4, zb, zeros, big, 1);
	ck_assert(!ZSTD_isError(zn));
	free(zeros);
	/* inner records that do not add up: a 100-byte record in 40 */
	uint8_t junk[40] = { ((100 << 2) & 0x7f) | 0x80, (100 << 2) >> 7, 0 };
	uint8_t body2[64];
	memcpy(body2, "IOGZ", 4);
	size_t zn2 = ZSTD_compress(body2 + 4, sizeof body2 - 4, junk, sizeof junk, 1);
	ck_assert(!ZSTD_isError(zn2));
	/* a good record after both: length 3, form 0, the frame's receive time */
	uint8_t inner[5] = { 3 << 2, 0, 'a', 'b', 'c' };
	uint8_t body3[64];
	memcpy(body3, "IOGZ", 4);
	size_t zn3 = ZSTD_compress(body3 + 4, sizeof body3 - 4, inner, sizeof inner, 1);
	ck_assert(!ZSTD_isError(zn3));

	size_t total = hl + 3 * 16 + 4 + zn + 4 + zn2 + 4 + zn3 + 16 + 4;
	uint8_t *f = malloc(total);
	size_t p = 0;
	memcpy(f, hdr, hl);
	p += hl;
	uint32_t pz = (1u << 31) | (1u << 29);
	frame(f + p, pz, 1, body, (uint32_t)(4 + zn));
	p += 16 + 4 + zn;
	frame(f + p, pz, 2, body2, (uint32_t)(4 + zn2));
	p += 16 + 4 + zn2;
	frame(f + p, pz, 77, body3, (uint32_t)(4 + zn3));
	p += 16 + 4 + zn3;
	frame(f + p, 0, 4, "IOGW", 4);
	p += 20;
	ck_assert_uint_eq(p, total);
	spit(path, f, total);

	iogp_replay_reader *r = open_ok(path);
	iogp_replay_rec rec;
	ck_assert_int_eq(iogp_replay_next(r, &rec), 0);
	ck_assert_uint_eq(rec.recv_ns, 77);
	ck_assert_uint_eq(rec.len, 3);
	ck_assert(!memcmp(rec.payload, "abc", 3));
	ck_assert_int_eq(iogp_replay_next(r, &rec), 0);
	ck_assert_uint_eq(rec.recv_ns, 4);
	ck_assert_int_eq(iogp_replay_next(r, &rec), IOGP_EEOF);
	iogp_replay_rstats st;
	iogp_replay_reader_stats(r, &st);
	ck_assert_uint_eq(st.bad_frames, 2);
	ck_assert_uint_eq(st.skipped_bytes, 16 + 4 + zn + 16 + 4 + zn2);
	iogp_replay_close_reader(r);
	free(f);
	free(body);
	free(hdr);
}
END_TEST

/* ---- transformed DELTAs: random messages and hostile packs ---- */

/* numbers of every size, extremes included */
static uint64_t wild(void)
{
	switch (rng_below(6)) {
	case 0: return rng_below(3);
	case 1: return rng_below(200);
	case 2: return rng_below(1u << 20);
	case 3: return rng();
	case 4: return UINT64_MAX - rng_below(3);
	default: return rng() >> rng_below(64);
	}
}

#define XR_IDS 40
#define XR_HISTS 6
#define XR_BINS 40
struct xr_src {
	uint64_t id, seq, t1, wall, dropped, seen;
	uint32_t nc, ng, nh, nb[XR_HISTS];
	iogp_counter_val c[XR_IDS];
	iogp_gauge_val g[XR_IDS];
	iogp_hist_val h[XR_HISTS];
	iogp_bin b[XR_HISTS][XR_BINS];
};

/* n distinct ascending ids below lim (or near UINT32_MAX now and then) */
static uint32_t draw_ids(uint32_t *ids, uint32_t max, uint64_t lim)
{
	uint32_t n = (uint32_t)rng_below(max + 1);
	uint64_t base = rng_below(10) ? 1 : UINT32_MAX - 2 * (uint64_t)max;
	uint64_t next = base;
	uint32_t k = 0;
	for (; k < n && next < lim; k++) {
		next += rng_below(3);
		if (next > UINT32_MAX)
			break;
		ids[k] = (uint32_t)next++;
	}
	return k;
}

static void draw_bins(iogp_bin *b, uint32_t *nb)
{
	uint64_t idx = rng_below(8) ? rng_below(100) : rng_below(4) ? wild() : UINT64_MAX - 60;
	uint32_t n = (uint32_t)rng_below(XR_BINS + 1), k;
	for (k = 0; k < n; k++) {
		b[k].idx = idx;
		b[k].count = wild() | 1;
		if (idx == UINT64_MAX || UINT64_MAX - idx < 4)
			break;
		idx += 1 + rng_below(3);
	}
	*nb = k + (k < n);
}

/* The next DELTA of a random source: mostly like its last one (ids, bins,
 * values nearby), now and then anything, and the odd extra section. */
static void random_delta(struct xr_src *s, iogp_msg *m)
{
	static char text[8][32];
	static iogp_label lab[3];
	static iogp_file fil[3];
	static iogp_access acc[6];
	static iogp_metric_def met[2];
	uint32_t ids[XR_IDS];
	memset(m, 0, sizeof *m);
	m->kind = IOGP_DELTA;
	m->source = s->id;
	m->seq = s->seq = rng_below(10) ? s->seq + 1 : wild();
	m->flags = rng_below(10) ? 0 : (uint16_t)rng();
	if (rng_below(20)) {
		m->t0_ns = rng_below(6) ? s->t1 : wild();
		uint64_t dt = rng_below(4) ? 1000000000 + rng_below(99999) : wild();
		m->t1_ns = m->t0_ns + (dt > UINT64_MAX - m->t0_ns ? UINT64_MAX - m->t0_ns : dt);
		m->wall_ns = rng_below(6) ? s->wall + (m->t1_ns - s->t1) + rng_below(99) : wild();
	}
	s->t1 = m->t1_ns;
	s->wall = m->wall_ns;
	m->dropped = s->dropped = rng_below(10) ? s->dropped : wild();
	m->access_seen = s->seen = rng_below(3) ? s->seen : wild();
	if (!rng_below(7)) {
		s->nc = draw_ids(ids, XR_IDS, UINT32_MAX);
		for (uint32_t k = 0; k < s->nc; k++)
			s->c[k] = (iogp_counter_val){ .id = ids[k], .value = wild() };
	}
	for (uint32_t k = 0; k < s->nc; k++)
		s->c[k].value = rng_below(4) ? s->c[k].value + rng_below(100) : wild();
	if (!rng_below(7)) {
		s->ng = draw_ids(ids, XR_IDS, UINT32_MAX);
		for (uint32_t k = 0; k < s->ng; k++)
			s->g[k] = (iogp_gauge_val){ .id = ids[k], .value = (int64_t)wild() };
	}
	for (uint32_t k = 0; k < s->ng; k++)
		s->g[k].value = rng_below(4) ? s->g[k].value - 50 + (int64_t)rng_below(100) :
		                (int64_t)wild();
	if (!rng_below(7)) {
		s->nh = draw_ids(ids, XR_HISTS, UINT32_MAX);
		for (uint32_t k = 0; k < s->nh; k++) {
			s->h[k].id = ids[k];
			draw_bins(s->b[k], &s->nb[k]);
		}
	}
	for (uint32_t k = 0; k < s->nh; k++) {
		iogp_bin *b = s->b[k];
		uint32_t c = (uint32_t)rng_below(10);
		if (c == 0) {
			draw_bins(b, &s->nb[k]);
		} else if (c < 3 && s->nb[k]) {
			/* drop one bin, maybe add one past the end */
			uint32_t at = (uint32_t)rng_below(s->nb[k]);
			memmove(b + at, b + at + 1, (s->nb[k] - at - 1) * sizeof *b);
			s->nb[k]--;
			if (s->nb[k] && s->nb[k] < XR_BINS - 1 && b[s->nb[k] - 1].idx < UINT64_MAX - 9) {
				b[s->nb[k]].idx = b[s->nb[k] - 1].idx + 1 + rng_below(8);
				b[s->nb[k]++].count = 1;
			}
		}
		for (uint32_t j = 0; j < s->nb[k]; j++)
			b[j].count = rng_below(4) ? b[j].count + rng_below(50) : wild();
		for (uint32_t j = 0; j < s->nb[k]; j++)
			b[j].count += !b[j].count;
		s->h[k].nbins = s->nb[k];
		s->h[k].bins = b;
	}
	m->ncounters = s->nc;
	m->counters = s->c;
	m->ngauges = s->ng;
	m->gauges = s->g;
	m->nhists = s->nh;
	m->hists = s->h;
	for (int k = 0; k < 8; k++)
		snprintf(text[k], sizeof text[k], "t%llx", (unsigned long long)rng_below(1u << 20));
	if (!rng_below(12)) {
		m->nlabels = 1 + (uint32_t)rng_below(3);
		for (uint32_t k = 0; k < m->nlabels; k++)
			lab[k] = (iogp_label){ .key = text[k], .value = text[k + 3] };
		m->labels = lab;
	}
	if (!rng_below(12)) {
		m->nfiles = 1 + (uint32_t)rng_below(3);
		for (uint32_t k = 0; k < m->nfiles; k++)
			fil[k] = (iogp_file){ .id = 10 * k + rng_below(10), .path = text[k] };
		m->files = fil;
	}
	if (!rng_below(8)) {
		m->naccess = 1 + (uint32_t)rng_below(6);
		for (uint32_t k = 0; k < m->naccess; k++)
			acc[k] = (iogp_access){ .id = (uint32_t)wild(), .t_ns = wild(), .file = wild(),
			                        .op = (uint32_t)rng_below(3), .offset = wild(),
			                        .size = wild() };
		m->access = acc;
	}
	if (!rng_below(20)) {
		m->nmetrics = 1 + (uint32_t)rng_below(2);
		for (uint32_t k = 0; k < m->nmetrics; k++) {
			memset(&met[k], 0, sizeof met[k]);
			met[k].id = 5 + 7 * k;
			met[k].kind = k ? IOGP_HISTOGRAM : IOGP_COUNTER;
			met[k].name = text[k];
			met[k].unit = "ns";
			met[k].bins.kind = IOGP_BINS_NATIVE;
			met[k].bins.k = 4;
		}
		m->metrics = met;
	}
}

#define XR_NSRC 7
#define XR_N 2500

/* The file at path reads back as rec[0..n) byte for byte, from the start
 * and from every keyframe (kft: their times, kfrec: their first records);
 * rec's payloads are freed. */
static void readback_same(const char *path, struct orec *rec, int n_rec, const uint64_t *kft,
                          const int *kfrec, int nk)
{
	iogp_replay_reader *r = open_ok(path);
	struct rrec *got = calloc((size_t)n_rec + 1, sizeof *got);
	ck_assert_ptr_nonnull(got);
	int n = read_some(r, got, n_rec + 1);
	ck_assert_int_eq(n, n_rec);
	for (int i = 0; i < n; i++)
		CHECK(got[i].t == rec[i].t && got[i].len == rec[i].len &&
		      !memcmp(got[i].p, rec[i].p, rec[i].len) && got[i].kf == rec[i].kf,
		      "record %d differs", i);
	free_rrecs(got, n);
	for (int k = 0; k < nk; k++) {
		ck_assert_int_eq(iogp_replay_seek(r, kft[k]), 0);
		int m2 = read_some(r, got, n_rec + 1);
		ck_assert_int_eq(m2, n_rec - kfrec[k]);
		for (int i = 0; i < m2; i++)
			CHECK(got[i].len == rec[kfrec[k] + i].len &&
			      !memcmp(got[i].p, rec[kfrec[k] + i].p, got[i].len),
			      "keyframe %d record %d differs", k, i);
		free_rrecs(got, m2);
	}
	free(got);
	iogp_replay_rstats st;
	iogp_replay_reader_stats(r, &st);
	ck_assert_uint_eq(st.bad_frames + st.skipped_bytes, 0);
	iogp_replay_close_reader(r);
	for (int i = 0; i < n_rec; i++)
		free(rec[i].p);
}

/* Random DELTAs (every field, every size, changing id and bin sets, extra
 * sections) from a few sources, with keyframes and flushes: all but the
 * odd one are stored transformed, and all read back byte for byte, from
 * the start and from every keyframe. The writer also runs the reader's
 * inverse on each (it stores without: the transform is invertible by
 * construction) and never finds one wrong; with every fault-th transform
 * spoiled, it finds exactly those, stores them as they are, and the file
 * still reads back. */
static void check_xf_random(uint32_t fault)
{
	static struct xr_src src[XR_NSRC];
	static struct orec rec[XR_N];
	static uint64_t kft[XR_N];
	static int kfrec[XR_N];
	int nk = 0;
	rng_state = SEED + 71;
	memset(src, 0, sizeof src);
	for (int i = 0; i < XR_NSRC; i++)
		src[i].id = i < 2 ? (uint64_t)i : rng();
	char path[128];
	path_of(path, sizeof path, "xf-random.iogr");
	iogp_replay_writer *w;
	iogp_replay_wopts o = { .replace = 1, .compress = 1 };
	ck_assert_int_eq(iogp_replay_create(&w, path, &o, NULL, 0), 0);
	iogp__replay_verify(w, 1, fault);
	iogp_msg m;
	uint64_t t = 1000;
	for (int i = 0; i < XR_N; i++) {
		int kf = !rng_below(150);
		if (kf) {
			kft[nk] = t;
			kfrec[nk++] = i;
			ck_assert_int_eq(iogp_replay_keyframe_begin(w, t), 0);
		}
		random_delta(&src[rng_below(4) ? (uint64_t)i % XR_NSRC : rng_below(XR_NSRC)], &m);
		rec[i].p = encode_msg(&m, &rec[i].len);
		rec[i].t = t += rng_below(3) ? 1000 : wild();
		rec[i].kf = kf;
		ck_assert_int_eq(iogp_replay_write(w, rec[i].t, rec[i].p, rec[i].len), 0);
		if (kf)
			ck_assert_int_eq(iogp_replay_keyframe_end(w), 0);
		if (!rng_below(30))
			ck_assert_int_eq(iogp_replay_flush(w), 0);
	}
	uint64_t xf = iogp__replay_transformed(w), wrong = iogp__replay_verify(w, 1, fault);
	ck_assert_int_eq(iogp_replay_close(w), 0);
	if (!fault) {
		ck_assert_uint_eq(wrong, 0);
		ck_assert_msg(xf * 100 >= XR_N * 95, "only %llu of %d transformed",
		              (unsigned long long)xf, XR_N);
	} else {
		/* each spoiled one is caught: the tests would see a wrong transform */
		ck_assert_uint_ge(wrong, XR_N / fault * 9 / 10);
		ck_assert_uint_le(wrong, XR_N / fault + 1);
		ck_assert_uint_ge((xf + wrong) * 100, (uint64_t)XR_N * 95);
	}

	readback_same(path, rec, XR_N, kft, kfrec, nk);
}

START_TEST(test_xf_random) { check_xf_random(0); }
END_TEST

START_TEST(test_xf_spoiled) { check_xf_random(7); }
END_TEST

/* Outside the tests' verify mode the writer checks one transform in 64
 * with the reader's inverse: a wrong one (every one spoiled here) is
 * caught at the first check, stored as it came, counted, and no transform
 * follows; the file reads back exactly. */
START_TEST(test_xf_sampled_check)
{
	static struct orec rec[400];
	static struct xr_src src[4];
	char path[128];
	iogp_replay_writer *w;
	iogp_replay_wopts o = { .replace = 1, .compress = 1 };
	iogp_replay_wstats st;
	iogp_msg m;

	rng_state = SEED + 73;
	memset(src, 0, sizeof src);
	for (int i = 0; i < 4; i++)
		src[i].id = 100 + (uint64_t)i;
	path_of(path, sizeof path, "xf-sampled.iogr");
	ck_assert_int_eq(iogp_replay_create(&w, path, &o, NULL, 0), 0);
	iogp__replay_verify(w, 0, 1);
	for (int i = 0; i < 400; i++) {
		random_delta(&src[i % 4], &m);
		rec[i].p = encode_msg(&m, &rec[i].len);
		rec[i].t = 1000 + 1000 * (uint64_t)i;
		ck_assert_int_eq(iogp_replay_write(w, rec[i].t, rec[i].p, rec[i].len), 0);
	}
	iogp_replay_writer_stats(w, &st);
	ck_assert_uint_eq(st.xform_refuted, 1);
	ck_assert_uint_eq(iogp__replay_transformed(w), 0);
	ck_assert_int_eq(iogp_replay_close(w), 0);
	readback_same(path, rec, 400, NULL, NULL, 0);
}
END_TEST

/* ---- the recorder's path: iogp_replay_write_msg with its decoded message ---- */

/* Wire sections of payload p: where each starts (tag varint) and ends. */
static int sections(const uint8_t *p, size_t len, size_t *at, size_t *to, int max)
{
	const uint8_t *q = p + 16, *end = p + len;
	uint64_t v, n;
	int k = 0;
	ck_assert_int_eq(iogp_varint_get(&q, end, &v), 0);
	while (k < max) {
		size_t a = (size_t)(q - p);
		ck_assert_int_eq(iogp_varint_get(&q, end, &v), 0);
		if (!v)
			break;
		ck_assert_int_eq(iogp_varint_get(&q, end, &n), 0);
		q += n;
		at[k] = a;
		to[k++] = (size_t)(q - p);
	}
	return k;
}

/* p (len bytes, room for 16 more) with bytes ins[0, n) inserted at off. */
static void insert_at(uint8_t *p, size_t *len, size_t off, const void *ins, size_t n)
{
	memmove(p + off + n, p + off, *len - off);
	memcpy(p + off, ins, n);
	*len += n;
}

/* Payloads a sender may send that the wire encoder would not write so:
 * they decode, but re-encode otherwise. Returns the kind made, 0 if none. */
static int make_odd(uint8_t *p, size_t *len)
{
	size_t at[32], to[32];
	int ns = sections(p, *len, at, to, 32), how = 1 + (int)rng_below(5);
	size_t first = ns ? at[0] : *len - 1;
	switch (how) {
	case 1:     /* an unknown section, one-byte tag, before END */
		insert_at(p, len, *len - 1, "\x0e\x02zz", 4);
		return how;
	case 2:     /* an unknown section with a two-byte tag, first */
		insert_at(p, len, first, "\xc8\x01\x01\x07", 4);
		return how;
	case 3: {   /* the first two sections swapped */
		if (ns < 2)
			return 0;
		size_t a = to[0] - at[0], b = to[1] - at[1];
		uint8_t tmp[4096];
		if (a + b > sizeof tmp)
			return 0;
		memcpy(tmp, p + at[1], b);
		memcpy(tmp + b, p + at[0], a);
		memcpy(p + at[0], tmp, a + b);
		return how;
	}
	default: {  /* an empty list or a zero value where the encoder writes nothing */
		static const uint8_t empty[][3] = { { 4, 1, 0 }, { 9, 1, 0 }, { 10, 1, 0 }, { 7, 1, 0 } };
		const uint8_t *e = empty[rng_below(4)];
		size_t off = *len - 1;
		for (int k = 0; k < ns; k++) {
			if (p[at[k]] == e[0])
				return 0;       /* the message has that section */
			if (p[at[k]] > e[0] && off == *len - 1)
				off = at[k];
		}
		insert_at(p, len, off, e, 3);
		return how;
	}
	}
}

#define XW_N 3000

/* What the recorder does: write each payload with the message it decoded
 * (iogp_replay_write_msg). Random DELTAs from sources that jump in sequence
 * and restart, odd payloads (unknown sections, sections out of order, empty
 * ones), a DELTA of the most access samples and one of more bins than a
 * transform holds: every record reads back byte for byte, from the start
 * and from every keyframe, and what the encoder writes is transformed. */
START_TEST(test_xf_write_msg)
{
	static struct xr_src src[XR_NSRC];
	static struct orec rec[XW_N];
	static uint64_t kft[XW_N];
	static int kfrec[XW_N];
	static iogp_access acc[IOGP_MAX_ACCESS];
	static iogp_bin bins[20000];
	int nk = 0, nodd = 0, nplain = 0;
	rng_state = SEED + 91;
	memset(src, 0, sizeof src);
	for (int i = 0; i < XR_NSRC; i++)
		src[i].id = rng();
	char path[128];
	path_of(path, sizeof path, "xf-write-msg.iogr");
	iogp_replay_writer *w;
	iogp_replay_wopts o = { .replace = 1, .compress = 1, .zstd_level = 1 };
	ck_assert_int_eq(iogp_replay_create(&w, path, &o, NULL, 0), 0);
	iogp__replay_verify(w, 1, 0);
	iogp_msg m, dm;
	iogp_msg_init(&dm);
	uint64_t t = 1000;
	for (int i = 0; i < XW_N; i++) {
		int kf = !rng_below(200);
		if (kf) {
			kft[nk] = t;
			kfrec[nk++] = i;
			ck_assert_int_eq(iogp_replay_keyframe_begin(w, t), 0);
		}
		struct xr_src *s = &src[rng_below(4) ? (uint64_t)i % XR_NSRC : rng_below(XR_NSRC)];
		if (!rng_below(300))
			s->seq = 0;              /* the source restarts (same id) */
		random_delta(s, &m);
		if (i == 1000) {         /* the most access samples a DELTA carries */
			for (uint32_t k = 0; k < IOGP_MAX_ACCESS; k++)
				acc[k] = (iogp_access){ .id = 3, .t_ns = 1000 + k, .file = k % 7, .op = k & 1,
				                        .offset = 4096ull * k, .size = 4096 };
			m.naccess = IOGP_MAX_ACCESS;
			m.access = acc;
		}
		if (i == 2000) {         /* more bins than a transform holds: stored as is */
			for (uint32_t k = 0; k < 20000; k++)
				bins[k] = (iogp_bin){ .idx = 2 * (uint64_t)k, .count = 1 + k % 5 };
			static iogp_hist_val hv;
			hv = (iogp_hist_val){ .id = 1, .nbins = 20000, .bins = bins };
			m.nhists = 1;
			m.hists = &hv;
		}
		rec[i].p = encode_msg(&m, &rec[i].len);
		rec[i].p = realloc(rec[i].p, rec[i].len + 16);
		int odd = !rng_below(6) ? make_odd(rec[i].p, &rec[i].len) : 0;
		/* the writer is given what the payload decodes to, as the recorder does */
		if (iogp_msg_decode(&dm, rec[i].p, rec[i].len, NULL, 0) < 0) {
			free(rec[i].p);
			rec[i].p = encode_msg(&m, &rec[i].len);
			odd = 0;
			ck_assert_int_eq(iogp_msg_decode(&dm, rec[i].p, rec[i].len, NULL, 0), 0);
		}
		nodd += odd != 0;
		nplain += !odd && i != 2000;
		rec[i].t = t += rng_below(3) ? 1000 : wild();
		rec[i].kf = kf;
		uint64_t before = iogp__replay_transformed(w);
		ck_assert_int_eq(iogp_replay_write_msg(w, rec[i].t, rec[i].p, rec[i].len, &dm), 0);
		if (i == 2000)
			ck_assert_uint_eq(iogp__replay_transformed(w), before);
		if (kf)
			ck_assert_int_eq(iogp_replay_keyframe_end(w), 0);
		if (!rng_below(40))
			ck_assert_int_eq(iogp_replay_flush(w), 0);
	}
	uint64_t xf = iogp__replay_transformed(w);
	ck_assert_uint_eq(iogp__replay_verify(w, 1, 0), 0);
	ck_assert_int_eq(iogp_replay_close(w), 0);
	iogp_msg_free(&dm);
	ck_assert_int_gt(nodd, XW_N / 10);
	/* the odd ones that do not re-encode are stored as they are; the others
	 * are (all but the odd one whose transform would grow too much) */
	ck_assert_msg(xf <= (uint64_t)nplain + (uint64_t)nodd && xf * 100 >= (uint64_t)nplain * 95,
	              "%llu transformed, %d in the encoder's form", (unsigned long long)xf, nplain);

	readback_same(path, rec, XW_N, kft, kfrec, nk);
}
END_TEST

/* The same payload written with iogp_replay_write and with write_msg gives
 * the same file bytes: the fast path changes nothing that is written. */
START_TEST(test_xf_write_msg_same_file)
{
	char pa[128], pb[128];
	path_of(pa, sizeof pa, "xf-same-a.iogr");
	path_of(pb, sizeof pb, "xf-same-b.iogr");
	rng_state = SEED + 93;
	wire_begin();
	iogp_replay_writer *wa, *wb;
	iogp_replay_wopts o = { .replace = 1, .compress = 1 };
	ck_assert_int_eq(iogp_replay_create(&wa, pa, &o, NULL, 0), 0);
	ck_assert_int_eq(iogp_replay_create(&wb, pb, &o, NULL, 0), 0);
	iogp_msg dm;
	iogp_msg_init(&dm);
	for (int i = 0; i < 400; i++) {
		size_t len;
		uint8_t *p = wire_payload(i, 0, &len);
		ck_assert_int_eq(iogp_replay_write(wa, 100 + (uint64_t)i, p, len), 0);
		int ok = iogp_msg_decode(&dm, p, len, NULL, 0) == 0;
		ck_assert_int_eq(iogp_replay_write_msg(wb, 100 + (uint64_t)i, p, len, ok ? &dm : NULL), 0);
		free(p);
	}
	ck_assert_uint_gt(iogp__replay_transformed(wb), 200);
	ck_assert_uint_eq(iogp__replay_transformed(wa), iogp__replay_transformed(wb));
	ck_assert_int_eq(iogp_replay_close(wa), 0);
	ck_assert_int_eq(iogp_replay_close(wb), 0);
	iogp_msg_free(&dm);
	size_t la, lb;
	uint8_t *a = slurp(pa, &la), *b = slurp(pb, &lb);
	/* the headers differ in their creation time only */
	ck_assert_uint_eq(la, lb);
	ck_assert_int_eq(memcmp(a + 40, b + 40, la - 40), 0);
	free(a);
	free(b);
}
END_TEST

/* Records of a file that are not in a keyframe. */
static int read_stream(const char *path, struct rrec *got, int max)
{
	iogp_replay_reader *r = open_ok(path);
	static struct rrec all[2 * MAXREC];
	int n = read_some(r, all, 2 * MAXREC), k = 0;
	iogp_replay_close_reader(r);
	for (int i = 0; i < n; i++) {
		if (!all[i].kf && k < max)
			got[k++] = all[i];
		else
			free(all[i].p);
	}
	return k;
}

/* A SNAPSHOT that holds exactly the recorder's state for its source, with
 * no new sequence number, is left out of the file and counted; one that
 * takes a number, differs in a value, or is FINAL is written. Everything
 * else reads back as sent, and a reader of the file counts no gap. */
START_TEST(test_recorder_snapshot_skip)
{
	char path[128], err[256];
	path_of(path, sizeof path, "snap-skip.iogr");
	iogp_recorder *rc;
	iogp_recorder_opts ro = { .replace = 1 };
	ck_assert_int_eq(iogp_recorder_open(&rc, path, &ro, err, sizeof err), 0);
	realistic *src = realistic_new(4242);
	realistic_set_access(src, 4);
	iogp_msg m, snap;
	iogp_msg_init(&m);
	iogp_msg_init(&snap);
	static struct orec sent[MAXREC];
	int ns = 0;
	uint64_t seq = 1, t = 1790000000000000000ull;
	realistic_hello(src, &m);
	m.seq = seq;
#define SEND() do { \
		sent[ns].p = encode_msg(&m, &sent[ns].len); \
		sent[ns].t = t += 1000000; \
		ck_assert_int_eq(iogp_recorder_add(rc, sent[ns].p, sent[ns].len, sent[ns].t), 0); \
		ns++; \
	} while (0)
	SEND();
	for (int k = 0; k < 20; k++) {
		realistic_delta(src, &m, ++seq);
		SEND();
	}
	size_t si;
	const iogp_model *model = iogp_recorder_model(rc);
	uint64_t id = realistic_source(src);
	ck_assert_int_eq(iogp_model_source_index(model, id, &si), 0);
	iogp_recorder_stats st0, st;
	iogp_recorder_get_stats(rc, &st0);

	/* the state as it is, seq the last one: left out */
	ck_assert_int_eq(iogp_model_snapshot(model, si, 0, &snap), 0);
	ck_assert_uint_eq(snap.seq, seq);
	snap.t1_ns += 5;
	size_t len;
	uint8_t *p = encode_msg(&snap, &len);
	ck_assert_int_eq(iogp_recorder_add(rc, p, len, t += 1000), 0);
	free(p);
	iogp_recorder_get_stats(rc, &st);
	ck_assert_uint_eq(st.snapshots_skipped, 1);
	ck_assert_uint_eq(st.added, st0.added);
	ck_assert_uint_eq(st.file.records, st0.file.records);
	/* the same through add_msg (its payload sits in the recorder's buffer) */
	ck_assert_int_eq(iogp_model_snapshot(model, si, 0, &snap), 0);
	ck_assert_int_eq(iogp_recorder_add_msg(rc, &snap, t += 1000), 0);
	iogp_recorder_get_stats(rc, &st);
	ck_assert_uint_eq(st.snapshots_skipped, 2);

	/* one value off: written, through add and add_msg */
	ck_assert_int_eq(iogp_model_snapshot(model, si, 0, &snap), 0);
	ck_assert_uint_gt(snap.ncounters, 0);
	snap.counters[0].value++;
	m = snap;
	SEND();
	ck_assert_int_eq(iogp_model_snapshot(model, si, 0, &snap), 0);
	snap.counters[1].value += 2;
	sent[ns].p = encode_msg(&snap, &sent[ns].len);
	sent[ns].t = t += 1000000;
	ck_assert_int_eq(iogp_recorder_add_msg(rc, &snap, sent[ns].t), 0);
	ns++;
	/* FINAL: written (its source's last word) */
	ck_assert_int_eq(iogp_model_snapshot(model, si, IOGP_F_FINAL, &snap), 0);
	m = snap;
	m.flags = 0;
	realistic_delta(src, &m, ++seq);   /* first, a DELTA so the state moves on */
	SEND();
	ck_assert_int_eq(iogp_model_snapshot(model, si, IOGP_F_FINAL, &snap), 0);
	m = snap;
	SEND();
	/* its own number (as agents send them): written, no gap */
	realistic_delta(src, &m, ++seq);
	SEND();
	ck_assert_int_eq(iogp_model_snapshot(model, si, 0, &snap), 0);
	snap.seq = ++seq;
	m = snap;
	SEND();
	for (int k = 0; k < 5; k++) {
		realistic_delta(src, &m, ++seq);
		SEND();
	}
	iogp_recorder_get_stats(rc, &st);
	ck_assert_uint_eq(st.snapshots_skipped, 2);
	ck_assert_uint_eq(st.added, (uint64_t)ns);
	ck_assert_uint_eq(st.gaps, 0);
	ck_assert_int_eq(iogp_recorder_close(rc), 0);
#undef SEND

	/* message by message what was sent, and no gap for a reader */
	static struct rrec got[MAXREC];
	int n = read_stream(path, got, MAXREC);
	ck_assert_int_eq(n, ns);
	for (int i = 0; i < n; i++) {
		CHECK(got[i].t == sent[i].t && got[i].len == sent[i].len &&
		      !memcmp(got[i].p, sent[i].p, sent[i].len), "record %d differs", i);
		free(sent[i].p);
	}
	free_rrecs(got, n);
	iogp_model *rm = iogp_model_new(NULL);
	iogp_load_stats ls;
	memset(&ls, 0, sizeof ls);
	ck_assert_int_eq(iogp_load_file(path, rm, &ls, err, sizeof err), 0);
	iogp_model_stats ms;
	iogp_model_get_stats(rm, &ms);
	ck_assert_uint_eq(ms.gaps, 0);
	iogp_model_free(rm);
	iogp_msg_free(&snap);
	realistic_free(src);
}
END_TEST

/* The inner records of the one pack of a file written as one zstd frame. */
/* What one DELTA of check_recorder_sums holds besides its counters. */
struct sums_parts {
	iogp_gauge_val g;
	iogp_hist_val h;
	iogp_bin b[2];
	iogp_exact_val x;
	iogp_exact xv;
	iogp_filerec fr;
	iogp_access a[2];
};

/* DELTA k (1..) of check_recorder_sums: counter i (id i + 1) adds i + k,
 * the gauge (id nc + 1) is k, the histogram (nc + 2) adds k to bin 3, 1 to
 * bin 5 and k to its exact value 4096, one file's reads at time k s, two
 * access samples (metric nc + 3) drawn from k requests. */
static void sums_delta(iogp_msg *m, uint32_t nc, uint64_t k, iogp_counter_val *c,
                       struct sums_parts *x)
{
	for (uint32_t i = 0; i < nc; i++)
		c[i] = (iogp_counter_val){ i + 1, i + k };
	x->g = (iogp_gauge_val){ nc + 1, (int64_t)k };
	x->b[0] = (iogp_bin){ 3, k };
	x->b[1] = (iogp_bin){ 5, 1 };
	x->h = (iogp_hist_val){ nc + 2, 2, x->b };
	x->xv = (iogp_exact){ 4096, k };
	x->x = (iogp_exact_val){ nc + 2, 1, &x->xv };
	memset(&x->fr, 0, sizeof x->fr);
	x->fr.file = 1;
	x->fr.op[0] = (iogp_filerec_op){ .ops = 10, .bytes = 40960, .time_ns = 1000, .consec = 10,
	                                 .max_req = 4096, .first_ns = k * 1000000000ull,
	                                 .last_ns = k * 1000000000ull + 1000 };
	for (int i = 0; i < 2; i++)
		x->a[i] = (iogp_access){ .id = nc + 3, .t_ns = k * 1000000000ull + (uint64_t)i,
		                         .file = 1, .op = IOGP_OP_READ, .offset = 4096 * (uint64_t)i,
		                         .size = 4096 };
	m->kind = IOGP_DELTA;
	m->seq = k + 1;
	m->t0_ns = (k - 1) * 1000000000ull;
	m->t1_ns = k * 1000000000ull + 5000;
	m->wall_ns = 1790000000000000000ull + m->t1_ns;
	m->nmetrics = 0;
	m->ncounters = nc;
	m->counters = c;
	m->ngauges = 1;
	m->gauges = &x->g;
	m->nhists = 1;
	m->hists = &x->h;
	m->nexact = 1;
	m->exact = &x->x;
	m->nfilerecs = 1;
	m->filerecs = &x->fr;
	m->naccess = 2;
	m->access = x->a;
	m->access_seen = k;
}

static size_t access_kept(const iogp_model *m, size_t si)
{
	const iogp_access *a, *a2;
	size_t n2 = 0, n = iogp_model_access(m, si, &a, &n2, &a2);
	return n + n2;
}

/* The recorder's model holds each value's sum, for DELTAs of up to 256
 * values (their slots found once, for the check and the sums) and of more,
 * and keyframes give a reader the same state. It keeps no access samples
 * and opens no activity runs (phases), which a reader of the file does. */
static void check_recorder_sums(uint32_t nc)
{
	char path[128], err[256];
	path_of(path, sizeof path, nc > 64 ? "sums-wide.iogr" : "sums.iogr");
	iogp_recorder *rc;
	iogp_recorder_opts ro = { .replace = 1 };
	ck_assert_int_eq(iogp_recorder_open(&rc, path, &ro, err, sizeof err), 0);
	iogp_metric_def *d = calloc(nc + 3, sizeof *d);
	char (*names)[16] = calloc(nc + 3, sizeof *names);
	iogp_counter_val *c = calloc(nc, sizeof *c);
	ck_assert(d && names && c);
	for (uint32_t i = 0; i < nc + 3; i++) {
		snprintf(names[i], sizeof names[i], "m%u", i);
		d[i] = (iogp_metric_def){ .id = i + 1, .name = names[i], .unit = "ops",
		                          .kind = i < nc ? IOGP_COUNTER : i == nc ? IOGP_GAUGE :
		                          i == nc + 1 ? IOGP_HISTOGRAM : IOGP_ACCESS };
	}
	d[nc + 1].bins = (iogp_bins){ .kind = IOGP_BINS_NATIVE, .k = 4 };
	iogp_msg m;
	memset(&m, 0, sizeof m);
	m.version = IOGP_WIRE_VERSION;
	m.kind = IOGP_HELLO;
	m.source = 77;
	m.seq = 1;
	m.nmetrics = nc + 3;
	m.metrics = d;
	uint64_t t = 1790000000000000000ull;
	ck_assert_int_eq(iogp_recorder_add_msg(rc, &m, t), 0);
	struct sums_parts x;
	const uint64_t nd = 20;
	for (uint64_t k = 1; k <= nd; k++) {
		sums_delta(&m, nc, k, c, &x);
		ck_assert_int_eq(iogp_recorder_add_msg(rc, &m, t += 1000000), 0);
	}
	ck_assert_int_eq(iogp_recorder_keyframe(rc, t += 1000000), 0);

	const iogp_model *rm = iogp_recorder_model(rc);
	iogp_msg snap, back;
	iogp_msg_init(&snap);
	iogp_msg_init(&back);
	size_t si;
	ck_assert_int_eq(iogp_model_source_index(rm, 77, &si), 0);
	ck_assert_int_eq(iogp_model_snapshot(rm, si, 0, &snap), 0);
	ck_assert_uint_eq(snap.ncounters, nc);
	for (uint32_t i = 0; i < nc; i++)
		CHECK(snap.counters[i].id == i + 1 && snap.counters[i].value == nd * i + nd * (nd + 1) / 2,
		      "counter %u: %" PRIu64, i + 1, snap.counters[i].value);
	ck_assert_uint_eq(snap.ngauges, 1);
	ck_assert_int_eq(snap.gauges[0].value, (int64_t)nd);
	ck_assert_uint_eq(snap.nhists, 1);
	ck_assert_uint_eq(snap.hists[0].nbins, 2);
	ck_assert_uint_eq(snap.hists[0].bins[0].count, nd * (nd + 1) / 2);
	ck_assert_uint_eq(snap.hists[0].bins[1].count, nd);
	ck_assert_uint_eq(snap.nexact, 1);
	ck_assert_uint_eq(snap.exact[0].v[0].count, nd * (nd + 1) / 2);
	ck_assert_uint_eq(snap.nfilerecs, 1);
	ck_assert_uint_eq(snap.filerecs[0].op[0].ops, 10 * nd);
	ck_assert_uint_eq(snap.access_seen, nd * (nd + 1) / 2);
	ck_assert_uint_eq(access_kept(rm, si), 0);
	iogp_phase *ph = NULL;
	size_t nph = 9;
	ck_assert_int_eq(iogp_model_phases(rm, NULL, &ph, &nph, NULL), 0);
	ck_assert_uint_eq(nph, 0);
	free(ph);

	/* a reader rebuilds the same state, the samples and the activity runs */
	long n1 = iogp_msg_encode(&snap, NULL, 0);
	uint8_t *e1 = malloc((size_t)n1);
	ck_assert_int_eq(iogp_msg_encode(&snap, e1, (size_t)n1), n1);
	ck_assert_int_eq(iogp_recorder_close(rc), 0);
	iogp_model *lm = iogp_model_new(NULL);
	iogp_load_stats ls;
	memset(&ls, 0, sizeof ls);
	ck_assert_int_eq(iogp_load_file(path, lm, &ls, err, sizeof err), 0);
	ck_assert_int_eq(iogp_model_source_index(lm, 77, &si), 0);
	ck_assert_int_eq(iogp_model_snapshot(lm, si, 0, &back), 0);
	long n2 = iogp_msg_encode(&back, NULL, 0);
	uint8_t *e2 = malloc((size_t)n2);
	ck_assert_int_eq(iogp_msg_encode(&back, e2, (size_t)n2), n2);
	ck_assert(n1 == n2 && !memcmp(e1, e2, (size_t)n1));
	ck_assert_uint_eq(access_kept(lm, si), 2 * nd);
	ck_assert_int_eq(iogp_model_phases(lm, NULL, &ph, &nph, NULL), 0);
	ck_assert_uint_gt(nph, 0);
	free(ph);
	free(e1);
	free(e2);
	iogp_model_free(lm);
	iogp_msg_free(&snap);
	iogp_msg_free(&back);
	free(d);
	free(names);
	free(c);
}

START_TEST(test_recorder_sums) { check_recorder_sums(10); }
END_TEST

START_TEST(test_recorder_sums_wide) { check_recorder_sums(300); }
END_TEST

static uint8_t *one_pack(const uint8_t *f, size_t len, size_t *hl, size_t *n)
{
	*hl = f[10] | (size_t)f[11] << 8;
	uint32_t word = get32(f + *hl);
	ck_assert_uint_eq(word & 0xf8000000u, (1u << 31) | (1u << 29));
	uint32_t blen = word & 0x07ffffffu;
	ck_assert_uint_le(*hl + 16 + blen, len);
	ck_assert_int_eq(memcmp(f + *hl + 16, "IOGZ", 4), 0);
	unsigned long long cap = ZSTD_getFrameContentSize(f + *hl + 20, blen - 4);
	ck_assert(cap != ZSTD_CONTENTSIZE_ERROR);
	if (cap == ZSTD_CONTENTSIZE_UNKNOWN)
		cap = 1u << 20;
	uint8_t *in = malloc(cap);
	*n = ZSTD_decompress(in, cap, f + *hl + 20, blen - 4);
	ck_assert(!ZSTD_isError(*n));
	return in;
}

/* Packs whose CRCs are right but whose inner records were tampered with,
 * after the compressor: the reader never crashes, returns the records
 * before the change exactly, and resumes at the next frame. */
START_TEST(test_xf_hostile)
{
	char path[128];
	path_of(path, sizeof path, "xf-hostile.iogr");
	rng_state = SEED + 81;
	wire_begin();
	enum { NR = 120 };
	static struct orec rec[NR];
	iogp_replay_writer *w;
	iogp_replay_wopts o = { .replace = 1, .compress = 1 };
	ck_assert_int_eq(iogp_replay_create(&w, path, &o, NULL, 0), 0);
	for (int i = 0; i < NR; i++) {
		rec[i].p = wire_payload(i, 0, &rec[i].len);
		rec[i].t = 5000 + (uint64_t)i * 10;
		ck_assert_int_eq(iogp_replay_write(w, rec[i].t, rec[i].p, rec[i].len), 0);
	}
	ck_assert_uint_gt(iogp__replay_transformed(w), NR / 2);
	ck_assert_int_eq(iogp_replay_close(w), 0);
	size_t len, hl, n;
	uint8_t *f = slurp(path, &len);
	uint8_t *in = one_pack(f, len, &hl, &n);

	/* where each inner record starts, and the form of each */
	size_t start[NR + 1];
	int form[NR];
	const uint8_t *p = in, *end = in + n;
	for (int i = 0; i < NR; i++) {
		uint64_t head, dt;
		start[i] = (size_t)(p - in);
		ck_assert_int_eq(iogp_varint_get(&p, end, &head), 0);
		ck_assert_int_eq(iogp_varint_get(&p, end, &dt), 0);
		form[i] = (int)(head & 3);
		ck_assert_int_le(form[i], 1);
		p += head >> 2;
	}
	start[NR] = (size_t)(p - in);
	ck_assert_uint_eq(start[NR], n);

	size_t cap = n + 64, zcap = ZSTD_compressBound(cap) + 4;
	uint8_t *mut = malloc(cap), *body = malloc(zcap), *img = malloc(hl + 16 + zcap + 16 + 4);
	static struct rrec got[NR + 8];
	int rejected = 0;
	for (int it = 0; it < 1500; it++) {
		/* change a byte (or a run) inside one record's body, mostly form 1 */
		int i = (int)rng_below(NR);
		while (form[i] != 1 && rng_below(4))
			i = (int)rng_below(NR);
		size_t mlen = n;
		memcpy(mut, in, n);
		size_t at = start[i] + rng_below(start[i + 1] - start[i]);
		int how = (int)rng_below(4);
		if (how == 0) {
			mut[at] ^= (uint8_t)(1 + rng_below(255));
		} else if (how == 1) {
			mut[at] = (uint8_t)rng();
			if (at + 1 < n)
				mut[at + 1] = (uint8_t)rng();
		} else if (how == 2) {
			mut[at] = rng_below(2) ? 0x00 : 0xff;
		} else {
			/* a random body for this record, same length */
			uint64_t head, dt;
			const uint8_t *q = mut + start[i], *e = mut + n;
			iogp_varint_get(&q, e, &head);
			iogp_varint_get(&q, e, &dt);
			for (size_t k = (size_t)(q - mut); k < start[i + 1]; k++)
				mut[k] = (uint8_t)(rng_below(3) ? rng_below(4) : rng());
			at = (size_t)(q - mut);
		}
		memcpy(body, "IOGZ", 4);
		size_t zn = ZSTD_compress(body + 4, zcap - 4, mut, mlen, 1);
		ck_assert(!ZSTD_isError(zn));
		memcpy(img, f, hl);
		frame(img + hl, (1u << 31) | (1u << 29), 5000, body, (uint32_t)(4 + zn));
		frame(img + hl + 16 + 4 + zn, 0, 9, "IOGWtail", 8);
		size_t ilen = hl + 16 + 4 + zn + 16 + 8;
		iogp_replay_reader *r;
		ck_assert_int_eq(iogp__replay_open_mem(&r, img, ilen, NULL, 0), 0);
		int m = read_some(r, got, NR + 8);
		iogp_replay_rstats st;
		iogp_replay_reader_stats(r, &st);
		iogp_replay_close_reader(r);
		/* Records wholly before the change are exact. The changed one may
		 * rebuild as another valid DELTA, and so may later ones of its
		 * source, until one does not fit: the rest of the pack is lost
		 * (all of it if its framing broke). The CRC makes this hostile
		 * files only. */
		int before = 0;
		while (before < NR && start[before + 1] <= at)
			before++;
		CHECK(m >= 1 && got[m - 1].t == 9, "it %d: the plain record after is lost", it);
		CHECK(m - 1 <= NR && (st.bad_frames || m - 1 >= before),
		      "it %d: %d records, %d before the change", it, m - 1, before);
		for (int k = 0; k < before && k < m - 1; k++)
			CHECK(same(&got[k], &rec[k], 0), "it %d record %d", it, k);
		if (st.bad_frames) {
			CHECK(st.bad_frames == 1 && st.skipped_bytes == 16 + 4 + zn,
			      "it %d: %llu bad frames, %llu skipped", it,
			      (unsigned long long)st.bad_frames, (unsigned long long)st.skipped_bytes);
			rejected++;
		}
		for (int k = 0; k < m - 1; k++)
			CHECK(got[k].len <= IOGP_MAX_PAYLOAD, "it %d: huge record", it);
		free_rrecs(got, m);
	}
	/* most changes are caught; the rest rebuild some other DELTA */
	ck_assert_int_gt(rejected, 300);

	/* forms 2 and 3, a record referring to a source the frame does not have,
	 * an unknown mode bit: each pack is one bad frame */
	static const uint8_t bad[][8] = {
		{ 2 << 2 | 2, 0, 1, 2 },
		{ 1 << 2 | 3, 0, 0 },
		{ 2 << 2 | 1, 0, 0, 0 },             /* mode 0, source index 0: none yet */
		{ 3 << 2 | 1, 0, 0x80, 0x10, 0 },    /* mode bit 11 */
		{ 2 << 2 | 1, 0, 3 << 3, 0 },        /* t0 rule 3 */
		{ 1 << 2 | 1, 0, 1 },                /* a new source with no id */
	};
	for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
		size_t blen = (bad[k][0] >> 2) + 2;
		memcpy(body, "IOGZ", 4);
		size_t zn = ZSTD_compress(body + 4, zcap - 4, bad[k], blen, 1);
		ck_assert(!ZSTD_isError(zn));
		memcpy(img, f, hl);
		frame(img + hl, (1u << 31) | (1u << 29), 5000, body, (uint32_t)(4 + zn));
		frame(img + hl + 16 + 4 + zn, 0, 9, "IOGWtail", 8);
		iogp_replay_reader *r;
		ck_assert_int_eq(iogp__replay_open_mem(&r, img, hl + 16 + 4 + zn + 24, NULL, 0), 0);
		int m = read_some(r, got, 4);
		iogp_replay_rstats st;
		iogp_replay_reader_stats(r, &st);
		iogp_replay_close_reader(r);
		ck_assert_msg(m == 1 && got[0].t == 9, "bad %zu: %d records", k, m);
		ck_assert_msg(st.bad_frames == 1, "bad %zu: %llu bad frames", k,
		              (unsigned long long)st.bad_frames);
		free_rrecs(got, m);
	}
	free(mut);
	free(body);
	free(img);
	free(in);
	free(f);
	for (int i = 0; i < NR; i++)
		free(rec[i].p);
}
END_TEST

/* A file of one pack holding one inner record of the given form and body,
 * then a plain record: read it; returns the records read (the plain one
 * last) and the reader's stats. */
static int read_crafted(int form, const uint8_t *body, size_t n, struct rrec *got,
                        iogp_replay_rstats *st)
{
	static uint8_t inner[512], z[1024], img[2048];
	size_t hl = 0, k = 0;
	ck_assert_uint_lt(n, 400);
	inner[k++] = (uint8_t)((n << 2 | (size_t)form) | (n >= 32 ? 0x80 : 0));
	if (n >= 32)
		inner[k++] = (uint8_t)(n >> 5);
	inner[k++] = 0;
	memcpy(inner + k, body, n);
	memcpy(z, "IOGZ", 4);
	size_t zn = ZSTD_compress(z + 4, sizeof z - 4, inner, k + n, 1);
	ck_assert(!ZSTD_isError(zn));
	/* a header from a real (empty) file */
	char path[128];
	path_of(path, sizeof path, "crafted.iogr");
	iogp_replay_writer *w;
	iogp_replay_wopts o = { .replace = 1, .compress = 1 };
	ck_assert_int_eq(iogp_replay_create(&w, path, &o, NULL, 0), 0);
	iogp_replay_abandon(w);
	uint8_t *h = slurp(path, &hl);
	memcpy(img, h, hl);
	free(h);
	frame(img + hl, (1u << 31) | (1u << 29), 50, z, (uint32_t)(4 + zn));
	frame(img + hl + 20 + zn, 0, 9, "IOGWtail", 8);
	iogp_replay_reader *r;
	ck_assert_int_eq(iogp__replay_open_mem(&r, img, hl + 20 + zn + 24, NULL, 0), 0);
	int m = read_some(r, got, 4);
	iogp_replay_reader_stats(r, st);
	iogp_replay_close_reader(r);
	ck_assert_msg(m >= 1 && got[m - 1].t == 9, "the plain record is lost");
	return m;
}

/* Transformed records built by hand from the format in iogp_replay.h: the
 * good one rebuilds the DELTA it describes, and each inconsistency in it
 * is one bad frame. */
START_TEST(test_xf_crafted)
{
	/* a new source: one counter (id 1, value 5), one histogram (id 2,
	 * total = counter 0, bins 3 and 4 of counts 2 and 3) */
	static const uint8_t good[] = {
		0xa1, 0x21,                          /* mode NEW|CLIST|HLIST|HSEL */
		1, 2, 3, 4, 5, 6, 7, 8,              /* source id */
		0, 0,                                /* t1, wall residuals */
		1, 1, 10,                            /* counters: n 1, id gap 1, zz(5) */
		1, 2,                                /* hists: n 1, id gap 2 */
		1,                                   /* its total: counter 0 */
		1, 2, 3, 0,                          /* B_LIST: 2 bins, gaps 3 0 */
		4,                                   /* zz(2); the last count is 5 - 2 */
	};
	iogp_bin bins[2] = { { 3, 2 }, { 4, 3 } };
	iogp_counter_val c = { 1, 5 };
	iogp_hist_val hv = { .id = 2, .nbins = 2, .bins = bins };
	iogp_msg want = { .kind = IOGP_DELTA, .source = 0x0807060504030201ull, .seq = 1,
	                  .ncounters = 1, .counters = &c, .nhists = 1, .hists = &hv };
	size_t wl;
	uint8_t *wp = encode_msg(&want, &wl);
	static struct rrec got[4];
	iogp_replay_rstats st;
	int m = read_crafted(1, good, sizeof good, got, &st);
	ck_assert_int_eq(m, 2);
	ck_assert_uint_eq(st.bad_frames, 0);
	ck_assert_uint_eq(got[0].t, 50);
	ck_assert(got[0].len == wl && !memcmp(got[0].p, wp, wl));
	free_rrecs(got, m);
	free(wp);

	static const struct { size_t at; uint8_t to; const char *what; } bad[] = {
		{ 22, 10, "the counts leave nothing for the last bin" },
		{ 17, 2, "a total from a counter the DELTA does not have" },
		{ 0, 0xa1, "mode bits beyond the known ones" },
		{ 18, 0, "B_SAME against no previous bins but a total of 5" },
		{ 18, 3, "an unknown bin coding" },
		{ 12, 1, "the body ends inside the counters" },
	};
	uint8_t b[sizeof good + 2];
	for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
		memcpy(b, good, sizeof good);
		size_t n = sizeof good;
		b[bad[k].at] = bad[k].to;
		if (bad[k].at == 0) {
			b[1] = 0x80;
			b[2] = 0x01;   /* mode 0x21 | 1 << 14: a 3-byte varint */
			memcpy(b + 3, good + 2, sizeof good - 2);
			n = sizeof good + 1;
		}
		if (bad[k].at == 12)
			n = 12;
		m = read_crafted(1, b, n, got, &st);
		ck_assert_msg(m == 1 && st.bad_frames == 1, "%s: %d records, %llu bad frames",
		              bad[k].what, m, (unsigned long long)st.bad_frames);
		free_rrecs(got, m);
	}
	/* a counter scaled by itself (predictor 1 for counter 0) */
	static const uint8_t selfref[] = { 0x21 | 0x80, 0x10, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0,
	                                   1, 1, 1, 10 };
	m = read_crafted(1, selfref, sizeof selfref, got, &st);
	ck_assert_int_eq(m, 1);
	ck_assert_uint_eq(st.bad_frames, 1);
	free_rrecs(got, m);
	/* form 0 is the payload itself */
	m = read_crafted(0, good, sizeof good, got, &st);
	ck_assert_int_eq(m, 2);
	ck_assert(got[0].len == sizeof good && !memcmp(got[0].p, good, sizeof good));
	free_rrecs(got, m);
}
END_TEST

/* Each keyframe empties the transform's state: the first DELTA of each
 * source after it is stored as a new source (its id in full), so reading
 * from the keyframe needs nothing before it. */
START_TEST(test_xf_keyframe_reset)
{
	char path[128];
	path_of(path, sizeof path, "xf-reset.iogr");
	rng_state = SEED + 91;
	wire_begin();
	iogp_replay_writer *w;
	iogp_replay_wopts o = { .replace = 1, .compress = 1 };
	ck_assert_int_eq(iogp_replay_create(&w, path, &o, NULL, 0), 0);
	iogp_msg *m = &rmsg;
	static struct orec rec[40];
	int n = 0;
	for (int round = 0; round < 2; round++) {
		if (round)
			ck_assert_int_eq(iogp_replay_keyframe_begin(w, 100), 0);
		if (round) {
			realistic_snapshot(rsrc[0], m, 10);
			m->flags |= IOGP_F_KEYFRAME;
			size_t l;
			uint8_t *p = encode_msg(m, &l);
			ck_assert_int_eq(iogp_replay_write(w, 100, p, l), 0);
			free(p);
			ck_assert_int_eq(iogp_replay_keyframe_end(w), 0);
		}
		for (int i = 0; i < 10; i++) {
			realistic_delta(rsrc[i % 2], m, (uint64_t)(round * 10 + i / 2 + 1));
			rec[n].p = encode_msg(m, &rec[n].len);
			rec[n].t = 100 + (uint64_t)n;
			ck_assert_int_eq(iogp_replay_write(w, rec[n].t, rec[n].p, rec[n].len), 0);
			n++;
		}
		ck_assert_int_eq(iogp_replay_flush(w), 0);
	}
	ck_assert_uint_eq(iogp__replay_transformed(w), 20);
	ck_assert_int_eq(iogp_replay_close(w), 0);
	size_t len;
	uint8_t *f = slurp(path, &len);
	static struct fr fr[64];
	size_t hdr;
	int nf = walk_frames(f, len, fr, 64, &hdr);
	/* frames: pack (NEWZ), marker, keyframe pack (NEWZ), pack, index */
	ck_assert_int_eq(nf, 5);
	ck_assert_uint_eq(fr[1].flags, 1u << 28);
	ck_assert_uint_eq(fr[2].flags, (1u << 31) | (1u << 30) | (1u << 29));
	ck_assert_uint_eq(fr[3].flags, 1u << 31);
	/* in the pack after the keyframe, the first DELTA of each source is NEW */
	ZSTD_DCtx *dc = ZSTD_createDCtx();
	static uint8_t out[1 << 16];
	size_t total = 0;
	for (int k = 2; k <= 3; k++) {
		ZSTD_inBuffer in = { f + fr[k].off + 20, fr[k].end - fr[k].off - 20, 0 };
		ZSTD_outBuffer ob = { out, sizeof out, total };
		while (in.pos < in.size)
			ck_assert(!ZSTD_isError(ZSTD_decompressStream(dc, &ob, &in)));
		if (k == 2)
			total = 0;   /* the keyframe's SNAPSHOT: skip it */
		else
			total = ob.pos;
	}
	const uint8_t *p = out, *end = out + total;
	for (int i = 0; i < 10; i++) {
		uint64_t head, dt, mode;
		ck_assert_int_eq(iogp_varint_get(&p, end, &head), 0);
		ck_assert_int_eq(iogp_varint_get(&p, end, &dt), 0);
		ck_assert_uint_eq(head & 3, 1);
		const uint8_t *b = p;
		ck_assert_int_eq(iogp_varint_get(&b, end, &mode), 0);
		ck_assert_msg((mode & 1) == (i < 2), "record %d: mode %llu", i, (unsigned long long)mode);
		p += head >> 2;
	}
	ck_assert_ptr_eq(p, end);
	ZSTD_freeDCtx(dc);
	iogp_replay_reader *r = open_ok(path);
	ck_assert_int_eq(iogp_replay_seek(r, 150), 0);
	static struct rrec got[40];
	int m2 = read_some(r, got, 40);
	ck_assert_int_eq(m2, 11);
	for (int i = 1; i < m2; i++)
		ck_assert(same(&got[i], &rec[9 + i], 0));
	free_rrecs(got, m2);
	iogp_replay_close_reader(r);
	free(f);
	for (int i = 0; i < n; i++)
		free(rec[i].p);
}
END_TEST

/* Offsets past 4 GiB: a sparse file whose only frames sit at 5 GiB, reached
 * through the index (a read from the start would scan the hole). */
START_TEST(test_large_offsets)
{
	char path[128];
	path_of(path, sizeof path, "sparse.iogr");
	iogp_replay_writer *w;
	iogp_replay_wopts o = { .replace = 1, .compress = 0, .creator = "sparse" };
	ck_assert_int_eq(iogp_replay_create(&w, path, &o, NULL, 0), 0);
	ck_assert_int_eq(iogp_replay_flush(w), 0);
	iogp_replay_abandon(w);
	uint64_t at = 5ull << 30;
	uint8_t tail[20 + 16 + 7 + 16 + 4 + 16 + 16];
	uint8_t idx[4 + 16];
	memcpy(idx, "IOGX", 4);
	put64(idx + 4, at);
	put64(idx + 12, 999);
	size_t p = 0;
	frame(tail + p, 1u << 28, 999, "IOGK", 4);
	p += 20;
	frame(tail + p, 1u << 30, 1000, "payload", 7);
	p += 16 + 7;
	uint64_t idx_at = at + p;
	frame(tail + p, 0, UINT64_MAX, idx, sizeof idx);
	p += 16 + sizeof idx;
	put64(tail + p, idx_at);
	memcpy(tail + p + 8, "IOGRTAIL", 8);
	p += 16;
	ck_assert_uint_eq(p, sizeof tail);
	int fd = open(path, O_WRONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, tail, sizeof tail, (off_t)at), (ssize_t)sizeof tail);
	close(fd);
	ck_assert_uint_eq(file_size(path), at + sizeof tail);

	iogp_replay_reader *r = open_ok(path);
	iogp_replay_info info;
	iogp_replay_get_info(r, &info);
	ck_assert_int_eq(info.index_found, 1);
	ck_assert_uint_eq(info.file_bytes, at + sizeof tail);
	const iogp_replay_kf *kf;
	ck_assert_uint_eq(iogp_replay_keyframes(r, &kf), 1);
	ck_assert_uint_eq(kf[0].offset, at);
	ck_assert_int_eq(iogp_replay_seek(r, 2000), 0);
	iogp_replay_rec rec;
	ck_assert_int_eq(iogp_replay_next(r, &rec), 0);
	ck_assert_uint_eq(rec.offset, at + 20);
	ck_assert_uint_eq(rec.recv_ns, 1000);
	ck_assert_int_eq(rec.keyframe_start, 1);
	ck_assert(rec.len == 7 && !memcmp(rec.payload, "payload", 7));
	ck_assert_int_eq(iogp_replay_next(r, &rec), IOGP_EEOF);
	iogp_replay_close_reader(r);
	unlink(path);
}
END_TEST

START_TEST(test_bad_files)
{
	char path[128], err[256];
	iogp_replay_reader *r = (iogp_replay_reader *)1;

	path_of(path, sizeof path, "missing.iogr");
	err[0] = 0;
	ck_assert_int_eq(iogp_replay_open(&r, path, err, sizeof err), IOGP_EIO);
	ck_assert_ptr_null(r);
	ck_assert_msg(strstr(err, strerror(ENOENT)) && strstr(err, path), "msg: %s", err);

	err[0] = 0;
	ck_assert_int_eq(iogp_replay_open(&r, tmpdir, err, sizeof err), IOGP_EIO);
	ck_assert_msg(strstr(err, strerror(EISDIR)) != NULL, "msg: %s", err);

	path_of(path, sizeof path, "empty.iogr");
	spit(path, "", 0);
	err[0] = 0;
	ck_assert_int_eq(iogp_replay_open(&r, path, err, sizeof err), IOGP_ETRUNC);
	ck_assert_msg(strstr(err, "empty") != NULL, "msg: %s", err);

	path_of(path, sizeof path, "text.txt");
	const char *txt = "time,read_bytes\n1,2\n3,4\n";
	spit(path, txt, strlen(txt));
	err[0] = 0;
	ck_assert_int_eq(iogp_replay_open(&r, path, err, sizeof err), IOGP_EMAGIC);
	ck_assert_msg(strstr(err, "not an iogram") && strstr(err, path), "msg: %s", err);
	spit(path, "ab", 2);
	ck_assert_int_eq(iogp_replay_open(&r, path, err, sizeof err), IOGP_EMAGIC);
	spit(path, "IOG", 3);
	ck_assert_int_eq(iogp_replay_open(&r, path, err, sizeof err), IOGP_ETRUNC);

	/* header only, abandoned: fine, empty */
	path_of(path, sizeof path, "hdronly.iogr");
	iogp_replay_writer *w;
	iogp_replay_wopts o = { .replace = 1, .creator = "a creator\twith a tab", .compress = 1 };
	ck_assert_int_eq(iogp_replay_create(&w, path, &o, err, sizeof err), 0);
	iogp_replay_abandon(w);
	r = open_ok(path);
	iogp_replay_info info;
	iogp_replay_get_info(r, &info);
	ck_assert_int_eq(info.index_found, 0);
	ck_assert_str_eq(info.creator, "a creator?with a tab");
	iogp_replay_rec rec;
	ck_assert_int_eq(iogp_replay_next(r, &rec), IOGP_EEOF);
	iogp_replay_rstats st;
	iogp_replay_reader_stats(r, &st);
	ck_assert_uint_eq(st.records + st.skipped_bytes + st.bad_frames, 0);
	ck_assert_uint_eq(iogp_replay_keyframes(r, NULL), 0);
	ck_assert_int_eq(iogp_replay_seek(r, 5), 0);
	ck_assert_int_eq(iogp_replay_next(r, &rec), IOGP_EEOF);
	iogp_replay_close_reader(r);

	/* every single-byte change of the header is a clear error */
	size_t hl;
	uint8_t *h = slurp(path, &hl);
	uint8_t *c = malloc(hl);
	for (size_t pos = 0; pos < hl; pos++) {
		for (int x = 1; x < 256; x += 85) {
			memcpy(c, h, hl);
			c[pos] ^= (uint8_t)x;
			spit(path, c, hl);
			err[0] = 0;
			int rc = iogp_replay_open(&r, path, err, sizeof err);
			ck_assert_msg(rc < 0, "pos %zu: corrupt header accepted", pos);
			ck_assert_msg(strstr(err, path) != NULL, "pos %zu: msg %s", pos, err);
			if (pos < 8)
				ck_assert_int_eq(rc, IOGP_EMAGIC);
			else
				ck_assert_msg(strstr(err, "corrupt") || strstr(err, "truncated"),
				              "pos %zu: msg %s", pos, err);
		}
	}
	/* a newer version, consistently checksummed */
	memcpy(c, h, hl);
	c[8] = 2;
	put32(c + hl - 4, iogp_crc32c(0, c, hl - 4));
	spit(path, c, hl);
	err[0] = 0;
	ck_assert_int_eq(iogp_replay_open(&r, path, err, sizeof err), IOGP_EVERSION);
	ck_assert_msg(strstr(err, "newer") != NULL, "msg: %s", err);
	free(c);
	free(h);

	/* closed with nothing in it (the file above is replaced: unlink, no --force) */
	unlink(path);
	ck_assert_int_eq(iogp_replay_create(&w, path, NULL, err, sizeof err), 0);
	ck_assert_int_eq(iogp_replay_close(w), 0);
	r = open_ok(path);
	iogp_replay_get_info(r, &info);
	ck_assert_int_eq(info.index_found, 1);
	ck_assert_int_eq(iogp_replay_next(r, &rec), IOGP_EEOF);
	iogp_replay_close_reader(r);
}
END_TEST

START_TEST(test_writer_errors)
{
	char path[128], err[256] = "";
	iogp_replay_writer *w;
	path_of(path, sizeof path, "no/such/dir.iogr");
	ck_assert_int_eq(iogp_replay_create(&w, path, NULL, err, sizeof err), IOGP_EIO);
	ck_assert_msg(strstr(err, strerror(ENOENT)) != NULL, "msg: %s", err);

	for (int compress = 0; compress < 2; compress++) {
		path_of(path, sizeof path, "errs.iogr");
		iogp_replay_wopts o = { .replace = 1, .compress = compress, .zstd_level = 99 };
		ck_assert_int_eq(iogp_replay_create(&w, path, &o, err, sizeof err), 0);
		ck_assert_int_eq(iogp_replay_write(w, UINT64_MAX, "x", 1), IOGP_EINVAL);
		ck_assert_int_eq(iogp_replay_write(w, 1, NULL, 1), IOGP_EINVAL);
		ck_assert_int_eq(iogp_replay_write(w, 1, "x", (size_t)IOGP_REPLAY_MAX_RECORD + 1),
		                 IOGP_ELIMIT);
		ck_assert_int_eq(iogp_replay_write(w, 1, NULL, 0), 0);
		ck_assert_int_eq(iogp_replay_keyframe_end(w), IOGP_EINVAL);
		ck_assert_int_eq(iogp_replay_keyframe_begin(w, UINT64_MAX), IOGP_EINVAL);
		ck_assert_int_eq(iogp_replay_keyframe_begin(w, 2), 0);
		ck_assert_int_eq(iogp_replay_keyframe_begin(w, 3), IOGP_EINVAL);
		ck_assert_int_eq(iogp_replay_write(w, 3, "k", 1), 0);
		/* close ends the open keyframe */
		ck_assert_int_eq(iogp_replay_close(w), 0);
		iogp_replay_reader *r = open_ok(path);
		iogp_replay_rec rec;
		ck_assert_int_eq(iogp_replay_next(r, &rec), 0);
		ck_assert_uint_eq(rec.len, 0);
		ck_assert_int_eq(rec.keyframe, 0);
		ck_assert_int_eq(iogp_replay_next(r, &rec), 0);
		ck_assert_int_eq(rec.keyframe_start, 1);
		ck_assert_uint_eq(rec.recv_ns, 3);
		ck_assert_int_eq(iogp_replay_next(r, &rec), IOGP_EEOF);
		iogp_replay_close_reader(r);
	}
	ck_assert_int_eq(iogp_replay_write(NULL, 1, "x", 1), IOGP_EINVAL);
	ck_assert_int_eq(iogp_replay_flush(NULL), IOGP_EINVAL);
}
END_TEST

/* The stats track the file as it grows, and packs shrink it. */
START_TEST(test_writer_stats)
{
	char path[128];
	path_of(path, sizeof path, "stats.iogr");
	uint64_t sizes[2];
	for (int compress = 0; compress < 2; compress++) {
		iogp_replay_writer *w;
		iogp_replay_wopts o = { .replace = 1, .compress = compress };
		ck_assert_int_eq(iogp_replay_create(&w, path, &o, NULL, 0), 0);
		iogp_replay_wstats st;
		uint8_t msg[250];
		rng_state = SEED + 51;
		uint64_t kf_start = 0;
		for (int i = 0; i < 2000; i++) {
			memcpy(msg, "IOGW", 4);
			for (size_t k = 4; k < sizeof msg; k++)
				msg[k] = (uint8_t)((k * 7 + (uint64_t)i / 10 +
				                    (rng_below(8) == 0 ? rng() : 0)) & 0x3f);
			if (i % 500 == 0) {
				ck_assert_int_eq(iogp_replay_keyframe_begin(w, (uint64_t)i), 0);
				iogp_replay_writer_stats(w, &st);
				kf_start = st.file_bytes - 20;
				ck_assert_int_eq(iogp_replay_write(w, (uint64_t)i, msg, sizeof msg), 0);
				ck_assert_int_eq(iogp_replay_keyframe_end(w), 0);
				iogp_replay_writer_stats(w, &st);
				ck_assert_uint_eq(st.last_keyframe_bytes, st.file_bytes - kf_start);
				ck_assert_uint_eq(st.bytes_since_keyframe, 0);
				continue;
			}
			ck_assert_int_eq(iogp_replay_write(w, (uint64_t)i, msg, sizeof msg), 0);
			if (i % 100 == 0) {
				ck_assert_int_eq(iogp_replay_flush(w), 0);
				iogp_replay_writer_stats(w, &st);
				ck_assert_uint_eq(st.file_bytes, file_size(path));
				ck_assert_uint_eq(st.records, (uint64_t)i + 1);
				ck_assert_uint_eq(st.payload_bytes, ((uint64_t)i + 1) * sizeof msg);
				ck_assert_uint_gt(st.bytes_since_keyframe, 0);
			}
		}
		ck_assert_int_eq(iogp_replay_flush(w), 0);
		iogp_replay_writer_stats(w, &st);
		ck_assert_uint_eq(st.keyframes, 4);
		ck_assert_int_eq(iogp_replay_close(w), 0);
		ck_assert_uint_eq(file_size(path), st.file_bytes + 16 + 4 + 4 * 16 + 16);
		sizes[compress] = file_size(path);
	}
	ck_assert_uint_lt(sizes[1] * 3, sizes[0]);
}
END_TEST

int main(void)
{
	tu_tmpdir(tmpdir, sizeof tmpdir, "check_replay");
	Suite *s = suite_create("replay");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_crc32c);
	tcase_add_test(tc, test_roundtrip_plain);
	tcase_add_test(tc, test_roundtrip_packs);
	tcase_add_test(tc, test_roundtrip_big_plain);
	tcase_add_test(tc, test_roundtrip_big_packs);
	tcase_add_test(tc, test_huge_record);
	tcase_add_test(tc, test_create_safety);
	tcase_add_test(tc, test_abandon_seek_plain);
	tcase_add_test(tc, test_abandon_seek_packs);
	tcase_add_test(tc, test_writer_errors);
	tcase_add_test(tc, test_writer_stats);
	tcase_add_test(tc, test_bad_files);
	tcase_add_test(tc, test_garbage_resync);
	tcase_add_test(tc, test_resync_bounded);
	tcase_add_test(tc, test_large_offsets);
	tcase_add_test(tc, test_hostile_packs);
	tcase_add_test(tc, test_roundtrip_wire_plain);
	tcase_add_test(tc, test_roundtrip_wire_packs);
	tcase_add_test(tc, test_abandon_seek_wire);
	tcase_add_test(tc, test_xf_random);
	tcase_add_test(tc, test_xf_spoiled);
	tcase_add_test(tc, test_xf_sampled_check);
	tcase_add_test(tc, test_xf_hostile);
	tcase_add_test(tc, test_xf_keyframe_reset);
	tcase_add_test(tc, test_xf_crafted);
	tcase_add_test(tc, test_xf_write_msg);
	tcase_add_test(tc, test_xf_write_msg_same_file);
	tcase_add_test(tc, test_recorder_snapshot_skip);
	tcase_add_test(tc, test_recorder_sums);
	tcase_add_test(tc, test_recorder_sums_wide);
	suite_add_tcase(s, tc);
	TCase *tt = tcase_create("damage");
	tcase_set_timeout(tt, 240);
	tcase_add_test(tt, test_torn_plain);
	tcase_add_test(tt, test_torn_packs);
	tcase_add_test(tt, test_torn_packs_abandoned);
	tcase_add_test(tt, test_corrupt_plain);
	tcase_add_test(tt, test_corrupt_packs);
	tcase_add_test(tt, test_torn_wire);
	tcase_add_test(tt, test_corrupt_wire);
	suite_add_tcase(s, tt);
	int failed = tu_run_srunner(s);
	for (int i = 0; i < NRSRC; i++)
		realistic_free(rsrc[i]);
	iogp_msg_free(&rmsg);
	/* CHECK_REPLAY_KEEP=1 keeps the files of a failed test to look at. */
	if (!getenv("CHECK_REPLAY_KEEP"))
		tu_rmdir_all(tmpdir);
	else
		fprintf(stderr, "check_replay: files kept in %s\n", tmpdir);
	if (failed)
		fprintf(stderr, "check_replay: seed %#llx\n", (unsigned long long)SEED);
	return failed ? 1 : 0;
}
