/* demo.c - the viewers' --demo: worker processes, each labelled as its own
 * node, doing real file I/O in a temporary directory under the real
 * interposer and streaming to iogram-top's private endpoint; stopped and
 * cleaned up on exit. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "demo.h"
#include "iogp_sys.h"

#ifndef IOGRAM_LIBDIR
#define IOGRAM_LIBDIR "/usr/local/lib"
#endif
#ifndef IOGRAM_LIBEXECDIR
#define IOGRAM_LIBEXECDIR "/usr/local/libexec/iogram"
#endif

#define PRELOAD "libiogram-posix.so"
#define WORKER "iogram-demo-work"
#define RESTART_NS 1000000000ull

static const char *const patterns[] = { "seqwrite", "randread", "smallfiles", "bursts", "aio" };
#define NWORK ((int)(sizeof(patterns) / sizeof(patterns[0])))

struct iogram_demo {
	char dir[PATH_MAX];
	char worker[PATH_MAX];
	char preload[PATH_MAX];
	char endpoint[256];
	pid_t pid[NWORK];
	uint64_t restart_at[NWORK];
	int restarts;
};

static int try_path(char *out, size_t len, const char *dir, const char *name, int exec)
{
	int n = snprintf(out, len, "%s/%s", dir, name);
	return n > 0 && (size_t)n < len && access(out, exec ? X_OK : R_OK) == 0;
}

/* Next to us (installed side by side, or the build tree), then the install dirs. */
static int find(char *out, size_t len, const char *name, int exec, const char *installed,
                const char *envvar)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = '\0';
		char *slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			char sib[PATH_MAX + 16];
			if (try_path(out, len, self, name, exec))
				return 0;
			/* the build tree: the viewers' folders beside agent/ and demo/ */
			static const char *const dirs[] = { "agent", "demo" };
			for (int k = 0; k < 2; k++) {
				snprintf(sib, sizeof(sib), "%s/../%s", self, dirs[k]);
				if (try_path(out, len, sib, name, exec))
					return 0;
			}
		}
	}
	if (try_path(out, len, installed, name, exec))
		return 0;
	const char *env = envvar ? getenv(envvar) : NULL;
	if (env && env[0] && access(env, exec ? X_OK : R_OK) == 0) {
		snprintf(out, len, "%s", env);
		return 0;
	}
	return -1;
}

/* The worker's environment: ours plus the agent's settings, built before
 * fork so the child only calls async-signal-safe functions (a threaded
 * parent's allocator lock may be held at fork). NULL on ENOMEM. */
static char **worker_env(const iogram_demo *d, int i)
{
	extern char **environ;
	static const char *const drop[] = { "LD_PRELOAD=", "IOGRAM_ENDPOINT=", "IOGRAM_NODE=",
	                                    "IOGRAM_INTERVAL_MS=", "IOGRAM_OUTPUT=", "IOGRAM_DISABLE=" };
	size_t n = 0;
	while (environ[n])
		n++;
	char **env = calloc(n + 5, sizeof(char *));
	if (!env)
		return NULL;
	size_t k = 0;
	for (size_t j = 0; j < n; j++) {
		int skip = 0;
		for (size_t q = 0; q < sizeof(drop) / sizeof(*drop); q++)
			skip |= !strncmp(environ[j], drop[q], strlen(drop[q]));
		if (!skip)
			env[k++] = environ[j];
	}
	static char preload[PATH_MAX + 16], endpoint[300], node[NWORK][48];
	snprintf(preload, sizeof(preload), "LD_PRELOAD=%s", d->preload);
	snprintf(endpoint, sizeof(endpoint), "IOGRAM_ENDPOINT=%s", d->endpoint);
	snprintf(node[i], sizeof(node[i]), "IOGRAM_NODE=demo-node%d", i + 1);
	env[k++] = preload;
	env[k++] = endpoint;
	env[k++] = node[i];
	env[k++] = "IOGRAM_INTERVAL_MS=500";
	env[k] = NULL;
	return env;
}

static pid_t spawn(iogram_demo *d, int i)
{
	char **env = worker_env(d, i);
	if (!env)
		return -1;
	char *argv[] = { d->worker, (char *)patterns[i], d->dir, NULL };
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid != 0) {
		free(env);
		return pid;
	}
	/* child: its own process group (the terminal's ^C is iogram-top's to
	 * handle), and it dies with us even on kill -9 */
	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent)
		_exit(0);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	int nul = open("/dev/null", O_RDWR);
	if (nul >= 0) {
		dup2(nul, 0);
		dup2(nul, 1);
		dup2(nul, 2);
		if (nul > 2)
			close(nul);
	}
	execve(d->worker, argv, env);
	_exit(127);
}

int demo_start(iogram_demo **out, const char *endpoint, char *err, size_t errlen)
{
	*out = NULL;
	iogram_demo *d = calloc(1, sizeof(*d));
	if (!d) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (find(d->worker, sizeof(d->worker), WORKER, 1, IOGRAM_LIBEXECDIR, "IOGRAM_DEMO_WORK") < 0) {
		snprintf(err, errlen, "demo: cannot find %s (looked next to iogram-top and in %s)",
		         WORKER, IOGRAM_LIBEXECDIR);
		free(d);
		return -1;
	}
	if (find(d->preload, sizeof(d->preload), PRELOAD, 0, IOGRAM_LIBDIR, "IOGRAM_PRELOAD") < 0) {
		snprintf(err, errlen, "demo: cannot find %s (looked next to iogram-top, in %s and at "
		         "$IOGRAM_PRELOAD)", PRELOAD, IOGRAM_LIBDIR);
		free(d);
		return -1;
	}
	char real[PATH_MAX];
	if (realpath(d->preload, real))
		snprintf(d->preload, sizeof(d->preload), "%s", real);
	const char *tmp = getenv("TMPDIR");
	snprintf(d->dir, sizeof(d->dir), "%s/iogram-demo-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
	if (!mkdtemp(d->dir)) {
		snprintf(err, errlen, "demo: cannot create %s: %s", d->dir, strerror(errno));
		free(d);
		return -1;
	}
	snprintf(d->endpoint, sizeof(d->endpoint), "%s", endpoint);
	for (int i = 0; i < NWORK; i++) {
		d->pid[i] = spawn(d, i);
		if (d->pid[i] < 0) {
			snprintf(err, errlen, "demo: fork: %s", strerror(errno));
			demo_stop(d);
			return -1;
		}
	}
	*out = d;
	return 0;
}

void demo_tick(iogram_demo *d)
{
	uint64_t now = iogp_mono_ns();
	for (int i = 0; i < NWORK; i++) {
		if (d->pid[i] > 0) {
			int status;
			if (waitpid(d->pid[i], &status, WNOHANG) == d->pid[i]) {
				d->pid[i] = 0;
				d->restart_at[i] = now + RESTART_NS;
			}
		} else if (d->restart_at[i] && now >= d->restart_at[i]) {
			d->restart_at[i] = 0;
			d->pid[i] = spawn(d, i);
			if (d->pid[i] > 0)
				d->restarts++;
			else
				d->restart_at[i] = now + 10 * RESTART_NS;
		}
	}
}

int demo_workers(const iogram_demo *d, int *restarts)
{
	int n = 0;
	for (int i = 0; i < NWORK; i++)
		n += d->pid[i] > 0;
	if (restarts)
		*restarts = d->restarts;
	return n;
}

const char *demo_dir(const iogram_demo *d)
{
	return d->dir;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

void demo_stop(iogram_demo *d)
{
	if (!d)
		return;
	for (int i = 0; i < NWORK; i++)
		if (d->pid[i] > 0)
			kill(d->pid[i], SIGTERM);
	/* the agent's exit protocol takes up to ~300 ms */
	uint64_t deadline = iogp_mono_ns() + 2000000000ull;
	for (;;) {
		int left = 0;
		for (int i = 0; i < NWORK; i++) {
			if (d->pid[i] <= 0)
				continue;
			pid_t w = waitpid(d->pid[i], NULL, WNOHANG);
			if (w == d->pid[i] || (w < 0 && errno == ECHILD))
				d->pid[i] = 0;
			else
				left++;
		}
		if (!left)
			break;
		if (iogp_mono_ns() > deadline) {
			for (int i = 0; i < NWORK; i++)
				if (d->pid[i] > 0) {
					kill(d->pid[i], SIGKILL);
					waitpid(d->pid[i], NULL, 0);
					d->pid[i] = 0;
				}
			break;
		}
		struct timespec ts = { 0, 10000000 };
		nanosleep(&ts, NULL);
	}
	if (d->dir[0])
		nftw(d->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(d);
}
