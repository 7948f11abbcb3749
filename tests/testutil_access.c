/* testutil_access.c - a job whose access samples are known: see
 * testutil_access.h. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "testutil_access.h"

#define ACCESS_OUT 256   /* the agent's samples per interval (IOG_ACCESS_OUT) */
#define ID_POSIX 50
#define ID_STDIO 51

typedef struct pend {
	iogp_access a;
} pend;

static int cmp_acc(const void *a, const void *b)
{
	const iogp_access *x = a, *y = b;
	return x->t_ns < y->t_ns ? -1 : x->t_ns > y->t_ns;
}

typedef struct sink {
	iogp_model *m;
	iogp_recorder *r;
	uint64_t last_recv;
} sink;

static void put(sink *k, const iogp_msg *msg, uint64_t recv)
{
	if (recv <= k->last_recv)
		recv = k->last_recv + 1000;
	k->last_recv = recv;
	if (k->m) {
		int rc = iogp_model_apply(k->m, msg, recv);
		ck_assert_msg(rc >= 0, "model apply: %s", iogp_strerror(rc));
	}
	if (k->r) {
		int rc = iogp_recorder_add_msg(k->r, msg, recv);
		ck_assert_msg(rc >= 0, "recorder: %s", iogp_strerror(rc));
	}
}

static int active(const tu_acc_file *f, uint32_t sec)
{
	return f->from_s == 0 && f->to_s == 0 ? 1 : sec >= f->from_s && sec < f->to_s;
}

void tu_acc_run(tu_acc_job *j, iogp_model *m, const char *path)
{
	ck_assert(j->nfiles >= 1 && j->nfiles <= TU_ACC_MAX_FILES && j->nsources >= 1);
	memset(j->requests, 0, sizeof(j->requests));
	memset(j->bytes, 0, sizeof(j->bytes));
	memset(j->sampled, 0, sizeof(j->sampled));
	sink k = { m, NULL, 0 };
	if (path) {
		char err[256];
		iogp_recorder_opts ro = { .creator = "testutil_access" };
		ck_assert_msg(iogp_recorder_open(&k.r, path, &ro, err, sizeof(err)) == 0, "%s", err);
	}
	uint64_t rng = j->seed ? j->seed : 42;
	iogp_metric_def defs[2] = {
		{ .id = ID_POSIX, .kind = IOGP_ACCESS, .name = "posix.access", .unit = "" },
		{ .id = ID_STDIO, .kind = IOGP_ACCESS, .name = "stdio.access", .unit = "" },
	};
	iogp_file files[TU_ACC_MAX_FILES];
	for (uint32_t f = 0; f < j->nfiles; f++)
		files[f] = (iogp_file){ f + 1, j->files[f].path };
	uint32_t ns = j->nsources;
	char (*host)[32] = calloc(ns, 32), (*pid)[16] = calloc(ns, 16), (*rank)[16] = calloc(ns, 16);
	iogp_filerec *cum = calloc((size_t)ns * j->nfiles, sizeof(*cum));
	uint64_t *pos = calloc((size_t)ns * j->nfiles, sizeof(*pos)), *seen = calloc(ns, sizeof(*seen));
	iogp_access *acc = calloc(ACCESS_OUT, sizeof(*acc));
	ck_assert(host && pid && rank && cum && pos && seen && acc);
	for (uint32_t s = 0; s < ns; s++) {
		snprintf(host[s], 32, "node%03u", s + 1);
		snprintf(pid[s], 16, "%u", 1000 + s);
		snprintf(rank[s], 16, "%u", s);
		iogp_label l[3] = { { "host", host[s] }, { "pid", pid[s] }, { "rank", rank[s] } };
		iogp_msg msg = { .kind = IOGP_HELLO, .source = 0x1000 + s, .seq = 0, .labels = l,
		                 .nlabels = 3, .metrics = defs, .nmetrics = 2 };
		put(&k, &msg, TU_ACC_EPOCH_NS + s * 10000000ull);
		for (uint32_t f = 0; f < j->nfiles; f++) {
			cum[s * j->nfiles + f].file = f + 1;
			cum[s * j->nfiles + f].layer = (uint32_t)j->files[f].layer;
		}
	}
	j->t0_wall = TU_ACC_EPOCH_NS;
	for (uint32_t sec = 1; sec <= j->seconds; sec++) {
		for (uint32_t s = 0; s < ns; s++) {
			uint64_t mono0 = 1000000000000ull + s * 1000000000ull;
			uint64_t wall0 = TU_ACC_EPOCH_NS + s * 10000000ull;
			uint64_t t0 = mono0 + (uint64_t)(sec - 1) * 1000000000ull, t1 = t0 + 1000000000ull;
			uint64_t R = 0, want[TU_ACC_MAX_FILES] = { 0 };
			for (uint32_t f = 0; f < j->nfiles; f++)
				R += active(&j->files[f], sec - 1) ? j->files[f].per_s : 0;
			uint64_t K = R < ACCESS_OUT ? R : ACCESS_OUT, given = 0;
			/* the reservoir's share of each file: its requests' share */
			for (uint32_t f = 0; f < j->nfiles && R; f++) {
				uint64_t r = active(&j->files[f], sec - 1) ? j->files[f].per_s : 0;
				want[f] = K * r / R;
				given += want[f];
			}
			for (uint32_t f = 0; given < K; f = (f + 1) % j->nfiles)
				if (active(&j->files[f], sec - 1) && j->files[f].per_s > want[f]) {
					want[f]++;
					given++;
				}
			uint32_t na = 0;
			iogp_filerec fr[TU_ACC_MAX_FILES];
			uint32_t nfr = 0;
			for (uint32_t f = 0; f < j->nfiles; f++) {
				const tu_acc_file *F = &j->files[f];
				uint64_t r = active(F, sec - 1) ? F->per_s : 0;
				if (!r)
					continue;
				uint64_t *p = &pos[s * j->nfiles + f];
				for (uint64_t q = 0; q < want[f]; q++) {
					uint64_t idx = (q * r + r / 2) / want[f];
					uint64_t off;
					if (F->random)
						off = (tu_splitmix(&rng) % (F->span / F->size)) * F->size;
					else
						off = F->span ? (*p + idx * F->size) % F->span : *p + idx * F->size;
					uint32_t op = F->op == 2 ? (uint32_t)(idx & 1) : (uint32_t)F->op;
					acc[na++] = (iogp_access){ F->layer == IOGP_FR_STDIO ? ID_STDIO : ID_POSIX,
					                           t0 + (idx * 1000000000ull + 500000000ull) / r,
					                           f + 1, op, off, F->size };
				}
				*p += r * F->size;
				j->requests[f] += r;
				j->bytes[f] += r * F->size;
				j->sampled[f] += want[f];
				iogp_filerec *c = &cum[s * j->nfiles + f];
				int d = F->op == IOGP_OP_WRITE ? 1 : 0;
				iogp_filerec inc = { .file = f + 1, .layer = (uint32_t)F->layer };
				inc.op[d] = (iogp_filerec_op){ .ops = r, .bytes = r * F->size, .time_ns = r * 1000,
				                               .max_req = F->size, .first_ns = t0, .last_ns = t1 };
				c->op[d].ops += r;
				c->op[d].bytes += r * F->size;
				c->op[d].time_ns += r * 1000;
				c->op[d].max_req = F->size;
				c->op[d].last_ns = t1;
				if (!c->op[d].first_ns)
					c->op[d].first_ns = t0;
				if (F->folded) {
					inc.flags = c->flags = IOGP_FR_DIRAGG;
					inc.overflow = c->overflow = F->folded;
				}
				fr[nfr++] = inc;
			}
			qsort(acc, na, sizeof(*acc), cmp_acc);
			seen[s] += R;
			iogp_msg msg = { .kind = IOGP_DELTA, .source = 0x1000 + s, .seq = sec,
			                 .t0_ns = t0, .t1_ns = t1, .wall_ns = wall0 + (uint64_t)sec * 1000000000ull,
			                 .access = acc, .naccess = na, .access_seen = R };
			if (sec == 1) {
				msg.files = files;
				msg.nfiles = j->nfiles;
			}
			if (j->filerecs) {
				msg.filerecs = fr;   /* ascending by file (one layer a file) */
				msg.nfilerecs = nfr;
			}
			put(&k, &msg, msg.wall_ns + 1000000);
		}
	}
	j->t1_wall = TU_ACC_EPOCH_NS + (uint64_t)j->seconds * 1000000000ull;
	for (uint32_t s = 0; s < ns; s++) {
		uint64_t mono0 = 1000000000000ull + s * 1000000000ull;
		uint64_t wall0 = TU_ACC_EPOCH_NS + s * 10000000ull;
		iogp_label l[3] = { { "host", host[s] }, { "pid", pid[s] }, { "rank", rank[s] } };
		iogp_msg msg = { .kind = IOGP_SNAPSHOT, .flags = IOGP_F_FINAL, .source = 0x1000 + s,
		                 .seq = j->seconds + 1, .labels = l, .nlabels = 3, .metrics = defs,
		                 .nmetrics = 2, .t0_ns = mono0,
		                 .t1_ns = mono0 + (uint64_t)j->seconds * 1000000000ull,
		                 .wall_ns = wall0 + (uint64_t)j->seconds * 1000000000ull,
		                 .files = files, .nfiles = j->nfiles, .access_seen = seen[s] };
		if (j->filerecs) {
			msg.filerecs = cum + s * j->nfiles;
			msg.nfilerecs = j->nfiles;
		}
		put(&k, &msg, msg.wall_ns + 2000000);
		iogp_msg bye = { .kind = IOGP_BYE, .source = 0x1000 + s, .seq = j->seconds + 2 };
		put(&k, &bye, msg.wall_ns + 3000000);
	}
	if (k.r)
		ck_assert_int_eq(iogp_recorder_close(k.r), 0);
	free(host);
	free(pid);
	free(rank);
	free(cum);
	free(pos);
	free(seen);
	free(acc);
}
