/* export_access.c - access samples as CSV: the viewers' rows and `iogram
 * export access` over a replay file. */
#include <inttypes.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "iogp_err.h"
#include "iogp_export.h"
#include "export_priv.h"

/* ---- access samples ---- */

/* time,epoch_s: ISO with milliseconds, seconds with 9 decimals. */
static void access_time(FILE *out, uint64_t wall_ns)
{
	char ts[48];
	iogp_fmt_iso_ms(ts, sizeof(ts), wall_ns);
	fprintf(out, "%s,%" PRIu64 ".%09" PRIu64, ts, wall_ns / 1000000000u, wall_ns % 1000000000u);
}

static int access_tail(FILE *out, const char *path, int op, uint64_t offset, uint64_t size)
{
	fputc(',', out);
	iogp_csv_field(out, path ? path : "");
	return fprintf(out, ",%s,%" PRIu64 ",%" PRIu64 "\n", op == IOGP_OP_WRITE ? "write" : "read",
	               offset, size) < 0 ? IOGP_EIO : 0;
}

int iogp_access_csv_header(FILE *out)
{
	return fputs("time,epoch_s,file,op,offset_bytes,size_bytes\n", out) == EOF ? IOGP_EIO : 0;
}

int iogp_access_csv_row(FILE *out, uint64_t wall_ns, const char *path, int op, uint64_t offset,
                        uint64_t size)
{
	access_time(out, wall_ns);
	return access_tail(out, path, op, offset, size);
}

typedef struct acc_src {
	uint64_t id, last_seq;
	int has_seq, has_node, counted;
	char *node;
	uint32_t *metric_ids;   /* access metrics of this source matching the filter */
	size_t nmetric;
	idmap files;            /* file id -> index into paths */
	char **paths;
	size_t npaths;
} acc_src;

static void acc_src_free(acc_src *a)
{
	free(a->node);
	free(a->metric_ids);
	for (size_t i = 0; i < a->npaths; i++)
		free(a->paths[i]);
	free(a->paths);
	iogp__idmap_free(&a->files);
}

static int acc_file(acc_src *a, uint64_t id, const char *path)
{
	long i = iogp__idmap_get(&a->files, id);
	if (i >= 0) {
		if (strcmp(a->paths[i], path)) {
			char *p = strdup(path);
			if (!p)
				return IOGP_ENOMEM;
			free(a->paths[i]);
			a->paths[i] = p;
		}
		return 0;
	}
	char **n = realloc(a->paths, (a->npaths + 1) * sizeof(*n));
	if (!n)
		return IOGP_ENOMEM;
	a->paths = n;
	if (!(a->paths[a->npaths] = strdup(path)))
		return IOGP_ENOMEM;
	if (iogp__idmap_put(&a->files, id, (uint32_t)a->npaths) < 0) {
		free(a->paths[a->npaths]);
		return IOGP_ENOMEM;
	}
	a->npaths++;
	return 0;
}

typedef struct acc_ctx {
	const char *metric, *node;
	const uint64_t *source;
	FILE *out;
	iogp_access_stats *st;
	acc_src *src;
	size_t nsrc, cap;
	idmap idx;
} acc_ctx;

static acc_src *acc_get(acc_ctx *c, uint64_t id)
{
	int fresh, full;
	void *arr = c->src;
	acc_src *a = iogp__idmap_slot(&c->idx, id, &arr, &c->nsrc, &c->cap, sizeof(*a),
	                              SERIES_MAX_SOURCES, &fresh, &full);
	c->src = arr;
	if (a && fresh)
		a->id = id;
	return a;
}

static int acc_passes(const acc_ctx *c, const acc_src *a)
{
	if (c->source && a->id != *c->source)
		return 0;
	if (c->node && (!a->has_node || strcmp(a->node, c->node)))
		return 0;
	return 1;
}

static int acc_msg(acc_ctx *c, const iogp_msg *msg)
{
	acc_src *a = acc_get(c, msg->source);
	if (!a)
		return c->nsrc >= SERIES_MAX_SOURCES ? IOGP_ELIMIT : IOGP_ENOMEM;
	int rc;
	if (msg->kind == IOGP_HELLO || msg->kind == IOGP_SNAPSHOT) {
		const char *host = iogp_msg_label(msg, "host");
		if (msg->nlabels) {
			char *n = strdup(host ? host : "");
			if (!n)
				return IOGP_ENOMEM;
			free(a->node);
			a->node = n;
			a->has_node = 1;
		}
		for (uint32_t i = 0; i < msg->nmetrics; i++) {
			const iogp_metric_def *d = &msg->metrics[i];
			if (d->kind != IOGP_ACCESS || (c->metric && strcmp(d->name, c->metric)))
				continue;
			c->st->metric_found = 1;
			size_t k = 0;
			while (k < a->nmetric && a->metric_ids[k] != d->id)
				k++;
			if (k < a->nmetric)
				continue;
			uint32_t *n = realloc(a->metric_ids, (a->nmetric + 1) * sizeof(*n));
			if (!n)
				return IOGP_ENOMEM;
			a->metric_ids = n;
			a->metric_ids[a->nmetric++] = d->id;
		}
	}
	if (msg->kind == IOGP_SNAPSHOT || msg->kind == IOGP_DELTA) {
		for (uint32_t i = 0; i < msg->nfiles; i++)
			if ((rc = acc_file(a, msg->files[i].id, msg->files[i].path)) < 0)
				return rc;
		if (msg->kind == IOGP_DELTA && a->has_seq && msg->seq <= a->last_seq)
			return 0;   /* duplicate */
		if (!a->has_seq || msg->seq > a->last_seq)
			a->last_seq = msg->seq;
		a->has_seq = 1;
	}
	int passes = acc_passes(c, a);
	if (passes && !a->counted) {
		a->counted = 1;
		c->st->sources++;
	}
	if (msg->kind != IOGP_DELTA || !msg->naccess || !passes)
		return 0;
	for (uint32_t i = 0; i < msg->naccess; i++) {
		const iogp_access *x = &msg->access[i];
		size_t k = 0;
		while (k < a->nmetric && a->metric_ids[k] != x->id)
			k++;
		if (k == a->nmetric)
			continue;   /* not a (selected) access metric, or no HELLO seen */
		uint64_t wall;
		if (x->t_ns <= msg->t1_ns)
			wall = msg->wall_ns > msg->t1_ns - x->t_ns ? msg->wall_ns - (msg->t1_ns - x->t_ns) : 0;
		else
			wall = msg->wall_ns + (x->t_ns - msg->t1_ns);
		long f = iogp__idmap_get(&a->files, x->file);
		char unknown[24];
		if (f < 0) {
			snprintf(unknown, sizeof(unknown), "#%" PRIx64, x->file);
			c->st->unknown_files++;
		}
		access_time(c->out, wall);
		fputc(',', c->out);
		iogp_csv_field(c->out, a->has_node ? a->node : "");
		fprintf(c->out, ",%016" PRIx64, a->id);
		if ((rc = access_tail(c->out, f >= 0 ? a->paths[f] : unknown, (int)x->op, x->offset,
		                      x->size)) < 0)
			return rc;
		c->st->samples++;
	}
	return 0;
}

int iogp_access_export_file(const char *path, const char *metric, const char *node,
                            const uint64_t *source, FILE *out, iogp_access_stats *st,
                            char *err, size_t errlen)
{
	memset(st, 0, sizeof(*st));
	iogp_replay_reader *r;
	int rc = iogp_replay_open(&r, path, err, errlen);
	if (rc < 0)
		return rc;
	iogp_replay_info info;
	iogp_replay_get_info(r, &info);
	st->file_bytes = info.file_bytes;
	acc_ctx c = { .metric = metric, .node = node, .source = source, .out = out, .st = st };
	if (fputs("time,epoch_s,node,source,file,op,offset_bytes,size_bytes\n", out) == EOF)
		rc = IOGP_EIO;
	iogp_msg msg;
	iogp_msg_init(&msg);
	iogp_replay_rec rec;
	while (rc == 0 && (rc = iogp_replay_next(r, &rec)) == 0) {
		if (iogp_msg_decode(&msg, rec.payload, rec.len, NULL, 0) < 0)
			continue;
		if (rec.keyframe && msg.kind == IOGP_DELTA)
			continue;
		rc = acc_msg(&c, &msg);
	}
	if (rc == IOGP_EEOF)
		rc = ferror(out) ? IOGP_EIO : 0;
	if (rc == IOGP_ELIMIT)
		iogp_errf(err, errlen, "more than %d sources in %s", SERIES_MAX_SOURCES, path);
	else if (rc < 0)
		iogp_errf(err, errlen, "%s", iogp_strerror(rc));
	iogp_replay_reader_stats(r, &st->file);
	iogp_msg_free(&msg);
	iogp_replay_close_reader(r);
	for (size_t i = 0; i < c.nsrc; i++)
		acc_src_free(&c.src[i]);
	free(c.src);
	iogp__idmap_free(&c.idx);
	return rc;
}
