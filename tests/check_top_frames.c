/* check_top_frames.c - iogram-top's frames drawn headless (its panels into
 * an ncurses screen written to /dev/null, read back with winnstr) while its
 * keys move a replay about: a seek or a replay played again from the start
 * replaces the feed's model (proto/feed.c start_over), and no panel may draw
 * from what the old one owned, nor show it.
 *
 * The access panel keeps its file list between frames when computing it is
 * costly (no sooner than 19 times what the last took); the list pointed into
 * the model, so a frame right after End then p (the CI flake of `tui / top`
 * test_keys under ASan) read freed file names; and a seek forward while
 * paused showed the old position until the next key. Here the panel keeps
 * what it computed as if that had taken seconds (panel_access_hold), so
 * every frame after a key comes within that time, as it did in CI when the
 * previous computation had been slowed down. */
#define NCURSES_WIDECHAR 1
#include <check.h>
#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "top.h"

#define ROWS 48
#define COLS_ 160

static char dir[256], replay[600], many[600];

static void setup(void)
{
	tu_tmpdir(dir, sizeof(dir), "iogram-check-top-frames");
	snprintf(replay, sizeof(replay), "%s/job.iogr", dir);
	const char *synth = tu_env("IOGRAM_SYNTH");
	if (tu_system(tu_fmt("%s --nodes 2 --seconds 30 --seed 7 -o %s --truth %s/truth >/dev/null",
	                     synth, replay, dir)) != 0) {
		fprintf(stderr, "check_top_frames: iogram-synth failed\n");
		exit(1);
	}
	/* 120 ranks: more rows than the nodes panel has lines */
	snprintf(many, sizeof(many), "%s/many.iogr", dir);
	if (tu_system(tu_fmt("%s --nodes 30 --sources-per-node 4 --seconds 20 --seed 9 -o %s --truth %s/truth2 "
	                     ">/dev/null", synth, many, dir)) != 0) {
		fprintf(stderr, "check_top_frames: iogram-synth failed\n");
		exit(1);
	}
}

static void teardown(void)
{
	tu_rmdir_all(dir);
}

/* An application as iogram-top's main sets it up, on a screen nobody sees. */
typedef struct harness {
	top_app app;
	SCREEN *scr;
	FILE *out, *in;
} harness;

static void harness_open(harness *h, const char *path)
{
	memset(h, 0, sizeof(*h));
	h->out = fopen("/dev/null", "w");
	h->in = fopen("/dev/null", "r");
	ck_assert(h->out && h->in);
	h->scr = newterm("xterm", h->out, h->in);
	ck_assert_msg(h->scr != NULL, "newterm xterm: no terminfo?");
	resizeterm(ROWS, COLS_);
	top_app *a = &h->app;
	view_init(&a->view, 0);
	a->view.layer = IOGP_LAYER_POSIX;
	a->view.weight = IOGP_WEIGHT_COUNT;
	a->snap_dir = dir;
	a->heat = iogp_heat_new();
	draw_setup(&a->surf, stdscr, 0, 0);
	top_input_opts io;
	memset(&io, 0, sizeof(io));
	io.replay = path;
	char err[1024];
	ck_assert_msg(input_open(&a->in, &io, err, sizeof(err)) == 0, "input_open: %s", err);
}

static void harness_close(harness *h)
{
	input_close(h->app.in);
	iogp_heat_free(h->app.heat);
	iogp_node_table_free(&h->app.nodes);
	iogp_node_table_free(&h->app.nodes_next);
	rates_mem_free(&h->app.rates);
	endwin();
	delscreen(h->scr);
	fclose(h->out);
	fclose(h->in);
}

/* A data frame as top.c's draw_all draws it (without the message and
 * help), its stop hook (top.c: a key waits) fn (NULL: none). */
static void frame_stop(harness *h, int (*fn)(void *), void *arg)
{
	top_app *a = &h->app;
	a->surf.rows = ROWS;
	a->surf.cols = COLS_;
	werase(stdscr);
	layout_compute(&a->layout, ROWS, COLS_, a->view.zoom);
	ck_assert(!a->layout.too_small);
	top_frame f;
	top_status st;
	app_frame(a, &f, &st);
	f.stop = fn;
	f.stop_arg = arg;
	panels_draw(&f, &a->surf, &a->layout);
}

static void frame(harness *h)
{
	frame_stop(h, NULL, NULL);
}

/* A frame without the frames' own tables: the nodes panel builds its
 * table whole (as a snapshot does), every row's every column. */
static void frame_whole(harness *h)
{
	top_app *a = &h->app;
	werase(stdscr);
	layout_compute(&a->layout, ROWS, COLS_, a->view.zoom);
	top_frame f;
	top_status st;
	app_frame(a, &f, &st);
	f.nodes = f.nodes_next = NULL;
	panels_draw(&f, &a->surf, &a->layout);
}

static int stop_always(void *arg)
{
	(*(int *)arg)++;
	return 1;
}

static void key(harness *h, int ch)
{
	ck_assert_msg(keys_dispatch(&h->app, ch), "key %d does nothing", ch);
}

/* Panel p's lines as drawn (ASCII: Unicode is off), one string. */
static void panel_text(harness *h, int p, char *buf, size_t len)
{
	top_rect r = h->app.layout.panel[p];
	ck_assert(h->app.layout.visible[p]);
	size_t o = 0;
	buf[0] = '\0';
	for (int y = r.y; y < r.y + r.h && o + (size_t)r.w + 2 < len; y++) {
		char line[COLS_ + 1];
		int n = mvwinnstr(stdscr, y, r.x, line, r.w < COLS_ ? r.w : COLS_);
		if (n < 0)
			n = 0;
		while (n > 0 && line[n - 1] == ' ')
			n--;
		line[n] = '\0';
		o += (size_t)snprintf(buf + o, len - o, "%s\n", line);
	}
}

/* The access panel after a key that replaces the model: as a frame that
 * computes everything afresh draws it (the window toggled away and back:
 * what the panel shows changed twice, so it cannot keep anything). */
static void check_access_fresh(harness *h, const char *after)
{
	static char shown[ROWS * (COLS_ + 2)], fresh[ROWS * (COLS_ + 2)];
	panel_text(h, IOGP_PANEL_ACCESS, shown, sizeof(shown));
	key(h, 'w');
	frame(h);
	key(h, 'W');
	frame(h);
	panel_text(h, IOGP_PANEL_ACCESS, fresh, sizeof(fresh));
	if (strcmp(shown, fresh))   /* Check's messages are short: the panels here */
		fprintf(stderr, "after %s the access panel showed\n%s\nbut the model it draws from "
		        "holds\n%s\n", after, shown, fresh);
	ck_assert_msg(!strcmp(shown, fresh), "after %s the access panel showed what the model "
	              "no longer holds (both on stderr)", after);
}

/* Paused, End, then p (play again from the start: the model is replaced),
 * then Space, each followed at once by a frame: with the access panel
 * zoomed, with every panel, a seek back (Home) and forward (.) while
 * paused. */
START_TEST(test_replay_again)
{
	harness h;
	harness_open(&h, replay);
	panel_access_hold(60000000000ull);   /* as if listing the files took seconds */
	frame(&h);
	key(&h, '4');   /* zoom the access panel */
	ck_assert_int_eq(h.app.view.zoom, IOGP_PANEL_ACCESS);
	key(&h, ' ');   /* paused, as test_keys in check_top.c is by then */
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < 10; i++) {
			frame(&h);
			key(&h, KEY_END);
			frame(&h);
			double speed;
			int paused, at_end;
			iogp_feed_play_state(input_feed(h.app.in), &speed, &paused, &at_end);
			ck_assert_msg(at_end && paused, "End: not paused at the end");
			key(&h, 'p');   /* unpaused at the end: plays again from the start */
			frame(&h);
			iogp_feed_play_state(input_feed(h.app.in), &speed, &paused, &at_end);
			ck_assert_msg(!at_end && !paused, "p at the end: not played again");
			check_access_fresh(&h, "End, p");
			key(&h, ' ');
			frame(&h);
			ck_assert(iogp_feed_paused(input_feed(h.app.in)));
		}
		/* paused at the end, Home: a frame, then nothing moves until a key */
		key(&h, KEY_END);
		frame(&h);
		key(&h, KEY_HOME);
		frame(&h);
		check_access_fresh(&h, "End, Home (paused)");
		/* paused, forward: the same model, later; no frame comes by
		 * itself while paused, so the one after the key must show it */
		for (int i = 0; i < 2; i++) {
			key(&h, '.');
			frame(&h);
			check_access_fresh(&h, ". (paused)");
		}
		if (round == 0) {
			key(&h, 'z');   /* unzoom: every panel, the same again */
			ck_assert_int_eq(h.app.view.zoom, -1);
		}
	}
	panel_access_hold(0);
	harness_close(&h);
}
END_TEST

/* The access panel's sampling note ("all 144 requests", "sampled 4 of 9
 * requests"): which samples it draws, whatever the time axis they are
 * drawn on (that moves with the frame). */
static void access_note(const char *text, char *note, size_t len)
{
	const char *e = strstr(text, " request");
	ck_assert_msg(e != NULL, "no sampling note in\n%s", text);
	const char *b = e;
	while (b > text && b[-1] != '\n')
		b--;
	snprintf(note, len, "%.*s", (int)(strcspn(b, "\n")), b);
}

/* A data frame's refresh of the access panel gives way to a waiting key:
 * it shows the samples the last refresh found (on the frame's own time
 * axis) and counts the refresh given up; the next frame refreshes. The
 * first refresh always ends (nothing to show else). */
START_TEST(test_refresh_gives_way)
{
	static char first[ROWS * (COLS_ + 2)], shown[ROWS * (COLS_ + 2)], later[ROWS * (COLS_ + 2)];
	char n_first[256], n_shown[256], n_later[256];
	harness h;
	harness_open(&h, replay);
	key(&h, '4');   /* the access panel zoomed */
	key(&h, ' ');   /* paused: frames move only by keys */
	key(&h, '.');   /* 10 s into the job (of 30): its files have samples */
	int calls = 0;
	unsigned given_up = panel_access_stopped();
	frame_stop(&h, stop_always, &calls);   /* the first: not given up */
	ck_assert_int_eq(calls, 0);
	ck_assert_uint_eq(panel_access_stopped(), given_up);
	panel_text(&h, IOGP_PANEL_ACCESS, first, sizeof(first));
	ck_assert_msg(strstr(first, "file 1/"), "no file shown:\n%s", first);
	access_note(first, n_first, sizeof(n_first));
	key(&h, '.');   /* forward while paused (the same model): the panel must refresh */
	frame_stop(&h, stop_always, &calls);
	ck_assert_int_gt(calls, 0);
	ck_assert_uint_eq(panel_access_stopped(), given_up + 1);
	panel_text(&h, IOGP_PANEL_ACCESS, shown, sizeof(shown));
	access_note(shown, n_shown, sizeof(n_shown));
	ck_assert_str_eq(n_shown, n_first);
	frame(&h);   /* no key waits: refreshed */
	ck_assert_uint_eq(panel_access_stopped(), given_up + 1);
	panel_text(&h, IOGP_PANEL_ACCESS, later, sizeof(later));
	access_note(later, n_later, sizeof(n_later));
	ck_assert_msg(strcmp(n_later, n_first), "10 s on, the same samples: %s", n_later);
	/* given up in the file's samples, its files gathered (the second ask) */
	key(&h, '.');
	tu_stopper second = { 0, 2 };
	frame_stop(&h, tu_stop_at, &second);
	ck_assert_int_eq(second.calls, 2);
	ck_assert_uint_eq(panel_access_stopped(), given_up + 2);
	panel_text(&h, IOGP_PANEL_ACCESS, shown, sizeof(shown));
	access_note(shown, n_shown, sizeof(n_shown));
	ck_assert_str_eq(n_shown, n_later);
	frame(&h);
	check_access_fresh(&h, ". (paused), then a frame");
	harness_close(&h);
}
END_TEST

/* The same for the nodes panel: a data frame builds its table aside and,
 * a key waiting, shows the last frame's; the next frame swaps in a new one. */
START_TEST(test_nodes_give_way)
{
	static char first[ROWS * (COLS_ + 2)], shown[ROWS * (COLS_ + 2)], later[ROWS * (COLS_ + 2)];
	harness h;
	harness_open(&h, replay);
	key(&h, '7');   /* the nodes panel zoomed */
	ck_assert_int_eq(h.app.view.zoom, IOGP_PANEL_NODES);
	key(&h, ' ');
	key(&h, '.');   /* 10 s into the job */
	int calls = 0;
	unsigned given_up = panel_nodes_stopped();
	frame_stop(&h, stop_always, &calls);   /* nothing built yet: not given up */
	ck_assert_int_eq(calls, 0);
	panel_text(&h, IOGP_PANEL_NODES, first, sizeof(first));
	ck_assert_msg(strstr(first, "median I/O time"), "no table:\n%s", first);
	key(&h, '.');   /* 10 s on, the same model */
	frame_stop(&h, stop_always, &calls);
	ck_assert_int_gt(calls, 0);
	ck_assert_uint_eq(panel_nodes_stopped(), given_up + 1);
	panel_text(&h, IOGP_PANEL_NODES, shown, sizeof(shown));
	ck_assert_msg(!strcmp(shown, first), "given up, the panel showed\n%s\nnot\n%s", shown, first);
	frame(&h);
	panel_text(&h, IOGP_PANEL_NODES, later, sizeof(later));
	ck_assert_msg(strcmp(later, first), "10 s on, the nodes panel is the same:\n%s", later);
	ck_assert_uint_eq(panel_nodes_stopped(), given_up + 1);
	/* what a frame that builds in place (no stop hook) shows is the same */
	static char again[ROWS * (COLS_ + 2)];
	key(&h, 'z');
	key(&h, '7');
	frame(&h);
	panel_text(&h, IOGP_PANEL_NODES, again, sizeof(again));
	ck_assert_msg(!strcmp(again, later), "swapped in\n%s\nbuilt in place\n%s", later, again);
	harness_close(&h);
}
END_TEST

/* The frames' own table is lazy (the rows off screen keep columns
 * pending) and the panel draws what a whole table draws: ranks and nodes,
 * ordered by every column both ways, since the start and in a window. */
START_TEST(test_lazy_rows)
{
	static char lazy[ROWS * (COLS_ + 2)], whole[ROWS * (COLS_ + 2)];
	harness h;
	harness_open(&h, many);
	key(&h, '7');
	key(&h, ' ');
	key(&h, '.');
	key(&h, '.');
	int checked = 0;
	for (int pass = 0; pass < 4; pass++) {
		if (pass == 1 || pass == 3)
			key(&h, 't');   /* ranks (120 rows), then nodes (30) */
		if (pass == 2)
			key(&h, 'w');   /* the last 10 s */
		for (int c = 0; c < 2 * IOGP_NT_NCOLS; c++) {
			frame(&h);
			panel_text(&h, IOGP_PANEL_NODES, lazy, sizeof(lazy));
			size_t pending = 0;
			for (size_t i = 0; i < h.app.nodes.n; i++)
				pending += h.app.nodes.rows[i].pending != 0;
			if (h.app.nodes.n > 100)   /* more rows than lines: some never filled */
				ck_assert_msg(pending > 0, "pass %d sort %d: no row left pending", pass, c);
			frame_whole(&h);
			panel_text(&h, IOGP_PANEL_NODES, whole, sizeof(whole));
			if (strcmp(lazy, whole))
				fprintf(stderr, "lazy\n%s\nwhole\n%s\n", lazy, whole);
			ck_assert_msg(!strcmp(lazy, whole), "pass %d sort %d: the lazy table draws otherwise "
			              "(both on stderr)", pass, c);
			checked += h.app.nodes.n > 100 && pending > 0;
			key(&h, c % 2 ? 'o' : 'O');   /* both ways, then the next column */
		}
	}
	ck_assert_int_ge(checked, 2 * 2 * IOGP_NT_NCOLS);   /* two passes of ranks */
	harness_close(&h);
}
END_TEST

/* f and F choose among the files the panel shows: neither the key nor its
 * frame gathers the list again (at 50,000 sources 25-30 ms each), and what
 * the frame shows is what a fresh computation shows. Once the time shown
 * moved (paused, a seek), the list is gathered again. */
START_TEST(test_file_keys_keep_list)
{
	static char text[ROWS * (COLS_ + 2)];
	harness h;
	harness_open(&h, replay);
	panel_access_hold(60000000000ull);   /* kept as at 50,000 sources: frames come within */
	key(&h, '4');
	key(&h, ' ');
	key(&h, '.');
	frame(&h);
	unsigned n0 = panel_access_lists();
	panel_text(&h, IOGP_PANEL_ACCESS, text, sizeof(text));
	ck_assert_msg(strstr(text, "busiest file 1/2"), "not the busiest of two:\n%s", text);
	key(&h, 'f');   /* the first, chosen */
	frame(&h);
	key(&h, 'f');   /* the second */
	frame(&h);
	ck_assert_uint_eq(panel_access_lists(), n0);
	panel_text(&h, IOGP_PANEL_ACCESS, text, sizeof(text));
	ck_assert_msg(strstr(text, "file 2/2") && !strstr(text, "busiest"), "f f:\n%s", text);
	check_access_fresh(&h, "f f");
	unsigned n1 = panel_access_lists();
	key(&h, 'F');
	frame(&h);
	ck_assert_uint_eq(panel_access_lists(), n1);
	panel_text(&h, IOGP_PANEL_ACCESS, text, sizeof(text));
	ck_assert_msg(strstr(text, "file 1/2"), "F:\n%s", text);
	check_access_fresh(&h, "f f F");
	n1 = panel_access_lists();
	key(&h, '.');   /* time moved: the list shown is of before */
	key(&h, 'f');
	ck_assert_uint_eq(panel_access_lists(), n1 + 1);
	frame(&h);
	check_access_fresh(&h, ". f");
	panel_access_hold(0);
	harness_close(&h);
}
END_TEST

int main(void)
{
	const tu_case cases[] = {
		{ "replay_again", test_replay_again },
		{ "refresh_gives_way", test_refresh_gives_way },
		{ "nodes_give_way", test_nodes_give_way },
		{ "file_keys_keep_list", test_file_keys_keep_list },
		{ "lazy_rows", test_lazy_rows },
	};
	return tu_run_suite("top_frames", cases, sizeof(cases) / sizeof(cases[0]), setup, teardown, 120);
}
