/* check_insights.c - findings on real programs under the interposer, each
 * job built to trigger one rule (and the rule names what it found), and a
 * clean sequential large-block job that must stay silent. */
#include <check.h>
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "iogp_err.h"
#include "iogp_export.h"
#include "iogp_insights.h"
#include "iogp_metrics.h"
#include "iogp_model.h"
#include "testutil.h"
#include "testutil_iogr.h"

static char dir[256];

static void setup(void)
{
	tu_tmpdir(dir, sizeof(dir), "iogram-insights");
	ck_assert_int_eq(mkdir(tu_fmt("%s/rec", dir), 0700), 0);
	ck_assert_int_eq(mkdir(tu_fmt("%s/data", dir), 0700), 0);
}

static void teardown(void)
{
	tu_rmdir_all(dir);
}

/* sh -c SCRIPT under iogram-run, recording every process into dir/rec. */
static void run_sh(const char *script)
{
	char *argv[] = { (char *)tu_env("IOGRAM_RUN"), "--endpoint", "none", "--interval", "100",
	                 "--output", tu_fmt("%s/rec/run-%%p.iogr", dir), "--", "sh", "-c",
	                 (char *)script, NULL };
	ck_assert_int_eq(tu_run(argv, NULL, 120), 0);
}

static iogp_model *load(void)
{
	int n;
	iogp_model *m = tu_load_runs(tu_fmt("%s/rec", dir), &n);
	ck_assert_int_gt(n, 0);
	return m;
}

/* The findings of the recorded job; which rules fired, as a bit mask. */
static unsigned fired(iogp_insight *out, size_t *n)
{
	iogp_model *m = load();
	ck_assert_int_eq(iogp_model_insights(m, NULL, out, 32, n), 0);
	/* in steps of one source, then of two: the same findings */
	for (size_t step = 1; step <= 2; step++) {
		iogp_insight v[32];
		size_t nv, steps = 0;
		iogp_insights_job *j = iogp_insights_begin(m, NULL);
		ck_assert_ptr_nonnull(j);
		while (iogp_insights_step(j, m, step) == 1)
			steps++;
		ck_assert_uint_eq(steps, (iogp_model_source_count(m) + step - 1) / step - 1);
		ck_assert_int_eq(iogp_insights_step(j, m, step), 0);
		ck_assert_int_eq(iogp_insights_step(j, NULL, step), IOGP_EINVAL);
		ck_assert_int_eq(iogp_insights_finish(j, m, v, 32, &nv), 0);
		iogp_insights_free(j);
		ck_assert_uint_eq(nv, *n);
		for (size_t i = 0; i < nv; i++)
			ck_assert_str_eq(v[i].text, out[i].text);
	}
	iogp_model_free(m);
	unsigned mask = 0;
	for (size_t i = 0; i < *n; i++) {
		mask |= 1u << out[i].rule;
		ck_assert(out[i].text[0] != '\0');
		ck_assert_ptr_nonnull(out[i].panel);
	}
	return mask;
}

static const iogp_insight *find(const iogp_insight *v, size_t n, int rule)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].rule == rule)
			return &v[i];
	return NULL;
}

START_TEST(clean_job_silent)
{
	run_sh(tu_fmt("dd if=/dev/zero of=%s/data/big bs=1M count=64 2>/dev/null && "
	              "dd if=%s/data/big of=/dev/null bs=1M 2>/dev/null", dir, dir));
	iogp_insight v[32];
	size_t n;
	unsigned mask = fired(v, &n);
	ck_assert_msg(mask == 0, "a clean job has findings: %s", n ? v[0].text : "");
}
END_TEST

START_TEST(small_requests_and_sync)
{
	run_sh(tu_fmt("dd if=/dev/zero of=%s/data/small bs=512 count=3000 oflag=dsync 2>/dev/null",
	              dir));
	iogp_insight v[32];
	size_t n;
	unsigned mask = fired(v, &n);
	ck_assert(mask & (1u << IOGP_INS_SMALL_REQUESTS));
	const iogp_insight *x = find(v, n, IOGP_INS_SMALL_REQUESTS);
	ck_assert_msg(strstr(x->text, "writes: 100% of 3") != NULL, "%s", x->text);
	ck_assert_str_eq(x->panel, "size");
	ck_assert(mask & (1u << IOGP_INS_SYNC_EVERY_WRITE));   /* O_DSYNC: every write waits */
}
END_TEST

START_TEST(random_file)
{
	/* fio's random 4 KiB reads of one file */
	run_sh(tu_fmt("fio --name=r --filename=%s/data/rnd --size=4M --rw=randread --bs=4k "
	              "--ioengine=psync --randrepeat=1 --output=/dev/null", dir));
	iogp_insight v[32];
	size_t n;
	unsigned mask = fired(v, &n);
	ck_assert(mask & (1u << IOGP_INS_RANDOM_FILE));
	const iogp_insight *x = find(v, n, IOGP_INS_RANDOM_FILE);
	ck_assert_str_eq(x->where, tu_fmt("%s/data/rnd", dir));
	ck_assert_msg(strstr(x->text, "random reads") != NULL, "%s", x->text);
}
END_TEST

START_TEST(metadata_and_small_files)
{
	run_sh(tu_fmt("%s/prog_meta_storm %s/data 3000 100", tu_env("IOGRAM_PROGS"), dir));
	iogp_insight v[32];
	size_t n;
	unsigned mask = fired(v, &n);
	ck_assert_msg(mask & (1u << IOGP_INS_META_DOMINATES), "no metadata finding (%zu others)", n);
	ck_assert(mask & (1u << IOGP_INS_SMALL_FILES));
	ck_assert(strstr(find(v, n, IOGP_INS_SMALL_FILES)->text, "3000 files") != NULL);
}
END_TEST

START_TEST(straggler_and_one_rank)
{
	/* four writers, one ten times the others */
	run_sh(tu_fmt("for i in 1 2 3; do dd if=/dev/zero of=%s/data/w$i bs=64k count=200 "
	              "conv=fsync 2>/dev/null & done; dd if=/dev/zero of=%s/data/w4 bs=64k "
	              "count=4000 conv=fsync 2>/dev/null; wait", dir, dir));
	iogp_insight v[32];
	size_t n;
	unsigned mask = fired(v, &n);
	ck_assert_msg(mask & (1u << IOGP_INS_STRAGGLER), "no straggler among %zu findings", n);
	ck_assert(!(mask & (1u << IOGP_INS_ONE_RANK)));
	/* now one writer and three idle processes */
	tu_rmdir_all(tu_fmt("%s/rec", dir));
	ck_assert_int_eq(mkdir(tu_fmt("%s/rec", dir), 0700), 0);
	run_sh(tu_fmt("/bin/true; /bin/true; /bin/true; dd if=/dev/zero of=%s/data/one bs=1M "
	              "count=8 2>/dev/null", dir));
	mask = fired(v, &n);
	ck_assert_msg(mask & (1u << IOGP_INS_ONE_RANK), "no one-rank finding among %zu", n);
	/* the writer alone selected: no "one source does the I/O" (it said
	 * "moved 100.0% of 8 MiB among 5 sources", counting the whole job) */
	iogp_model *m = load();
	size_t best = 0;
	uint64_t top = 0;
	for (size_t i = 0; i < iogp_model_source_count(m); i++) {
		uint64_t b = 0;
		ck_assert_int_eq(iogp_model_counter_each(m, IOGP_M_WRITE_BYTES, i, 1, &b), 0);
		if (b > top) {
			top = b;
			best = i;
		}
	}
	ck_assert_uint_eq(top, 8u << 20);
	iogp_source_info si;
	ck_assert_int_eq(iogp_model_source(m, best, &si), 0);
	iogp_sel one = { .kind = IOGP_SEL_SOURCE, .source = si.id };
	ck_assert_int_eq(iogp_model_insights(m, &one, v, 32, &n), 0);
	ck_assert_msg(!find(v, n, IOGP_INS_ONE_RANK), "%s", find(v, n, IOGP_INS_ONE_RANK) ?
	              find(v, n, IOGP_INS_ONE_RANK)->text : "");
	/* its node holds every process of the job: there the rule stands */
	iogp_sel node = { .kind = IOGP_SEL_NODE, .node = si.node };
	ck_assert_int_eq(iogp_model_insights(m, &node, v, 32, &n), 0);
	ck_assert_ptr_nonnull(find(v, n, IOGP_INS_ONE_RANK));
	const char *among = tu_fmt("among %zu sources", iogp_model_source_count(m));
	ck_assert_ptr_nonnull(strstr(find(v, n, IOGP_INS_ONE_RANK)->text, among));
	iogp_model_free(m);
}
END_TEST

START_TEST(stdio_text)
{
	/* sort writes 20,000 short lines through stdio */
	FILE *f = fopen(tu_fmt("%s/data/lines", dir), "w");
	ck_assert_ptr_nonnull(f);
	for (int i = 0; i < 20000; i++)
		fprintf(f, "%05d\n", (i * 7919) % 20000);
	fclose(f);
	run_sh(tu_fmt("sort %s/data/lines > %s/data/sorted", dir, dir));
	iogp_insight v[32];
	size_t n;
	unsigned mask = fired(v, &n);
	ck_assert_msg(mask & (1u << IOGP_INS_STDIO_TEXT), "no stdio finding among %zu", n);
}
END_TEST

/* A job belongs to the model it began on, also when a new model (a
 * replay's seek) lands at the freed one's address: the viewer can queue two
 * seeks in one turn, and a job that went on over the new model mixed two
 * passes (found by review). */
START_TEST(job_of_freed_model)
{
	int reused = 0;
	for (int round = 0; round < 100; round++) {
		iogp_model *m0 = iogp_model_new(NULL);
		ck_assert_ptr_nonnull(m0);
		iogp_insights_job *j = iogp_insights_begin(m0, NULL);
		ck_assert_ptr_nonnull(j);
		ck_assert_uint_ne(iogp_model_serial(m0), 0);
		uint64_t serial = iogp_model_serial(m0);
		iogp_model_free(m0);
		iogp_model *m1 = iogp_model_new(NULL);
		ck_assert_ptr_nonnull(m1);
		ck_assert_uint_ne(iogp_model_serial(m1), serial);
		reused += m1 == m0;
		ck_assert_int_eq(iogp_insights_step(j, m1, 1), IOGP_EINVAL);
		iogp_insight v[4];
		size_t n = 99;
		ck_assert_int_eq(iogp_insights_finish(j, m1, v, 4, &n), IOGP_EINVAL);
		ck_assert_uint_eq(n, 0);
		iogp_insights_free(j);
		iogp_model_free(m1);
	}
	/* glibc hands the same chunk back, so the case the check is for
	 * happened; ASan's quarantine never does (there only the serials differ) */
	const char *asan = getenv("IOGRAM_ASAN_BUILD");
	if (!asan || strcmp(asan, "1"))
		ck_assert_int_gt(reused, 0);
}
END_TEST

START_TEST(rules_table)
{
	size_t n;
	const iogp_insight_rule *r = iogp_insight_rules(&n);
	ck_assert_uint_eq(n, IOGP_INS_N);
	for (size_t i = 0; i < n; i++) {
		ck_assert_int_eq(r[i].rule, (int)i);
		ck_assert(r[i].name && r[i].threshold && r[i].evidence && r[i].why);
	}
}
END_TEST

int main(void)
{
	const tu_case cases[] = {
		{ "rules_table", rules_table },
		{ "clean_job_silent", clean_job_silent },
		{ "small_requests_and_sync", small_requests_and_sync },
		{ "random_file", random_file },
		{ "metadata_and_small_files", metadata_and_small_files },
		{ "straggler_and_one_rank", straggler_and_one_rank },
		{ "stdio_text", stdio_text },
		{ "job_of_freed_model", job_of_freed_model },
	};
	/* fio forks its job from a process the agent's thread runs in: GCC 12's
	 * libasan has no fork handler for its allocator (see check_posix), so
	 * that case runs in the plain build only */
	static const char *const fork_cases[] = { "random_file", NULL };
	const tu_suite_opts o = { .setup = setup, .teardown = teardown, .timeout_s = 180,
	                          .not_asan = fork_cases };
	return tu_run_cases("insights", cases, sizeof(cases) / sizeof(cases[0]), &o);
}
