/* probe.c - the prober's working files, its six operations and its
 * statistics (probe.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"

const char *const probe_op_name[PROBE_NOPS] = { "read", "write", "create", "stat", "smallread", "delete" };
const char *const probe_stat_name[STAT_N] = { "median", "p90", "p95", "p99", "mean" };

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t rnd(probe_files *p)
{
	uint64_t z = (p->rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void pool_name(const probe_files *p, uint64_t k, char *buf, size_t len)
{
	snprintf(buf, len, "%s/p.%llu", p->dir, (unsigned long long)k);
}

/* A small file of PROBE_SMALL bytes: 0, or -1. */
static int small_create(probe_files *p, uint64_t k)
{
	char path[4200];
	pool_name(p, k, path, sizeof(path));
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0)
		return -1;
	int ok = write(fd, p->buf, PROBE_SMALL) == (ssize_t)PROBE_SMALL;
	return close(fd) == 0 && ok ? 0 : -1;
}

int probe_setup(probe_files *p, const char *dir, uint64_t file_size, uint32_t pool, int direct,
                char *err, size_t errlen)
{
	memset(p, 0, sizeof(*p));
	p->data_fd = -1;
	p->file_size = file_size / PROBE_BLOCK * PROBE_BLOCK;
	p->pool = pool;
	p->direct = direct;
	p->rng = mono_ns() ^ (uint64_t)getpid() << 32;
	struct stat st;
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s: %s", dir, errno ? strerror(errno) : "not a directory");
		return -1;
	}
	if (access(dir, W_OK | X_OK) != 0) {
		snprintf(err, errlen, "%s: cannot write there (%s)", dir, strerror(errno));
		return -1;
	}
	struct statvfs vfs;
	uint64_t need = p->file_size + (uint64_t)(pool + 2) * 8192;
	if (statvfs(dir, &vfs) == 0 && (uint64_t)vfs.f_bavail * vfs.f_frsize < 2 * need) {
		snprintf(err, errlen, "%s: %llu MiB free, the probe needs %llu MiB and keeps as much "
		         "free (use a smaller --file-size)", dir,
		         (unsigned long long)((uint64_t)vfs.f_bavail * vfs.f_frsize >> 20),
		         (unsigned long long)(need >> 20));
		return -1;
	}
	char host[256] = "host";
	gethostname(host, sizeof(host) - 1);
	snprintf(p->dir, sizeof(p->dir), "%s/.iogram-probe.%s.%ld", dir, host, (long)getpid());
	if (mkdir(p->dir, 0700) != 0) {
		snprintf(err, errlen, "%s: %s", p->dir, strerror(errno));
		p->dir[0] = '\0';
		return -1;
	}
	if (posix_memalign(&p->buf, 4096, PROBE_BLOCK) != 0) {
		snprintf(err, errlen, "out of memory");
		probe_cleanup(p);
		return -1;
	}
	memset(p->buf, 0x5a, PROBE_BLOCK);
	char path[4200];
	snprintf(path, sizeof(path), "%s/data", p->dir);
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	for (uint64_t off = 0; fd >= 0 && off < p->file_size; off += PROBE_BLOCK)
		if (pwrite(fd, p->buf, PROBE_BLOCK, (off_t)off) != (ssize_t)PROBE_BLOCK) {
			close(fd);
			fd = -1;
		}
	if (fd >= 0 && (fsync(fd) != 0 || close(fd) != 0))
		fd = -1;
	if (fd >= 0)
		fd = open(path, O_RDWR | (direct ? O_DIRECT : 0));
	if (fd < 0 && direct) {
		snprintf(err, errlen, "%s: O_DIRECT is not supported here (%s); run without --direct",
		         dir, strerror(errno));
		probe_cleanup(p);
		return -1;
	}
	if (fd < 0) {
		snprintf(err, errlen, "%s: cannot create the probe's file: %s", p->dir, strerror(errno));
		probe_cleanup(p);
		return -1;
	}
	p->data_fd = fd;
	for (uint32_t k = 0; k < pool; k++)
		if (small_create(p, p->next++) != 0) {
			snprintf(err, errlen, "%s: cannot create the probe's small files: %s", p->dir,
			         strerror(errno));
			probe_cleanup(p);
			return -1;
		}
	return 0;
}

void probe_round(probe_files *p, uint64_t ns[PROBE_NOPS], unsigned *failed)
{
	uint64_t blocks = p->file_size / PROBE_BLOCK, t;
	char path[4200];
	struct stat st;
	*failed = 0;
#define TIMED(op, ok) do { \
		t = mono_ns(); \
		int ok_ = (ok); \
		ns[op] = ok_ ? mono_ns() - t : 0; \
		if (!ok_) \
			*failed |= 1u << (op); \
	} while (0)
	TIMED(PROBE_READ, pread(p->data_fd, p->buf, PROBE_BLOCK,
	                        (off_t)(rnd(p) % blocks * PROBE_BLOCK)) == (ssize_t)PROBE_BLOCK);
	TIMED(PROBE_WRITE, pwrite(p->data_fd, p->buf, PROBE_BLOCK,
	                          (off_t)(rnd(p) % blocks * PROBE_BLOCK)) == (ssize_t)PROBE_BLOCK);
	/* the pool keeps its size: a new file, then the oldest is read and deleted */
	TIMED(PROBE_CREATE, small_create(p, p->next) == 0);
	if (!(*failed >> PROBE_CREATE & 1))
		p->next++;
	pool_name(p, p->oldest, path, sizeof(path));
	TIMED(PROBE_STAT, stat(path, &st) == 0);
	TIMED(PROBE_SMALLREAD, ({
		int fd = open(path, O_RDONLY);
		int ok = fd >= 0 && read(fd, p->buf, PROBE_SMALL) == (ssize_t)PROBE_SMALL;
		(fd >= 0 && close(fd) == 0) && ok;
	}));
	TIMED(PROBE_DELETE, unlink(path) == 0);
	if (p->oldest + 1 < p->next)
		p->oldest++;
#undef TIMED
}

void probe_cleanup(probe_files *p)
{
	if (p->data_fd >= 0)
		close(p->data_fd);
	p->data_fd = -1;
	if (p->dir[0]) {
		DIR *d = opendir(p->dir);
		struct dirent *e;
		char path[4400];
		int guard = 0;
		while (d && (e = readdir(d)) != NULL && guard++ < 10000000) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			snprintf(path, sizeof(path), "%s/%s", p->dir, e->d_name);
			unlink(path);
		}
		if (d)
			closedir(d);
		rmdir(p->dir);
		p->dir[0] = '\0';
	}
	free(p->buf);
	p->buf = NULL;
}

void probe_fstype(const char *dir, char *buf, size_t len)
{
	char real[4096], line[8192];
	size_t best = 0;
	snprintf(buf, len, "unknown");
	if (!realpath(dir, real))
		return;
	FILE *f = fopen("/proc/self/mounts", "r");
	int guard = 0;
	while (f && fgets(line, sizeof(line), f) && guard++ < 100000) {
		char dev[1024], mnt[4096], type[64];
		if (sscanf(line, "%1023s %4095s %63s", dev, mnt, type) != 3)
			continue;
		size_t l = strlen(mnt);
		int under = !strcmp(mnt, "/") || (!strncmp(real, mnt, l) && (real[l] == '/' || !real[l]));
		if (under && l >= best) {
			best = l;
			snprintf(buf, len, "%s", type);
		}
	}
	if (f)
		fclose(f);
}

/* ---- statistics ------------------------------------------------------------- */

int probe_ring_init(probe_ring *r, size_t cap)
{
	memset(r, 0, sizeof(*r));
	r->t = malloc(cap * sizeof(*r->t));
	r->v = malloc(cap * sizeof(*r->v));
	r->cap = cap;
	return r->t && r->v ? 0 : -1;
}

void probe_ring_free(probe_ring *r)
{
	free(r->t);
	free(r->v);
	memset(r, 0, sizeof(*r));
}

void probe_ring_add(probe_ring *r, uint64_t t, uint64_t v)
{
	size_t i = (r->head + r->n) % r->cap;
	r->t[i] = t;
	r->v[i] = v;
	if (r->n < r->cap)
		r->n++;
	else
		r->head = (r->head + 1) % r->cap;
}

void probe_ring_expire(probe_ring *r, uint64_t t, uint64_t window_ns)
{
	while (r->n > 0 && r->t[r->head] + window_ns < t) {
		r->head = (r->head + 1) % r->cap;
		r->n--;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

uint64_t probe_stat(uint64_t *v, size_t n, int stat)
{
	if (n == 0)
		return 0;
	if (stat == STAT_MEAN) {
		long double s = 0;
		for (size_t i = 0; i < n; i++)
			s += v[i];
		return (uint64_t)(s / n + 0.5L);
	}
	qsort(v, n, sizeof(*v), cmp_u64);
	static const double q[] = { 0.5, 0.90, 0.95, 0.99 };
	/* the value at rank ceil(q n), as iogp_hist_quantile ranks */
	size_t rank = (size_t)(q[stat] * (double)n + 0.999999999);
	rank = rank < 1 ? 1 : rank > n ? n : rank;
	return v[rank - 1];
}

uint64_t probe_ring_median(const probe_ring *r, uint64_t *scratch)
{
	for (size_t i = 0; i < r->n; i++)
		scratch[i] = r->v[(r->head + i) % r->cap];
	return probe_stat(scratch, r->n, STAT_MEDIAN);
}
