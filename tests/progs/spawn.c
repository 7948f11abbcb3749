/* spawn.c - test program: children started with an environment that lacks
 * LD_PRELOAD and the IOGRAM_* settings.
 * usage: prog_spawn MODE DIR
 *   --child DIR: write 7 x 777 B to DIR/child.dat (5439 B), exit 0
 *   MODE: the parent writes 3 x 100 B to DIR/parent.dat, then starts
 *   prog_spawn --child DIR by
 *     posix_spawn   posix_spawn with envp = { NULL }
 *     posix_spawnp  posix_spawnp with envp = { "TZ=UTC", NULL }
 *     execve        fork + execve with environ minus LD_PRELOAD and IOGRAM_*
 *     execvpe       fork + execvpe with envp = { "PATH=/usr/bin:/bin", NULL }
 *     fexecve       fork + fexecve on a descriptor with envp = { NULL }
 *     vfork         vfork + execve with envp = { NULL }
 *     clearenv      fork + clearenv() + execv (the environment emptied)
 *   and exits with the child's status. The caller's arrays must come back
 *   unchanged (else exit 20).
 *   errors: exec and spawn calls that fail, with the environment dropped:
 *     their return values and errno as libc gives them (else exit 30+). */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static int write_n(const char *path, int n, size_t size)
{
	char buf[1024];
	memset(buf, 'y', sizeof(buf));
	int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
	if (fd < 0)
		return -1;
	for (int i = 0; i < n; i++)
		if (write(fd, buf, size) != (ssize_t)size) {
			close(fd);
			return -1;
		}
	return close(fd);
}

static int status_of(pid_t pid)
{
	int st;
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return 1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

static int errors(const char *self)
{
	char *const argv[] = { "x", NULL };
	char *const empty[] = { NULL };
	errno = 0;
	if (execve("/nonexistent-iogram/x", argv, empty) != -1 || errno != ENOENT)
		return 30;
	errno = 0;
	if (execvpe("no-such-command-iogram", argv, empty) != -1 || errno != ENOENT)
		return 31;
	errno = 0;
	if (fexecve(-1, argv, empty) != -1 || errno != EINVAL)
		return 32;
	errno = 0;
	if (fexecve(0, argv, NULL) != -1 || errno != EINVAL)   /* glibc: no envp */
		return 38;
	pid_t pid = 12345;
	errno = 0;
	int r = posix_spawn(&pid, "/nonexistent-iogram/x", NULL, NULL, argv, empty);
	if (r != ENOENT || errno != ENOENT)   /* glibc sets errno too */
		return 33;
	errno = 0;
	r = posix_spawnp(&pid, "no-such-command-iogram", NULL, NULL, argv, empty);
	if (r != ENOENT || errno != ENOENT)
		return 34;
	/* a directory: EACCES */
	errno = 0;
	if (execve("/", argv, empty) != -1 || errno != EACCES)
		return 35;
	/* a successful spawn returns 0 and the pid */
	char *const cargv[] = { (char *)self, "--true", NULL };
	pid = 0;
	if (posix_spawn(&pid, self, NULL, NULL, cargv, empty) != 0 || pid <= 0)
		return 36;
	if (status_of(pid) != 0)
		return 37;
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--true") == 0)
		return 0;
	if (argc < 3)
		return 2;
	char path[4096], self[4096];
	if (strcmp(argv[1], "--child") == 0) {
		snprintf(path, sizeof(path), "%s/child.dat", argv[2]);
		return write_n(path, 7, 777) ? 1 : 0;
	}
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return 1;
	self[n] = '\0';
	const char *mode = argv[1], *dir = argv[2];
	if (strcmp(mode, "errors") == 0)
		return errors(self);
	snprintf(path, sizeof(path), "%s/parent.dat", dir);
	if (write_n(path, 3, 100))
		return 1;
	char *cargv[] = { self, "--child", (char *)dir, NULL };
	char *empty[] = { NULL };
	pid_t pid = -1;
	if (strcmp(mode, "posix_spawn") == 0) {
		if (posix_spawn(&pid, self, NULL, NULL, cargv, empty) != 0)
			return 1;
		if (empty[0] != NULL)
			return 20;
	} else if (strcmp(mode, "posix_spawnp") == 0) {
		char *env[] = { "TZ=UTC", NULL };
		if (posix_spawnp(&pid, self, NULL, NULL, cargv, env) != 0)
			return 1;
		if (strcmp(env[0], "TZ=UTC") != 0 || env[1] != NULL)
			return 20;
	} else if (strcmp(mode, "execve") == 0) {
		size_t k = 0;
		while (environ[k])
			k++;
		char **env = calloc(k + 2, sizeof(*env));
		size_t m = 0;
		for (size_t i = 0; i < k; i++)
			if (strncmp(environ[i], "LD_PRELOAD=", 11) != 0 && strncmp(environ[i], "IOGRAM_", 7) != 0)
				env[m++] = environ[i];
		env[m++] = "IOGRAM_TEST_STRIPPED=1";   /* not one the agent started with */
		env[m] = NULL;
		pid = fork();
		if (pid == 0) {
			execve(self, cargv, env);
			_exit(127);
		}
		if (env[m] != NULL || strcmp(env[m - 1], "IOGRAM_TEST_STRIPPED=1") != 0)
			return 20;
	} else if (strcmp(mode, "execvpe") == 0) {
		char *env[] = { "PATH=/usr/bin:/bin", NULL };
		pid = fork();
		if (pid == 0) {
			execvpe(self, cargv, env);
			_exit(127);
		}
	} else if (strcmp(mode, "fexecve") == 0) {
		int fd = open(self, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return 1;
		pid = fork();
		if (pid == 0) {
			fexecve(fd, cargv, empty);
			_exit(127);
		}
		close(fd);
	} else if (strcmp(mode, "vfork") == 0) {
		/* the child shares our memory until it execs */
		pid = vfork();
		if (pid == 0) {
			execve(self, cargv, empty);
			_exit(127);
		}
		if (empty[0] != NULL)
			return 20;
	} else if (strcmp(mode, "clearenv") == 0) {
		pid = fork();
		if (pid == 0) {
			clearenv();
			execv(self, cargv);
			_exit(127);
		}
	} else {
		return 2;
	}
	return status_of(pid);
}
