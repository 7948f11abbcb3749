/* check_keys.c - what the viewers say about their keys and options agrees
 * with the action table (proto/actions.c): the key lists of iogram-top's
 * and iogram-view's --help are the table's rows for that viewer, in order;
 * the man pages name every key of the table (and iogram-top's names no key
 * the table lacks); -o/--record, -W/--window and -w mean the same in both;
 * iogram-top without a terminal over ssh suggests ssh -t. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iogp.h"
#include "iogp_actions.h"
#include "testutil.h"

/* stdout (or stderr) of argv, as text. */
static char *run_out(char *const argv[], int err, int *status)
{
	tu_opts o = { .null_in = 1 };
	tu_result r = tu_capture(argv, &o, 30);
	*status = r.status;
	char *t = strdup(err ? (r.err ? r.err : "") : (r.out ? r.out : ""));
	tu_result_free(&r);
	ck_assert_ptr_nonnull(t);
	return t;
}

/* The "  LABEL      help" lines after the line starting with head, up to
 * the next blank line, against the table's rows of viewer. */
static void keys_match(const char *text, const char *head, unsigned viewer, const char *who)
{
	const char *p = strstr(text, head);
	ck_assert_msg(p != NULL, "%s --help: no '%s'", who, head);
	p = strchr(p, '\n') + 1;
	size_t pos = 0, row = 0;
	char label[32];
	const iogp_action *a;
	while ((a = iogp_help_next(&pos, viewer, label, sizeof(label)))) {
		const char *e = strchr(p, '\n');
		ck_assert_msg(e && e > p, "%s --help: the key list ends before row %zu (%s)", who, row,
		              label);
		char line[256], want[256];
		snprintf(line, sizeof(line), "%.*s", (int)(e - p), p);
		snprintf(want, sizeof(want), "  %-10s %s%s", label, iogp_action_help(a, viewer),
		         a->replay_only ? " *" : "");
		ck_assert_msg(!strcmp(line, want), "%s --help row %zu: '%s', want '%s'", who, row, line,
		              want);
		p = e + 1;
		row++;
	}
	ck_assert_msg(*p == '\n', "%s --help: more key lines than the table has: %.40s", who, p);
	ck_assert_uint_gt(row, 20);
}

START_TEST(top_help)
{
	int st;
	char *t = run_out((char *[]){ (char *)tu_env("IOGRAM_TOP"), "--help", NULL }, 0, &st);
	ck_assert_int_eq(st, 0);
	keys_match(t, "Keys (", IOGP_VIEWER_TUI, "iogram-top");
	ck_assert_ptr_nonnull(strstr(t, "-o, --record FILE"));
	ck_assert_ptr_nonnull(strstr(t, "-W, --window S"));
	ck_assert_ptr_nonnull(strstr(t, "-w S|FILE"));
	free(t);
}
END_TEST

START_TEST(view_help)
{
	const char *view = getenv("IOGRAM_VIEW");
	ck_assert_msg(view && *view, "IOGRAM_VIEW not set (the case is registered only with it)");
	int st;
	char *t = run_out((char *[]){ (char *)view, "--help", NULL }, 0, &st);
	ck_assert_int_eq(st, 0);
	keys_match(t, "panel under the pointer:", IOGP_VIEWER_GTK, "iogram-view");
	/* x is the export of the panel under the pointer there, not log x */
	char label[32];
	const iogp_action *a;
	size_t pos = 0;
	int seen_x = 0;
	while ((a = iogp_help_next(&pos, IOGP_VIEWER_GTK, label, sizeof(label))))
		if (!strcmp(label, "x")) {
			seen_x = 1;
			ck_assert_ptr_null(strstr(iogp_action_help(a, IOGP_VIEWER_GTK), "log"));
			ck_assert_ptr_nonnull(strstr(iogp_action_help(a, IOGP_VIEWER_GTK), "export"));
		}
	ck_assert(seen_x);
	ck_assert_ptr_nonnull(strstr(t, "-o, --record FILE"));
	ck_assert_ptr_nonnull(strstr(t, "-W, --window S"));
	ck_assert_ptr_nonnull(strstr(t, "-w S|FILE"));
	free(t);
}
END_TEST

/* The KEYS section of a man page as words: groff's escapes and macros out. */
static char *man_keys(const char *page)
{
	size_t n;
	char *src = tu_load(tu_fmt("%s/%s", tu_env("IOGRAM_SRCDIR"), page), &n);
	ck_assert_ptr_nonnull(src);
	char *a = strstr(src, "\n.SH KEYS\n");
	ck_assert_msg(a != NULL, "%s: no KEYS section", page);
	char *z = strstr(a + 1, "\n.SH ");
	if (z)
		*z = '\0';
	char *out = calloc(strlen(a) + 2, 1), *o = out;
	*o++ = ' ';
	for (const char *p = a; *p; p++) {
		if (p[0] == '\\' && p[1] == '-') {   /* \- */
			*o++ = '-';
			p++;
		} else if (p[0] == '\\' && p[1] == '&') {
			p++;
		} else if (*p == '"' || *p == '\n') {
			*o++ = ' ';
		} else if (*p == '.' && (p == a || p[-1] == '\n') && p[1] >= 'A' && p[1] <= 'Z') {
			while (p[1] && p[1] != ' ' && p[1] != '\n')   /* .TP .B .BR .RB */
				p++;
		} else {
			*o++ = *p;
		}
	}
	*o++ = ' ';
	*o = '\0';
	free(src);
	return out;
}

/* Is key a word of text (between spaces, commas around it allowed)?
 * Names of keys ("space", "Enter") in any case, letters exactly. */
static int has_word(const char *text, const char *key)
{
	size_t k = strlen(key);
	for (const char *p = text; (p = k > 1 ? strcasestr(p, key) : strstr(p, key)); p++) {
		char b = p == text ? ' ' : p[-1], e = p[k];
		if ((b == ' ' || b == '(') && (e == ' ' || e == ',' || e == ')' || e == ':'))
			return 1;
	}
	return 0;
}

/* Every key of the label of every row of viewer appears in page's KEYS
 * ("S-Tab" as Shift-Tab, "^L" as Ctrl-L or Ctrl+L, the digits as a range). */
static void man_names_all(const char *page, unsigned viewer)
{
	char *text = man_keys(page), label[32];
	size_t pos = 0;
	const iogp_action *a;
	while ((a = iogp_help_next(&pos, viewer, label, sizeof(label)))) {
		char buf[64];
		snprintf(buf, sizeof(buf), "%s", a->label ? a->label : label);
		for (char *k = strtok(buf, " "); k; k = strtok(NULL, " ")) {
			char alt[3][32];
			snprintf(alt[0], 32, "%s", k);
			if (!strncmp(k, "S-", 2))
				snprintf(alt[0], 32, "Shift-%s", k + 2);
			snprintf(alt[1], 32, "Ctrl-%s", k[0] == '^' ? k + 1 : k);
			snprintf(alt[2], 32, "Ctrl+%s", k[0] == '^' ? k + 1 : k);
			int ok = has_word(text, alt[0]) || (k[0] == '^' && (has_word(text, alt[1]) ||
			                                                     has_word(text, alt[2])));
			if (!a->label) {   /* the digits: "1-9" or "1-5,8,9": its first and last */
				char lo[2] = { label[0], 0 }, hi[2] = { label[strlen(label) - 1], 0 };
				ok = strstr(text, lo) && strstr(text, hi);
			}
			ck_assert_msg(ok, "%s: key '%s' (%s) not in KEYS", page, k, a->help);
		}
	}
	free(text);
}

START_TEST(man_pages)
{
	man_names_all("viewer-tui/iogram-top.1", IOGP_VIEWER_TUI);
	man_names_all("viewer-gtk/iogram-view.1", IOGP_VIEWER_GTK);
	/* and iogram-top's page has no key the table lacks: each .TP entry's
	 * keys are bindings of iogram-top's rows */
	size_t n;
	char *src = tu_load(tu_fmt("%s/viewer-tui/iogram-top.1", tu_env("IOGRAM_SRCDIR")), &n);
	char *a = strstr(src, "\n.SH KEYS\n"), *z = strstr(a + 1, "\n.SH ");
	*z = '\0';
	int entries = 0;
	for (char *p = strstr(a, "\n.TP\n"); p; p = strstr(p + 1, "\n.TP\n")) {
		char line[128];
		char *h = p + 5, *e = strchr(h, '\n');
		snprintf(line, sizeof(line), "%.*s", (int)(e - h), h);
		char words[128] = "";
		size_t w = 0;
		for (char *q = line; *q && w + 1 < sizeof(words); q++) {
			if (*q == '\\' && q[1] == '-') {
				words[w++] = '-';
				q++;
			} else if (*q != '"') {
				words[w++] = *q;
			}
		}
		words[w] = '\0';
		char *tok = strtok(words, " ,");
		if (tok && tok[0] == '.')
			tok = strtok(NULL, " ,");   /* the macro */
		for (; tok; tok = strtok(NULL, " ,")) {
			if (!strcmp(tok, "-") && strstr(line, "1 \\- "))
				continue;   /* the digit range "1 - 9" */
			char key[32];
			snprintf(key, sizeof(key), "%s", tok);
			if (!strncmp(tok, "Shift-", 6))
				snprintf(key, sizeof(key), "S-%s", tok + 6);
			if (!strncmp(tok, "Ctrl-", 5))
				snprintf(key, sizeof(key), "C-%c", tok[5] | 0x20);
			int arg, digit = key[0] >= '1' && key[0] <= '9' && !key[1];
			ck_assert_msg(digit || iogp_action_find(key, IOGP_VIEWER_TUI, &arg),
			              "iogram-top.1 KEYS names '%s', a key iogram-top does not have", key);
		}
		entries++;
	}
	ck_assert_int_gt(entries, 20);
	free(src);
}
END_TEST

/* No terminal: over ssh (SSH_CONNECTION set) it says to use ssh -t. */
START_TEST(ssh_without_tty)
{
	int port = tu_free_port();
	char ep[64];
	snprintf(ep, sizeof(ep), "tcp://127.0.0.1:%d", port);
	setenv("SSH_CONNECTION", "10.0.0.1 50000 10.0.0.2 22", 1);
	int st;
	char *e = run_out((char *[]){ (char *)tu_env("IOGRAM_TOP"), "--listen", ep, NULL }, 1, &st);
	ck_assert_int_eq(st, 1);
	ck_assert_msg(strstr(e, "ssh -t") != NULL, "stderr: %s", e);
	free(e);
	unsetenv("SSH_CONNECTION");
	e = run_out((char *[]){ (char *)tu_env("IOGRAM_TOP"), "--listen", ep, NULL }, 1, &st);
	ck_assert_int_eq(st, 1);
	ck_assert_msg(strstr(e, "needs a terminal") && !strstr(e, "ssh -t"), "stderr: %s", e);
	free(e);
}
END_TEST

int main(void)
{
	/* iogram-view's case only in a build that has it (meson sets IOGRAM_VIEW
	 * then): never a silent pass */
	const char *view = getenv("IOGRAM_VIEW");
	const tu_case all[] = {
		{ "top_help", top_help },
		{ "man_pages", man_pages },
		{ "ssh_without_tty", ssh_without_tty },
		{ "view_help", view_help },
	};
	size_t n = sizeof(all) / sizeof(all[0]) - !(view && *view);
	return tu_run_suite("keys", all, n, NULL, NULL, 60);
}
