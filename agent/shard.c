/* shard.c - per-thread shards: claimed on a thread's first record, pushed
 * once on a lock-free list, handed to a new thread when theirs exits; the
 * record API and the access reservoir. */
#include <pthread.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "agent.h"

#if defined(__SANITIZE_ADDRESS__)
#define IOG_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define IOG_LSAN 1
#endif
#endif
#ifdef IOG_LSAN
#include <sanitizer/lsan_interface.h>
#endif

__thread iog_shard *iog__tls_shard __attribute__((tls_model("initial-exec")));
__thread int iog__tls_in_agent __attribute__((tls_model("initial-exec")));
__thread int iog__tls_agent_thread __attribute__((tls_model("initial-exec")));
int iog__enabled = 1;
uint64_t iog__interval;

static iog_shard *shard_head;
static pthread_key_t shard_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static int key_ok;

static void shard_release(void *p)
{
	iog_shard *s = p;

	if (iog__tls_shard == s)
		iog__tls_shard = NULL;
	__atomic_store_n(&s->in_use, 0, __ATOMIC_RELEASE);
}

static void key_init(void)
{
	key_ok = pthread_key_create(&shard_key, shard_release) == 0;
}

iog_shard *iog__shards(void)
{
	return __atomic_load_n(&shard_head, __ATOMIC_ACQUIRE);
}

static uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

iog_shard *iog__shard_slow(void)
{
	iog_shard *s;

	if (iog__tls_shard != NULL)
		return iog__tls_shard;
	if (!__atomic_load_n(&iog__enabled, __ATOMIC_RELAXED))
		return NULL;
	/* a fork child's first record restarts its publisher */
	if (!iog__tls_in_agent && iog__ensure_started() < 0)
		return NULL;
	pthread_once(&key_once, key_init);
	for (s = iog__shards(); s != NULL; s = s->next) {
		int free_ = 0;
		if (__atomic_load_n(&s->in_use, __ATOMIC_RELAXED) == 0 &&
		    __atomic_compare_exchange_n(&s->in_use, &free_, 1, 0,
		                                __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			goto claimed;
	}
	/* mmap: pages of the access reservoir stay untouched until used */
	s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s == MAP_FAILED) {
		iog__disable();
		return NULL;
	}
#ifdef IOG_LSAN
	__lsan_register_root_region(s, sizeof(*s));   /* it holds the hist arrays */
#endif
	s->in_use = 1;
	uint64_t seed = (uint64_t)(uintptr_t)s ^ iog__source_id() ^ iog__now_ns();
	s->acc[0].rng = splitmix(&seed) | 1;
	s->acc[1].rng = splitmix(&seed) | 1;
	s->next = __atomic_load_n(&shard_head, __ATOMIC_RELAXED);
	while (!__atomic_compare_exchange_n(&shard_head, &s->next, s, 1,
	                                    __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		;
claimed:
	iog__tls_shard = s;
	if (key_ok)
		pthread_setspecific(shard_key, s);
	return s;
}

void iog__shard_stats(uint32_t *n, uint32_t *in_use)
{
	*n = *in_use = 0;
	for (iog_shard *s = iog__shards(); s != NULL; s = s->next) {
		(*n)++;
		*in_use += __atomic_load_n(&s->in_use, __ATOMIC_RELAXED) != 0;
	}
}

/* Fork child: only the forking thread survives. Its counts start at zero,
 * and the other threads' shards become free for the child's new threads. */
void iog__shards_child(void)
{
	uint32_t nm = iog__nmetrics;

	for (iog_shard *s = shard_head; s != NULL; s = s->next) {
		memset(s->counters, 0, sizeof(s->counters));
		memset(s->gauge, 0, sizeof(s->gauge));
		memset(s->gauge_t, 0, sizeof(s->gauge_t));
		for (int p = 0; p < 2; p++) {
			s->acc[p].interval = 0;
			s->acc[p].seen = 0;
		}
		for (uint32_t i = 0; i < nm; i++) {
			if (s->hist[i] != NULL)
				memset(s->hist[i], 0, iog__metrics[i]->nbuckets * sizeof(uint32_t));
			if (s->sizes[i] != NULL)
				memset(s->sizes[i], 0, sizeof *s->sizes[i]);
		}
		for (uint32_t c = 0; c < IOG_FREC_CHUNKS; c++)
			if (s->fr[c] != NULL)
				memset(s->fr[c], 0, sizeof *s->fr[c]);
		s->in_use = s == iog__tls_shard;
	}
	__atomic_store_n(&iog__interval, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&iog__sizes_gen, 0, __ATOMIC_RELAXED);
}

/* ---- record path ---------------------------------------------------------------- */

void iog__hist_record_slow(iog_shard *s, iog_metric *m, uint64_t v, uint64_t n)
{
	if (!__atomic_load_n(&iog__enabled, __ATOMIC_RELAXED) || m->kind != IOGP_HISTOGRAM)
		return;
	if (!__atomic_load_n(&m->ready, __ATOMIC_ACQUIRE)) {
		iog__learn_record(s, m, v, n);
		return;
	}
	uint32_t *c = __atomic_load_n(&s->hist[m->slot], __ATOMIC_RELAXED);
	if (c == NULL) {
		if (m->nbuckets == 0 || (c = calloc(m->nbuckets, sizeof(*c))) == NULL) {
			iog__disable();
			return;
		}
		__atomic_store_n(&s->hist[m->slot], c, __ATOMIC_RELEASE);
	}
	c[iog__dense_index(m, v)] += (uint32_t)n;
}

/* ---- common sizes (agent.h) ------------------------------------------------------ */

uint32_t iog__sizes_gen;

/* Count v in its place or its neighbour, claiming an empty one. */
static int size_claim(struct iog_size_tab *t, uint64_t v)
{
	uint32_t p = iog__size_place(v);

	for (int k = 0; k < 2; k++, p ^= 1) {
		struct iog_size_ent *e = &t->e[p];
		uint64_t n = e->n;

		if (n != 0 && e->v == v) {
			__atomic_store_n(&e->n, n + 1, __ATOMIC_RELAXED);
			return 1;
		}
		if (n == 0) {
			/* the value before the count: a reader that sees the count sees it */
			__atomic_store_n(&e->v, v, __ATOMIC_RELAXED);
			__atomic_store_n(&e->n, 1, __ATOMIC_RELEASE);
			return 1;
		}
	}
	t->miss++;
	return 0;
}

void iog__size_slow(iog_shard *s, iog_metric *m, uint64_t v)
{
	iog_sizes *z;

	if (m->exact && __atomic_load_n(&m->ready, __ATOMIC_ACQUIRE) &&
	    __atomic_load_n(&iog__enabled, __ATOMIC_RELAXED)) {
		if ((z = s->sizes[m->slot]) == NULL && (z = calloc(1, sizeof *z)) != NULL)
			__atomic_store_n(&s->sizes[m->slot], z, __ATOMIC_RELEASE);
		if (z != NULL) {
			uint32_t g = __atomic_load_n(&iog__sizes_gen, __ATOMIC_RELAXED);
			struct iog_size_tab *t = &z->t[g & 1];

			if (t->gen != g) {
				/* a new generation: empty the table the last one left */
				__atomic_store_n(&t->gen, IOG_SIZES_RESET, __ATOMIC_RELEASE);
				memset(t->e, 0, sizeof t->e);
				t->miss = 0;
				__atomic_store_n(&t->gen, g, __ATOMIC_RELEASE);
			}
			if (size_claim(t, v))
				return;
		}
	}
	uint32_t *c = s->hist[m->slot];
	if (c != NULL && m->fast)
		c[iogp_native_index(v, IOG_NATIVE_K)]++;
	else
		iog__hist_record_slow(s, m, v, 1);
}

/* The public record calls keep their fast path free of calls so it needs
 * no stack frame; everything else goes to a tail-called slow path. */
static __attribute__((noinline)) void record_slow(iog_metric *m, uint64_t v, uint64_t n)
{
	iog_shard *s;

	if (m == NULL || n == 0 || (s = iog__shard()) == NULL)
		return;
	uint32_t *c = s->hist[m->slot];
	if (c != NULL && m->fast)
		c[iogp_native_index(v, IOG_NATIVE_K)] += (uint32_t)n;
	else
		iog__hist_record_slow(s, m, v, n);
}

void iog_record(iog_metric *m, uint64_t v)
{
	iog_shard *s = iog__tls_shard;
	uint32_t *c;

	if (__builtin_expect(m != NULL && s != NULL, 1) &&
	    __builtin_expect((c = s->hist[m->slot]) != NULL && m->fast, 1)) {
		c[iogp_native_index(v, IOG_NATIVE_K)]++;
		return;
	}
	record_slow(m, v, 1);
}

void iog_record_n(iog_metric *m, uint64_t v, uint64_t n)
{
	record_slow(m, v, n);
}

static __attribute__((noinline)) void add_slow(iog_metric *m, uint64_t n)
{
	iog_shard *s;

	if (m != NULL && (s = iog__shard()) != NULL)
		s->counters[m->slot] += n;
}

void iog_add(iog_metric *m, uint64_t n)
{
	iog_shard *s = iog__tls_shard;

	if (__builtin_expect(m != NULL && s != NULL, 1)) {
		s->counters[m->slot] += n;
		return;
	}
	add_slow(m, n);
}

void iog_set(iog_metric *m, int64_t v)
{
	if (m == NULL)
		return;
	iog_shard *s = iog__shard();
	if (s == NULL)
		return;
	uint64_t t = iog__now_ns();
	__atomic_store_n(&s->gauge[m->slot], v, __ATOMIC_RELAXED);
	__atomic_store_n(&s->gauge_t[m->slot], t ? t : 1, __ATOMIC_RELEASE);
}

static uint64_t next_rand(uint64_t *state)
{
	uint64_t x = *state ? *state : 0x9e3779b97f4a7c15ull;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545f4914f6cdd1dull;
}

/* Uniform in (0, 1]. */
static double unit_rand(uint64_t *state)
{
	return (double)((next_rand(state) >> 11) + 1) * 0x1.0p-53;
}

/* Accesses to pass over before the next replacement (Li's Algorithm L). */
static uint64_t reservoir_skip(__typeof__(((iog_shard *)0)->acc[0]) *a)
{
	double d = log(unit_rand(&a->rng)) / log1p(-a->w);
	return d < 0 ? 0 : d > 1e18 ? (uint64_t)1e18 : (uint64_t)d;
}

void iog__access(iog_metric *m, uint64_t file, int op, uint64_t offset, uint64_t size, uint64_t t_ns)
{
	iog_shard *s = iog__shard();
	uint64_t e, n, j;

	if (s == NULL || m == NULL)
		return;
	e = __atomic_load_n(&iog__interval, __ATOMIC_RELAXED);
	__typeof__(s->acc[0]) *a = &s->acc[e & 1];
	if (a->interval != e) {
		__atomic_store_n(&a->seen, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&a->interval, e, __ATOMIC_RELAXED);
	}
	n = a->seen + 1;
	if (n <= IOG_ACCESS_RESERVOIR) {
		j = n - 1;
		if (n == IOG_ACCESS_RESERVOIR) {
			a->w = exp(log(unit_rand(&a->rng)) / IOG_ACCESS_RESERVOIR);
			a->next = n + reservoir_skip(a) + 1;
		}
	} else if (n == a->next) {
		/* Algorithm L: jump straight to the next access that replaces a
		 * sample, so most calls only compare (no division, no random) */
		j = next_rand(&a->rng) % IOG_ACCESS_RESERVOIR;
		a->w *= exp(log(unit_rand(&a->rng)) / IOG_ACCESS_RESERVOIR);
		a->next = n + reservoir_skip(a) + 1;
	} else {
		j = IOG_ACCESS_RESERVOIR;
	}
	if (j < IOG_ACCESS_RESERVOIR)
		a->s[j] = (iog_access_sample){ t_ns, file, offset, size, (uint32_t)op, m->slot };
	/* after the sample: the publisher copies the first min(seen, k) */
	__atomic_store_n(&a->seen, n, __ATOMIC_RELEASE);
}

void iog_access(iog_metric *m, uint64_t file, int op, uint64_t offset, uint64_t size)
{
	if (m == NULL || m->kind != IOGP_ACCESS)
		return;
	iog__access(m, file, op, offset, size, iog__now_ns());
}
