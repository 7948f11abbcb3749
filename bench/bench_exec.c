/* bench_exec.c - what the agent adds to exec and exit: a bash loop of 50
 * /bin/true, plain and under iogram-run with nobody listening, a healthy
 * recorder, and a recorder stopped with SIGSTOP (accepts, never answers).
 * Medians of 5 rounds, ms per exec added over plain; target: a few ms. */
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>

#include "testutil.h"

#define ROUNDS 5
#define LOOP 50

static const char *const LOOP_SH = "for i in $(seq 50); do /bin/true; done";

/* one round: seconds for the loop, plain (ep NULL) or under the agent */
static double loop_once(const char *ep)
{
	char *plain[] = { "bash", "-c", (char *)LOOP_SH, NULL };
	char *agent[] = { getenv("IOGRAM_RUN"), "--endpoint", (char *)ep, "--", "bash", "-c",
	                  (char *)LOOP_SH, NULL };
	double t0 = tu_now();
	if (tu_wait(tu_spawn(ep ? agent : plain, NULL, NULL, 0), 120) != 0)
		return -1;
	return tu_now() - t0;
}

int main(void)
{
	const char *bin = getenv("IOGRAM_BIN"), *run = getenv("IOGRAM_RUN");
	if (!bin || !run) {
		fprintf(stderr, "bench_exec: IOGRAM_BIN and IOGRAM_RUN must be set (meson test --benchmark)\n");
		return 1;
	}
	char dir[256], file[300], spool[300], ep[64], nobody[64];
	tu_tmpdir(dir, sizeof(dir), "iogram-bench-exec");
	snprintf(file, sizeof(file), "%s/rec.iogr", dir);
	snprintf(spool, sizeof(spool), "%s/spool", dir);
	setenv("IOGRAM_SPOOL", spool, 1);
	snprintf(ep, sizeof(ep), "%s", tu_ep(tu_free_port()));
	snprintf(nobody, sizeof(nobody), "%s", tu_ep(tu_free_port()));
	pid_t rec = tu_spawn((char *[]){ (char *)bin, "record", "--listen", ep, "-o", file, NULL },
	                     NULL, NULL, 0);
	tu_sleep_ms(500);

	const char *names[4] = { "plain", "nobody listening", "healthy recorder", "stopped recorder" };
	const char *eps[4] = { NULL, nobody, ep, ep };
	double med[4];
	int failed = 0;
	for (int c = 0; c < 4; c++) {
		double t[ROUNDS];
		if (c == 3)
			kill(rec, SIGSTOP);
		for (int r = 0; r < ROUNDS; r++) {
			t[r] = loop_once(eps[c]);
			failed |= t[r] < 0;
		}
		med[c] = tu_median(t, ROUNDS);
	}
	kill(rec, SIGCONT);
	tu_stop(rec, SIGINT, 20);
	printf("exec loop: bash, %d x /bin/true, median of %d rounds\n", LOOP, ROUNDS);
	for (int c = 0; c < 4; c++)
		printf("  %-18s %8.1f ms  (%.2f ms per exec%s%.2f ms added)\n", names[c], med[c] * 1e3,
		       med[c] * 1e3 / LOOP, c ? ", " : ", ", c ? (med[c] - med[0]) * 1e3 / LOOP : 0.0);
	double worst = 0;
	for (int c = 1; c < 4; c++)
		if ((med[c] - med[0]) * 1e3 / LOOP > worst)
			worst = (med[c] - med[0]) * 1e3 / LOOP;
	printf("  worst added per exec: %.2f ms (target <= 6 ms: %s)\n", worst, worst <= 6 ? "met" : "MISSED");
	if (tu_rmdir_all(dir) != 0)
		failed = 1;
	return failed;
}
