/* dir_files.c - test program: small files in several directories, paced.
 * Creates N files in each DIR (DIR/fK), one after another across the
 * directories (file K of every directory that has one, then K + 1), at
 * PER_S files a second; writes SIZE bytes into each in one write, then
 * reads every one back in one read, twice (a file opened again is the same
 * file). usage: prog_dir_files SIZE PER_S DIR N [DIR N ...]. Prints "files
 * N bytes B" (written) and exits 0 when every call succeeded. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int one(const char *dir, long k, int wr, long size)
{
	static char buf[65536];
	char path[4096];
	snprintf(path, sizeof(path), "%s/f%05ld", dir, k);
	int fd = wr ? open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644) : open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	ssize_t n = wr ? write(fd, buf, (size_t)size) : read(fd, buf, sizeof(buf));
	return close(fd) == 0 && n == size ? 0 : -1;
}

int main(int argc, char **argv)
{
	if (argc < 5 || argc % 2 == 0)
		return 2;
	long size = atol(argv[1]), per_s = atol(argv[2]), most = 0, n = 0;
	int ndirs = (argc - 3) / 2;
	if (size < 1 || size > 65536 || per_s < 1 || per_s > 100000)
		return 2;
	for (int d = 0; d < ndirs; d++)
		if (atol(argv[4 + 2 * d]) > most)
			most = atol(argv[4 + 2 * d]);
	struct timespec gap = { 0, 1000000000L / per_s };
	for (int pass = 0; pass < 3; pass++)
		for (long k = 0; k < most; k++)
			for (int d = 0; d < ndirs; d++) {
				if (k >= atol(argv[4 + 2 * d]))
					continue;
				if (one(argv[3 + 2 * d], k, pass == 0, size) < 0)
					return 1;
				if (pass == 0) {
					n++;
					nanosleep(&gap, NULL);
				}
			}
	printf("files %ld bytes %ld\n", n, n * size);
	return 0;
}
