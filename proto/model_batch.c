/* model_batch.c - iogp_model_feed_many: messages applied a batch at a time.
 *
 * With thousands of sources every DELTA lands on state no cache holds: its
 * source, its slots, their window rings, the rate rings. Applied one at a
 * time, each of those misses waits for the one before it (the source names
 * the slots, a slot names its ring, a ring's header says where its newest
 * bins are): at 20,000 sources a viewer spent a third of its time in them.
 * Here the messages of a batch are decoded first, then each step of that
 * chain is fetched for all of them before the next step, so the misses of
 * a step overlap; only then are they applied, in order, as
 * iogp_model_feed would. The fetches are hints: every lookup is done again
 * by the apply, so a message that changes the model (a HELLO, a SNAPSHOT)
 * before the next one is applied only makes a hint wrong, never a result. */
#include <stddef.h>
#include <stdlib.h>

#include "iogp_err.h"
#include "iogp_model.h"
#include "model_priv.h"

#define MODEL_BATCH 8u
#define PF_VALUES 32u      /* values per message whose slots are fetched */

static void pf(const void *p)
{
	if (p != NULL)
		__builtin_prefetch(p);
}

/* What a message's steps found, so each lookup is done once: its source
 * and the slots of its first values. */
struct pf {
	uint32_t si;            /* NONE: not a DELTA, or an unknown source */
	uint32_t n, nh;         /* values, of which histograms (first) */
	uint32_t id[PF_VALUES];
	uint32_t x[PF_VALUES];  /* their slots (step 3 on) */
};

/* Step `stage` of the chain for a DELTA (nothing for the other kinds: they
 * are rare and touch more than a hint could say). */
static void fetch(const iogp_model *m, const iogp_msg *msg, struct pf *f, int stage)
{
	if (stage <= 1) {
		const char *p = msg->kind == IOGP_DELTA ? model__src_hint(m, msg->source, stage) : NULL;

		pf(p);
		for (size_t o = 64; stage == 1 && p != NULL && o < sizeof(struct source); o += 64)
			pf(p + o);
		return;
	}
	if (stage == 2) {
		f->si = msg->kind == IOGP_DELTA ? model__src_find(m, msg->source) : NONE;
		f->n = 0;
		for (uint32_t i = 0; i < msg->nhists && f->n < PF_VALUES; i++)
			f->id[f->n++] = msg->hists[i].id;
		f->nh = f->n;
		for (uint32_t i = 0; i < msg->ncounters && f->n < PF_VALUES; i++)
			f->id[f->n++] = msg->counters[i].id;
		for (uint32_t i = 0; i < msg->ngauges && f->n < PF_VALUES; i++)
			f->id[f->n++] = msg->gauges[i].id;
	}
	if (f->si == NONE)
		return;
	const struct source *s = &m->src[f->si];
	switch (stage) {
	case 2:   /* the slot map's buckets, the rate rings' headers, the node */
		for (uint32_t i = 0; i < f->n; i++)
			pf(f->id[i] < s->by_id.n ? &s->by_id.v[f->id[i]] : NULL);
		pf(s->rr);
		pf(&m->nodes[s->node]);
		break;
	case 3:   /* the slots; the node's rate ring (its header says where the bin is) */
		if (m->opts.live)
			pf(m->nodes[s->node].rr);
		for (uint32_t i = 0; i < f->n; i++)
			if ((f->x[i] = model__slot_by_id(s, f->id[i])) != NONE)
				pf(&s->slots[f->x[i]]);
		break;
	case 4:   /* what the slots name: windows, rate bins, the node's sums */
		if (!m->opts.live)
			break;
		model__rates_prefetch(m, s, msg->wall_ns);
		for (uint32_t i = 0; i < f->n; i++)
			if (f->x[i] != NONE)
				model__slot_prefetch(m, s, &s->slots[f->x[i]]);
		break;
	default:  /* the windows' newest bins; where the node's log takes the bins */
		for (uint32_t i = 0; i < f->nh && m->opts.live; i++) {
			if (f->x[i] == NONE)
				continue;
			model__win_prefetch_bins(m, &s->slots[f->x[i]]);
			model__agg_prefetch_log(m, s, &s->slots[f->x[i]]);
		}
		break;
	}
}

size_t iogp_model_feed_many(iogp_model *m, const void *const *payload, const size_t *len,
                            size_t n, uint64_t recv_ns)
{
	size_t ok = 0;

	if (m == NULL || (n > 0 && (payload == NULL || len == NULL)))
		return 0;
	if (m->batch == NULL) {
		if ((m->batch = calloc(MODEL_BATCH, sizeof *m->batch)) == NULL) {
			/* no room for a batch: one at a time */
			for (size_t i = 0; i < n; i++)
				ok += iogp_model_feed(m, payload[i], len[i], recv_ns) >= 0;
			return ok;
		}
		for (uint32_t k = 0; k < MODEL_BATCH; k++)
			iogp_msg_init(&m->batch[k]);
	}
	for (size_t b = 0; b < n; b += MODEL_BATCH) {
		size_t nb = n - b < MODEL_BATCH ? n - b : MODEL_BATCH;
		int dec[MODEL_BATCH];
		struct pf f[MODEL_BATCH];

		for (size_t k = 0; k < nb; k++) {
			dec[k] = payload[b + k] == NULL && len[b + k] > 0 ? IOGP_EINVAL :
			         iogp_msg_decode(&m->batch[k], payload[b + k], len[b + k], NULL, 0);
			if (dec[k] < 0)
				m->st.bad_messages++;
		}
		for (int stage = 0; stage <= 5 && nb > 1; stage++)
			for (size_t k = 0; k < nb; k++)
				if (dec[k] >= 0)
					fetch(m, &m->batch[k], &f[k], stage);
		m->batched = nb > 1;
		for (size_t k = 0; k < nb; k++)
			ok += dec[k] >= 0 && iogp_model_apply(m, &m->batch[k], recv_ns) >= 0;
		m->batched = false;
	}
	return ok;
}

void model__batch_free(iogp_model *m)
{
	for (uint32_t k = 0; m->batch != NULL && k < MODEL_BATCH; k++)
		iogp_msg_free(&m->batch[k]);
	free(m->batch);
	m->batch = NULL;
}
