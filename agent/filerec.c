/* filerec.c - per-file records (agent.h): a thread's record of a file, and
 * the publisher's side: sum the threads' records, send the files touched in
 * an interval as increments (DELTA) and every file's totals (SNAPSHOT). */
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

/* What was last sent, per chunk (cumulative), allocated with the first data. */
static iogp_filerec *sent[IOG_FREC_CHUNKS];
static iogp_filerec *out;
static uint32_t out_cap;

static int out_reserve(uint32_t n)
{
	if (n <= out_cap)
		return 0;
	uint32_t cap = out_cap ? out_cap * 2 : 64;
	while (cap < n)
		cap *= 2;
	iogp_filerec *o = realloc(out, cap * sizeof(*o));
	if (o == NULL)
		return -1;
	out = o;
	out_cap = cap;
	return 0;
}

static int by_file(const void *a, const void *b)
{
	const iogp_filerec *x = a, *y = b;

	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	return (x->layer > y->layer) - (x->layer < y->layer);
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

/* The record's name: the file's id, or the other-files record. */
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
	return r->file != 0;
}

int iog__frecs_collect(iogp_msg *msg, uint64_t iv)
{
	uint32_t n = 0, nchunks = iog__frec_limit / IOG_FREC_CHUNK + 1;

	for (uint32_t c = 0; c < nchunks && c < IOG_FREC_CHUNKS; c++) {
		for (uint32_t k = 0; k < IOG_FREC_CHUNK; k++) {
			uint32_t ix = c * IOG_FREC_CHUNK + k;
			if (ix > iog__frec_limit)
				break;
			for (int layer = 0; layer < IOG_FREC_LAYERS; layer++) {
				iogp_filerec cur, d;
				uint64_t ivfirst[2];
				if (!sum_threads(c, k, layer, iv, &cur, ivfirst))
					continue;
				if (sent[c] == NULL &&
				    (sent[c] = calloc(IOG_FREC_CHUNK * IOG_FREC_LAYERS, sizeof(iogp_filerec))) == NULL)
					return -1;
				iogp_filerec *p = &sent[c][k * IOG_FREC_LAYERS + layer];
				memset(&d, 0, sizeof(d));
				int changed = 0;
				for (int o = 0; o < 2; o++) {
					iogp_filerec_op *a = &cur.op[o], *b = &p->op[o], *x = &d.op[o];
					if (a->ops == b->ops)
						continue;
					changed = 1;
					*x = (iogp_filerec_op){ a->ops - b->ops, a->bytes - b->bytes,
					                        a->time_ns - b->time_ns, a->consec - b->consec,
					                        a->seq - b->seq, a->random - b->random,
					                        a->max_req,
					                        ivfirst[o] ? ivfirst[o] : a->first_ns, a->last_ns };
				}
				if (cur.meta_ops != p->meta_ops) {
					changed = 1;
					d.meta_ops = cur.meta_ops - p->meta_ops;
					d.meta_ns = cur.meta_ns - p->meta_ns;
				}
				if (!changed || !name_rec(ix, layer, &d))
					continue;
				if (out_reserve(n + 1) < 0)
					return -1;
				out[n++] = d;
				*p = cur;
			}
		}
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
		if (sent[c] == NULL)
			continue;
		for (uint32_t k = 0; k < IOG_FREC_CHUNK * IOG_FREC_LAYERS; k++) {
			iogp_filerec r = sent[c][k];
			uint32_t ix = c * IOG_FREC_CHUNK + k / IOG_FREC_LAYERS;
			if ((r.op[0].ops | r.op[1].ops | r.meta_ops) == 0 ||
			    !name_rec(ix, (int)(k % IOG_FREC_LAYERS), &r))
				continue;
			if (out_reserve(n + 1) < 0)
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

void iog__frecs_child(void)
{
	/* left to the child unused, as the publisher's other state (pub_reset) */
	memset(sent, 0, sizeof(sent));
}
