/* model_peers.c - MPI sends by destination (the wire's PEERS section): per
 * source, the cumulative count per destination world rank and, live, a ring
 * of window slots; the traffic matrix query (iogp_model_matrix): node x node,
 * or rank x rank, since start or over the last N seconds. A destination rank
 * becomes a source through the rank labels of the sender's job (label "job",
 * or none for both). */
#include <stdlib.h>
#include <string.h>

#include "iogp_err.h"
#include "model_priv.h"

#define COST_PEER 24u              /* a destination encoded at worst */

struct pslot {
	uint64_t j;                    /* window slot (wall / window_slot_ns) */
	uint32_t n, cap;
	iogp_peer *v;                  /* ascending by rank */
};

struct peers {
	iogp_peer *cum;                /* cumulative, ascending by rank */
	uint32_t n, cap;
	struct pslot *ring;            /* live: window slots, nring of them */
	uint32_t nring, held;          /* held: entries over all slots */
};

int model__peers_check(const iogp_msg *msg)
{
	if (msg->npeers > IOGP_MAX_PEERS)
		return IOGP_ELIMIT;
	if (msg->npeers && msg->peers == NULL)
		return IOGP_EINVAL;
	for (uint32_t i = 0; i < msg->npeers; i++) {
		const iogp_peer *q = &msg->peers[i];
		if (q->rank >= IOGP_MAX_PEER_RANK || q->msgs == 0 ||
		    (i > 0 && q->rank <= msg->peers[i - 1].rank))
			return IOGP_EINVAL;
	}
	return 0;
}

/* *a (n of cap) += b (nb), both ascending; -1 when out of memory. */
static int merge(iogp_peer **a, uint32_t *n, uint32_t *cap, const iogp_peer *b, uint32_t nb)
{
	uint32_t need = *n + nb;
	if (need > *cap) {
		uint32_t c = *cap ? *cap : 8;
		while (c < need)
			c *= 2;
		iogp_peer *p = realloc(*a, (size_t)c * sizeof(*p));
		if (p == NULL)
			return -1;
		*a = p;
		*cap = c;
	}
	/* merge from the back, in place */
	int64_t i = (int64_t)*n - 1, j = (int64_t)nb - 1, k = (int64_t)need - 1;
	iogp_peer *x = *a;
	while (j >= 0) {
		if (i >= 0 && x[i].rank > b[j].rank)
			x[k--] = x[i--];
		else if (i >= 0 && x[i].rank == b[j].rank) {
			x[k] = x[i--];
			x[k].msgs += b[j].msgs;
			x[k--].bytes += b[j--].bytes;
		} else
			x[k--] = b[j--];
	}
	while (i >= 0)
		x[k--] = x[i--];
	/* equal ranks left holes at the front: close them */
	uint32_t holes = (uint32_t)(k + 1);
	if (holes)
		memmove(x, x + holes, (size_t)(need - holes) * sizeof(*x));
	*n = need - holes;
	return 0;
}

/* A source's window holds at most opts.window_bytes of destinations (all
 * slots); a delta that does not fit is left out, counted in window_dropped. */
static void window_add(iogp_model *m, struct peers *p, const iogp_msg *msg)
{
	uint32_t max = m->opts.window_bytes / (uint32_t)sizeof(iogp_peer);
	uint64_t S = m->opts.window_slot_ns, j = msg->wall_ns / S;
	if (p->ring == NULL) {
		uint32_t n = (uint32_t)(m->opts.window_max_ns / S) + 2;
		if ((p->ring = calloc(n, sizeof(*p->ring))) == NULL)
			return;
		p->nring = n;
	}
	struct pslot *sl = &p->ring[j % p->nring];
	if (sl->j != j) {
		if (sl->j > j && sl->n)
			return;            /* older than the ring */
		p->held -= sl->n;
		free(sl->v);
		*sl = (struct pslot){ .j = j };
	}
	if (p->held + msg->npeers > max) {
		m->lst.window_dropped++;
		return;
	}
	uint32_t before = sl->n;
	if (merge(&sl->v, &sl->n, &sl->cap, msg->peers, msg->npeers) == 0)
		p->held += sl->n - before;
}

int model__peers_apply(iogp_model *m, struct source *s, const iogp_msg *msg, bool snapshot)
{
	struct peers *p = s->peers;
	if (p == NULL) {
		if (msg->npeers == 0)
			return 0;
		if ((p = s->peers = calloc(1, sizeof(*p))) == NULL)
			return IOGP_ENOMEM;
	}
	if (snapshot) {
		model__cost_sub(m, s, (uint64_t)p->n * COST_PEER);
		p->n = 0;
	}
	uint32_t before = p->n;
	/* what can be new at most is msg->npeers destinations */
	if (!model__cost_fits(m, s, (uint64_t)msg->npeers * COST_PEER)) {
		m->st.refused++;
		return IOGP_ELIMIT;
	}
	if (merge(&p->cum, &p->n, &p->cap, msg->peers, msg->npeers) < 0)
		return IOGP_ENOMEM;
	model__cost_add(m, s, (uint64_t)(p->n - before) * COST_PEER);
	if (!snapshot && m->opts.live && msg->wall_ns != 0 && msg->npeers > 0)
		window_add(m, p, msg);
	return 0;
}

size_t model__peers_snapshot(const struct source *s, iogp_peer **out)
{
	*out = s->peers && s->peers->n ? s->peers->cum : NULL;
	return *out ? s->peers->n : 0;
}

/* The deltas of the window slots meeting (now - window, now], summed into
 * *tmp (grown as needed); *n entries. */
const iogp_peer *model__peers_window(const iogp_model *m, const struct source *s, uint64_t window,
                                     iogp_peer **tmp, uint32_t *n)
{
	const struct peers *p = s->peers;
	uint64_t S = m->opts.window_slot_ns, now = model__clock(m);
	uint64_t from = now > window ? now - window : 0;
	uint32_t cap = 0;

	*n = 0;
	free(*tmp);
	*tmp = NULL;
	for (uint32_t i = 0; p != NULL && i < p->nring; i++) {
		const struct pslot *sl = &p->ring[i];
		if (sl->n == 0 || (sl->j + 1) * S <= from || sl->j * S > now)
			continue;
		if (merge(tmp, n, &cap, sl->v, sl->n) < 0)
			break;
	}
	return *tmp;
}

void model__peers_free(struct source *s)
{
	struct peers *p = s->peers;
	if (p == NULL)
		return;
	for (uint32_t i = 0; i < p->nring; i++)
		free(p->ring[i].v);
	free(p->ring);
	free(p->cum);
	free(p);
	s->peers = NULL;
}
