/* small_files.c - test program: a small-files job, paced. Every round it
 * creates FILES new files in DIR (names never reused: DIR/sROUND-K), writes
 * SIZE bytes into each in one write, closes it, reads every one back in
 * one read, then sleeps PAUSE_MS. usage: prog_small_files DIR FILES ROUNDS
 * PAUSE_MS SIZE. Prints "files N bytes B" (written) and exits 0 when every
 * call succeeded. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 6)
		return 2;
	long files = atol(argv[2]), rounds = atol(argv[3]), pause = atol(argv[4]), size = atol(argv[5]);
	if (files < 1 || files > 10000 || rounds < 1 || rounds > 100000 || pause < 0 ||
	    pause > 60000 || size < 1 || size > 65536)
		return 2;
	static char buf[65536], in[65536];
	memset(buf, 'q', sizeof(buf));
	char path[4096];
	long n = 0, bytes = 0;
	for (long r = 0; r < rounds; r++) {
		for (long k = 0; k < files; k++) {
			snprintf(path, sizeof(path), "%s/s%05ld-%04ld", argv[1], r, k);
			int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
			if (fd < 0 || write(fd, buf, (size_t)size) != size || close(fd) != 0)
				return 1;
			n++;
			bytes += size;
		}
		for (long k = 0; k < files; k++) {
			snprintf(path, sizeof(path), "%s/s%05ld-%04ld", argv[1], r, k);
			int fd = open(path, O_RDONLY);
			if (fd < 0 || read(fd, in, sizeof(in)) != size || close(fd) != 0)
				return 1;
		}
		struct timespec ts = { pause / 1000, (pause % 1000) * 1000000L };
		nanosleep(&ts, NULL);
	}
	printf("files %ld bytes %ld\n", n, bytes);
	return 0;
}
