/* check_budget.c - what a busy real source costs on disk (issue 16): real
 * programs under the real interposer at the default interval, streamed to
 * `iogram record`; the recording's size against the budget, and the model
 * it gives against the programs' ground truth (every path, every byte).
 *
 * The budget, as counts (a size bound is no timing): at most BUDGET_S
 * bytes per DELTA (one a second at the default interval; a latency
 * histogram that fills ~150 bins a second waits and goes every third
 * DELTA), at most 16 access samples a second (64 at the start), plus
 * BUDGET_FILE bytes per distinct file the program touched (its name and
 * record, sent when first used, and its last record and totals at the
 * end; bounded by IOGRAM_MAX_FILES), plus
 * BUDGET_FIXED per source (file header, catalog, keyframes, the final
 * SNAPSHOT, the index). Before the agent budgeted its samples (256 per
 * DELTA, ~2 KB), named files by a 64-bit hash and resent every name and
 * record in a SNAPSHOT every 10 s, the first two jobs below cost 2-5x this.
 * A DELTA carries at most FILE_RECS file records (the agent's
 * IOG_FREC_BUDGET; the others wait, at most 30 s, coalescing, and all go
 * in the DELTA before a SNAPSHOT), so files touched again and again cost
 * their record every 30 s or so, not every second. */
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
#define BUDGET_FILE 64
#define FILE_RECS 8
#define HIST_WAIT 2      /* the agent's HIST_MAX_WAIT */
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
 * the program's exit status, its stdout in dir/out. dir_files: the
 * agent's IOGRAM_DIR_FILES ("" for its default). */
static int run_recorded(char *const *cmd, const char *dir_files)
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
	                      "IOGRAM_OUTPUT", "IOGRAM_PATHS",
	                      *dir_files ? tu_fmt("IOGRAM_DIR_FILES=%s", dir_files) : "IOGRAM_DIR_FILES",
	                      NULL };
	tu_opts o = { .out = tu_fmt("%s/out", dir), .env = env };
	pid_t p = tu_spawn_opt(argv, &o);
	ck_assert_int_gt(p, 0);
	int st = tu_wait(p, 600);
	tu_sleep_ms(1500);   /* the finals (IOGRAM_EXIT_WAIT_MS) reach the recorder */
	ck_assert_int_eq(tu_stop(rp, SIGINT, 60), 0);
	return st;
}

/* fn on every message of the recording. */
static void rec_walk(void (*fn)(const iogp_msg *, void *), void *ctx)
{
	iogp_replay_reader *r;
	char err[256] = "";
	ck_assert_msg(iogp_replay_open(&r, tu_fmt("%s/rec/run-1.iogr", dir), err, sizeof(err)) == 0,
	              "%s", err);
	iogp_replay_rec x;
	iogp_msg m;
	iogp_msg_init(&m);
	for (int guard = 0; guard < 1000000 && iogp_replay_next(r, &x) == 0; guard++) {
		if (x.keyframe)
			continue;
		ck_assert_int_eq(iogp_msg_decode(&m, x.payload, x.len, NULL, 0), 0);
		fn(&m, ctx);
	}
	iogp_msg_free(&m);
	iogp_replay_close_reader(r);
}

/* The DELTAs (each a second or less), the access samples they carried and
 * the most file records one carried, but for the DELTA before a SNAPSHOT
 * or at the end: the agent sends everything that waits in it. */
struct deltas {
	uint64_t n, samples;
	uint32_t frecs, last;
};

static void count_delta(const iogp_msg *m, void *ctx)
{
	struct deltas *d = ctx;
	if (m->kind == IOGP_SNAPSHOT)
		d->last = 0;
	if (m->kind != IOGP_DELTA)
		return;
	if (d->last > d->frecs)
		d->frecs = d->last;
	d->last = m->nfilerecs;
	d->n++;
	d->samples += m->naccess;
}

/* The most DELTAs in a row without a histogram (by name), between the
 * first and the last that carry it. */
struct hist_gap {
	const char *name;
	uint32_t id;
	int known;
	uint64_t run, worst, seen;
};

static void hist_gap_msg(const iogp_msg *m, void *ctx)
{
	struct hist_gap *g = ctx;
	for (uint32_t i = 0; m->kind == IOGP_HELLO && i < m->nmetrics; i++)
		if (!strcmp(m->metrics[i].name, g->name)) {
			g->id = m->metrics[i].id;
			g->known = 1;
		}
	if (m->kind != IOGP_DELTA || !g->known)
		return;
	for (uint32_t i = 0; i < m->nhists; i++)
		if (m->hists[i].id == g->id) {
			if (g->seen && g->run > g->worst)
				g->worst = g->run;
			g->seen++;
			g->run = 0;
			return;
		}
	g->run++;
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
	struct stat sb;
	ck_assert_int_eq(stat(tu_fmt("%s/rec/run-1.iogr", dir), &sb), 0);
	off_t bytes = sb.st_size;
	struct deltas d = { 0 };
	rec_walk(count_delta, &d);
	uint64_t deltas = d.n, samples = d.samples;
	uint32_t frecs = d.frecs;
	ck_assert_uint_gt(deltas, 3);
	uint64_t bound = per_delta * deltas + BUDGET_FILE * files + BUDGET_FIXED;
	fprintf(stderr, "%s: %lld B on disk for %" PRIu64 " DELTAs and %" PRIu64
	        " files (%.1f B per DELTA), %" PRIu64 " access samples, <= %u file records a "
	        "DELTA; budget %" PRIu64 " B\n", what, (long long)bytes, deltas, files,
	        (double)bytes / (double)deltas, samples, frecs, bound);
	/* every run here is shorter than the agent's longest wait (30 s) */
	ck_assert_msg(frecs <= FILE_RECS, "%s: a DELTA with %u file records", what, frecs);
	ck_assert_msg((uint64_t)bytes <= bound,
	              "%s: %lld B on disk > budget %" PRIu64 " (%" PRIu64 " DELTAs, %" PRIu64 " files)",
	              what, (long long)bytes, bound, deltas, files);
	/* the agent's sample budget (publisher.c): 64 at the start, then at
	 * most 16 a second, at least 4 a DELTA (was 256 a DELTA) */
	ck_assert_msg(samples <= SAMPLES_START + (SAMPLES_PER_S + SAMPLES_MIN) * deltas,
	              "%s: %" PRIu64 " access samples in %" PRIu64 " DELTAs", what, samples, deltas);
}

/* A small-files job: 20 files a second for 15 s, each written once and
 * read back once. Without aggregation by directory (IOGRAM_DIR_FILES=0)
 * the model ends with every one of the 300 paths and its exact bytes, and
 * the recording stays within the budget. */
START_TEST(small_files)
{
	enum { F = 20, R = 15, SIZE = 3901 };
	char *cmd[] = { tu_fmt("%s/prog_small_files", tu_env("IOGRAM_PROGS")),
	                tu_fmt("%s/data", dir), tu_fmt("%d", F), tu_fmt("%d", R), "1000",
	                tu_fmt("%d", SIZE), NULL };
	ck_assert_int_eq(run_recorded(cmd, "0"), 0);
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

/* 300 files written again and again for 5-15 s (one thread, 20,000
 * one-byte pwrites each, round robin), then read back: every file changes
 * every second. Sending every file's record every second (~15 B each on
 * disk) cost ~3x this budget; now 8 a DELTA go, the rest coalesce, and
 * every total is still exact at the end. */
START_TEST(files_rewritten)
{
	enum { F = 300, W = 6000000 };
	char *cmd[] = { tu_fmt("%s/prog_files_mt", tu_env("IOGRAM_PROGS")), tu_fmt("%s/data", dir),
	                "1", tu_fmt("%d", F), tu_fmt("%d", W), "1", NULL };
	ck_assert_int_eq(run_recorded(cmd, "0"), 0);
	int nrec;
	iogp_model *m = tu_load_runs(tu_fmt("%s/rec", dir), &nrec);
	ck_assert_int_eq(nrec, 1);
	ck_assert_uint_eq(counter(m, "posix.write.bytes"), (uint64_t)W);
	iogp_file_info *fi;
	size_t n;
	ck_assert_int_eq(iogp_model_files(m, NULL, IOGP_FR_POSIX, &fi, &n), 0);
	int found = 0;
	for (int k = 0; k < F; k++) {
		const char *path = tu_fmt("%s/data/f%04d", dir, k);
		for (size_t i = 0; i < n; i++) {
			if (strcmp(fi[i].path, path))
				continue;
			ck_assert_uint_eq(fi[i].total.op[1].ops, W / F);
			ck_assert_uint_eq(fi[i].total.op[1].bytes, W / F);
			ck_assert_uint_eq(fi[i].total.op[0].bytes, W / F);
			found++;
		}
	}
	ck_assert_int_eq(found, F);
	iogp_model_files_free(fi);
	iogp_model_free(m);
	check_budget("300 files rewritten", F, BUDGET_S);
}
END_TEST

/* A busy reader: 4 KiB preads as fast as it goes, 20 million of them and
 * for 14 s at least (a fast machine did them in 3 s: 3 DELTAs, too few to
 * see the histogram wait and come back; it comes every third at worst):
 * one file, samples of every interval's requests. */
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
	                tu_fmt("%ld", N), "for=14", NULL };
	ck_assert_int_eq(run_recorded(cmd, ""), 0);
	int nrec;
	iogp_model *m = tu_load_runs(tu_fmt("%s/rec", dir), &nrec);
	ck_assert_int_eq(nrec, 1);
	/* the program's own warm-up reads come first (pread_loop.c) */
	uint64_t ops = counter(m, "posix.read.ops");
	ck_assert_uint_ge(ops, (uint64_t)N);
	ck_assert_uint_eq(counter(m, "posix.read.bytes"), ops * 4096);
	/* its latency histogram fills 100-160 bins a second (~250 B on disk):
	 * over budget, it waits a DELTA or two (the agent's HIST_MAX_WAIT) and
	 * goes coalesced; every request is still in it at the end */
	iogp_hist h;
	ck_assert_int_eq(iogp_model_hist(m, "posix.read.latency", NULL, &h), 0);
	ck_assert_uint_eq(h.total, ops);
	iogp_hist_free(&h);
	iogp_model_free(m);
	struct hist_gap g = { .name = "posix.read.latency" };
	rec_walk(hist_gap_msg, &g);
	fprintf(stderr, "busy reader: the latency histogram in %" PRIu64 " DELTAs, at most %" PRIu64
	        " in a row without it\n", g.seen, g.worst);
	ck_assert_uint_gt(g.seen, 3);
	ck_assert_uint_le(g.worst, HIST_WAIT);
	check_budget("busy reader", 1, BUDGET_S);
}
END_TEST

/* Small files in two directories, 40 a second for 8 s: 300 in big/, 20
 * in small/, each written once and read twice. With the default
 * IOGRAM_DIR_FILES (16) each directory's first 16 files have their own
 * name and record, the rest fold into the directory's record "<dir>/\*",
 * which counts them exactly (a file opened again is not folded again);
 * every byte is in the totals and in the directories' records, and the
 * recording stays within the budget of 34 names: one name and record for
 * each of the 320 files cost ~2x that. */
START_TEST(dirs_folded)
{
	enum { BIG = 300, SMALL = 20, SIZE = 1709, OWN = 16 };
	const char *big = tu_fmt("%s/data/big", dir), *small = tu_fmt("%s/data/small", dir);
	ck_assert_int_eq(mkdir(big, 0700), 0);
	ck_assert_int_eq(mkdir(small, 0700), 0);
	char *cmd[] = { tu_fmt("%s/prog_dir_files", tu_env("IOGRAM_PROGS")), tu_fmt("%d", SIZE),
	                "40", (char *)big, tu_fmt("%d", BIG), (char *)small, tu_fmt("%d", SMALL),
	                NULL };
	ck_assert_int_eq(run_recorded(cmd, ""), 0);
	ck_assert_str_eq(tu_slurp(tu_fmt("%s/out", dir)),
	                 tu_fmt("files %d bytes %d\n", BIG + SMALL, (BIG + SMALL) * SIZE));
	check_budget("files in two directories", 2 * (OWN + 1), BUDGET_S);
	int nrec;
	iogp_model *m = tu_load_runs(tu_fmt("%s/rec", dir), &nrec);
	ck_assert_int_eq(nrec, 1);
	ck_assert_uint_eq(counter(m, "posix.write.bytes"), (uint64_t)(BIG + SMALL) * SIZE);
	ck_assert_uint_eq(counter(m, "posix.write.ops"), BIG + SMALL);
	ck_assert_uint_eq(counter(m, "posix.read.bytes"), 2ull * (BIG + SMALL) * SIZE);
	ck_assert_uint_eq(counter(m, "posix.read.ops"), 2 * (BIG + SMALL));
	iogp_file_info *fi;
	size_t n;
	ck_assert_int_eq(iogp_model_files(m, NULL, IOGP_FR_POSIX, &fi, &n), 0);
	const char *dirs[2] = { big, small };
	const uint64_t files[2] = { BIG, SMALL };
	for (int d = 0; d < 2; d++) {
		size_t dl = strlen(dirs[d]);
		uint64_t own = 0, folded = 0, aggs = 0, wbytes = 0, rbytes = 0, wops = 0;
		for (size_t i = 0; i < n; i++) {
			ck_assert_msg(!fi[i].other && strcmp(fi[i].path, "?") != 0, "unnamed or other record");
			if (strncmp(fi[i].path, dirs[d], dl) || fi[i].path[dl] != '/')
				continue;
			wbytes += fi[i].total.op[1].bytes;
			rbytes += fi[i].total.op[0].bytes;
			wops += fi[i].total.op[1].ops;
			if (!strcmp(fi[i].path + dl, "/*")) {
				ck_assert(fi[i].total.flags & IOGP_FR_DIRAGG);
				folded += fi[i].total.overflow;
				aggs++;
				char label[512];
				iogp_file_label(label, sizeof(label), fi[i].path, fi[i].other, fi[i].total.overflow);
				ck_assert_str_eq(label, tu_fmt("%s/* (%d files)", dirs[d], (int)files[d] - OWN));
			} else {
				ck_assert(!(fi[i].total.flags & IOGP_FR_DIRAGG));
				ck_assert_uint_eq(fi[i].total.op[1].bytes, SIZE);
				ck_assert_uint_eq(fi[i].total.op[0].bytes, 2 * SIZE);
				own++;
			}
		}
		ck_assert_uint_eq(own, OWN);
		ck_assert_uint_eq(aggs, 1);
		ck_assert_uint_eq(folded, files[d] - OWN);
		ck_assert_uint_eq(wbytes, files[d] * SIZE);
		ck_assert_uint_eq(rbytes, 2 * files[d] * SIZE);
		ck_assert_uint_eq(wops, files[d]);
	}
	iogp_model_files_free(fi);
	iogp_model_free(m);
}
END_TEST

int main(void)
{
	const tu_case cases[] = {
		{ "small_files", small_files },
		{ "files_rewritten", files_rewritten },
		{ "busy_reader", busy_reader },
		{ "dirs_folded", dirs_folded },
	};
	const tu_suite_opts o = { .setup = setup, .teardown = teardown, .timeout_s = 600 };
	return tu_run_cases("budget", cases, sizeof(cases) / sizeof(cases[0]), &o);
}
