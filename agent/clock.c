/* clock.c - iog__now_ns: the TSC scaled to CLOCK_MONOTONIC when the CPU says
 * it is invariant (CPUID: constant and nonstop), else clock_gettime. The
 * publisher calibrates it over its first ~10 ms and re-anchors it every
 * interval by slewing the rate, so the clock stays continuous and monotonic. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent.h"
#include "iogp_sys.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <x86intrin.h>
#define HAVE_TSC 1
#endif

#define CAL_MIN_NS 10000000ull   /* calibrate over at least 10 ms */
#define MAX_SLEW_PPM 1000        /* rate correction per interval */

/* ns = base_ns + ((tsc - base_tsc) * mult) >> 32, under a seqlock */
static struct {
	uint32_t seq;
	uint64_t base_tsc, base_ns, mult;
} clk;
static int tsc_on;            /* clk is valid */
static int tsc_checked, tsc_usable;
static uint64_t cal_tsc0, cal_ns0;   /* first sample: the long-term rate's origin */

uint64_t iog__mono_ns(void)
{
	return iogp_mono_ns();
}

uint64_t iog__wall_ns(void)
{
	return iogp_wall_ns();
}

#ifdef HAVE_TSC
static inline uint64_t conv(uint64_t t, uint64_t bt, uint64_t bn, uint64_t mu)
{
	if (t < bt)
		t = bt;
	return bn + (uint64_t)(((unsigned __int128)(t - bt) * mu) >> 32);
}
#endif

uint64_t iog__now_ns(void)
{
#ifdef HAVE_TSC
	if (__builtin_expect(__atomic_load_n(&tsc_on, __ATOMIC_ACQUIRE), 1)) {
		uint32_t s;
		uint64_t bt, bn, mu, t;

		do {
			s = __atomic_load_n(&clk.seq, __ATOMIC_ACQUIRE);
			bt = __atomic_load_n(&clk.base_tsc, __ATOMIC_RELAXED);
			bn = __atomic_load_n(&clk.base_ns, __ATOMIC_RELAXED);
			mu = __atomic_load_n(&clk.mult, __ATOMIC_RELAXED);
			t = __rdtsc();
			__atomic_thread_fence(__ATOMIC_ACQUIRE);
		} while ((s & 1) || s != __atomic_load_n(&clk.seq, __ATOMIC_RELAXED));
		return conv(t, bt, bn, mu);
	}
#endif
	return iog__mono_ns();
}

uint64_t iog_now_ns(void)
{
	return iog__now_ns();
}

int iog__clock_tsc(void)
{
	return __atomic_load_n(&tsc_on, __ATOMIC_ACQUIRE);
}

#ifdef HAVE_TSC
/* CPUID 0x80000007 EDX bit 8, the bit Linux turns into constant_tsc and
 * nonstop_tsc. Asked of the CPU, not of /proc/cpuinfo: the agent's thread
 * must not open files (a descriptor it takes could be the one the program
 * expects from its next open()). */
static int cpu_has_invariant_tsc(void)
{
	unsigned a, b, c, d;

	if (!__get_cpuid(0x80000007, &a, &b, &c, &d))
		return 0;
	return (d >> 8) & 1;
}

/* A (tsc, CLOCK_MONOTONIC) pair: the tightest of a few tries. */
static void sample(uint64_t *tsc, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;

	*tsc = *ns = 0;
	for (int i = 0; i < 5; i++) {
		uint64_t t1 = __rdtsc();
		uint64_t n = iog__mono_ns();
		uint64_t t2 = __rdtsc();
		if (t2 - t1 < best) {
			best = t2 - t1;
			*tsc = t1 + (t2 - t1) / 2;
			*ns = n;
		}
	}
}

static void publish(uint64_t bt, uint64_t bn, uint64_t mu)
{
	uint32_t s = clk.seq;

	__atomic_store_n(&clk.seq, s + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&clk.base_tsc, bt, __ATOMIC_RELAXED);
	__atomic_store_n(&clk.base_ns, bn, __ATOMIC_RELAXED);
	__atomic_store_n(&clk.mult, mu, __ATOMIC_RELAXED);
	__atomic_store_n(&clk.seq, s + 2, __ATOMIC_RELEASE);
}

/* ns per tick << 32 between two samples, or 0 when implausible. */
static uint64_t rate(uint64_t t0, uint64_t n0, uint64_t t1, uint64_t n1)
{
	if (t1 <= t0 || n1 <= n0)
		return 0;
	unsigned __int128 mu = ((unsigned __int128)(n1 - n0) << 32) / (t1 - t0);
	/* 10 MHz .. 20 GHz */
	if (mu > ((unsigned __int128)100 << 32) || mu < ((unsigned __int128)1 << 32) / 20)
		return 0;
	return (uint64_t)mu;
}
#endif

void iog__clock_start(void)
{
#ifdef HAVE_TSC
	if (!tsc_checked) {
		tsc_checked = 1;
		tsc_usable = cpu_has_invariant_tsc();
		if (tsc_usable)
			sample(&cal_tsc0, &cal_ns0);
	}
#endif
}

void iog__clock_tick(uint64_t interval_ns)
{
#ifdef HAVE_TSC
	uint64_t t, n, mu_long, mu;

	if (!tsc_usable)
		return;
	sample(&t, &n);
	if (!tsc_on) {
		if (n - cal_ns0 < CAL_MIN_NS)
			return;
		if ((mu = rate(cal_tsc0, cal_ns0, t, n)) == 0) {
			tsc_usable = 0;
			return;
		}
		publish(t, n, mu);
		__atomic_store_n(&tsc_on, 1, __ATOMIC_RELEASE);
		return;
	}
	if ((mu_long = rate(cal_tsc0, cal_ns0, t, n)) == 0)
		return;
	/* continuous at t; the rate absorbs the error over the next interval */
	uint64_t c = conv(t, clk.base_tsc, clk.base_ns, clk.mult);
	int64_t err = (int64_t)(n - c);
	uint64_t bn = c;
	if (interval_ns < 1000000)
		interval_ns = 1000000;
	if (err > (int64_t)interval_ns) {
		bn = n;        /* far behind (e.g. a stall): step forward, never back */
		err = 0;
	}
	double adj = (double)err / (double)interval_ns;
	if (adj > MAX_SLEW_PPM * 1e-6)
		adj = MAX_SLEW_PPM * 1e-6;
	if (adj < -MAX_SLEW_PPM * 1e-6)
		adj = -MAX_SLEW_PPM * 1e-6;
	mu = (uint64_t)((double)mu_long * (1.0 + adj));
	publish(t, bn, mu);
#else
	(void)interval_ns;
#endif
}
