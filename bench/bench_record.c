/* bench_record.c - the agent's costs: ns per iog_record / iog_add from one
 * and two threads, resident memory added by the agent, and the publisher's
 * CPU at a 1 s interval (with a real subscriber in a child process).
 *
 *   bench_record                 everything, a few seconds
 *   bench_record cpu SECONDS     only the publisher's CPU, over SECONDS
 *   bench_record callgrind record|add N
 *                                N calls and nothing else, for
 *   valgrind --tool=callgrind --toggle-collect=iog_record bench_record callgrind record 1000000
 */
#include <dirent.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "agent.h"
#include "iogram.h"
#include "testutil.h"

#define NVALS 4096
#define NMETRICS 20
#define NHIST 10
#define RSS_THREADS 16

static uint64_t vals[NVALS];
/* request sizes as programs ask for them: a few round sizes (common sizes) */
static const uint64_t common[8] = { 4096, 8192, 65536, 1048576, 512, 10240, 131072, 262144 };

static void make_values(void)
{
	uint64_t x = 0x5eedull;

	for (int i = 0; i < NVALS; i++) {
		uint64_t z = tu_splitmix(&x);
		/* request sizes / latencies: 1 .. ~16 M, log-uniform */
		vals[i] = 1 + ((z >> 8) & ((1ull << (z % 24)) - 1));
	}
}

static long vm_rss_kib(void)
{
	return tu_rss_kib(getpid());
}

/* ---- a subscriber in a child process, so its CPU is not ours ---- */

static pid_t sub_pid = -1;

static void start_subscriber(char *ep, size_t len)
{
	int p[2];

	if (pipe(p) < 0)
		exit(1);
	sub_pid = fork();
	if (sub_pid == 0) {
		void *ctx = zmq_ctx_new(), *s = zmq_socket(ctx, ZMQ_SUB);
		char buf[256];
		size_t bl = sizeof(buf);
		zmq_setsockopt(s, ZMQ_SUBSCRIBE, "", 0);
		zmq_bind(s, "tcp://127.0.0.1:*");
		zmq_getsockopt(s, ZMQ_LAST_ENDPOINT, buf, &bl);
		if (write(p[1], buf, strlen(buf) + 1) < 0)
			_exit(1);
		char msg[1 << 16];
		for (;;)
			if (zmq_recv(s, msg, sizeof(msg), 0) < 0)
				_exit(0);
	}
	close(p[1]);
	ssize_t n = read(p[0], ep, len - 1);
	ep[n > 0 ? n : 0] = '\0';
	close(p[0]);
}

static void stop_subscriber(void)
{
	if (sub_pid > 0) {
		kill(sub_pid, SIGTERM);
		waitpid(sub_pid, NULL, 0);
	}
}

/* ---- metrics ---- */

static iog_metric *metrics[NMETRICS];

static void make_metrics(void)
{
	char name[64];

	for (int i = 0; i < NMETRICS; i++) {
		snprintf(name, sizeof(name), "bench.m%02d", i);
		metrics[i] = i < NHIST ? iog_histogram(name, "bytes", NULL) : iog_counter(name, "ops");
		if (metrics[i] == NULL) {
			fprintf(stderr, "bench_record: %s: %s\n", name, iog_strerror(iog_last_error()));
			exit(1);
		}
	}
}

static void use_all_metrics(void)
{
	for (int r = 0; r < 1000; r++)
		for (int i = 0; i < NMETRICS; i++) {
			if (i < NHIST)
				iog_record(metrics[i], vals[(r * 7 + i) % NVALS]);
			else
				iog_add(metrics[i], 1);
		}
}

/* ---- timing ---- */

/* The loop and call alone, for scale on a shared or throttled machine. */
static __attribute__((noinline)) void empty_call(iog_metric *m, uint64_t v)
{
	__asm__ volatile("" : : "r"(m), "r"(v) : "memory");
}

static void (*volatile empty_fn)(iog_metric *, uint64_t) = empty_call;

struct run {
	iog_metric *m;
	int add;
	long n;
	pthread_barrier_t *bar;
	double secs, cpu;   /* wall and this thread's CPU time */
};

static double thread_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *run_main(void *arg)
{
	struct run *r = arg;
	iog_metric *m = r->m;

	/* the first call claims the shard and allocates: not timed */
	if (r->add == 1)
		iog_add(m, 1);
	else if (r->add == 0 || r->add >= 3)
		iog_record(m, 1);
	if (r->bar)
		pthread_barrier_wait(r->bar);
	double t0 = tu_now(), c0 = thread_cpu_s();
	if (r->add == 5) {
		/* a request's per-file record (8 files, as a thread cycling over them) */
		iog_shard *s = iog__shard();
		uint64_t t = 1000;
		for (long i = 0; i < r->n; i++, t += 100)
			iog__frec_io(s, (uint32_t)(i & 7), 0, (int)(i >> 3 & 1), 4096, 0, t, t + 50);
	} else if (r->add == 3 || r->add == 4) {
		/* a request size as the interposer records it: the histogram alone
		 * (as before common sizes), or the size table first */
		iog_shard *s = iog__shard();
		uint32_t slot = m->slot;
		for (long i = 0; i < r->n; i++) {
			uint64_t v = common[i & 7];
			if (r->add == 3)
				s->hist[slot][iogp_native_index(v, IOG_NATIVE_K)]++;
			else
				iog__size_record(s, m, slot, v);
		}
	} else if (r->add == 2) {
		void (*f)(iog_metric *, uint64_t) = empty_fn;
		for (long i = 0; i < r->n; i++)
			f(m, vals[i & (NVALS - 1)]);
	} else if (r->add) {
		for (long i = 0; i < r->n; i++)
			iog_add(m, vals[i & (NVALS - 1)]);
	} else {
		for (long i = 0; i < r->n; i++)
			iog_record(m, vals[i & (NVALS - 1)]);
	}
	r->secs = tu_now() - t0;
	r->cpu = thread_cpu_s() - c0;
	return NULL;
}

static void timing(iog_metric *m, int add, const char *what)
{
	const long n = 50000000;
	struct run one = { m, add, n, NULL, 0, 0 };
	pthread_barrier_t bar;
	pthread_t t[2];
	struct run two[2];

	run_main(&one);
	printf("%-10s 1 thread : %6.2f ns/call (%.2f on CPU)  %7.1f M calls/s\n", what,
	       one.secs * 1e9 / (double)n, one.cpu * 1e9 / (double)n, (double)n / one.secs * 1e-6);
	pthread_barrier_init(&bar, NULL, 2);
	for (int i = 0; i < 2; i++) {
		two[i] = (struct run){ m, add, n, &bar, 0, 0 };
		pthread_create(&t[i], NULL, run_main, &two[i]);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	double worst = two[0].secs > two[1].secs ? two[0].secs : two[1].secs;
	printf("%-10s 2 threads: %6.2f / %6.2f ns/call per thread (%.2f / %.2f on CPU), "
	       "aggregate %7.1f M calls/s (%.2fx)\n",
	       what, two[0].secs * 1e9 / (double)n, two[1].secs * 1e9 / (double)n,
	       two[0].cpu * 1e9 / (double)n, two[1].cpu * 1e9 / (double)n,
	       2.0 * (double)n / worst * 1e-6, (2.0 * (double)n / worst) / ((double)n / one.secs));
	pthread_barrier_destroy(&bar);
}

/* ---- memory ---- */

static pthread_barrier_t rss_bar;

static void *rss_thread(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&rss_bar);    /* alive, not yet recording */
	pthread_barrier_wait(&rss_bar);
	use_all_metrics();
	pthread_barrier_wait(&rss_bar);    /* recorded */
	pthread_barrier_wait(&rss_bar);
	return NULL;
}

static void memory(long before)
{
	pthread_t t[RSS_THREADS];

	long one = vm_rss_kib();
	printf("memory: VmRSS %ld KiB before the agent, %ld KiB with it and %d metrics "
	       "(%d native histograms, %d counters) used from 1 thread: +%.2f MiB\n",
	       before, one, NMETRICS, NHIST, NMETRICS - NHIST, (double)(one - before) / 1024.0);
	pthread_barrier_init(&rss_bar, NULL, RSS_THREADS + 1);
	for (int i = 0; i < RSS_THREADS; i++)
		pthread_create(&t[i], NULL, rss_thread, NULL);
	pthread_barrier_wait(&rss_bar);
	long idle = vm_rss_kib();
	pthread_barrier_wait(&rss_bar);
	pthread_barrier_wait(&rss_bar);
	iog_flush();
	long used = vm_rss_kib();
	pthread_barrier_wait(&rss_bar);
	for (int i = 0; i < RSS_THREADS; i++)
		pthread_join(t[i], NULL);
	printf("memory: %d more threads using all %d metrics: +%ld KiB = %.1f KiB/thread "
	       "(target <= 4 MiB + 64 KiB/thread)\n", RSS_THREADS, NMETRICS, used - idle,
	       (double)(used - idle) / RSS_THREADS);
	pthread_barrier_destroy(&rss_bar);
}

/* ---- the publisher's CPU ---- */

struct tcpu {
	char name[32];
	uint64_t ns;
};

/* CPU ns of this process's threads named iogram or ZMQbg/...: schedstat's
 * first field is ns on CPU (stat's ticks are too coarse for 0.1%). */
static int agent_threads(struct tcpu *out, int max)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (d == NULL)
		return 0;
	while ((e = readdir(d)) != NULL && n < max) {
		char path[300], name[32] = "";
		unsigned long long ns = 0;
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		if (fgets(name, sizeof(name), f) == NULL)
			name[0] = '\0';
		fclose(f);
		name[strcspn(name, "\n")] = '\0';
		if (strcmp(name, "iogram") != 0 && strncmp(name, "ZMQbg", 5) != 0)
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/schedstat", e->d_name);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		if (fscanf(f, "%llu", &ns) != 1)
			ns = 0;
		fclose(f);
		snprintf(out[n].name, sizeof(out[n].name), "%s", name);
		out[n++].ns = ns;
	}
	closedir(d);
	return n;
}

static void cpu(double seconds)
{
	struct tcpu a[16], b[16];
	int na = agent_threads(a, 16);
	double t0 = tu_now();
	long k = 0;

	/* a busy program: every metric changes in every interval */
	while (tu_now() - t0 < seconds) {
		for (int i = 0; i < 1000; i++, k++)
			iog_record(metrics[k % NHIST], vals[k & (NVALS - 1)]);
		iog_add(metrics[NHIST + (int)(k % (NMETRICS - NHIST))], 1);
		usleep(1000);
	}
	double el = tu_now() - t0;
	int nb = agent_threads(b, 16);
	uint64_t pub = 0, zmq = 0;
	for (int i = 0; i < nb; i++) {
		uint64_t before = 0;
		for (int j = 0; j < na; j++)
			if (strcmp(a[j].name, b[i].name) == 0)
				before = a[j].ns;
		if (strcmp(b[i].name, "iogram") == 0)
			pub += b[i].ns - before;
		else
			zmq += b[i].ns - before;
	}
	printf("publisher CPU at a 1 s interval over %.1f s (%d metrics, %d threads' shards, "
	       "a live subscriber): publisher thread %.3f ms = %.4f%% of a core; "
	       "ZeroMQ I/O threads %.3f ms = %.4f%% (target < 0.1%%)\n",
	       el, NMETRICS, RSS_THREADS + 3, (double)pub * 1e-6, (double)pub / (el * 1e9) * 100.0,
	       (double)zmq * 1e-6, (double)zmq / (el * 1e9) * 100.0);
}

int main(int argc, char **argv)
{
	char ep[256];

	make_values();
	if (argc >= 4 && strcmp(argv[1], "callgrind") == 0) {
		iog_config c = { .endpoint = "none", .interval_ms = 1000 };
		long n = atol(argv[3]);
		iog_init(&c);
		iog_metric *m = strcmp(argv[2], "add") == 0 ? iog_counter("cg", "") : iog_histogram("cg", "", NULL);
		if (m == NULL)
			return 1;
		if (strcmp(argv[2], "add") == 0)
			for (long i = 0; i < n; i++)
				iog_add(m, vals[i & (NVALS - 1)]);
		else
			for (long i = 0; i < n; i++)
				iog_record(m, vals[i & (NVALS - 1)]);
		printf("%ld calls\n", n);
		iog_shutdown();
		return 0;
	}

	double cpu_s = 3.0;
	int only_cpu = argc >= 2 && strcmp(argv[1], "cpu") == 0;
	if (only_cpu && argc >= 3)
		cpu_s = atof(argv[2]);

	start_subscriber(ep, sizeof(ep));
	long before = vm_rss_kib();
	iog_config c = { .endpoint = ep, .interval_ms = 1000 };
	iog_init(&c);
	make_metrics();
	use_all_metrics();
	iog_flush();
	usleep(200000);       /* connected, subscribed, a SNAPSHOT sent */

	printf("bench_record: libiogram %d.%d, %ld online CPUs\n", IOG_VERSION_MAJOR,
	       IOG_VERSION_MINOR, sysconf(_SC_NPROCESSORS_ONLN));
	memory(before);
	if (!only_cpu) {
		timing(metrics[0], 2, "empty call");
		timing(metrics[0], 0, "iog_record");
		timing(metrics[NHIST], 1, "iog_add");
		/* the size histograms' record path, with and without the table */
		metrics[1]->exact = 0;
		timing(metrics[1], 3, "size hist");
		metrics[2]->exact = 1;
		timing(metrics[2], 4, "size table");
		timing(metrics[3], 5, "file record");
	}
	cpu(cpu_s);
	double t0 = tu_now();
	iog_shutdown();
	printf("iog_shutdown with a subscriber: %.2f ms\n", (tu_now() - t0) * 1e3);
	stop_subscriber();
	return 0;
}
