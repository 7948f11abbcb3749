/* stdio_ops.c - test program: stdio calls with known sizes.
 * usage: prog_stdio_ops FILE
 * Expected counts (stdio.*): fopen 2 (and 1 failed) + fclose 2 + fflush 1 +
 * fseek 1 + fseeko 1 = 8 meta ops; 10 writes of 1000 B; 7 reads: 5 x 2000 B,
 * 4096 B after rewinding, 2000 B at 8000 (a short read at the end of the
 * file), 16096 B. Reads and writes on a socket pair and an eventfd follow;
 * those are not counted. posix.*: nothing (glibc's own requests inside stdio
 * never pass the interposer). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	static char buf[8192];
	memset(buf, 'z', sizeof(buf));
	/* a failed call: counted as an error, errno left as libc set it */
	errno = 0;
	if (fopen("/nonexistent-iogram/x", "r") != NULL || errno != ENOENT)
		return 3;
	FILE *f = fopen(argv[1], "w");
	if (!f)
		return 1;
	for (int i = 0; i < 10; i++)
		if (fwrite(buf, 1, 1000, f) != 1000)
			return 1;
	if (fflush(f) != 0 || fclose(f) != 0)
		return 1;
	f = fopen(argv[1], "r");
	if (!f)
		return 1;
	for (int i = 0; i < 5; i++)          /* 5 x 2000 B, items of 100 B */
		if (fread(buf, 100, 20, f) != 20)
			return 1;
	if (fseek(f, 0, SEEK_SET) != 0)
		return 1;
	if (fread(buf, 1, 4096, f) != 4096)  /* 4096 B */
		return 1;
	if (fseeko(f, 8000, SEEK_SET) != 0)
		return 1;
	if (fread(buf, 1, 4096, f) != 2000)  /* short: 2000 B at the end */
		return 1;
	if (fclose(f) != 0)
		return 1;

	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		return 4;
	for (int i = 0; i < 5; i++)
		if (write(sv[0], buf, 100) != 100 || read(sv[1], buf, 100) != 100)
			return 4;
	close(sv[0]);
	close(sv[1]);
	int efd = eventfd(0, 0);
	uint64_t one = 1;
	if (efd < 0 || write(efd, &one, 8) != 8 || read(efd, &one, 8) != 8)
		return 5;
	close(efd);
	return 0;
}
