/* sizes.c - the publisher's side of the common-size tables (agent.h): read
 * every thread's counts, give them to the interval's histogram, keep the
 * interval's most common sizes and their cumulative list, and start a new
 * generation of tables when sizes keep finding no place. */
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "sizes.h"

#define MAP_SLOTS 256                          /* distinct sizes per interval considered */
#define SWITCH_PASSES 8                        /* collections between generations, at least */
#define SWITCH_NS (8ull * 1000 * 1000 * 1000)  /* and this long */

static struct {
	iogp_exact e[MAP_SLOTS];
	uint32_t used[MAP_SLOTS / 32];
	uint32_t n;
} map;
static int want_switch;
static uint64_t passes, last_switch_pass, last_switch_ns;

static void map_add(uint64_t v, uint64_t d)
{
	uint32_t p = (uint32_t)((v * 0x9E3779B97F4A7C15ull) >> 56);

	for (uint32_t k = 0; k < MAP_SLOTS; k++, p = (p + 1) % MAP_SLOTS) {
		if (!(map.used[p / 32] >> (p % 32) & 1)) {
			if (map.n >= MAP_SLOTS / 2)
				return;   /* full enough: the size is counted, not a candidate */
			map.used[p / 32] |= 1u << (p % 32);
			map.e[p] = (iogp_exact){ v, d };
			map.n++;
			return;
		}
		if (map.e[p].value == v) {
			map.e[p].count += d;
			return;
		}
	}
}

/* One table of one thread: add what it counted since the last read. */
static void table_read(const iog_metric *m, iog_sizes *z, int k, uint64_t *tabd, uint32_t nb)
{
	struct iog_size_tab *t = &z->t[k];
	uint64_t n[IOG_SIZES_SLOTS], v[IOG_SIZES_SLOTS];
	uint32_t g = __atomic_load_n(&t->gen, __ATOMIC_ACQUIRE), miss;

	if (g == IOG_SIZES_RESET)
		return;
	for (uint32_t p = 0; p < IOG_SIZES_SLOTS; p++) {
		n[p] = __atomic_load_n(&t->e[p].n, __ATOMIC_ACQUIRE);
		v[p] = __atomic_load_n(&t->e[p].v, __ATOMIC_RELAXED);
	}
	miss = __atomic_load_n(&t->miss, __ATOMIC_RELAXED);
	/* its thread began emptying it meanwhile: read it next time */
	if (__atomic_load_n(&t->gen, __ATOMIC_ACQUIRE) != g)
		return;
	if (z->seen_gen[k] != g) {
		memset(z->seen[k], 0, sizeof z->seen[k]);
		z->seen_gen[k] = g;
		z->seen_miss[k] = 0;
	}
	if (g == __atomic_load_n(&iog__sizes_gen, __ATOMIC_RELAXED) && miss != z->seen_miss[k])
		want_switch = 1;
	z->seen_miss[k] = miss;
	for (uint32_t p = 0; p < IOG_SIZES_SLOTS; p++) {
		uint64_t d = n[p] - z->seen[k][p];

		if (n[p] == 0 || d == 0)
			continue;
		z->seen[k][p] = n[p];
		uint32_t b = iog__dense_index(m, v[p]);
		if (b < nb)
			tabd[b] += d;
		map_add(v[p], d);
	}
}

int iog__sizes_collect(const iog_metric *m, iog__xpub *x, uint64_t *tabd, uint32_t nb)
{
	memset(map.used, 0, sizeof map.used);
	map.n = 0;
	for (iog_shard *s = iog__shards(); s != NULL; s = s->next) {
		iog_sizes *z = __atomic_load_n(&s->sizes[m->slot], __ATOMIC_ACQUIRE);

		if (z == NULL)
			continue;
		table_read(m, z, 0, tabd, nb);
		table_read(m, z, 1, tabd, nb);
	}
	/* the interval's most common, ascending by value as the wire wants */
	iogp_exact all[MAP_SLOTS / 2];
	uint32_t na = 0;

	for (uint32_t p = 0; p < MAP_SLOTS; p++)
		if (map.used[p / 32] >> (p % 32) & 1)
			all[na++] = map.e[p];
	x->ntop = (uint32_t)iogp_exact_top(all, na, x->top, IOGP_EXACT_TOP);
	for (uint32_t i = 1; i < x->ntop; i++) {
		iogp_exact e = x->top[i];
		uint32_t j = i;

		for (; j > 0 && x->top[j - 1].value > e.value; j--)
			x->top[j] = x->top[j - 1];
		x->top[j] = e;
	}
	iogp_exact_merge(x->cum, &x->ncum, IOGP_EXACT_KEEP, x->top, x->ntop);
	return 0;
}

void iog__sizes_tick(uint64_t now_ns)
{
	passes++;
	if (!want_switch || passes - last_switch_pass < SWITCH_PASSES ||
	    now_ns - last_switch_ns < SWITCH_NS)
		return;
	want_switch = 0;
	last_switch_pass = passes;
	last_switch_ns = now_ns;
	__atomic_add_fetch(&iog__sizes_gen, 1, __ATOMIC_RELAXED);
}
