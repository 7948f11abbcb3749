/* iogram-demo-work.c - one worker of `iogram-top --demo`: real file I/O of
 * one pattern in DIR until SIGTERM (or its parent goes), paced so the demo
 * stays light. usage: iogram-demo-work PATTERN DIR
 * Patterns: seqwrite (sequential 1 MiB writes), randread (random 4 KiB
 * reads), smallfiles (3901-byte files created, stat'ed, read, deleted),
 * bursts (64 KiB write bursts between compute pauses), aio (POSIX AIO 4 KiB
 * reads at queue depth 8). */
#include <aio.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop;
static pid_t parent;
static uint64_t rng = 0x9E3779B97F4A7C15ull;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int running(void)
{
	return !stop && getppid() == parent;
}

static uint64_t rnd(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void pause_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR && running())
		;
}

static int path_in(char *out, size_t len, const char *dir, const char *name)
{
	return snprintf(out, len, "%s/%s", dir, name) < (int)len ? 0 : -1;
}

static int fill(int fd, size_t bytes, char *buf, size_t bs)
{
	for (size_t done = 0; done < bytes && running(); done += bs)
		if (write(fd, buf, bs) != (ssize_t)bs)
			return -1;
	return 0;
}

/* ~8 MiB/s in 1 MiB writes, the file starting over at 32 MiB. */
static int seqwrite(const char *dir)
{
	char path[4096];
	static char buf[1 << 20];
	memset(buf, 'a', sizeof(buf));
	if (path_in(path, sizeof(path), dir, "sequential.dat") < 0)
		return 1;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return 1;
	for (int i = 0; running(); i++) {
		if (i && i % 32 == 0) {
			fdatasync(fd);
			if (ftruncate(fd, 0) < 0 || lseek(fd, 0, SEEK_SET) < 0)
				break;
		}
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			break;
		pause_ms(125);
	}
	close(fd);
	unlink(path);
	return 0;
}

/* ~1600 random 4 KiB reads/s over a 16 MiB file. */
static int randread(const char *dir)
{
	char path[4096];
	static char buf[1 << 16];
	memset(buf, 'r', sizeof(buf));
	if (path_in(path, sizeof(path), dir, "random.dat") < 0)
		return 1;
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || fill(fd, 16u << 20, buf, sizeof(buf)) < 0)
		return 1;
	while (running()) {
		for (int i = 0; i < 32; i++) {
			off_t off = (off_t)(rnd() % ((16u << 20) / 4096)) * 4096;
			if (pread(fd, buf, 4096, off) < 0)
				break;
		}
		pause_ms(20);
	}
	close(fd);
	unlink(path);
	return 0;
}

/* Batches of 3901-byte files: create+write, stat, read, delete; ~200 files/s. */
static int smallfiles(const char *dir)
{
	char sub[4096], path[4200];
	static char buf[3901];
	memset(buf, 's', sizeof(buf));
	if (path_in(sub, sizeof(sub), dir, "small") < 0 || (mkdir(sub, 0755) < 0 && errno != EEXIST))
		return 1;
	for (unsigned round = 0; running(); round++) {
		enum { BATCH = 50 };
		for (int i = 0; i < BATCH; i++) {
			snprintf(path, sizeof(path), "%s/f%02u-%02d", sub, round % 100, i);
			int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
			if (fd < 0)
				continue;
			if (write(fd, buf, sizeof(buf)) < 0) {
				/* a full disk is not the demo's business */
			}
			close(fd);
		}
		struct stat st;
		for (int i = 0; i < BATCH; i++) {
			snprintf(path, sizeof(path), "%s/f%02u-%02d", sub, round % 100, i);
			stat(path, &st);
		}
		for (int i = 0; i < BATCH; i++) {
			snprintf(path, sizeof(path), "%s/f%02u-%02d", sub, round % 100, i);
			int fd = open(path, O_RDONLY);
			if (fd < 0)
				continue;
			while (read(fd, buf, sizeof(buf)) > 0)
				;
			close(fd);
		}
		for (int i = 0; i < BATCH; i++) {
			snprintf(path, sizeof(path), "%s/f%02u-%02d", sub, round % 100, i);
			unlink(path);
		}
		pause_ms(250);
	}
	rmdir(sub);
	return 0;
}

/* Every 3 s: 0.5 s of 64 KiB writes (~8 MiB), fsync, then compute. */
static int bursts(const char *dir)
{
	char path[4096];
	static char buf[1 << 16];
	memset(buf, 'b', sizeof(buf));
	if (path_in(path, sizeof(path), dir, "bursts.dat") < 0)
		return 1;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return 1;
	while (running()) {
		if (ftruncate(fd, 0) < 0 || lseek(fd, 0, SEEK_SET) < 0)
			break;
		for (int i = 0; i < 128 && running(); i++) {
			if (write(fd, buf, sizeof(buf)) < 0)
				break;
			if (i % 16 == 15)
				pause_ms(60);
		}
		fsync(fd);
		/* compute: a little real work, then waiting for the next step,
		 * looking for a stop file now and then as batch codes do */
		double x = 0;
		for (long i = 0; i < 2000000 && running(); i++)
			x += (double)i * 1e-9;
		__asm__ volatile("" : : "g"(x));   /* keep the work */
		char stopfile[4200];
		snprintf(stopfile, sizeof(stopfile), "%s.stop", path);
		for (int i = 0; i < 8 && running(); i++) {
			struct stat st;
			stat(stopfile, &st);
			pause_ms(300);
		}
	}
	close(fd);
	unlink(path);
	return 0;
}

/* POSIX AIO: 4 KiB reads at random offsets, 8 in flight, ~800/s. */
static int aio(const char *dir)
{
	enum { DEPTH = 8, BS = 4096, SIZE = 8 << 20 };
	char path[4096];
	static char bufs[DEPTH][BS], fillbuf[1 << 16];
	memset(fillbuf, 'q', sizeof(fillbuf));
	if (path_in(path, sizeof(path), dir, "async.dat") < 0)
		return 1;
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || fill(fd, SIZE, fillbuf, sizeof(fillbuf)) < 0)
		return 1;
	struct aiocb cbs[DEPTH];
	const struct aiocb *list[DEPTH];
	memset(cbs, 0, sizeof(cbs));
	for (int i = 0; i < DEPTH; i++) {
		cbs[i].aio_fildes = fd;
		cbs[i].aio_buf = bufs[i];
		cbs[i].aio_nbytes = BS;
		cbs[i].aio_offset = (off_t)(rnd() % (SIZE / BS)) * BS;
		if (aio_read(&cbs[i]) != 0)
			return 1;
		list[i] = &cbs[i];
	}
	long done = 0;
	while (running()) {
		struct timespec to = { 0, 200000000 };
		if (aio_suspend(list, DEPTH, &to) != 0 && errno != EINTR && errno != EAGAIN)
			break;
		for (int i = 0; i < DEPTH; i++) {
			if (aio_error(&cbs[i]) == EINPROGRESS)
				continue;
			aio_return(&cbs[i]);
			done++;
			cbs[i].aio_offset = (off_t)(rnd() % (SIZE / BS)) * BS;
			if (aio_read(&cbs[i]) != 0) {
				stop = 1;
				break;
			}
			/* one at a time: the depth stays 8 */
			break;
		}
		if (done % 16 == 0)
			pause_ms(20);
	}
	for (int i = 0; i < DEPTH; i++) {
		if (aio_error(&cbs[i]) == EINPROGRESS)
			aio_cancel(fd, &cbs[i]);
		const struct aiocb *one[1] = { &cbs[i] };
		struct timespec to = { 1, 0 };
		while (aio_error(&cbs[i]) == EINPROGRESS && aio_suspend(one, 1, &to) == 0)
			;
		aio_return(&cbs[i]);
	}
	close(fd);
	unlink(path);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: iogram-demo-work seqwrite|randread|smallfiles|bursts|aio DIR\n");
		return 2;
	}
	parent = getppid();
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	rng ^= (uint64_t)getpid() * 0x100000001b3ull;
	static const struct {
		const char *name;
		int (*run)(const char *);
	} pats[] = {
		{ "seqwrite", seqwrite }, { "randread", randread }, { "smallfiles", smallfiles },
		{ "bursts", bursts }, { "aio", aio },
	};
	for (size_t i = 0; i < sizeof(pats) / sizeof(*pats); i++)
		if (!strcmp(argv[1], pats[i].name)) {
			int rc = pats[i].run(argv[2]);
			/* the last worker out removes the directory, even when
			 * iogram-top was killed and could not */
			rmdir(argv[2]);
			return rc;
		}
	fprintf(stderr, "iogram-demo-work: unknown pattern '%s'\n", argv[1]);
	return 2;
}
