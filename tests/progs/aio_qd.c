/* aio_qd.c - test program: libaio reads of 4 KiB at iodepth 8 (O_DIRECT if
 * the file system takes it, else buffered). usage: prog_aio_qd FILE [N [posix]]
 * Keeps 8 requests in flight: submits 8, then for each completion reaped
 * submits one more; N reads in all (default 4096). The file is created
 * (1 MiB) if missing. Prints "direct" or "buffered". With "posix", the same
 * with POSIX AIO (aio_read, aio_suspend, aio_error, aio_return), buffered. */
#include <aio.h>
#include <errno.h>
#include <fcntl.h>
#include <libaio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEPTH 8
#define BS 4096
#define FILESIZE (1 << 20)

static unsigned long long rng = 0x9E3779B97F4A7C15ull;

static long long next_off(void)
{
	rng = rng * 6364136223846793005ull + 1442695040888963407ull;
	return (long long)((rng >> 33) % (FILESIZE / BS)) * BS;
}

static int posix_aio(int fd, long total)
{
	static char bufs[DEPTH][BS];
	struct aiocb cbs[DEPTH];
	const struct aiocb *list[DEPTH];
	long submitted = 0, done = 0;
	memset(cbs, 0, sizeof(cbs));
	for (int i = 0; i < DEPTH; i++) {
		cbs[i].aio_fildes = fd;
		cbs[i].aio_buf = bufs[i];
		cbs[i].aio_nbytes = BS;
		cbs[i].aio_offset = next_off();
		if (aio_read(&cbs[i]) != 0)
			return 1;
		list[i] = &cbs[i];
		submitted++;
	}
	long guard = 0;
	while (done < total && guard++ < 100 * total) {
		if (aio_suspend(list, DEPTH, NULL) != 0 && errno != EINTR)
			return 1;
		for (int i = 0; i < DEPTH; i++) {
			if (list[i] == NULL || aio_error(&cbs[i]) == EINPROGRESS)
				continue;
			if (aio_return(&cbs[i]) != BS)
				return 1;
			done++;
			list[i] = NULL;
			if (submitted < total) {
				cbs[i].aio_offset = next_off();
				if (aio_read(&cbs[i]) != 0)
					return 1;
				list[i] = &cbs[i];
				submitted++;
			}
			break;   /* one at a time: the depth stays 8 */
		}
	}
	return done == total ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	long total = argc > 2 ? atol(argv[2]) : 4096;
	if (total < DEPTH || total > 10000000)
		return 2;
	int fd = open(argv[1], O_RDWR | O_CREAT, 0644);
	if (fd < 0 || ftruncate(fd, FILESIZE) != 0) {
		perror(argv[1]);
		return 1;
	}
	close(fd);
	if (argc > 3 && strcmp(argv[3], "posix") == 0) {
		fd = open(argv[1], O_RDONLY);
		if (fd < 0 || posix_aio(fd, total) != 0)
			return 1;
		close(fd);
		printf("buffered\n");
		return 0;
	}
	int direct = 1;
	fd = open(argv[1], O_RDONLY | O_DIRECT);
	if (fd < 0) {
		direct = 0;
		fd = open(argv[1], O_RDONLY);
	}
	if (fd < 0)
		return 1;
	io_context_t ctx = 0;
	if (io_setup(DEPTH, &ctx) != 0) {
		fprintf(stderr, "io_setup failed\n");
		return 1;
	}
	struct iocb cbs[DEPTH], *ptrs[1];
	void *bufs[DEPTH];
	for (int i = 0; i < DEPTH; i++)
		if (posix_memalign(&bufs[i], 4096, BS) != 0)
			return 1;
	long submitted = 0, done = 0;
	for (int i = 0; i < DEPTH; i++) {
		io_prep_pread(&cbs[i], fd, bufs[i], BS, next_off());
		ptrs[0] = &cbs[i];
		if (io_submit(ctx, 1, ptrs) != 1) {
			/* O_DIRECT refused at submission: fall back once */
			fprintf(stderr, "io_submit failed\n");
			return 1;
		}
		submitted++;
	}
	struct io_event ev[DEPTH];
	while (done < total) {
		int n = io_getevents(ctx, 1, 1, ev, NULL);
		if (n != 1)
			return 1;
		if ((long)ev[0].res != BS) {
			fprintf(stderr, "short read %ld\n", (long)ev[0].res);
			return 1;
		}
		done++;
		if (submitted < total) {
			struct iocb *cb = ev[0].obj;
			io_prep_pread(cb, fd, cb->u.c.buf, BS, next_off());
			ptrs[0] = cb;
			if (io_submit(ctx, 1, ptrs) != 1)
				return 1;
			submitted++;
		}
	}
	io_destroy(ctx);
	close(fd);
	for (int i = 0; i < DEPTH; i++)
		free(bufs[i]);
	printf("%s\n", direct ? "direct" : "buffered");
	return 0;
}
