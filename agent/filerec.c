/* filerec.c - per-file records (agent.h): a thread's record of a file, and
 * the publisher's side: sum the threads' records, send the files touched
 * as increments (DELTA, at most iog__frec_budget a DELTA, the rest waiting
 * and coalescing; agent.h) and every file's totals (SNAPSHOT). */
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "filerec.h"

iog_frec *iog__frec_slow(iog_shard *s, uint32_t ix, int layer)
{
	if (ix > iog__frec_limit)
		ix = iog__frec_limit;
	uint32_t c = ix / IOG_FREC_CHUNK;
	if (c >= IOG_FREC_CHUNKS || !__atomic_load_n(&iog__enabled, __ATOMIC_RELAXED))
		return NULL;
	iog_frec_chunk *ch = s->fr[c];
	if (ch == NULL) {
		if ((ch = calloc(1, sizeof(*ch))) == NULL)
			return NULL;
		__atomic_store_n(&s->fr[c], ch, __ATOMIC_RELEASE);
	}
	return &ch->r[ix % IOG_FREC_CHUNK][layer];
}

/* ---- the publisher's side ------------------------------------------------------- */

/* Per record, the publisher's: the totals as last summed (cur) and as last
 * sent (sent, what receivers have); their difference waits to be sent
 * since the interval since (0: nothing waits), and first holds the
 * earliest first call of the waiting intervals, per direction. Allocated
 * per chunk with the first data. */
struct frst {
	iogp_filerec cur, sent;
	uint64_t first[2];
	uint64_t since;      /* interval + 1 */
};
static struct frst *st[IOG_FREC_CHUNKS];
static uint32_t nwait;   /* records that wait */
static iogp_filerec *out;
static uint32_t out_cap;
uint32_t iog__frec_budget = IOG_FREC_BUDGET;

/* A waiting record: its place, and how much it should go next. */
struct cand {
	uint64_t score;
	uint32_t c, k;   /* chunk, place in the chunk (file * layers + layer) */
};
static struct cand *cands;
static uint32_t cands_cap;

static int grow(void *arr, uint32_t *cap, uint32_t n, size_t size)
{
	if (n <= *cap)
		return 0;
	uint32_t c = *cap ? *cap * 2 : 64;
	while (c < n)
		c *= 2;
	void *a = realloc(*(void **)arr, (size_t)c * size);
	if (a == NULL)
		return -1;
	*(void **)arr = a;
	*cap = c;
	return 0;
}

static int by_file(const void *a, const void *b)
{
	const iogp_filerec *x = a, *y = b;

	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	return (x->layer > y->layer) - (x->layer < y->layer);
}

static int by_score(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->score != y->score)
		return x->score < y->score ? 1 : -1;
	return x->c != y->c ? (x->c > y->c) - (x->c < y->c) : (x->k > y->k) - (x->k < y->k);
}

/* Sum every thread's record (ix, layer) into t; *ivfirst: the earliest
 * first call of the interval iv (or the one before) per direction. */
static int sum_threads(uint32_t c, uint32_t k, int layer, uint64_t iv, iogp_filerec *t,
                       uint64_t ivfirst[2])
{
	int any = 0;

	memset(t, 0, sizeof(*t));
	ivfirst[0] = ivfirst[1] = 0;
	for (iog_shard *s = iog__shards(); s != NULL; s = s->next) {
		iog_frec_chunk *ch = __atomic_load_n(&s->fr[c], __ATOMIC_ACQUIRE);
		if (ch == NULL)
			continue;
		const iog_frec *r = &ch->r[k][layer];
		for (int o = 0; o < 2; o++) {
			const iog_frec_op *x = &r->op[o];
			iogp_filerec_op *d = &t->op[o];
			uint64_t ops = __atomic_load_n(&x->ops, __ATOMIC_RELAXED);
			if (ops == 0)
				continue;
			any = 1;
			d->ops += ops;
			d->bytes += __atomic_load_n(&x->bytes, __ATOMIC_RELAXED);
			d->time_ns += __atomic_load_n(&x->time_ns, __ATOMIC_RELAXED);
			d->consec += __atomic_load_n(&x->spat[0], __ATOMIC_RELAXED);
			d->seq += __atomic_load_n(&x->spat[1], __ATOMIC_RELAXED);
			d->random += __atomic_load_n(&x->spat[2], __ATOMIC_RELAXED);
			uint64_t v = __atomic_load_n(&x->max_req, __ATOMIC_RELAXED);
			if (v > d->max_req)
				d->max_req = v;
			v = __atomic_load_n(&x->first_ns, __ATOMIC_RELAXED);
			if (v && (!d->first_ns || v < d->first_ns))
				d->first_ns = v;
			v = __atomic_load_n(&x->last_ns, __ATOMIC_RELAXED);
			if (v > d->last_ns)
				d->last_ns = v;
			if (__atomic_load_n(&x->iv, __ATOMIC_RELAXED) + 1 >= iv) {
				v = __atomic_load_n(&x->iv_first, __ATOMIC_RELAXED);
				if (v && (!ivfirst[o] || v < ivfirst[o]))
					ivfirst[o] = v;
			}
		}
		uint64_t mo = __atomic_load_n(&r->meta_ops, __ATOMIC_RELAXED);
		if (mo) {
			any = 1;
			t->meta_ops += mo;
			t->meta_ns += __atomic_load_n(&r->meta_ns, __ATOMIC_RELAXED);
		}
	}
	return any;
}

/* The record's name: the file's id, a directory's id with the files it
 * folded, or the other-files record. */
static int name_rec(uint32_t ix, int layer, iogp_filerec *r)
{
	r->layer = (uint32_t)layer;
	if (ix >= iog__frec_limit) {
		r->file = 0;
		r->flags = IOGP_FR_OTHER;
		r->overflow = iog__file_overflow();
		return 1;
	}
	r->file = iog__file_at(ix);
	r->overflow = iog__file_folded(ix);
	r->flags = r->overflow ? IOGP_FR_DIRAGG : 0;
	return r->file != 0;
}

/* Take the threads' sums of a record into cur; when it changed, it waits
 * (since, first) to be sent. */
static void frst_update(struct frst *f, uint32_t c, uint32_t k, uint64_t iv)
{
	iogp_filerec t;
	uint64_t ivfirst[2];

	if (!sum_threads(c, k / IOG_FREC_LAYERS, (int)(k % IOG_FREC_LAYERS), iv, &t, ivfirst))
		return;
	int changed = 0;
	for (int o = 0; o < 2; o++) {
		if (t.op[o].ops == f->cur.op[o].ops)
			continue;
		changed = 1;
		uint64_t v = ivfirst[o] ? ivfirst[o] : t.op[o].first_ns;
		if (!f->first[o] || v < f->first[o])
			f->first[o] = v;
	}
	/* a directory's record changes too when it folds a file */
	t.overflow = iog__file_folded(k / IOG_FREC_LAYERS + c * IOG_FREC_CHUNK);
	changed |= t.meta_ops != f->cur.meta_ops || t.overflow != f->cur.overflow;
	if (changed) {
		f->cur = t;
		if (!f->since) {
			f->since = iv + 1;   /* 0: nothing waits */
			nwait++;
		}
	}
}

/* What receivers lack of a record: cur - sent, as an increment (times: the
 * first call of the waiting intervals, the last call). */
static iogp_filerec frst_increment(const struct frst *f)
{
	iogp_filerec d;

	memset(&d, 0, sizeof(d));
	for (int o = 0; o < 2; o++) {
		const iogp_filerec_op *a = &f->cur.op[o], *b = &f->sent.op[o];
		if (a->ops == b->ops)
			continue;
		d.op[o] = (iogp_filerec_op){ a->ops - b->ops, a->bytes - b->bytes,
		                             a->time_ns - b->time_ns, a->consec - b->consec,
		                             a->seq - b->seq, a->random - b->random, a->max_req,
		                             f->first[o] ? f->first[o] : a->first_ns, a->last_ns };
	}
	d.meta_ops = f->cur.meta_ops - f->sent.meta_ops;
	d.meta_ns = f->cur.meta_ns - f->sent.meta_ns;
	return d;
}

static void frst_sent(struct frst *f)
{
	nwait -= f->since != 0;
	f->sent = f->cur;
	f->since = 0;
	f->first[0] = f->first[1] = 0;
}

/* How much a waiting record should go now: its change (requests, 4 KiB
 * units, metadata calls) times the intervals it has waited, plus one; past
 * IOG_FREC_MAX_WAIT it must. */
static uint64_t frst_score(const struct frst *f, uint64_t iv)
{
	uint64_t age = iv + 1 - f->since;
	if (age >= IOG_FREC_MAX_WAIT)
		return UINT64_MAX;
	uint64_t w = f->cur.meta_ops - f->sent.meta_ops;
	for (int o = 0; o < 2; o++)
		w += (f->cur.op[o].ops - f->sent.op[o].ops) +
		     ((f->cur.op[o].bytes - f->sent.op[o].bytes) >> 12);
	if (w > (UINT64_MAX >> 8) / IOG_FREC_MAX_WAIT)
		w = (UINT64_MAX >> 8) / IOG_FREC_MAX_WAIT;
	return w * (age + 1);
}

/* Every record's sums into cur; the records that wait, into cands. */
static int frecs_gather(uint64_t iv, uint32_t *ncand)
{
	uint32_t n = 0, nchunks = iog__frec_limit / IOG_FREC_CHUNK + 1;

	for (uint32_t c = 0; c < nchunks && c < IOG_FREC_CHUNKS; c++) {
		for (uint32_t k = 0; k < IOG_FREC_CHUNK * IOG_FREC_LAYERS; k++) {
			if (c * IOG_FREC_CHUNK + k / IOG_FREC_LAYERS > iog__frec_limit)
				break;
			if (st[c] == NULL) {
				iog_frec_chunk *any = NULL;
				for (iog_shard *s = iog__shards(); s != NULL && any == NULL; s = s->next)
					any = __atomic_load_n(&s->fr[c], __ATOMIC_ACQUIRE);
				if (any == NULL)
					break;
				if ((st[c] = calloc(IOG_FREC_CHUNK * IOG_FREC_LAYERS, sizeof(*st[c]))) == NULL)
					return -1;
			}
			struct frst *f = &st[c][k];
			frst_update(f, c, k, iv);
			if (!f->since)
				continue;
			if (grow(&cands, &cands_cap, n + 1, sizeof(*cands)) < 0)
				return -1;
			cands[n++] = (struct cand){ frst_score(f, iv), c, k };
		}
	}
	*ncand = n;
	return 0;
}

int iog__frecs_collect(iogp_msg *msg, uint64_t iv, int all)
{
	uint32_t nc, n = 0;

	if (frecs_gather(iv, &nc) < 0)
		return -1;
	/* the budget: the most urgent first; those past the wait always go */
	uint32_t take = nc;
	if (!all && iog__frec_budget && nc > iog__frec_budget) {
		qsort(cands, nc, sizeof(*cands), by_score);
		for (take = iog__frec_budget; take < nc && cands[take].score == UINT64_MAX; take++)
			;
	}
	for (uint32_t i = 0; i < take; i++) {
		struct frst *f = &st[cands[i].c][cands[i].k];
		uint32_t ix = cands[i].c * IOG_FREC_CHUNK + cands[i].k / IOG_FREC_LAYERS;
		iogp_filerec d = frst_increment(f);
		if (!name_rec(ix, (int)(cands[i].k % IOG_FREC_LAYERS), &d))
			continue;   /* no id yet: it waits */
		if (grow(&out, &out_cap, n + 1, sizeof(*out)) < 0)
			return -1;
		out[n++] = d;
		frst_sent(f);
	}
	if (n > 1)
		qsort(out, n, sizeof(*out), by_file);
	msg->filerecs = n ? out : NULL;
	msg->nfilerecs = n;
	return 0;
}

int iog__frecs_snapshot(iogp_msg *msg)
{
	uint32_t n = 0;

	for (uint32_t c = 0; c < IOG_FREC_CHUNKS; c++) {
		if (st[c] == NULL)
			continue;
		for (uint32_t k = 0; k < IOG_FREC_CHUNK * IOG_FREC_LAYERS; k++) {
			iogp_filerec r = st[c][k].cur;
			uint32_t ix = c * IOG_FREC_CHUNK + k / IOG_FREC_LAYERS;
			if ((r.op[0].ops | r.op[1].ops | r.meta_ops) == 0 ||
			    !name_rec(ix, (int)(k % IOG_FREC_LAYERS), &r))
				continue;
			if (grow(&out, &out_cap, n + 1, sizeof(*out)) < 0)
				return -1;
			out[n++] = r;
		}
	}
	if (n > 1)
		qsort(out, n, sizeof(*out), by_file);
	msg->filerecs = n ? out : NULL;
	msg->nfilerecs = n;
	return 0;
}

int iog__frecs_waiting(void)
{
	return nwait != 0;
}

void iog__frecs_snapshot_sent(void)
{
	/* receivers now have every total: nothing waits */
	for (uint32_t c = 0; c < IOG_FREC_CHUNKS; c++)
		for (uint32_t k = 0; st[c] != NULL && k < IOG_FREC_CHUNK * IOG_FREC_LAYERS; k++)
			if (st[c][k].since)
				frst_sent(&st[c][k]);
}

void iog__frecs_child(void)
{
	/* left to the child unused, as the publisher's other state (pub_reset) */
	memset(st, 0, sizeof(st));
	nwait = 0;
}
