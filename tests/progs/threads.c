/* threads.c - test program: 16 threads each write then read back their own
 * file with known sizes (usage: prog_threads DIR). */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NTHREADS 16
#define NWRITES 100
#define WSIZE 8192
#define RSIZE 4096

/* Totals, for the test to check: writes 16 x 100 x 8192 B, reads
 * 16 x 200 x 4096 B (write(), lseek to 0, read() to the end: +16 reads of 0). */

static const char *dir;

static void *worker(void *arg)
{
	int id = (int)(long)arg;
	char path[4096], buf[WSIZE];
	memset(buf, 'a' + id % 26, sizeof(buf));
	snprintf(path, sizeof(path), "%s/thread-%02d.dat", dir, id);
	int fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0644);
	if (fd < 0) {
		perror(path);
		return (void *)1;
	}
	for (int i = 0; i < NWRITES; i++)
		if (write(fd, buf, WSIZE) != WSIZE) {
			perror("write");
			return (void *)1;
		}
	if (lseek(fd, 0, SEEK_SET) != 0)
		return (void *)1;
	ssize_t n;
	int reads = 0;
	while ((n = read(fd, buf, RSIZE)) > 0 && reads < 10 * NWRITES)
		reads++;
	close(fd);
	unlink(path);
	return reads == NWRITES * WSIZE / RSIZE ? NULL : (void *)1;
}

int main(int argc, char **argv)
{
	dir = argc > 1 ? argv[1] : "/tmp";
	pthread_t t[NTHREADS];
	for (long i = 0; i < NTHREADS; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)i) != 0)
			return 1;
	int bad = 0;
	for (int i = 0; i < NTHREADS; i++) {
		void *r;
		pthread_join(t[i], &r);
		bad |= r != NULL;
	}
	return bad;
}
