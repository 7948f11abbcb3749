/* testutil_tmux.h - a terminal viewer under test in tmux: one session at a
 * time per test process, on its own socket (-L), read back with
 * capture-pane. Killed by tu_tmux_kill (call it in the test's teardown). */
#ifndef IOGRAM_TESTUTIL_TMUX_H
#define IOGRAM_TESTUTIL_TMUX_H

#include <check.h>
#include <stdio.h>

extern char tu_screen[65536];   /* the last capture */

/* A session of w x h running cmd in dir (env: extra VAR=value words, or
 * ""), then a sentinel line "IOGTOP-EXIT=status" and a line with the
 * terminal's modes as `stty -a` gives them (one holding "speed"). In a
 * sanitized build (ASan), cmd's sanitizer reports go to dir/sanitizer-<session>.<pid>
 * (ASAN_OPTIONS and UBSAN_OPTIONS as the test has them, plus log_path;
 * a program that changes directory writes them there), not to the screen. */
void tu_tmux_start(const char *dir, int w, int h, const char *env, const char *cmd);
void tu_tmux_kill(void);
/* The session's tmux socket name (-L), "" when none. */
const char *tu_tmux_session(void);
/* Kill every tmux server with a socket under tmpdir (the TMUX_TMPDIR the
 * test set): the sessions of tests that failed before their teardown. */
void tu_tmux_sweep(const char *tmpdir);
/* A tmux suite's start: tmux is there, dir (len bytes) is a new temporary
 * directory named after the suite and the sessions' TMUX_TMPDIR; 0, or -1
 * said on stderr. Its end: every session under dir swept, dir removed when
 * nothing failed (else kept, and said); the exit status. */
int tu_tmux_suite_begin(const char *name, char *dir, size_t len);
int tu_tmux_suite_end(const char *name, const char *dir, int failed);
/* The screen into tu_screen; esc 1: with escape sequences, 2: wrapped
 * lines joined. */
const char *tu_tmux_capture(int esc);
/* tmux send-keys words ("0", "n", "Escape"). */
void tu_tmux_keys(const char *k);
/* Wait up to secs until the screen holds text (present 1) or not (0). */
int tu_tmux_wait(const char *text, int present, double secs);

/* The file name of the newest snapshot directory under dir
 * (dir/iogram-snap-*, as the viewer's x writes it), once it exists and is
 * not empty, waiting up to secs; its contents (static), or NULL. */
const char *tu_snap_file(const char *dir, const char *name, double secs);

/* The sanitizer reports of the last session's programs to stderr (then
 * renamed *.shown); how many. */
int tu_tmux_report(void);
/* Those in dir not yet printed (a suite's end), how many. */
int tu_tmux_reports_left(const char *dir);

/* On failure the screen goes to stderr with the message, and the session's
 * sanitizer reports. */
#define TU_SCREEN_CHECK(cond, ...) do { \
	int ok_ = (cond) ? 1 : 0; \
	if (!ok_) { \
		fprintf(stderr, "---- screen ----\n%s\n----------------\n", tu_screen); \
		tu_tmux_report(); \
	} \
	ck_assert_msg(ok_, __VA_ARGS__); \
} while (0)

#define TU_EXPECT(text, secs) TU_SCREEN_CHECK(tu_tmux_wait(text, 1, secs), "'%s' not on screen", text)
#define TU_EXPECT_NOT(text, secs) TU_SCREEN_CHECK(tu_tmux_wait(text, 0, secs), "'%s' still on screen", text)

#endif
