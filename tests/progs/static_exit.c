/* static_exit.c - test program, linked with -static: the loader never runs,
 * so LD_PRELOAD cannot apply. Writes 4 x 1000 B to DIR/static.dat and exits
 * with CODE.
 * usage: prog_static DIR CODE */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	char path[4096], buf[1000];
	memset(buf, 's', sizeof(buf));
	snprintf(path, sizeof(path), "%s/static.dat", argv[1]);
	int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
	if (fd < 0)
		return 1;
	for (int i = 0; i < 4; i++)
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			return 1;
	close(fd);
	return atoi(argv[2]);
}
