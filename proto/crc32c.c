/* crc32c.c - CRC-32C (Castagnoli): SSE4.2 instruction when present, else slicing-by-8. */
#include <stdint.h>
#include <string.h>

#include "iogp_replay.h"
#include "iogp_testing.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define CRC_HW 1
#include <nmmintrin.h>
#endif

static uint32_t crc_table[8][256];

static uint32_t crc_sw(uint32_t crc, const uint8_t *p, size_t len)
{
	while (len && ((uintptr_t)p & 7)) {
		crc = crc_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
		len--;
	}
	while (len >= 8) {
		uint32_t lo, hi;
		memcpy(&lo, p, 4);
		memcpy(&hi, p + 4, 4);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
		lo = __builtin_bswap32(lo);
		hi = __builtin_bswap32(hi);
#endif
		lo ^= crc;
		crc = crc_table[7][lo & 0xff] ^ crc_table[6][(lo >> 8) & 0xff] ^
		      crc_table[5][(lo >> 16) & 0xff] ^ crc_table[4][lo >> 24] ^
		      crc_table[3][hi & 0xff] ^ crc_table[2][(hi >> 8) & 0xff] ^
		      crc_table[1][(hi >> 16) & 0xff] ^ crc_table[0][hi >> 24];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = crc_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}

#ifdef CRC_HW
__attribute__((target("sse4.2")))
static uint32_t crc_hw(uint32_t crc, const uint8_t *p, size_t len)
{
	uint64_t c = crc;
	while (len && ((uintptr_t)p & 7)) {
		c = _mm_crc32_u8((uint32_t)c, *p++);
		len--;
	}
	while (len >= 8) {
		uint64_t v;
		memcpy(&v, p, 8);
		c = _mm_crc32_u64(c, v);
		p += 8;
		len -= 8;
	}
	while (len--)
		c = _mm_crc32_u8((uint32_t)c, *p++);
	return (uint32_t)c;
}
#endif

static uint32_t (*crc_impl)(uint32_t, const uint8_t *, size_t) = crc_sw;

/* A constructor rather than lazy set-up: no race when threads share it. */
__attribute__((constructor))
static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0x82f63b78u & (0u - (c & 1)));
		crc_table[0][i] = c;
	}
	for (int t = 1; t < 8; t++)
		for (int i = 0; i < 256; i++)
			crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^
			                  crc_table[0][crc_table[t - 1][i] & 0xff];
#ifdef CRC_HW
	__builtin_cpu_init();
	if (__builtin_cpu_supports("sse4.2"))
		crc_impl = crc_hw;
#endif
}

/* Private: the portable path, so tests check it on SSE4.2 machines too. */
uint32_t iogp__crc32c_sw(uint32_t crc, const void *buf, size_t len)
{
	return ~crc_sw(~crc, buf, len);
}

uint32_t iogp_crc32c(uint32_t crc, const void *buf, size_t len)
{
	if (!len)
		return crc;
	return ~crc_impl(~crc, buf, len);
}
