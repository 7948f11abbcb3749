/* model_access.c - access samples in the stream model: each source's ring
 * of its newest samples (iogp_model_access), and, with the live side on, a
 * sample per file that stays spread over the time shown
 * (iogp_model_access_query).
 *
 * Per (source, access metric, file) the samples of each DELTA make a
 * bucket: at most q of them, evenly spaced, and the requests they stand
 * for. Buckets go to two tiers:
 *  - run: nrun slices of equal width from the file's first request;
 *    when the run outgrows them the width doubles and neighbours merge, so
 *    "since start" keeps up to nrun x q samples spread evenly;
 *  - recent (the last ACC_HORIZON): an exponential histogram: a level holds
 *    b buckets, then its two oldest merge into one of the next level,
 *    so a window of the last N seconds finds buckets about N / b long
 *    at its start, and several hundred samples over all of it.
 * Merging keeps q samples, every 2nd or so, from each half in
 * proportion to the requests it stands for. A query takes the tier that
 * gives more samples for its window and thins the denser buckets to the
 * density of the sparsest, so what it returns is uniform over the requests
 * of the time asked for. A source keeps at most opts.access_keep samples:
 * beyond it the fullest tier of its fullest file is halved.
 *
 * Memory: with opts.access_total a source's access samples hold at most
 * access_total x 32 bytes / sources, all told (ring, buckets, tables and
 * malloc's overhead, counted as blocks are sized): half for the ring, half
 * for the store. A store whose half is small (under 32 KB: thousands of
 * sources) takes a coarse shape (SHAPE[1]) so structure does not outweigh
 * samples; beyond its bytes it is thinned, then loses its oldest recent
 * buckets, halves its run slices and lets its quietest files go. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "iogp_err.h"
#include "model_priv.h"

#define ACC_QMAX 64u                     /* samples a bucket keeps, at most */
#define ACC_HORIZON 300000000000ull      /* what the recent tier covers */
#define ACC_KEEP 8192u                   /* samples per source, default */
#define ACC_MAX_OUT 100000u              /* samples a query returns, default */
#define ACC_SMALL 32768u                 /* a store budget below this takes the small shape */
#define ACC_SCAN 8u                      /* streams found by scanning, before a hash table */
#define ACC_OVH 16u                      /* malloc's header and rounding, per block */
#define ACC_STACK 256u                   /* a DELTA's samples sorted on the stack, up to */
#define ACC_FILE_BYTES 1024u             /* a small store's bytes per file it keeps */
#define ACC_RING_MIN_SHARE 8192u         /* a live source's share below which it keeps no ring */

enum { TIER_RECENT = 0, TIER_RUN = 1 };

/* A store's shape: fine buckets for a full share; for a small one few and
 * coarse (a level-0 bucket of 8 s merges 8 DELTAs in place instead of
 * adding a bucket each; a bucket a level), so the buckets cost about what
 * their samples do, and only as many files as its bytes hold a few
 * samples of (ACC_FILE_BYTES each): the first seen, the others' samples
 * are let go as they come rather than thinned after. */
struct ashape {
	uint32_t q;          /* samples a bucket keeps */
	uint32_t b;          /* recent: buckets a level holds */
	uint32_t nrun;       /* run slices */
	uint64_t w0;         /* a level-0 bucket spans at most this */
};

static const struct ashape SHAPE[2] = {
	{ 64, 8, 64, 1000000000ull },
	{ 4, 1, 8, 8000000000ull },
};

struct asample {
	uint64_t t, off, size;
	uint32_t op;
};

struct abucket {
	uint64_t t0, t1;         /* source CLOCK_MONOTONIC span of its requests */
	double req;              /* requests the samples stand for */
	struct asample *s;       /* time order; exactly n (NULL when none) */
	uint16_t n;              /* <= ACC_QMAX */
	uint8_t level, exact;    /* exact: req counted, not estimated */
	float mean;              /* its samples' mean size (bucket_mean), so a query over
	                          * whole buckets need not read their samples */
};

struct astream {
	uint32_t id;             /* access metric id */
	uint64_t file;
	struct abucket *rec;     /* recent: oldest first, levels never rise towards the newest */
	uint32_t nrec, reccap;
	struct abucket *run;     /* nrun slices of run_w from run_t0; NULL until the first */
	uint64_t run_t0, run_w;
	uint32_t n[2];           /* samples held per tier */
	uint8_t rec_cut;         /* the recent tier has let old buckets go */
	uint8_t nrun;            /* run slices (halved when the bytes are short) */
	double req;              /* requests its samples stood for, all told */
};

struct astore {
	struct astream *st;
	uint32_t nst, stcap;
	uint32_t *hash;          /* stream index + 1, 0 = empty; none up to ACC_SCAN streams */
	uint32_t hcap;
	uint8_t small;           /* SHAPE[1] */
	uint64_t n;              /* samples held */
	uint64_t bytes;          /* held, all told (acc_resize) */
	uint64_t evicted;        /* files let go for the cap on files (fewest requests first) */
	uint64_t thinned;        /* samples dropped for the budget */
};

/* ---- budgets ------------------------------------------------------------- */

/* Bytes a source's access samples may hold, ring and store together: its
 * share of access_total samples of 32 bytes; UINT64_MAX without a total. */
static uint64_t share_bytes(const iogp_model *m)
{
	if (!m->opts.access_total || !m->nsrc)
		return UINT64_MAX;
	return m->opts.access_total * sizeof(struct asample) / m->nsrc;
}

/* The store's half of it. */
static uint64_t store_budget(const iogp_model *m)
{
	uint64_t b = share_bytes(m);
	return b == UINT64_MAX ? b : b / 2;
}

static uint32_t keep_of(const iogp_model *m)
{
	uint64_t k = m->opts.access_keep ? m->opts.access_keep : ACC_KEEP;

	if (m->opts.access_total && m->nsrc && m->opts.access_total / m->nsrc / 2 < k)
		k = m->opts.access_total / m->nsrc / 2;   /* its share of the total */
	return k < 2 * ACC_QMAX ? 2 * ACC_QMAX : (uint32_t)k;
}

/* Size a block the store holds from old to now bytes (0: none; freed),
 * counting it with malloc's overhead. */
static int acc_resize(struct astore *st, void *pp, size_t old, size_t now)
{
	void **p = pp;
	if (now == 0) {
		free(*p);
		*p = NULL;
	} else if (now != old) {
		void *q = realloc(*p, now);
		if (!q)
			return IOGP_ENOMEM;
		*p = q;
	}
	st->bytes += now ? now + ACC_OVH : 0;
	st->bytes -= old ? old + ACC_OVH : 0;
	return 0;
}

/* ---- the ring: each source's newest samples -------------------------------- */

/* The entries a source's ring may hold: half of its share's bytes (its
 * entries are 48 bytes), at least 16; none in a live model whose share
 * falls under ACC_RING_MIN_SHARE (past ~16,000 sources at iogram-top's
 * access_total). The viewers draw from the store; the ring only answers
 * iogp_model_access, and at 50,000 sources it cost 1.3 KB a source and a
 * DELTA's samples written to lines no cache held. */
static uint32_t ring_limit(const iogp_model *m)
{
	uint64_t b = share_bytes(m);
	uint64_t share = b == UINT64_MAX ? b : b / 2 / sizeof(iogp_access);

	if (m->opts.live && b < ACC_RING_MIN_SHARE)
		return 0;
	share = share < 16 ? 16 : share;
	return share < m->opts.access_ring ? (uint32_t)share : m->opts.access_ring;
}

/* The ring re-made with cap entries, its newest (up to cap) first in it,
 * oldest first: it grows as samples come, and gives back what a smaller
 * share (more sources) no longer allows. */
static int ring_resize(struct source *s, uint32_t cap)
{
	iogp_access *r = malloc((size_t)cap * sizeof *r);
	uint32_t keep = s->ring_n < cap ? s->ring_n : cap;

	if (r == NULL)
		return IOGP_ENOMEM;
	for (uint32_t i = 0; i < keep; i++) {   /* the newest keep, oldest first */
		uint32_t back = keep - i;
		r[i] = s->ring[(s->ring_head + s->ring_cap - back) % s->ring_cap];
	}
	free(s->ring);
	s->ring = r;
	s->ring_n = keep;
	s->ring_head = keep == cap ? 0 : keep;
	s->ring_cap = cap;
	return 0;
}

/* a onto the ring of at most lim (> 0) entries */
static int ring_push(struct source *s, const iogp_access *a, uint32_t lim)
{
	int r = 0;

	if (s->ring == NULL)   /* the ring starts small and doubles */
		r = ring_resize(s, lim < 64 ? lim : 64);
	else if (s->ring_n == s->ring_cap && s->ring_cap < lim)
		r = ring_resize(s, s->ring_cap * 2 < lim ? s->ring_cap * 2 : lim);
	else if (s->ring_cap > lim)
		r = ring_resize(s, lim);
	if (r < 0)
		return r;
	s->ring[s->ring_head] = *a;
	s->ring_head = s->ring_head + 1 == s->ring_cap ? 0 : s->ring_head + 1;
	if (s->ring_n < s->ring_cap)
		s->ring_n++;
	return 0;
}

static const iogp_access *ring_newest(const iogp_model *m, const struct source *s)
{
	(void)m;
	if (s->ring_n == 0)
		return NULL;
	return &s->ring[s->ring_head == 0 ? s->ring_cap - 1 : s->ring_head - 1];
}

/* ---- buckets -------------------------------------------------------------- */

/* A number in [0, 1) that depends only on x and y: chance, repeatably. */
static double chance(double x, double y)
{
	uint64_t u, v;
	memcpy(&u, &x, sizeof(u));
	memcpy(&v, &y, sizeof(v));
	return model__hash_u64(u * 0x9e3779b97f4a7c15ull ^ v) / 4294967296.0;
}

/* k of the n samples in, evenly spaced in time order, into out (out may be
 * in: the indices read never fall behind those written). A few (k < 8)
 * start at a chance offset, not mid-way: thousands of sources' buckets
 * thinned to their middle sample would leave their edges empty. */
static void pick(struct asample *out, const struct asample *in, uint32_t n, uint32_t k)
{
	double at = k < 8 && k < n ? chance((double)in[0].t, (double)in[n - 1].off + n) : 0.5;
	for (uint32_t j = 0; j < k; j++)
		out[j] = in[(uint32_t)(((double)j + at) * n / k)];
}

/* How many of each side a bucket of at most q keeps: in proportion to the
 * requests each stands for, at least one of a side that has samples. A
 * small bucket (q < 8) rounds by chance instead: the newest side's one
 * sample every merge would crowd the end of its time. */
static void split(uint32_t q, double ra, uint32_t na, double rb, uint32_t nb, uint32_t *ka,
                  uint32_t *kb)
{
	double tot = ra + rb;
	if (q < 8 && na && nb && tot > 0) {
		/* a small bucket's samples stand for equal requests: a side
		 * thinned before (a slice down to one sample) would otherwise be
		 * outnumbered by the newest DELTA's */
		double per = fmax(ra / na, rb / nb), x = ra / per, y = rb / per;
		uint32_t ea = (uint32_t)x + (x - floor(x) > chance(ra, rb));
		uint32_t eb = (uint32_t)y + (y - floor(y) > chance(rb, ra));
		na = ea < na ? ea : na;
		nb = eb < nb ? eb : nb;
	}
	if (na + nb <= q) {
		*ka = na;
		*kb = nb;
		return;
	}
	uint32_t a;
	if (q < 8 && tot > 0) {
		double x = q * ra / tot;
		a = (uint32_t)x + (x - floor(x) > chance(ra, rb));
	} else {
		a = tot > 0 ? (uint32_t)llround(q * ra / tot) : q * na / (na + nb);
		if (a == 0 && na > 0)
			a = 1;
		if (a == q && nb > 0 && q > 1)
			a = q - 1;
	}
	if (a > na)
		a = na;
	uint32_t b = q - a < nb ? q - a : nb;
	a = q - b < na ? q - b : na;
	*ka = a;
	*kb = b;
}

/* Set b's mean sample size after its samples changed. */
static void bucket_mean(struct abucket *b)
{
	double sum = 0;
	for (uint32_t j = 0; j < b->n; j++)
		sum += (double)b->s[j].size;
	b->mean = b->n ? (float)(sum / b->n) : 0;
}

static int bucket_empty(const struct abucket *b)
{
	return b->n == 0 && b->req == 0;
}

/* A bucket's samples array sized to n (keeping its first n): exactly, so
 * its bytes are its samples'. */
static int bucket_size(struct astore *st, struct abucket *b, uint32_t n)
{
	int r = acc_resize(st, &b->s, (size_t)b->n * sizeof(*b->s), (size_t)n * sizeof(*b->s));
	if (r == 0)
		b->n = (uint16_t)n;
	return r;
}

static void bucket_free(struct astore *st, struct abucket *b)
{
	bucket_size(st, b, 0);
	memset(b, 0, sizeof(*b));
}

/* a (older, or empty) takes b (newer) in, keeping at most q samples; b
 * stays as it was (its owner frees it). */
static int bucket_merge(struct astore *st, struct abucket *a, const struct abucket *b, uint32_t q)
{
	struct asample tmp[ACC_QMAX];
	uint32_t ka = 0, kb;
	int fresh = bucket_empty(a);

	if (bucket_empty(b))
		return 0;
	if (fresh)
		kb = b->n < q ? b->n : q;
	else
		split(q, a->req, a->n, b->req, b->n, &ka, &kb);
	pick(tmp, a->s, a->n, ka);
	pick(tmp + ka, b->s, b->n, kb);
	if (bucket_size(st, a, ka + kb) < 0)
		return IOGP_ENOMEM;   /* a as it was */
	memcpy(a->s, tmp, (size_t)(ka + kb) * sizeof(*tmp));
	bucket_mean(a);
	if (fresh) {
		a->t0 = b->t0;
		a->t1 = b->t1;
		a->exact = b->exact;
	} else {
		a->t0 = a->t0 < b->t0 ? a->t0 : b->t0;
		a->t1 = a->t1 > b->t1 ? a->t1 : b->t1;
		a->exact = a->exact && b->exact;
	}
	a->req += b->req;
	a->level = a->level > b->level ? a->level : b->level;
	return 0;
}

/* ---- the recent tier ---------------------------------------------------------- */

/* Samples a list of buckets holds. */
static uint32_t list_count(const struct abucket *b, uint32_t nb)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < nb; i++)
		n += b[i].n;
	return n;
}

/* While a level has more than b buckets its two oldest merge into one
 * of the next level; buckets older than the horizon go. */
static int recent_compact(struct astore *st, struct astream *a)
{
	const struct ashape *sh = &SHAPE[st->small];
	uint32_t before = list_count(a->rec, a->nrec);
	int r = 0;
	for (uint32_t level = 0; level < 64 && r == 0; level++) {
		uint32_t first = UINT32_MAX, count = 0;
		for (uint32_t i = 0; i < a->nrec; i++)
			if (a->rec[i].level == level) {
				first = first == UINT32_MAX ? i : first;
				count++;
			}
		if (count <= sh->b)
			break;
		if ((r = bucket_merge(st, &a->rec[first], &a->rec[first + 1], sh->q)) < 0)
			break;   /* out of memory: both stay */
		bucket_free(st, &a->rec[first + 1]);
		a->rec[first].level = (uint8_t)(level + 1);
		memmove(&a->rec[first + 1], &a->rec[first + 2], (a->nrec - first - 2) * sizeof(*a->rec));
		a->nrec--;
	}
	uint64_t newest = a->nrec ? a->rec[a->nrec - 1].t1 : 0;
	while (a->nrec > 1 && a->rec[0].t1 + ACC_HORIZON < newest) {
		a->rec_cut = 1;
		bucket_free(st, &a->rec[0]);
		memmove(&a->rec[0], &a->rec[1], (a->nrec - 1) * sizeof(*a->rec));
		a->nrec--;
	}
	a->n[TIER_RECENT] += list_count(a->rec, a->nrec) - before;
	return r;
}

static int recent_add(struct astore *st, struct astream *a, const struct abucket *nb)
{
	const struct ashape *sh = &SHAPE[st->small];
	struct abucket *last = a->nrec ? &a->rec[a->nrec - 1] : NULL;
	if (last && last->level == 0 && nb->t0 >= last->t0 && nb->t1 <= last->t0 + sh->w0) {
		uint32_t old = last->n;
		int r = bucket_merge(st, last, nb, sh->q);
		a->n[TIER_RECENT] = a->n[TIER_RECENT] - old + last->n;
		return r;
	}
	if (a->nrec == a->reccap) {
		uint32_t c = a->reccap ? a->reccap * 2 : 4;
		if (acc_resize(st, &a->rec, a->reccap * sizeof(*a->rec), c * sizeof(*a->rec)) < 0)
			return IOGP_ENOMEM;
		a->reccap = c;
	}
	struct abucket *b = &a->rec[a->nrec];
	memset(b, 0, sizeof(*b));
	if (bucket_merge(st, b, nb, sh->q) < 0)
		return IOGP_ENOMEM;
	a->nrec++;
	a->n[TIER_RECENT] += b->n;
	return recent_compact(st, a);
}

/* Fit the recent array to its buckets after some went (its bytes count). */
static void recent_fit(struct astore *st, struct astream *a)
{
	uint32_t c = a->nrec > 2 ? a->nrec : 2;
	if (a->reccap > 2 * c &&
	    acc_resize(st, &a->rec, a->reccap * sizeof(*a->rec), c * sizeof(*a->rec)) == 0)
		a->reccap = c;
}

/* ---- the run tier --------------------------------------------------------------- */

/* Twice as wide: slice i takes 2i and 2i + 1, keeping at most q samples;
 * shrink: half as many slices then (the same time), for the bytes. */
static int run_coarsen(struct astore *st, struct astream *a, uint32_t q, int shrink)
{
	int r = 0;
	uint32_t half = a->nrun / 2;
	for (uint32_t i = 0; i < half; i++) {
		struct abucket x = a->run[2 * i], y = a->run[2 * i + 1];
		memset(&a->run[2 * i], 0, 2 * sizeof(*a->run));
		int e = bucket_merge(st, &x, &y, q);
		r = e < 0 ? e : r;
		bucket_free(st, &y);
		a->run[i] = x;
	}
	memset(&a->run[half], 0, (a->nrun - half) * sizeof(*a->run));
	/* a trim may halve the slices again and again: past 2^62 ns (as
	 * run_add stops) every time falls in the first slice already, and
	 * doubling on would wrap the width to 0 (check_access_random) */
	if (a->run_w < (1ull << 62))
		a->run_w *= 2;
	if (shrink && half > 0 &&
	    acc_resize(st, &a->run, a->nrun * sizeof(*a->run), half * sizeof(*a->run)) == 0)
		a->nrun = (uint8_t)half;
	a->n[TIER_RUN] = list_count(a->run, a->nrun);
	return r;
}

static int run_add(struct astore *st, struct astream *a, const struct abucket *nb)
{
	const struct ashape *sh = &SHAPE[st->small];
	if (!a->run) {
		if (acc_resize(st, &a->run, 0, sh->nrun * sizeof(*a->run)) < 0)
			return IOGP_ENOMEM;
		memset(a->run, 0, sh->nrun * sizeof(*a->run));
		a->nrun = (uint8_t)sh->nrun;
		a->run_t0 = nb->t0;
		a->run_w = sh->w0 < 1000000000ull ? sh->w0 : 1000000000ull;
	}
	uint64_t mid = nb->t0 / 2 + nb->t1 / 2;
	uint64_t off = mid > a->run_t0 ? mid - a->run_t0 : 0;
	int r = 0;
	while (off / a->run_w >= a->nrun && r == 0 && a->run_w < (1ull << 62))
		r = run_coarsen(st, a, sh->q, 0);
	uint64_t i = off / a->run_w;
	if (i >= a->nrun)
		i = a->nrun - 1u;
	uint32_t old = a->run[i].n;
	int e = bucket_merge(st, &a->run[i], nb, sh->q);
	a->n[TIER_RUN] = a->n[TIER_RUN] - old + a->run[i].n;
	return e < 0 ? e : r;
}

/* ---- the store ------------------------------------------------------------ */

static uint32_t stream_hash(uint32_t id, uint64_t file)
{
	return model__hash_u64(file * 0x9e3779b97f4a7c15ull ^ id);
}

static uint32_t stream_find(const struct astore *st, uint32_t id, uint64_t file)
{
	if (!st)
		return NONE;
	if (!st->hcap) {   /* a few streams: a scan costs less than a table */
		for (uint32_t i = 0; i < st->nst; i++)
			if (st->st[i].id == id && st->st[i].file == file)
				return i;
		return NONE;
	}
	for (uint32_t k = stream_hash(id, file) & (st->hcap - 1);; k = (k + 1) & (st->hcap - 1)) {
		uint32_t v = st->hash[k];
		if (!v)
			return NONE;
		if (st->st[v - 1].id == id && st->st[v - 1].file == file)
			return v - 1;
	}
}

static void stream_free(struct astore *st, struct astream *a)
{
	for (uint32_t j = 0; j < a->nrec; j++)
		bucket_free(st, &a->rec[j]);
	acc_resize(st, &a->rec, a->reccap * sizeof(*a->rec), 0);
	for (uint32_t j = 0; a->run && j < a->nrun; j++)
		bucket_free(st, &a->run[j]);
	acc_resize(st, &a->run, a->run ? a->nrun * sizeof(*a->run) : 0, 0);
	memset(a, 0, sizeof(*a));
}

/* Index the streams again (after one left). */
static void stream_rehash(struct astore *st)
{
	if (!st->hcap)
		return;
	memset(st->hash, 0, st->hcap * sizeof(*st->hash));
	for (uint32_t i = 0; i < st->nst; i++) {
		uint32_t k = stream_hash(st->st[i].id, st->st[i].file) & (st->hcap - 1);
		while (st->hash[k])
			k = (k + 1) & (st->hcap - 1);
		st->hash[k] = i + 1;
	}
}

/* Make room for a new file: the one with the fewest requests goes
 * (counted); its samples leave the budget. */
static void stream_evict(struct astore *st)
{
	uint32_t v = 0;
	double least = 0;
	for (uint32_t i = 0; i < st->nst; i++) {
		double r = st->st[i].req;
		if (i == 0 || r < least) {
			least = r;
			v = i;
		}
	}
	st->n -= (uint64_t)st->st[v].n[0] + st->st[v].n[1];
	st->evicted++;
	stream_free(st, &st->st[v]);
	st->st[v] = st->st[--st->nst];
	stream_rehash(st);
}

static uint32_t stream_new(struct astore *st, uint32_t id, uint64_t file, uint32_t max)
{
	if (st->nst >= max && st->nst > 0)
		stream_evict(st);
	if (st->nst + 1 > ACC_SCAN && (st->nst + 1) * 2 > st->hcap) {
		uint32_t c = st->hcap ? st->hcap * 2 : 32;
		if (acc_resize(st, &st->hash, st->hcap * sizeof(*st->hash), c * sizeof(*st->hash)) < 0)
			return NONE;
		st->hcap = c;
		stream_rehash(st);
	}
	if (st->nst == st->stcap) {
		uint32_t c = st->stcap ? st->stcap * 2 : 1;
		if (acc_resize(st, &st->st, st->stcap * sizeof(*st->st), c * sizeof(*st->st)) < 0)
			return NONE;
		st->stcap = c;
	}
	uint32_t i = st->nst++;
	memset(&st->st[i], 0, sizeof(st->st[i]));
	st->st[i].id = id;
	st->st[i].file = file;
	if (st->hcap) {
		uint32_t k = stream_hash(id, file) & (st->hcap - 1);
		while (st->hash[k])
			k = (k + 1) & (st->hcap - 1);
		st->hash[k] = i + 1;
	}
	return i;
}

static uint64_t store_count(const struct astore *st)
{
	uint64_t n = 0;
	for (uint32_t i = 0; i < st->nst; i++)
		n += (uint64_t)st->st[i].n[0] + st->st[i].n[1];
	return n;
}

/* Samples a list of buckets keeps when each sample stands for ratio
 * requests or more (at least one a bucket that has any). */
static uint64_t fill_count(const struct abucket *b, uint32_t nb, double ratio)
{
	uint64_t c = 0;
	for (uint32_t j = 0; j < nb; j++) {
		if (!b[j].n)
			continue;
		double k = ceil(b[j].req / ratio);
		c += k < 1 ? 1 : k < b[j].n ? (uint64_t)k : b[j].n;
	}
	return c;
}

/* The fewest requests per sample a list of buckets keeps to hold at most
 * budget samples (water filling: densest buckets thinned first). */
static double fill_ratio(const struct abucket *b, uint32_t nb, uint64_t budget)
{
	uint32_t held = 0;
	for (uint32_t j = 0; j < nb; j++)
		held += b[j].n > 0;
	if (budget <= held)   /* one sample a bucket, as the search would find */
		return 0x1p1000;
	double lo = 0x1p-60, hi = 1;
	for (uint32_t j = 0; j < nb; j++)
		hi = b[j].req > hi ? b[j].req : hi;
	hi *= 2;
	for (int it = 0; it < 60 && fill_count(b, nb, hi) > budget; it++)
		hi *= 2;
	for (int it = 0; it < 48; it++) {   /* geometric bisection */
		double mid = sqrt(lo * hi);
		if (fill_count(b, nb, mid) > budget)
			lo = mid;
		else
			hi = mid;
	}
	return hi;
}

/* Thin a list of buckets to at most budget samples, densest buckets first,
 * so what is left stays as uniform as it can. The samples dropped. */
static uint32_t list_fill(struct astore *st, struct abucket *b, uint32_t nb, uint64_t budget)
{
	if (fill_count(b, nb, 0x1p-60) <= budget)
		return 0;
	double ratio = fill_ratio(b, nb, budget);
	uint32_t gone = 0;
	for (uint32_t j = 0; j < nb; j++) {
		if (!b[j].n)
			continue;
		double k = ceil(b[j].req / ratio);
		uint32_t keep = k < 1 ? 1 : k < b[j].n ? (uint32_t)k : b[j].n;
		if (keep < b[j].n) {
			uint32_t n = b[j].n;
			pick(b[j].s, b[j].s, n, keep);
			bucket_size(st, &b[j], keep);   /* shrinking: b[j].n is keep either way */
			b[j].n = (uint16_t)keep;
			bucket_mean(&b[j]);
			gone += n - keep;
		}
	}
	return gone;
}

/* Samples to trim to: 7/8 of keep (half of a small one: a budget shared
 * out among thousands of sources is a few DELTAs of samples, and trimming
 * after each would cost more than the samples), and what fits in 3/4 of
 * the bytes beside the structure. */
static uint64_t trim_target(const struct astore *st, uint32_t keep, uint64_t budget)
{
	uint64_t t = keep >= 1024 ? keep / 8 * 7 : keep / 2;
	if (budget == UINT64_MAX)
		return t;
	uint64_t to = budget / 4 * 3, held = st->n * sizeof(struct asample);
	uint64_t fixed = st->bytes > held ? st->bytes - held : 0;
	uint64_t room = to > fixed ? (to - fixed) / sizeof(struct asample) : 0;
	return room < t ? room : t;
}

/* The fair share of target samples among nl lists of cnt samples: the
 * level below which every list keeps all (max-min). */
static uint64_t fair_share(const uint32_t *cnt, uint32_t nl, uint64_t target, uint32_t *srt)
{
	memcpy(srt, cnt, nl * sizeof(*srt));
	for (uint32_t i = 1; i < nl; i++)   /* insertion sort: lists are few */
		for (uint32_t k = i; k > 0 && srt[k - 1] > srt[k]; k--) {
			uint32_t t = srt[k];
			srt[k] = srt[k - 1];
			srt[k - 1] = t;
		}
	uint64_t left = target, share = target;
	for (uint32_t i = 0; i < nl; i++) {
		share = left / (nl - i);
		if (srt[i] > share)
			break;
		left -= srt[i];
	}
	return share;
}

/* When every bucket is down to one sample: fewer buckets. Short of bytes,
 * run slices beyond the shape's go at once (a store that took the small
 * shape as sources came). Then each stream's oldest recent bucket goes
 * (the run tier has its time), else its run slices pair up (and, short of
 * bytes, halve). The samples dropped. */
static uint64_t trim_buckets(struct astore *st, int shrink, int *r)
{
	const struct ashape *sh = &SHAPE[st->small];
	uint64_t gone = 0;
	for (uint32_t i = 0; i < st->nst && *r == 0; i++) {
		struct astream *a = &st->st[i];
		uint32_t before = a->n[TIER_RUN];
		while (shrink && a->run && a->nrun > sh->nrun && *r == 0)
			*r = run_coarsen(st, a, sh->q, 1);
		if (a->n[TIER_RUN] < before) {
			gone += before - a->n[TIER_RUN];
		} else if (a->nrec > 1) {
			uint32_t g = a->rec[0].n;
			bucket_free(st, &a->rec[0]);
			memmove(&a->rec[0], &a->rec[1], (a->nrec - 1) * sizeof(*a->rec));
			a->nrec--;
			a->rec_cut = 1;
			a->n[TIER_RECENT] -= g;
			gone += g;
			recent_fit(st, a);
		} else if (a->n[TIER_RUN] > 1) {
			*r = run_coarsen(st, a, 1, shrink && a->nrun > 2);
			gone += before - a->n[TIER_RUN];
		}
	}
	return gone;
}

/* Over keep or the bytes: each tier of each file gets a fair share of
 * trim_target and is thinned to it densest buckets first; when every
 * bucket is down to one sample, fewer buckets (trim_buckets); then the
 * files with the fewest requests go. */
static int store_trim(struct astore *st, uint32_t keep, uint64_t budget)
{
	int r = 0;
	uint32_t nl = st->nst * 2;
	uint32_t buf[2 * 2 * ACC_SCAN];
	uint32_t *cnt = nl <= 2 * ACC_SCAN ? buf : malloc(2 * (size_t)nl * sizeof(*cnt));
	if (!cnt)
		return IOGP_ENOMEM;
	for (int pass = 0; pass < 32 && r == 0; pass++) {
		uint64_t target = trim_target(st, keep, budget);
		if (st->n <= target && st->bytes <= budget)
			break;
		for (uint32_t i = 0; i < nl; i++)
			cnt[i] = st->st[i / 2].n[i % 2];
		uint64_t share = fair_share(cnt, nl, target, cnt + nl);
		uint64_t gone = 0;
		for (uint32_t i = 0; i < nl; i++) {
			struct astream *a = &st->st[i / 2];
			int t = (int)(i % 2);
			if (cnt[i] <= share)
				continue;
			uint32_t g = t == TIER_RUN ? (a->run ? list_fill(st, a->run, a->nrun, share) : 0) :
			             list_fill(st, a->rec, a->nrec, share);
			a->n[t] -= g;
			gone += g;
		}
		if (!gone)
			gone = trim_buckets(st, budget != UINT64_MAX, &r);
		if (!gone) {   /* one sample a tier everywhere */
			while ((st->n > target || st->bytes > budget) && st->nst > 1) {
				uint64_t before = st->n;
				stream_evict(st);
				st->thinned += before - st->n;
			}
			break;
		}
		st->thinned += gone;
		st->n -= gone;
	}
	if (cnt != buf)
		free(cnt);
	return r;
}

struct pending {
	uint32_t stream, idx;
};

static int cmp_pending(const void *a, const void *b)
{
	const struct pending *x = a, *y = b;
	if (x->stream != y->stream)
		return x->stream < y->stream ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* One stream's n samples of a message as a bucket, its samples in buf
 * (room for n; at most q kept). */
static void bucket_of(struct abucket *b, struct asample *buf, const iogp_msg *msg,
                      const struct pending *p, uint32_t n, double req, int exact, bool snapshot,
                      uint32_t q)
{
	memset(b, 0, sizeof(*b));
	b->s = buf;
	uint64_t lo = UINT64_MAX, hi = 0;
	for (uint32_t k = 0; k < n; k++) {
		const iogp_access *x = &msg->access[p[k].idx];
		b->s[k] = (struct asample){ x->t_ns, x->offset, x->size, x->op };
		lo = x->t_ns < lo ? x->t_ns : lo;
		hi = x->t_ns > hi ? x->t_ns : hi;
	}
	/* they come in time order; keep them so if they did not */
	for (uint32_t k = 1; k < n; k++)
		for (uint32_t z = k; z > 0 && b->s[z - 1].t > b->s[z].t; z--) {
			struct asample t = b->s[z];
			b->s[z] = b->s[z - 1];
			b->s[z - 1] = t;
		}
	b->n = (uint16_t)(n < q ? n : q);
	if (b->n < n)
		pick(b->s, b->s, n, b->n);
	bucket_mean(b);
	b->req = req;
	b->exact = (uint8_t)exact;
	b->t0 = lo;
	b->t1 = hi;
	if (!snapshot && msg->t1_ns >= msg->t0_ns && msg->t0_ns > 0) {
		b->t0 = msg->t0_ns < lo ? msg->t0_ns : lo;
		b->t1 = msg->t1_ns > hi ? msg->t1_ns : hi;
	}
}

static uint64_t stream_newest(const struct astream *a)
{
	const struct abucket *b = a->nrec ? &a->rec[a->nrec - 1] : NULL;
	return b && b->n ? b->s[b->n - 1].t : 0;
}

static struct astore *store_new(uint64_t budget)
{
	struct astore *st = calloc(1, sizeof(*st));
	if (st) {
		st->small = budget < ACC_SMALL;
		st->bytes = sizeof(*st) + ACC_OVH;
	}
	return st;
}

/* The message's samples by stream into p (*np of them); a SNAPSHOT's
 * only where newer than what the stream has. */
static int store_pending(struct astore *st, const iogp_msg *msg, bool snapshot, uint32_t keep,
                         uint64_t budget, struct pending *p, uint32_t *np)
{
	uint64_t max = st->small ? budget / ACC_FILE_BYTES : keep / 16;
	*np = 0;
	for (uint32_t i = 0; i < msg->naccess; i++) {
		const iogp_access *x = &msg->access[i];
		uint32_t k = stream_find(st, x->id, x->file);
		if (k == NONE && st->small && st->nst >= (max ? max : 1)) {
			st->thinned++;   /* no room for another file's buckets */
			continue;
		}
		if (k == NONE && (k = stream_new(st, x->id, x->file, keep / 16)) == NONE)
			return IOGP_ENOMEM;
		if (snapshot && x->t_ns <= stream_newest(&st->st[k]))
			continue;
		p[(*np)++] = (struct pending){ k, i };
	}
	if (*np > 1)
		qsort(p, *np, sizeof(*p), cmp_pending);
	return 0;
}

static int store_add(iogp_model *m, struct source *s, const iogp_msg *msg, bool snapshot)
{
	uint32_t keep = keep_of(m);
	uint64_t budget = store_budget(m);
	if (!s->acc && !(s->acc = store_new(budget)))
		return IOGP_ENOMEM;
	struct astore *st = s->acc;
	st->small = budget < ACC_SMALL;   /* sources came or went: the shape follows */
	/* a DELTA's few samples sort on the stack */
	struct pending pbuf[ACC_STACK], *p = pbuf;
	struct asample sbuf[ACC_STACK], *sb = sbuf;
	if (msg->naccess > ACC_STACK) {
		p = malloc(msg->naccess * sizeof(*p));
		sb = malloc(msg->naccess * sizeof(*sb));
	}
	uint32_t np = 0;
	int r = !p || !sb ? IOGP_ENOMEM : store_pending(st, msg, snapshot, keep, budget, p, &np);
	/* each sample stands for access_seen / naccess requests: the agent's
	 * reservoir of the interval is over all its access metrics and files */
	double w = !snapshot && msg->access_seen >= msg->naccess && msg->naccess ?
	           (double)msg->access_seen / msg->naccess : 1;
	int one = np > 0 && p[0].stream == p[np - 1].stream && np == msg->naccess && !snapshot;
	for (uint32_t i = 0; i < np && r == 0;) {
		uint32_t j = i;
		while (j < np && p[j].stream == p[i].stream)
			j++;
		struct astream *a = &st->st[p[i].stream];
		struct abucket b;
		bucket_of(&b, sb, msg, p + i, j - i, one ? (double)msg->access_seen : w * (j - i), one,
		          snapshot, SHAPE[st->small].q);
		a->req += b.req;
		r = recent_add(st, a, &b);
		int e = run_add(st, a, &b);
		r = r < 0 ? r : e;
		i = j;
	}
	if (p != pbuf) {
		free(p);
		free(sb);
	}
	st->n = store_count(st);
	if (r == 0 && (st->n > keep || st->bytes > budget))
		r = store_trim(st, keep, budget);
	return r;
}

int model__access_apply(iogp_model *m, struct source *s, const iogp_msg *msg, bool snapshot)
{
	int r = 0;
	if (msg->naccess == 0)
		return 0;
	const iogp_access *newest = ring_newest(m, s);
	uint64_t after = newest != NULL ? newest->t_ns : 0;

	uint32_t lim = ring_limit(m);

	if (lim == 0) {   /* none kept; one there from fewer sources goes */
		free(s->ring);
		s->ring = NULL;
		s->ring_head = s->ring_n = s->ring_cap = 0;
	}
	for (uint32_t i = 0; i < msg->naccess && r == 0 && lim > 0; i++) {
		/* a SNAPSHOT repeats the ring: keep only what is newer */
		if (snapshot && newest != NULL && msg->access[i].t_ns <= after)
			continue;
		r = ring_push(s, &msg->access[i], lim);
	}
	if (r != 0 || !m->opts.live)
		return r;
	/* A small share (a budget spread over thousands of sources) takes a
	 * few of the DELTA's samples, evenly spaced, each standing for more
	 * requests: filling it with all of them only to thin them again
	 * cost more than the samples did. */
	uint32_t keep = keep_of(m), adm = keep / 64;
	if (keep < 1024 && !snapshot && msg->naccess > adm) {
		iogp_access pick[16];
		iogp_msg few = *msg;

		adm = adm < 16 ? adm : 16;
		for (uint32_t i = 0; i < adm; i++)
			pick[i] = msg->access[(uint32_t)(((uint64_t)i * 2 + 1) * msg->naccess / (2 * adm))];
		few.access = pick;
		few.naccess = adm;
		few.access_seen = msg->access_seen > msg->naccess ? msg->access_seen : msg->naccess;
		return store_add(m, s, &few, false);
	}
	return store_add(m, s, msg, snapshot);
}

void model__access_free(struct source *s)
{
	free(s->ring);
	s->ring = NULL;
	struct astore *st = s->acc;
	if (!st)
		return;
	for (uint32_t i = 0; i < st->nst; i++)
		stream_free(st, &st->st[i]);
	free(st->st);
	free(st->hash);
	free(st);
	s->acc = NULL;
}

/* ---- queries -------------------------------------------------------------- */

/* The source indices of a selection into out (room for every source);
 * IOGP_ENOTFOUND for an unknown node or source. */
static int sel_sources(const iogp_model *m, const iogp_sel *sel, uint32_t *out, uint32_t *n)
{
	*n = 0;
	if (!sel || sel->kind == IOGP_SEL_ALL) {
		for (uint32_t i = 0; i < m->nsrc; i++)
			out[(*n)++] = i;
		return 0;
	}
	if (sel->kind == IOGP_SEL_NODE) {
		uint32_t ni = model__node_find(m, sel->node ? sel->node : "");
		if (ni == NONE)
			return IOGP_ENOTFOUND;
		for (uint32_t i = 0; i < m->nodes[ni].n; i++)
			out[(*n)++] = m->nodes[ni].src[i];
		return 0;
	}
	if (sel->kind == IOGP_SEL_SOURCE) {
		uint32_t si = model__src_find(m, sel->source);
		if (si == NONE)
			return IOGP_ENOTFOUND;
		out[(*n)++] = si;
		return 0;
	}
	return IOGP_EINVAL;
}

static const char *stream_path(const struct source *s, uint64_t file)
{
	uint32_t fi = model__file_find(s, file);
	return fi == NONE ? "?" : s->files[fi].path;
}

/* A source's mono time for a wall time (the viewers' mapping, inverted). */
static uint64_t mono_of(const struct source *s, uint64_t wall, uint64_t dflt)
{
	if (!wall)
		return dflt;
	if (wall >= s->last_wall)
		return s->last_mono + (wall - s->last_wall);
	uint64_t back = s->last_wall - wall;
	return s->last_mono > back ? s->last_mono - back : 0;
}

static uint64_t wall_of(const struct source *s, uint64_t t)
{
	if (t >= s->last_mono)
		return s->last_wall + (t - s->last_mono);
	uint64_t back = s->last_mono - t;
	return s->last_wall > back ? s->last_wall - back : 0;
}

/* One bucket's part of the window. */
struct part {
	const struct abucket *b;
	uint32_t src, lo, hi;     /* its samples [lo, hi) are in the window */
	uint64_t file;
	double req;               /* requests of the window it stands for */
	int whole;                /* the bucket lies inside the window */
};

struct walk {
	struct part *p;
	size_t n, cap;
};

/* A stream's bucket list of one tier, *nb of them. */
static const struct abucket *tier_list(const struct astream *a, int tier, uint32_t *nb)
{
	*nb = tier == TIER_RUN ? (a->run ? a->nrun : 0) : a->nrec;
	return tier == TIER_RUN ? a->run : a->rec;
}

/* Bucket b's part of the window [from, to]: its samples there, and the
 * requests of the window it stands for; false when it has none there. A
 * bucket inside the window is whole, its samples not read. */
static bool part_of(const struct abucket *b, uint32_t src, uint64_t file, uint64_t from, uint64_t to,
                    struct part *p)
{
	if (bucket_empty(b) || b->t1 < from || b->t0 > to)
		return false;
	*p = (struct part){ b, src, 0, b->n, file, b->req, 1 };
	if (b->t0 >= from && b->t1 <= to)
		return true;
	while (p->lo < b->n && b->s[p->lo].t < from)
		p->lo++;
	while (p->hi > p->lo && b->s[p->hi - 1].t > to)
		p->hi--;
	uint64_t a0 = b->t0 > from ? b->t0 : from, a1 = b->t1 < to ? b->t1 : to;
	double span = (double)(b->t1 - b->t0);
	p->req = span > 0 ? b->req * (double)(a1 - a0) / span : b->req;
	p->whole = 0;
	return true;
}

static int walk_add(struct walk *w, const struct part *p)
{
	if (w->n == w->cap) {
		size_t c = w->cap ? w->cap * 2 : 64;
		struct part *np = realloc(w->p, c * sizeof(*np));
		if (!np)
			return IOGP_ENOMEM;
		w->p = np;
		w->cap = c;
	}
	w->p[w->n++] = *p;
	return 0;
}

/* Ahead of the walk over sources: what source k + PF will read, a step
 * at a time as each step's pointer arrives (a pass over tens of thousands
 * of sources otherwise waits on each of their blocks in turn). */
#define SOURCE_PF 8u
static void source_prefetch(const iogp_model *m, const uint32_t *srcs, uint32_t ns, uint32_t k)
{
	if (k + SOURCE_PF < ns) {
		const struct source *s = &m->src[srcs[k + SOURCE_PF]];
		if (s->acc)
			__builtin_prefetch(s->acc);
		if (s->by_gm.v)
			__builtin_prefetch(s->by_gm.v);
		if (s->file_map.t)
			__builtin_prefetch(s->file_map.t);
	}
	if (k + SOURCE_PF / 2 < ns) {
		const struct source *s = &m->src[srcs[k + SOURCE_PF / 2]];
		if (s->acc && s->acc->st)
			__builtin_prefetch(s->acc->st);
		if (s->files)
			__builtin_prefetch(s->files);
		if (s->slots)
			__builtin_prefetch(s->slots);
	}
	if (k + SOURCE_PF / 4 < ns) {
		const struct source *s = &m->src[srcs[k + SOURCE_PF / 4]];
		const struct astore *st = s->acc;
		if (st && st->nst) {
			if (st->st[0].rec)
				__builtin_prefetch(st->st[0].rec);
			if (st->st[0].run)
				__builtin_prefetch(st->st[0].run);
		}
		if (s->nfiles)
			__builtin_prefetch(s->files[0].path);
	}
}

/* IOGP_ESTOPPED when the query's stop hook, asked before every
 * IOGP_STOP_EVERY sources (k counts them), says so; else 0. */
static int stop_asked(const iogp_access_query *q, uint32_t k)
{
	return q->stop && k % IOGP_STOP_EVERY == 0 && q->stop(q->stop_arg) ? IOGP_ESTOPPED : 0;
}

/* The query's sources (*srcs, malloc'd: free it, also after an error)
 * and its access metric (*gm; NONE: every one); 0, or why not. */
static int query_sources(const iogp_model *m, const iogp_access_query *q, uint32_t **srcs, uint32_t *ns,
                         uint32_t *gm)
{
	*ns = 0;
	*gm = q->metric ? model__gm_find(m, q->metric) : NONE;
	if (!(*srcs = malloc((m->nsrc ? m->nsrc : 1) * sizeof(**srcs))))
		return IOGP_ENOMEM;
	int r = sel_sources(m, q->sel, *srcs, ns);
	if (r == 0 && q->metric && (*gm == NONE || m->gm[*gm].kind != IOGP_ACCESS))
		r = *gm == NONE ? IOGP_ENOTFOUND : IOGP_EINVAL;
	return r;
}

/* Source s's samples for the query: its store, the metric's id there
 * (UINT32_MAX: every metric) and the window in its clock; NULL when it
 * has none of the metric. */
static const struct astore *source_window(const iogp_access_query *q, uint32_t gm, const struct source *s,
                                          uint32_t *id, uint64_t *from, uint64_t *to)
{
	*id = UINT32_MAX;
	if (!s->acc)
		return NULL;
	if (q->metric) {
		uint32_t sl = model__slot_by_gm(s, gm);
		if (sl == NONE)
			return NULL;
		*id = s->slots[sl].id;
	}
	*from = mono_of(s, q->from_ns, 0);
	*to = mono_of(s, q->to_ns, UINT64_MAX);
	return s->acc;
}

/* Every bucket part of the query's streams in its window, each tier's
 * into w[tier]; *covered = 0 when the recent tier lacks the start of the
 * window for one. */
static int walk_query(const iogp_model *m, const iogp_access_query *q, struct walk w[2], int *covered)
{
	uint32_t *srcs, ns, gm;
	int r = query_sources(m, q, &srcs, &ns, &gm);
	*covered = 1;
	for (uint32_t k = 0; k < ns && r == 0; k++) {
		if ((r = stop_asked(q, k)) < 0)
			break;
		source_prefetch(m, srcs, ns, k);
		const struct source *s = &m->src[srcs[k]];
		uint32_t id;
		uint64_t from, to;
		const struct astore *st = source_window(q, gm, s, &id, &from, &to);
		if (!st)
			continue;
		for (uint32_t i = 0; i < st->nst && r == 0; i++) {
			const struct astream *a = &st->st[i];
			if ((q->metric && a->id != id) || (q->path && strcmp(stream_path(s, a->file), q->path)))
				continue;
			for (int tier = 0; tier < 2 && r == 0; tier++) {
				uint32_t nb;
				const struct abucket *bs = tier_list(a, tier, &nb);
				if (tier == TIER_RECENT && a->rec_cut && (!nb || bs[0].t0 > from))
					*covered = 0;
				struct part p;
				for (uint32_t j = 0; j < nb && r == 0; j++)
					if (part_of(&bs[j], srcs[k], a->file, from, to, &p))
						r = walk_add(&w[tier], &p);
			}
		}
	}
	free(srcs);
	return r;
}

/* Requests per sample once uniform: the sparsest bucket's (of those
 * holding 1% of the requests or more); *total the requests. */
static double walk_ratio(const struct walk *w, double *total)
{
	double t = 0, ratio = 0;
	for (size_t i = 0; i < w->n; i++)
		t += w->p[i].req;
	for (int pass = 0; pass < 2 && ratio == 0; pass++)
		for (size_t i = 0; i < w->n; i++) {
			const struct part *p = &w->p[i];
			if (p->hi == p->lo || (pass == 0 && p->req < t / 100))
				continue;
			double rb = p->req / (p->hi - p->lo);
			ratio = rb > ratio ? rb : ratio;
		}
	*total = t;
	return ratio;
}

/* The tier that gives the window more samples (the recent one only where
 * it holds all of the window). */
static int walk_best(const iogp_model *m, const iogp_access_query *q, struct walk *w)
{
	struct walk t[2] = { { 0 }, { 0 } }, run, rec;
	int cov, r = walk_query(m, q, t, &cov);
	run = t[TIER_RUN];
	rec = t[TIER_RECENT];
	if (r < 0) {
		free(run.p);
		free(rec.p);
		return r;
	}
	double tr, tc, rr = walk_ratio(&run, &tr), rc = walk_ratio(&rec, &tc);
	int recent = cov && rc > 0 && (rr <= 0 || tc / rc > tr / rr);
	*w = recent ? rec : run;
	free(recent ? run.p : rec.p);
	return 0;
}

static int cmp_sample(const void *a, const void *b)
{
	const iogp_access_sample *x = a, *y = b;
	if (x->wall_ns != y->wall_ns)
		return x->wall_ns < y->wall_ns ? -1 : 1;
	if (x->source != y->source)
		return x->source < y->source ? -1 : 1;
	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

int iogp_model_access_query(const iogp_model *m, const iogp_access_query *q, iogp_access_set *out)
{
	if (!out)
		return IOGP_EINVAL;
	memset(out, 0, sizeof(*out));
	if (!m || !q)
		return IOGP_EINVAL;
	if (!m->opts.live)
		return IOGP_EINVAL;
	struct walk w = { 0 };
	int r = walk_best(m, q, &w);
	if (r < 0)
		return r;
	double total, held = 0;
	double ratio = walk_ratio(&w, &total);
	int exact = 1;
	uint64_t lo = UINT64_MAX, hi = 0;
	for (size_t i = 0; i < w.n; i++) {
		const struct part *p = &w.p[i];
		const struct source *s = &m->src[p->src];
		held += p->hi - p->lo;
		exact = exact && p->whole && p->b->exact;
		uint64_t a = wall_of(s, p->b->t0), b = wall_of(s, p->b->t1);
		if (q->from_ns && a < q->from_ns)
			a = q->from_ns;
		if (q->to_ns && b > q->to_ns)
			b = q->to_ns;
		lo = a < lo ? a : lo;
		hi = b > hi ? b : hi;
	}
	size_t max = q->max ? q->max : ACC_MAX_OUT;
	size_t want = 0;
	/* sparser until within max: a part's share rounds, and parts with
	 * fewer samples than their share give what they have, so one step
	 * can land above max (check_access_random); at last, the first max */
	for (int pass = 0; pass < 32; pass++) {
		double acc = 0;
		want = 0;
		for (size_t i = 0; i < w.n; i++) {
			const struct part *p = &w.p[i];
			uint32_t have = p->hi - p->lo;
			if (!have || ratio <= 0)
				continue;
			acc += p->req / ratio;
			size_t k = (size_t)(acc + 0.5);
			acc -= (double)k;
			want += k < have ? k : have;
		}
		if (want <= max || ratio <= 0)
			break;
		ratio *= (double)want / (double)max * 1.0001;
	}
	want = want < max ? want : max;
	if (want && !(out->s = malloc(want * sizeof(*out->s)))) {
		free(w.p);
		return IOGP_ENOMEM;
	}
	double acc = 0;
	size_t n = 0;
	for (size_t i = 0; i < w.n && ratio > 0; i++) {
		const struct part *p = &w.p[i];
		const struct source *s = &m->src[p->src];
		uint32_t have = p->hi - p->lo;
		if (!have)
			continue;
		acc += p->req / ratio;
		size_t k = (size_t)(acc + 0.5);
		acc -= (double)k;
		k = k < have ? k : have;
		for (size_t j = 0; j < k && n < want; j++) {
			const struct asample *x = &p->b->s[p->lo + (uint32_t)(((double)j + 0.5) * have / k)];
			out->s[n++] = (iogp_access_sample){ wall_of(s, x->t), x->off, x->size, p->file,
			                                    x->op, p->src };
		}
	}
	free(w.p);
	if (n > 1)
		qsort(out->s, n, sizeof(*out->s), cmp_sample);
	out->n = n;
	out->requests = (uint64_t)llround(total);
	out->exact = exact && w.n > 0;
	out->held = (uint64_t)held;
	out->from_ns = lo == UINT64_MAX ? 0 : lo;
	out->to_ns = hi;
	return 0;
}

void iogp_access_set_free(iogp_access_set *s)
{
	if (!s)
		return;
	free(s->s);
	memset(s, 0, sizeof(*s));
}

/* ---- files with samples ------------------------------------------------------ */

struct fent {
	iogp_access_file f;
	uint32_t last_src;
	double req[2], bytes[2];     /* per tier */
	uint64_t samples[2];
};

struct fagg {
	struct fent *f;
	size_t n, cap;
	size_t *h;              /* index + 1 */
	size_t hcap;
};

static uint64_t hash_path(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

static struct fent *fagg_get(struct fagg *g, const char *path)
{
	if ((g->n + 1) * 2 > g->hcap) {
		size_t c = g->hcap ? g->hcap * 2 : 32;
		size_t *h = calloc(c, sizeof(*h));
		struct fent *f = h ? realloc(g->f, c / 2 * sizeof(*f)) : NULL;
		if (!f) {
			free(h);
			return NULL;
		}
		g->f = f;
		for (size_t i = 0; i < g->n; i++) {
			size_t k = hash_path(g->f[i].f.path) & (c - 1);
			while (h[k])
				k = (k + 1) & (c - 1);
			h[k] = i + 1;
		}
		free(g->h);
		g->h = h;
		g->hcap = c;
		g->cap = c / 2;
	}
	size_t k = hash_path(path) & (g->hcap - 1);
	while (g->h[k]) {
		struct fent *f = &g->f[g->h[k] - 1];
		if (!strcmp(f->f.path, path))
			return f;
		k = (k + 1) & (g->hcap - 1);
	}
	g->h[k] = g->n + 1;
	struct fent *f = &g->f[g->n++];
	memset(f, 0, sizeof(*f));
	f->f.path = path;
	f->f.first_source = UINT32_MAX;
	f->last_src = UINT32_MAX;
	return f;
}

static int cmp_afile(const void *a, const void *b)
{
	const iogp_access_file *x = a, *y = b;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return strcmp(x->path, y->path);
}

/* One stream's window in one tier: the requests, bytes (a part's mean
 * sample size times its requests) and samples of its buckets there. */
struct tsum {
	double req, bytes;
	uint64_t samples;
	uint32_t parts;
};

static void tier_sum(const struct astream *a, int tier, uint64_t from, uint64_t to, struct tsum *t)
{
	uint32_t nb;
	const struct abucket *bs = tier_list(a, tier, &nb);
	for (uint32_t j = 0; j < nb; j++) {
		const struct abucket *b = &bs[j];
		struct part p;
		if (!part_of(b, 0, 0, from, to, &p))
			continue;
		uint32_t have = p.hi - p.lo;
		t->parts++;
		t->req += p.req;
		t->samples += have;
		if (have && p.whole) {
			t->bytes += (double)b->mean * p.req;
		} else if (have) {
			double bytes = 0;
			for (uint32_t k = p.lo; k < p.hi; k++)
				bytes += (double)b->s[k].size;
			t->bytes += bytes / have * p.req;
		}
	}
}

int iogp_model_access_files(const iogp_model *m, const iogp_access_query *q, iogp_access_file **out,
                            size_t *nout)
{
	if (!out || !nout)
		return IOGP_EINVAL;
	*out = NULL;
	*nout = 0;
	if (!m || !q || !m->opts.live)
		return IOGP_EINVAL;
	uint32_t *srcs, ns, gm;
	int r = query_sources(m, q, &srcs, &ns, &gm);
	struct fagg g = { 0 };
	/* per stream, each tier's estimate; the file gets the larger of its
	 * tiers' sums; its sources are those with run buckets in the window */
	for (uint32_t k = 0; k < ns && r == 0; k++) {
		if ((r = stop_asked(q, k)) < 0)
			break;
		source_prefetch(m, srcs, ns, k);
		const struct source *s = &m->src[srcs[k]];
		uint32_t id;
		uint64_t from, to;
		const struct astore *st = source_window(q, gm, s, &id, &from, &to);
		if (!st)
			continue;
		for (uint32_t i = 0; i < st->nst; i++) {
			const struct astream *a = &st->st[i];
			if (q->metric && a->id != id)
				continue;
			struct tsum t[2];
			memset(t, 0, sizeof(t));
			for (int z = 0; z < 2; z++)
				tier_sum(a, z, from, to, &t[z]);
			if (!t[0].parts && !t[1].parts)
				continue;
			struct fent *e = fagg_get(&g, stream_path(s, a->file));
			if (!e) {
				r = IOGP_ENOMEM;
				break;
			}
			if (e->f.first_source == UINT32_MAX)
				e->f.first_source = srcs[k];
			if (t[TIER_RUN].parts && e->last_src != srcs[k]) {
				e->f.sources++;
				e->last_src = srcs[k];
			}
			for (int z = 0; z < 2; z++) {
				e->req[z] += t[z].req;
				e->bytes[z] += t[z].bytes;
				e->samples[z] += t[z].samples;
			}
		}
	}
	free(srcs);
	for (size_t i = 0; i < g.n; i++) {
		struct fent *e = &g.f[i];
		e->f.requests = (uint64_t)llround(e->req[0] > e->req[1] ? e->req[0] : e->req[1]);
		e->f.bytes = (uint64_t)llround(e->bytes[0] > e->bytes[1] ? e->bytes[0] : e->bytes[1]);
		e->f.samples = e->samples[0] > e->samples[1] ? e->samples[0] : e->samples[1];
		if (!e->f.sources)
			e->f.sources = 1;
	}
	free(g.h);
	iogp_access_file *res = NULL;
	if (r == 0 && g.n && !(res = malloc(g.n * sizeof(*res))))
		r = IOGP_ENOMEM;
	for (size_t i = 0; r == 0 && i < g.n; i++)
		res[i] = g.f[i].f;
	free(g.f);
	if (r < 0)
		return r;
	if (g.n > 1)
		qsort(res, g.n, sizeof(*res), cmp_afile);
	*out = res;
	*nout = g.n;
	return 0;
}

void iogp_model_access_mem(const iogp_model *m, iogp_access_mem *out)
{
	memset(out, 0, sizeof(*out));
	for (uint32_t i = 0; m && i < m->nsrc; i++) {
		const struct astore *st = m->src[i].acc;
		if (m->src[i].ring)
			out->ring_bytes += m->src[i].ring_cap * sizeof(iogp_access) + ACC_OVH;
		if (!st)
			continue;
		out->samples += st->n;
		out->streams += st->nst;
		out->evicted += st->evicted;
		out->thinned += st->thinned;
		out->bytes += st->bytes;
		if (st->n > out->max_source)
			out->max_source = st->n;
	}
}
