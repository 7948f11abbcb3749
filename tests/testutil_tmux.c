/* testutil_tmux.c - a terminal viewer under test in tmux (testutil_tmux.h). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"
#include "testutil_tmux.h"

char tu_screen[65536];
static char sock[64];
/* the last session's sanitizer reports: san_dir/sanitizer-<session>.<pid> */
static char san_dir[512], san_name[128];

/* The test is built as the viewers are: in a sanitized build, their reports
 * go to files in the test's directory (the screen showed a report's last
 * lines only), printed when a check fails. */
#if defined(__SANITIZE_ADDRESS__)
#define TU_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TU_SANITIZED 1
#endif
#endif
#ifndef TU_SANITIZED
#define TU_SANITIZED 0
#endif

#define SAN_PREFIX "sanitizer-"
#define SAN_SHOWN ".shown"

/* "VAR=value:log_path=name" for env(1), the options the test has kept. The
 * name has no '/': the session starts in dir, and a path with directories
 * makes the runtime mkdir(2) them at start-up, which in a program that
 * preloads the agent (the demo's workers, iogram-run's children) reaches
 * its interposer before that can run (SIGSEGV in iog__resolve). */
static const char *san_env(const char *var, const char *name)
{
	const char *o = getenv(var);
	return tu_fmt("%s=%s%slog_path=%s", var, o && *o ? o : "", o && *o ? ":" : "", name);
}

static const char *san_session_env(const char *dir, const char *session)
{
	san_name[0] = '\0';
	if (!TU_SANITIZED)
		return "";
	snprintf(san_dir, sizeof(san_dir), "%s", dir);
	snprintf(san_name, sizeof(san_name), SAN_PREFIX "%s", session);
	return tu_fmt("%s %s", san_env("ASAN_OPTIONS", san_name), san_env("UBSAN_OPTIONS", san_name));
}

void tu_tmux_kill(void)
{
	if (sock[0])
		tu_system(tu_fmt("tmux -L %s kill-server >/dev/null 2>&1", sock));
	sock[0] = '\0';
}

const char *tu_tmux_session(void)
{
	return sock;
}

void tu_tmux_start(const char *dir, int w, int h, const char *env, const char *cmd)
{
	static int n;
	tu_tmux_kill();
	snprintf(sock, sizeof(sock), "tu%d-%d", (int)getpid(), n++);
	const char *san = san_session_env(dir, sock);
	int rc = tu_system(tu_fmt("cd %s && tmux -L %s -f /dev/null new-session -d -x %d -y %d "
	                          "\"env %s %s %s; echo IOGTOP-EXIT=\\$?; stty -a | tr '\\n' ' '; "
	                          "echo; sleep 120\"",
	                          dir, sock, w, h, san, env, cmd));
	ck_assert_msg(rc == 0, "tmux new-session failed (%d)", rc);
}

/* Print the reports in dir of session prefix ("sanitizer-tu12-3", its
 * programs' prefix.<pid>; NULL: every session's) not printed yet, and
 * rename them *.shown. */
static int print_reports(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	int n = 0;
	for (struct dirent *e; (e = readdir(d)) != NULL;) {
		size_t l = strlen(e->d_name), sl = strlen(SAN_SHOWN);
		const char *p = prefix ? prefix : SAN_PREFIX;
		size_t pl = strlen(p);
		if (strncmp(e->d_name, p, pl) || (prefix && e->d_name[pl] != '.') ||
		    (l > sl && !strcmp(e->d_name + l - sl, SAN_SHOWN)))
			continue;
		char path[1024];
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		char *text = tu_read_file(path, NULL);
		fprintf(stderr, "---- sanitizer report %s ----\n%s\n----------------\n", path,
		        text ? text : strerror(errno));
		free(text);
		rename(path, tu_fmt("%s" SAN_SHOWN, path));
		n++;
	}
	closedir(d);
	return n;
}

int tu_tmux_report(void)
{
	return san_name[0] ? print_reports(san_dir, san_name) : 0;
}

int tu_tmux_reports_left(const char *dir)
{
	return print_reports(dir, NULL);
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

/* A text found may be the first of a frame that reaches tmux in several
 * reads: the capture that holds it is kept only once the screen stood still
 * for 50 ms (the next capture the same), or when the text is gone from the
 * next one (a message shown briefly). At most 10 tries. */
static void settle_screen(const char *text)
{
	static char held[sizeof(tu_screen)];
	for (int k = 0; k < 10; k++) {
		memcpy(held, tu_screen, sizeof(held));
		tu_sleep_ms(50);
		tu_tmux_capture(0);
		if (!strcmp(held, tu_screen))
			return;
		if (!strstr(tu_screen, text)) {
			memcpy(tu_screen, held, sizeof(held));
			return;
		}
	}
}

int tu_tmux_wait(const char *text, int present, double secs)
{
	double end = tu_now() + secs;
	do {
		tu_tmux_capture(0);
		if ((strstr(tu_screen, text) != NULL) == present) {
			if (present)
				settle_screen(text);
			return 1;
		}
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
	tu_tmux_reports_left(dir);   /* those of tests that failed without TU_SCREEN_CHECK */
	if (!failed)
		tu_rmdir_all(dir);
	else
		fprintf(stderr, "check_%s: files kept in %s\n", name, dir);
	return failed ? 1 : 0;
}
