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

#define ROUNDS 5
#define LOOP 50

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static pid_t spawn(char *const argv[])
{
	pid_t pid = fork();
	if (pid == 0) {
		int n = open("/dev/null", O_RDWR);
		dup2(n, 1);
		dup2(n, 2);
		execvp(argv[0], argv);
		_exit(127);
	}
	return pid;
}

static int wait_bounded(pid_t pid, double secs)
{
	double end = now_s() + secs;
	int st;
	while (waitpid(pid, &st, WNOHANG) == 0) {
		if (now_s() > end) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return -1;
		}
		usleep(1000);
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int free_port(void)
{
	int s = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t l = sizeof(a);
	bind(s, (struct sockaddr *)&a, sizeof(a));
	getsockname(s, (struct sockaddr *)&a, &l);
	close(s);
	return ntohs(a.sin_port);
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static const char *const LOOP_SH = "for i in $(seq 50); do /bin/true; done";

/* one round: seconds for the loop, plain (ep NULL) or under the agent */
static double loop_once(const char *ep)
{
	char *plain[] = { "bash", "-c", (char *)LOOP_SH, NULL };
	char *agent[] = { getenv("IOGRAM_RUN"), "--endpoint", (char *)ep, "--", "bash", "-c",
	                  (char *)LOOP_SH, NULL };
	double t0 = now_s();
	if (wait_bounded(spawn(ep ? agent : plain), 120) != 0)
		return -1;
	return now_s() - t0;
}

int main(void)
{
	const char *bin = getenv("IOGRAM_BIN"), *run = getenv("IOGRAM_RUN");
	if (!bin || !run) {
		fprintf(stderr, "bench_exec: IOGRAM_BIN and IOGRAM_RUN must be set (meson test --benchmark)\n");
		return 1;
	}
	char dir[] = "/tmp/iogram-bench-exec-XXXXXX", file[128], spool[128], ep[64], nobody[64];
	if (!mkdtemp(dir))
		return 1;
	snprintf(file, sizeof(file), "%s/rec.iogr", dir);
	snprintf(spool, sizeof(spool), "%s/spool", dir);
	setenv("IOGRAM_SPOOL", spool, 1);
	snprintf(ep, sizeof(ep), "tcp://127.0.0.1:%d", free_port());
	snprintf(nobody, sizeof(nobody), "tcp://127.0.0.1:%d", free_port());
	pid_t rec = spawn((char *[]){ (char *)bin, "record", "--listen", ep, "-o", file, NULL });
	usleep(500000);

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
		qsort(t, ROUNDS, sizeof(double), cmp);
		med[c] = t[ROUNDS / 2];
	}
	kill(rec, SIGCONT);
	kill(rec, SIGINT);
	wait_bounded(rec, 20);
	printf("exec loop: bash, %d x /bin/true, median of %d rounds\n", LOOP, ROUNDS);
	for (int c = 0; c < 4; c++)
		printf("  %-18s %8.1f ms  (%.2f ms per exec%s%.2f ms added)\n", names[c], med[c] * 1e3,
		       med[c] * 1e3 / LOOP, c ? ", " : ", ", c ? (med[c] - med[0]) * 1e3 / LOOP : 0.0);
	double worst = 0;
	for (int c = 1; c < 4; c++)
		if ((med[c] - med[0]) * 1e3 / LOOP > worst)
			worst = (med[c] - med[0]) * 1e3 / LOOP;
	printf("  worst added per exec: %.2f ms (target <= 6 ms: %s)\n", worst, worst <= 6 ? "met" : "MISSED");
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		failed = 1;
	return failed;
}
