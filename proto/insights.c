/* insights.c - findings computed from the model (iogp_insights.h). Every
 * threshold is in the table below, with the least data a rule needs and
 * why; the rules only read the model's queries. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iogp_err.h"
#include "iogp_insights.h"
#include "iogp_metrics.h"
#include "iogp_units.h"

/* ---- the thresholds, in one place ------------------------------------------- */

#define SMALL_SIZE 65536u          /* "small" request: under 64 KiB */
#define TINY_SIZE 4096u
#define SMALL_SHARE 0.5            /* of requests */
#define SMALL_MIN_REQS 1000u
#define RANDOM_SHARE 0.2           /* of the requests whose position is known */
#define RANDOM_MIN_REQS 100u
#define META_SHARE 0.5             /* of the time inside I/O calls */
#define META_MIN_OPS 100u
#define META_MIN_NS 10000000ull    /* 10 ms */
#define STRAGGLER_RATIO 2.0        /* I/O time against the median */
#define STRAGGLER_MIN_SOURCES 4u
#define STRAGGLER_MIN_NS 1000000ull  /* median I/O time at least 1 ms */
#define STRAGGLER_MIN_GAP_NS 20000000ull  /* and the straggler 20 ms above it */
#define ONE_RANK_SHARE 0.99
#define ONE_RANK_MIN_SOURCES 4u
#define ONE_RANK_MIN_BYTES (1u << 20)
#define SMALL_FILES_MIN 100u
#define FPP_MIN_FILES 1000u
#define STDIO_MIN_OPS 10000u
#define STDIO_MEAN_MAX 256u        /* bytes per call */
#define SYNC_SHARE 0.5             /* sync calls per write */
#define SYNC_MIN_WRITES 100u

static const iogp_insight_rule rules[IOGP_INS_N] = {
	{ IOGP_INS_SMALL_REQUESTS, "small-requests", "> 50% of a direction's requests under 64 KiB",
	  ">= 1,000 requests", "small requests pay the per-request cost of every layer below; "
	  "Drishti flags jobs whose requests are mostly small" },
	{ IOGP_INS_RANDOM_FILE, "random-file", "> 20% of a file's requests before the previous one",
	  ">= 100 requests with a known position", "random access defeats read-ahead and "
	  "write-behind; SummarIO and Drishti use the same 20%" },
	{ IOGP_INS_META_DOMINATES, "metadata-time", "metadata and sync time > 50% of the time in I/O calls",
	  ">= 100 metadata calls and >= 10 ms of them", "open/stat/close storms load the metadata "
	  "servers that every job shares" },
	{ IOGP_INS_STRAGGLER, "straggler", "a source's I/O time >= 2x the median",
	  ">= 4 sources with I/O, median >= 1 ms, >= 20 ms above it", "the slowest rank sets the pace of a bulk-"
	  "synchronous job (darshan#306, the worst-case rank)" },
	{ IOGP_INS_ONE_RANK, "one-rank", ">= 99% of the bytes from one source",
	  ">= 4 sources and >= 1 MiB moved", "I/O funnelled through rank 0 leaves the file "
	  "system's parallelism unused" },
	{ IOGP_INS_SMALL_FILES, "small-files", "a median file under 64 KiB moved",
	  ">= 100 files", "many small files cost a metadata operation each for little data" },
	{ IOGP_INS_FPP_MANY, "file-per-process", "a file-per-process phase over >= 1,000 files",
	  "that phase", "thousands of files per step multiply metadata load and later "
	  "post-processing" },
	{ IOGP_INS_STDIO_TEXT, "stdio-text", "stdio calls moving < 256 B on average",
	  ">= 10,000 stdio calls", "formatted text I/O spends its time in library calls, "
	  "not in storage" },
	{ IOGP_INS_SYNC_EVERY_WRITE, "sync-every-write", ">= 1 sync call per 2 writes",
	  ">= 100 writes", "a sync per write waits for the device every time" },
};

const iogp_insight_rule *iogp_insight_rules(size_t *n)
{
	if (n)
		*n = IOGP_INS_N;
	return rules;
}

/* ---- helpers ----------------------------------------------------------------- */

struct out {
	iogp_insight *v;
	size_t n, max;
};

static void add(struct out *o, int rule, int sev, const char *panel, const char *where,
                const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static void add(struct out *o, int rule, int sev, const char *panel, const char *where,
                const char *fmt, ...)
{
	if (o->n >= o->max)
		return;
	iogp_insight *x = &o->v[o->n++];
	va_list ap;
	x->rule = rule;
	x->severity = sev;
	x->panel = panel;
	snprintf(x->where, sizeof x->where, "%s", where ? where : "");
	va_start(ap, fmt);
	vsnprintf(x->text, sizeof x->text, fmt, ap);
	va_end(ap);
}

static uint64_t counter(const iogp_model *m, const char *name, const iogp_sel *sel)
{
	uint64_t v = 0;
	iogp_model_counter(m, name, sel, &v);
	return v;
}

/* Requests of h under `below` bytes and the bytes they carry. */
static void below(const iogp_hist *h, uint64_t limit, uint64_t *reqs, double *bytes)
{
	uint64_t lo, hi;
	*reqs = 0;
	*bytes = 0;
	for (size_t i = 0; i < h->n; i++) {
		if (iogp_bins_bounds(&h->scheme, h->bins[i].idx, &lo, &hi) < 0 || lo >= limit)
			continue;
		if (hi < limit) {
			*reqs += h->bins[i].count;
			*bytes += iogp_hist_bin_sum(h, i);
		}
	}
}

static double hist_sum(const iogp_model *m, const char *name, const iogp_sel *sel)
{
	iogp_hist h;
	double s = iogp_model_hist(m, name, sel, &h) == 0 ? iogp_hist_sum(&h) : 0.0;
	iogp_hist_free(&h);
	return s;
}

static void source_name(const iogp_model *m, size_t i, char *buf, size_t len)
{
	iogp_source_info si;
	if (iogp_model_source(m, i, &si) < 0) {
		snprintf(buf, len, "?");
		return;
	}
	const char *members = iogp_model_source_label(m, i, "sources");
	if (members && iogp_model_source_label(m, i, "aggregate"))   /* as the nodes table names it */
		snprintf(buf, len, "%s sources (%s)", members, si.node);
	else if (si.rank >= 0)
		snprintf(buf, len, "rank %" PRId64 " (%s)", si.rank, si.node);
	else
		snprintf(buf, len, "pid %" PRId64 " (%s)", si.pid, si.node);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* ---- the rules ------------------------------------------------------------------ */

static void small_requests(const iogp_model *m, const iogp_sel *sel, struct out *o)
{
	static const char *const names[2] = { IOGP_M_READ_SIZE, IOGP_M_WRITE_SIZE };
	static const char *const dir[2] = { "reads", "writes" };
	for (int op = 0; op < 2; op++) {
		iogp_hist h;
		if (iogp_model_hist(m, names[op], sel, &h) < 0 || h.total < SMALL_MIN_REQS) {
			iogp_hist_free(&h);
			continue;
		}
		uint64_t small, tiny;
		double sb, tb, all = iogp_hist_sum(&h);
		below(&h, SMALL_SIZE, &small, &sb);
		below(&h, TINY_SIZE, &tiny, &tb);
		if ((double)small > SMALL_SHARE * (double)h.total)
			add(o, IOGP_INS_SMALL_REQUESTS, small == h.total ? IOGP_SEV_HIGH : IOGP_SEV_WARN,
			    "size", "", "%s: %.0f%% of %" PRIu64 " requests are under 64 KiB (%.0f%% under "
			    "4 KiB), carrying %.1f%% of the bytes", dir[op],
			    100.0 * (double)small / (double)h.total, h.total,
			    100.0 * (double)tiny / (double)h.total, all > 0 ? 100.0 * sb / all : 0.0);
		iogp_hist_free(&h);
	}
}

static void files_rules(const iogp_model *m, const iogp_sel *sel, struct out *o)
{
	iogp_file_info *f;
	size_t n, shown = 0, nfiles = 0;
	uint64_t beyond = 0;   /* files past the sources' record limits or folded by directory */
	if (iogp_model_files(m, sel, IOGP_FR_POSIX, &f, &n) < 0)
		return;
	uint64_t *sizes = malloc((n + 1) * sizeof *sizes);
	for (size_t i = 0; i < n; i++) {
		if (f[i].other || (f[i].total.flags & IOGP_FR_DIRAGG)) {
			beyond += f[i].total.overflow;   /* sized by the files named */
			continue;
		}
		uint64_t b = f[i].total.op[0].bytes + f[i].total.op[1].bytes;
		if (sizes && (f[i].total.op[0].ops || f[i].total.op[1].ops))
			sizes[nfiles++] = b;
		for (int op = 0; op < 2 && shown < 3; op++) {
			const iogp_filerec_op *x = &f[i].total.op[op];
			uint64_t known = x->consec + x->seq + x->random;
			if (known < RANDOM_MIN_REQS || (double)x->random <= RANDOM_SHARE * (double)known)
				continue;
			add(o, IOGP_INS_RANDOM_FILE, IOGP_SEV_WARN, "access", f[i].path,
			    "random %s on %s: %.0f%% of %" PRIu64 " requests before the previous one",
			    op ? "writes" : "reads", f[i].path, 100.0 * (double)x->random / (double)known, known);
			shown++;
		}
	}
	if (sizes && nfiles + beyond >= SMALL_FILES_MIN && nfiles > 0) {
		/* the median file by bytes moved */
		qsort(sizes, nfiles, sizeof *sizes, cmp_u64);
		uint64_t med = sizes[nfiles / 2];
		if (med < SMALL_SIZE) {
			char s[32];
			iogp_fmt_bytes(s, sizeof s, (double)med, IOGP_UNITS_WIDE);
			add(o, IOGP_INS_SMALL_FILES, IOGP_SEV_WARN, "files", "",
			    "many small files: %" PRIu64 " files, the median file moved %s",
			    (uint64_t)nfiles + beyond, s);
		}
	}
	free(sizes);
	iogp_model_files_free(f);
}

static void meta_rule(const iogp_model *m, const iogp_sel *sel, struct out *o)
{
	uint64_t ops = counter(m, IOGP_M_META_OPS, sel) + counter(m, IOGP_M_SYNC_OPS, sel);
	double meta = hist_sum(m, IOGP_M_META_LATENCY, sel);
	double data = hist_sum(m, IOGP_M_READ_LATENCY, sel) + hist_sum(m, IOGP_M_WRITE_LATENCY, sel);
	if (ops < META_MIN_OPS || meta < (double)META_MIN_NS || meta <= META_SHARE * (meta + data))
		return;
	char t[32], d[32];
	iogp_fmt_ns(t, sizeof t, meta, IOGP_UNITS_WIDE);
	iogp_fmt_ns(d, sizeof d, data, IOGP_UNITS_WIDE);
	add(o, IOGP_INS_META_DOMINATES, IOGP_SEV_WARN, "latency", "",
	    "metadata dominates: %" PRIu64 " metadata and sync calls took %s, reads and writes %s "
	    "(%.0f%% of the time in I/O calls)", ops, t, d, 100.0 * meta / (meta + data));
}

/* ---- the per-source rules, in steps (iogp_insights_begin) --------------------- */

#define CHUNK 4096u   /* sources a metric's pass takes at once */

struct iogp_insights_job {
	const iogp_model *m;
	uint64_t serial;        /* m's: a later model may take its address */
	iogp_sel sel;
	char *node;             /* sel.node, copied */
	size_t all, next;       /* sources when it began; the next to take */
	size_t ns, k, best;     /* sources of the selection that count; those with
	                         * I/O time; the top one */
	uint64_t total, top;    /* bytes moved by all; by the top one */
	uint8_t *roles;         /* iogp_model_source_roles, when it began */
	double *t;              /* the I/O time of the k sources with some ... */
	size_t *who;            /* ... and their index */
	uint64_t c[CHUNK], b[CHUNK];   /* a chunk's counter; bytes moved */
	double h[CHUNK], io[CHUNK];    /* a chunk's histogram sum; ns in I/O calls */
};

/* For the n sources from first: bytes moved into j->b, ns in I/O calls into
 * j->io; behind an aggregating relay a member's from its summary
 * (iogp_model_source_roles). Each metric in one pass over the chunk. */
static void sources_io(iogp_insights_job *j, size_t first, size_t n)
{
	static const char *const lat[3] = { IOGP_M_READ_LATENCY, IOGP_M_WRITE_LATENCY, IOGP_M_META_LATENCY };
	static const char *const plain[2] = { IOGP_M_READ_BYTES, IOGP_M_WRITE_BYTES };
	static const char *const summ[2] = { IOGP_M_SUMMARY_READ_BYTES, IOGP_M_SUMMARY_WRITE_BYTES };
	const uint8_t *roles = j->roles + first;
	const iogp_model *m = j->m;

	for (size_t i = 0; i < n; i++) {
		j->b[i] = 0;
		j->io[i] = 0;
	}
	for (int k = 0; k < 3; k++)
		if (iogp_model_hist_sum_each(m, lat[k], first, n, j->h) == 0)
			for (size_t i = 0; i < n; i++)
				j->io[i] += roles[i] == IOGP_ROLE_SUMMARY ? 0 : j->h[i];
	for (int k = 0; k < 2; k++) {
		if (iogp_model_counter_each(m, plain[k], first, n, j->c) == 0)
			for (size_t i = 0; i < n; i++)
				j->b[i] += roles[i] == IOGP_ROLE_SUMMARY ? 0 : j->c[i];
		if (iogp_model_counter_each(m, summ[k], first, n, j->c) == 0)
			for (size_t i = 0; i < n; i++)
				j->b[i] += roles[i] == IOGP_ROLE_SUMMARY ? j->c[i] : 0;
	}
	if (iogp_model_counter_each(m, IOGP_M_SUMMARY_IO_TIME, first, n, j->c) == 0)
		for (size_t i = 0; i < n; i++)
			if (roles[i] == IOGP_ROLE_SUMMARY)
				j->io[i] = (double)j->c[i];
}

/* The n sources from first into the job's sums. */
static void sources_take(iogp_insights_job *j, size_t first, size_t n)
{
	const iogp_sel *sel = &j->sel;

	for (size_t x = 0; x < n; x++) {
		size_t i = first + x;
		iogp_source_info si;
		if (j->roles[i] == IOGP_ROLE_SUMMARISED)
			continue;   /* its members' summaries stand for it */
		if (sel->kind != IOGP_SEL_ALL && iogp_model_source(j->m, i, &si) < 0)
			continue;
		if (sel->kind == IOGP_SEL_NODE && strcmp(si.node, sel->node))
			continue;
		if (sel->kind == IOGP_SEL_SOURCE && si.id != sel->source)
			continue;
		j->ns++;   /* the selection's, not the model's */
		j->total += j->b[x];
		if (j->b[x] > j->top) {
			j->top = j->b[x];
			j->best = i;
		}
		if (j->io[x] > 0) {
			j->t[j->k] = j->io[x];
			j->who[j->k++] = i;
		}
	}
}

void iogp_insights_free(iogp_insights_job *j)
{
	if (j == NULL)
		return;
	free(j->node);
	free(j->roles);
	free(j->t);
	free(j->who);
	free(j);
}

iogp_insights_job *iogp_insights_begin(const iogp_model *m, const iogp_sel *sel)
{
	if (m == NULL)
		return NULL;
	iogp_insights_job *j = calloc(1, sizeof *j);
	if (j == NULL)
		return NULL;
	size_t n = iogp_model_source_count(m);
	j->m = m;
	j->serial = iogp_model_serial(m);
	j->sel = sel ? *sel : (iogp_sel){ .kind = IOGP_SEL_ALL };
	if (j->sel.kind == IOGP_SEL_NODE && (j->node = strdup(j->sel.node ? j->sel.node : "")) == NULL)
		goto fail;
	j->sel.node = j->node;
	j->all = n;
	j->roles = malloc(n + 1);
	j->t = malloc((n + 1) * sizeof *j->t);
	j->who = malloc((n + 1) * sizeof *j->who);
	if (!j->roles || !j->t || !j->who || iogp_model_source_roles(m, j->roles) < 0)
		goto fail;
	return j;
fail:
	iogp_insights_free(j);
	return NULL;
}

int iogp_insights_step(iogp_insights_job *j, const iogp_model *m, size_t sources)
{
	if (j == NULL || iogp_model_serial(m) != j->serial || iogp_model_source_count(m) < j->all)
		return IOGP_EINVAL;
	while (j->next < j->all && sources > 0) {
		size_t n = j->all - j->next;
		if (n > CHUNK)
			n = CHUNK;
		if (n > sources)
			n = sources;
		sources_io(j, j->next, n);
		sources_take(j, j->next, n);
		j->next += n;
		sources -= n;
	}
	return j->next < j->all;
}

/* The one-rank and straggler rules, once every source is in. */
static void source_rules(iogp_insights_job *j, struct out *o)
{
	char name[96];
	const iogp_model *m = j->m;

	if (j->ns >= ONE_RANK_MIN_SOURCES && j->total >= ONE_RANK_MIN_BYTES &&
	    (double)j->top >= ONE_RANK_SHARE * (double)j->total) {
		char b[32];
		source_name(m, j->best, name, sizeof name);
		iogp_fmt_bytes(b, sizeof b, (double)j->total, IOGP_UNITS_WIDE);
		add(o, IOGP_INS_ONE_RANK, IOGP_SEV_WARN, "nodes", name,
		    "one source does the I/O: %s moved %.1f%% of %s among %zu sources", name,
		    100.0 * (double)j->top / (double)j->total, b, j->ns);
	}
	size_t k = j->k;
	double *sorted = k >= STRAGGLER_MIN_SOURCES ? malloc(k * sizeof *sorted) : NULL;
	if (sorted == NULL)
		return;
	memcpy(sorted, j->t, k * sizeof *sorted);
	qsort(sorted, k, sizeof *sorted, cmp_double);
	double med = k % 2 ? sorted[k / 2] : (sorted[k / 2 - 1] + sorted[k / 2]) / 2;
	free(sorted);
	size_t worst = 0;
	for (size_t i = 1; i < k; i++)
		if (j->t[i] > j->t[worst])
			worst = i;
	double *t = j->t;
	if (med >= (double)STRAGGLER_MIN_NS && t[worst] >= STRAGGLER_RATIO * med &&
	    t[worst] - med >= (double)STRAGGLER_MIN_GAP_NS) {
		char a[32], b[32];
		source_name(m, j->who[worst], name, sizeof name);
		iogp_fmt_ns(a, sizeof a, t[worst], IOGP_UNITS_WIDE);
		iogp_fmt_ns(b, sizeof b, med, IOGP_UNITS_WIDE);
		add(o, IOGP_INS_STRAGGLER, t[worst] >= 4 * med ? IOGP_SEV_HIGH : IOGP_SEV_WARN, "nodes",
		    name, "straggler: %s spent %s in I/O calls, %.1fx the median %s of %zu sources",
		    name, a, t[worst] / med, b, k);
	}
}

static void phase_rules(const iogp_model *m, struct out *o)
{
	iogp_phase *p;
	size_t n;
	if (iogp_model_phases(m, NULL, &p, &n, NULL) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		if (p[i].shared || p[i].ranks < 2 || p[i].files < FPP_MIN_FILES)
			continue;
		add(o, IOGP_INS_FPP_MANY, IOGP_SEV_WARN, "phases", "",
		    "file per process: %u ranks %s %u files in one phase", p[i].ranks,
		    p[i].op ? "wrote" : "read", p[i].files);
		break;
	}
	free(p);
}

static void stdio_rule(const iogp_model *m, const iogp_sel *sel, struct out *o)
{
	uint64_t ops = counter(m, IOGP_M_STDIO_READ_OPS, sel) + counter(m, IOGP_M_STDIO_WRITE_OPS, sel);
	uint64_t bytes = counter(m, IOGP_M_STDIO_READ_BYTES, sel) + counter(m, IOGP_M_STDIO_WRITE_BYTES, sel);
	if (ops < STDIO_MIN_OPS || (double)bytes >= (double)STDIO_MEAN_MAX * (double)ops)
		return;
	char n[32];
	iogp_fmt_count(n, sizeof n, (double)ops, IOGP_UNITS_WIDE);
	add(o, IOGP_INS_STDIO_TEXT, IOGP_SEV_INFO, "size", "",
	    "stdio text I/O: %s stdio calls moving %.0f B each on average", n, (double)bytes / (double)ops);
}

static void sync_rule(const iogp_model *m, const iogp_sel *sel, struct out *o)
{
	uint64_t w = counter(m, IOGP_M_WRITE_OPS, sel), s = counter(m, IOGP_M_SYNC_OPS, sel);
	uint64_t so = counter(m, IOGP_M_SYNC_OPENS, sel);
	if (w < SYNC_MIN_WRITES)
		return;
	if ((double)s >= SYNC_SHARE * (double)w)
		add(o, IOGP_INS_SYNC_EVERY_WRITE, IOGP_SEV_WARN, "latency", "",
		    "a sync after nearly every write: %" PRIu64 " sync calls for %" PRIu64 " writes", s, w);
	else if (so > 0)
		add(o, IOGP_INS_SYNC_EVERY_WRITE, IOGP_SEV_INFO, "latency", "",
		    "%" PRIu64 " files opened with O_SYNC/O_DSYNC: each of their writes waits for the device",
		    so);
}

static int by_severity(const void *a, const void *b)
{
	const iogp_insight *x = a, *y = b;
	if (x->severity != y->severity)
		return y->severity - x->severity;
	return x->rule - y->rule;
}

int iogp_insights_finish(iogp_insights_job *j, const iogp_model *m, iogp_insight *out, size_t max,
                         size_t *n)
{
	int rc = iogp_insights_step(j, m, SIZE_MAX);
	struct out o = { out, 0, max };
	const iogp_sel *sel = j ? &j->sel : NULL;

	*n = 0;
	if (rc < 0)
		return rc;
	small_requests(m, sel, &o);
	files_rules(m, sel, &o);
	meta_rule(m, sel, &o);
	source_rules(j, &o);
	if (sel->kind == IOGP_SEL_ALL)
		phase_rules(m, &o);
	stdio_rule(m, sel, &o);
	sync_rule(m, sel, &o);
	qsort(out, o.n, sizeof *out, by_severity);
	*n = o.n;
	return 0;
}

int iogp_model_insights(const iogp_model *m, const iogp_sel *sel, iogp_insight *out, size_t max,
                        size_t *n)
{
	*n = 0;
	if (m == NULL)
		return IOGP_EINVAL;
	iogp_insights_job *j = iogp_insights_begin(m, sel);
	if (j == NULL)
		return IOGP_ENOMEM;
	int rc = iogp_insights_finish(j, m, out, max, n);
	iogp_insights_free(j);
	return rc;
}
