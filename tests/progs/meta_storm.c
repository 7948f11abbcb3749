/* meta_storm.c - test program: creates N small files of SIZE bytes in DIR
 * (open, write, fstat, close), stats each again, then deletes them.
 * usage: prog_meta_storm DIR N SIZE. Exit 0 when every call succeeded. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 4)
		return 2;
	long n = atol(argv[2]), size = atol(argv[3]);
	if (n < 1 || n > 100000 || size < 0 || size > 65536)
		return 2;
	char path[4096], buf[65536];
	memset(buf, 'm', sizeof(buf));
	struct stat st;
	for (long i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/m%06ld", argv[1], i);
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || (size && write(fd, buf, (size_t)size) != size) || fstat(fd, &st) != 0 ||
		    close(fd) != 0)
			return 1;
	}
	for (long i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/m%06ld", argv[1], i);
		if (stat(path, &st) != 0 || unlink(path) != 0)
			return 1;
	}
	return 0;
}
