/* slow_shim.c - test LD_PRELOAD library: makes chosen calls slower by a
 * known time for a known stretch of calls, by spinning after the real call.
 *   IOGRAM_TEST_SLOW=OP:MICROSECONDS:FIRST:COUNT[,OP:...]
 * OP is stat, pread or unlink; calls FIRST .. FIRST+COUNT-1 (counting from 0,
 * per OP) take MICROSECONDS longer. (An added time, not a factor: the caller
 * times more than the shim can see of a call, so a factor would come out
 * short for calls of a few microseconds.) */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { S_STAT, S_PREAD, S_UNLINK, S_N };
static const char *const names[S_N] = { "stat", "pread", "unlink" };
static struct { double add_s; long first, count, calls; } rule[S_N];
static int loaded;

static void load(void)
{
	if (loaded)
		return;
	loaded = 1;
	const char *e = getenv("IOGRAM_TEST_SLOW");
	char buf[512];
	snprintf(buf, sizeof(buf), "%s", e ? e : "");
	for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char op[32];
		double f;
		long a, n;
		if (sscanf(tok, "%31[^:]:%lf:%ld:%ld", op, &f, &a, &n) != 4)
			continue;
		for (int k = 0; k < S_N; k++)
			if (!strcmp(op, names[k])) {
				rule[k].add_s = f * 1e-6;
				rule[k].first = a;
				rule[k].count = n;
			}
	}
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void slow(int k, double t0)
{
	load();
	long c = rule[k].calls++;
	(void)t0;
	if (rule[k].add_s <= 0 || c < rule[k].first || c >= rule[k].first + rule[k].count)
		return;
	double until = now() + rule[k].add_s;
	while (now() < until)
		;
}

int stat(const char *path, struct stat *st)
{
	static int (*real)(const char *, struct stat *);
	if (!real)
		real = (int (*)(const char *, struct stat *))dlsym(RTLD_NEXT, "stat");
	double t0 = now();
	int r = real(path, st);
	slow(S_STAT, t0);
	return r;
}

ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	static ssize_t (*real)(int, void *, size_t, off_t);
	if (!real)
		real = (ssize_t (*)(int, void *, size_t, off_t))dlsym(RTLD_NEXT, "pread");
	double t0 = now();
	ssize_t r = real(fd, buf, n, off);
	slow(S_PREAD, t0);
	return r;
}

int unlink(const char *path)
{
	static int (*real)(const char *);
	if (!real)
		real = (int (*)(const char *))dlsym(RTLD_NEXT, "unlink");
	double t0 = now();
	int r = real(path);
	slow(S_UNLINK, t0);
	return r;
}
