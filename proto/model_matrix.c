/* model_matrix.c - the MPI traffic matrix (iogp_model_matrix): senders by
 * row, destinations by column, node x node or rank x rank, from the
 * per-destination counts of model_peers.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iogp_err.h"
#include "model_priv.h"

/* A source with a rank: its job (label, "" when none), rank and row. */
struct rk {
	const char *job;
	int64_t rank;
	uint32_t src;
	uint32_t col;     /* its column, NONE when not shown */
};

static int by_job_rank(const void *a, const void *b)
{
	const struct rk *x = a, *y = b;
	int c = strcmp(x->job, y->job);
	if (c)
		return c;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->src < y->src ? -1 : x->src > y->src;   /* a restart: the newest last */
}

static const struct rk *find(const struct rk *v, uint32_t n, const char *job, int64_t rank)
{
	uint32_t lo = 0, hi = n;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		int c = strcmp(v[mid].job, job);
		if (c < 0 || (c == 0 && v[mid].rank <= rank))
			lo = mid + 1;
		else
			hi = mid;
	}
	/* lo - 1: the last entry <= (job, rank) */
	return lo > 0 && v[lo - 1].rank == rank && !strcmp(v[lo - 1].job, job) ? &v[lo - 1] : NULL;
}

static const iogp_model *cmp_model;
static int by_node_name(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return strcmp(cmp_model->nodes[x].name, cmp_model->nodes[y].name);
}

/* The source's counts since start, or summed over the window's slots. */
static const iogp_peer *counts(const iogp_model *m, const struct source *s, const iogp_matrix_query *q,
                               iogp_peer **tmp, uint32_t *n)
{
	iogp_peer *all;
	*n = (uint32_t)model__peers_snapshot(s, &all);
	if (q->window_ns == 0 || all == NULL)
		return all;
	return model__peers_window(m, s, q->window_ns, tmp, n);
}

int iogp_model_matrix(const iogp_model *m, const iogp_matrix_query *q, iogp_matrix *out)
{
	if (out == NULL)
		return IOGP_EINVAL;
	memset(out, 0, sizeof(*out));
	if (m == NULL || q == NULL || (q->by != IOGP_MATRIX_NODE && q->by != IOGP_MATRIX_RANK) ||
	    (q->window_ns != 0 && !m->opts.live))
		return IOGP_EINVAL;
	uint64_t wmax = m->opts.window_max_ns;
	uint64_t window = q->window_ns == 0 ? 0 : q->window_ns > wmax ? wmax : q->window_ns;
	iogp_matrix_query qq = *q;
	qq.window_ns = window;

	struct rk *rk = malloc((m->nsrc + 1) * sizeof(*rk));
	uint32_t *rows = malloc((m->nsrc + m->nnodes + 1) * sizeof(*rows));
	uint32_t *nodecol = malloc((m->nnodes + 1) * sizeof(*nodecol));
	iogp_peer *tmp = NULL;
	int rc = IOGP_ENOMEM;
	if (rk == NULL || rows == NULL || nodecol == NULL)
		goto out;
	uint32_t nrk = 0, n = 0;
	for (uint32_t i = 0; i < m->nsrc; i++) {
		const struct source *s = &m->src[i];
		if (s->rank < 0)
			continue;
		const char *job = model__labels_find(s->labels, s->nlabels, "job");
		rk[nrk++] = (struct rk){ job ? job : "", s->rank, i, NONE };
	}
	qsort(rk, nrk, sizeof(*rk), by_job_rank);
	if (q->by == IOGP_MATRIX_NODE) {
		for (uint32_t i = 0; i < m->nnodes; i++)
			nodecol[i] = NONE;
		for (uint32_t i = 0; i < nrk; i++) {
			uint32_t nd = m->src[rk[i].src].node;
			if (nd < m->nnodes && nodecol[nd] == NONE) {
				nodecol[nd] = 0;
				rows[n++] = nd;
			}
		}
		cmp_model = m;
		qsort(rows, n, sizeof(*rows), by_node_name);
		for (uint32_t i = 0; i < n; i++)
			nodecol[rows[i]] = i;
		for (uint32_t i = 0; i < nrk; i++)
			rk[i].col = nodecol[m->src[rk[i].src].node];
	} else {
		uint32_t want = NONE;
		if (q->node != NULL && (want = model__node_find(m, q->node)) == NONE) {
			rc = IOGP_ENOTFOUND;
			goto out;
		}
		/* ranks in (rank, job) order: by job then rank is already sorted */
		for (uint32_t i = 0; i < nrk; i++)
			if (want == NONE || m->src[rk[i].src].node == want)
				rk[i].col = n, rows[n++] = i;
	}
	size_t cells = (size_t)n * n;
	size_t names_len = 0;
	for (uint32_t i = 0; i < n; i++)
		names_len += q->by == IOGP_MATRIX_NODE ? strlen(m->nodes[rows[i]].name) + 1 : 24;
	size_t need = cells * 2 * sizeof(uint64_t) + (size_t)n * (4 * sizeof(uint64_t) +
	              sizeof(int64_t) + sizeof(char *)) + names_len;
	char *mem = calloc(1, need ? need : 1);
	if (mem == NULL)
		goto out;
	out->mem = mem;
	out->n = n;
	out->msgs = (uint64_t *)mem;
	out->bytes = out->msgs + cells;
	out->row_msgs = out->bytes + cells;
	out->row_bytes = out->row_msgs + n;
	out->col_msgs = out->row_bytes + n;
	out->col_bytes = out->col_msgs + n;
	out->ranks = (int64_t *)(out->col_bytes + n);
	out->names = (const char **)(out->ranks + n);
	char *str = (char *)(out->names + n);
	for (uint32_t i = 0; i < n; i++) {
		out->names[i] = str;
		if (q->by == IOGP_MATRIX_NODE) {
			out->ranks[i] = -1;
			str += sprintf(str, "%s", m->nodes[rows[i]].name) + 1;
		} else {
			out->ranks[i] = rk[rows[i]].rank;
			str += snprintf(str, 24, "%lld", (long long)rk[rows[i]].rank) + 1;
		}
	}
	out->seconds = (double)window / 1e9;
	/* every source with a rank sends from its row (if shown) */
	for (uint32_t i = 0; i < nrk; i++) {
		uint32_t row = rk[i].col;
		if (row == NONE)
			continue;
		const struct source *s = &m->src[rk[i].src];
		uint32_t np;
		const iogp_peer *p = counts(m, s, &qq, &tmp, &np);
		for (uint32_t k = 0; k < np; k++) {
			const struct rk *d = find(rk, nrk, rk[i].job, p[k].rank);
			if (d == NULL || d->col == NONE) {
				out->other_msgs += p[k].msgs;
				out->other_bytes += p[k].bytes;
				continue;
			}
			size_t c = (size_t)row * n + d->col;
			out->msgs[c] += p[k].msgs;
			out->bytes[c] += p[k].bytes;
			out->row_msgs[row] += p[k].msgs;
			out->row_bytes[row] += p[k].bytes;
			out->col_msgs[d->col] += p[k].msgs;
			out->col_bytes[d->col] += p[k].bytes;
			out->total_msgs += p[k].msgs;
			out->total_bytes += p[k].bytes;
		}
	}
	rc = 0;
out:
	free(tmp);
	free(rk);
	free(rows);
	free(nodecol);
	return rc;
}

void iogp_matrix_free(iogp_matrix *x)
{
	if (x == NULL)
		return;
	free(x->mem);
	memset(x, 0, sizeof(*x));
}
