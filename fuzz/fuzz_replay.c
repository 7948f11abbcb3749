/* fuzz_replay.c - libFuzzer target: the replay reader on arbitrary file images. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "iogp_err.h"
#include "iogp_replay.h"
#include "iogp_testing.h"

#define MAX_STEPS 100000

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Mutations almost never keep a CRC right, which would leave the decoding
 * behind the CRCs (packs, inner records, the index) unfuzzed: so when the
 * first byte is odd, the rest is taken as a file whose header and frame
 * CRCs are recomputed as they are walked. */
static void fix_crcs(uint8_t *b, size_t len)
{
	if (len < 12)
		return;
	size_t hl = b[10] | (size_t)b[11] << 8;
	if (hl < 26 || hl > len)
		return;
	put32(b + hl - 4, iogp_crc32c(0, b, hl - 4));
	for (size_t p = hl; len - p >= 16;) {
		uint32_t n = get32(b + p) & ((1u << 27) - 1);
		if (n > len - p - 16)
			break;
		put32(b + p + 4, iogp_crc32c(iogp_crc32c(0, b + p, 4), b + p + 8, 8 + (size_t)n));
		p += 16 + n;
	}
}

/* One pass from the reader's position: checks what every record must
 * satisfy and returns a digest of what was read. (A record may be longer
 * than the file: packs inflate, and a transformed DELTA rebuilds to more
 * bytes than it takes.) */
static uint64_t pass(iogp_replay_reader *r, uint64_t size, size_t max, size_t *count)
{
	iogp_replay_rec rec;
	uint64_t h = 1469598103934665603ull, last_off = 0;
	size_t n = 0;
	int rc;
	while (n < max && (rc = iogp_replay_next(r, &rec)) == 0) {
		if (rec.offset >= size || rec.offset < last_off || rec.len > IOGP_REPLAY_MAX_RECORD ||
		    (rec.len && !rec.payload) || (rec.keyframe_start && !rec.keyframe))
			abort();
		last_off = rec.offset;
		for (size_t i = 0; i < rec.len; i++)
			h = (h ^ rec.payload[i]) * 1099511628211ull;
		h = (h ^ rec.recv_ns ^ (uint64_t)rec.keyframe << 1 ^ (uint64_t)rec.keyframe_start) *
		    1099511628211ull;
		n++;
	}
	if (n == MAX_STEPS)
		abort();  /* more records than bytes could hold: a loop */
	if (n < max && rc != IOGP_EEOF)
		abort();  /* memory only: no I/O error is possible */
	if (n < max && iogp_replay_next(r, &rec) != IOGP_EEOF)
		abort();
	*count = n;
	return h;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size)
		return 0;
	size_t len = size - 1;
	uint8_t *b = malloc(len ? len : 1);
	if (!b)
		return 0;
	memcpy(b, data + 1, len);
	if (data[0] & 1)
		fix_crcs(b, len);

	iogp_replay_reader *r;
	char err[256];
	err[0] = 0;
	int rc = iogp__replay_open_mem(&r, b, len, err, sizeof err);
	if (rc < 0) {
		if (!err[0] || r)
			abort();
		free(b);
		return 0;
	}
	iogp_replay_info info;
	iogp_replay_get_info(r, &info);
	if (info.file_bytes != len || info.version != IOGP_REPLAY_VERSION ||
	    memchr(info.creator, 0, sizeof info.creator) == NULL)
		abort();

	size_t n1, n2, n;
	uint64_t h1 = pass(r, len, MAX_STEPS, &n1);
	iogp_replay_rstats st;
	iogp_replay_reader_stats(r, &st);
	if (st.records != n1 || st.skipped_bytes > len || st.bad_frames > len ||
	    st.frames > len / 16 + 1)
		abort();
	iogp_replay_rewind(r);
	uint64_t h2 = pass(r, len, MAX_STEPS, &n2);
	if (h1 != h2 || n1 != n2)
		abort();  /* reading must be deterministic */

	const iogp_replay_kf *kf;
	size_t nk = iogp_replay_keyframes(r, &kf);
	for (size_t i = 0; i < nk; i++)
		if (kf[i].offset >= len || (i && kf[i].offset <= kf[i - 1].offset))
			abort();
	int zero_kf = 0;
	for (size_t i = 0; i < nk; i++)
		zero_kf |= kf[i].recv_ns == 0;
	uint64_t ts[5] = { 0, UINT64_MAX, 1, nk ? kf[0].recv_ns : 7, nk ? kf[nk - 1].recv_ns - 1 : 9 };
	for (int i = 0; i < 5; i++) {
		if (iogp_replay_seek(r, ts[i]) < 0)
			abort();
		pass(r, len, i < 2 ? MAX_STEPS : 3, &n);
		/* from the start, a seek reads what a rewind reads */
		if (i == 0 && !zero_kf && n != n1)
			abort();
	}
	iogp_replay_close_reader(r);
	free(b);
	return 0;
}
