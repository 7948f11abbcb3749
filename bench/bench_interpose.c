/* bench_interpose.c - cost of the POSIX interposer: 4 KiB preads on a
 * page-cached file (prog_pread_loop), fputc through stdio's buffer (the
 * stdio layer's cheapest call) and fio psync randread, plain vs under
 * iogram-run (nobody listening; recording to a file; --disable), runs
 * alternated, medians reported as ns/op and ratios to plain. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

#define ROUNDS 7
#define FIO_ROUNDS 3
#define NOPS 1000000L

enum { C_PLAIN, C_NOBODY, C_OUTPUT, C_DISABLED, C_THREAD, NCONF };
static const char *conf_name[NCONF] = { "plain", "nobody listening", "--output file", "--disable",
	"plain + idle thread" };

static char tmpdir[256], endpoint[64], outpath[320];

/* Run argv with stdout captured into out (NUL-terminated; stderr dropped). Returns the exit status. */
static int capture(char *const argv[], char *out, size_t len)
{
	tu_result r = tu_capture(argv, NULL, 0);
	snprintf(out, len, "%s", r.out);
	tu_result_free(&r);
	return r.status;
}

/* argv prefix for a configuration: the command follows at *n. */
static int prefix(int conf, char **argv)
{
	const char *run = getenv("IOGRAM_RUN");
	int n = 0;
	if (conf == C_PLAIN || conf == C_THREAD)
		return 0;
	argv[n++] = (char *)run;
	switch (conf) {
	case C_NOBODY:
		argv[n++] = "--endpoint";
		argv[n++] = endpoint;
		break;
	case C_OUTPUT:
		argv[n++] = "--endpoint";
		argv[n++] = "none";
		argv[n++] = "--output";
		argv[n++] = outpath;
		break;
	case C_DISABLED:
		argv[n++] = "--disable";
		break;
	}
	argv[n++] = "--";
	return n;
}

static int find_prog(char *buf, size_t len)
{
	const char *d = getenv("IOGRAM_PROGS");
	if (d && *d) {
		snprintf(buf, len, "%s/prog_pread_loop", d);
		if (access(buf, X_OK) == 0)
			return 0;
	}
	char self[2048];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0 || len < sizeof(self) + 32)
		return -1;
	self[n] = '\0';
	char *s = strrchr(self, '/');
	if (!s)
		return -1;
	*s = '\0';
	snprintf(buf, len, "%s/../tests/prog_pread_loop", self);
	return access(buf, X_OK);
}

static void report(const char *what, double v[NCONF][ROUNDS > FIO_ROUNDS ? ROUNDS : FIO_ROUNDS],
                   int rounds, int nconf, const char *unit)
{
	double med[NCONF];
	for (int c = 0; c < nconf; c++)
		med[c] = tu_median(v[c], rounds);
	printf("%s (medians of %d alternating runs)\n", what, rounds);
	for (int c = 0; c < nconf; c++) {
		if (c == C_PLAIN) {
			printf("  %-20s %8.1f %s\n", conf_name[c], med[c], unit);
			continue;
		}
		printf("  %-20s %8.1f %s  ratio %.3f  (%+.1f ns/call)", conf_name[c], med[c], unit,
		       med[c] / med[C_PLAIN], med[c] - med[C_PLAIN]);
		if (nconf > C_THREAD && c != C_THREAD && c != C_DISABLED)
			printf("  vs idle-thread baseline %.3f (%+.1f ns)", med[c] / med[C_THREAD],
			       med[c] - med[C_THREAD]);
		printf("\n");
	}
}

/* mode: NULL (preads) or "fputc"; the idle-thread baseline for preads only */
static int bench_loop(const char *progp, const char *file, const char *mode)
{
	double v[NCONF][ROUNDS];
	char out[4096], nops[32];
	int nconf = mode ? C_THREAD : NCONF;
	snprintf(nops, sizeof(nops), "%ld", mode ? 20 * NOPS : NOPS);
	for (int r = 0; r < ROUNDS; r++) {
		for (int k = 0; k < nconf; k++) {
			int c = (k + r) % nconf;   /* rotate the order too */
			char *argv[16];
			int n = prefix(c, argv);
			argv[n++] = (char *)progp;
			argv[n++] = (char *)file;
			argv[n++] = nops;
			if (c == C_THREAD || mode)
				argv[n++] = c == C_THREAD ? "thread" : (char *)mode;
			argv[n] = NULL;
			double mean, ns;
			if (capture(argv, out, sizeof(out)) != 0 ||
			    sscanf(out, "ns/op %lf min %lf", &mean, &ns) != 2) {
				fprintf(stderr, "bench_interpose: pread_loop (%s) failed: %s\n", conf_name[c], out);
				return -1;
			}
			v[c][r] = ns;
		}
	}
	char what[128];
	if (mode)
		snprintf(what, sizeof(what), "interpose: fputc to a file through a 4 KiB buffer, %ld ops per "
		         "run, fastest of 20 batches", 20 * NOPS);
	else
		snprintf(what, sizeof(what), "interpose: pread 4 KiB, page cache, %ld ops per run, fastest of "
		         "20 batches", NOPS);
	report(what, v, ROUNDS, nconf, "ns/op");
	return 0;
}

/* fio's terse output: field 8 is the read IOPS. */
static double fio_iops(const char *out)
{
	const char *p = out;
	for (int f = 1; f < 8 && p; f++) {
		p = strchr(p, ';');
		if (p)
			p++;
	}
	return p ? strtod(p, NULL) : 0;
}

static int bench_fio(const char *file)
{
	char out[16384];
	char fname[400];
	snprintf(fname, sizeof(fname), "--filename=%s", file);
	char *base[] = { "fio", "--name=x", "--ioengine=psync", "--rw=randread", "--bs=4k",
		"--size=64m", fname, "--invalidate=0", "--runtime=5", "--time_based", "--thread",
		"--output-format=terse", NULL };
	/* lay the file out and warm the cache once, not timed */
	char *lay[] = { "fio", "--name=x", "--ioengine=psync", "--rw=read", "--bs=1m", "--size=64m",
		fname, "--thread", "--output-format=terse", NULL };
	if (capture(lay, out, sizeof(out)) != 0) {
		printf("interpose: fio not available, skipped\n");
		return 0;
	}
	double v[NCONF][ROUNDS > FIO_ROUNDS ? ROUNDS : FIO_ROUNDS];
	const int nconf = C_OUTPUT + 1;
	for (int r = 0; r < FIO_ROUNDS; r++) {
		for (int k = 0; k < nconf; k++) {
			int c = (k + r) % nconf;
			char *argv[32];
			int n = prefix(c, argv);
			for (int i = 0; base[i]; i++)
				argv[n++] = base[i];
			argv[n] = NULL;
			double iops;
			if (capture(argv, out, sizeof(out)) != 0 || (iops = fio_iops(out)) <= 0) {
				fprintf(stderr, "bench_interpose: fio (%s) failed\n", conf_name[c]);
				return -1;
			}
			v[c][r] = 1e9 / iops;
		}
	}
	report("interpose: fio psync randread 4k, 64 MiB, 5 s per run", v, FIO_ROUNDS, nconf, "ns/op");
	return 0;
}

int main(void)
{
	if (!getenv("IOGRAM_RUN")) {
		fprintf(stderr, "bench_interpose: IOGRAM_RUN is not set (run with meson test --benchmark)\n");
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	char progp[4096];
	if (find_prog(progp, sizeof(progp)) != 0) {
		fprintf(stderr, "bench_interpose: prog_pread_loop not found (build tests/prog_pread_loop "
		        "or set IOGRAM_PROGS)\n");
		return 1;
	}
	tu_tmpdir(tmpdir, sizeof(tmpdir), "iogram-bench");
	snprintf(endpoint, sizeof(endpoint), "%s", tu_ep(tu_free_port()));
	snprintf(outpath, sizeof(outpath), "%s/run-%%p.iogr", tmpdir);

	char file[320], fiofile[320];
	snprintf(file, sizeof(file), "%s/pread.dat", tmpdir);
	snprintf(fiofile, sizeof(fiofile), "%s/fio.dat", tmpdir);
	int fd = open(file, O_CREAT | O_TRUNC | O_WRONLY, 0644);
	static char buf[1 << 16];
	memset(buf, 7, sizeof(buf));
	for (int i = 0; fd >= 0 && i < 256; i++)   /* 16 MiB */
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			return 1;
	if (fd < 0)
		return 1;
	close(fd);

	char putfile[320];
	snprintf(putfile, sizeof(putfile), "%s/fputc.txt", tmpdir);
	int rc = bench_loop(progp, file, NULL);
	if (rc == 0)
		rc = bench_loop(progp, putfile, "fputc");
	if (rc == 0)
		rc = bench_fio(fiofile);
	printf("interpose: target <= 1.03x (about 50 ns per call); 2-core machine.\n"
	       "interpose: the agent's thread makes the process multi-threaded, which alone\n"
	       "interpose: sends glibc's syscall wrappers down their cancellation path\n"
	       "interpose: (the idle-thread baseline); the rest is the interposer.\n");

	if (tu_rmdir_all(tmpdir) != 0)
		fprintf(stderr, "bench_interpose: could not remove %s\n", tmpdir);
	return rc ? 1 : 0;
}
