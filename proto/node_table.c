/* node_table.c - nodes and ranks side by side: the rows (rates, latency
 * quantiles, I/O time and its share of wall time, queue depth, I/O time
 * against the median) from the model, their stable order, the lines that
 * fit, cell texts and CSV (iogp_node_table.h). */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "iogp_err.h"
#include "iogp_layers.h"
#include "iogp_model.h"
#include "iogp_node_table.h"
#include "iogp_sys.h"
#include "iogp_units.h"

static const char *const col_names[IOGP_NT_NCOLS] = {
	"name", "read_bps", "write_bps", "read_ops", "write_ops", "p50", "p99", "io_share",
	"qd_p99", "io_time", "vs_median",
};
static const char *const titles[2][IOGP_NT_NCOLS] = {
	{ "Name", "Read B/s", "Write B/s", "Read ops/s", "Write ops/s", "p50", "p99", "I/O share",
	  "QD p99", "I/O time", "vs median" },
	{ "name", "rd B/s", "wr B/s", "rd op/s", "wr op/s", "p50", "p99", "I/O%", "qd99", "I/O s",
	  "xmed" },
};

const char *iogp_nt_col_name(int col)
{
	return col >= 0 && col < IOGP_NT_NCOLS ? col_names[col] : "?";
}

int iogp_nt_col_find(const char *name)
{
	for (int c = 0; c < IOGP_NT_NCOLS && name; c++)
		if (!strcmp(name, col_names[c]))
			return c;
	return -1;
}

const char *iogp_nt_col_title(int col, int style)
{
	return col >= 0 && col < IOGP_NT_NCOLS ? titles[style == IOGP_UNITS_CELL][col] : "?";
}

int iogp_nt_col_desc(int col)
{
	return col != IOGP_NT_NAME;
}

/* ---- building ---- */

#define SETTLE_STEP 64   /* nodes settled between looks at the clock (settle_ns) */
#define STOP_ROWS 64     /* rows between asks of the stop hook */
#define EACH_STEP 4096   /* sources' I/O times between asks of it */

/* What one query brings: a count (requests, bytes) or a histogram's. */
typedef struct ctx {
	const iogp_model *m;
	const iogp_model_opts *mo;
	int window;
	uint64_t now, ws;            /* window: [ws, now] */
	const char *metric[IOGP_SLOT_N];
	double *rate;                /* rate ring scratch */
	uint8_t *cov;
	size_t nscratch;
} ctx;

/* The queries of t's layer and window ([t->win_start, t->win_now] when
 * t->window_s > 0) over m. */
static void ctx_init(ctx *c, const iogp_node_table *t, const iogp_model *m)
{
	memset(c, 0, sizeof(*c));
	c->m = m;
	c->mo = iogp_model_get_opts(m);
	c->window = t->window_s > 0;
	c->ws = t->win_start;
	c->now = t->win_now;
	for (int s = 0; s < IOGP_SLOT_N; s++)
		c->metric[s] = iogp_layer_slot_metric(t->layer, s);
}

/* The selection of row r: its node's sources, or its source. */
static iogp_sel row_sel(const iogp_node_table *t, const iogp_nt_row *r)
{
	return t->scope == IOGP_NT_NODES ? (iogp_sel){ .kind = IOGP_SEL_NODE, .node = r->node }
	                                 : (iogp_sel){ .kind = IOGP_SEL_SOURCE, .source = r->source };
}

static int hist_of(const ctx *c, int slot, const iogp_sel *sel, iogp_hist *h)
{
	const char *name = c->metric[slot];
	if (!name) {
		iogp_bins nb;
		iogp_bins_native(&nb, IOGP_NATIVE_K_DEFAULT);
		iogp_hist_init(h, &nb);
		return IOGP_ENOTFOUND;
	}
	if (c->window)
		return iogp_model_hist_window(c->m, name, sel, c->now - c->ws, h);   /* from slot ws / S */
	return iogp_model_hist(c->m, name, sel, h);
}

/* Requests (ops) or bytes of a direction: the counter since start; in a
 * window the rate ring's bins over it where the ring holds the counter and
 * reaches back far enough, else the size histogram's count or sum. NAN
 * when the layer has none of them. */
static double ring_sum(ctx *c, const char *name, const iogp_sel *sel);

static double count_of(ctx *c, int counter_slot, int size_slot, int bytes, const iogp_sel *sel)
{
	const char *name = c->metric[counter_slot];
	if (!c->window) {
		uint64_t v = 0;
		if (!name || iogp_model_counter(c->m, name, sel, &v) < 0)
			return NAN;
		return (double)v;
	}
	double v = ring_sum(c, name, sel);
	if (!isnan(v))
		return v;
	iogp_hist h;
	int rc = hist_of(c, size_slot, sel, &h);
	v = rc < 0 && rc != IOGP_ESCHEME ? NAN : bytes ? iogp_hist_sum(&h) : (double)h.total;
	iogp_hist_free(&h);
	return v;
}

/* Counter name's increments in the window from the rate ring, when the
 * ring holds it and reaches back far enough; NAN otherwise. */
static double ring_sum(ctx *c, const char *name, const iogp_sel *sel)
{
	uint64_t bin = c->mo->bin_ns ? c->mo->bin_ns : 1000000000ull;
	uint64_t b0 = c->ws / bin, b1 = (c->now ? c->now - 1 : 0) / bin;
	size_t n = (size_t)(b1 - b0 + 1);
	/* a source's ring may be shorter than the nodes' (source_ring_bins,
	 * rate_total): what it holds now */
	if (name && n <= iogp_model_rate_span(c->m, sel)) {
		if (n > c->nscratch) {
			free(c->rate);
			free(c->cov);
			c->rate = malloc(n * sizeof(*c->rate));
			c->cov = malloc(n);
			c->nscratch = c->rate && c->cov ? n : 0;
		}
		uint64_t first;
		if (c->nscratch >= n &&
		    iogp_model_rate(c->m, name, sel, (b1 + 1) * bin, n, c->rate, c->cov, &first) == 0) {
			double sum = 0;
			for (size_t i = 0; i < n; i++)
				if (c->cov[i])
					sum += c->rate[i] * (double)bin / 1e9;
			return sum;
		}
	}
	return NAN;
}

static const int lat_slot[3] = { IOGP_SLOT_READ_LATENCY, IOGP_SLOT_WRITE_LATENCY,
                                 IOGP_SLOT_META_LATENCY };

/* The layer's read, write and metadata latencies of a selection into h
 * (freed by the caller, on IOGP_ENOMEM by the call), their sums (the I/O
 * time, ns) added into *io in that order; *have: any of them kept. */
static int lat_hists(const ctx *c, const iogp_sel *sel, iogp_hist h[3], double *io, int *have)
{
	*io = 0;
	*have = 0;
	for (int k = 0; k < 3; k++) {
		int rc = hist_of(c, lat_slot[k], sel, &h[k]);
		if (rc == IOGP_ENOMEM) {
			for (int j = 0; j <= k; j++)
				iogp_hist_free(&h[j]);
			return rc;
		}
		if (rc >= 0 || rc == IOGP_ESCHEME) {
			*have = 1;
			*io += iogp_hist_sum(&h[k]);
		}
	}
	return 0;
}

/* The I/O time alone (a lazy build's every row). */
static int fill_iotime(const ctx *c, const iogp_sel *sel, iogp_nt_row *r)
{
	iogp_hist h[3];
	double io;
	int have, rc = lat_hists(c, sel, h, &io, &have);
	if (rc < 0)
		return rc;
	for (int k = 0; k < 3; k++)
		iogp_hist_free(&h[k]);
	r->v[IOGP_NT_IOTIME] = have ? io / 1e9 : NAN;
	return 0;
}

/* Quantiles, I/O time and queue depth of a selection into r. */
static int fill_hists(const ctx *c, const iogp_sel *sel, iogp_nt_row *r)
{
	iogp_hist h[3], q;
	double io;
	int have_lat, rc = lat_hists(c, sel, h, &io, &have_lat);
	if (rc < 0)
		return rc;
	/* p50 and p99 of reads and writes together */
	rc = iogp_hist_merge(&h[0], &h[1]);
	uint64_t v;
	if (rc == 0 && iogp_hist_quantile(&h[0], 0.5, &v) == 0)
		r->v[IOGP_NT_P50] = (double)v;
	if (rc == 0 && iogp_hist_quantile(&h[0], 0.99, &v) == 0)
		r->v[IOGP_NT_P99] = (double)v;
	for (int k = 0; k < 3; k++)
		iogp_hist_free(&h[k]);
	r->v[IOGP_NT_IOTIME] = have_lat ? io / 1e9 : NAN;
	rc = hist_of(c, IOGP_SLOT_QUEUE_DEPTH, sel, &q);
	if ((rc >= 0 || rc == IOGP_ESCHEME) && iogp_hist_quantile(&q, 0.99, &v) == 0)
		r->v[IOGP_NT_QD99] = (double)v;
	iogp_hist_free(&q);
	return rc == IOGP_ENOMEM ? rc : 0;
}

static int fill_counts(ctx *c, const iogp_sel *sel, iogp_nt_row *r)
{
	double rb = count_of(c, IOGP_SLOT_READ_BYTES, IOGP_SLOT_READ_SIZE, 1, sel);
	double wb = count_of(c, IOGP_SLOT_WRITE_BYTES, IOGP_SLOT_WRITE_SIZE, 1, sel);
	double ro = count_of(c, IOGP_SLOT_READ_OPS, IOGP_SLOT_READ_SIZE, 0, sel);
	double wo = count_of(c, IOGP_SLOT_WRITE_OPS, IOGP_SLOT_WRITE_SIZE, 0, sel);
	double s = r->span_s;
	r->v[IOGP_NT_READ_BPS] = s > 0 && !isnan(rb) ? rb / s : NAN;
	r->v[IOGP_NT_WRITE_BPS] = s > 0 && !isnan(wb) ? wb / s : NAN;
	r->v[IOGP_NT_READ_OPS] = s > 0 && !isnan(ro) ? ro / s : NAN;
	r->v[IOGP_NT_WRITE_OPS] = s > 0 && !isnan(wo) ? wo / s : NAN;
	r->requests = (uint64_t)((isnan(ro) ? 0 : ro) + (isnan(wo) ? 0 : wo) + 0.5);
	return 0;
}

/* A lazy build's parts of a row: the histograms' columns (p50, p99, the
 * queue depth; the I/O time with them) and the counts' (bytes, requests). */
enum { PEND_HISTS = 1, PEND_COUNTS = 2, PEND_ALL = 3 };

/* What a lazy build fills of every row besides the I/O time: the parts
 * of the column the rows are ordered by. */
static int parts_of(int col)
{
	switch (col) {
	case IOGP_NT_P50:
	case IOGP_NT_P99:
	case IOGP_NT_QD99:
		return PEND_HISTS;
	case IOGP_NT_READ_BPS:
	case IOGP_NT_WRITE_BPS:
	case IOGP_NT_READ_OPS:
	case IOGP_NT_WRITE_OPS:
		return PEND_COUNTS;
	}
	return 0;
}

/* The parts of r to fill (no longer pending); the I/O time with the
 * histograms, else on its own unless known (io_known). */
static int fill_parts(ctx *c, const iogp_sel *sel, iogp_nt_row *r, int parts, int io_known)
{
	int rc = 0;
	if (parts & PEND_HISTS)
		rc = fill_hists(c, sel, r);
	else if (!io_known)
		rc = fill_iotime(c, sel, r);
	if (rc == 0 && (parts & PEND_COUNTS))
		rc = fill_counts(c, sel, r);
	r->pending = (uint8_t)(r->pending & ~parts);
	return rc;
}

/* A row from summaries (IOGP_ROLE_SUMMARY: a member behind an aggregating
 * relay; POSIX layer only): bytes, requests and I/O time from the
 * summaries' counters, since start or, in a window, from their rate rings
 * (the viewers' rate set holds summary.*: iogp_layer_rate_set); blank
 * when the ring does not reach back over the window. The ops are reads and
 * writes together: all of them go to the one direction that moved bytes
 * (reads when neither did), both directions NAN when both did. p99: a
 * source's gauge, its reads' and writes' in the relay's last interval
 * (NAN for a node: p99s do not add up). p50 and the queue depth: NAN (not
 * summarised). */
static void fill_summary(ctx *c, const iogp_sel *sel, int layer, iogp_nt_row *r)
{
	if (layer != IOGP_LAYER_POSIX)
		return;
	int64_t p99 = 0;
	if (sel->kind == IOGP_SEL_SOURCE && r->span_s > 0 &&
	    iogp_model_gauge(c->m, IOGP_M_SUMMARY_P99, sel, &p99) == 0 && p99 > 0)
		r->v[IOGP_NT_P99] = (double)p99;
	static const char *const name[4] = { IOGP_M_SUMMARY_READ_BYTES, IOGP_M_SUMMARY_WRITE_BYTES,
	                                     IOGP_M_SUMMARY_OPS, IOGP_M_SUMMARY_IO_TIME };
	double v[4];
	for (int k = 0; k < 4; k++) {
		uint64_t x = 0;
		if (c->window)
			v[k] = ring_sum(c, name[k], sel);
		else
			v[k] = iogp_model_counter(c->m, name[k], sel, &x) < 0 ? 0 : (double)x;   /* absent: 0 */
		if (isnan(v[k]))
			return;
	}
	double s = r->span_s, rb = v[0], wb = v[1];
	r->v[IOGP_NT_IOTIME] = v[3] / 1e9;
	r->requests = (uint64_t)(v[2] + 0.5);
	if (s <= 0)
		return;
	r->v[IOGP_NT_READ_BPS] = rb / s;
	r->v[IOGP_NT_WRITE_BPS] = wb / s;
	if (rb == 0 || wb == 0) {
		r->v[IOGP_NT_READ_OPS] = wb != 0 ? 0 : v[2] / s;
		r->v[IOGP_NT_WRITE_OPS] = wb != 0 ? v[2] / s : 0;
	}
}

/* A source's wall span: from its first interval's start (its monotonic
 * start before its last message) to its last message; in a window, the
 * part inside it. 0 when it has no wall time yet. */
static void source_span(const ctx *c, const iogp_source_span *si, uint64_t *lo, uint64_t *hi)
{
	*lo = *hi = 0;
	if (!si->last_wall_ns)
		return;
	uint64_t life = si->last_mono_ns > si->start_mono_ns ? si->last_mono_ns - si->start_mono_ns : 0;
	uint64_t a = si->last_wall_ns > life ? si->last_wall_ns - life : 0, b = si->last_wall_ns;
	if (c->window) {
		if (a < c->ws)
			a = c->ws;
		if (b > c->now)
			b = c->now;
	}
	if (b > a) {
		*lo = a;
		*hi = b;
	}
}

/* src into dst (size n), cut to fit: snprintf's "%s" without its cost
 * (twice a row, thousands of rows a frame). */
static void copy_name(char *dst, size_t n, const char *src)
{
	size_t k = src ? strnlen(src, n - 1) : 0;
	memcpy(dst, src ? src : "", k);
	dst[k] = '\0';
}

/* The row of a source's node: the model's node index (rows are made in
 * that order); -1 when out of range. */
static long node_index(size_t ni, size_t nn)
{
	return ni < nn ? (long)ni : -1;
}

static void row_init(iogp_nt_row *r)
{
	memset(r, 0, sizeof(*r));
	r->rank = r->pid = -1;
	for (int k = 0; k < IOGP_NT_NCOLS; k++)
		r->v[k] = NAN;
}

static int natcmp(const char *a, const char *b);

/* The k-th smallest of a[0..n) (k < n), the array reordered around it
 * (Hoare's selection: what is left of k is <= it, right >=): a median
 * without sorting every row's I/O time, nor the allocation of a sort. */
static double select_kth(double *a, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;
	while (lo < hi) {
		double p = a[lo + (hi - lo) / 2];
		size_t i = lo, j = hi;
		while (i <= j) {
			while (a[i] < p)
				i++;
			while (a[j] > p)
				j--;
			if (i <= j) {
				double x = a[i];
				a[i] = a[j];
				a[j] = x;
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			return a[k];
	}
	return a[k];
}

/* Median of the I/O times, ratios to it, and the worst share. */
static void finish(iogp_node_table *t, double *io)
{
	size_t k = 0;
	for (size_t i = 0; i < t->n; i++)
		if (t->rows[i].v[IOGP_NT_IOTIME] > 0)
			io[k++] = t->rows[i].v[IOGP_NT_IOTIME];
	t->with_io = k;
	if (k) {   /* the middle one or two, as a sort would put them */
		double hi = select_kth(io, k, k / 2), lo = hi;
		for (size_t i = 0; k % 2 == 0 && i < k / 2; i++)   /* below k / 2: all <= hi */
			lo = i == 0 || io[i] > lo ? io[i] : lo;
		t->median_io_s = k % 2 ? hi : (lo + hi) / 2;
	}
	for (size_t i = 0; i < t->n; i++) {
		iogp_nt_row *r = &t->rows[i];
		if (!isnan(r->v[IOGP_NT_IOTIME]) && t->median_io_s > 0)
			r->v[IOGP_NT_VSMED] = r->v[IOGP_NT_IOTIME] / t->median_io_s;
		if (isnan(r->v[IOGP_NT_SHARE]))
			continue;
		const iogp_nt_row *w = t->worst >= 0 ? &t->rows[t->worst] : NULL;
		int c = w ? natcmp(r->name, w->name) : 0;
		if (!w || r->v[IOGP_NT_SHARE] > w->v[IOGP_NT_SHARE] ||
		    (r->v[IOGP_NT_SHARE] == w->v[IOGP_NT_SHARE] && (c < 0 || (c == 0 && r->source < w->source))))
			t->worst = (long)i;
	}
}

/* Members an aggregate stands for (its label "sources"); 1 for a source. */
static uint32_t members_of(const iogp_model *m, size_t i, int role)
{
	if (role != IOGP_ROLE_AGGREGATE && role != IOGP_ROLE_SUMMARISED)
		return 1;
	const char *n = iogp_model_source_label(m, i, "sources");
	unsigned long v = n ? strtoul(n, NULL, 10) : 0;
	return v && v < UINT32_MAX ? (uint32_t)v : 1;
}

/* A job's aggregate: its host, and so its node, is the job's name. */
static int job_aggregate(const iogp_model *m, size_t i)
{
	const char *k = iogp_model_source_label(m, i, "aggregate");
	return k && !strcmp(k, "job");
}

/* A row per node, kind[node] what it is made of: 1 its sources' posix.*
 * metrics (plain sources, a node's aggregate), 2 its summaries when it has
 * no such source (behind a job aggregate), 0 neither (a job aggregate's
 * name when its members' summaries are here: their nodes show them).
 * An aggregate alone (no summaries) is a row: "job NAME" for a job's. */
static void node_rows(iogp_node_table *t, const iogp_model *m, const uint8_t *roles,
                     uint8_t *kind)
{
	size_t nn = iogp_model_node_count(m), ns = iogp_model_source_count(m), plain = 0;
	for (size_t i = 0; i < nn; i++) {
		row_init(&t->rows[i]);
		copy_name(t->rows[i].name, sizeof(t->rows[i].name), iogp_model_node(m, i));
		copy_name(t->rows[i].node, sizeof(t->rows[i].node), iogp_model_node(m, i));
		t->n++;
	}
	while (plain < ns && roles[plain] == IOGP_ROLE_PLAIN)
		plain++;
	if (plain == ns) {   /* no relay: every node from its sources, as ever */
		memset(kind, 1, nn);
		return;
	}
	for (size_t i = 0; i < ns; i++) {
		iogp_source_info si;
		long ni;
		if (iogp_model_source(m, i, &si) < 0 || (ni = node_index(si.node_index, nn)) < 0)
			continue;
		if (roles[i] == IOGP_ROLE_SUMMARY) {
			if (!kind[ni])
				kind[ni] = 2;
			continue;
		}
		int job = job_aggregate(m, i);
		if (roles[i] == IOGP_ROLE_SUMMARISED && job)
			continue;
		kind[ni] = 1;
		if (job)
			snprintf(t->rows[ni].name, sizeof(t->rows[ni].name), "job %s", si.node);
	}
}

/* Text appended at *at in buf of size n, cut to fit (snprintf's "%s%lld"
 * without its cost: 50,000 names a frame for a table of sources). */
static void put_str(char *buf, size_t n, size_t *at, const char *s)
{
	size_t k = strnlen(s, n - 1 - *at);
	memcpy(buf + *at, s, k);
	*at += k;
	buf[*at] = '\0';
}

static void put_num(char *buf, size_t n, size_t *at, int64_t v)
{
	char d[24];
	int k = (int)sizeof(d);
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	d[--k] = '\0';
	do
		d[--k] = (char)('0' + u % 10);
	while ((u /= 10) != 0);
	if (v < 0)
		d[--k] = '-';
	put_str(buf, n, at, d + k);
}

/* A source's row: "rank 3 (node001)", "pid 77 (node001)", an aggregate
 * of n members (no summaries of them here) "48 sources (node001)";
 * without the node when the table is one node's. */
static void source_row(iogp_nt_row *r, const iogp_source_info *si, uint32_t aggregate, int one_node)
{
	row_init(r);
	r->source = si->id;
	r->rank = si->rank;
	r->pid = si->pid;
	copy_name(r->node, sizeof(r->node), si->node);
	size_t at = 0, n = sizeof(r->name);
	if (aggregate) {
		put_num(r->name, n, &at, aggregate);
		put_str(r->name, n, &at, " sources");
	} else {
		put_str(r->name, n, &at, si->rank >= 0 ? "rank " : "pid ");
		put_num(r->name, n, &at, si->rank >= 0 ? si->rank : si->pid);
	}
	if (!one_node) {
		put_str(r->name, n, &at, " (");
		put_str(r->name, n, &at, r->node);
		put_str(r->name, n, &at, ")");
	}
}

/* Node rows made of nothing (kind 0) left out, the order kept. */
static void drop_empty(iogp_node_table *t, const uint8_t *kind)
{
	size_t k = 0;
	for (size_t i = 0; i < t->n; i++)
		if (kind[i])
			t->rows[k++] = t->rows[i];
	t->n = k;
}

/* The rows (cap of them) and the build's working memory (spans, roles,
 * kinds, the I/O times for the median), kept in t for the next build: a
 * frame's table at 50,000 sources spent a third of its time in calloc. */
struct work {
	iogp_source_span *spans;   /* every source's */
	uint64_t *lo, *hi;
	double *io;
	double *sums;              /* every source's I/O time (a lazy table of sources) */
	uint32_t *src;             /* a table of sources: each row's source index */
	uint8_t *roles, *kind;
};

static int work_get(iogp_node_table *t, size_t cap, size_t ns, struct work *w)
{
	size_t c = cap ? cap : 1, n = ns ? ns : 1;
	if (c > t->cap) {
		free(t->rows);
		t->rows = malloc(c * sizeof(*t->rows));
		t->cap = t->rows ? c : 0;
		if (!t->rows)
			return IOGP_ENOMEM;
	}
	size_t need = n * sizeof(iogp_source_span) + n * sizeof(double) +
	              c * (2 * sizeof(uint64_t) + sizeof(double) + sizeof(uint32_t) + 1) + n;
	if (need > t->scratch_len) {
		free(t->scratch);
		t->scratch = malloc(need);
		t->scratch_len = t->scratch ? need : 0;
		if (!t->scratch)
			return IOGP_ENOMEM;
	}
	char *p = t->scratch;
	w->spans = (iogp_source_span *)(void *)p;
	p += n * sizeof(iogp_source_span);
	w->lo = (uint64_t *)(void *)p;
	w->hi = w->lo + c;
	w->io = (double *)(void *)(w->hi + c);
	w->sums = w->io + c;
	w->src = (uint32_t *)(void *)(w->sums + n);
	w->kind = (uint8_t *)(w->src + c);
	w->roles = w->kind + c;
	memset(w->lo, 0, 2 * c * sizeof(uint64_t));
	memset(w->kind, 0, c);
	return 0;
}

int iogp_node_table_build(iogp_node_table *t, const iogp_model *m, const iogp_nt_opts *o)
{
	memset(t, 0, sizeof(*t));
	return iogp_node_table_rebuild(t, m, o);
}

int iogp_node_table_rebuild(iogp_node_table *t, const iogp_model *m, const iogp_nt_opts *o)
{
	iogp_nt_row *rows = t->rows;
	void *scr = t->scratch;
	size_t cap = t->cap, scr_len = t->scratch_len;
	memset(t, 0, sizeof(*t));
	t->rows = rows;
	t->cap = cap;
	t->scratch = scr;
	t->scratch_len = scr_len;
	t->worst = -1;
	t->median_io_s = NAN;
	t->scope = o && o->scope == IOGP_NT_SOURCES ? IOGP_NT_SOURCES : IOGP_NT_NODES;
	t->layer = o && iogp_layer_get(o->layer) ? o->layer : IOGP_LAYER_POSIX;
	const iogp_model_opts *mo = iogp_model_get_opts(m);
	t->has_qd = iogp_layer_slot_metric(t->layer, IOGP_SLOT_QUEUE_DEPTH) != NULL;
	if (!m || !mo)
		return 0;
	if (o && o->window_s > 0 && mo->live && mo->window_slot_ns) {
		uint64_t S = mo->window_slot_ns, w = (uint64_t)(o->window_s * 1e9);
		if (w > mo->window_max_ns)
			w = mo->window_max_ns;
		t->window_s = o->window_s;
		t->win_now = iogp_model_clock(m);
		t->win_start = t->win_now > w ? (t->win_now - w) / S * S : 0;   /* the first slot the window meets */
	}
	ctx c;
	ctx_init(&c, t, m);
	size_t nn = iogp_model_node_count(m), ns = iogp_model_source_count(m);
	/* every node's logged bins applied first, the next nodes' sums
	 * fetched while one is settled, not node by node as each row's first
	 * query would (live at 50,000 sources, ten presses of key 7 each way,
	 * alternated: the settle and the rows 64 ms on average, 73 without). The
	 * settle changes no answer: the model is logically const across it,
	 * as across any query that applies a log. */
	iogp_model *mm = (iogp_model *)(uintptr_t)m;
	int was_unsettled = iogp_model_reads_unsettled(m);   /* the caller's, kept */
	int (*stop)(void *) = o ? o->stop : NULL;
	void *stop_arg = o ? o->stop_arg : NULL;
	if (t->scope == IOGP_NT_NODES) {
		/* settle_ns 0: every node, in one call, or in steps with the stop
		 * hook asked between them (what a step applied stays applied);
		 * else a frame that must not wait (a key's, at thousands of
		 * nodes): what fits in the time, in the idle rounds' order (the
		 * nodes waiting longest next), the rest read as they stand */
		uint64_t budget = o ? o->settle_ns : 0, t0 = iogp_mono_ns();
		uint64_t end = budget > UINT64_MAX - t0 ? UINT64_MAX : t0 + budget;
		size_t step = budget || stop ? SETTLE_STEP : nn;
		for (size_t k = 0; k < nn; k += step) {
			if (budget && iogp_mono_ns() >= end)
				break;
			if (!budget && stop && stop(stop_arg))
				return IOGP_ESTOPPED;
			iogp_model_settle(mm, step);
		}
		if (budget && (t->unsettled = iogp_model_unsettled(m)))
			iogp_model_read_unsettled(mm, 1);
	}
	struct work w = { 0 };
	int rc = work_get(t, t->scope == IOGP_NT_NODES ? nn : ns, ns, &w);
	uint64_t *lo = w.lo, *hi = w.hi;
	uint8_t *roles = w.roles, *kind = w.kind;
	/* every source's node, times and role in one pass; the roles again
	 * (which aggregates are summarised) only behind a relay with both */
	int relayed = 0;
	if (!rc)
		rc = iogp_model_source_spans(m, w.spans, &relayed);
	for (size_t i = 0; i < ns && !rc; i++)
		roles[i] = w.spans[i].role;
	if (!rc && relayed)
		rc = iogp_model_source_roles(m, roles);
	if (t->scope == IOGP_NT_NODES && !rc)
		node_rows(t, m, roles, kind);
	/* spans: a node's its sources' together, their wall times added up for the share */
	for (size_t i = 0; i < ns && !rc; i++) {
		uint64_t a, b;
		source_span(&c, &w.spans[i], &a, &b);
		iogp_nt_row *r;
		size_t k;
		uint32_t members = members_of(m, i, roles[i]);
		if (t->scope == IOGP_NT_NODES) {
			long ni = node_index(w.spans[i].node_index, nn);
			/* a node's row: from its posix sources, else its summaries */
			if (ni < 0 || !kind[ni] || kind[ni] != (roles[i] == IOGP_ROLE_SUMMARY ? 2 : 1) ||
			    (roles[i] == IOGP_ROLE_SUMMARISED && job_aggregate(m, i)))
				continue;
			k = (size_t)ni;
			r = &t->rows[k];
		} else {
			iogp_source_info si;   /* a row of its own: its names */
			if (roles[i] == IOGP_ROLE_SUMMARISED || iogp_model_source(m, i, &si) < 0)
				continue;   /* a summarised aggregate: its members' summaries are the rows */
			if (o && o->node && strcmp(o->node, si.node ? si.node : ""))
				continue;
			k = t->n++;
			r = &t->rows[k];
			w.src[k] = (uint32_t)i;
			kind[k] = roles[i] == IOGP_ROLE_SUMMARY ? 2 : 1;
			source_row(r, &si, roles[i] == IOGP_ROLE_AGGREGATE ? members : 0, o && o->node);
		}
		r->sources += members;
		if (b > a) {
			if (!hi[k] || a < lo[k])
				lo[k] = a;
			if (b > hi[k])
				hi[k] = b;
			/* an aggregate: its members' wall times, as if there all along */
			r->proc_s += (double)(b - a) / 1e9 * members;
		}
	}
	/* lazy: the parts of the order's column; a table of sources since
	 * the start takes every source's I/O time in one pass (in place, not
	 * a copy of three histograms a row) */
	int lazy = o && o->lazy, parts = lazy ? parts_of(o->lazy_col) : PEND_ALL;
	int io_each = !rc && lazy && !(parts & PEND_HISTS) && t->scope == IOGP_NT_SOURCES && !c.window &&
	              !(o && o->node);   /* one node's dozen ranks: a query each, not every source's */
	int have_lat = 0;
	for (size_t i0 = 0; i0 < ns && io_each && !rc; i0 += EACH_STEP) {
		if (stop && stop(stop_arg)) {   /* the pass is ~40 ms at 50,000 */
			rc = IOGP_ESTOPPED;
			break;
		}
		const char *lat[3] = { c.metric[lat_slot[0]], c.metric[lat_slot[1]], c.metric[lat_slot[2]] };
		size_t k = ns - i0 < EACH_STEP ? ns - i0 : EACH_STEP;
		have_lat = iogp_model_hist_sums_each(m, lat, 3, i0, k, w.sums + i0) == 0;
		if (!have_lat)
			break;
	}
	for (size_t i = 0; i < t->n && !rc; i++) {
		if (stop && i % STOP_ROWS == 0 && stop(stop_arg)) {
			rc = IOGP_ESTOPPED;
			break;
		}
		iogp_nt_row *r = &t->rows[i];
		iogp_sel sel = row_sel(t, r);
		r->span_s = hi[i] > lo[i] ? (double)(hi[i] - lo[i]) / 1e9 : 0;
		if (!kind[i])
			continue;   /* left out below */
		if (kind[i] == 2) {
			fill_summary(&c, &sel, t->layer, r);
			t->from_summaries++;
		} else {
			if (io_each)
				r->v[IOGP_NT_IOTIME] = have_lat ? w.sums[w.src[i]] / 1e9 : NAN;
			r->pending = PEND_ALL;
			if ((rc = fill_parts(&c, &sel, r, parts, io_each)) < 0)
				break;
		}
		if (r->proc_s > 0 && !isnan(r->v[IOGP_NT_IOTIME]))
			r->v[IOGP_NT_SHARE] = r->v[IOGP_NT_IOTIME] / r->proc_s;
	}
	if (!rc && t->scope == IOGP_NT_NODES)
		drop_empty(t, kind);
	free(c.rate);
	free(c.cov);
	if (!rc)
		finish(t, w.io);
	iogp_model_read_unsettled(mm, was_unsettled);
	return rc;
}

int iogp_node_table_fill(iogp_node_table *t, const iogp_model *m, const size_t *rows, size_t n)
{
	ctx c;
	ctx_init(&c, t, m);
	if (!m || !c.mo)
		return 0;
	/* a key's table read the nodes' sums as they stood: its rows too */
	iogp_model *mm = (iogp_model *)(uintptr_t)m;
	int was_unsettled = iogp_model_reads_unsettled(m);
	if (t->unsettled)
		iogp_model_read_unsettled(mm, 1);
	int rc = 0;
	for (size_t k = 0; k < n && rc == 0; k++) {
		if (rows[k] >= t->n || !t->rows[rows[k]].pending)
			continue;
		iogp_nt_row *r = &t->rows[rows[k]];
		iogp_sel sel = row_sel(t, r);
		double io = r->v[IOGP_NT_IOTIME];
		int want = r->pending;
		rc = fill_parts(&c, &sel, r, want, 1);
		r->v[IOGP_NT_IOTIME] = io;   /* the build's: the median and shares are of it */
		if (rc < 0)
			r->pending = (uint8_t)want;
	}
	iogp_model_read_unsettled(mm, was_unsettled);
	free(c.rate);
	free(c.cov);
	return rc;
}

void iogp_node_table_free(iogp_node_table *t)
{
	free(t->rows);
	free(t->scratch);
	memset(t, 0, sizeof(*t));
	t->worst = -1;
}

/* ---- order ---- */

/* '0'-'9' (isdigit without the locale's table: ~150,000 comparisons of
 * names a frame for a table of 50,000 ranks by name) */
static int is_digit(char c)
{
	return (unsigned char)(c - '0') < 10;
}

/* Names with their numbers compared as numbers: node2 < node10, rank 9 <
 * rank 10; equal numbers with fewer leading zeros first. */
static int natcmp(const char *a, const char *b)
{
	while (*a && *b) {
		if (is_digit(*a) && is_digit(*b)) {
			const char *a0 = a, *b0 = b;
			while (*a == '0')
				a++;
			while (*b == '0')
				b++;
			const char *ae = a, *be = b;
			while (is_digit(*ae))
				ae++;
			while (is_digit(*be))
				be++;
			if (ae - a != be - b)
				return ae - a < be - b ? -1 : 1;
			int c = strncmp(a, b, (size_t)(ae - a));
			if (c)
				return c < 0 ? -1 : 1;
			if (a - a0 != b - b0)
				return a - a0 < b - b0 ? -1 : 1;
			a = ae;
			b = be;
			continue;
		}
		if (*a != *b)
			return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
		a++;
		b++;
	}
	return *a ? 1 : *b ? -1 : 0;
}

typedef struct octx {
	const iogp_node_table *t;
	int col, desc;
} octx;

static int cmp_rows(const void *pa, const void *pb, void *arg)
{
	const octx *o = arg;
	const iogp_nt_row *a = &o->t->rows[*(const size_t *)pa], *b = &o->t->rows[*(const size_t *)pb];
	if (o->col != IOGP_NT_NAME) {
		double x = a->v[o->col], y = b->v[o->col];
		if (isnan(x) != isnan(y))
			return isnan(x) ? 1 : -1;   /* no value: last either way */
		if (!isnan(x) && x != y)
			return (x < y) == !o->desc ? -1 : 1;
	}
	int c = natcmp(a->name, b->name);
	if (o->col == IOGP_NT_NAME && o->desc)
		c = -c;
	if (c)
		return c;
	if (a->source != b->source)
		return a->source < b->source ? -1 : 1;
	return *(const size_t *)pa < *(const size_t *)pb ? -1 : 1;
}

void iogp_node_table_order(const iogp_node_table *t, int col, int desc, size_t *order)
{
	for (size_t i = 0; i < t->n; i++)
		order[i] = i;
	if (col < 0 || col >= IOGP_NT_NCOLS)
		col = IOGP_NT_NAME;
	octx o = { t, col, desc };
	qsort_r(order, t->n, sizeof(*order), cmp_rows, &o);
}

int iogp_node_table_cmp(const iogp_node_table *t, int col, int desc, size_t a, size_t b)
{
	octx o = { t, col >= 0 && col < IOGP_NT_NCOLS ? col : IOGP_NT_NAME, desc };
	return cmp_rows(&a, &b, &o);
}

long iogp_node_table_fastest(const iogp_node_table *t)
{
	long best = -1;
	for (size_t i = 0; i < t->n; i++)
		if (t->rows[i].v[IOGP_NT_IOTIME] > 0 &&
		    (best < 0 || iogp_node_table_cmp(t, IOGP_NT_IOTIME, 1, i, (size_t)best) > 0))
			best = (long)i;
	return best;
}

/* The first k rows of the order (sign 1) or of its reverse (-1) into top. */
static size_t pick(const iogp_node_table *t, int col, int desc, int sign, size_t k, size_t *top)
{
	if (col < 0 || col >= IOGP_NT_NCOLS)
		col = IOGP_NT_NAME;
	octx o = { t, col, desc };
	size_t n = 0;
	for (size_t i = 0; i < t->n && k > 0; i++) {
		/* kept in order: where row i goes (cmp_rows never ties two rows) */
		if (n == k && sign * cmp_rows(&i, &top[n - 1], &o) > 0)
			continue;
		/* ahead of all kept: the rows in reverse order (the last rows of
		 * a table in the model's order) each take one look, not a search */
		size_t lo = 0, hi = n > 0 && sign * cmp_rows(&i, &top[0], &o) < 0 ? 0 : n;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (sign * cmp_rows(&top[mid], &i, &o) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		size_t last = n < k ? n : k - 1;   /* a full list drops its last */
		memmove(&top[lo + 1], &top[lo], (last - lo) * sizeof(*top));
		top[lo] = i;
		if (n < k)
			n++;
	}
	return n;
}

size_t iogp_node_table_top(const iogp_node_table *t, int col, int desc, size_t k, size_t *top)
{
	return pick(t, col, desc, 1, k, top);
}

/* The lines of an order of n > max rows known by its first max rows
 * (first[i] its i-th), its last (last[j] its n - max + j-th) and the
 * worst's place (n: none). */
static size_t lines_of(const iogp_node_table *t, size_t max, const size_t *first,
                       const size_t *last, size_t wpos, iogp_nt_line *out)
{
	size_t n = t->n, k = 0;
#define AT(i) ((long)((i) < max ? first[(i)] : last[(i) - (n - max)]))
	size_t top = max / 2, bottom = max - 1 - top;
	if (wpos < n && wpos >= top && wpos < n - bottom && max >= 3) {
		/* the worst is in the hidden middle: top, gap, worst, gap, bottom
		 * (in 3 or 4 lines: the rows around it counted only) */
		top = max >= 5 ? (max - 3 + 1) / 2 : max - 3;
		bottom = max - 3 - top;
		for (size_t i = 0; i < top; i++)
			out[k++] = (iogp_nt_line){ AT(i), 0 };
		if (wpos > top)
			out[k++] = (iogp_nt_line){ -1, wpos - top };
		out[k++] = (iogp_nt_line){ t->worst, 0 };
		if (n - bottom > wpos + 1)
			out[k++] = (iogp_nt_line){ -1, n - bottom - wpos - 1 };
		for (size_t i = n - bottom; i < n; i++)
			out[k++] = (iogp_nt_line){ AT(i), 0 };
		return k;
	}
	for (size_t i = 0; i < top; i++)
		out[k++] = (iogp_nt_line){ AT(i), 0 };
	out[k++] = (iogp_nt_line){ -1, n - top - bottom };
	for (size_t i = n - bottom; i < n; i++)
		out[k++] = (iogp_nt_line){ AT(i), 0 };
#undef AT
	return k;
}

size_t iogp_node_table_lines(const iogp_node_table *t, const size_t *order, size_t max,
                             iogp_nt_line *out)
{
	size_t n = t->n, k = 0;
	if (!max || !n)
		return 0;
	if (n <= max) {
		for (size_t i = 0; i < n; i++)
			out[k++] = (iogp_nt_line){ (long)order[i], 0 };
		return k;
	}
	size_t wpos = n;
	for (size_t i = 0; i < n && t->worst >= 0; i++)
		if (order[i] == (size_t)t->worst)
			wpos = i;
	return lines_of(t, max, order, order + (n - max), wpos, out);
}

size_t iogp_node_table_lines_by(const iogp_node_table *t, int col, int desc, size_t max,
                                iogp_nt_line *out)
{
	size_t n = t->n;
	if (!max || !n)
		return 0;
	size_t *first = malloc(2 * (n < max ? n : max) * sizeof(*first)), k = 0;
	if (!first)
		return 0;
	if (n <= max) {
		iogp_node_table_order(t, col, desc, first);
		k = iogp_node_table_lines(t, first, max, out);
		free(first);
		return k;
	}
	size_t *last = first + max;
	pick(t, col, desc, 1, max, first);
	pick(t, col, desc, -1, max, last);   /* the last first */
	for (size_t i = 0; i < max / 2; i++) {
		size_t x = last[i];
		last[i] = last[max - 1 - i];
		last[max - 1 - i] = x;
	}
	size_t wpos = n;
	if (t->worst >= 0) {   /* its place: the rows before it */
		wpos = 0;
		for (size_t i = 0; i < n; i++)
			wpos += iogp_node_table_cmp(t, col, desc, i, (size_t)t->worst) < 0;
	}
	k = lines_of(t, max, first, last, wpos, out);
	free(first);
	return k;
}

/* ---- texts ---- */

int iogp_node_table_gap(const iogp_node_table *t, size_t gap, int style, char *buf, size_t len)
{
	char n[32], d[32];
	int k = snprintf(d, sizeof(d), "%zu", gap), u = 0;
	for (int i = 0; i < k && u < (int)sizeof(n) - 2; i++) {   /* 4990 -> 4,990 */
		if (i && (k - i) % 3 == 0)
			n[u++] = ',';
		n[u++] = d[i];
	}
	n[u] = '\0';
	const char *what = t->scope == IOGP_NT_NODES ? (gap == 1 ? "node" : "nodes")
	                                             : (gap == 1 ? "process" : "processes");
	const char *dots = style == IOGP_UNITS_CELL ? "..." : "…";
	return snprintf(buf, len, "%s %s more %s %s", dots, n, what, dots);
}

static int cut_per_s(char *buf, int n)
{
	if (n >= 2 && !strcmp(buf + n - 2, "/s")) {
		buf[n - 2] = '\0';
		return n - 2;
	}
	return n;
}

int iogp_node_table_cell(const iogp_node_table *t, size_t r, int col, int style, char *buf,
                         size_t len)
{
	int cell = style == IOGP_UNITS_CELL;
	if (!len)
		return 0;
	if (r >= t->n || col < 0 || col >= IOGP_NT_NCOLS)
		return snprintf(buf, len, "?");
	const iogp_nt_row *row = &t->rows[r];
	if (col == IOGP_NT_NAME)
		return snprintf(buf, len, "%s", row->name);
	double v = row->v[col];
	if (isnan(v))
		return snprintf(buf, len, cell ? "-" : "–");
	switch (col) {
	case IOGP_NT_READ_BPS:
	case IOGP_NT_WRITE_BPS: {
		int n = iogp_fmt_rate(buf, len, "bytes", v, style);
		return cell ? cut_per_s(buf, n) : n;
	}
	case IOGP_NT_READ_OPS:
	case IOGP_NT_WRITE_OPS: {
		int n = iogp_fmt_rate(buf, len, "ops", v, style);
		return cell ? cut_per_s(buf, n) : n;
	}
	case IOGP_NT_P50:
	case IOGP_NT_P99:
		return iogp_fmt_ns(buf, len, v, style);
	case IOGP_NT_IOTIME:
		return iogp_fmt_ns(buf, len, v * 1e9, style);
	case IOGP_NT_QD99:
		return iogp_fmt_count(buf, len, v, style);
	case IOGP_NT_SHARE: {
		double p = v * 100;
		if (p > 0 && p < 0.05)
			return snprintf(buf, len, "<0.1%%");
		return snprintf(buf, len, p >= 99.95 ? "%.0f%%" : "%.1f%%", p);
	}
	case IOGP_NT_VSMED:
		return snprintf(buf, len, v >= 99.5 ? "%.0f%s" : "%.2f%s", v, cell ? "x" : "×");
	}
	return snprintf(buf, len, "?");
}

int iogp_node_table_write_csv(const iogp_node_table *t, const size_t *order, FILE *out)
{
	fprintf(out, "name,node,rank,pid,sources,span_s,read_bytes_per_s,write_bytes_per_s,"
	        "read_ops_per_s,write_ops_per_s,latency_p50_ns,latency_p99_ns,io_share_pct,"
	        "queue_depth_p99,io_time_s,io_time_vs_median\n");
	for (size_t i = 0; i < t->n; i++) {
		const iogp_nt_row *r = &t->rows[order ? order[i] : i];
		/* names come from the wire: no separators or quotes in a field */
		char name[sizeof(r->name)], node[sizeof(r->node)];
		snprintf(name, sizeof(name), "%s", r->name);
		snprintf(node, sizeof(node), "%s", r->node);
		for (char *p = name; *p; p++)
			if (*p == ',' || *p == '"' || *p == '\n' || *p == '\r')
				*p = '_';
		for (char *p = node; *p; p++)
			if (*p == ',' || *p == '"' || *p == '\n' || *p == '\r')
				*p = '_';
		fprintf(out, "%s,%s,", name, node);
		if (r->rank >= 0)
			fprintf(out, "%" PRId64, r->rank);
		fprintf(out, ",");
		if (r->pid >= 0)
			fprintf(out, "%" PRId64, r->pid);
		fprintf(out, ",%u,%.3f", r->sources, r->span_s);
		static const int cols[] = { IOGP_NT_READ_BPS, IOGP_NT_WRITE_BPS, IOGP_NT_READ_OPS,
		                            IOGP_NT_WRITE_OPS, IOGP_NT_P50, IOGP_NT_P99, IOGP_NT_SHARE,
		                            IOGP_NT_QD99, IOGP_NT_IOTIME, IOGP_NT_VSMED };
		for (size_t k = 0; k < sizeof(cols) / sizeof(*cols); k++) {
			double v = r->v[cols[k]];
			if (cols[k] == IOGP_NT_SHARE)
				v *= 100;
			if (isnan(v))
				fprintf(out, ",");
			else if (cols[k] == IOGP_NT_P50 || cols[k] == IOGP_NT_P99 || cols[k] == IOGP_NT_QD99)
				fprintf(out, ",%.0f", v);
			else
				fprintf(out, ",%.3f", v);
		}
		fprintf(out, "\n");
	}
	return ferror(out) ? IOGP_EIO : 0;
}
