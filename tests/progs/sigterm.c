/* sigterm.c - a host that dies of SIGTERM, or handles it, after writing
 * 64 x 4 KiB: prog_sigterm FILE MODE. It prints what sigaction says the
 * handler is (the agent's own must not show), then by MODE: default
 * (raise SIGTERM: the process ends of it), handler (its own handler runs:
 * "caught", exit 3), ignore (SIG_IGN: raise does nothing, exit 0), reset
 * (signal(SIGTERM, SIG_DFL) first, then as default). */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void on_term(int sig)
{
	(void)sig;
	static const char m[] = "caught\n";
	if (write(1, m, sizeof(m) - 1) < 0)
		_exit(4);
	_exit(3);
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	const char *mode = argv[2];
	char buf[4096];
	memset(buf, 'x', sizeof(buf));
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return 2;
	for (int i = 0; i < 64; i++)
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			return 2;
	close(fd);
	struct sigaction old;
	if (sigaction(SIGTERM, NULL, &old) != 0)
		return 2;
	printf("handler %s flags %d\n", old.sa_handler == SIG_DFL ? "default" :
	       old.sa_handler == SIG_IGN ? "ignored" : "other", old.sa_flags);
	if (!strcmp(mode, "handler")) {
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_term;
		if (sigaction(SIGTERM, &sa, &old) != 0)
			return 2;
		printf("before: %s\n", old.sa_handler == SIG_DFL ? "default" : "other");
	} else if (!strcmp(mode, "ignore")) {
		printf("before: %s\n", signal(SIGTERM, SIG_IGN) == SIG_DFL ? "default" : "other");
	} else if (!strcmp(mode, "reset")) {
		printf("before: %s\n", signal(SIGTERM, SIG_DFL) == SIG_DFL ? "default" : "other");
	} else if (strcmp(mode, "default") != 0) {
		return 2;
	}
	fflush(stdout);
	raise(SIGTERM);
	return 0;
}
