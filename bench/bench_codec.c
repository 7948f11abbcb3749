/* bench_codec.c - encode and decode throughput of a realistic DELTA on one
 * core; `--corpus DIR` writes seed inputs for fuzz/fuzz_decode instead. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <zstd.h>

#include "iogp.h"
#include "realistic.h"
#include "testutil.h"

#define NPOOL 64
#define BUFSZ 65536

static int write_file(const char *dir, const char *name, const uint8_t *p, size_t n)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (f == NULL || fwrite(p, 1, n, f) != n || fclose(f) != 0) {
		fprintf(stderr, "bench_codec: %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

static int write_corpus(const char *dir)
{
	static uint8_t buf[BUFSZ];
	realistic *r = realistic_new(7);
	iogp_msg m;
	long n;
	int rc = 0;

	if (r == NULL)
		return 1;
	iogp_msg_init(&m);
	realistic_hello(r, &m);
	n = iogp_msg_encode(&m, buf, sizeof buf);
	rc |= n < 0 || write_file(dir, "hello", buf, (size_t)n);
	realistic_delta(r, &m, 5);
	n = iogp_msg_encode(&m, buf, sizeof buf);
	rc |= n < 0 || write_file(dir, "delta", buf, (size_t)n);
	realistic_set_access(r, 8);
	realistic_delta(r, &m, 1);
	m.dropped = 3;
	n = iogp_msg_encode(&m, buf, sizeof buf);
	rc |= n < 0 || write_file(dir, "delta_access", buf, (size_t)n);
	realistic_snapshot(r, &m, 100);
	m.flags = IOGP_F_FINAL;
	n = iogp_msg_encode(&m, buf, sizeof buf);
	rc |= n < 0 || write_file(dir, "snapshot", buf, (size_t)n);
	{
		iogp_gauge_val g[2] = { { 3, -5 }, { 9, 1ll << 40 } };
		iogp_metric_def md[2] = {
			{ .id = 1, .kind = IOGP_GAUGE, .name = "gauge", .unit = "" },
			{ .id = 2, .kind = IOGP_HISTOGRAM, .name = "h", .unit = "ns",
			  .bins = { .kind = IOGP_BINS_EDGES, .nedges = 3, .edges = { 10, 100, 1000 } } },
		};

		iogp_msg_init(&m);
		m.kind = IOGP_SNAPSHOT;
		m.source = 42;
		m.seq = 300;
		m.ngauges = 2;
		m.gauges = g;
		m.nmetrics = 2;
		m.metrics = md;
		n = iogp_msg_encode(&m, buf, sizeof buf);
		rc |= n < 0 || write_file(dir, "gauges_edges", buf, (size_t)n);
		iogp_msg_init(&m);
		m.kind = IOGP_BYE;
		m.source = 42;
		m.seq = 301;
		n = iogp_msg_encode(&m, buf, sizeof buf);
		rc |= n < 0 || write_file(dir, "bye", buf, (size_t)n);
	}
	realistic_free(r);
	return rc != 0;
}

int main(int argc, char **argv)
{
	static uint8_t enc[NPOOL][BUFSZ];
	static uint8_t out[BUFSZ];
	static iogp_msg pool[NPOOL];
	size_t len[NPOOL], total = 0, minlen = SIZE_MAX, maxlen = 0, bins = 0;
	double secs = 1.5, t0, t, dt;
	uint64_t iters, check = 0;
	iogp_msg m;
	realistic *r;
	char err[256];
	long n;
	int i;

	if (argc == 3 && strcmp(argv[1], "--corpus") == 0)
		return write_corpus(argv[2]);
	if (argc == 3 && strcmp(argv[1], "--seconds") == 0)
		secs = atof(argv[2]);
	else if (argc != 1) {
		fprintf(stderr, "usage: bench_codec [--seconds S | --corpus DIR]\n");
		return 2;
	}

	r = realistic_new(1);
	if (r == NULL)
		return 1;
	iogp_msg_init(&m);
	for (i = 0; i < NPOOL; i++) {
		realistic_delta(r, &m, (uint64_t)i + 1);
		n = iogp_msg_encode(&m, enc[i], BUFSZ);
		if (n < 0) {
			fprintf(stderr, "encode: %s\n", iogp_strerror((int)n));
			return 1;
		}
		len[i] = (size_t)n;
		total += len[i];
		minlen = len[i] < minlen ? len[i] : minlen;
		maxlen = len[i] > maxlen ? len[i] : maxlen;
		iogp_msg_init(&pool[i]);
		if (iogp_msg_decode(&pool[i], enc[i], len[i], err, sizeof err) < 0) {
			fprintf(stderr, "decode: %s\n", err);
			return 1;
		}
		for (uint32_t h = 0; h < pool[i].nhists; h++)
			bins += pool[i].hists[h].nbins;
	}
	printf("realistic DELTA: %u counters, %u histograms, %.1f bins each; "
	    "payload %.0f B avg (%zu..%zu)\n", pool[0].ncounters, pool[0].nhists,
	    (double)bins / NPOOL / pool[0].nhists, (double)total / NPOOL, minlen, maxlen);
	realistic_hello(r, &m);
	n = iogp_msg_encode(&m, out, BUFSZ);
	printf("realistic HELLO: %ld B; ", n);
	realistic_snapshot(r, &m, 3600);
	n = iogp_msg_encode(&m, out, BUFSZ);
	printf("SNAPSHOT after 1 h: %ld B\n", n);

	{
		/* 10 minutes of 1 Hz DELTAs, compressed as one zstd stream */
		static uint8_t raw[600 * 512], z[600 * 512];
		size_t rl = 0, zl;

		for (i = 0; i < 600; i++) {
			realistic_delta(r, &m, (uint64_t)i + 1);
			n = iogp_msg_encode(&m, raw + rl, sizeof raw - rl);
			if (n < 0)
				return 1;
			rl += (size_t)n;
		}
		zl = ZSTD_compress(z, sizeof z, raw, rl, 3);
		if (!ZSTD_isError(zl))
			printf("600 DELTAs: %.1f B/msg raw, %.1f B/msg with zstd -3 over the stream\n",
			    (double)rl / 600, (double)zl / 600);
	}

	iters = 0;
	t0 = tu_now();
	do {
		for (i = 0; i < 1024; i++) {
			n = iogp_msg_encode(&pool[i % NPOOL], out, BUFSZ);
			check += (uint64_t)n + out[n / 2];
		}
		iters += 1024;
		t = tu_now();
	} while (t - t0 < secs);
	dt = t - t0;
	printf("encode: %.0f msg/s, %.1f MB/s (payload %.0f B)\n", (double)iters / dt,
	    (double)iters * ((double)total / NPOOL) / dt / 1e6, (double)total / NPOOL);

	iters = 0;
	t0 = tu_now();
	do {
		for (i = 0; i < 1024; i++) {
			int k = i % NPOOL;

			if (iogp_msg_decode(&m, enc[k], len[k], NULL, 0) < 0)
				return 1;
			check += m.hists[m.nhists - 1].bins[0].count;
		}
		iters += 1024;
		t = tu_now();
	} while (t - t0 < secs);
	dt = t - t0;
	printf("decode: %.0f msg/s, %.1f MB/s (payload %.0f B)\n", (double)iters / dt,
	    (double)iters * ((double)total / NPOOL) / dt / 1e6, (double)total / NPOOL);
	printf("(checksum %llu)\n", (unsigned long long)check);

	iogp_msg_free(&m);
	for (i = 0; i < NPOOL; i++)
		iogp_msg_free(&pool[i]);
	realistic_free(r);
	return 0;
}
