/* direct.c - requests on O_DIRECT descriptors: prog_direct FILE_A FILE_B.
 * A is opened with O_DIRECT: 8 aligned 4 KiB pwrites, then 8 preads. B is
 * opened plainly: one write, then fcntl(F_SETFL) adds O_DIRECT for 4 writes
 * and takes it away again for the last one. Prints "direct", or "nodirect"
 * where the file system refuses O_DIRECT (EINVAL, at open and at F_SETFL
 * alike): then the same requests run without it. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BS 4096

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: prog_direct FILE_A FILE_B\n");
		return 2;
	}
	void *buf;
	if (posix_memalign(&buf, BS, BS) != 0)
		return 1;
	memset(buf, 'd', BS);
	int direct = 1;
	int a = open(argv[1], O_RDWR | O_CREAT | O_TRUNC | O_DIRECT, 0600);
	if (a < 0 && errno == EINVAL) {
		direct = 0;
		a = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0600);
	}
	if (a < 0)
		return 1;
	for (int i = 0; i < 8; i++)
		if (pwrite(a, buf, BS, (off_t)i * BS) != BS)
			return 1;
	for (int i = 0; i < 8; i++)
		if (pread(a, buf, BS, (off_t)i * BS) != BS)
			return 1;
	close(a);

	int b = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (b < 0 || write(b, buf, BS) != BS)
		return 1;
	int fl = fcntl(b, F_GETFL);
	if (fl < 0)
		return 1;
	int set = fcntl(b, F_SETFL, fl | O_DIRECT) == 0;
	if (!set && errno != EINVAL)
		return 1;
	if (set != direct)
		return 3;   /* the file system said yes once and no once */
	for (int i = 0; i < 4; i++)
		if (write(b, buf, BS) != BS)
			return 1;
	if (fcntl(b, F_SETFL, fl) != 0 || write(b, buf, BS) != BS)
		return 1;
	close(b);
	free(buf);
	printf("%s\n", direct ? "direct" : "nodirect");
	return 0;
}
