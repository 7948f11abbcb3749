/* check_units.c - numbers as text in both styles, at the edges where a
 * careless rounding says "1000K" or loses an exact value. */
#include <check.h>
#include <math.h>
#include <string.h>

#include "iogp_units.h"
#include "testutil.h"

#define W IOGP_UNITS_WIDE
#define C IOGP_UNITS_CELL

static const char *b(double v, int style)
{
	static char buf[64];
	iogp_fmt_bytes(buf, sizeof(buf), v, style);
	return buf;
}

START_TEST(bytes)
{
	ck_assert_str_eq(b(512, W), "512 B");
	ck_assert_str_eq(b(4096, W), "4 KiB");
	ck_assert_str_eq(b(1536, W), "1.5 KiB");
	ck_assert_str_eq(b(1 << 20, W), "1 MiB");
	ck_assert_str_eq(b(1023.9 * 1024, W), "1 MiB");   /* never "1024 KiB" */
	ck_assert_str_eq(b(3901, C), "3901");               /* exact while short */
	ck_assert_str_eq(b(4096, C), "4096");
	ck_assert_str_eq(b(16384, C), "16K");
	ck_assert_str_eq(b(192 * 1024, C), "192K");
	ck_assert_str_eq(b(1000 * 1024, C), "0.98M");       /* never "1000K" */
	ck_assert_str_eq(b(1.03 * 1048576, C), "1.03M");
	ck_assert_str_eq(b(-5, C), "0");
	ck_assert_str_eq(b(NAN, C), "0");
}
END_TEST

static const char *sz(double v, int style)
{
	static char buf[64];
	iogp_fmt_size(buf, sizeof(buf), v, style);
	return buf;
}

/* Request sizes: exact, binary units only when they are exact. */
START_TEST(sizes)
{
	ck_assert_str_eq(sz(0, W), "0 B");
	ck_assert_str_eq(sz(512, W), "512 B");
	ck_assert_str_eq(sz(1023, W), "1,023 B");
	ck_assert_str_eq(sz(1024, W), "1 KiB");
	ck_assert_str_eq(sz(4096, W), "4 KiB");
	ck_assert_str_eq(sz(48 * 1024, W), "48 KiB");
	ck_assert_str_eq(sz(64 * 1024, W), "64 KiB");
	ck_assert_str_eq(sz(1 << 20, W), "1 MiB");
	ck_assert_str_eq(sz(3 << 20, W), "3 MiB");
	ck_assert_str_eq(sz(1ull << 30, W), "1 GiB");
	ck_assert_str_eq(sz(10240, W), "10,240 B");          /* tar's records, not "10 KiB"/"10.2 KiB" */
	ck_assert_str_eq(sz(1536, W), "1,536 B");
	ck_assert_str_eq(sz(4097, W), "4,097 B");
	ck_assert_str_eq(sz(102400, W), "100 KiB");
	ck_assert_str_eq(sz(1056 * 1024, W), "1,056 KiB");   /* exact, never "1.03 MiB" */
	ck_assert_str_eq(sz(1310719, W), "1,310,719 B");
	ck_assert_str_eq(sz(1000000, W), "1,000,000 B");
	ck_assert_str_eq(sz(-5, W), "0 B");
	ck_assert_str_eq(sz(NAN, W), "0 B");
	ck_assert_str_eq(sz(512, C), "512");
	ck_assert_str_eq(sz(4096, C), "4K");
	ck_assert_str_eq(sz(48 * 1024, C), "48K");
	ck_assert_str_eq(sz(32 * 1024, C), "32K");
	ck_assert_str_eq(sz(1 << 20, C), "1M");
	ck_assert_str_eq(sz(1.25 * 1048576, C), "1280K");
	ck_assert_str_eq(sz(1056 * 1024, C), "1056K");      /* not "1.03M" */
	ck_assert_str_eq(sz(10240, C), "10240");            /* not "10.0K" */
	ck_assert_str_eq(sz(1310719, C), "1310719");
	ck_assert_str_eq(sz(2ull << 40, C), "2T");
	ck_assert_str_eq(sz(NAN, C), "0");
	char tiny[4] = "xxx";
	iogp_fmt_size(tiny, sizeof(tiny), 1310719, W);
	ck_assert_uint_le(strlen(tiny), 3);
}
END_TEST

START_TEST(durations_counts_rates)
{
	char s[64];
	iogp_fmt_ns(s, sizeof(s), 42, W);
	ck_assert_str_eq(s, "42 ns");
	iogp_fmt_ns(s, sizeof(s), 250000, W);
	ck_assert_str_eq(s, "250 µs");
	iogp_fmt_ns(s, sizeof(s), 90e9, W);
	ck_assert_str_eq(s, "1.5 min");
	iogp_fmt_ns(s, sizeof(s), 45100, C);
	ck_assert_str_eq(s, "45.1us");
	iogp_fmt_ns(s, sizeof(s), 5.1e6, C);
	ck_assert_str_eq(s, "5.10ms");
	iogp_fmt_count(s, sizeof(s), 950, W);
	ck_assert_str_eq(s, "950");
	iogp_fmt_count(s, sizeof(s), 1200, W);
	ck_assert_str_eq(s, "1.2k");
	iogp_fmt_count(s, sizeof(s), 99999, C);
	ck_assert_str_eq(s, "99999");
	iogp_fmt_count(s, sizeof(s), 123456, C);
	ck_assert_str_eq(s, "123k");
	iogp_fmt_count(s, sizeof(s), 999600, C);
	ck_assert_str_eq(s, "1.00M");
	iogp_fmt_count(s, sizeof(s), 2.5e12, C);
	ck_assert_str_eq(s, "2.50T");
	iogp_fmt_rate(s, sizeof(s), "bytes", 3.0 * (1 << 30), W);
	ck_assert_str_eq(s, "3 GiB/s");
	iogp_fmt_rate(s, sizeof(s), "bytes", 1.5 * (1 << 20), C);
	ck_assert_str_eq(s, "1.50M/s");
	iogp_fmt_rate(s, sizeof(s), "ops", 2.5, C);
	ck_assert_str_eq(s, "2.5/s");
	iogp_fmt_value(s, sizeof(s), "ns", 1500000, W);
	ck_assert_str_eq(s, "1.5 ms");
	iogp_fmt_duration(s, sizeof(s), 12);
	ck_assert_str_eq(s, "0:12");
	iogp_fmt_duration(s, sizeof(s), 3723);
	ck_assert_str_eq(s, "1:02:03");
	/* a short buffer truncates, never overflows */
	char tiny[4] = "xxx";
	iogp_fmt_bytes(tiny, sizeof(tiny), 123456789, W);
	ck_assert_uint_le(strlen(tiny), 3);
}
END_TEST

int main(void)
{
	const tu_case cases[] = {
		{ "bytes", bytes },
		{ "sizes", sizes },
		{ "durations_counts_rates", durations_counts_rates },
	};
	return tu_run_suite("units", cases, sizeof(cases) / sizeof(cases[0]), NULL, NULL, 30);
}
