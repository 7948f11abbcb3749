/* fdhost.c - a host that treats descriptors roughly, as daemons and shells
 * do: prog_fdhost MODE DIR RESULT. It warms up (file I/O, then a pause so an
 * agent can connect), does MODE, does 64 x 4 KiB of file I/O, and writes
 * what it saw to RESULT. Run with and without the agent, RESULT must match.
 * Modes: closeall (close 0..1023, reopen 0..2 on /dev/null), dup2 (a file
 * dup2'ed over 3..64, written through each), fcntl (F_GETFD over 3..1023:
 * how many are open), closefrom (close_range(3, ~0)), rawclose (the same by
 * raw syscall, past any wrapper), emfile (open /dev/null until EMFILE),
 * rlimit (the test set RLIMIT_NOFILE low: open what fits), keepcaps (as
 * root, what setpriv --reuid --regid does: keep the capabilities across
 * a change of user, raise them again on this thread only, then change the
 * groups; glibc aborts a process one of whose threads could not). */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <grp.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int capget(cap_user_header_t, cap_user_data_t);
int capset(cap_user_header_t, const cap_user_data_t);

static char dir[512];

/* setpriv's order: user first (capabilities kept), then this thread's
 * effective set from its permitted one, then groups. */
static int keepcaps(char *out, size_t len)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	int k = prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0);
	int u = setresuid(65534, 65534, 65534);
	int g = capget(&h, d);
	d[0].effective = d[0].permitted;
	d[1].effective = d[1].permitted;
	int c = capset(&h, d);
	int r = setresgid(65534, 65534, 65534);
	int s = setgroups(0, NULL);
	return snprintf(out, len, "keepcaps prctl=%d setresuid=%d capget=%d capset=%d setresgid=%d "
	                "setgroups=%d uid=%d gid=%d\n", k, u, g, c, r, s, (int)getuid(), (int)getgid());
}

static void path(char *b, size_t n, const char *name)
{
	snprintf(b, n, "%s/%s", dir, name);
}

static int io_round(const char *name, int blocks)
{
	char p[600], buf[4096];
	path(p, sizeof(p), name);
	int fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return -1;
	memset(buf, 'x', sizeof(buf));
	int ok = 0;
	for (int i = 0; i < blocks; i++)
		ok += write(fd, buf, sizeof(buf)) == (ssize_t)sizeof(buf);
	for (int i = 0; i < blocks; i++)
		ok += pread(fd, buf, sizeof(buf), (off_t)i * 4096) == (ssize_t)sizeof(buf);
	close(fd);
	return ok;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: prog_fdhost MODE DIR RESULT\n");
		return 2;
	}
	const char *mode = argv[1];
	snprintf(dir, sizeof(dir), "%s", argv[2]);
	char out[4096] = "";
	size_t o = 0;

	if (!strcmp(mode, "lowest")) {
		/* straight away, while an agent would be starting: open() gives the
		 * lowest free number, every time */
		char p[600];
		path(p, sizeof(p), "lowest.dat");
		int saved = dup(1), bad = 0;
		struct timespec t0, t;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (int i = 0; i < 1000000; i++) {
			clock_gettime(CLOCK_MONOTONIC, &t);
			if ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) > 150000000L)
				break;   /* the agent's whole start-up, and more */
			close(1);
			int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
			bad += fd != 1;
			if (fd >= 0 && fd != 1)
				close(fd);
			if (fd == 1)
				bad += write(1, "x", 1) != 1;
		}
		dup2(saved, 1);
		close(saved);
		o += (size_t)snprintf(out + o, sizeof(out) - o, "lowest bad=%d\n", bad);
	}
	io_round("warm", 4);
	nanosleep(&(struct timespec){ 0, 150 * 1000000L }, NULL);
	if (!strcmp(mode, "lowest")) {
		/* done above */
	} else if (!strcmp(mode, "closeall")) {
		for (int fd = 0; fd < 1024; fd++)
			close(fd);
		open("/dev/null", O_RDONLY);
		open("/dev/null", O_WRONLY);
		open("/dev/null", O_WRONLY);
	} else if (!strcmp(mode, "dup2")) {
		char p[600];
		path(p, sizeof(p), "dup2.dat");
		int f = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int good = 0;
		for (int fd = 3; fd <= 64; fd++)
			if (fd != f && dup2(f, fd) == fd && write(fd, "d", 1) == 1)
				good++;
		for (int fd = 3; fd <= 64; fd++)
			if (fd != f)
				close(fd);
		struct stat st;
		fstat(f, &st);
		o += (size_t)snprintf(out + o, sizeof(out) - o, "dup2 good=%d size=%lld\n", good, (long long)st.st_size);
		close(f);
	} else if (!strcmp(mode, "fcntl")) {
		int open_n = 0, dupfd_lowest = -1;
		for (int fd = 3; fd < 1024; fd++)
			open_n += fcntl(fd, F_GETFD) >= 0;
		dupfd_lowest = fcntl(0, F_DUPFD, 3);
		o += (size_t)snprintf(out + o, sizeof(out) - o, "fcntl open=%d dupfd=%d\n", open_n, dupfd_lowest);
		close(dupfd_lowest);
	} else if (!strcmp(mode, "closefrom")) {
		o += (size_t)snprintf(out + o, sizeof(out) - o, "close_range=%d\n",
		                      close_range(3, ~0u, 0));
	} else if (!strcmp(mode, "rawclose")) {
		o += (size_t)snprintf(out + o, sizeof(out) - o, "raw close_range=%ld\n",
		                      syscall(SYS_close_range, 3, ~0u, 0));
		/* the agent's descriptors are gone under it: keep working a while */
		for (int i = 0; i < 10; i++) {
			io_round("raw", 2);
			nanosleep(&(struct timespec){ 0, 30 * 1000000L }, NULL);
		}
	} else if (!strcmp(mode, "keepcaps")) {
		o += (size_t)keepcaps(out + o, sizeof(out) - o);
	} else if (!strcmp(mode, "emfile") || !strcmp(mode, "rlimit")) {
		int n = 0, first = -1, e = 0;
		for (; n < 100000; n++) {
			int fd = open("/dev/null", O_RDONLY);
			if (fd < 0) {
				e = errno;
				break;
			}
			if (first < 0)
				first = fd;
		}
		o += (size_t)snprintf(out + o, sizeof(out) - o, "opened=%d first=%d errno=%d\n", n, first, e);
		for (int fd = first; first >= 0 && fd < first + n; fd++)
			close(fd);
	} else {
		fprintf(stderr, "prog_fdhost: unknown mode %s\n", mode);
		return 2;
	}
	int ok = io_round("data", 64);
	o += (size_t)snprintf(out + o, sizeof(out) - o, "io=%d\n", ok);
	int r = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (r < 0 || write(r, out, o) != (ssize_t)o)
		return 3;
	close(r);
	return ok == 128 ? 0 : 4;
}
