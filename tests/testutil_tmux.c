/* testutil_tmux.c - a terminal viewer under test in tmux (testutil_tmux.h). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"
#include "testutil_tmux.h"

char tu_screen[65536];
static char sock[64];

void tu_tmux_kill(void)
{
	if (sock[0])
		tu_system(tu_fmt("tmux -L %s kill-server >/dev/null 2>&1", sock));
	sock[0] = '\0';
}

void tu_tmux_start(const char *dir, int w, int h, const char *env, const char *cmd)
{
	static int n;
	tu_tmux_kill();
	snprintf(sock, sizeof(sock), "tu%d-%d", (int)getpid(), n++);
	int rc = tu_system(tu_fmt("cd %s && tmux -L %s -f /dev/null new-session -d -x %d -y %d "
	                          "\"env %s %s; echo IOGTOP-EXIT=\\$?; sleep 120\"",
	                          dir, sock, w, h, env, cmd));
	ck_assert_msg(rc == 0, "tmux new-session failed (%d)", rc);
}

const char *tu_tmux_capture(int esc)
{
	FILE *p = popen(tu_fmt("tmux -L %s capture-pane -p %s 2>/dev/null", sock,
	                       esc == 1 ? "-e" : esc == 2 ? "-J" : ""), "r");
	tu_screen[0] = '\0';
	if (!p)
		return tu_screen;
	size_t n = fread(tu_screen, 1, sizeof(tu_screen) - 1, p);
	tu_screen[n] = '\0';
	pclose(p);
	return tu_screen;
}

void tu_tmux_keys(const char *k)
{
	tu_system(tu_fmt("tmux -L %s send-keys %s", sock, k));
}

int tu_tmux_wait(const char *text, int present, double secs)
{
	double end = tu_now() + secs;
	do {
		tu_tmux_capture(0);
		if ((strstr(tu_screen, text) != NULL) == present)
			return 1;
		tu_sleep_ms(30);
	} while (tu_now() < end);
	return 0;
}

void tu_tmux_sweep(const char *tmpdir)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/tmux-%d", tmpdir, (int)getuid());
	DIR *d = opendir(path);
	if (!d)
		return;
	for (struct dirent *e; (e = readdir(d)) != NULL;)
		if (e->d_name[0] != '.')
			tu_system(tu_fmt("tmux -L %s kill-server >/dev/null 2>&1", e->d_name));
	closedir(d);
}

const char *tu_snap_file(const char *dir, const char *name, double secs)
{
	static char buf[65536];
	double end = tu_now() + secs;
	do {
		FILE *p = popen(tu_fmt("cat \"$(ls -td %s/iogram-snap-* 2>/dev/null | head -1)\"/%s 2>/dev/null", dir,
		                       name), "r");
		size_t n = p ? fread(buf, 1, sizeof(buf) - 1, p) : 0;
		if (p)
			pclose(p);
		buf[n] = '\0';
		if (n)
			return buf;
		tu_sleep_ms(100);
	} while (tu_now() < end);
	return NULL;
}

int tu_tmux_suite_begin(const char *name, char *dir, size_t len)
{
	if (tu_system("tmux -V >/dev/null 2>&1") != 0) {
		fprintf(stderr, "check_%s: tmux is needed\n", name);
		return -1;
	}
	tu_tmpdir(dir, len, tu_fmt("iogram-check-%s", name));
	setenv("TMUX_TMPDIR", dir, 1);
	unsetenv("TMUX");
	return 0;
}

int tu_tmux_suite_end(const char *name, const char *dir, int failed)
{
	tu_tmux_sweep(dir);   /* the sessions of tests that failed before their kill */
	if (!failed)
		tu_rmdir_all(dir);
	else
		fprintf(stderr, "check_%s: files kept in %s\n", name, dir);
	return failed ? 1 : 0;
}
