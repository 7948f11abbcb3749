/* pread_loop.c - benchmark program: N preads of 4 KiB on a page-cached file;
 * prints "ns/op MEAN min FASTEST-BATCH". usage: prog_pread_loop FILE [N [thread|fputc]]
 * "fputc" writes FILE instead, N fputc through stdio's buffer (the stdio
 * layer's cost on its cheapest call).
 * "for=S" goes on past N until S seconds have passed (a test that needs
 * several intervals of a busy reader on a fast machine too).
 * "thread" starts an idle thread first: glibc's syscall wrappers take a
 * slower (cancellation) path in any multi-threaded process, as in one with
 * the iogram agent's thread; this isolates that cost. */
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define BS 4096

static void *idle(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static double ns_since(const struct timespec *a)
{
	struct timespec b;
	clock_gettime(CLOCK_MONOTONIC, &b);
	return (double)(b.tv_sec - a->tv_sec) * 1e9 + (double)(b.tv_nsec - a->tv_nsec);
}

static int put_loop(const char *path, long n)
{
	FILE *f = fopen(path, "w");
	if (f == NULL) {
		perror(path);
		return 1;
	}
	long per = n / 20 > 0 ? n / 20 : 1;
	double total = 0, best = 1e30;
	for (long done = 0; done < n;) {
		long k = n - done < per ? n - done : per;
		struct timespec a;
		clock_gettime(CLOCK_MONOTONIC, &a);
		for (long i = 0; i < k; i++)
			if (fputc('a' + (int)(i & 15), f) == EOF)
				return 1;
		double ns = ns_since(&a);
		total += ns;
		if (ns / (double)k < best)
			best = ns / (double)k;
		done += k;
	}
	printf("ns/op %.1f min %.1f\n", total / (double)n, best);
	return fclose(f) == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	long n = argc > 2 ? atol(argv[2]) : 1000000;
	if (n <= 0)
		return 2;
	if (argc > 3 && strcmp(argv[3], "fputc") == 0)
		return put_loop(argv[1], n);
	double min_ns = argc > 3 && strncmp(argv[3], "for=", 4) == 0 ? atof(argv[3] + 4) * 1e9 : 0;
	pthread_t t;
	if (argc > 3 && strcmp(argv[3], "thread") == 0 && pthread_create(&t, NULL, idle, NULL) != 0)
		return 1;
	int fd = open(argv[1], O_RDONLY);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	off_t size = lseek(fd, 0, SEEK_END);
	long blocks = size / BS;
	if (blocks <= 0)
		return 1;
	static char buf[BS];
	for (long i = 0; i < blocks; i++)   /* warm the page cache */
		if (pread(fd, buf, BS, (off_t)i * BS) != BS)
			return 1;
	/* 20 batches: the mean over all, and the fastest batch (least disturbed
	 * by other processes on a shared machine) */
	unsigned long long rng = 88172645463325252ull;
	long per = n / 20 > 0 ? n / 20 : 1;
	double total = 0, best = 1e30;
	struct timespec start;
	long done = 0;
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (done < n || ns_since(&start) < min_ns) {
		long k = n - done < per && n > done ? n - done : per;
		struct timespec a, b;
		clock_gettime(CLOCK_MONOTONIC, &a);
		for (long i = 0; i < k; i++) {
			rng ^= rng << 13;
			rng ^= rng >> 7;
			rng ^= rng << 17;
			if (pread(fd, buf, BS, (off_t)(rng % (unsigned long long)blocks) * BS) != BS)
				return 1;
		}
		clock_gettime(CLOCK_MONOTONIC, &b);
		double ns = (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec);
		total += ns;
		if (ns / (double)k < best)
			best = ns / (double)k;
		done += k;
	}
	printf("ns/op %.1f min %.1f\n", total / (double)done, best);
	close(fd);
	return 0;
}
