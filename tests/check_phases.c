/* check_phases.c - I/O phases of real jobs run under the interposer, shaped
 * like the SummarIO report's (4 processes: a shared file written in
 * contiguous parts, a file per process, 4 periodic rounds with 2 s of
 * compute between them, a read after a write), against the jobs' own
 * parameters; and `iogram export phases` of the merged recording. */
#include <check.h>
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "iogp_err.h"
#include "iogp_export.h"
#include "iogp_model.h"
#include "testutil.h"
#include "testutil_iogr.h"

#define N 64
#define SIZE 65536
#define NPROC 4
#define IVAL_NS 100000000ull   /* the agents' interval: --interval 100 */

static char dir[256];
static const iogp_phase_opts posix = { .layer = IOGP_FR_POSIX };   /* not the parent's printf */
static uint64_t job_t0, job_t1;

static void setup(void)
{
	tu_tmpdir(dir, sizeof(dir), "iogram-phases");
	ck_assert_int_eq(mkdir(tu_fmt("%s/rec", dir), 0700), 0);
	ck_assert_int_eq(mkdir(tu_fmt("%s/data", dir), 0700), 0);
}

static void teardown(void)
{
	tu_rmdir_all(dir);
}

static iogp_model *job(const char *mode)
{
	char *argv[] = { (char *)(uintptr_t)tu_env("IOGRAM_RUN"), "--endpoint", "none", "--interval", "100",
	                 "--output", tu_fmt("%s/rec/run-%%p.iogr", dir), "--",
	                 tu_fmt("%s/prog_phases", tu_env("IOGRAM_PROGS")), (char *)mode,
	                 tu_fmt("%s/data", dir), tu_fmt("%d", N), tu_fmt("%d", SIZE), NULL };
	char *out = tu_fmt("%s/times", dir);
	ck_assert_int_eq(tu_run(argv, out, 120), 0);
	const char *t = tu_slurp(out);
	unsigned long long a = 0, b = 0;
	ck_assert_int_eq(sscanf(t, "%llu %llu", &a, &b), 2);
	job_t0 = a;
	job_t1 = b;
	int n;
	iogp_model *m = tu_load_runs(tu_fmt("%s/rec", dir), &n);
	ck_assert_int_eq(n, NPROC + 1);   /* the parent and its 4 processes */
	return m;
}

/* A phase of the job: its times within the job, bytes and requests exact. */
static void check_phase(const iogp_phase *p, int op, uint32_t ranks, uint32_t files, int shared,
                        int spat)
{
	ck_assert_int_eq(p->op, op);
	ck_assert_uint_eq(p->layer, IOGP_FR_POSIX);
	ck_assert_uint_eq(p->ranks, ranks);
	ck_assert_uint_eq(p->files, files);
	ck_assert_int_eq(p->shared, shared);
	ck_assert_int_eq(p->spatiality, spat);
	ck_assert_uint_eq(p->bytes, (uint64_t)ranks * N * SIZE);
	ck_assert_uint_eq(p->requests, (uint64_t)ranks * N);
	ck_assert_uint_eq(p->max_req, SIZE);
	ck_assert_msg(p->start_ns + IVAL_NS >= job_t0 && p->end_ns <= job_t1 + IVAL_NS,
	              "phase [%" PRIu64 ", %" PRIu64 "] outside the job [%" PRIu64 ", %" PRIu64 "]",
	              p->start_ns, p->end_ns, job_t0, job_t1);
	ck_assert_uint_le(p->start_ns, p->end_ns);
	ck_assert_uint_gt(p->io_time_ns, 0);
	ck_assert_uint_le(p->io_time_ns, p->end_ns - p->start_ns + IVAL_NS);
	ck_assert_int_eq(p->open, 0);
}

START_TEST(single_a)
{
	iogp_model *m = job("single-a");
	iogp_phase *p;
	size_t n;
	ck_assert_int_eq(iogp_model_phases(m, &posix, &p, &n, NULL), 0);
	ck_assert_uint_eq(n, 1);
	check_phase(&p[0], IOGP_OP_WRITE, NPROC, 1, 1, IOGP_SPAT_CONSECUTIVE);
	ck_assert_str_eq(p[0].file, tu_fmt("%s/data/shared", dir));
	free(p);
	iogp_model_free(m);
}
END_TEST

START_TEST(single_b)
{
	iogp_model *m = job("single-b");
	iogp_phase *p;
	size_t n;
	ck_assert_int_eq(iogp_model_phases(m, &posix, &p, &n, NULL), 0);
	ck_assert_uint_eq(n, 1);
	check_phase(&p[0], IOGP_OP_WRITE, NPROC, NPROC, 0, IOGP_SPAT_CONSECUTIVE);
	free(p);
	iogp_model_free(m);
}
END_TEST

START_TEST(periodic)
{
	iogp_model *m = job("periodic");
	iogp_phase *p;
	size_t n;
	ck_assert_int_eq(iogp_model_phases(m, &posix, &p, &n, NULL), 0);
	ck_assert_uint_eq(n, 4);
	for (size_t i = 0; i < n; i++) {
		check_phase(&p[i], IOGP_OP_WRITE, NPROC, 1, 1, IOGP_SPAT_CONSECUTIVE);
		ck_assert_str_eq(p[i].file, tu_fmt("%s/data/round.%zu", dir, i));
		if (i > 0)   /* 2 s of compute and more between rounds (they begin 2.5 s apart) */
			ck_assert_uint_ge(p[i].start_ns - p[i - 1].end_ns, 1900000000ull);
	}
	free(p);
	/* a distance longer than the compute joins the rounds into one phase */
	iogp_phase_opts o = { .distance_ns = 3000000000ull, .layer = IOGP_FR_POSIX };
	ck_assert_int_eq(iogp_model_phases(m, &o, &p, &n, NULL), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(p[0].files, 4);
	ck_assert_uint_eq(p[0].bytes, 4ull * NPROC * N * SIZE);
	free(p);
	iogp_model_free(m);
}
END_TEST

START_TEST(read_after_write)
{
	iogp_model *m = job("raw");
	iogp_phase *p;
	size_t n;
	ck_assert_int_eq(iogp_model_phases(m, &posix, &p, &n, NULL), 0);
	ck_assert_uint_eq(n, 2);
	check_phase(&p[0], IOGP_OP_WRITE, NPROC, 1, 1, IOGP_SPAT_CONSECUTIVE);
	check_phase(&p[1], IOGP_OP_READ, NPROC, 1, 1, IOGP_SPAT_CONSECUTIVE);
	free(p);
	iogp_model_free(m);
	/* the same through the command: merge, then export phases */
	char *merged = tu_fmt("%s/job.iogr", dir);
	char mcmd[1024];
	snprintf(mcmd, sizeof mcmd, "%s merge %s/rec/run-*.iogr -o %s", tu_env("IOGRAM_BIN"), dir, merged);
	char *sh[] = { "sh", "-c", mcmd, NULL };
	ck_assert_int_eq(tu_run(sh, NULL, 60), 0);
	char *csv = tu_fmt("%s/phases.csv", dir);
	char *ex[] = { (char *)(uintptr_t)tu_env("IOGRAM_BIN"), "export", "phases", merged, "--layer", "posix",
	               "-o", csv, NULL };
	ck_assert_int_eq(tu_run(ex, NULL, 60), 0);
	const char *t = tu_slurp(csv);
	ck_assert_msg(!strncmp(t, "start,epoch_start_s,end,epoch_end_s,duration_s,operation,layer,"
	                          "ranks,rank,bytes,requests,mean_request_bytes,", 100), "%s", t);
	int rows = 0;
	for (const char *l = strchr(t, '\n'); l && l[1]; l = strchr(l + 1, '\n'))
		rows++;
	ck_assert_int_eq(rows, 2);
	ck_assert(strstr(t, tu_fmt(",write,posix,4,,%d,%d,%d,%d,", NPROC * N * SIZE, NPROC * N, SIZE,
	                           SIZE)) != NULL);
	ck_assert(strstr(t, tu_fmt(",read,posix,4,,%d,%d,%d,%d,", NPROC * N * SIZE, NPROC * N, SIZE,
	                           SIZE)) != NULL);
	ck_assert(strstr(t, ",consecutive,1,shared,") != NULL);
	/* a bad threshold is a usage error */
	char *bad[] = { (char *)(uintptr_t)tu_env("IOGRAM_BIN"), "export", "phases", merged, "--threshold", "2", NULL };
	ck_assert_int_eq(tu_run(bad, NULL, 60), 2);
}
END_TEST

int main(void)
{
	const tu_case cases[] = {
		{ "single_a", single_a },
		{ "single_b", single_b },
		{ "periodic", periodic },
		{ "read_after_write", read_after_write },
	};
	/* prog_phases forks its 4 processes while the agent's thread runs: with
	 * GCC 12's libasan (no fork handler for its allocator, see check_posix)
	 * these run in the plain build only */
	static const char *const fork_cases[] = { "single_a", "single_b", "periodic",
	                                           "read_after_write", NULL };
	const tu_suite_opts o = { .setup = setup, .teardown = teardown, .timeout_s = 180,
	                          .not_asan = fork_cases };
	return tu_run_cases("phases", cases, sizeof(cases) / sizeof(cases[0]), &o);
}
