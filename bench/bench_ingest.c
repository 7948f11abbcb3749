/* bench_ingest.c - the recorder's ingest (issue 16): realistic DELTAs per
 * second one core takes, in process (iogp_recorder_add over pre-encoded
 * DELTAs) and through `iogram record` on tcp loopback at offered rates from
 * 100k/s to beyond what it takes: written against offered, the recorder's
 * RSS over time, its CPU (main thread and all), and the losses it reports.
 *
 *   bench_ingest                core, then live at 100k..600k/s
 *   bench_ingest core [N]       in process only, N DELTAs (default 2 M)
 *   bench_ingest live RATE...   through `iogram record` at these rates
 *   bench_ingest profile [N]    the in-process run alone (for perf record)
 * Environment: LEVEL (zstd level of the in-process run; default the
 * recorder's).
 *
 * The mix (per DELTA, 1000 sources at 20 Hz each): 10 counters, 6 native
 * histograms of ~10 bins, exact values for both size histograms (3 each),
 * 2 per-file records and 8 access samples: 427 B on average, like the
 * interposer's DELTAs of a busy process (loadgen --fast's are 254 B:
 * counters and histograms only). Each source cycles over 8 different DELTAs, so the
 * replay file's prediction does real work. */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "iogp.h"
#include "iogp_sys.h"
#include "realistic.h"
#include "testutil.h"

#define NSRC 1000
#define NVAR 8          /* different DELTAs per source */
#define NACCESS 8
#define NSOCK 8         /* agents' connections */

typedef struct tmpl {
	uint8_t *b;         /* a DELTA with its seq varint cut out */
	size_t n;
} tmpl;

static struct src {
	uint64_t id, seq;
	uint8_t *hello;
	size_t hello_n;
	tmpl v[NVAR];
} *srcs;
static size_t mix_bytes, mix_n;

static uint32_t metric_id(const iogp_msg *hello, const char *name)
{
	for (uint32_t i = 0; i < hello->nmetrics; i++)
		if (!strcmp(hello->metrics[i].name, name))
			return hello->metrics[i].id;
	return 0;
}

static uint8_t *dup_msg(const iogp_msg *m, size_t *n)
{
	long len = iogp_msg_encode(m, NULL, 0);
	uint8_t *b = len > 0 ? malloc((size_t)len) : NULL;
	if (!b || iogp_msg_encode(m, b, (size_t)len) != len) {
		fprintf(stderr, "bench_ingest: cannot encode a message\n");
		exit(1);
	}
	*n = (size_t)len;
	return b;
}

/* Each source's HELLO and NVAR DELTAs of the mix above. */
static void make_mix(void)
{
	srcs = calloc(NSRC, sizeof(*srcs));
	iogp_msg m;
	iogp_msg_init(&m);
	for (int i = 0; i < NSRC; i++) {
		realistic *r = realistic_new(1000 + (uint64_t)i);
		struct src *s = &srcs[i];
		realistic_set_interval(r, 50000000ull);
		realistic_set_access(r, NACCESS);
		realistic_hello(r, &m);
		s->id = realistic_source(r);
		s->hello = dup_msg(&m, &s->hello_n);
		uint32_t rs = metric_id(&m, "posix.read.size"), ws = metric_id(&m, "posix.write.size");
		for (int k = 0; k < NVAR; k++) {
			realistic_delta(r, &m, (uint64_t)k + 2);   /* 2..: no file table */
			iogp_exact ev[2][3] = {
				{ { 4096, 40 + k }, { 65536, 7 }, { 131072, 3 + k } },
				{ { 8192, 20 + k }, { 262144, 2 }, { 1048576, 1 } },
			};
			iogp_exact_val ex[2] = { { rs, 3, ev[0] }, { ws, 3, ev[1] } };
			iogp_filerec fr[2];
			memset(fr, 0, sizeof(fr));
			for (int f = 0; f < 2; f++) {
				fr[f].file = (uint64_t)f + 1;
				fr[f].op[0] = (iogp_filerec_op){ .ops = 100 + (uint64_t)k, .bytes = 409600 + 4096 * (uint64_t)k,
				                                 .time_ns = 2000000, .consec = 90, .seq = 5,
				                                 .random = 5 + (uint64_t)k, .max_req = 65536,
				                                 .first_ns = m.t0_ns + 1000, .last_ns = m.t1_ns - 1000 };
				fr[f].op[1] = (iogp_filerec_op){ .ops = 10, .bytes = 81920, .time_ns = 900000, .consec = 10,
				                                 .max_req = 8192, .first_ns = m.t0_ns + 5000,
				                                 .last_ns = m.t1_ns - 5000 };
				fr[f].meta_ops = 2;
				fr[f].meta_ns = 30000;
			}
			m.nexact = rs < ws ? 2 : 0;
			m.exact = ex;
			m.nfilerecs = 2;
			m.filerecs = fr;
			m.seq = 1;                                     /* a one-byte varint, cut out */
			size_t n;
			uint8_t *b = dup_msg(&m, &n);
			memmove(b + IOGP_WIRE_HEADER_MIN - 1, b + IOGP_WIRE_HEADER_MIN, n - IOGP_WIRE_HEADER_MIN);
			s->v[k] = (tmpl){ b, n - 1 };
			mix_bytes += n;
			mix_n++;
		}
		realistic_free(r);
	}
	iogp_msg_free(&m);
}

/* Source i's next DELTA into buf; its length. */
static size_t next_delta(int i, uint8_t *buf)
{
	struct src *s = &srcs[i];
	tmpl *t = &s->v[s->seq % NVAR];
	size_t h = IOGP_WIRE_HEADER_MIN - 1;
	memcpy(buf, t->b, h);
	size_t n = h + iogp_varint_put(buf + h, ++s->seq);
	memcpy(buf + n, t->b + h, t->n - h);
	return n + t->n - h;
}

static void reset_seqs(void)
{
	for (int i = 0; i < NSRC; i++)
		srcs[i].seq = 0;
}

static double thread_cpu(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- in process: the recorder alone ---- */

static void core(long n)
{
	char dir[256], file[300];
	tu_tmpdir(dir, sizeof(dir), "iogram-bench-ingest");
	snprintf(file, sizeof(file), "%s/core.iogr", dir);
	iogp_recorder *r;
	char err[256];
	iogp_recorder_opts o = { .creator = "bench_ingest" };
	if (getenv("LEVEL"))
		o.zstd_level = atoi(getenv("LEVEL"));
	if (iogp_recorder_open(&r, file, &o, err, sizeof(err)) < 0) {
		fprintf(stderr, "bench_ingest: %s\n", err);
		exit(1);
	}
	reset_seqs();
	/* BENCH_INGEST_KEEP=path: keep the file there, its times fixed, so two
	 * builds' files can be compared byte for byte */
	const char *keep = getenv("BENCH_INGEST_KEEP");
	uint64_t now = keep ? 1790000000000000000ull : iogp_wall_ns();
	for (int i = 0; i < NSRC; i++)
		iogp_recorder_add(r, srcs[i].hello, srcs[i].hello_n, now);
	static uint8_t buf[1 << 16];
	double t0 = tu_now(), c0 = thread_cpu();
	long bad = 0;
	/* receive times advance as at the offered rate of 300k/s */
	for (long k = 0; k < n; k++) {
		size_t len = next_delta((int)(k % NSRC), buf);
		if (iogp_recorder_add(r, buf, len, now + (uint64_t)k * 3333u) < 0)
			bad++;
	}
	double cpu = thread_cpu() - c0, wall = tu_now() - t0;
	iogp_recorder_stats st;
	iogp_recorder_get_stats(r, &st);
	iogp_recorder_close(r);
	struct stat sb;
	stat(file, &sb);
	printf("core: %ld DELTAs of %.0f B (mix above) from %d sources: %.0f DELTAs/s on one core "
	       "(%.2f us each on CPU; wall %.0f/s), refused %ld, keyframes %" PRIu64 ", file %.1f B per DELTA\n",
	       n, (double)mix_bytes / (double)mix_n, NSRC, (double)n / cpu, cpu * 1e6 / (double)n,
	       (double)n / wall, bad, st.keyframes, (double)sb.st_size / (double)n);
	if (keep && rename(file, keep) < 0)
		perror(keep);
	unlink(file);
	rmdir(dir);
}

/* Where the time goes: decode alone, the model alone, the writer alone. */
static void parts(long n)
{
	char dir[256], file[300], err[256];
	tu_tmpdir(dir, sizeof(dir), "iogram-bench-ingest");
	snprintf(file, sizeof(file), "%s/parts.iogr", dir);
	static uint8_t buf[1 << 16];
	iogp_msg m;
	iogp_msg_init(&m);
	iogp_model *model = iogp_model_new(NULL);
	iogp_replay_writer *w;
	iogp_replay_create(&w, file, &(iogp_replay_wopts){ .compress = 1 }, err, sizeof(err));
	uint64_t now = iogp_wall_ns();
	for (int i = 0; i < NSRC; i++)
		iogp_model_feed(model, srcs[i].hello, srcs[i].hello_n, now);
	double t[3] = { 0, 0, 0 };
	for (int part = 0; part < 3; part++) {
		reset_seqs();
		double c0 = thread_cpu();
		for (long k = 0; k < n; k++) {
			size_t len = next_delta((int)(k % NSRC), buf);
			if (part == 0)
				iogp_msg_decode(&m, buf, len, NULL, 0);
			else if (part == 1)
				iogp_model_feed(model, buf, len, now + (uint64_t)k * 3333u);
			else
				iogp_replay_write(w, now + (uint64_t)k * 3333u, buf, len);
		}
		t[part] = (thread_cpu() - c0) * 1e6 / (double)n;
	}
	printf("parts: decode %.2f us, model feed (decode + apply) %.2f us, replay write %.2f us per DELTA\n",
	       t[0], t[1], t[2]);
	iogp_replay_close(w);
	iogp_model_free(model);
	iogp_msg_free(&m);
	unlink(file);
	rmdir(dir);
}

/* ---- through `iogram record` ---- */

/* ns on CPU of the recorder's main thread (schedstat: finer than ticks) */
static double main_thread_cpu(pid_t pid)
{
	FILE *f = fopen(tu_fmt("/proc/%d/task/%d/schedstat", (int)pid, (int)pid), "r");
	unsigned long long ns = 0;
	if (f) {
		if (fscanf(f, "%llu", &ns) != 1)
			ns = 0;
		fclose(f);
	}
	return (double)ns * 1e-9;
}

static void live(const char *bin, double rate, double secs)
{
	char dir[256], file[300], errf[300];
	tu_tmpdir(dir, sizeof(dir), "iogram-bench-ingest");
	snprintf(file, sizeof(file), "%s/live.iogr", dir);
	snprintf(errf, sizeof(errf), "%s/record.err", dir);
	int port = tu_free_port();
	char ep[64];
	snprintf(ep, sizeof(ep), "%s", tu_ep(port));
	pid_t rec = tu_spawn_opt((char *const[]){ (char *)bin, "record", "--listen", ep, "-o", file, NULL },
	                         &(tu_opts){ .err = errf });
	tu_wait_port(port, 5);
	void *ctx = zmq_ctx_new();
	void *socks[NSOCK];
	int hwm = 1000000;   /* the sender never drops: what is lost is lost by the recorder */
	for (int i = 0; i < NSOCK; i++) {
		socks[i] = zmq_socket(ctx, ZMQ_PUB);
		zmq_setsockopt(socks[i], ZMQ_SNDHWM, &hwm, sizeof(hwm));
		zmq_connect(socks[i], ep);
	}
	tu_sleep_ms(500);    /* subscriptions arrive */
	reset_seqs();
	char topic[64];
	for (int i = 0; i < NSRC; i++) {
		int tl = iogp_topic(topic, sizeof(topic), IOGP_HELLO, srcs[i].id);
		zmq_send(socks[i % NSOCK], topic, (size_t)tl, ZMQ_SNDMORE);
		zmq_send(socks[i % NSOCK], srcs[i].hello, srcs[i].hello_n, 0);
	}
	tu_sleep_ms(200);
	static uint8_t buf[1 << 16];
	long total = (long)(rate * secs), sent = 0;
	long rss_max = 0, rss[64];
	int nrss = 0;
	double c0 = main_thread_cpu(rec), a0 = tu_cpu_s(rec), t0 = tu_now(), next_rss = t0;
	while (sent < total) {
		double now = tu_now();
		long due = (long)((now - t0) * rate);
		if (due > total)
			due = total;
		while (sent < due) {
			int i = (int)(sent % NSRC);
			size_t n = next_delta(i, buf);
			int tl = iogp_topic(topic, sizeof(topic), IOGP_DELTA, srcs[i].id);
			zmq_send(socks[i % NSOCK], topic, (size_t)tl, ZMQ_SNDMORE);
			zmq_send(socks[i % NSOCK], buf, n, 0);
			sent++;
		}
		if (now >= next_rss) {
			long k = tu_rss_kib(rec);
			if (nrss < 64)
				rss[nrss++] = k;
			if (k > rss_max)
				rss_max = k;
			next_rss += 0.5;
		}
		if (sent < total)
			usleep(200);
	}
	double send_s = tu_now() - t0;
	/* let it drain what is queued (bounded), then stop it cleanly */
	double last = -1, idle_since = tu_now();
	while (tu_now() - idle_since < 1.5 && tu_now() - t0 < secs + 60) {
		double c = main_thread_cpu(rec);
		long k = tu_rss_kib(rec);
		if (k > rss_max)
			rss_max = k;
		if (c - last > 0.02)
			idle_since = tu_now();
		last = c;
		tu_sleep_ms(250);
	}
	double busy_s = idle_since - t0;
	double c1 = main_thread_cpu(rec), a1 = tu_cpu_s(rec);
	tu_stop(rec, SIGINT, 30);
	for (int i = 0; i < NSOCK; i++)
		zmq_close(socks[i]);
	zmq_ctx_term(ctx);
	iogp_model *m = iogp_model_new(&(iogp_model_opts){ .max_sources = 100000 });
	iogp_load_stats ls;
	char err[256];
	memset(&ls, 0, sizeof(ls));
	iogp_load_file(file, m, &ls, err, sizeof(err));
	iogp_model_stats ms;
	iogp_model_get_stats(m, &ms);
	uint64_t written = ls.by_kind[IOGP_DELTA];
	const char *said = tu_slurp(errf);
	const char *line = strstr(said, "iogram: recorded");
	printf("live %6.0f/s offered for %.1f s (sent in %.1f s): written %" PRIu64 " of %ld DELTAs (%.1f%%), "
	       "gaps in the file %" PRIu64 "; %.0f DELTAs/s over %.1f s busy; main thread %.0f%% of a core "
	       "(%.0f DELTAs per CPU-second), all threads %.0f%%; RSS max %.0f MiB, every 0.5 s:",
	       rate, secs, send_s, written, sent, 100.0 * (double)written / (double)sent, ms.gaps,
	       (double)written / busy_s, busy_s, 100 * (c1 - c0) / busy_s,
	       (double)written / (c1 - c0), 100 * (a1 - a0) / busy_s, (double)rss_max / 1024);
	for (int i = 0; i < nrss; i++)
		printf(" %.0f", (double)rss[i] / 1024);
	printf(" MiB\n    recorder said: %.*s\n", line ? (int)strcspn(line, "\n") : 4, line ? line : "none");
	iogp_model_free(m);
	unlink(file);
	unlink(errf);
	rmdir(dir);
}

int main(int argc, char **argv)
{
	make_mix();
	printf("bench_ingest: %zu DELTAs in the mix, %.0f B on average; %ld online CPUs\n", mix_n,
	       (double)mix_bytes / (double)mix_n, sysconf(_SC_NPROCESSORS_ONLN));
	int profile = argc >= 2 && !strcmp(argv[1], "profile");
	int do_core = argc < 2 || !strcmp(argv[1], "core") || profile;
	int do_live = argc < 2 || !strcmp(argv[1], "live");
	if (do_core) {
		long n = argc >= 3 && do_core ? atol(argv[2]) : 2000000;
		core(n);
		if (!profile)
			parts(n / 2);
	}
	if (do_live) {
		const char *bin = getenv("IOGRAM_BIN");
		if (!bin) {
			fprintf(stderr, "bench_ingest: IOGRAM_BIN not set\n");
			return 1;
		}
		static const double rates[] = { 100000, 200000, 300000, 400000, 600000 };
		if (argc >= 3)
			for (int i = 2; i < argc; i++)
				live(bin, atof(argv[i]), 5);
		else
			for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++)
				live(bin, rates[i], 5);
	}
	return 0;
}
