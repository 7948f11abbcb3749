/* mpi_job.c - MPI programs with known traffic and I/O for check_mpi and
 * bench_mpi (every count follows from the arguments):
 *   ring K1 S1 K2 S2    each rank sends K1 messages of S1 bytes, then K2 of
 *                       S2, to rank + 1 (MPI_Send, MPI_Isend, and a
 *                       persistent request started K2 times), receives from
 *                       rank - 1; one MPI_Barrier
 *   a2a R S C           R messages of S x (d + 1) bytes to every other rank
 *                       d (Isend/Irecv), then MPI_Alltoall of C ints each,
 *                       one MPI_Allreduce of C ints, one MPI_Barrier
 *   io FILE K B K2 B2   collective write: K MPI_File_write_at_all of B bytes
 *                       and one MPI_File_iwrite_at; MPI_File_sync; a
 *                       set_view; independent read: K2 MPI_File_read_at of
 *                       B2 bytes and one split MPI_File_read_all_begin/end
 *   finalize K          ring of K 64-byte messages, MPI_Finalize, SIGKILL
 *   abort K K2          ring of K messages, a barrier, then rank 1 waits
 *                       10 intervals (IOGRAM_INTERVAL_MS), sends K2 more
 *                       and aborts; the others wait to be killed
 *   noinit FILE N B     no MPI at all: N writes of B bytes to FILE
 *   bench N             N MPI_Send of 8 bytes to itself (receives posted
 *                       first, untimed), then N/10 MPI_File_write_at of
 *                       4 KiB to a file of its own; prints ns per call */
#include <mpi.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int rank, size;

static char *buf(size_t n)
{
	char *b = calloc(1, n ? n : 1);
	if (!b)
		abort();
	memset(b, 'a' + rank % 26, n);
	return b;
}

static void ring(long k1, long s1, long k2, long s2)
{
	int to = (rank + 1) % size, from = (rank + size - 1) % size;
	char *a = buf((size_t)s1), *b = buf((size_t)s1), *c = buf((size_t)s2), *d = buf((size_t)s2);
	for (long i = 0; i < k1; i++) {
		MPI_Request rq;
		MPI_Irecv(b, (int)s1, MPI_BYTE, from, 1, MPI_COMM_WORLD, &rq);
		if (i % 2)
			MPI_Send(a, (int)s1, MPI_BYTE, to, 1, MPI_COMM_WORLD);
		else {
			MPI_Request sq;
			MPI_Isend(a, (int)s1, MPI_BYTE, to, 1, MPI_COMM_WORLD, &sq);
			MPI_Wait(&sq, MPI_STATUS_IGNORE);
		}
		MPI_Wait(&rq, MPI_STATUS_IGNORE);
	}
	MPI_Request ps, pr;
	MPI_Send_init(c, (int)s2, MPI_BYTE, to, 2, MPI_COMM_WORLD, &ps);
	MPI_Recv_init(d, (int)s2, MPI_BYTE, from, 2, MPI_COMM_WORLD, &pr);
	for (long i = 0; i < k2; i++) {
		MPI_Start(&pr);
		MPI_Start(&ps);
		MPI_Wait(&ps, MPI_STATUS_IGNORE);
		MPI_Wait(&pr, MPI_STATUS_IGNORE);
	}
	MPI_Request_free(&ps);
	MPI_Request_free(&pr);
	MPI_Barrier(MPI_COMM_WORLD);
	free(a), free(b), free(c), free(d);
}

static void a2a(long r, long s, long c)
{
	MPI_Request *rq = calloc((size_t)(2 * size * r), sizeof(*rq));
	char **in = calloc((size_t)size, sizeof(*in));
	char *out = buf((size_t)(s * size));
	int n = 0;
	for (int d = 0; d < size; d++) {
		if (d == rank)
			continue;
		in[d] = buf((size_t)(s * (rank + 1) * r));
		for (long i = 0; i < r; i++) {
			MPI_Irecv(in[d] + i * s * (rank + 1), (int)(s * (rank + 1)), MPI_BYTE, d, 3,
			          MPI_COMM_WORLD, &rq[n++]);
			MPI_Isend(out, (int)(s * (d + 1)), MPI_BYTE, d, 3, MPI_COMM_WORLD, &rq[n++]);
		}
	}
	MPI_Waitall(n, rq, MPI_STATUSES_IGNORE);
	int *x = calloc((size_t)(c * size), sizeof(int)), *y = calloc((size_t)(c * size), sizeof(int));
	MPI_Alltoall(x, (int)c, MPI_INT, y, (int)c, MPI_INT, MPI_COMM_WORLD);
	MPI_Allreduce(x, y, (int)c, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	MPI_Barrier(MPI_COMM_WORLD);
	for (int d = 0; d < size; d++)
		free(in[d]);
	free(in), free(rq), free(out), free(x), free(y);
}

static void io(const char *path, long k, long b, long k2, long b2)
{
	MPI_File fh;
	char *w = buf((size_t)b), *r = buf((size_t)b2);
	if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh))
		abort();
	for (long i = 0; i < k; i++)
		MPI_File_write_at_all(fh, (MPI_Offset)((i * size + rank) * b), w, (int)b, MPI_BYTE,
		                      MPI_STATUS_IGNORE);
	MPI_Request rq;
	MPI_File_iwrite_at(fh, (MPI_Offset)((k * size + rank) * b), w, (int)b, MPI_BYTE, &rq);
	MPI_Wait(&rq, MPI_STATUS_IGNORE);
	MPI_File_sync(fh);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
	for (long i = 0; i < k2; i++)
		MPI_File_read_at(fh, (MPI_Offset)((i * size + rank) * b2), r, (int)b2, MPI_BYTE,
		                 MPI_STATUS_IGNORE);
	MPI_File_read_all_begin(fh, r, (int)b2, MPI_BYTE);
	MPI_File_read_all_end(fh, r, MPI_STATUS_IGNORE);
	MPI_File_close(&fh);
	free(w), free(r);
}

static double now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* Sends to itself with the receives posted first (untimed), so what is
 * timed is the send call alone, without another process's pace. */
static void bench(long n)
{
	enum { BATCH = 1000 };
	static char in[BATCH][8];
	static MPI_Request rq[BATCH];
	char b[8] = { 0 }, *w = buf(4096);
	double spent = 0;
	long sent = 0;
	while (sent < n) {
		for (int i = 0; i < BATCH; i++)
			MPI_Irecv(in[i], 8, MPI_BYTE, rank, 4, MPI_COMM_WORLD, &rq[i]);
		double t0 = now_ns();
		for (int i = 0; i < BATCH; i++)
			MPI_Send(b, 8, MPI_BYTE, rank, 4, MPI_COMM_WORLD);
		spent += now_ns() - t0;
		MPI_Waitall(BATCH, rq, MPI_STATUSES_IGNORE);
		sent += BATCH;
	}
	printf("send_ns %.1f\n", spent / (double)sent);
	char path[64];
	MPI_File fh;
	snprintf(path, sizeof(path), "/tmp/iogram-bench-mpi.%d", (int)getpid());
	MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
	long m = n / 10 > 0 ? n / 10 : 1;
	double t0 = now_ns();
	for (long i = 0; i < m; i++)
		MPI_File_write_at(fh, (MPI_Offset)(i % 256) * 4096, w, 4096, MPI_BYTE, MPI_STATUS_IGNORE);
	double t1 = now_ns();
	printf("write_at_ns %.1f\n", (t1 - t0) / (double)m);
	MPI_File_close(&fh);
	unlink(path);
	free(w);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	long a[5] = { 0 };
	for (int i = 0; i < 5 && i + 2 < argc; i++)
		a[i] = strtol(argv[i + 2], NULL, 10);
	if (!strcmp(mode, "noinit")) {
		if (argc < 5)
			return 2;
		int fd = open(argv[2], O_CREAT | O_TRUNC | O_WRONLY, 0600);
		char *b = buf((size_t)atol(argv[4]));
		int bad = fd < 0;
		for (long i = 0; !bad && i < atol(argv[3]); i++)
			bad = write(fd, b, (size_t)atol(argv[4])) < 0;
		free(b);
		return !bad && close(fd) == 0 ? 0 : 1;
	}
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (!strcmp(mode, "ring"))
		ring(a[0], a[1], a[2], a[3]);
	else if (!strcmp(mode, "a2a"))
		a2a(a[0], a[1], a[2]);
	else if (!strcmp(mode, "io") && argc >= 7)
		io(argv[2], atol(argv[3]), atol(argv[4]), atol(argv[5]), atol(argv[6]));
	else if (!strcmp(mode, "finalize")) {
		ring(a[0], 64, 0, 8);
		/* each rank ends by its own SIGKILL only: mpirun's SIGTERM to the
		 * ranks still alive when the first one dies would send the agent's
		 * finals (posix_signal.c), and the test is of MPI_Finalize's */
		signal(SIGTERM, SIG_IGN);
		MPI_Finalize();
		kill(getpid(), SIGKILL);
	} else if (!strcmp(mode, "abort")) {
		ring(a[0], 64, 0, 8);
		if (rank == 1) {
			const char *iv = getenv("IOGRAM_INTERVAL_MS");
			usleep((useconds_t)(10 * (iv ? atol(iv) : 1000) * 1000));
			char b[64] = { 0 };
			for (long i = 0; i < a[1]; i++)
				MPI_Send(b, 64, MPI_BYTE, 2 % size, 9, MPI_COMM_WORLD);
			abort();
		}
		for (int i = 0; i < 600; i++)   /* killed by mpirun once rank 1 is gone */
			usleep(100000);
	} else if (!strcmp(mode, "bench"))
		bench(a[0]);
	else {
		fprintf(stderr, "mpi_job: bad mode\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	MPI_Finalize();
	return 0;
}
