/* files_mt.c - test program: T threads write to F files, then every file is
 * read back. usage: prog_files_mt DIR THREADS FILES WRITES SIZE
 * Thread t's k-th write goes to file (t + k) % FILES at that file's next
 * slot of SIZE bytes (slots handed out under a lock, so files fill up
 * contiguously); then the main thread reads each file in 4 KiB reads to the
 * end (the last read returns 0). Exit status 0 when every call succeeded. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAXF 4096

static int fds[MAXF];
static long next_slot[MAXF];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long nfiles, nwrites, size;
static int failed;

static void *writer(void *arg)
{
	long t = (long)arg;
	char *buf = malloc((size_t)size);
	if (buf == NULL)
		return NULL;
	memset(buf, 'a' + (int)(t % 26), (size_t)size);
	for (long k = 0; k < nwrites; k++) {
		long f = (t + k) % nfiles;
		pthread_mutex_lock(&lock);
		long slot = next_slot[f]++;
		pthread_mutex_unlock(&lock);
		if (pwrite(fds[f], buf, (size_t)size, slot * size) != size)
			__atomic_store_n(&failed, 1, __ATOMIC_RELAXED);
	}
	free(buf);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 6)
		return 2;
	long nthreads = atol(argv[2]);
	nfiles = atol(argv[3]);
	nwrites = atol(argv[4]);
	size = atol(argv[5]);
	if (nthreads < 1 || nthreads > 256 || nfiles < 1 || nfiles > MAXF || nwrites < 0 || size < 1)
		return 2;
	char path[4096];
	for (long f = 0; f < nfiles; f++) {
		snprintf(path, sizeof(path), "%s/f%04ld", argv[1], f);
		if ((fds[f] = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644)) < 0)
			return 1;
	}
	pthread_t th[256];
	for (long t = 0; t < nthreads; t++)
		if (pthread_create(&th[t], NULL, writer, (void *)t) != 0)
			return 1;
	for (long t = 0; t < nthreads; t++)
		pthread_join(th[t], NULL);
	char buf[4096];
	for (long f = 0; f < nfiles; f++) {
		ssize_t n;
		if (lseek(fds[f], 0, SEEK_SET) != 0)
			return 1;
		while ((n = read(fds[f], buf, sizeof(buf))) > 0)
			;
		if (n < 0 || close(fds[f]) != 0)
			return 1;
	}
	return failed;
}
