/* forkexec.c - test program: the parent writes, forks; the child writes and
 * execs this program again (--exec) or /bin/cat; the parent waits.
 * usage: prog_forkexec DIR [cat|vfork]
 * Totals: parent 10 writes of 1000 B, child 20 of 2000 B, exec'd image 30 of
 * 3000 B (or, with "cat", cat reads the parent's file and writes it out;
 * with "vfork", the child only execs: two sources, parent and image). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int write_n(const char *path, int n, size_t size)
{
	char buf[4096];
	memset(buf, 'x', sizeof(buf));
	int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
	if (fd < 0) {
		perror(path);
		return -1;
	}
	for (int i = 0; i < n; i++)
		if (write(fd, buf, size) != (ssize_t)size) {
			close(fd);
			return -1;
		}
	return close(fd);
}

int main(int argc, char **argv)
{
	char path[4096];
	if (argc > 2 && strcmp(argv[1], "--exec") == 0) {
		snprintf(path, sizeof(path), "%s/exec.dat", argv[2]);
		return write_n(path, 30, 3000) ? 1 : 0;
	}
	const char *dir = argc > 1 ? argv[1] : "/tmp";
	int use_cat = argc > 2 && strcmp(argv[2], "cat") == 0;
	int use_vfork = argc > 2 && strcmp(argv[2], "vfork") == 0;
	snprintf(path, sizeof(path), "%s/parent.dat", dir);
	if (write_n(path, 10, 1000))
		return 1;
	pid_t pid;
	if (use_vfork) {
		/* the child shares our memory until it execs: only execl/_exit */
		pid = vfork();
		if (pid == 0) {
			execl("/proc/self/exe", argv[0], "--exec", dir, (char *)NULL);
			_exit(127);
		}
	} else {
		pid = fork();
	}
	if (pid < 0)
		return 1;
	if (pid == 0) {
		char cpath[4096];
		snprintf(cpath, sizeof(cpath), "%s/child.dat", dir);
		if (write_n(cpath, 20, 2000))
			_exit(1);
		if (use_cat) {
			int null = open("/dev/null", O_WRONLY);
			if (null < 0 || dup2(null, 1) < 0)
				_exit(1);
			execl("/bin/cat", "cat", path, (char *)NULL);
		} else {
			execl("/proc/self/exe", argv[0], "--exec", dir, (char *)NULL);
		}
		perror("exec");
		_exit(127);
	}
	int st;
	if (waitpid(pid, &st, 0) != pid)
		return 1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
