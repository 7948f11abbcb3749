/* check_budget.c - what a busy real source costs on disk (issue 16): real
 * programs under the real interposer at the default interval, streamed to
 * `iogram record`; the recording's size against the budget, and the model
 * it gives against the programs' ground truth (every path, every byte).
 *
 * The budget, as counts (a size bound is no timing): at most BUDGET_S
 * bytes per DELTA (one a second at the default interval; a source whose
 * latency histogram alone fills ~150 bins a second gets half as much
 * again), at most 16 access samples a second (64 at the start), plus
 * BUDGET_FILE bytes per distinct file the program touched (its name and
 * record, sent when first used; bounded by IOGRAM_MAX_FILES), plus
 * BUDGET_FIXED per source (file header, catalog, keyframes, the final
 * SNAPSHOT, the index). Before the agent budgeted its samples (256 per
 * DELTA, ~2 KB), named files by a 64-bit hash and resent every name and
 * record in a SNAPSHOT every 10 s, both jobs below cost 2-5x this. */
#include <check.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "iogp.h"
#include "testutil.h"
#include "testutil_iogr.h"

#define BUDGET_S 400
#define BUDGET_FILE 40
#define BUDGET_FIXED 4096
#define SAMPLES_START 64
#define SAMPLES_PER_S 16
#define SAMPLES_MIN 4

static char dir[256];

static void setup(void)
{
	tu_tmpdir(dir, sizeof(dir), "iogram-budget");
	ck_assert_int_eq(mkdir(tu_fmt("%s/rec", dir), 0700), 0);
	ck_assert_int_eq(mkdir(tu_fmt("%s/data", dir), 0700), 0);
}

static void teardown(void)
{
	tu_rmdir_all(dir);
}

/* cmd under iogram-run, streaming at the default interval to `iogram
 * record` on a free loopback port, recorded into dir/rec/run-1.iogr;
 * the program's exit status, its stdout in dir/out. */
static int run_recorded(char *const *cmd)
{
	int port = tu_free_port();
	const char *rec = tu_fmt("%s/rec/run-1.iogr", dir);
	char *rargv[] = { (char *)tu_env("IOGRAM_BIN"), "record", "--quiet", "--listen",
	                  tu_ep(port), "-o", (char *)rec, NULL };
	pid_t rp = tu_spawn(rargv, NULL, tu_fmt("%s/rec.err", dir), 0);
	ck_assert_int_gt(rp, 0);
	ck_assert_msg(tu_wait_port(port, 30), "recorder not listening");
	char *argv[32];
	int n = 0;
	argv[n++] = (char *)tu_env("IOGRAM_RUN");
	argv[n++] = "--";
	for (int i = 0; cmd[i] && n < 31; i++)
		argv[n++] = cmd[i];
	argv[n] = NULL;
	const char *env[] = { tu_fmt("IOGRAM_ENDPOINT=%s", tu_ep(port)), "IOGRAM_INTERVAL_MS",
	                      "IOGRAM_OUTPUT", NULL };
	tu_opts o = { .out = tu_fmt("%s/out", dir), .env = env };
	pid_t p = tu_spawn_opt(argv, &o);
	ck_assert_int_gt(p, 0);
	int st = tu_wait(p, 600);
	tu_sleep_ms(1500);   /* the finals (IOGRAM_EXIT_WAIT_MS) reach the recorder */
	ck_assert_int_eq(tu_stop(rp, SIGINT, 60), 0);
	return st;
}

/* The recording's size, its DELTAs (each a second or less) and the access
 * samples they carried. */
static void rec_size(off_t *bytes, uint64_t *deltas, uint64_t *samples)
{
	const char *rec = tu_fmt("%s/rec/run-1.iogr", dir);
	struct stat sb;
	ck_assert_int_eq(stat(rec, &sb), 0);
	*bytes = sb.st_size;
	iogp_replay_reader *r;
	char err[256] = "";
	ck_assert_msg(iogp_replay_open(&r, rec, err, sizeof(err)) == 0, "%s", err);
	iogp_replay_rec x;
	iogp_msg m;
	iogp_msg_init(&m);
	*deltas = *samples = 0;
	for (int guard = 0; guard < 1000000 && iogp_replay_next(r, &x) == 0; guard++) {
		if (x.keyframe)
			continue;
		ck_assert_int_eq(iogp_msg_decode(&m, x.payload, x.len, NULL, 0), 0);
		if (m.kind != IOGP_DELTA)
			continue;
		(*deltas)++;
		*samples += m.naccess;
	}
	iogp_msg_free(&m);
	iogp_replay_close_reader(r);
}

static uint64_t counter(const iogp_model *m, const char *name)
{
	uint64_t v = 0;
	int rc = iogp_model_counter(m, name, NULL, &v);
	ck_assert_msg(rc == 0, "counter %s: %d", name, rc);
	return v;
}

static void check_budget(const char *what, uint64_t files, uint64_t per_delta)
{
	off_t bytes;
	uint64_t deltas, samples;
	rec_size(&bytes, &deltas, &samples);
	ck_assert_uint_gt(deltas, 3);
	uint64_t bound = per_delta * deltas + BUDGET_FILE * files + BUDGET_FIXED;
	fprintf(stderr, "%s: %lld B on disk for %" PRIu64 " DELTAs and %" PRIu64
	        " files (%.1f B per DELTA), %" PRIu64 " access samples; budget %" PRIu64 " B\n",
	        what, (long long)bytes, deltas, files, (double)bytes / (double)deltas, samples, bound);
	ck_assert_msg((uint64_t)bytes <= bound,
	              "%s: %lld B on disk > budget %" PRIu64 " (%" PRIu64 " DELTAs, %" PRIu64 " files)",
	              what, (long long)bytes, bound, deltas, files);
	/* the agent's sample budget (publisher.c): 64 at the start, then at
	 * most 16 a second, at least 4 a DELTA (was 256 a DELTA) */
	ck_assert_msg(samples <= SAMPLES_START + (SAMPLES_PER_S + SAMPLES_MIN) * deltas,
	              "%s: %" PRIu64 " access samples in %" PRIu64 " DELTAs", what, samples, deltas);
}

/* A small-files job: 20 files a second for 15 s, each written once and
 * read back once. The model ends with every one of the 300 paths and its
 * exact bytes, and the recording stays within the budget. */
START_TEST(small_files)
{
	enum { F = 20, R = 15, SIZE = 3901 };
	char *cmd[] = { tu_fmt("%s/prog_small_files", tu_env("IOGRAM_PROGS")),
	                tu_fmt("%s/data", dir), tu_fmt("%d", F), tu_fmt("%d", R), "1000",
	                tu_fmt("%d", SIZE), NULL };
	ck_assert_int_eq(run_recorded(cmd), 0);
	ck_assert_str_eq(tu_slurp(tu_fmt("%s/out", dir)),
	                 tu_fmt("files %d bytes %d\n", F * R, F * R * SIZE));
	int nrec;
	iogp_model *m = tu_load_runs(tu_fmt("%s/rec", dir), &nrec);
	ck_assert_int_eq(nrec, 1);
	ck_assert_uint_eq(counter(m, "posix.write.bytes"), (uint64_t)F * R * SIZE);
	ck_assert_uint_eq(counter(m, "posix.read.bytes"), (uint64_t)F * R * SIZE);
	iogp_file_info *fi;
	size_t n;
	ck_assert_int_eq(iogp_model_files(m, NULL, IOGP_FR_POSIX, &fi, &n), 0);
	int found = 0;
	for (int r = 0; r < R; r++)
		for (int k = 0; k < F; k++) {
			const char *path = tu_fmt("%s/data/s%05d-%04d", dir, r, k);
			const iogp_file_info *f = NULL;
			for (size_t i = 0; i < n && f == NULL; i++)
				if (!strcmp(fi[i].path, path))
					f = &fi[i];
			ck_assert_msg(f != NULL, "%s: no record", path);
			ck_assert_uint_eq(f->total.op[1].ops, 1);
			ck_assert_uint_eq(f->total.op[1].bytes, SIZE);
			ck_assert_uint_eq(f->total.op[0].ops, 1);
			ck_assert_uint_eq(f->total.op[0].bytes, SIZE);
			found++;
		}
	ck_assert_int_eq(found, F * R);
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(!fi[i].other && strcmp(fi[i].path, "?") != 0, "unnamed or other record");
	iogp_model_files_free(fi);
	iogp_model_free(m);
	check_budget("small files", F * R, BUDGET_S);
}
END_TEST

/* A busy reader: 4 KiB preads as fast as it goes, 20 million of them (a
 * few seconds to a minute): one file, samples of every interval's
 * requests. */
START_TEST(busy_reader)
{
	const long N = 20000000;
	const char *file = tu_fmt("%s/data/pread.dat", dir);
	FILE *f = fopen(file, "w");
	ck_assert_ptr_nonnull(f);
	static char blk[1 << 20];
	memset(blk, 'p', sizeof(blk));
	ck_assert_uint_eq(fwrite(blk, 1, sizeof(blk), f), sizeof(blk));
	fclose(f);
	char *cmd[] = { tu_fmt("%s/prog_pread_loop", tu_env("IOGRAM_PROGS")), (char *)file,
	                tu_fmt("%ld", N), NULL };
	ck_assert_int_eq(run_recorded(cmd), 0);
	int nrec;
	iogp_model *m = tu_load_runs(tu_fmt("%s/rec", dir), &nrec);
	ck_assert_int_eq(nrec, 1);
	/* the program's own warm-up reads come first (pread_loop.c) */
	uint64_t ops = counter(m, "posix.read.ops");
	ck_assert_uint_ge(ops, (uint64_t)N);
	ck_assert_uint_eq(counter(m, "posix.read.bytes"), ops * 4096);
	iogp_model_free(m);
	/* its latency histogram alone fills 100-160 bins a second (~250 B on
	 * disk), and how many depends on the machine's noise: a looser bound */
	check_budget("busy reader", 1, BUDGET_S * 3 / 2);
}
END_TEST

int main(void)
{
	const tu_case cases[] = {
		{ "small_files", small_files },
		{ "busy_reader", busy_reader },
	};
	const tu_suite_opts o = { .setup = setup, .teardown = teardown, .timeout_s = 600 };
	return tu_run_cases("budget", cases, sizeof(cases) / sizeof(cases[0]), &o);
}
