/* export_probe.c - the reports of `iogram probe` sources in a replay file:
 * one row per report and operation, from the probe.OP.{stat,expected,
 * slowdown} gauges of their DELTAs. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iogp_err.h"
#include "iogp_export.h"
#include "export_priv.h"

#define PROBE_MAX_OPS 16
#define PROBE_MAX_SOURCES 4096

struct psrc {
	uint64_t id;
	char node[128], stat[32];
	char op[PROBE_MAX_OPS][32];
	uint32_t nops;
	unsigned known;                     /* ops whose gauges were ever sent */
	uint32_t gid[PROBE_MAX_OPS][3];     /* metric ids of stat, expected, slowdown */
	int64_t val[PROBE_MAX_OPS][3];
};

static const char *const which[3] = { "stat", "expected", "slowdown" };

static struct psrc *find(struct psrc *s, size_t *n, uint64_t id, int add)
{
	for (size_t i = 0; i < *n; i++)
		if (s[i].id == id)
			return &s[i];
	if (!add || *n >= PROBE_MAX_SOURCES)
		return NULL;
	memset(&s[*n], 0, sizeof(s[*n]));
	s[*n].id = id;
	return &s[(*n)++];
}

/* probe.OP.WHICH -> the op's slot and which (0..2); -1 when not one. */
static int learn(struct psrc *p, const char *name, uint32_t id)
{
	if (strncmp(name, "probe.", 6))
		return -1;
	const char *op = name + 6, *dot = strrchr(op, '.');
	if (!dot || dot == op || (size_t)(dot - op) >= sizeof(p->op[0]))
		return -1;
	int w = -1;
	for (int k = 0; k < 3; k++)
		if (!strcmp(dot + 1, which[k]))
			w = k;
	if (w < 0)
		return -1;
	uint32_t o = 0;
	while (o < p->nops && (strlen(p->op[o]) != (size_t)(dot - op) || strncmp(p->op[o], op, (size_t)(dot - op))))
		o++;
	if (o == p->nops) {
		if (p->nops >= PROBE_MAX_OPS)
			return -1;
		memcpy(p->op[o], op, (size_t)(dot - op));
		p->op[o][dot - op] = '\0';
		p->nops++;
	}
	p->gid[o][w] = id + 1;
	return 0;
}

int iogp_probe_write_csv(const char *path, FILE *out, uint64_t *rows, char *err, size_t errlen)
{
	iogp_replay_reader *r;
	int rc = iogp_replay_open(&r, path, err, errlen);
	if (rc < 0)
		return rc;
	struct psrc *src = calloc(PROBE_MAX_SOURCES, sizeof(*src));
	size_t nsrc = 0;
	iogp_msg msg;
	iogp_msg_init(&msg);
	iogp_replay_rec rec;
	*rows = 0;
	if (src == NULL) {
		iogp_replay_close_reader(r);
		return IOGP_ENOMEM;
	}
	fputs("time,epoch_s,node,source,operation,statistic,stat_ns,expected_ns,slowdown\n", out);
	while ((rc = iogp_replay_next(r, &rec)) == 0) {
		if (iogp_msg_decode(&msg, rec.payload, rec.len, NULL, 0) < 0)
			continue;
		int head = msg.kind == IOGP_HELLO || msg.kind == IOGP_SNAPSHOT;
		struct psrc *p = find(src, &nsrc, msg.source, head);
		if (p == NULL)
			continue;
		if (head) {
			const char *node = iogp_msg_label(&msg, "host"), *st = iogp_msg_label(&msg, "probe.statistic");
			if (node)
				snprintf(p->node, sizeof(p->node), "%s", node);
			if (st)
				snprintf(p->stat, sizeof(p->stat), "%s", st);
			for (uint32_t i = 0; i < msg.nmetrics; i++)
				learn(p, msg.metrics[i].name, msg.metrics[i].id);
		}
		if (msg.ngauges == 0)
			continue;
		unsigned touched = 0;
		for (uint32_t g = 0; g < msg.ngauges; g++)
			for (uint32_t o = 0; o < p->nops; o++)
				for (int w = 0; w < 3; w++)
					if (p->gid[o][w] == msg.gauges[g].id + 1) {
						p->val[o][w] = msg.gauges[g].value;
						touched |= 1u << o;
					}
		p->known |= touched;
		if (msg.kind != IOGP_DELTA || !touched || msg.wall_ns == 0)
			continue;
		char t[40];
		iogp_fmt_iso_ms(t, sizeof(t), msg.wall_ns);
		/* a report has a row for every operation: a DELTA carries only the
		 * gauges that changed, the others hold (as in the live model) */
		for (uint32_t o = 0; o < p->nops; o++) {
			if (!(p->known >> o & 1))
				continue;
			fprintf(out, "%s,%" PRIu64 ".%03u,", t, (uint64_t)(msg.wall_ns / 1000000000u),
			        (unsigned)(msg.wall_ns % 1000000000u / 1000000u));
			iogp_csv_field(out, p->node);
			fprintf(out, ",%016" PRIx64 ",%s,%s,%" PRId64 ",%" PRId64 ",%.3f\n", p->id, p->op[o],
			        p->stat[0] ? p->stat : "median", p->val[o][0], p->val[o][1],
			        (double)p->val[o][2] / 1000.0);
			(*rows)++;
		}
	}
	iogp_msg_free(&msg);
	iogp_replay_close_reader(r);
	free(src);
	if (rc == IOGP_EEOF)
		rc = 0;
	return rc < 0 ? rc : ferror(out) ? IOGP_EIO : 0;
}
