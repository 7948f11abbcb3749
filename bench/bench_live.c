/* bench_live.c - messages/s of 512 B through a bare zmq_proxy, one iogram
 * relay and a two-level relay tree (same run), and the highest rate of
 * realistic DELTAs one `iogram record` takes without gaps, with its CPU. */
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "iogp.h"
#include "testutil.h"

static const char *bin;

/* argv in the background, its stdout ours, stderr to /dev/null */
static pid_t spawn(char *const argv[])
{
	return tu_spawn_opt(argv, &(tu_opts){ .keep_out = 1 });
}

/* SIGTERM, SIGKILL after 5 s */
static void stop(pid_t pid)
{
	tu_stop(pid, SIGTERM, 5);
}

typedef struct proxy_arg {
	void *ctx;
	char in[64], out[64];
} proxy_arg;

static void *bare_proxy(void *p)
{
	proxy_arg *a = p;
	void *f = zmq_socket(a->ctx, ZMQ_XSUB), *b = zmq_socket(a->ctx, ZMQ_XPUB);
	int rhwm = 1000000, shwm = 100000;   /* as iogram relay sets them */
	zmq_setsockopt(f, ZMQ_RCVHWM, &rhwm, sizeof(rhwm));
	zmq_setsockopt(b, ZMQ_SNDHWM, &shwm, sizeof(shwm));
	zmq_bind(f, a->in);
	zmq_bind(b, a->out);
	zmq_proxy(f, b, NULL);   /* ends when the context terminates */
	zmq_close(f);
	zmq_close(b);
	return NULL;
}

/* Send n two-frame messages (32 B topic + 480 B) into `in` as fast as a
 * publisher can and count what arrives at `out` in a bounded time. */
static double pump(const char *in, const char *out, int n, double *lost)
{
	void *ctx = zmq_ctx_new();
	void *sub = zmq_socket(ctx, ZMQ_SUB), *pub = zmq_socket(ctx, ZMQ_XPUB);
	int hwm = 100000, zero = 0, one = 1;
	zmq_setsockopt(sub, ZMQ_RCVHWM, &hwm, sizeof(hwm));
	zmq_setsockopt(sub, ZMQ_SUBSCRIBE, "", 0);
	zmq_setsockopt(pub, ZMQ_SNDHWM, &hwm, sizeof(hwm));
	zmq_setsockopt(pub, ZMQ_XPUB_NODROP, &one, sizeof(one));   /* back-pressure, no drops here */
	zmq_setsockopt(sub, ZMQ_LINGER, &zero, sizeof(zero));
	zmq_setsockopt(pub, ZMQ_LINGER, &zero, sizeof(zero));
	zmq_connect(sub, out);
	zmq_connect(pub, in);
	char topic[32] = "iog1/delta/0123456789abcdef....", payload[480];
	memset(payload, 7, sizeof(payload));
	/* wait until the subscription has reached the publisher */
	char sb[64];
	double t = tu_now();
	while (zmq_recv(pub, sb, sizeof(sb), ZMQ_DONTWAIT) < 0 && tu_now() - t < 5) {
		usleep(1000);
	}
	usleep(200000);
	int got = 0;
	double start = tu_now();
	for (int i = 0; i < n; i++) {
		zmq_send(pub, topic, 32, ZMQ_SNDMORE);
		zmq_send(pub, payload, sizeof(payload), 0);
		char buf[512];
		while (zmq_recv(sub, buf, sizeof(buf), ZMQ_DONTWAIT) >= 0)
			got++;
	}
	char buf[512];
	double last = tu_now();
	while (got < 2 * n && tu_now() - last < 1.0) {
		if (zmq_recv(sub, buf, sizeof(buf), ZMQ_DONTWAIT) >= 0) {
			got++;
			last = tu_now();
		} else {
			usleep(100);
		}
	}
	double el = last - start;
	*lost = (double)(2 * n - got) / 2;
	zmq_close(sub);
	zmq_close(pub);
	zmq_ctx_term(ctx);
	return (got / 2) / el;
}

int main(void)
{
	bin = getenv("IOGRAM_BIN");
	if (!bin) {
		fprintf(stderr, "bench_live: IOGRAM_BIN not set\n");
		return 1;
	}
	const int n = 400000;
	double lost;
	/* bare zmq_proxy */
	int a = tu_free_port(), b = tu_free_port();
	proxy_arg pa = { .ctx = zmq_ctx_new() };
	snprintf(pa.in, sizeof(pa.in), "%s", tu_ep(a));
	snprintf(pa.out, sizeof(pa.out), "%s", tu_ep(b));
	pthread_t th;
	pthread_create(&th, NULL, bare_proxy, &pa);
	usleep(200000);
	double bare = pump(pa.in, pa.out, n, &lost);
	printf("bare zmq_proxy:        %9.0f msg/s of 512 B (lost %.0f)\n", bare, lost);
	zmq_ctx_shutdown(pa.ctx);
	pthread_join(th, NULL);
	zmq_ctx_term(pa.ctx);
	/* one relay */
	a = tu_free_port();
	b = tu_free_port();
	pid_t r1 = spawn((char *const[]){ (char *)bin, "relay", "--quiet", "--listen", tu_ep(a), "--publish",
	                                  tu_ep(b), NULL });
	usleep(300000);
	double one = pump(tu_ep(a), tu_ep(b), n, &lost);
	printf("iogram relay:          %9.0f msg/s (%.0f%% of bare; dropped %.0f)\n", one, 100 * one / bare, lost);
	stop(r1);
	/* two-level tree */
	a = tu_free_port();
	b = tu_free_port();
	int c = tu_free_port();
	r1 = spawn((char *const[]){ (char *)bin, "relay", "--quiet", "--listen", tu_ep(a), "--upstream", tu_ep(b),
	                            NULL });
	pid_t r2 = spawn((char *const[]){ (char *)bin, "relay", "--quiet", "--listen", tu_ep(b), "--publish",
	                                  tu_ep(c), NULL });
	usleep(300000);
	double two = pump(tu_ep(a), tu_ep(c), n, &lost);
	printf("two-level relay tree:  %9.0f msg/s (%.0f%% of bare; dropped %.0f)\n", two, 100 * two / bare, lost);
	stop(r1);
	stop(r2);

	/* recorder: realistic DELTAs at increasing rates, gaps and CPU */
	char dir[256];
	tu_tmpdir(dir, sizeof(dir), "iogram-bench-live");
	static const struct { const char *sources, *rate; } steps[] = {
		{ "1000", "10" }, { "10000", "10" }, { "10000", "20" }, { "10000", "40" },
	};
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		char file[300];
		snprintf(file, sizeof(file), "%s/r.iogr", dir);
		int p = tu_free_port();
		pid_t rec = spawn((char *const[]){ (char *)bin, "record", "--quiet", "--listen", tu_ep(p), "-o", file,
		                                   NULL });
		usleep(300000);
		double t0 = tu_now(), c0 = tu_cpu_s(rec);
		pid_t lg = spawn((char *const[]){ (char *)bin, "loadgen", "--quiet", "--sources", (char *)steps[i].sources,
		                                  "--rate", (char *)steps[i].rate, "--duration", "10", "--fast",
		                                  "--endpoint", tu_ep(p), NULL });
		int st;
		waitpid(lg, &st, 0);
		usleep(1500000);
		double c1 = tu_cpu_s(rec), t1 = tu_now();
		stop(rec);
		iogp_model *m = iogp_model_new(&(iogp_model_opts){ .max_sources = 100000 });
		iogp_load_stats ls;
		char err[256];
		iogp_load_file(file, m, &ls, err, sizeof(err));
		iogp_model_stats ms;
		iogp_model_get_stats(m, &ms);
		struct stat sb;
		stat(file, &sb);
		double secs = (double)(ls.file.last_ns - ls.file.first_ns) / 1e9;
		printf("record %6s sources x %s Hz: %8.0f DELTAs/s, gaps %llu, recorder CPU %.0f%% of a core, "
		       "%.0f B/s on disk (%.1f B per DELTA)\n",
		       steps[i].sources, steps[i].rate, (double)ls.by_kind[IOGP_DELTA] / (secs > 0 ? secs : 1),
		       (unsigned long long)ms.gaps, 100 * (c1 - c0) / (t1 - t0),
		       (double)sb.st_size / (secs > 0 ? secs : 1),
		       (double)sb.st_size / (double)(ls.by_kind[IOGP_DELTA] ? ls.by_kind[IOGP_DELTA] : 1));
		iogp_model_free(m);
		unlink(file);
	}
	rmdir(dir);
	return 0;
}
