/* bench_disk.c - bytes per source-second on disk at 1 Hz, busy and idle,
 * through the recorder (keyframes included), packed and plain; what the
 * keyframes cost and how many records a seek reads at most. Environment:
 * LEVEL (zstd level), KF_RATIO (recorder kf_ratio). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "iogp.h"
#include "realistic.h"
#include "testutil.h"

#define SEC 1000000000ull
#define T0 1790000000000000000ull

typedef struct scenario {
	const char *name;
	int sources, seconds, snapshot_every, idle, plain, access;
} scenario;

/* Keyframe accounting from the recorder's stats after every add. */
struct kfacct {
	uint64_t seen, bytes, begin, span_max;
};

static void add(iogp_recorder *r, const iogp_msg *m, uint64_t t, struct kfacct *k)
{
	iogp_recorder_stats st;
	iogp_recorder_get_stats(r, &st);
	uint64_t before = st.file.records;
	iogp_recorder_add_msg(r, m, t);
	iogp_recorder_get_stats(r, &st);
	if (st.keyframes == k->seen)
		return;
	/* a keyframe began right after this record: a seek to just before the
	 * next one reads everything from here to there */
	k->seen = st.keyframes;
	k->bytes += st.file.last_keyframe_bytes;
	if (k->begin && before + 1 - k->begin > k->span_max)
		k->span_max = before + 1 - k->begin;
	k->begin = before + 1;
}

static double run(const scenario *sc, const char *path, uint64_t *bytes_out)
{
	iogp_recorder *r;
	char err[256];
	iogp_recorder_opts ro = { .creator = "bench_disk", .plain = sc->plain, .replace = 1,
	                          .zstd_level = getenv("LEVEL") ? atoi(getenv("LEVEL")) : 0,
	                          .kf_ratio = getenv("KF_RATIO") ? (uint32_t)atoi(getenv("KF_RATIO")) : 0 };
	struct kfacct k = { 0 };
	if (iogp_recorder_open(&r, path, &ro, err, sizeof(err)) < 0) {
		fprintf(stderr, "bench_disk: %s\n", err);
		exit(1);
	}
	realistic **src = calloc((size_t)sc->sources, sizeof(*src));
	iogp_msg m;
	iogp_msg_init(&m);
	for (int i = 0; i < sc->sources; i++) {
		src[i] = realistic_new(1000 + (uint64_t)i);
		realistic_set_access(src[i], (uint32_t)sc->access);
		realistic_hello(src[i], &m);
		add(r, &m, T0, &k);
		if (sc->idle) {
			realistic_snapshot(src[i], &m, 1);
			add(r, &m, T0, &k);
		}
	}
	for (int t = 1; t <= sc->seconds; t++) {
		uint64_t now = T0 + (uint64_t)t * SEC;
		for (int i = 0; i < sc->sources; i++) {
			if (sc->idle) {
				if (t % 10)
					continue;   /* an idle agent sends a heartbeat every 10 s */
				iogp_msg hb = { .kind = IOGP_DELTA, .source = realistic_source(src[i]),
				                .seq = 1 + (uint64_t)t / 10,
				                .t0_ns = (uint64_t)(t - 10) * SEC, .t1_ns = (uint64_t)t * SEC,
				                .wall_ns = now };
				add(r, &hb, now + (uint64_t)i * 1000, &k);
				continue;
			}
			uint64_t seq = (uint64_t)t + (uint64_t)(sc->snapshot_every ? t / sc->snapshot_every : 0);
			realistic_delta(src[i], &m, seq);
			add(r, &m, now + (uint64_t)i * 1000, &k);
			if (sc->snapshot_every && t % sc->snapshot_every == 0) {
				realistic_snapshot(src[i], &m, seq + 1);
				add(r, &m, now + (uint64_t)i * 1000 + 500, &k);
			}
		}
		iogp_recorder_flush(r);   /* what `iogram record` does every interval */
	}
	iogp_recorder_stats st;
	iogp_recorder_get_stats(r, &st);
	if (k.begin && st.file.records + 1 - k.begin > k.span_max)
		k.span_max = st.file.records + 1 - k.begin;
	if (iogp_recorder_close(r) < 0) {
		fprintf(stderr, "bench_disk: close failed\n");
		exit(1);
	}
	struct stat sb;
	stat(path, &sb);
	*bytes_out = (uint64_t)sb.st_size;
	for (int i = 0; i < sc->sources; i++)
		realistic_free(src[i]);
	free(src);
	iogp_msg_free(&m);
	printf("%-44s %7.1f B/source-s  (file %llu B, payload %.1f B/source-s)\n",
	       sc->name, (double)sb.st_size / ((double)sc->sources * sc->seconds),
	       (unsigned long long)sb.st_size,
	       (double)st.file.payload_bytes / ((double)sc->sources * sc->seconds));
	printf("%-44s %7.1f%% keyframes: %llu, one per %.0f s; a seek reads <= %llu records\n",
	       "", 100.0 * (double)k.bytes / (double)sb.st_size, (unsigned long long)st.keyframes,
	       st.keyframes ? sc->seconds / (double)st.keyframes : 0.0,
	       (unsigned long long)k.span_max);
	return (double)sb.st_size / ((double)sc->sources * sc->seconds);
}

int main(void)
{
	char dir[256];
	tu_tmpdir(dir, sizeof(dir), "iogram-bench-disk");
	char path[300];
	snprintf(path, sizeof(path), "%s/b.iogr", dir);
	static const scenario sc[] = {
		{ "busy, 64 sources, deltas only, packed", 64, 600, 0, 0, 0, 0 },
		{ "busy, 64 sources, + SNAPSHOT every 10 s", 64, 600, 10, 0, 0, 0 },
		{ "busy, 64 sources, + SNAPSHOT every 60 s", 64, 600, 60, 0, 0, 0 },
		{ "busy, 1 source, deltas only, packed", 1, 3600, 0, 0, 0, 0 },
		{ "busy, 64 sources, deltas only, plain", 64, 600, 0, 0, 1, 0 },
		{ "idle, 64 sources, heartbeat every 10 s", 64, 3600, 0, 1, 0, 0 },
		{ "idle, 1 source, heartbeat every 10 s", 1, 3600, 0, 1, 0, 0 },
		{ "busy, 64 sources, + 16 access samples", 64, 600, 0, 0, 0, 16 },
	};
	enum { NSC = sizeof sc / sizeof sc[0] };
	double v[NSC];
	uint64_t bytes;
	for (int i = 0; i < NSC; i++)
		v[i] = run(&sc[i], path, &bytes);
	tu_rmdir_all(dir);
	printf("targets: busy <= 120 B/source-s (%s), idle <= 16 B/source-s (%s)\n",
	       v[0] <= 120 ? "met" : "MISSED", v[5] <= 16 ? "met" : "MISSED");
	return 0;
}
