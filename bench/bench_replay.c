/* bench_replay.c - replay file write/read throughput, plain and packed, on
 * realistic DELTAs from 16 sources (1 s interval, a keyframe every 10 s). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "iogp.h"
#include "realistic.h"
#include "testutil.h"

#define NSRC 16
#define NSEQ 1000                   /* 16,000 distinct DELTAs, ~4 MB: more than zstd's window */
#define KF_EVERY 10                 /* intervals */

struct msgbuf {
	uint8_t *p;
	size_t len;
};

static struct msgbuf *deltas;       /* [seq * NSRC + src] */
static struct msgbuf snaps[NSRC];
static size_t ndeltas;
static double delta_bytes;

static int keep(struct msgbuf *b, const iogp_msg *m)
{
	long n = iogp_msg_encode(m, NULL, 0);
	if (n < 0 || !(b->p = malloc((size_t)n)) || iogp_msg_encode(m, b->p, (size_t)n) != n)
		return -1;
	b->len = (size_t)n;
	return 0;
}

static int make_messages(void)
{
	iogp_msg m;
	iogp_msg_init(&m);
	deltas = calloc((size_t)NSRC * NSEQ, sizeof *deltas);
	if (!deltas)
		return -1;
	for (int s = 0; s < NSRC; s++) {
		realistic *r = realistic_new(100 + (uint64_t)s);
		if (!r)
			return -1;
		for (int q = 0; q < NSEQ; q++)
			if (keep(&deltas[(size_t)q * NSRC + (size_t)s], (realistic_delta(r, &m, (uint64_t)q + 1), &m)) < 0)
				return -1;
		realistic_snapshot(r, &m, 500);
		m.flags |= IOGP_F_KEYFRAME;
		if (keep(&snaps[s], &m) < 0)
			return -1;
		realistic_free(r);
	}
	ndeltas = (size_t)NSRC * NSEQ;
	for (size_t i = 0; i < ndeltas; i++)
		delta_bytes += (double)deltas[i].len;
	return 0;
}

struct result {
	uint64_t records, payload, file;
	double secs;
};

/* Writes whole passes over the DELTAs until `secs` pass (at least one).
 * flush_every: records between iogp_replay_flush calls (0: never). */
static int write_run(const char *path, int compress, int level, int flush_every,
                     int keyframes, double secs, struct result *res)
{
	iogp_replay_writer *w;
	char err[256];
	iogp_replay_wopts o = { .replace = 1, .creator = "bench_replay", .compress = compress,
	                        .zstd_level = level };
	if (iogp_replay_create(&w, path, &o, err, sizeof err) < 0) {
		fprintf(stderr, "bench_replay: %s\n", err);
		return -1;
	}
	uint64_t t_ns = 1700000000000000000ull, rec = 0;
	double t0 = tu_now(), t;
	int rc = 0;
	do {
		for (size_t i = 0; i < ndeltas && rc >= 0; i++) {
			if (i % NSRC == 0) {
				t_ns += 1000000000u;
				if (keyframes && (i / NSRC) % KF_EVERY == 0) {
					rc = iogp_replay_keyframe_begin(w, t_ns);
					for (int s = 0; s < NSRC && rc >= 0; s++, rec++)
						rc = iogp_replay_write(w, t_ns, snaps[s].p, snaps[s].len);
					if (rc >= 0)
						rc = iogp_replay_keyframe_end(w);
				}
			}
			if (rc >= 0)
				rc = iogp_replay_write(w, t_ns + i % NSRC * 1000, deltas[i].p, deltas[i].len);
			rec++;
			if (rc >= 0 && flush_every && rec % (uint64_t)flush_every == 0)
				rc = iogp_replay_flush(w);
		}
		t = tu_now();
	} while (rc >= 0 && t - t0 < secs);
	iogp_replay_wstats st;
	iogp_replay_writer_stats(w, &st);
	if (rc < 0 || (rc = iogp_replay_close(w)) < 0) {
		fprintf(stderr, "bench_replay: write: %s\n", iogp_strerror(rc));
		return -1;
	}
	res->secs = tu_now() - t0;
	res->records = st.records;
	res->payload = st.payload_bytes;
	res->file = st.file_bytes;
	return 0;
}

static int read_run(const char *path, struct result *res, uint64_t *check)
{
	iogp_replay_reader *r;
	char err[256];
	double t0 = tu_now();
	if (iogp_replay_open(&r, path, err, sizeof err) < 0) {
		fprintf(stderr, "bench_replay: %s\n", err);
		return -1;
	}
	iogp_replay_rec rec;
	int rc;
	memset(res, 0, sizeof *res);
	while ((rc = iogp_replay_next(r, &rec)) == 0) {
		res->records++;
		res->payload += rec.len;
		*check += rec.len ? rec.payload[rec.len / 2] : 0;
	}
	iogp_replay_info info;
	iogp_replay_get_info(r, &info);
	iogp_replay_rstats st;
	iogp_replay_reader_stats(r, &st);
	iogp_replay_close_reader(r);
	res->secs = tu_now() - t0;
	res->file = info.file_bytes;
	if (rc != IOGP_EEOF || st.bad_frames || st.skipped_bytes) {
		fprintf(stderr, "bench_replay: read: %s, %llu bad frames\n", iogp_strerror(rc),
		        (unsigned long long)st.bad_frames);
		return -1;
	}
	return 0;
}

static void print(const char *what, const char *mode, const struct result *r)
{
	printf("%-5s %-22s %9.0f rec/s  %7.1f MB/s payload  %7.1f MB/s file  "
	       "(%llu records, %.2f s)\n", what, mode, (double)r->records / r->secs,
	       (double)r->payload / r->secs / 1e6, (double)r->file / r->secs / 1e6,
	       (unsigned long long)r->records, r->secs);
}

int main(int argc, char **argv)
{
	double secs = 0.5;
	if (argc == 3 && !strcmp(argv[1], "--seconds"))
		secs = atof(argv[2]);
	else if (argc != 1) {
		fprintf(stderr, "usage: bench_replay [--seconds S]\n");
		return 2;
	}
	if (make_messages() < 0) {
		fprintf(stderr, "bench_replay: cannot make messages\n");
		return 1;
	}
	const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char path[4096];
	snprintf(path, sizeof path, "%s/bench_replay.XXXXXX", dir);
	int fd = mkstemp(path);
	if (fd < 0) {
		fprintf(stderr, "bench_replay: %s: %s\n", path, strerror(errno));
		return 1;
	}
	close(fd);

	double snap_bytes = 0;
	for (int s = 0; s < NSRC; s++)
		snap_bytes += (double)snaps[s].len;
	printf("records: realistic DELTAs, %d sources x 1 s, mean %.0f B; a keyframe of %d "
	       "SNAPSHOTs (mean %.0f B) every %d s\n", NSRC, delta_bytes / (double)ndeltas,
	       NSRC, snap_bytes / NSRC, KF_EVERY);

	static const struct {
		const char *name;
		int compress, level, flush_every;
	} modes[] = {
		{ "plain", 0, 0, 0 },
		{ "packs (64 KiB)", 1, 0, 0 },
		{ "packs, flush each 1 s", 1, 0, NSRC },
		{ "packs, zstd -9", 1, 9, 0 },
	};
	uint64_t check = 0;
	int rc = 0;
	for (size_t i = 0; i < sizeof modes / sizeof modes[0] && !rc; i++) {
		struct result w, r, once, bare;
		int c = modes[i].compress, l = modes[i].level, f = modes[i].flush_every;
		/* one pass of distinct records for the size figures */
		if (write_run(path, c, l, f, 0, 0, &bare) < 0 ||
		    write_run(path, c, l, f, 1, 0, &once) < 0 ||
		    write_run(path, c, l, f, 1, secs, &w) < 0 ||
		    read_run(path, &r, &check) < 0 || r.records != w.records) {
			rc = 1;
			break;
		}
		print("write", modes[i].name, &w);
		print("read", modes[i].name, &r);
		printf("size  %-22s DELTAs alone: %.1f B/record on disk (ratio %.2fx); with "
		       "keyframes: %.0f B per source-second (ratio %.2fx)\n", modes[i].name,
		       (double)bare.file / (double)bare.records,
		       (double)bare.payload / (double)bare.file,
		       (double)once.file / ((double)NSEQ * NSRC),
		       (double)once.payload / (double)once.file);
	}
	printf("(checksum %llu; machine has %ld cores, single-threaded)\n",
	       (unsigned long long)check, sysconf(_SC_NPROCESSORS_ONLN));
	unlink(path);
	for (size_t i = 0; i < ndeltas; i++)
		free(deltas[i].p);
	free(deltas);
	for (int s = 0; s < NSRC; s++)
		free(snaps[s].p);
	return rc;
}
