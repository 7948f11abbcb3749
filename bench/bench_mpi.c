/* bench_mpi.c - what the MPI layer adds to a call: a wrapped MPI_Send of
 * 8 bytes (to itself, the receive posted first: the send call alone) and
 * MPI_File_write_at of 4 KiB (a file of its own, page cache), ns per call,
 * one rank under mpirun: bare, with the POSIX layer only, and with the
 * POSIX and MPI layers (nobody listening). Medians of 9 interleaved rounds
 * (tests/progs/mpi_job.c bench). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define ROUNDS 9
#define N 1000000

/* One round: the two figures, or -1. */
static int once(const char *preload, double *send, double *write)
{
	char *x = preload ? tu_fmt("LD_PRELOAD=%s", preload) : "IOGRAM_UNUSED=1";
	char *argv[] = { "mpirun", "--oversubscribe", "--bind-to", "none", "--mca", "btl", "self,vader",
		"-np", "1", "-x", x, "-x", "IOGRAM_ENDPOINT=none",
		tu_fmt("%s/prog_mpi_job", getenv("IOGRAM_PROGS")), "bench", tu_fmt("%d", N), NULL };
	tu_opts o = { .err = "/dev/null" };
	tu_result r = tu_capture(argv, &o, 120);
	const char *s = r.out ? strstr(r.out, "send_ns ") : NULL, *w = r.out ? strstr(r.out, "write_at_ns ") : NULL;
	int ok = r.status == 0 && s && w;
	if (ok) {
		*send = atof(s + 8);
		*write = atof(w + 12);
	}
	tu_result_free(&r);
	return ok ? 0 : -1;
}

int main(void)
{
	const char *posix = getenv("IOGRAM_PRELOAD"), *mpi = getenv("IOGRAM_PRELOAD_MPI");
	if (!posix || !mpi || !getenv("IOGRAM_PROGS")) {
		fprintf(stderr, "bench_mpi: run it with meson test --benchmark\n");
		return 1;
	}
	const char *pre[3] = { NULL, posix, tu_fmt("%s:%s", posix, mpi) };
	const char *name[3] = { "bare", "posix layer", "posix + mpi layers" };
	double s[3][ROUNDS], w[3][ROUNDS], ms[3], mw[3];
	for (int k = 0; k < ROUNDS; k++)   /* interleaved: drift hits all alike */
		for (int c = 0; c < 3; c++)
			if (once(pre[c], &s[c][k], &w[c][k]) < 0) {
				fprintf(stderr, "bench_mpi: round %d of %s failed\n", k, name[c]);
				return 1;
			}
	for (int c = 0; c < 3; c++) {
		ms[c] = tu_median(s[c], ROUNDS);
		mw[c] = tu_median(w[c], ROUNDS);
		printf("%-20s MPI_Send 8 B %7.1f ns/call   MPI_File_write_at 4 KiB %8.1f ns/call\n",
		       name[c], ms[c], mw[c]);
	}
	printf("MPI layer adds: MPI_Send %+.1f ns (%.2fx bare), MPI_File_write_at %+.1f ns over the "
	       "posix layer (%.2fx bare)\n", ms[2] - ms[0], ms[2] / ms[0], mw[2] - mw[1], mw[2] / mw[0]);
	return 0;
}
