/* top.c - iogram-top: arguments, the terminal, and the loop that feeds the
 * model, reads keys and redraws at most a few times a second, skipping
 * frames while the terminal has not taken the last one. */
#define NCURSES_WIDECHAR 1
#include <curses.h>
#include <errno.h>
#include <getopt.h>
#include <langinfo.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "top.h"
#include "iogp_sys.h"

#define FRAME_NS 1000000000ull       /* data-driven redraws: at most 1/s live */
#define KEY_FRAME_NS 30000000ull     /* a key redraws at once (bounded: after the
                                      * last key's frame, not a data frame's) */
#define WORK_SLICE_NS 4000000ull     /* work between frames, a slice at a time */
#define SETTLE_NS 1000000000ull      /* a round over the nodes' logs this often */
#define SETTLE_LEAD_NS 150000000ull  /* ... and this long before each frame is due */
#define MAX_FRAME_NS 8000000000ull   /* slowest pace on a congested link */
#define OUTQ_LIMIT 2048              /* bytes still queued to the tty: skip */

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
	got_signal = sig;
}

/* The key list, from the action table (as the ? overlay and iogram-view). */
static void help_keys(FILE *out)
{
	size_t pos = 0;
	char label[16];
	const iogp_action *a;
	while ((a = iogp_help_next(&pos, IOGP_VIEWER_TUI, label, sizeof(label))))
		fprintf(out, "  %-10s %s%s\n", label, iogp_action_help(a, IOGP_VIEWER_TUI),
		        a->replay_only ? " *" : "");
}

static void usage(FILE *out)
{
	fprintf(out,
	"usage: iogram-top [--listen ENDPOINT]... [--connect ENDPOINT]... [--replay FILE]\n"
	"                  [--record FILE] [--demo] [--window SECONDS] [--duration SECONDS]\n"
	"                  [--snapshot-dir DIR] [--layer posix|stdio|mpiio] [--weight count|bytes]\n"
	"                  [--no-color] [--no-unicode] [--any-address]\n"
	"\n"
	"A live dashboard of I/O in the terminal: request sizes, queue depth, latency\n"
	"(p50/p90/p99/max), the access pattern of a file, read/write rates per node, the\n"
	"job's I/O phases (8) and its findings (9), from agents (iogram-run, libiogram),\n"
	"relays or a replay file.\n"
	"\n"
	"  -l, --listen E      listen for agents on E (default " IOGP_DEFAULT_ENDPOINT ",\n"
	"                      where agents connect when nothing is set)\n"
	"  -c, --connect E     subscribe to a relay's publish endpoint E\n"
	"  -r, --replay FILE   play a recording (.iogr): pause, speed, seek\n"
	"  -o, --record FILE   record what arrives to FILE from the start (R toggles)\n"
	"  -D, --demo          run the built-in demo workload and show it\n"
	"  -W, --window S      start with \"last S seconds\" instead of \"since start\"\n"
	"  -w S|FILE           --window S when S is a number, else --record FILE\n"
	"                      (as in iogram-view; -w FILE was iogram-top's --record)\n"
	"  -t, --duration S    quit after S seconds\n"
	"      --snapshot-dir DIR  where the x key writes its CSV directory (default .)\n"
	"      --layer L       show the posix (system calls, default) or stdio layer (y cycles)\n"
	"      --weight W      request-size bars by count (default) or by bytes (v toggles)\n"
	"      --no-color      monochrome (also when NO_COLOR is set)\n"
	"      --no-unicode    plain ASCII (also when the locale is not UTF-8)\n"
	"      --any-address   allow --listen beyond loopback\n"
	"  -h, --help          this help;  -V, --version  the version\n"
	"\n"
	"Keys (? lists them in the terminal; * in a replay only):\n");
	help_keys(out);
	fprintf(out, "\n"
	"Exit status: 0 ok, 1 runtime error (cannot listen, unreadable file, no\n"
	"terminal), 2 usage error.\n"
	"\n"
	"EXAMPLES\n"
	"  iogram-top --demo\n"
	"  iogram-top                       # then: iogram-run -- ./app   (another terminal)\n"
	"  iogram-top --replay data/demo.iogr\n"
	"  iogram-top --connect tcp://login1:7462 --window 60 --record job.iogr\n");
}

static int parse_seconds(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !(v > 0) || v > 86400 * 365)
		return -1;
	*out = v;
	return 0;
}

static void draw_too_small(top_surf *s, const top_layout *l, int rows, int cols)
{
	char a[96], b[96];
	snprintf(a, sizeof(a), "terminal too small: %dx%d", cols, rows);
	snprintf(b, sizeof(b), "need %dx%d (a zoomed panel: 40x8)", l->min_cols, l->min_rows);
	int y = rows / 2 - 1;
	draw_text(s, y < 0 ? 0 : y, 0, cols, ST_BAD, a);
	draw_text(s, y + 1, 0, cols, ST_NORMAL, b);
	draw_text(s, y + 2, 0, cols, ST_DIM, "q quits, 1-5 zoom");
}

/* A status message longer than the header line: the whole of it, wrapped
 * at spaces, at the bottom of the screen. */
static void draw_message(top_surf *s, const top_view *v, uint64_t mono, int rows, int cols)
{
	if (!v->msg[0] || mono >= v->msg_until || (int)strlen(v->msg) <= cols / 2 || cols < 10)
		return;
	char lines[16][512];
	int n = 0;
	const char *p = v->msg;
	while (*p && n < 16) {
		int len = (int)strlen(p), take = len;
		if (take > cols) {
			take = cols;
			while (take > cols / 2 && p[take] != ' ')
				take--;
			if (p[take] != ' ')
				take = cols;
		}
		snprintf(lines[n++], sizeof(lines[0]), "%.*s", take, p);
		p += take;
		while (*p == ' ')
			p++;
	}
	if (n > rows / 2)
		n = rows / 2;
	for (int i = 0; i < n; i++) {
		int y = rows - n + i;
		draw_clear(s, (top_rect){ y, 0, 1, cols });
		draw_text(s, y, 0, cols, ST_STATUS, lines[i]);
	}
}

/* A key waits on the terminal (top_frame.stop of a data frame). */
static int key_waiting(void *arg)
{
	(void)arg;
	struct pollfd p = { .fd = 0, .events = POLLIN };
	return poll(&p, 1, 0) > 0;
}

/* Draw a frame (key: for a key, else a data frame, whose slow refreshes
 * give way to a waiting key). Returns 1 when one gave way: what it shows is
 * older than the data, so a frame is still owed (else, paused or at a
 * replay's end, a byte that is no key would leave it so). */
static int draw_all(top_app *app, int key)
{
	unsigned given_up = panel_access_stopped() + panel_nodes_stopped();
	top_surf *s = &app->surf;
	s->rows = LINES;
	s->cols = COLS;
	werase(stdscr);
	layout_compute(&app->layout, LINES, COLS, app->view.zoom);
	top_frame f;
	top_status st;
	app_frame(app, &f, &st);
	f.key = key;
	if (!key)
		f.stop = key_waiting;
	if (app->layout.too_small) {
		draw_too_small(s, &app->layout, LINES, COLS);
		return 0;
	}
	panels_draw(&f, s, &app->layout);
	draw_message(s, &app->view, f.mono_ns, LINES, COLS);
	if (app->view.help)
		keys_draw_help(s, LINES, COLS, st.mode);
	return panel_access_stopped() + panel_nodes_stopped() != given_up;
}

/* Whether a data frame is wanted: new data, or time that moves (not a
 * paused live view, not a replay paused or at its end). The wait and the
 * draw below ask the same. */
static int frame_wanted(int replay, int paused, int at_end, int data_dirty)
{
	if (!replay && paused)
		return 0;   /* live, frozen: data goes in, the screen stays */
	return data_dirty || !(replay && (paused || at_end));
}

/* The nodes' logged bins, a round at a time (iogp_model_settle). */
struct settle {
	uint64_t at;    /* when the last round began */
	size_t left;    /* nodes the round has still to take */
};

/* When the next data frame is due (0: none wanted). */
static uint64_t frame_due_at(int replay, int paused, int at_end, int data_dirty, uint64_t last_frame,
                             uint64_t interval)
{
	return frame_wanted(replay, paused, at_end, data_dirty) ? last_frame + interval : 0;
}

/* When the round before the frame due at frame_due begins; 0 when one has
 * begun for it (or no frame is due). */
static uint64_t lead_round_at(const struct settle *st, uint64_t frame_due)
{
	return frame_due > SETTLE_LEAD_NS && st->at + SETTLE_LEAD_NS < frame_due ? frame_due - SETTLE_LEAD_NS
	                                                                         : 0;
}

/* Between frames, a slice of what the next frames would otherwise wait
 * for: the findings under way (insights_work), then a round over the
 * nodes' logged bins, so that the nodes table (key 7) does not apply a few
 * seconds of them in a key's frame: once a second, and SETTLE_LEAD_NS
 * before the next frame is due (frame_due, 0: none), so that a frame's own
 * settle takes what came since (live at 50,000 sources with the nodes
 * table shown, a frame's settle took 20-80 ms, a key waiting behind it).
 * Returns 1 while work remains, 2 when findings just ended, 0 when there
 * is none. */
static int idle_work(top_app *app, struct settle *st, uint64_t frame_due)
{
	iogp_model *m = iogp_feed_model(input_feed(app->in));
	uint64_t t0 = iogp_mono_ns();
	int w = insights_work(m, WORK_SLICE_NS);
	if (w != 0)
		return w;
	uint64_t lead = lead_round_at(st, frame_due);
	if (st->left == 0 && ((lead && t0 >= lead) || t0 >= st->at + SETTLE_NS)) {
		st->left = iogp_model_node_count(m);
		st->at = t0;
	}
	while (st->left > 0 && iogp_mono_ns() < t0 + WORK_SLICE_NS) {
		size_t k = st->left < 64 ? st->left : 64;
		iogp_model_settle(m, k);
		st->left -= k;
	}
	return st->left > 0;
}

/* Send the frame unless the terminal still holds much of the last one. */
static int present(uint64_t *pace)
{
	int q = 0;
	if (ioctl(1, TIOCOUTQ, &q) == 0 && q > OUTQ_LIMIT) {
		if (*pace < MAX_FRAME_NS)
			*pace *= 2;
		return 0;
	}
	uint64_t t0 = iogp_mono_ns();
	doupdate();
	uint64_t dt = iogp_mono_ns() - t0;
	/* a write that blocked is a slow link too */
	if (dt > 100000000ull && *pace < MAX_FRAME_NS)
		*pace *= 2;
	else if (dt < 20000000ull && *pace > FRAME_NS)
		*pace /= 2;
	return 1;
}

int main(int argc, char **argv)
{
	enum { OPT_NOCOLOR = 256, OPT_NOUNI, OPT_ANY, OPT_SNAPDIR, OPT_LAYER, OPT_WEIGHT };
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "connect", required_argument, NULL, 'c' },
		{ "replay", required_argument, NULL, 'r' },
		{ "record", required_argument, NULL, 'o' },
		{ "demo", no_argument, NULL, 'D' },
		{ "window", required_argument, NULL, 'W' },
		{ "duration", required_argument, NULL, 't' },
		{ "snapshot-dir", required_argument, NULL, OPT_SNAPDIR },
		{ "layer", required_argument, NULL, OPT_LAYER },
		{ "weight", required_argument, NULL, OPT_WEIGHT },
		{ "no-color", no_argument, NULL, OPT_NOCOLOR },
		{ "no-colour", no_argument, NULL, OPT_NOCOLOR },
		{ "no-unicode", no_argument, NULL, OPT_NOUNI },
		{ "any-address", no_argument, NULL, OPT_ANY },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	top_input_opts io;
	memset(&io, 0, sizeof(io));
	const char *record = NULL, *snapdir = ".";
	double window = 0, duration = 0;
	int nocolor = 0, nouni = 0, layer = IOGP_LAYER_POSIX, weight = IOGP_WEIGHT_COUNT, c;
	while ((c = getopt_long(argc, argv, "l:c:r:o:w:DW:t:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'l':
		case 'c': {
			int *n = c == 'l' ? &io.nlisten : &io.nconnect;
			if (*n >= 16) {
				fprintf(stderr, "iogram-top: at most 16 --%s endpoints\n", c == 'l' ? "listen" : "connect");
				return IOGP_EXIT_USAGE;
			}
			(c == 'l' ? io.listen : io.connect)[(*n)++] = optarg;
			break;
		}
		case 'r': io.replay = optarg; break;
		case 'o': record = optarg; break;
		case 'w':   /* a number: --window (as iogram-view's -w), else --record */
			if (parse_seconds(optarg, &window) < 0)
				record = optarg;
			break;
		case 'D': io.demo = 1; break;
		case 'W':
		case 't':
			if (parse_seconds(optarg, c == 'W' ? &window : &duration) < 0) {
				fprintf(stderr, "iogram-top: bad --%s '%s' (seconds > 0)\n",
				        c == 'W' ? "window" : "duration", optarg);
				return IOGP_EXIT_USAGE;
			}
			break;
		case OPT_SNAPDIR: snapdir = optarg; break;
		case OPT_LAYER:
			if ((layer = iogp_layer_find(optarg)) < 0) {
				char names[64];
				fprintf(stderr, "iogram-top: bad --layer '%s' (one of %s)\n", optarg,
				        iogp_layer_names(names, sizeof(names)));
				return IOGP_EXIT_USAGE;
			}
			break;
		case OPT_WEIGHT:
			if ((weight = iogp_size_weight_find(optarg)) < 0) {
				fprintf(stderr, "iogram-top: bad --weight '%s' (count or bytes)\n", optarg);
				return IOGP_EXIT_USAGE;
			}
			break;
		case OPT_NOCOLOR: nocolor = 1; break;
		case OPT_NOUNI: nouni = 1; break;
		case OPT_ANY: io.any_address = 1; break;
		case 'h': usage(stdout); return IOGP_EXIT_OK;
		case 'V': printf("iogram-top %s\n", IOGRAM_VERSION); return IOGP_EXIT_OK;
		default: usage(stderr); return IOGP_EXIT_USAGE;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "iogram-top: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return IOGP_EXIT_USAGE;
	}
	if ((io.replay && (io.demo || io.nlisten || io.nconnect)) || (io.demo && (io.nlisten || io.nconnect))) {
		fprintf(stderr, "iogram-top: --replay, --demo and --listen/--connect exclude each other\n");
		return IOGP_EXIT_USAGE;
	}
	setlocale(LC_ALL, "");
	int unicode = !nouni && !strcmp(nl_langinfo(CODESET), "UTF-8");
	const char *nc = getenv("NO_COLOR");
	int color = !nocolor && !(nc && nc[0]);

	iogp_handle_signals(on_signal, 1, 1);

	top_app app;
	memset(&app, 0, sizeof(app));
	view_init(&app.view, window);
	app.view.layer = layer;
	app.view.weight = weight;
	app.snap_dir = snapdir;
	app.heat = iogp_heat_new();
	char err[1024];
	int rc = input_open(&app.in, &io, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "iogram-top: %s\n", err);
		return rc == -2 ? IOGP_EXIT_USAGE : IOGP_EXIT_ERROR;
	}
	if (!isatty(0) || !isatty(1)) {
		const char *ssh = getenv("SSH_CONNECTION");
		if (ssh && ssh[0])   /* ssh HOST iogram-top: no terminal without -t */
			fprintf(stderr, "iogram-top: needs a terminal: over ssh, ask for one with "
			        "ssh -t HOST iogram-top ...\n");
		else
			fprintf(stderr, "iogram-top: needs a terminal (for files: iogram info, iogram export)\n");
		input_close(app.in);
		return IOGP_EXIT_ERROR;
	}
	if (record && iogp_feed_record_start(input_feed(app.in), record, err, sizeof(err)) < 0) {
		fprintf(stderr, "iogram-top: cannot record: %s\n", err);
		input_close(app.in);
		return IOGP_EXIT_ERROR;
	}

	SCREEN *scr = newterm(NULL, stdout, stdin);
	if (!scr) {
		fprintf(stderr, "iogram-top: cannot use terminal type '%s'\n", getenv("TERM") ? getenv("TERM") : "");
		input_close(app.in);
		return IOGP_EXIT_ERROR;
	}
	set_escdelay(25);
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	/* Home/End as vt220, rxvt, tmux and the Linux console send them, whatever
	 * terminfo says: over SSH the two rarely agree */
	static const char *const home[] = { "\033[1~", "\033[7~", "\033[H", "\033OH" };
	static const char *const end[] = { "\033[4~", "\033[8~", "\033[F", "\033OF" };
	for (size_t i = 0; i < sizeof(home) / sizeof(*home); i++) {
		if (key_defined(home[i]) <= 0)
			define_key(home[i], KEY_HOME);
		if (key_defined(end[i]) <= 0)
			define_key(end[i], KEY_END);
	}
	nodelay(stdscr, TRUE);
	curs_set(0);
	leaveok(stdscr, TRUE);
	draw_setup(&app.surf, stdscr, unicode, color);

	uint64_t start = iogp_mono_ns(), last_frame = 0, last_key = 0, pace = FRAME_NS;
	int key_dirty = 1, data_dirty = 1, hangup = 0, work = 0;
	struct settle settle = { 0, 0 };
	while (!app.quit && !got_signal) {
		uint64_t now = iogp_mono_ns();
		if (duration > 0 && (double)(now - start) / 1e9 >= duration)
			break;
		/* the play state only: the full status (a count of every source's
		 * state) is taken once a frame, never per wake-up */
		double speed;
		int paused, at_end, replay = input_mode(app.in) == MODE_REPLAY;
		iogp_feed_play_state(input_feed(app.in), &speed, &paused, &at_end);
		/* replay plays at up to 4 frames per second when fast */
		uint64_t interval = pace;
		if (replay && speed > 1 && !paused)
			interval = (uint64_t)((double)pace / (speed < 4 ? speed : 4));
		/* a frame is due only when one would be drawn: else the loop waits
		 * for input or messages (it spun at 100% of a core, a frame due
		 * ever since the last one) */
		uint64_t frame_due = frame_due_at(replay, paused, at_end, data_dirty, last_frame, interval);
		uint64_t due = key_dirty ? last_key + KEY_FRAME_NS : frame_due ? frame_due : now + 1000000000ull;
		int wait_ms = due > now ? (int)((due - now) / 1000000) + 1 : 0;
		int rdue = iogp_feed_next_due_ms(input_feed(app.in));
		if (rdue >= 0 && rdue < wait_ms)
			wait_ms = rdue;
		if (wait_ms > 1000)
			wait_ms = 1000;
		if (duration > 0) {   /* --duration ends on time, also when nothing is drawn */
			double left_ms = duration * 1e3 - (double)(now - start) / 1e6;
			if (left_ms < wait_ms)
				wait_ms = left_ms > 0 ? (int)left_ms + 1 : 0;
		}
		/* the round over the nodes' logs before the frame (idle_work)
		 * begins on a wake-up: one then, when nothing else comes */
		uint64_t lead = lead_round_at(&settle, frame_due);
		if (lead) {
			int lead_ms = lead > now ? (int)((lead - now) / 1000000) + 1 : 0;
			if (lead_ms < wait_ms)
				wait_ms = lead_ms;
		}
		if (work)   /* findings under way: a slice each turn */
			wait_ms = 0;
		int tty_ready = iogp_feed_wait(input_feed(app.in), 0, wait_ms);
		if (tty_ready < 0)
			break;   /* the terminal is gone */
		/* keys first: a key's frame is drawn before the messages that
		 * queued meanwhile are taken in (after a long frame at 50,000
		 * sources that took 20-40 ms), they go in on the next turn */
		int ch, got = 0;
		for (int k = 0; k < 64 && (ch = getch()) != ERR; k++) {
			got = 1;
			if (ch == KEY_RESIZE) {
				key_dirty = 1;
				continue;
			}
			if (keys_dispatch(&app, ch))
				key_dirty = 1;
		}
		if (!(got && key_dirty && iogp_mono_ns() >= last_key + KEY_FRAME_NS) &&
		    input_pump(app.in) > 0)
			data_dirty = 1;
		/* readable without a key, again and again: the terminal is gone */
		hangup = tty_ready && !got ? hangup + 1 : 0;
		if (hangup > 100)
			break;
		now = iogp_mono_ns();
		iogp_feed_play_state(input_feed(app.in), &speed, &paused, &at_end);
		if (key_dirty && now >= last_key + KEY_FRAME_NS) {
			if (app.full_redraw) {
				clearok(curscr, TRUE);
				app.full_redraw = 0;
			}
			draw_all(&app, 1);
			wnoutrefresh(stdscr);
			if (present(&pace)) {
				key_dirty = 0;
				data_dirty = 0;
			}
			last_frame = last_key = now;
		} else if (frame_wanted(replay, paused, at_end, data_dirty) && now >= last_frame + interval) {
			int owed = draw_all(&app, 0);
			wnoutrefresh(stdscr);
			if (present(&pace) && !owed)
				data_dirty = 0;
			last_frame = now;
		}
		/* between frames, a slice at a time: a key waits for one at most */
		int first = insights_pending();
		work = idle_work(&app, &settle,
		                 frame_due_at(replay, paused, at_end, data_dirty, last_frame, interval));
		if (work == 2 && first)
			key_dirty = 1;   /* a new selection's findings: drawn now, also when paused */
		else if (work == 2)
			data_dirty = 1;
	}
	endwin();
	delscreen(scr);
	top_status st;
	input_status(app.in, &st);
	char rec[1024] = "";
	if (st.f.recording)
		snprintf(rec, sizeof(rec), "%s", st.f.rec_path);
	input_close(app.in);
	iogp_heat_free(app.heat);
	iogp_node_table_free(&app.nodes);
	iogp_node_table_free(&app.nodes_next);
	rates_mem_free(&app.rates);
	if (rec[0])
		fprintf(stderr, "iogram-top: recorded to %s\n", rec);
	return IOGP_EXIT_OK;
}
