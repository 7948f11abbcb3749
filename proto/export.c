/* export.c - load replay files into a model; per-node time series and CSV. */
#include <inttypes.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "iogp_err.h"
#include "iogp_export.h"

int iogp_load_file(const char *path, iogp_model *m, iogp_load_stats *st,
                   char *err, size_t errlen)
{
	iogp_replay_reader *r;
	int rc = iogp_replay_open(&r, path, err, errlen);
	if (rc < 0)
		return rc;
	memset(st, 0, sizeof(*st));
	iogp_replay_get_info(r, &st->info);
	iogp_msg msg;
	iogp_msg_init(&msg);
	iogp_replay_rec rec;
	while ((rc = iogp_replay_next(r, &rec)) == 0) {
		st->records++;
		if (rec.keyframe)
			st->keyframe_records++;
		int d = iogp_msg_decode(&msg, rec.payload, rec.len, NULL, 0);
		if (d < 0) {
			st->bad++;
			continue;
		}
		st->by_kind[msg.kind >= 1 && msg.kind <= 4 ? msg.kind : 0]++;
		int a = iogp_model_apply(m, &msg, rec.recv_ns);
		if (a == IOGP_EUNKNOWN)
			st->unknown++;
	}
	iogp_replay_reader_stats(r, &st->file);
	iogp_msg_free(&msg);
	iogp_replay_close_reader(r);
	return rc == IOGP_EEOF ? 0 : rc;
}

/* ---- series ---- */

#define SERIES_MAX_BINS (16u << 20)
#define SERIES_MAX_SOURCES 100000

typedef struct src_map {
	uint64_t source;
	uint32_t metric_id;   /* id of the metric in this source's catalog */
	int has_metric;
	size_t node;          /* index into s->nodes */
	int has_node;
} src_map;

typedef struct series_ctx {
	iogp_series *s;
	const char *metric;
	src_map *src;
	size_t nsrc, srccap;
	int kind_set;
} series_ctx;

static src_map *src_get(series_ctx *c, uint64_t id)
{
	for (size_t i = 0; i < c->nsrc; i++)   /* few sources per file typically */
		if (c->src[i].source == id)
			return &c->src[i];
	if (c->nsrc >= SERIES_MAX_SOURCES)
		return NULL;
	if (c->nsrc == c->srccap) {
		size_t cap = c->srccap ? c->srccap * 2 : 64;
		src_map *n = realloc(c->src, cap * sizeof(*n));
		if (!n)
			return NULL;
		c->src = n;
		c->srccap = cap;
	}
	src_map *e = &c->src[c->nsrc++];
	memset(e, 0, sizeof(*e));
	e->source = id;
	return e;
}

static int node_get(iogp_series *s, const char *name, size_t *idx)
{
	for (size_t i = 0; i < s->nnodes; i++)
		if (!strcmp(s->nodes[i], name)) {
			*idx = i;
			return 0;
		}
	char **nn = realloc(s->nodes, (s->nnodes + 1) * sizeof(*nn));
	if (!nn)
		return IOGP_ENOMEM;
	s->nodes = nn;
	double **nv = realloc(s->v, (s->nnodes + 1) * sizeof(*nv));
	if (!nv)
		return IOGP_ENOMEM;
	s->v = nv;
	uint8_t **nc = realloc(s->covered, (s->nnodes + 1) * sizeof(*nc));
	if (!nc)
		return IOGP_ENOMEM;
	s->covered = nc;
	s->nodes[s->nnodes] = strdup(name);
	s->v[s->nnodes] = s->cap ? calloc(s->cap, sizeof(double)) : NULL;
	s->covered[s->nnodes] = s->cap ? calloc(s->cap, 1) : NULL;
	if (!s->nodes[s->nnodes] || (s->cap && (!s->v[s->nnodes] || !s->covered[s->nnodes]))) {
		free(s->nodes[s->nnodes]);
		free(s->v[s->nnodes]);
		free(s->covered[s->nnodes]);
		return IOGP_ENOMEM;
	}
	*idx = s->nnodes++;
	return 0;
}

static int grow_bins(iogp_series *s, size_t need)
{
	if (need <= s->cap)
		return 0;
	if (need > SERIES_MAX_BINS)
		return IOGP_ELIMIT;
	size_t cap = s->cap ? s->cap : 256;
	while (cap < need)
		cap *= 2;
	if (cap > SERIES_MAX_BINS)
		cap = SERIES_MAX_BINS;
	for (size_t i = 0; i < s->nnodes; i++) {
		double *v = realloc(s->v[i], cap * sizeof(double));
		if (!v)
			return IOGP_ENOMEM;
		memset(v + s->cap, 0, (cap - s->cap) * sizeof(double));
		s->v[i] = v;
		uint8_t *c = realloc(s->covered[i], cap);
		if (!c)
			return IOGP_ENOMEM;
		memset(c + s->cap, 0, cap - s->cap);
		s->covered[i] = c;
	}
	s->cap = cap;
	return 0;
}

/* Move the origin earlier by k bins (a drifting source started first). */
static int prepend_bins(iogp_series *s, size_t k)
{
	int rc = grow_bins(s, s->nbins + k);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < s->nnodes; i++) {
		memmove(s->v[i] + k, s->v[i], s->nbins * sizeof(double));
		memset(s->v[i], 0, k * sizeof(double));
		memmove(s->covered[i] + k, s->covered[i], s->nbins);
		memset(s->covered[i], 0, k);
	}
	s->nbins += k;
	s->origin_ns -= (uint64_t)k * (uint64_t)(s->step_s * 1e9);
	return 0;
}

/* Spread amount over [a, b) (ns, wall) into node's bins by overlap. For rates
 * the amount is an increment (divided by the interval and the step); for
 * gauges a value held over the interval. */
static int spread(iogp_series *s, size_t node, uint64_t a, uint64_t b, double amount, int gauge)
{
	if (b <= a || a < s->origin_ns)
		return 0;
	uint64_t step_ns = (uint64_t)(s->step_s * 1e9);
	uint64_t ra = a - s->origin_ns, rb = b - s->origin_ns;  /* exact offsets */
	size_t first = (size_t)(ra / step_ns), last = (size_t)((rb - 1) / step_ns);
	int rc = grow_bins(s, last + 1);
	if (rc < 0)
		return rc;
	double len = (double)(rb - ra);
	for (size_t i = first; i <= last; i++) {
		uint64_t lo = (uint64_t)i * step_ns, hi = lo + step_ns;
		uint64_t x0 = ra > lo ? ra : lo, x1 = rb < hi ? rb : hi;
		double part = (double)(x1 - x0);
		if (gauge)
			s->v[node][i] += amount * part / (double)step_ns;
		else
			s->v[node][i] += amount * (part / len) / s->step_s;
		s->covered[node][i] = 1;
	}
	if (last + 1 > s->nbins)
		s->nbins = last + 1;
	return 0;
}

static int series_msg(series_ctx *c, const iogp_msg *msg)
{
	iogp_series *s = c->s;
	src_map *e = src_get(c, msg->source);
	if (!e)
		return IOGP_ELIMIT;
	if (msg->kind == IOGP_HELLO || msg->kind == IOGP_SNAPSHOT) {
		for (uint32_t i = 0; i < msg->nmetrics; i++) {
			const iogp_metric_def *d = &msg->metrics[i];
			if (strcmp(d->name, c->metric))
				continue;
			e->metric_id = d->id;
			e->has_metric = 1;
			if (!c->kind_set) {
				s->kind = d->kind;
				snprintf(s->unit, sizeof(s->unit), "%s", d->unit);
				c->kind_set = 1;
			}
		}
		const char *host = iogp_msg_label(msg, "host");
		if (msg->nlabels) {
			int rc = node_get(s, host ? host : "", &e->node);
			if (rc < 0)
				return rc;
			e->has_node = 1;
		}
	}
	if (msg->kind != IOGP_DELTA || !e->has_metric || !e->has_node || msg->t1_ns < msg->t0_ns)
		return 0;
	double amount = 0;
	int found = 0;
	switch (s->kind) {
	case IOGP_COUNTER:
		for (uint32_t i = 0; i < msg->ncounters; i++)
			if (msg->counters[i].id == e->metric_id) {
				amount = (double)msg->counters[i].value;
				found = 1;
			}
		break;
	case IOGP_GAUGE:
		for (uint32_t i = 0; i < msg->ngauges; i++)
			if (msg->gauges[i].id == e->metric_id) {
				amount = (double)msg->gauges[i].value;
				found = 1;
			}
		break;
	case IOGP_HISTOGRAM:
		for (uint32_t i = 0; i < msg->nhists; i++)
			if (msg->hists[i].id == e->metric_id) {
				for (uint32_t j = 0; j < msg->hists[i].nbins; j++)
					amount += (double)msg->hists[i].bins[j].count;
				found = 1;
			}
		break;
	default:
		return 0;
	}
	uint64_t dur = msg->t1_ns - msg->t0_ns;
	if (dur == 0 || msg->wall_ns < dur)
		return 0;
	uint64_t a = msg->wall_ns - dur, b = msg->wall_ns;
	uint64_t step_ns = (uint64_t)(s->step_s * 1e9);
	uint64_t aligned = step_ns ? a - a % step_ns : a;
	if (!s->intervals) {
		s->origin_ns = aligned;
	} else if (aligned < s->origin_ns) {
		int rc = prepend_bins(s, (size_t)((s->origin_ns - aligned) / step_ns));
		if (rc < 0)
			return rc;
	}
	s->intervals++;
	/* counters/histograms with no increment still mark the interval covered */
	if (!found && s->kind == IOGP_GAUGE)
		return 0;
	return spread(s, e->node, a, b, amount, s->kind == IOGP_GAUGE);
}

int iogp_series_from_file(iogp_series *s, const char *path, const char *metric,
                          double step_s, char *err, size_t errlen)
{
	memset(s, 0, sizeof(*s));
	if (!(step_s >= 0.001 && step_s <= 86400.0)) {
		iogp_errf(err, errlen, "step must be between 0.001 and 86400 seconds");
		return IOGP_EINVAL;
	}
	s->step_s = step_s;
	iogp_replay_reader *r;
	int rc = iogp_replay_open(&r, path, err, errlen);
	if (rc < 0)
		return rc;
	series_ctx c = { .s = s, .metric = metric };
	iogp_msg msg;
	iogp_msg_init(&msg);
	iogp_replay_rec rec;
	while ((rc = iogp_replay_next(r, &rec)) == 0) {
		if (rec.keyframe)
			continue;   /* state only; intervals come from DELTAs */
		if (iogp_msg_decode(&msg, rec.payload, rec.len, NULL, 0) < 0)
			continue;
		rc = series_msg(&c, &msg);
		if (rc == IOGP_ELIMIT) {
			iogp_errf(err, errlen, "too many time bins or sources: use a larger --step");
			break;
		}
		if (rc < 0) {
			iogp_errf(err, errlen, "%s", iogp_strerror(rc));
			break;
		}
	}
	iogp_msg_free(&msg);
	iogp_replay_close_reader(r);
	free(c.src);
	if (rc == IOGP_EEOF)
		rc = 0;
	if (rc == 0 && !c.kind_set) {
		iogp_errf(err, errlen, "no metric named '%s' in %s", metric, path);
		rc = IOGP_ENOTFOUND;
	}
	if (rc < 0)
		iogp_series_free(s);
	return rc;
}

void iogp_series_free(iogp_series *s)
{
	for (size_t i = 0; i < s->nnodes; i++) {
		free(s->nodes[i]);
		free(s->v[i]);
		free(s->covered[i]);
	}
	free(s->nodes);
	free(s->v);
	free(s->covered);
	memset(s, 0, sizeof(*s));
}

static void csv_field(FILE *out, const char *str)
{
	if (!strpbrk(str, ",\"\n\r")) {
		fputs(str, out);
		return;
	}
	fputc('"', out);
	for (const char *p = str; *p; p++) {
		if (*p == '"')
			fputc('"', out);
		fputc(*p, out);
	}
	fputc('"', out);
}

static void fmt_num(char *buf, size_t len, double v)
{
	if (v == floor(v) && fabs(v) < 1e15)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%.10g", v);
}

int iogp_series_write_csv(const iogp_series *s, FILE *out)
{
	fputs("time,elapsed_s,min_node,min,avg,max_node,max,total", out);
	for (size_t n = 0; n < s->nnodes; n++) {
		fputc(',', out);
		csv_field(out, s->nodes[n]);
	}
	fputc('\n', out);
	int frac = s->step_s != floor(s->step_s);
	for (size_t b = 0; b < s->nbins; b++) {
		double t = (double)s->origin_ns / 1e9 + (double)b * s->step_s;
		time_t sec = (time_t)t;
		struct tm tm;
		gmtime_r(&sec, &tm);
		char ts[64], num[64];
		strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
		fputs(ts, out);
		if (frac)
			fprintf(out, ".%03d", (int)((t - (double)sec) * 1000.0 + 0.5) % 1000);
		fputc('Z', out);
		double el = (double)b * s->step_s;
		fmt_num(num, sizeof(num), el);
		fprintf(out, ",%s", num);
		size_t cnt = 0, imin = 0, imax = 0;
		double sum = 0;
		for (size_t n = 0; n < s->nnodes; n++) {
			if (!s->covered[n] || !s->covered[n][b])
				continue;
			double v = s->v[n][b];
			if (!cnt || v < s->v[imin][b])
				imin = n;
			if (!cnt || v > s->v[imax][b])
				imax = n;
			sum += v;
			cnt++;
		}
		if (cnt) {
			fputc(',', out);
			csv_field(out, s->nodes[imin]);
			fmt_num(num, sizeof(num), s->v[imin][b]);
			fprintf(out, ",%s", num);
			fmt_num(num, sizeof(num), sum / (double)cnt);
			fprintf(out, ",%s,", num);
			csv_field(out, s->nodes[imax]);
			fmt_num(num, sizeof(num), s->v[imax][b]);
			fprintf(out, ",%s", num);
			fmt_num(num, sizeof(num), sum);
			fprintf(out, ",%s", num);
		} else {
			fputs(",,,,,,", out);
		}
		for (size_t n = 0; n < s->nnodes; n++) {
			fputc(',', out);
			if (s->covered[n] && s->covered[n][b]) {
				fmt_num(num, sizeof(num), s->v[n][b]);
				fputs(num, out);
			}
		}
		fputc('\n', out);
	}
	return ferror(out) ? IOGP_EIO : 0;
}

void iogp_export_filename(char *dst, size_t len, const char *metric)
{
	size_t j = 0;
	for (const char *p = metric; *p && j + 1 < len; p++) {
		char ch = *p;
		int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		         (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' || ch == '-';
		dst[j++] = ok ? ch : '_';
	}
	if (len)
		dst[j] = 0;
	if (j && dst[0] == '.')
		dst[0] = '_';
}

FILE *iogp_export_open(const char *dir, const char *name, char *names, size_t nlen)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	if (f && names && nlen) {
		size_t u = strlen(names);
		snprintf(names + u, nlen - u, "%s%s", u ? " " : "", name);
	}
	return f;
}

int iogp_export_close(FILE *f)
{
	int bad = ferror(f);
	return fclose(f) != 0 || bad ? -1 : 0;
}

int iogp_access_csv_header(FILE *out)
{
	return fputs("time,op,offset,size\n", out) == EOF ? IOGP_EIO : 0;
}

int iogp_access_csv_row(FILE *out, uint64_t wall_ns, int op, uint64_t offset, uint64_t size)
{
	return fprintf(out, "%" PRIu64 ".%09" PRIu64 ",%s,%" PRIu64 ",%" PRIu64 "\n",
	               wall_ns / 1000000000u, wall_ns % 1000000000u,
	               op == IOGP_OP_WRITE ? "write" : "read", offset, size) < 0 ? IOGP_EIO : 0;
}
