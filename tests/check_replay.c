/* check_replay.c - replay file: CRC-32C, round trips, index, seek, torn tails, corruption, bad files. */
#define _FILE_OFFSET_BITS 64
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "iogp_err.h"
#include "iogp_replay.h"

uint32_t iogp__crc32c_sw(uint32_t crc, const void *buf, size_t len);
int iogp__replay_open_mem(iogp_replay_reader **rp, const void *buf, size_t len,
                          char *err, size_t errlen);

#define SEED 0x5eed2e91a7ULL
#define CREATOR "check_replay"
#define MAXREC 400

/* For hot loops: every ck_assert call writes its location to a log. */
#define CHECK(cond, ...) do { if (!(cond)) ck_abort_msg(__VA_ARGS__); } while (0)

static char tmpdir[64];
static uint64_t rng_state;

static uint64_t rng(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
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
	FILE *f = fopen(path, "rb");
	ck_assert_msg(f != NULL, "open %s: %s", path, strerror(errno));
	fseeko(f, 0, SEEK_END);
	*len = (size_t)ftello(f);
	fseeko(f, 0, SEEK_SET);
	uint8_t *b = malloc(*len + 1);
	ck_assert(b != NULL);
	ck_assert_uint_eq(fread(b, 1, *len, f), *len);
	fclose(f);
	return b;
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
 * flush_every. Compressible payloads are mostly a pattern, else random. */
static void make_dataset(struct dataset *d, int n, int big, int flush_every,
                         int compressible)
{
	memset(d, 0, sizeof *d);
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
		r->len = draw_len(big);
		r->p = malloc(r->len ? r->len : 1);
		for (size_t k = 0; k < r->len; k++)
			r->p[k] = (uint8_t)(!compressible || !rng_below(8) ? rng() : k * 7 + (size_t)i);
		if (r->len >= 4)
			memcpy(r->p, "IOGW", 4);
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
	iogp_replay_wopts o = { .creator = CREATOR, .compress = compress };
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

static void check_roundtrip(int compress, int big)
{
	static struct dataset d;
	rng_state = SEED + (uint64_t)compress * 7 + (uint64_t)big;
	make_dataset(&d, big ? 120 : 300, big, 7, compress);
	char path[128];
	path_of(path, sizeof path, compress ? "rt-z.iogr" : "rt-p.iogr");
	iogp_replay_wstats ws = write_dataset(path, &d, compress, 0);

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

START_TEST(test_roundtrip_plain) { check_roundtrip(0, 0); }
END_TEST
START_TEST(test_roundtrip_packs) { check_roundtrip(1, 0); }
END_TEST
START_TEST(test_roundtrip_big_plain) { check_roundtrip(0, 1); }
END_TEST
START_TEST(test_roundtrip_big_packs) { check_roundtrip(1, 1); }
END_TEST

/* A record bigger than the reader's window and the pack target. */
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
		iogp_replay_wopts o = { .compress = compress };
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

static void check_abandon_and_seek(int compress)
{
	static struct dataset d;
	rng_state = SEED + 11 + (uint64_t)compress;
	make_dataset(&d, 200, 0, 9, compress);
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
	iogp_replay_wopts o = { .compress = compress };
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

START_TEST(test_abandon_seek_plain) { check_abandon_and_seek(0); }
END_TEST
START_TEST(test_abandon_seek_packs) { check_abandon_and_seek(1); }
END_TEST

/* Packs: every byte near a frame boundary (headers, ends, the index and
 * trailer), a stride elsewhere: inside a pack body all bytes behave alike,
 * and each pack image costs a zstd context (slow under ASan). */
static int near_boundary(uint64_t pos, const struct fr *fr, int nf, int compress)
{
	if (!compress || pos % 7 == 0)
		return 1;
	for (int k = 0; k < nf; k++)
		if ((pos >= fr[k].off && pos < fr[k].off + 24) ||
		    (pos + 8 >= fr[k].end && pos <= fr[k].end) || fr[k].t == UINT64_MAX)
			return 1;
	return nf == 0 || pos >= fr[nf - 1].off;
}

/* Cut a copy of a ~50-record file at every byte (plain). */
static void check_torn(int compress, int how)
{
	static struct dataset d;
	rng_state = SEED + 21 + (uint64_t)compress;
	make_dataset(&d, 50, 0, 4, compress);
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
		if (!near_boundary(cut, fr, nf, compress))
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

START_TEST(test_torn_plain) { check_torn(0, 0); }
END_TEST
START_TEST(test_torn_packs) { check_torn(1, 0); }
END_TEST
START_TEST(test_torn_packs_abandoned) { check_torn(1, 1); }
END_TEST

/* Flip one byte at every position after the header (plain). */
static void check_corrupt(int compress)
{
	static struct dataset d;
	rng_state = SEED + 31 + (uint64_t)compress;
	make_dataset(&d, 50, 0, 4, compress);
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
		if (!near_boundary(pos, fr, nf, compress))
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

START_TEST(test_corrupt_plain) { check_corrupt(0); }
END_TEST
START_TEST(test_corrupt_packs) { check_corrupt(1); }
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

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* 1 MiB of junk whose every 4th word claims a 2 MiB frame that would fit:
 * checking each claim would cost 512 GiB of CRC; the budget keeps it to
 * well under 100 MiB and the records after the junk are found. */
START_TEST(test_resync_bounded)
{
	char path[128];
	path_of(path, sizeof path, "junk.iogr");
	iogp_replay_writer *w;
	iogp_replay_wopts o = { .compress = 0, .creator = "junk" };
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
	double t0 = now_s();
	iogp_replay_reader *r = open_ok(path);
	static struct rrec got[8];
	int m = read_some(r, got, 8);
	double dt = now_s() - t0;
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
	iogp_replay_wopts o = { .compress = 0, .creator = "x" };
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
	/* inner records that do not add up */
	uint8_t junk[40] = { 0 };
	put32(junk, 100);
	uint8_t body2[64];
	memcpy(body2, "IOGZ", 4);
	size_t zn2 = ZSTD_compress(body2 + 4, sizeof body2 - 4, junk, sizeof junk, 1);
	ck_assert(!ZSTD_isError(zn2));
	/* a good record after both */
	uint8_t inner[15];
	put32(inner, 3);
	put64(inner + 4, 77);
	memcpy(inner + 12, "abc", 3);
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
	frame(f + p, pz, 3, body3, (uint32_t)(4 + zn3));
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

/* Offsets past 4 GiB: a sparse file whose only frames sit at 5 GiB, reached
 * through the index (a read from the start would scan the hole). */
START_TEST(test_large_offsets)
{
	char path[128];
	path_of(path, sizeof path, "sparse.iogr");
	iogp_replay_writer *w;
	iogp_replay_wopts o = { .compress = 0, .creator = "sparse" };
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
	iogp_replay_wopts o = { .creator = "a creator\twith a tab", .compress = 1 };
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

	/* closed with nothing in it */
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
		iogp_replay_wopts o = { .compress = compress, .zstd_level = 99 };
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
		iogp_replay_wopts o = { .compress = compress };
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

static int rm_cb(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(p);
}

int main(void)
{
	snprintf(tmpdir, sizeof tmpdir, "/tmp/check_replay.XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	Suite *s = suite_create("replay");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_crc32c);
	tcase_add_test(tc, test_roundtrip_plain);
	tcase_add_test(tc, test_roundtrip_packs);
	tcase_add_test(tc, test_roundtrip_big_plain);
	tcase_add_test(tc, test_roundtrip_big_packs);
	tcase_add_test(tc, test_huge_record);
	tcase_add_test(tc, test_abandon_seek_plain);
	tcase_add_test(tc, test_abandon_seek_packs);
	tcase_add_test(tc, test_writer_errors);
	tcase_add_test(tc, test_writer_stats);
	tcase_add_test(tc, test_bad_files);
	tcase_add_test(tc, test_garbage_resync);
	tcase_add_test(tc, test_resync_bounded);
	tcase_add_test(tc, test_large_offsets);
	tcase_add_test(tc, test_hostile_packs);
	suite_add_tcase(s, tc);
	TCase *tt = tcase_create("damage");
	tcase_set_timeout(tt, 240);
	tcase_add_test(tt, test_torn_plain);
	tcase_add_test(tt, test_torn_packs);
	tcase_add_test(tt, test_torn_packs_abandoned);
	tcase_add_test(tt, test_corrupt_plain);
	tcase_add_test(tt, test_corrupt_packs);
	suite_add_tcase(s, tt);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	/* CHECK_REPLAY_KEEP=1 keeps the files of a failed test to look at. */
	if (!getenv("CHECK_REPLAY_KEEP"))
		nftw(tmpdir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	else
		fprintf(stderr, "check_replay: files kept in %s\n", tmpdir);
	if (failed)
		fprintf(stderr, "check_replay: seed %#llx\n", (unsigned long long)SEED);
	return failed ? 1 : 0;
}
