/* bench_storm.c - what a subscription storm costs the host: prog_pread_loop
 * (4 KiB preads on a page-cached file) under iogram-run connected to a quiet
 * subscriber, then to one that sends subscriptions as fast as it can, and
 * how many SNAPSHOTs the storm got. Medians of 5 rounds each, alternated. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "iogp_wire.h"
#include "testutil.h"

#define ROUNDS 5

static volatile int storming, stop;
static long snapshots;

static void *idle_sock;   /* bound, nobody connects: the quiet phase's pump target */

/* The pump spins in both phases (the attacker's own CPU is not the agent's
 * cost); only in the storm does it reach the agent. */
static void *pump(void *x)
{
	uint8_t buf[65536];
	while (!stop) {
		for (int k = 0; k < 500; k++)
			zmq_send(storming ? x : idle_sock, "\x01", 1, ZMQ_DONTWAIT);
		zmq_pollitem_t it = { x, 0, ZMQ_POLLIN, 0 };
		while (zmq_poll(&it, 1, 0) > 0) {
			int more = 0;
			size_t ml = sizeof(more);
			zmq_recv(x, buf, sizeof(buf), 0);
			zmq_getsockopt(x, ZMQ_RCVMORE, &more, &ml);
			if (!more)
				continue;
			int n = zmq_recv(x, buf, sizeof(buf), 0);
			iogp_kind kind;
			uint16_t fl;
			uint64_t src, seq;
			if (n > 0 && iogp_msg_peek(buf, (size_t)(n < 65536 ? n : 65536), &kind, &fl, &src, &seq) == 0 &&
			    kind == IOGP_SNAPSHOT && storming)
				snapshots++;
		}
	}
	return NULL;
}

static double run_once(const char *run, const char *prog, const char *file, const char *ep)
{
	char *argv[] = { (char *)run, "--endpoint", (char *)ep, "--interval", "100", "--", (char *)prog,
	                 (char *)file, "2000000", NULL };
	tu_result r = tu_capture(argv, &(tu_opts){ .keep_err = 1 }, 0);
	double ns = -1;
	if (r.status == 0 && r.out[0])
		sscanf(r.out, "ns/op %lf", &ns);
	tu_result_free(&r);
	return ns;
}

int main(void)
{
	const char *run = getenv("IOGRAM_RUN"), *progs = getenv("IOGRAM_PROGS");
	if (!run || !progs) {
		fprintf(stderr, "bench_storm: IOGRAM_RUN and IOGRAM_PROGS must be set (meson test --benchmark)\n");
		return 1;
	}
	char prog[512], file[] = "/tmp/iogram-bench-storm-XXXXXX";
	tu_prog(prog, sizeof(prog), "pread_loop");
	int fd = mkstemp(file);
	static char blk[1 << 20];
	for (int i = 0; fd >= 0 && i < 16; i++)
		if (write(fd, blk, sizeof(blk)) != (ssize_t)sizeof(blk)) {
			close(fd);
			fd = -1;
		}
	if (fd < 0) {
		fprintf(stderr, "bench_storm: cannot write the 16 MiB test file %s: %s\n", file, strerror(errno));
		unlink(file);
		return 1;
	}
	close(fd);
	void *ctx = zmq_ctx_new(), *x = zmq_socket(ctx, ZMQ_XSUB);
	int zero = 0;
	zmq_setsockopt(x, ZMQ_LINGER, &zero, sizeof(zero));
	zmq_setsockopt(x, ZMQ_SNDHWM, &zero, sizeof(zero));
	zmq_bind(x, "tcp://127.0.0.1:*");
	idle_sock = zmq_socket(ctx, ZMQ_XSUB);
	zmq_setsockopt(idle_sock, ZMQ_LINGER, &zero, sizeof(zero));
	zmq_bind(idle_sock, "tcp://127.0.0.1:*");
	char ep[256];
	size_t el = sizeof(ep);
	zmq_getsockopt(x, ZMQ_LAST_ENDPOINT, ep, &el);
	zmq_send(x, "\x01", 1, 0);   /* one ordinary subscriber */
	pthread_t t;
	pthread_create(&t, NULL, pump, x);
	double q[ROUNDS], s[ROUNDS], storm_secs = 0;
	int failed = 0;
	for (int r = 0; r < ROUNDS; r++) {
		storming = 0;
		q[r] = run_once(run, prog, file, ep);
		storming = 1;
		double t0 = tu_now();
		s[r] = run_once(run, prog, file, ep);
		storm_secs += tu_now() - t0;
		failed |= q[r] < 0 || s[r] < 0;
	}
	stop = 1;
	pthread_join(t, NULL);
	double mq = tu_median(q, ROUNDS), ms = tu_median(s, ROUNDS);
	printf("subscription storm: 4 KiB pread from page cache under the agent, median of %d\n", ROUNDS);
	printf("  quiet subscriber   %7.1f ns/op  (the pump spins elsewhere)\n", mq);
	printf("  storm              %7.1f ns/op  (%.2fx)\n", ms, ms / mq);
	printf("  SNAPSHOTs the storm got: %.1f per second (bound: 4 + the periodic one)\n",
	       (double)snapshots / storm_secs);
	zmq_close(x);
	zmq_close(idle_sock);
	zmq_ctx_term(ctx);
	unlink(file);
	return failed;
}
