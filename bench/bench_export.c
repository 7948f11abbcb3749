/* bench_export.c - `iogram export series` cost per record as sources grow:
 * a recording of N realistic sources (1k, 5k, 20k; HELLO, 1 s DELTAs, a
 * SNAPSHOT every 10 s, keyframe-free packs), read back as a per-node series.
 * Reading and decoding alone are timed too, so what the series adds shows. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "iogp.h"
#include "realistic.h"
#include "testutil.h"

#define SECONDS 30
#define SNAP_EVERY 10

static int put(iogp_replay_writer *w, const iogp_msg *m, uint64_t recv_ns, uint8_t **buf,
               size_t *cap)
{
	long n = iogp_msg_encode(m, NULL, 0);
	if (n < 0)
		return (int)n;
	if ((size_t)n > *cap) {
		uint8_t *b = realloc(*buf, (size_t)n);
		if (!b)
			return IOGP_ENOMEM;
		*buf = b;
		*cap = (size_t)n;
	}
	if (iogp_msg_encode(m, *buf, *cap) != n)
		return IOGP_EINVAL;
	return iogp_replay_write(w, recv_ns, *buf, (size_t)n);
}

/* The recording of nsrc sources; its record count in *records. */
static int make_file(const char *path, int nsrc, uint64_t *records)
{
	iogp_replay_writer *w;
	char err[256];
	iogp_replay_wopts o = { .replace = 1, .creator = "bench_export", .compress = 1 };
	if (iogp_replay_create(&w, path, &o, err, sizeof err) < 0) {
		fprintf(stderr, "bench_export: %s\n", err);
		return -1;
	}
	realistic **src = calloc((size_t)nsrc, sizeof *src);
	iogp_msg m;
	iogp_msg_init(&m);
	uint8_t *buf = NULL;
	size_t cap = 0;
	int rc = src ? 0 : IOGP_ENOMEM;
	uint64_t t = 1795000000000000000ull, n = 0;
	for (int i = 0; i < nsrc && rc >= 0; i++, n++) {
		if (!(src[i] = realistic_new(1000 + (uint64_t)i)))
			rc = IOGP_ENOMEM;
		else
			realistic_hello(src[i], &m), rc = put(w, &m, t + (uint64_t)i, &buf, &cap);
	}
	for (uint64_t q = 1; q <= SECONDS && rc >= 0; q++) {
		t += 1000000000ull;
		for (int i = 0; i < nsrc && rc >= 0; i++, n++) {
			realistic_delta(src[i], &m, q);
			m.wall_ns = t + (uint64_t)i;   /* the sources' clocks agree (realistic's are years apart) */
			rc = put(w, &m, t + (uint64_t)i, &buf, &cap);
			if (rc >= 0 && q % SNAP_EVERY == 0) {
				realistic_snapshot(src[i], &m, q);
				m.wall_ns = t + (uint64_t)i;
				rc = put(w, &m, t + (uint64_t)i, &buf, &cap);
				n++;
			}
		}
	}
	for (int i = 0; src && i < nsrc; i++)
		realistic_free(src[i]);
	free(src);
	free(buf);
	iogp_msg_free(&m);
	if (rc < 0 || (rc = iogp_replay_close(w)) < 0) {
		fprintf(stderr, "bench_export: write: %s\n", iogp_strerror(rc));
		return -1;
	}
	*records = n;
	return 0;
}

/* Read and decode every record, nothing else. */
static double read_only(const char *path)
{
	iogp_replay_reader *r;
	char err[256];
	double t0 = tu_now();
	if (iogp_replay_open(&r, path, err, sizeof err) < 0)
		return -1;
	iogp_msg m;
	iogp_msg_init(&m);
	iogp_replay_rec rec;
	while (iogp_replay_next(r, &rec) == 0)
		iogp_msg_decode(&m, rec.payload, rec.len, NULL, 0);
	iogp_msg_free(&m);
	iogp_replay_close_reader(r);
	return tu_now() - t0;
}

static double series(const char *path, const char *metric, int flags, size_t *nodes)
{
	iogp_series s;
	char err[256];
	double t0 = tu_now();
	if (iogp_series_load(&s, path, metric, 1.0, flags, err, sizeof err) < 0) {
		fprintf(stderr, "bench_export: %s\n", err);
		return -1;
	}
	double dt = tu_now() - t0;
	*nodes = s.nnodes;
	iogp_series_free(&s);
	return dt;
}

int main(int argc, char **argv)
{
	int sizes[3] = { 1000, 5000, 20000 }, nsizes = 3;
	if (argc == 3 && !strcmp(argv[1], "--sources")) {
		sizes[0] = atoi(argv[2]);
		nsizes = 1;
	} else if (argc != 1) {
		fprintf(stderr, "usage: bench_export [--sources N]\n");
		return 2;
	}
	const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char path[4096];
	snprintf(path, sizeof path, "%s/bench_export.XXXXXX", dir);
	int fd = mkstemp(path);
	if (fd < 0) {
		fprintf(stderr, "bench_export: %s: %s\n", path, strerror(errno));
		return 1;
	}
	close(fd);
	printf("realistic sources, %d s of 1 s DELTAs, a SNAPSHOT each %d s; best of 3\n",
	       SECONDS, SNAP_EVERY);
	int fail = 0;
	for (int k = 0; k < nsizes && !fail; k++) {
		uint64_t records;
		if (make_file(path, sizes[k], &records) < 0) {
			fail = 1;
			break;
		}
		double rd = 1e9, rate = 1e9, lat = 1e9;
		size_t nodes = 0;
		for (int rep = 0; rep < 3 && !fail; rep++) {
			double a = read_only(path), b = series(path, "posix.read.bytes", 0, &nodes);
			double q = series(path, "posix.read.latency", IOGP_SERIES_QUANTILES, &nodes);
			if (a < 0 || b < 0 || q < 0)
				fail = 1;
			rd = a < rd ? a : rd;
			rate = b < rate ? b : rate;
			lat = q < lat ? q : lat;
		}
		if (fail)
			break;
		printf("%6d sources (%zu nodes), %8llu records: read+decode %.2f us/record; "
		       "export series: rate %.2f us/record (%.2f s), latency quantiles %.2f "
		       "us/record (%.2f s)\n", sizes[k], nodes, (unsigned long long)records,
		       rd / (double)records * 1e6, rate / (double)records * 1e6, rate,
		       lat / (double)records * 1e6, lat);
	}
	unlink(path);
	return fail;
}
