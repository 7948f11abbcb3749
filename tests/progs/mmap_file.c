/* mmap_file.c - test program: maps a file in two halves (mmap, then mmap64
 * at the middle) and reads every page through the mappings; maps 4 MiB of
 * anonymous memory and 64 KiB of /dev/zero (a character device) and touches
 * them; one mmap fails (length 0: EINVAL, errno kept). Counted: 2 mmap ops
 * of the file's size in all; its reads through the mappings are not
 * requests, so posix.read.ops stays 0 (besides what stdio does: nothing).
 * usage: prog_mmap_file FILE (its size a multiple of 2 pages) */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static uint64_t sum(const unsigned char *p, size_t len)
{
	uint64_t s = 0;
	for (size_t i = 0; i < len; i += 512)
		s += p[i];
	return s;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	int fd = open(argv[1], O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0)
		return 1;
	size_t half = (size_t)st.st_size / 2;
	unsigned char *a = mmap(NULL, half, PROT_READ, MAP_PRIVATE, fd, 0);
	unsigned char *b = mmap64(NULL, half, PROT_READ, MAP_SHARED, fd, (off64_t)half);
	if (a == MAP_FAILED || b == MAP_FAILED)
		return 1;
	uint64_t s = sum(a, half) + sum(b, half);
	munmap(a, half);
	munmap(b, half);
	errno = 0;
	if (mmap(NULL, 0, PROT_READ, MAP_PRIVATE, fd, 0) != MAP_FAILED || errno != EINVAL)
		return 3;
	close(fd);
	size_t an = 4u << 20;
	unsigned char *c = mmap(NULL, an, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (c == MAP_FAILED)
		return 1;
	for (size_t i = 0; i < an; i += 4096)
		c[i] = 1;
	munmap(c, an);
	int z = open("/dev/zero", O_RDWR);
	unsigned char *d = z < 0 ? MAP_FAILED : mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE, z, 0);
	if (d == MAP_FAILED)
		return 1;
	d[0] = 1;
	munmap(d, 65536);
	close(z);
	printf("%llu\n", (unsigned long long)s);
	return 0;
}
