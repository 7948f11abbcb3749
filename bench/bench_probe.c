/* bench_probe.c - iogram probe's cost and its contention run:
 *  1. the load it puts on the file system (bytes and operations per second,
 *     from its own counts) and its CPU share, at 1 and 20 intervals per second;
 *  2. a contention run: the probe (--direct) on a directory while fio writes
 *     there with fsync for 4 s, then stops: the slowdown of each operation
 *     during and after.
 * Figures, not pass/fail (the contention depends on the machine's storage). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

static char dir[256];

static double cpu_children(void)
{
	struct rusage ru;
	getrusage(RUSAGE_CHILDREN, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec * 1e-6;
}

static void load(const char *bin, double interval, int count)
{
	char iv[32], cnt[32];
	snprintf(iv, sizeof iv, "%g", interval);
	snprintf(cnt, sizeof cnt, "%d", count);
	char *argv[] = { (char *)bin, "probe", dir, "--interval", iv, "--report", "10", "--count", cnt,
	                 "--file-size", "64M", "--pool", "64", "--endpoint", "none", "--quiet", NULL };
	double c0 = cpu_children(), t0 = tu_now();
	if (tu_run(argv, NULL, 600) != 0) {
		fprintf(stderr, "bench_probe: the probe failed\n");
		exit(1);
	}
	double wall = tu_now() - t0, cpu = cpu_children() - c0;
	/* per interval: 1 MiB read, 1 MiB written, a 3,901-byte file written and
	 * one read; 6 operations (11 system calls: the small files' open/close) */
	double per_s = 1.0 / interval;
	printf("load: interval %.2f s: %.2f MiB/s read, %.2f MiB/s written, %.0f operations/s; "
	       "CPU %.2f%% of a core over %.1f s (incl. its 64 MiB file's creation)\n", interval,
	       per_s * (1048576 + 3901) / 1048576.0, per_s * (1048576 + 3901) / 1048576.0, per_s * 6,
	       100.0 * cpu / wall, wall);
}

static void contention(const char *bin)
{
	char *out = tu_fmt("%s/contention.txt", dir);
	char *argv[] = { (char *)bin, "probe", dir, "--direct", "--interval", "0.05", "--report", "1",
	                 "--count", "220", "--file-size", "64M", "--pool", "32", "--endpoint", "none", NULL };
	fflush(stdout);
	pid_t p = fork();
	if (p == 0) {
		FILE *f = freopen(out, "w", stdout);
		(void)f;
		execv(bin, argv);
		_exit(127);
	}
	usleep(3200000);
	char *fio = tu_fmt("fio --name=bg --filename=%s/bg --size=256M --rw=randwrite --bs=64k "
	                   "--direct=1 --fsync=4 --numjobs=2 --time_based --runtime=4 "
	                   "--output=/dev/null", dir);
	char *sh[] = { "sh", "-c", fio, NULL };
	int fr = tu_run(sh, NULL, 60);
	int st;
	waitpid(p, &st, 0);
	if (fr != 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
		printf("contention: skipped (fio %d, probe %d; O_DIRECT unsupported here?)\n", fr, st);
		return;
	}
	/* reports 0-2 before, 3-7 during (fio from 3.2 s to ~7.2 s), 8- after */
	const char *ops[] = { "read", "write", "create", "stat", "smallread", "delete" };
	const char *t = tu_slurp(out);
	printf("contention (probe --direct, fio 2 x 64 KiB random direct writes, fsync every 4):\n");
	for (int k = 0; k < 6; k++) {
		double during = 0, after = 0;
		int na = 0, line = -1;
		for (const char *l = t; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
			if (*l == '#')
				continue;
			line++;
			const char *p2 = strstr(l, tu_fmt(" %s ", ops[k]));
			double f = p2 ? strtod(p2 + strlen(ops[k]) + 2, NULL) : 0;
			if (line >= 3 && line <= 7 && f > during)
				during = f;
			if (line >= 9) {
				after += f;
				na++;
			}
		}
		printf("  %-9s max %.2fx during, mean %.2fx after\n", ops[k], during, na ? after / na : 0);
	}
}

int main(void)
{
	const char *bin = getenv("IOGRAM_BIN");
	if (!bin) {
		fprintf(stderr, "bench_probe: IOGRAM_BIN not set\n");
		return 1;
	}
	tu_tmpdir(dir, sizeof dir, "iogram-bench-probe");
	load(bin, 1.0, 10);
	load(bin, 0.05, 200);
	contention(bin);
	tu_rmdir_all(dir);
	return 0;
}
