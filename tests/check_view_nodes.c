/* check_view_nodes.c - iogram-view's nodes and ranks panel in the real
 * window under Xvfb: 7 zooms it, the worst row is tinted where the same
 * table drawn here puts it, o (next column) re-sorts it so that the worst
 * row moves where the truth's p99 order says, a click on a column header
 * sorts by it, t shows a row per rank; the sidebar shows whole node names.
 * The screen is read back from the X server (XGetImage). */
#include <X11/XKBlib.h>
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <X11/extensions/XTest.h>
#include <X11/keysym.h>
#include <check.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "iogplot.h"
#include "session.h"
#include "testutil.h"

static const char *view_bin, *synth_bin;
static char dir[256], rec[600], truth[600];
static char display[32];
static pid_t xvfb;

static int x_error(Display *d, XErrorEvent *e)
{
	(void)d;
	if (e->error_code == BadWindow || e->error_code == BadDrawable)
		return 0;
	fprintf(stderr, "check_view_nodes: X error %d (request %d)\n", e->error_code, e->request_code);
	_exit(3);
}

static int x_answers(const char *name)
{
	Display *d = XOpenDisplay(name);
	if (!d)
		return 0;
	XCloseDisplay(d);
	return 1;
}

/* ---- the viewer ---- */

typedef struct viewer {
	pid_t pid;
	char log[700], shot[700];
} viewer;

static void start_view(viewer *v, const char *tag, char *const args[], const char *after)
{
	snprintf(v->log, sizeof(v->log), "%s/%s.log", dir, tag);
	snprintf(v->shot, sizeof(v->shot), "%s/%s-self.png", dir, tag);
	char *argv[32];
	int n = 0;
	argv[n++] = (char *)view_bin;
	for (int i = 0; args[i] && n < 30; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	char disp[64], shot[760], aft[64];
	snprintf(disp, sizeof(disp), "DISPLAY=%s", display);
	snprintf(shot, sizeof(shot), "IOGRAM_VIEW_SCREENSHOT=%s", v->shot);
	snprintf(aft, sizeof(aft), "IOGRAM_VIEW_SCREENSHOT_AFTER=%s", after);
	const char *env[] = { disp, "WAYLAND_DISPLAY", "GDK_BACKEND=x11", "NO_AT_BRIDGE=1",
	                      "GSETTINGS_BACKEND=memory", "GTK_THEME=Adwaita", shot, aft, NULL };
	v->pid = tu_spawn_opt(argv, &(tu_opts){ .err = v->log, .null_in = 1, .env = env });
}

static char *read_log(const viewer *v)
{
	static char buf[16384];
	buf[0] = 0;
	FILE *f = fopen(v->log, "r");
	if (f) {
		size_t n = fread(buf, 1, sizeof(buf) - 1, f);
		buf[n] = 0;
		fclose(f);
	}
	return buf;
}

static int wait_log(const viewer *v, const char *what, double timeout)
{
	for (double t0 = tu_now(); tu_now() - t0 < timeout; tu_sleep_ms(100)) {
		if (strstr(read_log(v), what))
			return 1;
		int st;
		if (waitpid(v->pid, &st, WNOHANG) == v->pid)
			return strstr(read_log(v), what) != NULL;
	}
	return 0;
}

static void stop_view(viewer *v)
{
	int st = tu_stop(v->pid, SIGTERM, 10);
	ck_assert_msg(st == 0, "iogram-view ended with status %d; log:\n%s", st, read_log(v));
}

typedef struct area {
	int w, h, rx, ry;
} area;

static void parse_area(const viewer *v, area *a)
{
	const char *p = strstr(read_log(v), "; dashboard ");
	ck_assert_ptr_nonnull(p);
	int wx, wy;
	ck_assert_int_eq(sscanf(p, "; dashboard %dx%d at window %d,%d root %d,%d", &a->w, &a->h, &wx, &wy,
	                        &a->rx, &a->ry), 6);
}

/* ---- X ---- */

typedef struct image {
	int w, h;
	uint32_t *px;   /* 0xRRGGBB */
} image;

static void image_from_root(image *im, const char *save)
{
	Display *d = XOpenDisplay(display);
	ck_assert_ptr_nonnull(d);
	Window root = DefaultRootWindow(d);
	XWindowAttributes wa;
	XGetWindowAttributes(d, root, &wa);
	XImage *x = XGetImage(d, root, 0, 0, (unsigned)wa.width, (unsigned)wa.height, AllPlanes, ZPixmap);
	ck_assert_ptr_nonnull(x);
	im->w = wa.width;
	im->h = wa.height;
	im->px = malloc((size_t)im->w * (size_t)im->h * 4);
	for (int y = 0; y < im->h; y++)
		for (int xx = 0; xx < im->w; xx++)
			im->px[(size_t)y * (size_t)im->w + (size_t)xx] = (uint32_t)XGetPixel(x, xx, y) & 0xffffff;
	XDestroyImage(x);
	XCloseDisplay(d);
	cairo_surface_t *s = cairo_image_surface_create_for_data((unsigned char *)im->px, CAIRO_FORMAT_RGB24,
	                                                         im->w, im->h, im->w * 4);
	cairo_surface_write_to_png(s, save);
	cairo_surface_destroy(s);
}

static Window find_window(Display *d, Window w, const char *name, int depth)
{
	char *wn = NULL;
	if (XFetchName(d, w, &wn) && wn) {
		int hit = !strcmp(wn, name);
		XFree(wn);
		if (hit)
			return w;
	}
	Window root, parent, *kids = NULL;
	unsigned n = 0;
	if (depth > 3 || !XQueryTree(d, w, &root, &parent, &kids, &n))
		return 0;
	Window found = 0;
	for (unsigned i = 0; i < n && !found; i++) {
		XWindowAttributes wa;
		if (XGetWindowAttributes(d, kids[i], &wa) && wa.map_state == IsViewable)
			found = find_window(d, kids[i], name, depth + 1);
	}
	if (kids)
		XFree(kids);
	return found;
}

static Window wait_window(Display *d, const char *name, double timeout)
{
	for (double t0 = tu_now(); tu_now() - t0 < timeout; tu_sleep_ms(100)) {
		Window w = find_window(d, DefaultRootWindow(d), name, 0);
		if (w)
			return w;
	}
	return 0;
}

static void key(Display *d, KeySym ks)
{
	KeyCode kc = XKeysymToKeycode(d, ks);
	ck_assert_msg(kc != 0, "no key for keysym %lu", (unsigned long)ks);
	int shift = XkbKeycodeToKeysym(d, kc, 0, 0) != ks;
	KeyCode kshift = XKeysymToKeycode(d, XK_Shift_L);
	if (shift)
		XTestFakeKeyEvent(d, kshift, True, 0);
	XTestFakeKeyEvent(d, kc, True, 0);
	XTestFakeKeyEvent(d, kc, False, 0);
	if (shift)
		XTestFakeKeyEvent(d, kshift, False, 0);
	XSync(d, False);
	tu_sleep_ms(30);
}

static void focus(Display *d, Window w)
{
	XWindowAttributes wa;
	XGetWindowAttributes(d, w, &wa);
	int x, y;
	Window child;
	XTranslateCoordinates(d, w, DefaultRootWindow(d), wa.width / 2, wa.height / 2, &x, &y, &child);
	XTestFakeMotionEvent(d, -1, x, y, 0);
	XSetInputFocus(d, w, RevertToPointerRoot, CurrentTime);
	XSync(d, False);
	tu_sleep_ms(200);
}

static void click(Display *d, int x, int y)
{
	XTestFakeMotionEvent(d, -1, x, y, 0);
	XTestFakeButtonEvent(d, 1, True, 0);
	XTestFakeButtonEvent(d, 1, False, 0);
	XSync(d, False);
	tu_sleep_ms(100);
}

/* ---- the same table, drawn here: where its rows are ---- */

typedef struct rowpos {
	int y;              /* middle of the line */
	char name[64];
} rowpos;

/* The table's lines (not the stragglers) of panel w x h in view v, top
 * down, from the tooltips of each pixel line; *header the header's middle. */
static int table_rows(const iogplot_frame *f, const iogplot_view *v, double w, double h, rowpos *out,
                      int max, int *header)
{
	iogplot_style st;
	iogplot_style_init(&st, 0);
	char tip[1024], last[1024] = "";
	int n = 0, y0 = 0, prev = -10, in = 0;
	*header = -1;
	for (int y = 0; y <= (int)h; y++) {
		int k = y < (int)h ? iogplot_panel_tooltip(&st, f, v, IOGPLOT_NODES, w, h, 60, y, tip, sizeof(tip)) : 0;
		if (k > 0 && !strcmp(tip, last) && prev == y - 1) {
			prev = y;
			continue;
		}
		/* a run of one tooltip ended at prev */
		if (last[0]) {
			if (!strncmp(last, "Sorted by", 9)) {
				*header = (y0 + prev) / 2;
				in = 1;
			} else if (in && n < max) {
				const char *e = strchr(last, '\n');
				snprintf(out[n].name, sizeof(out[n].name), "%.*s", e ? (int)(e - last) : 40, last);
				char *paren = strstr(out[n].name, " (the largest");
				if (paren)
					*paren = 0;
				out[n++].y = (y0 + prev) / 2;
			}
		}
		if (k <= 0) {
			if (in && n)   /* past the table: the stragglers follow after a space */
				break;
			last[0] = 0;
			continue;
		}
		snprintf(last, sizeof(last), "%s", tip);
		y0 = prev = y;
	}
	return n;
}

/* Is the row at screen line y tinted with the warning colour at its start? */
static int tinted(const image *im, int x0, int y)
{
	iogplot_style st;
	iogplot_style_init(&st, 0);
	int r = (int)lround(st.warn.r * 255), g = (int)lround(st.warn.g * 255), b = (int)lround(st.warn.b * 255);
	for (int x = x0; x < x0 + 40 && x < im->w; x++) {
		uint32_t p = im->px[(size_t)y * (size_t)im->w + (size_t)x];
		if (abs((int)(p >> 16 & 255) - r) + abs((int)(p >> 8 & 255) - g) + abs((int)(p & 255) - b) < 40)
			return 1;
	}
	return 0;
}

static int truth_p99_order(char names[][32], int max)
{
	FILE *f = fopen(tu_fmt("%s/nodes.csv", truth), "r");
	ck_assert_ptr_nonnull(f);
	char line[512];
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
	uint64_t p99[16], r, p50;
	double a, b, c;
	int n = 0;
	while (n < max && fscanf(f, "%31[^,],%" SCNu64 ",%" SCNu64 ",%" SCNu64 ",%lf,%lf,%lf\n", names[n], &r,
	                         &p50, &p99[n], &a, &b, &c) == 7)
		n++;
	fclose(f);
	for (int i = 1; i < n; i++)
		for (int k = i; k > 0 && p99[k - 1] < p99[k]; k--) {
			uint64_t x = p99[k];
			p99[k] = p99[k - 1];
			p99[k - 1] = x;
			char t[32];
			memcpy(t, names[k], 32);
			memcpy(names[k], names[k - 1], 32);
			memcpy(names[k - 1], t, 32);
		}
	return n;
}

START_TEST(test_nodes_window)
{
	viewer v;
	char *args[] = { "--replay", rec, "--at", "-0", NULL };
	start_view(&v, "nodes", args, "3");
	Display *d = XOpenDisplay(display);
	ck_assert_ptr_nonnull(d);
	Window w = wait_window(d, "iogram-view", 15);
	ck_assert_msg(w != 0, "no window; log:\n%s", read_log(&v));
	focus(d, w);
	key(d, XK_End);
	key(d, XK_7);   /* the nodes panel alone, before the window's screenshot */
	tu_sleep_ms(3500);
	key(d, XK_l);   /* a redraw once the screenshot is due (l l: as it was) */
	key(d, XK_l);
	ck_assert_msg(wait_log(&v, "screenshot written", 30), "no screenshot; log:\n%s", read_log(&v));
	area a;
	parse_area(&v, &a);
	/* the sidebar: whole names ("demo-node-001" is not cut) */
	int col = 0, widest = 0;
	const char *sl = strstr(read_log(&v), "sidebar name column ");
	ck_assert_ptr_nonnull(sl);
	ck_assert_int_eq(sscanf(sl, "sidebar name column %d px, widest node name %d px", &col, &widest), 2);
	ck_assert_msg(widest > 40 && col >= widest, "names cut: column %d px, name %d px", col, widest);
	/* the panel as the window draws it: the area less 8 px around */
	double pw = a.w - 16, ph = a.h - 16;
	int ox = a.rx + 8, oy = a.ry + 8;
	iogv_session *s = iogv_session_new(NULL);
	char err[256];
	ck_assert_int_eq(iogv_open_replay(s, rec, err, sizeof(err)), 0);
	double t0, t1;
	iogv_replay_span(s, &t0, &t1);
	ck_assert_int_ge(iogv_replay_seek(s, t1), 0);
	iogplot_frame f;
	iogplot_frame_init(&f);
	ck_assert_int_eq(iogv_frame(s, NULL, 0, &f), 0);
	iogplot_view pv;
	iogplot_view_init(&pv);
	rowpos rows[16];
	int header, n = table_rows(&f, &pv, pw, ph, rows, 16, &header);
	ck_assert_int_eq(n, 5);
	ck_assert_str_eq(rows[2].name, "demo-node-003");
	image by_name, by_p99, by_click;
	image_from_root(&by_name, tu_fmt("%s/by-name.png", dir));
	for (int i = 0; i < 5; i++)
		ck_assert_msg(tinted(&by_name, ox, oy + rows[i].y) == (i == 2), "by name: row %d (%s) tint", i,
		              rows[i].name);
	/* o six times: p99, largest first; the slow node moves to the top */
	for (int i = 0; i < 6; i++)
		key(d, XK_o);
	tu_sleep_ms(800);
	image_from_root(&by_p99, tu_fmt("%s/by-p99.png", dir));
	pv.sort_col = IOGP_NT_P99;
	pv.sort_desc = 1;
	n = table_rows(&f, &pv, pw, ph, rows, 16, &header);
	char want[8][32];
	ck_assert_int_eq(truth_p99_order(want, 8), 5);
	for (int i = 0; i < 5; i++) {
		ck_assert_str_eq(rows[i].name, want[i]);
		ck_assert_msg(tinted(&by_p99, ox, oy + rows[i].y) == !strcmp(rows[i].name, "demo-node-003"),
		              "by p99: row %d (%s) tint", i, rows[i].name);
	}
	/* a click on the name column's header: by name again */
	int x = -1;
	iogplot_style st;
	iogplot_style_init(&st, 0);
	for (int xx = 0; xx < pw && x < 0; xx++)
		if (iogplot_nodes_header_at(&st, &f, &pv, pw, ph, xx, header) == IOGP_NT_NAME)
			x = xx + 5;
	ck_assert_int_ge(x, 0);
	click(d, ox + x, oy + header);
	tu_sleep_ms(800);
	image_from_root(&by_click, tu_fmt("%s/by-click.png", dir));
	pv.sort_col = IOGP_NT_NAME;
	pv.sort_desc = 0;
	n = table_rows(&f, &pv, pw, ph, rows, 16, &header);
	for (int i = 0; i < 5; i++)
		ck_assert_msg(tinted(&by_click, ox, oy + rows[i].y) == (i == 2), "after the click: row %d tint", i);
	free(by_name.px);
	free(by_p99.px);
	free(by_click.px);
	XCloseDisplay(d);
	iogplot_frame_free(&f);
	iogv_session_free(s);
	ck_assert_int_eq(waitpid(v.pid, NULL, WNOHANG), 0);
	stop_view(&v);
}
END_TEST

int main(void)
{
	view_bin = getenv("IOGRAM_VIEW");
	synth_bin = getenv("IOGRAM_SYNTH");
	if (!view_bin || !synth_bin) {
		fprintf(stderr, "check_view_nodes: set IOGRAM_VIEW, IOGRAM_SYNTH\n");
		return 1;
	}
	XSetErrorHandler(x_error);
	tu_tmpdir(dir, sizeof(dir), "iogram-check-view-nodes");
	snprintf(rec, sizeof(rec), "%s/job.iogr", dir);
	snprintf(truth, sizeof(truth), "%s/truth", dir);
	if (tu_system(tu_fmt("%s --nodes 5 --sources-per-node 2 --seconds 60 --skew 0.5 --slow-node 3:4 "
	                     "--node-prefix demo-node- -o %s --truth %s", synth_bin, rec, truth)) != 0) {
		fprintf(stderr, "check_view_nodes: iogram-synth failed\n");
		return 1;
	}
	static const char *const noreset[] = { "-noreset", NULL };
	xvfb = tu_xvfb_start(display, sizeof(display), 161, 230, "1600x1000x24", noreset, x_answers);
	if (xvfb <= 0) {
		fprintf(stderr, "check_view_nodes: no Xvfb\n");
		return 1;
	}
	const tu_case cases[] = { { "nodes_window", test_nodes_window } };
	int rc = tu_run_suite("view_nodes", cases, 1, NULL, NULL, 240);
	tu_xvfb_stop(xvfb);
	if (!rc)
		tu_rmdir_all(dir);
	else
		fprintf(stderr, "check_view_nodes: files kept in %s\n", dir);
	return rc;
}
