/* bench_disk.c - bytes per source-second on disk at 1 Hz, busy and idle,
 * through the recorder (keyframes included), packed and plain; what the
 * keyframes cost and how many records a seek reads at most. Environment:
 * LEVEL (zstd level), KF_RATIO (recorder kf_ratio), REAL_ONLY (only the
 * real sources below).
 * Then real sources (issue 16), when IOGRAM_RUN, IOGRAM_BIN and
 * IOGRAM_PROGS are set (meson does): each demo worker, fio psync random
 * and sequential 4 KiB reads (when fio is installed) and a small-files job,
 * under the real interposer at the default interval for REAL_S seconds
 * (default 40), streamed to `iogram record`; bytes per source-second on
 * disk, the busiest source's alone, and what each section costs (the file
 * recorded again without it; the final SNAPSHOT's names and file records,
 * every file's totals, are a floor a short run with many files pays). */
#include <inttypes.h>
#include <signal.h>
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

/* ---- real sources ------------------------------------------------------------ */

enum { V_FULL, V_ACCESS, V_FILES, V_FRECS, V_HISTS, V_SNAPS, V_FINAL, V_BUSY, V_N };
static const char *const vname[V_N] = { "all", "access samples", "file names", "per-file records",
                                        "histograms + exact sizes", "periodic SNAPSHOTs",
                                        "the final SNAPSHOT's files", "busiest" };

/* Record path again per variant (one section stripped, or only the
 * busiest source), flushing every second as `iogram record` does. */
static void sections(const char *path, const char *dir)
{
	iogp_replay_reader *rd;
	char err[256] = "";
	if (iogp_replay_open(&rd, path, err, sizeof(err)) < 0) {
		printf("    (cannot read %s: %s)\n", path, err);
		return;
	}
	iogp_msg m;
	iogp_msg_init(&m);
	iogp_replay_rec x;
	/* pass 1: sources, their spans and payload bytes */
	enum { MAXS = 64 };
	uint64_t id[MAXS], b[MAXS], t0[MAXS], t1[MAXS];
	int ns = 0;
	for (int guard = 0; guard < 10000000 && iogp_replay_next(rd, &x) == 0; guard++) {
		if (x.keyframe || iogp_msg_decode(&m, x.payload, x.len, NULL, 0) < 0)
			continue;
		int k;
		for (k = 0; k < ns && id[k] != m.source; k++)
			;
		if (k == ns) {
			if (ns == MAXS)
				continue;
			id[ns] = m.source, b[ns] = 0, t0[ns] = x.recv_ns;
			ns++;
		}
		b[k] += x.len;
		t1[k] = x.recv_ns;
	}
	if (ns == 0) {
		printf("    (no sources)\n");
		iogp_replay_close_reader(rd);
		iogp_msg_free(&m);
		return;
	}
	int busy = 0;
	double ss = 0;
	for (int k = 0; k < ns; k++) {
		ss += (double)(t1[k] - t0[k]) / 1e9 + 1;
		if (b[k] > b[busy])
			busy = k;
	}
	iogp_recorder *rec[V_N];
	char vp[V_N][300];
	for (int v = 0; v < V_N; v++) {
		snprintf(vp[v], sizeof(vp[v]), "%s/v%d.iogr", dir, v);
		iogp_recorder_opts o = { .creator = "bench_disk", .replace = 1 };
		if (iogp_recorder_open(&rec[v], vp[v], &o, err, sizeof(err)) < 0) {
			fprintf(stderr, "bench_disk: %s\n", err);
			exit(1);
		}
	}
	iogp_replay_rewind(rd);
	uint64_t last_flush = 0, nd = 0, nacc = 0, nfiles = 0, nfr = 0;
	for (int guard = 0; guard < 10000000 && iogp_replay_next(rd, &x) == 0; guard++) {
		if (x.keyframe || iogp_msg_decode(&m, x.payload, x.len, NULL, 0) < 0)
			continue;
		if (m.kind == IOGP_DELTA) {
			nd++;
			nacc += m.naccess;
			nfiles += m.nfiles;
			nfr += m.nfilerecs;
		}
		for (int v = 0; v < V_N; v++) {
			iogp_msg c = m;
			switch (v) {
			case V_ACCESS: c.naccess = 0; c.access_seen = 0; break;
			case V_FILES: c.nfiles = 0; break;
			case V_FRECS: c.nfilerecs = 0; break;
			case V_HISTS: c.nhists = 0; c.nexact = 0; break;
			case V_SNAPS:
				if (m.kind == IOGP_SNAPSHOT && !(m.flags & IOGP_F_FINAL))
					continue;
				break;
			case V_FINAL:   /* every file's name and totals: a floor a short run pays */
				if (m.kind == IOGP_SNAPSHOT && (m.flags & IOGP_F_FINAL))
					c.nfiles = c.nfilerecs = 0;
				break;
			case V_BUSY:
				if (m.source != id[busy])
					continue;
				break;
			}
			iogp_recorder_add_msg(rec[v], &c, x.recv_ns);
		}
		if (x.recv_ns - last_flush >= 1000000000ull) {
			for (int v = 0; v < V_N; v++)
				iogp_recorder_flush(rec[v]);
			last_flush = x.recv_ns;
		}
	}
	off_t sz[V_N];
	for (int v = 0; v < V_N; v++) {
		struct stat sb;
		iogp_recorder_close(rec[v]);
		sz[v] = stat(vp[v], &sb) == 0 ? sb.st_size : 0;
		unlink(vp[v]);
	}
	struct stat sb;
	stat(path, &sb);
	double bs = (double)(t1[busy] - t0[busy]) / 1e9 + 1;
	printf("    %d source%s, %.0f source-s: %.1f B/source-s; busiest source %.1f B/s; per DELTA "
	       "%.1f samples, %.1f names, %.1f file records\n", ns, ns == 1 ? "" : "s", ss,
	       (double)sb.st_size / ss, (double)sz[V_BUSY] / bs, nd ? (double)nacc / nd : 0.0,
	       nd ? (double)nfiles / nd : 0.0, nd ? (double)nfr / nd : 0.0);
	printf("    sections, B/source-s:");
	for (int v = V_ACCESS; v <= V_FINAL; v++)
		printf("%s %s %.1f", v == V_ACCESS ? "" : ",", vname[v], (double)(sz[V_FULL] - sz[v]) / ss);
	printf("\n");
	iogp_replay_close_reader(rd);
	iogp_msg_free(&m);
}

/* name: argv under iogram-run, for secs seconds then SIGTERM (term), or
 * until it ends (at most secs), streamed to `iogram record`; then its
 * figures. */
static void real_one(const char *name, char *const *cmd, int secs, int term, const char *dir)
{
	int port = tu_free_port();
	char path[300];
	snprintf(path, sizeof(path), "%s/real.iogr", dir);   /* name may hold a '/' */
	unlink(path);
	char *rargv[] = { (char *)getenv("IOGRAM_BIN"), "record", "--quiet", "--listen", tu_ep(port),
	                  "-o", path, NULL };
	pid_t rp = tu_spawn(rargv, NULL, NULL, 0);
	if (rp <= 0 || !tu_wait_port(port, 30)) {
		printf("%-28s (recorder did not start)\n", name);
		if (rp > 0)
			tu_stop(rp, SIGKILL, 10);
		return;
	}
	char *argv[32];
	int n = 0;
	argv[n++] = (char *)getenv("IOGRAM_RUN");
	argv[n++] = "--";
	for (int i = 0; cmd[i] && n < 31; i++)
		argv[n++] = cmd[i];
	argv[n] = NULL;
	const char *env[] = { tu_fmt("IOGRAM_ENDPOINT=%s", tu_ep(port)), "IOGRAM_INTERVAL_MS",
	                      "IOGRAM_OUTPUT", "IOGRAM_EXIT_WAIT_MS=1000", NULL };
	tu_opts o = { .env = env, .null_in = 1 };
	pid_t p = tu_spawn_opt(argv, &o);
	if (p > 0 && term) {
		/* the demo workers run until SIGTERM, then stop cleanly */
		tu_sleep_ms((long)secs * 1000);
		tu_stop(p, SIGTERM, 30);
	} else if (p > 0) {
		tu_wait(p, secs);
	}
	tu_sleep_ms(1500);
	tu_stop(rp, SIGINT, 60);
	printf("%s:\n", name);
	sections(path, dir);
	unlink(path);
}

static void real_sources(void)
{
	const char *run = getenv("IOGRAM_RUN"), *bin = getenv("IOGRAM_BIN");
	const char *progs = getenv("IOGRAM_PROGS"), *work = getenv("IOGRAM_DEMO_WORK");
	if (!run || !bin || !progs) {
		printf("real sources: IOGRAM_RUN, IOGRAM_BIN, IOGRAM_PROGS not set, skipped\n");
		return;
	}
	int secs = getenv("REAL_S") ? atoi(getenv("REAL_S")) : 40;
	if (secs < 5)
		secs = 5;
	char dir[256];
	tu_tmpdir(dir, sizeof(dir), "iogram-bench-disk-real");
	char data[300];   /* not tu_fmt's: its buffers are reused */
	snprintf(data, sizeof(data), "%s/data", dir);
	mkdir(data, 0700);
	printf("\nreal sources under the interposer, default interval, %d s each "
	       "(target: a busy source <= 400 B/s)\n", secs);
	static const char *const pat[] = { "seqwrite", "randread", "smallfiles", "bursts", "aio" };
	for (int i = 0; work && i < 5; i++) {
		char *cmd[] = { (char *)work, (char *)pat[i], data, NULL };
		real_one(tu_fmt("demo worker %s", pat[i]), cmd, secs, 1, dir);
		tu_rmdir_all(data);
		mkdir(data, 0700);
	}
	if (tu_system("command -v fio >/dev/null 2>&1") == 0) {
		static const char *const rw[] = { "randread", "read" };
		for (int i = 0; i < 2; i++) {
			char *cmd[] = { "fio", "--name=j", tu_fmt("--directory=%s", data), "--ioengine=psync",
			                tu_fmt("--rw=%s", rw[i]), "--bs=4k", "--size=64m", "--time_based",
			                tu_fmt("--runtime=%d", secs - 2), "--output=/dev/null", NULL };
			real_one(tu_fmt("fio psync 4k %s", rw[i]), cmd, secs + 30, 0, dir);
			tu_rmdir_all(data);
			mkdir(data, 0700);
		}
	} else {
		printf("fio: not installed, skipped\n");
	}
	/* 200 new files a second, each written and read back once */
	char *cmd[] = { tu_fmt("%s/prog_small_files", progs), data, "200", tu_fmt("%d", secs - 3),
	                "1000", "3901", NULL };
	real_one("small-files job (200 files/s)", cmd, secs + 30, 0, dir);
	char *cmd2[] = { tu_fmt("%s/prog_small_files", progs), data, "20", tu_fmt("%d", secs - 3),
	                 "1000", "3901", NULL };
	tu_rmdir_all(data);
	mkdir(data, 0700);
	real_one("small-files job (20 files/s)", cmd2, secs + 30, 0, dir);
	tu_rmdir_all(dir);
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
	if (getenv("REAL_ONLY") != NULL) {   /* the real sources alone */
		tu_rmdir_all(dir);
		real_sources();
		return 0;
	}
	for (int i = 0; i < NSC; i++)
		v[i] = run(&sc[i], path, &bytes);
	tu_rmdir_all(dir);
	printf("targets: busy <= 120 B/source-s (%s), idle <= 16 B/source-s (%s)\n",
	       v[0] <= 120 ? "met" : "MISSED", v[5] <= 16 ? "met" : "MISSED");
	real_sources();
	return 0;
}
