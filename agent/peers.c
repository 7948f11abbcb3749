/* peers.c - MPI sends by destination (peers.h): the threads' tables and the
 * publisher's side. */
#include <stdlib.h>
#include <string.h>

#include "peers.h"

uint32_t iog__peers_n;
static struct iog_peer_ent *sent;     /* totals last sent, iog__peers_n places */
static iogp_peer *out;

int iog__peers_setup(uint32_t world)
{
	uint32_t n = world < IOG_PEERS_MAX ? world : IOG_PEERS_MAX;
	uint32_t cur = __atomic_load_n(&iog__peers_n, __ATOMIC_ACQUIRE);

	if (cur != 0)
		return cur == n ? 0 : -1;
	if (n == 0)
		return -1;
	__atomic_store_n(&iog__peers_n, n, __ATOMIC_RELEASE);
	return 0;
}

struct iog_peer_ent *iog__peers_slow(iog_shard *s)
{
	uint32_t n = __atomic_load_n(&iog__peers_n, __ATOMIC_ACQUIRE);

	if (n == 0 || !__atomic_load_n(&iog__enabled, __ATOMIC_RELAXED))
		return NULL;
	struct iog_peer_ent *t = calloc(n, sizeof(*t));
	if (t != NULL)
		__atomic_store_n(&s->peers, t, __ATOMIC_RELEASE);
	return t;
}

/* Every thread's count for destination i. */
static struct iog_peer_ent sum(uint32_t i)
{
	struct iog_peer_ent r = { 0, 0 };

	for (iog_shard *s = iog__shards(); s != NULL; s = s->next) {
		struct iog_peer_ent *t = __atomic_load_n(&s->peers, __ATOMIC_ACQUIRE);
		if (t == NULL)
			continue;
		r.msgs += __atomic_load_n(&t[i].msgs, __ATOMIC_RELAXED);
		r.bytes += __atomic_load_n(&t[i].bytes, __ATOMIC_RELAXED);
	}
	return r;
}

static int ready(uint32_t n)
{
	if (sent == NULL && (sent = calloc(n, sizeof(*sent))) == NULL)
		return -1;
	if (out == NULL && (out = calloc(n, sizeof(*out))) == NULL)
		return -1;
	return 0;
}

int iog__peers_collect(iogp_msg *msg)
{
	uint32_t n = __atomic_load_n(&iog__peers_n, __ATOMIC_ACQUIRE), k = 0;

	msg->npeers = 0;
	msg->peers = NULL;
	if (n == 0)
		return 0;
	if (ready(n) < 0)
		return -1;
	for (uint32_t i = 0; i < n; i++) {
		struct iog_peer_ent c = sum(i);
		if (c.msgs == sent[i].msgs)
			continue;
		out[k++] = (iogp_peer){ .rank = i, .msgs = c.msgs - sent[i].msgs,
		                        .bytes = c.bytes - sent[i].bytes };
		sent[i] = c;
	}
	msg->npeers = k;
	msg->peers = k ? out : NULL;
	return 0;
}

int iog__peers_snapshot(iogp_msg *msg)
{
	uint32_t n = __atomic_load_n(&iog__peers_n, __ATOMIC_ACQUIRE), k = 0;

	msg->npeers = 0;
	msg->peers = NULL;
	if (n == 0 || sent == NULL)
		return 0;
	if (ready(n) < 0)
		return -1;
	for (uint32_t i = 0; i < n; i++)
		if (sent[i].msgs != 0)
			out[k++] = (iogp_peer){ .rank = i, .msgs = sent[i].msgs, .bytes = sent[i].bytes };
	msg->npeers = k;
	msg->peers = k ? out : NULL;
	return 0;
}

void iog__peers_child(void)
{
	uint32_t n = __atomic_load_n(&iog__peers_n, __ATOMIC_ACQUIRE);

	for (iog_shard *s = iog__shards(); s != NULL; s = s->next)
		if (s->peers != NULL)
			memset(s->peers, 0, n * sizeof(*s->peers));
	if (sent != NULL)
		memset(sent, 0, n * sizeof(*sent));
}
