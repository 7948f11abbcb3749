/* matrix_view.c - the MPI traffic matrix as both viewers show it
 * (iogp_matrix_view.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iogp_err.h"
#include "iogp_matrix_view.h"
#include "iogp_units.h"

int iogp_matrix_view_get(iogp_matrix_view *v, const iogp_model *m, const char *node, double window_s,
                         int bytes)
{
	memset(v, 0, sizeof(*v));
	v->bytes = bytes;
	iogp_matrix_query q = { .by = IOGP_MATRIX_NODE, .window_ns = window_s > 0 ? (uint64_t)(window_s * 1e9) : 0 };
	if (node && *node) {
		q.by = IOGP_MATRIX_RANK;
		q.node = node;
		v->rc = iogp_model_matrix(m, &q, &v->x);
		if (v->rc == 0 && v->x.n > 0) {
			v->by = IOGP_MATRIX_RANK;
			v->empty = v->x.total_msgs == 0 && v->x.other_msgs == 0;
			snprintf(v->node, sizeof(v->node), "%s", node);
			v->seconds = v->x.seconds;
			return 0;
		}
		iogp_matrix_free(&v->x);
		q.by = IOGP_MATRIX_NODE;
		q.node = NULL;
	}
	v->by = IOGP_MATRIX_NODE;
	v->rc = iogp_model_matrix(m, &q, &v->x);
	v->seconds = v->rc == 0 ? v->x.seconds : 0;
	v->empty = v->rc < 0 || (v->x.total_msgs == 0 && v->x.other_msgs == 0);
	return v->rc;
}

void iogp_matrix_view_free(iogp_matrix_view *v)
{
	iogp_matrix_free(&v->x);
	memset(v, 0, sizeof(*v));
}

static double per(const iogp_matrix_view *v, uint64_t n)
{
	return v->seconds > 0 ? (double)n / v->seconds : (double)n;
}

double iogp_matrix_view_cell(const iogp_matrix_view *v, uint32_t r, uint32_t c)
{
	if (r >= v->x.n || c >= v->x.n)
		return 0;
	size_t i = (size_t)r * v->x.n + c;
	return per(v, v->bytes ? v->x.bytes[i] : v->x.msgs[i]);
}

double iogp_matrix_view_row(const iogp_matrix_view *v, uint32_t r)
{
	return r < v->x.n ? per(v, v->bytes ? v->x.row_bytes[r] : v->x.row_msgs[r]) : 0;
}

double iogp_matrix_view_col(const iogp_matrix_view *v, uint32_t c)
{
	return c < v->x.n ? per(v, v->bytes ? v->x.col_bytes[c] : v->x.col_msgs[c]) : 0;
}

double iogp_matrix_view_total(const iogp_matrix_view *v)
{
	return per(v, v->bytes ? v->x.total_bytes : v->x.total_msgs);
}

double iogp_matrix_view_max(const iogp_matrix_view *v)
{
	double mx = 0;
	for (uint32_t r = 0; r < v->x.n; r++)
		for (uint32_t c = 0; c < v->x.n; c++)
			mx = fmax(mx, iogp_matrix_view_cell(v, r, c));
	return mx;
}

void iogp_matrix_view_fmt(const iogp_matrix_view *v, double val, char *buf, size_t len, int style)
{
	const char *unit = v->bytes ? "bytes" : "messages";
	if (v->seconds > 0)
		iogp_fmt_rate(buf, len, unit, val, style);
	else
		iogp_fmt_value(buf, len, unit, val, style);
}

void iogp_matrix_view_title(const iogp_matrix_view *v, char *buf, size_t len)
{
	char what[160];
	if (v->by == IOGP_MATRIX_RANK)
		snprintf(what, sizeof(what), "ranks of %s", v->node);
	else
		snprintf(what, sizeof(what), "node x node");
	if (v->seconds > 0)
		snprintf(buf, len, "%s, %s/s over %.0f s", what, v->bytes ? "bytes" : "messages", v->seconds);
	else
		snprintf(buf, len, "%s, %s since start", what, v->bytes ? "bytes" : "messages");
}

double iogp_matrix_view_level(const iogp_matrix_view *v, double val)
{
	double mx = iogp_matrix_view_max(v);
	if (!(val > 0) || !(mx > 0))
		return 0;
	double l = 1 + log10(val / mx) / 3;   /* 1 at the max, 0 three decades below */
	return l < 0.05 ? 0.05 : l > 1 ? 1 : l;
}

struct busy {
	uint32_t i;
	double load;
};

static int by_load(const void *a, const void *b)
{
	const struct busy *x = a, *y = b;
	return x->load < y->load ? 1 : x->load > y->load ? -1 : (x->i > y->i) - (x->i < y->i);
}

static int by_index(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

size_t iogp_matrix_view_pick(const iogp_matrix_view *v, uint32_t *idx, size_t max)
{
	uint32_t n = v->x.n;
	if (n <= max) {
		for (uint32_t i = 0; i < n; i++)
			idx[i] = i;
		return n;
	}
	struct busy *b = malloc(n * sizeof(*b));
	if (!b)
		return 0;
	for (uint32_t i = 0; i < n; i++)
		b[i] = (struct busy){ i, iogp_matrix_view_row(v, i) + iogp_matrix_view_col(v, i) };
	qsort(b, n, sizeof(*b), by_load);
	for (size_t k = 0; k < max; k++)
		idx[k] = b[k].i;
	free(b);
	qsort(idx, max, sizeof(*idx), by_index);
	return max;
}
