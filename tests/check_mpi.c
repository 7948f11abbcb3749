/* check_mpi.c - the MPI layer (libiogram-mpi) under real Open MPI, mpirun
 * --oversubscribe -np 4, against the truth of each program's parameters
 * (tests/progs/mpi_job.c): a ring and an all-to-all give the traffic matrix
 * (node x node with IOGRAM_NODE per rank, rank x rank), the message-size
 * histogram and the collectives exactly; MPI-IO counts exactly per rank with
 * the collective/independent split, while posix.* still equals strace; a
 * program that never calls MPI_Init is counted as without the layer; MPI_Finalize
 * flushes; a rank that aborts loses at most its last interval. */
#include <check.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include "iogp_err.h"
#include "iogp_export.h"
#include "iogp_model.h"
#include "testutil.h"
#include "testutil_iogr.h"

#define NP 4
static char dir[256];

static void setup(void)
{
	tu_tmpdir(dir, sizeof(dir), "iogram-mpi");
	ck_assert_int_eq(mkdir(tu_fmt("%s/rec", dir), 0700), 0);
}

static void teardown(void)
{
	tu_rmdir_all(dir);
}

/* mpirun's own arguments, then the command (NULL-terminated) into argv. */
static int mpirun_argv(char **argv, int max, char *const *cmd)
{
	static char *const base[] = { "mpirun", "--oversubscribe", "--bind-to", "none", "--mca", "btl",
		"self,vader", "--mca", "btl_vader_single_copy_mechanism", "none", "-np", "4" };
	int n = 0;
	for (size_t i = 0; i < sizeof(base) / sizeof(base[0]); i++)
		argv[n++] = base[i];
	for (int i = 0; cmd[i] && n < max - 1; i++)
		argv[n++] = cmd[i];
	argv[n] = NULL;
	return n;
}

/* Run prog ARGS on NP ranks under iogram-run --mpi (no --mpi when env
 * sets IOGRAM_LAYERS), rank r on node "n<r>", recording into dir/rec; env:
 * extra NAME=VALUE (or NULL). mpirun's status. */
static int run_nodes(const char *const *env, char *const *args)
{
	char *cmd[32];
	int n = 0, layers = 0;
	for (int i = 0; env && env[i]; i++)
		layers |= !strncmp(env[i], "IOGRAM_LAYERS=", 14);
	cmd[n++] = "sh";
	cmd[n++] = "-c";
	cmd[n++] = tu_fmt("exec \"$0\" %s --endpoint none --node n$OMPI_COMM_WORLD_RANK "
	                  "--output \"$IOGRAM_REC/run-%%p.iogr\" -- \"$@\"", layers ? "" : "--mpi");
	cmd[n++] = (char *)tu_env("IOGRAM_RUN");
	cmd[n++] = tu_fmt("%s/prog_mpi_job", tu_env("IOGRAM_PROGS"));
	for (int i = 0; args[i] && n < 31; i++)
		cmd[n++] = args[i];
	cmd[n] = NULL;
	char *argv[64];
	mpirun_argv(argv, 64, cmd);
	const char *e[8];
	int k = 0;
	e[k++] = tu_fmt("IOGRAM_REC=%s/rec", dir);
	e[k++] = "IOGRAM_INTERVAL_MS=100";
	for (int i = 0; env && env[i] && k < 7; i++)
		e[k++] = env[i];
	e[k] = NULL;
	tu_opts o = { .env = e, .err = tu_fmt("%s/mpirun.err", dir) };
	return tu_wait(tu_spawn_opt(argv, &o), 60);
}

static iogp_model *load(int want_files)
{
	int n;
	iogp_model *m = tu_load_runs(tu_fmt("%s/rec", dir), &n);
	ck_assert_int_eq(n, want_files);
	return m;
}

/* The source with rank r (its index). */
static size_t source_of(const iogp_model *m, int r, iogp_source_info *si)
{
	for (size_t i = 0; i < iogp_model_source_count(m); i++) {
		ck_assert_int_eq(iogp_model_source(m, i, si), 0);
		if (si->rank == r)
			return i;
	}
	ck_abort_msg("no source of rank %d", r);
	return 0;
}

static uint64_t counter(const iogp_model *m, const char *metric, uint64_t src)
{
	iogp_sel sel = { .kind = IOGP_SEL_SOURCE, .source = src };
	uint64_t v = 0;
	int rc = iogp_model_counter(m, metric, src ? &sel : NULL, &v);
	ck_assert_msg(rc == 0, "%s: %d", metric, rc);
	return v;
}

/* The histogram's count in the bin holding v. */
static uint64_t bin_count(const iogp_hist *h, uint64_t v)
{
	uint64_t idx = iogp_bins_index(&h->scheme, v), c = 0;
	for (size_t i = 0; i < h->n; i++)
		if (h->bins[i].idx == idx)
			c += h->bins[i].count;
	return c;
}

/* Ring: rank r sends K1 x S1 and K2 x S2 (persistent) bytes to r + 1. */
START_TEST(ring_matrix)
{
	const uint64_t K1 = 10, S1 = 100, K2 = 6, S2 = 4096;
	char *args[] = { "ring", "10", "100", "6", "4096", NULL };
	ck_assert_int_eq(run_nodes(NULL, args), 0);
	iogp_model *m = load(NP);
	iogp_source_info si;
	for (int r = 0; r < NP; r++) {
		size_t i = source_of(m, r, &si);
		ck_assert_str_eq(si.node, tu_fmt("n%d", r));
		ck_assert_str_eq(iogp_model_source_label(m, i, "nranks"), "4");
		ck_assert_uint_eq(counter(m, "mpi.p2p.ops", si.id), K1 + K2);
		ck_assert_uint_eq(counter(m, "mpi.p2p.bytes", si.id), K1 * S1 + K2 * S2);
		ck_assert_uint_eq(counter(m, "mpi.p2p.unmapped", si.id), 0);
		ck_assert_uint_eq(counter(m, "mpi.coll.barrier.ops", si.id), 1);
		ck_assert_uint_eq(counter(m, "mpi.coll.ops", si.id), 1);
	}
	/* node x node: n<r> -> n<r+1> only */
	iogp_matrix x;
	iogp_matrix_query q = { .by = IOGP_MATRIX_NODE };
	ck_assert_int_eq(iogp_model_matrix(m, &q, &x), 0);
	ck_assert_uint_eq(x.n, NP);
	for (int r = 0; r < NP; r++) {
		ck_assert_str_eq(x.names[r], tu_fmt("n%d", r));
		for (int c = 0; c < NP; c++) {
			int on = c == (r + 1) % NP;
			ck_assert_uint_eq(x.msgs[r * NP + c], on ? K1 + K2 : 0);
			ck_assert_uint_eq(x.bytes[r * NP + c], on ? K1 * S1 + K2 * S2 : 0);
		}
		ck_assert_uint_eq(x.row_msgs[r], K1 + K2);
		ck_assert_uint_eq(x.col_bytes[r], K1 * S1 + K2 * S2);
	}
	ck_assert_uint_eq(x.total_msgs, NP * (K1 + K2));
	ck_assert_uint_eq(x.other_msgs, 0);
	iogp_matrix_free(&x);
	/* rank x rank of node n1: rank 1 alone, its sends go elsewhere */
	q = (iogp_matrix_query){ .by = IOGP_MATRIX_RANK, .node = "n1" };
	ck_assert_int_eq(iogp_model_matrix(m, &q, &x), 0);
	ck_assert_uint_eq(x.n, 1);
	ck_assert_int_eq(x.ranks[0], 1);
	ck_assert_uint_eq(x.msgs[0], 0);
	ck_assert_uint_eq(x.other_msgs, K1 + K2);
	iogp_matrix_free(&x);
	/* the size histogram: S1 and S2 exactly as often as sent */
	iogp_hist h;
	ck_assert_int_eq(iogp_model_hist(m, "mpi.p2p.size", NULL, &h), 0);
	ck_assert_uint_eq(h.total, NP * (K1 + K2));
	ck_assert_uint_eq(bin_count(&h, S1), NP * K1);
	ck_assert_uint_eq(bin_count(&h, S2), NP * K2);
	iogp_hist_free(&h);
	iogp_model_free(m);

	/* the same through iogram merge and export matrix */
	char *merge[] = { (char *)tu_env("IOGRAM_BIN"), "merge", "--force", "-o", tu_fmt("%s/job.iogr", dir),
	                  NULL, NULL, NULL, NULL, NULL };
	char *ls = tu_fmt("ls %s/rec/run-*.iogr > %s/list", dir, dir);
	ck_assert_int_eq(tu_system(ls), 0);
	FILE *f = fopen(tu_fmt("%s/list", dir), "r");
	char line[4][512];
	for (int i = 0; i < NP; i++) {
		ck_assert_ptr_nonnull(fgets(line[i], sizeof line[i], f));
		line[i][strcspn(line[i], "\n")] = '\0';
		merge[5 + i] = line[i];
	}
	fclose(f);
	ck_assert_int_eq(tu_run(merge, NULL, 60), 0);
	char *ex[] = { (char *)tu_env("IOGRAM_BIN"), "export", "matrix", tu_fmt("%s/job.iogr", dir), "-o",
	               tu_fmt("%s/m.csv", dir), NULL };
	ck_assert_int_eq(tu_run(ex, NULL, 60), 0);
	const char *csv = tu_slurp(tu_fmt("%s/m.csv", dir));
	ck_assert_ptr_nonnull(strstr(csv, "from_node,to_node,messages_count,bytes\n"));
	ck_assert_ptr_nonnull(strstr(csv, "\nn3,n0,16,25576\n"));
	ck_assert_ptr_nonnull(strstr(csv, "\nn0,n1,16,25576\n"));
	ck_assert_ptr_nonnull(strstr(csv, "\nn0,n2,0,0\n"));
	ck_assert_ptr_nonnull(strstr(csv, "\ntotal,total,64,102304\n"));
}
END_TEST

/* All-to-all: R messages of S x (d + 1) bytes from every rank to every other
 * rank d; MPI_Alltoall and MPI_Allreduce of C ints. */
START_TEST(alltoall_matrix)
{
	const uint64_t R = 3, S = 1000, C = 16;
	char *args[] = { "a2a", "3", "1000", "16", NULL };
	ck_assert_int_eq(run_nodes(NULL, args), 0);
	iogp_model *m = load(NP);
	iogp_matrix x;
	iogp_matrix_query q = { .by = IOGP_MATRIX_RANK };
	ck_assert_int_eq(iogp_model_matrix(m, &q, &x), 0);
	ck_assert_uint_eq(x.n, NP);
	uint64_t total = 0;
	for (int r = 0; r < NP; r++)
		for (int c = 0; c < NP; c++) {
			ck_assert_uint_eq(x.msgs[r * NP + c], r == c ? 0 : R);
			ck_assert_uint_eq(x.bytes[r * NP + c], r == c ? 0 : R * S * (uint64_t)(c + 1));
			total += r == c ? 0 : R * S * (uint64_t)(c + 1);
		}
	ck_assert_uint_eq(x.total_bytes, total);
	ck_assert_uint_eq(x.col_msgs[2], (NP - 1) * R);
	iogp_matrix_free(&x);
	q.by = IOGP_MATRIX_NODE;
	ck_assert_int_eq(iogp_model_matrix(m, &q, &x), 0);
	ck_assert_uint_eq(x.n, NP);
	ck_assert_uint_eq(x.bytes[0 * NP + 3], R * S * 4);   /* n0 -> n3 */
	iogp_matrix_free(&x);
	iogp_hist h;
	ck_assert_int_eq(iogp_model_hist(m, "mpi.p2p.size", NULL, &h), 0);
	ck_assert_uint_eq(h.total, NP * (NP - 1) * R);
	for (uint64_t d = 0; d < NP; d++)
		ck_assert_uint_eq(bin_count(&h, S * (d + 1)), (NP - 1) * R);
	iogp_hist_free(&h);
	ck_assert_uint_eq(counter(m, "mpi.coll.alltoall.ops", 0), NP);
	ck_assert_uint_eq(counter(m, "mpi.coll.alltoall.bytes", 0), NP * C * sizeof(int) * NP);
	ck_assert_uint_eq(counter(m, "mpi.coll.allreduce.bytes", 0), NP * C * sizeof(int));
	ck_assert_uint_eq(counter(m, "mpi.coll.barrier.ops", 0), NP);
	ck_assert_uint_eq(counter(m, "mpi.coll.ops", 0), 3 * NP);
	iogp_model_free(m);
}
END_TEST

/* strace's data calls on path: reads into ops[0], writes into ops[1]. */
static void strace_count(const char *log, const char *path, uint64_t ops[2])
{
	FILE *f = fopen(log, "r");
	char line[8192];
	ck_assert_ptr_nonnull(f);
	ops[0] = ops[1] = 0;
	char *tag = tu_fmt("<%s>", path);
	for (int guard = 0; fgets(line, sizeof line, f) && guard < 10000000; guard++) {
		char *p = line;
		while (*p >= '0' && *p <= '9')   /* the pid */
			p++;
		while (*p == ' ')
			p++;
		/* "name(FD<path>, ..." (a call strace split keeps its path on
		 * the "unfinished" line; "<... resumed>" lines are skipped) */
		size_t n = strcspn(p, "(");
		char *a = p + n + 1;
		while (*a >= '0' && *a <= '9')
			a++;
		if (p[n] != '(' || strncmp(a, tag, strlen(tag)) != 0 || strstr(p, "= -1 "))
			continue;
		if (!strncmp(p, "read(", 5) || !strncmp(p, "pread64(", 8) || !strncmp(p, "readv(", 6) ||
		    !strncmp(p, "preadv(", 7) || !strncmp(p, "preadv2(", 8))
			ops[0]++;
		else if (!strncmp(p, "write(", 6) || !strncmp(p, "pwrite64(", 9) || !strncmp(p, "writev(", 7) ||
		         !strncmp(p, "pwritev(", 8) || !strncmp(p, "pwritev2(", 9))
			ops[1]++;
	}
	fclose(f);
}

/* MPI-IO through mpirun -x LD_PRELOAD=... under strace: a collective write
 * (K x B bytes with write_at_all, one iwrite_at) and an independent read
 * (K2 x B2 with read_at, one split read_all). */
START_TEST(mpiio_split_and_strace)
{
	const uint64_t K = 8, B = 65536, K2 = 5, B2 = 4096;
	char *data = tu_fmt("%s/shared.dat", dir), *log = tu_fmt("%s/strace.log", dir);
	char *preload = tu_fmt("LD_PRELOAD=%s:%s", tu_env("IOGRAM_PRELOAD"), tu_env("IOGRAM_PRELOAD_MPI"));
	char *cmd[] = { "-x", preload, "-x", "IOGRAM_ENDPOINT=none", "-x", "IOGRAM_INTERVAL_MS=100",
	                "-x", tu_fmt("IOGRAM_OUTPUT=%s/rec/run-%%p.iogr", dir),
	                tu_fmt("%s/prog_mpi_job", tu_env("IOGRAM_PROGS")), "io", data, "8", "65536", "5",
	                "4096", NULL };
	char *margv[64];
	mpirun_argv(margv, 64, cmd);
	char *argv[80] = { "strace", "-f", "-qq", "-y", "-s", "0", "-o", log, "-e",
	                   "trace=read,write,pread64,pwrite64,readv,writev,preadv,pwritev,preadv2,pwritev2" };
	int n = 10;
	for (int i = 0; margv[i] && n < 79; i++)
		argv[n++] = margv[i];
	argv[n] = NULL;
	tu_opts o = { .err = tu_fmt("%s/mpirun.err", dir) };
	ck_assert_int_eq(tu_wait(tu_spawn_opt(argv, &o), 120), 0);
	iogp_model *m = load(NP);
	struct utsname u;
	ck_assert_int_eq(uname(&u), 0);
	iogp_source_info si;
	for (int r = 0; r < NP; r++) {
		source_of(m, r, &si);
		ck_assert_str_eq(si.node, u.nodename);   /* MPI_Get_processor_name */
		ck_assert_uint_eq(counter(m, "mpiio.write.ops", si.id), K + 1);
		ck_assert_uint_eq(counter(m, "mpiio.write.bytes", si.id), (K + 1) * B);
		ck_assert_uint_eq(counter(m, "mpiio.write.coll.ops", si.id), K);
		ck_assert_uint_eq(counter(m, "mpiio.write.indep.ops", si.id), 1);
		ck_assert_uint_eq(counter(m, "mpiio.write.nb.ops", si.id), 1);
		ck_assert_uint_eq(counter(m, "mpiio.read.ops", si.id), K2 + 1);
		ck_assert_uint_eq(counter(m, "mpiio.read.bytes", si.id), (K2 + 1) * B2);
		ck_assert_uint_eq(counter(m, "mpiio.read.coll.ops", si.id), 1);
		ck_assert_uint_eq(counter(m, "mpiio.read.indep.ops", si.id), K2);
		ck_assert_uint_eq(counter(m, "mpiio.read.nb.ops", si.id), 1);
		ck_assert_uint_eq(counter(m, "mpiio.sync.ops", si.id), 1);
		ck_assert_uint_eq(counter(m, "mpiio.meta.ops", si.id), 3);   /* open, set_view, close */
		ck_assert_uint_eq(counter(m, "mpiio.errors", si.id), 0);
	}
	iogp_hist h;
	ck_assert_int_eq(iogp_model_hist(m, "mpiio.write.size", NULL, &h), 0);
	ck_assert_uint_eq(h.total, NP * (K + 1));
	ck_assert_uint_eq(bin_count(&h, B), NP * (K + 1));
	iogp_hist_free(&h);
	/* per-file records of both layers for the shared file */
	iogp_file_info *fi;
	size_t nf;
	uint64_t st[2];
	strace_count(log, data, st);
	ck_assert_msg(st[1] > 0, "strace saw no writes of %s", data);
	int seen = 0;
	ck_assert_int_eq(iogp_model_files(m, NULL, IOGP_FR_MPIIO, &fi, &nf), 0);
	for (size_t i = 0; i < nf; i++) {
		if (strcmp(fi[i].path, data))
			continue;
		seen++;
		ck_assert_uint_eq(fi[i].total.op[1].ops, NP * (K + 1));
		ck_assert_uint_eq(fi[i].total.op[1].bytes, NP * (K + 1) * B);
		ck_assert_uint_eq(fi[i].total.op[0].ops, NP * (K2 + 1));
		ck_assert_uint_eq(fi[i].total.meta_ops, NP * 4);   /* with the sync */
		ck_assert_uint_eq(fi[i].sources, NP);
	}
	iogp_model_files_free(fi);
	ck_assert_int_eq(seen, 1);
	ck_assert_int_eq(iogp_model_files(m, NULL, IOGP_FR_POSIX, &fi, &nf), 0);
	for (size_t i = 0; i < nf; i++) {
		if (strcmp(fi[i].path, data))
			continue;
		seen++;
		ck_assert_msg(fi[i].total.op[0].ops == st[0], "posix reads %" PRIu64 ", strace %" PRIu64,
		              fi[i].total.op[0].ops, st[0]);
		ck_assert_msg(fi[i].total.op[1].ops == st[1], "posix writes %" PRIu64 ", strace %" PRIu64,
		              fi[i].total.op[1].ops, st[1]);
	}
	iogp_model_files_free(fi);
	ck_assert_int_eq(seen, 2);
	iogp_model_free(m);
}
END_TEST

/* No MPI_Init: the same program, the same file, the same counts, and no
 * MPI metric in the stream. */
START_TEST(no_init_unchanged)
{
	char *out[2];
	uint64_t ops[2], bytes[2];
	for (int with = 0; with < 2; with++) {
		char *rec = tu_fmt("%s/rec%d", dir, with);
		ck_assert_int_eq(mkdir(rec, 0700), 0);
		out[with] = tu_fmt("%s/out%d", dir, with);
		char *argv[16];
		int k = 0;
		argv[k++] = (char *)tu_env("IOGRAM_RUN");
		argv[k++] = "--endpoint", argv[k++] = "none", argv[k++] = "--interval", argv[k++] = "100";
		argv[k++] = "--output", argv[k++] = tu_fmt("%s/run-%%p.iogr", rec);
		if (with)
			argv[k++] = "--mpi";
		argv[k++] = "--";
		argv[k++] = tu_fmt("%s/prog_mpi_job", tu_env("IOGRAM_PROGS"));
		argv[k++] = "noinit", argv[k++] = out[with], argv[k++] = "10", argv[k++] = "4096";
		argv[k] = NULL;
		ck_assert_int_eq(tu_run(argv, NULL, 60), 0);
		int n;
		iogp_model *m = tu_load_runs(rec, &n);
		ck_assert_int_eq(n, 1);
		ops[with] = counter(m, "posix.write.ops", 0);
		bytes[with] = counter(m, "posix.write.bytes", 0);
		size_t mi;
		ck_assert_int_eq(iogp_model_metric_find(m, "mpi.p2p.ops", &mi), IOGP_ENOTFOUND);
		ck_assert_int_eq(iogp_model_metric_find(m, "mpiio.write.ops", &mi), IOGP_ENOTFOUND);
		iogp_source_info si;
		ck_assert_int_eq(iogp_model_source(m, 0, &si), 0);
		ck_assert_ptr_null(iogp_model_source_label(m, 0, "nranks"));
		iogp_model_free(m);
	}
	ck_assert_uint_eq(ops[0], 10);
	ck_assert_uint_eq(ops[1], ops[0]);
	ck_assert_uint_eq(bytes[1], bytes[0]);
	ck_assert_int_eq(tu_same_file(out[0], out[1]), 1);
}
END_TEST

/* With a 60 s interval only the flush at MPI_Finalize can have sent the
 * ring's counts: each rank is killed right after MPI_Finalize. The layer
 * comes from IOGRAM_LAYERS here. */
START_TEST(finalize_flushes)
{
	const char *env[] = { "IOGRAM_INTERVAL_MS=60000", "IOGRAM_LAYERS=posix,mpi", NULL };
	char *args[] = { "finalize", "7", NULL };
	ck_assert_int_ne(run_nodes(env, args), 0);   /* the ranks were killed */
	iogp_model *m = load(NP);
	iogp_source_info si;
	for (int r = 0; r < NP; r++) {
		source_of(m, r, &si);
		ck_assert_int_eq(si.bye, 0);   /* no exit path ran */
		ck_assert_uint_eq(counter(m, "mpi.p2p.ops", si.id), 7);
		ck_assert_uint_eq(counter(m, "mpi.p2p.bytes", si.id), 7 * 64);
	}
	iogp_model_free(m);
}
END_TEST

/* Rank 1 aborts 10 intervals after the ring (K messages) and right after
 * K2 more: the ring is all there, the last interval at most is lost. */
START_TEST(abort_loses_one_interval)
{
	const uint64_t K = 20, K2 = 5;
	const char *env[] = { "IOGRAM_INTERVAL_MS=50", NULL };
	char *args[] = { "abort", "20", "5", NULL };
	ck_assert_int_ne(run_nodes(env, args), 0);
	int n;
	iogp_model *m = tu_load_runs(tu_fmt("%s/rec", dir), &n);
	ck_assert_int_ge(n, 2);
	iogp_source_info si;
	source_of(m, 1, &si);
	ck_assert_int_eq(si.bye, 0);
	uint64_t ops = counter(m, "mpi.p2p.ops", si.id);
	ck_assert_uint_ge(ops, K);
	ck_assert_uint_le(ops, K + K2);
	iogp_matrix x;
	iogp_matrix_query q = { .by = IOGP_MATRIX_RANK };
	ck_assert_int_eq(iogp_model_matrix(m, &q, &x), 0);
	for (uint32_t r = 0; r < x.n; r++)
		if (x.ranks[r] == 1) {
			uint64_t row = x.row_msgs[r];
			ck_assert_uint_ge(row, K);
			ck_assert_uint_le(row, K + K2);
		}
	iogp_matrix_free(&x);
	iogp_model_free(m);
}
END_TEST

/* ---- the model alone: windows, jobs, keyframes ----------------------------- */

static void put_source(iogp_model *m, uint64_t id, const char *host, const char *rank, const char *job)
{
	iogp_label lab[3] = { { "host", host }, { "rank", rank }, { "job", job } };
	iogp_msg msg = { .kind = IOGP_SNAPSHOT, .source = id, .seq = 1, .nlabels = 3, .labels = lab };
	ck_assert_int_eq(iogp_model_apply(m, &msg, 1), 0);
}

static void put_sends(iogp_model *m, uint64_t id, uint64_t seq, uint64_t wall_s, uint32_t to,
                      uint64_t msgs, uint64_t bytes)
{
	iogp_peer p = { .rank = to, .msgs = msgs, .bytes = bytes };
	iogp_msg msg = { .kind = IOGP_DELTA, .source = id, .seq = seq, .t0_ns = (wall_s - 1) * 1000000000ull,
	                 .t1_ns = wall_s * 1000000000ull, .wall_ns = wall_s * 1000000000ull,
	                 .npeers = 1, .peers = &p };
	ck_assert_int_eq(iogp_model_apply(m, &msg, wall_s * 1000000000ull), 0);
}

/* Two ranks of job J on n0 and n1, rank 0 of job K on n9: J's rank 0 sends
 * 5 messages at t = 100 s and 2 at 108 s; K's rank 0 sends to its rank 1,
 * which no source announced. Since start, the last 3 s, and a keyframe
 * (SNAPSHOT from the model, encoded and decoded) into a new model. */
START_TEST(matrix_window_jobs)
{
	iogp_model_opts o = { .live = 1, .window_slot_ns = 1000000000ull, .window_max_ns = 10000000000ull };
	iogp_model *m = iogp_model_new(&o);
	put_source(m, 0xa, "n0", "0", "J");
	put_source(m, 0xb, "n1", "1", "J");
	put_source(m, 0xc, "n9", "0", "K");
	put_sends(m, 0xa, 2, 100, 1, 5, 500);
	put_sends(m, 0xa, 3, 108, 1, 2, 20);
	put_sends(m, 0xb, 2, 108, 0, 1, 10);
	put_sends(m, 0xc, 2, 108, 1, 3, 30);
	iogp_model_tick(m, 108500000000ull);
	iogp_matrix x;
	iogp_matrix_query q = { .by = IOGP_MATRIX_NODE };
	ck_assert_int_eq(iogp_model_matrix(m, &q, &x), 0);
	ck_assert_uint_eq(x.n, 3);   /* n0, n1, n9 */
	ck_assert_str_eq(x.names[2], "n9");
	ck_assert_uint_eq(x.msgs[0 * 3 + 1], 7);
	ck_assert_uint_eq(x.bytes[0 * 3 + 1], 520);
	ck_assert_uint_eq(x.msgs[1 * 3 + 0], 1);
	ck_assert_uint_eq(x.other_msgs, 3);   /* job K's rank 1 is nobody */
	ck_assert_uint_eq(x.row_msgs[2], 0);
	ck_assert(x.seconds == 0);
	iogp_matrix_free(&x);
	q.window_ns = 3000000000ull;
	ck_assert_int_eq(iogp_model_matrix(m, &q, &x), 0);
	ck_assert_uint_eq(x.msgs[0 * 3 + 1], 2);
	ck_assert_uint_eq(x.bytes[0 * 3 + 1], 20);
	ck_assert_uint_eq(x.total_msgs, 3);
	ck_assert(x.seconds == 3.0);
	iogp_matrix_free(&x);
	q = (iogp_matrix_query){ .by = IOGP_MATRIX_RANK, .node = "nowhere" };
	ck_assert_int_eq(iogp_model_matrix(m, &q, &x), IOGP_ENOTFOUND);
	iogp_matrix_free(&x);
	/* a keyframe carries the cumulative counts */
	iogp_model *k = iogp_model_new(NULL);
	iogp_msg snap, dec;
	iogp_msg_init(&snap);
	iogp_msg_init(&dec);
	uint8_t *buf = malloc(1 << 16);
	for (size_t i = 0; i < iogp_model_source_count(m); i++) {
		ck_assert_int_eq(iogp_model_snapshot(m, i, IOGP_F_KEYFRAME, &snap), 0);
		long n = iogp_msg_encode(&snap, buf, 1 << 16);
		ck_assert_int_gt(n, 0);
		ck_assert_int_eq(iogp_msg_decode(&dec, buf, (size_t)n, NULL, 0), 0);
		ck_assert_int_eq(iogp_model_apply(k, &dec, 1), 0);
	}
	q = (iogp_matrix_query){ .by = IOGP_MATRIX_RANK };
	ck_assert_int_eq(iogp_model_matrix(k, &q, &x), 0);
	ck_assert_uint_eq(x.n, 3);
	ck_assert_uint_eq(x.total_msgs, 8);
	ck_assert_uint_eq(x.other_msgs, 3);
	iogp_matrix_free(&x);
	ck_assert_int_eq(iogp_model_matrix(k, &(iogp_matrix_query){ .window_ns = 1 }, &x), IOGP_EINVAL);
	iogp_matrix_free(&x);
	free(buf);
	iogp_msg_free(&snap);
	iogp_msg_free(&dec);
	iogp_model_free(k);
	iogp_model_free(m);
}
END_TEST

int main(void)
{
	const tu_case cases[] = {
		{ "ring_matrix", ring_matrix },
		{ "alltoall_matrix", alltoall_matrix },
		{ "mpiio_split_and_strace", mpiio_split_and_strace },
		{ "no_init_unchanged", no_init_unchanged },
		{ "finalize_flushes", finalize_flushes },
		{ "abort_loses_one_interval", abort_loses_one_interval },
		{ "matrix_window_jobs", matrix_window_jobs },
	};
	const tu_suite_opts o = { .setup = setup, .teardown = teardown, .timeout_s = 180 };
	return tu_run_cases("mpi", cases, sizeof(cases) / sizeof(cases[0]), &o);
}
