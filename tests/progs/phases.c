/* phases.c - test program: 4 processes (forked, so 4 sources) doing one of
 * the I/O phase shapes of the SummarIO report; usage:
 *   prog_phases MODE DIR N SIZE
 * MODE single-a  every process writes its own contiguous part of DIR/shared
 *                in N requests of SIZE bytes (one shared-file phase)
 *      single-b  every process writes DIR/own.<i>, N x SIZE (file per process)
 *      periodic  4 rounds: every process writes its part of DIR/round.<k>,
 *                N x SIZE, then "computes" (a new shared file each round);
 *                the rounds begin on the job's common clock, 2.5 s apart,
 *                so the compute between them is 2 s and more however
 *                unevenly the processes started (a barrier, as an MPI
 *                job's)
 *      raw       every process writes its part of DIR/shared, then reads it back
 *   prog_phases MODE DIR N SIZE RANK
 *                one of the 4 processes, in this one (no fork: a launcher
 *                starts the four, as mpirun would)
 * Prints "start_ns end_ns" (CLOCK_REALTIME) of the whole job on stdout.
 * Exit 0 when every call succeeded. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NPROC 4

static long n, size;

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int part(const char *path, int rank, int rd)
{
	char *buf = malloc((size_t)size);
	if (!buf)
		return 1;
	memset(buf, 'a' + rank, (size_t)size);
	int fd = open(path, rd ? O_RDONLY : O_WRONLY | O_CREAT, 0644);
	if (fd < 0)
		return 1;
	off_t base = (off_t)rank * n * size;
	for (long k = 0; k < n; k++) {
		ssize_t r = rd ? pread(fd, buf, (size_t)size, base + k * size)
		               : pwrite(fd, buf, (size_t)size, base + k * size);
		if (r != size)
			return 1;
	}
	free(buf);
	return close(fd) != 0;
}

/* Sleep until CLOCK_REALTIME reaches t ns. */
static void sleep_until(long long t)
{
	long long d;
	while ((d = t - now_ns()) > 0) {
		struct timespec ts = { (time_t)(d / 1000000000LL), (long)(d % 1000000000LL) };
		nanosleep(&ts, NULL);
	}
}

static int child(const char *mode, const char *dir, int rank, long long t0)
{
	char path[4096];
	if (!strcmp(mode, "single-a") || !strcmp(mode, "raw")) {
		snprintf(path, sizeof(path), "%s/shared", dir);
		if (part(path, rank, 0))
			return 1;
		return !strcmp(mode, "raw") ? part(path, rank, 1) : 0;
	}
	if (!strcmp(mode, "single-b")) {
		snprintf(path, sizeof(path), "%s/own.%d", dir, rank);
		return part(path, 0, 0);
	}
	for (int round = 0; round < 4; round++) {
		sleep_until(t0 + round * 2500000000LL);
		snprintf(path, sizeof(path), "%s/round.%d", dir, round);
		if (part(path, rank, 0))
			return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 5 && argc != 6)
		return 2;
	n = atol(argv[3]);
	size = atol(argv[4]);
	if (n < 1 || size < 1 || size > (64 << 20))
		return 2;
	long long t0 = now_ns();
	if (argc == 6) {
		int rank = atoi(argv[5]), rc;
		if (rank < 0 || rank >= NPROC)
			return 2;
		rc = child(argv[1], argv[2], rank, t0);
		printf("%lld %lld\n", t0, now_ns());
		return rc;
	}
	pid_t kids[NPROC];
	for (int i = 0; i < NPROC; i++) {
		kids[i] = fork();
		if (kids[i] < 0)
			return 1;
		if (kids[i] == 0)
			_exit(child(argv[1], argv[2], i, t0));
	}
	int bad = 0;
	for (int i = 0; i < NPROC; i++) {
		int st;
		if (waitpid(kids[i], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			bad = 1;
	}
	printf("%lld %lld\n", t0, now_ns());
	return bad;
}
