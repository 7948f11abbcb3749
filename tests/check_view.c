/* check_view.c - the real iogram-view window under Xvfb: it opens a replay
 * and draws every panel (its own screenshot and a real X screenshot of the
 * root window), export driven through the app with XTest key presses into
 * its file dialog, errors shown in the window, a live stream from
 * `iogram loadgen` drawn and recorded, the size panel by bytes (v). */
#include <X11/XKBlib.h>
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <X11/extensions/XTest.h>
#include <X11/keysym.h>
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "iogplot.h"
#include "testutil.h"
#include "testutil_iogr.h"

static const char *view_bin, *synth_bin, *iogram_bin;
static char dir[256];
static char rec[600];
static char display[32];
static pid_t xvfb;

#define SCREEN_W 1600
#define SCREEN_H 1000

/* ---- Xvfb on a free display number, stopped by its pid ---- */

/* The window tree is walked while the app opens and closes dialogs and
 * menus: a window can vanish between XQueryTree and the next request. Such
 * a BadWindow (or BadDrawable) is expected and ignored; anything else is
 * reported and fails the test (Xlib's default handler would exit). */
static int x_error(Display *d, XErrorEvent *e)
{
	(void)d;
	if (e->error_code == BadWindow || e->error_code == BadDrawable)
		return 0;
	fprintf(stderr, "check_view: X error %d (request %d)\n", e->error_code, e->request_code);
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

static int start_xvfb(void)
{
	static const char *const noreset[] = { "-noreset", NULL };
	char geom[32];
	snprintf(geom, sizeof(geom), "%dx%dx24", SCREEN_W, SCREEN_H);
	xvfb = tu_xvfb_start(display, sizeof(display), 91, 160, geom, noreset, x_answers);
	return xvfb > 0 ? 0 : -1;
}

/* ---- the viewer ---- */

typedef struct viewer {
	pid_t pid;
	char log[700], shot[700];
} viewer;

static void start_view(viewer *v, const char *tag, char *const args[])
{
	snprintf(v->log, sizeof(v->log), "%s/%s.log", dir, tag);
	snprintf(v->shot, sizeof(v->shot), "%s/%s-self.png", dir, tag);
	char *argv[32];
	int n = 0;
	argv[n++] = (char *)view_bin;
	for (int i = 0; args[i] && n < 30; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	char disp[64], shot[760];
	snprintf(disp, sizeof(disp), "DISPLAY=%s", display);
	snprintf(shot, sizeof(shot), "IOGRAM_VIEW_SCREENSHOT=%s", v->shot);
	const char *env[] = { disp, "WAYLAND_DISPLAY", "GDK_BACKEND=x11", "NO_AT_BRIDGE=1",
	                      "GSETTINGS_BACKEND=memory", "GTK_THEME=Adwaita", shot, NULL };
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

/* SIGTERM: the window closes cleanly (exit 0), never a crash. */
static void stop_view(viewer *v)
{
	int st = tu_stop(v->pid, SIGTERM, 10);
	if (st < 0)
		ck_abort_msg("iogram-view did not exit on SIGTERM; log:\n%s", read_log(v));
	ck_assert_msg(st == 0, "iogram-view ended with status %d; log:\n%s", st, read_log(v));
}

typedef struct area {
	int w, h, wx, wy, rx, ry;
} area;

static void parse_area(const viewer *v, area *a)
{
	const char *p = strstr(read_log(v), "; dashboard ");
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(sscanf(p, "; dashboard %dx%d at window %d,%d root %d,%d", &a->w, &a->h, &a->wx,
	                        &a->wy, &a->rx, &a->ry), 6);
	ck_assert_int_gt(a->w, 600);
	ck_assert_int_gt(a->h, 400);
}

/* ---- pixels ---- */

typedef struct image {
	int w, h;
	uint32_t *px;   /* 0xRRGGBB */
} image;

static void image_from_cairo(image *im, const char *path)
{
	cairo_surface_t *s = cairo_image_surface_create_from_png(path);
	ck_assert_msg(cairo_surface_status(s) == CAIRO_STATUS_SUCCESS, "%s", path);
	im->w = cairo_image_surface_get_width(s);
	im->h = cairo_image_surface_get_height(s);
	im->px = malloc((size_t)im->w * (size_t)im->h * 4);
	cairo_surface_flush(s);
	for (int y = 0; y < im->h; y++)
		memcpy(im->px + (size_t)y * (size_t)im->w,
		       cairo_image_surface_get_data(s) + (size_t)y * (size_t)cairo_image_surface_get_stride(s),
		       (size_t)im->w * 4);
	cairo_surface_destroy(s);
}

/* A real screenshot: the root window read back from the X server. */
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
	cairo_surface_t *s = cairo_image_surface_create_for_data((unsigned char *)im->px,
	                                                         CAIRO_FORMAT_RGB24, im->w, im->h,
	                                                         im->w * 4);
	cairo_surface_write_to_png(s, save);
	cairo_surface_destroy(s);
}

static int ink(const image *im, const iogplot_style *st, int x, int y)
{
	if (x < 0 || y < 0 || x >= im->w || y >= im->h)
		return 0;
	uint32_t p = im->px[(size_t)y * (size_t)im->w + (size_t)x];
	int c[3] = { (int)(p >> 16 & 255), (int)(p >> 8 & 255), (int)(p & 255) };
	const iogplot_rgba *ref[3] = { &st->panel, &st->grid, &st->bg };
	for (int k = 0; k < 3; k++) {
		int dd = abs(c[0] - (int)(ref[k]->r * 255 + .5)) + abs(c[1] - (int)(ref[k]->g * 255 + .5)) +
		         abs(c[2] - (int)(ref[k]->b * 255 + .5));
		if (dd <= 60)
			return 0;
	}
	return 1;
}

/* The panels a synthetic recording fills: not the phases (no per-file
 * records) nor the findings (check_phases_view draws those from real jobs),
 * nor the slowdown (no probes: test_slowdown_window), nor the MPI traffic
 * (no MPI: test_matrix_window) and its message sizes (inside it). */
#define ALL_PANELS (((1u << IOGPLOT_NPANELS) - 1) & ~(1u << IOGPLOT_PHASES) & ~(1u << IOGPLOT_INSIGHTS) & \
                    ~(1u << IOGPLOT_PROBE) & ~(1u << IOGPLOT_MATRIX) & ~(1u << IOGPLOT_MSGSIZE))

/* Panels of ALL_PANELS (by the dashboard layout at the area's size, offset
 * ox,oy in the image) that have ink in their plot area; bitmask. */
static unsigned panels_drawn(const image *im, const area *a, int ox, int oy)
{
	iogplot_style st;
	iogplot_style_init(&st, 0);
	iogplot_rect r[IOGPLOT_NPANELS];
	iogplot_dashboard_layout(a->w, a->h, r);
	unsigned mask = 0;
	for (int p = 0; p < IOGPLOT_NPANELS; p++) {
		long n = 0, all = 0;
		if ((1u << p) & ~ALL_PANELS)
			continue;
		for (int y = (int)r[p].y + (p ? 30 : 4); y < (int)(r[p].y + r[p].h) - (p ? 30 : 4); y += 2)
			for (int x = (int)r[p].x + (p ? 70 : 4); x < (int)(r[p].x + r[p].w) - 20; x += 2) {
				all++;
				n += ink(im, &st, ox + x, oy + y);
			}
		if (all && n * 200 >= all)
			mask |= 1u << p;
	}
	return mask;
}


/* ---- XTest ---- */

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

static void key(Display *d, KeySym ks, int ctrl)
{
	KeyCode kc = XKeysymToKeycode(d, ks);
	ck_assert_msg(kc != 0, "no key for keysym %lu", (unsigned long)ks);
	int shift = XkbKeycodeToKeysym(d, kc, 0, 0) != ks;
	KeyCode kshift = XKeysymToKeycode(d, XK_Shift_L), kctrl = XKeysymToKeycode(d, XK_Control_L);
	if (ctrl)
		XTestFakeKeyEvent(d, kctrl, True, 0);
	if (shift)
		XTestFakeKeyEvent(d, kshift, True, 0);
	XTestFakeKeyEvent(d, kc, True, 0);
	XTestFakeKeyEvent(d, kc, False, 0);
	if (shift)
		XTestFakeKeyEvent(d, kshift, False, 0);
	if (ctrl)
		XTestFakeKeyEvent(d, kctrl, False, 0);
	XSync(d, False);
	tu_sleep_ms(15);
}

static void type(Display *d, const char *s)
{
	for (; *s; s++) {
		KeySym ks;
		switch (*s) {
		case '/': ks = XK_slash; break;
		case '.': ks = XK_period; break;
		case '-': ks = XK_minus; break;
		case '_': ks = XK_underscore; break;
		default: ks = (KeySym)(unsigned char)*s; break;
		}
		key(d, ks, 0);
	}
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

/* Ctrl+E in the main window, a path typed into the save dialog, Return. */
static void export_via_dialog(Display *d, Window main, const char *path)
{
	focus(d, main);
	key(d, XK_e, 1);
	Window dlg = wait_window(d, "Export", 8);
	ck_assert_msg(dlg != 0, "no Export dialog appeared");
	focus(d, dlg);
	tu_sleep_ms(300);
	key(d, XK_a, 1);      /* select the proposed name */
	type(d, path);
	tu_sleep_ms(200);
	key(d, XK_Return, 0);
	for (double t0 = tu_now(); tu_now() - t0 < 5 && find_window(d, DefaultRootWindow(d), "Export", 0);)
		tu_sleep_ms(100);
}

/* ---- tests ---- */

START_TEST(test_replay_window)
{
	viewer v;
	char *args[] = { "--replay", rec, "--at", "-0", NULL };   /* the end, paused */
	start_view(&v, "replay", args);
	ck_assert_msg(wait_log(&v, "screenshot written", 30), "no screenshot; log:\n%s", read_log(&v));
	area a;
	parse_area(&v, &a);
	image self, root;
	image_from_cairo(&self, v.shot);
	unsigned m = panels_drawn(&self, &a, a.wx, a.wy);
	ck_assert_msg(m == ALL_PANELS, "own screenshot: panels drawn mask %x", m);
	char path[700];
	snprintf(path, sizeof(path), "%s/replay-root.png", dir);
	image_from_root(&root, path);
	m = panels_drawn(&root, &a, a.rx, a.ry);
	ck_assert_msg(m == ALL_PANELS, "X screenshot: panels drawn mask %x (area at %d,%d)", m, a.rx,
	              a.ry);
	free(self.px);
	free(root.px);

	/* export through the app: PNG, SVG, PDF and a CSV folder */
	Display *d = XOpenDisplay(display);
	ck_assert_ptr_nonnull(d);
	Window w = wait_window(d, "iogram-view", 5);
	ck_assert(w != 0);
	snprintf(path, sizeof(path), "%s/out", dir);
	ck_assert_int_eq(mkdir(path, 0777), 0);
	snprintf(path, sizeof(path), "%s/out/dash.png", dir);
	export_via_dialog(d, w, path);
	ck_assert_msg(tu_wait_file(path, 8), "no %s; log:\n%s", path, read_log(&v));
	image ex;
	image_from_cairo(&ex, path);
	ck_assert_int_eq(ex.w, a.w);
	ck_assert_int_eq(ex.h, a.h);
	area a0 = a;
	m = panels_drawn(&ex, &a0, 0, 0);
	ck_assert_msg(m == ALL_PANELS, "exported PNG: panels drawn mask %x", m);
	free(ex.px);
	size_t n;
	snprintf(path, sizeof(path), "%s/out/dash.svg", dir);
	export_via_dialog(d, w, path);
	ck_assert_msg(tu_wait_file(path, 8), "no %s; log:\n%s", path, read_log(&v));
	char *b = tu_load(path, &n);
	ck_assert(!strncmp(b, "<?xml", 5) && strstr(b, "<svg") && strstr(b, "</svg>"));
	free(b);
	snprintf(path, sizeof(path), "%s/out/dash.pdf", dir);
	export_via_dialog(d, w, path);
	ck_assert_msg(tu_wait_file(path, 8), "no %s; log:\n%s", path, read_log(&v));
	b = tu_load(path, &n);
	ck_assert(!strncmp(b, "%PDF-", 5) && n > 2000);
	free(b);
	snprintf(path, sizeof(path), "%s/out/tables.csv", dir);
	export_via_dialog(d, w, path);
	snprintf(path, sizeof(path), "%s/out/tables/queue_depth.requests.csv", dir);
	ck_assert_msg(tu_wait_file(path, 8), "no %s; log:\n%s", path, read_log(&v));
	b = tu_load(path, &n);
	ck_assert(!strncmp(b, "lower_bound,upper_bound,count\n", 30));
	free(b);
	/* keys: pause/seek do not crash, the window stays */
	focus(d, w);
	key(d, XK_Home, 0);
	key(d, XK_space, 0);
	tu_sleep_ms(500);
	key(d, XK_space, 0);
	key(d, XK_4, 0);
	key(d, XK_Escape, 0);
	XCloseDisplay(d);
	tu_sleep_ms(300);
	ck_assert_int_eq(waitpid(v.pid, NULL, WNOHANG), 0);
	stop_view(&v);
}
END_TEST

/* A replay opens at its start and plays, as in iogram-top; --at opens it
 * paused there (-0: the end). */
START_TEST(test_replay_plays)
{
	for (int k = 0; k < 2; k++) {
		viewer v;
		char *a0[] = { "--replay", rec, NULL }, *a1[] = { "--replay", rec, "--at", "-0", NULL };
		start_view(&v, k ? "plays-at" : "plays", k ? a1 : a0);
		ck_assert_msg(wait_log(&v, "screenshot written", 30), "no screenshot; log:\n%s", read_log(&v));
		const char *p = strstr(read_log(&v), "; replay at ");
		ck_assert_msg(p != NULL, "no replay position; log:\n%s", read_log(&v));
		double at, span;
		char state[16];
		ck_assert_int_eq(sscanf(p, "; replay at %lf s of %lf s, %15s", &at, &span, state), 3);
		ck_assert_msg(span > 100, "span %.1f", span);
		if (k) {
			ck_assert_msg(at >= span - 0.5, "--at -0: at %.1f of %.1f", at, span);
			ck_assert_str_eq(state, "paused");
		} else {
			ck_assert_msg(at < span / 4, "opened at %.1f of %.1f", at, span);
			ck_assert_str_eq(state, "playing");
		}
		stop_view(&v);
	}
}
END_TEST

START_TEST(test_errors_shown)
{
	viewer v;
	char *a1[] = { "--replay", "/nonexistent/missing.iogr", NULL };
	start_view(&v, "badfile", a1);
	ck_assert_msg(wait_log(&v, "screenshot written", 30), "log:\n%s", read_log(&v));
	ck_assert_msg(strstr(read_log(&v), "/nonexistent/missing.iogr") != NULL, "log:\n%s",
	              read_log(&v));
	ck_assert_int_eq(waitpid(v.pid, NULL, WNOHANG), 0);   /* still running */
	stop_view(&v);
	/* an endpoint nobody listens on: retried and said so */
	char *a2[] = { "--connect", "tcp://127.0.0.1:9", NULL };
	start_view(&v, "unreach", a2);
	ck_assert_msg(wait_log(&v, "not reachable", 20), "log:\n%s", read_log(&v));
	stop_view(&v);
}
END_TEST

START_TEST(test_live)
{
	char ep[64], out[700];
	snprintf(ep, sizeof(ep), "%s", tu_ep(tu_free_port()));
	snprintf(out, sizeof(out), "%s/live.iogr", dir);
	viewer v;
	char *args[] = { "--listen", ep, "--record", out, NULL };
	start_view(&v, "live", args);
	tu_sleep_ms(1500);
	pid_t lg = tu_spawn((char *[]){ (char *)iogram_bin, "loadgen", "--sources", "8", "--rate", "4",
	                                "--endpoint", ep, "--duration", "6", "--quiet", NULL },
	                    NULL, NULL, 0);
	ck_assert_msg(wait_log(&v, "screenshot written", 30), "log:\n%s", read_log(&v));
	area a;
	parse_area(&v, &a);
	image self;
	image_from_cairo(&self, v.shot);
	unsigned m = panels_drawn(&self, &a, a.wx, a.wy);
	unsigned need = 1u << IOGPLOT_HEADER | 1u << IOGPLOT_SIZE | 1u << IOGPLOT_QD | 1u << IOGPLOT_LATENCY;
	ck_assert_msg((m & need) == need, "live: panels drawn mask %x", m);
	free(self.px);
	ck_assert_int_eq(tu_wait(lg, 0), 0);
	stop_view(&v);
	/* the recording holds the sources */
	char *info[] = { (char *)iogram_bin, "info", out, NULL };
	tu_result r = tu_capture(info, &(tu_opts){ .keep_err = 1 }, 0);
	ck_assert_msg(r.status == 0, "iogram info: %s", r.out);
	ck_assert_msg(strstr(r.out, "sources:    8 ") != NULL, "iogram info: %s", r.out);
	tu_result_free(&r);
}
END_TEST

/* Pixels of rect r (area coordinates) that differ between two screenshots. */
static long pixels_differ(const image *x, const image *y, const area *a, iogplot_rect r)
{
	long n = 0;
	for (int yy = (int)r.y; yy < (int)(r.y + r.h); yy++)
		for (int xx = (int)r.x; xx < (int)(r.x + r.w); xx++) {
			size_t i = (size_t)(a->ry + yy) * (size_t)x->w + (size_t)(a->rx + xx);
			n += x->px[i] != y->px[i];
		}
	return n;
}

/* The shared table's v key in the window: the size panel by bytes (its bars
 * change), v again by count (as before, pixel for pixel); the other panels
 * stay as they were. */
START_TEST(test_weight_key)
{
	viewer v;
	char *args[] = { "--replay", rec, "--at", "-0", NULL };   /* the end, paused */
	start_view(&v, "weight", args);
	ck_assert_msg(wait_log(&v, "screenshot written", 30), "no screenshot; log:\n%s", read_log(&v));
	area a;
	parse_area(&v, &a);
	Display *d = XOpenDisplay(display);
	ck_assert_ptr_nonnull(d);
	Window w = wait_window(d, "iogram-view", 5);
	ck_assert(w != 0);
	focus(d, w);
	key(d, XK_End, 0);   /* the end of the replay: nothing moves any more */
	/* the pointer on the header strip: no tooltip over a panel */
	XTestFakeMotionEvent(d, -1, a.rx + a.w - 4, a.ry + 4, 0);
	XSync(d, False);
	tu_sleep_ms(1200);
	iogplot_rect r[IOGPLOT_NPANELS];
	iogplot_dashboard_layout(a.w, a.h, r);
	image shot[3];
	static const char *const name[3] = { "count", "bytes", "count-again" };
	for (int k = 0; k < 3; k++) {
		if (k) {
			key(d, XK_v, 0);
			tu_sleep_ms(800);
		}
		char path[700];
		snprintf(path, sizeof(path), "%s/weight-%s.png", dir, name[k]);
		image_from_root(&shot[k], path);
	}
	XCloseDisplay(d);
	long by_bytes = pixels_differ(&shot[0], &shot[1], &a, r[IOGPLOT_SIZE]);
	long back = pixels_differ(&shot[0], &shot[2], &a, r[IOGPLOT_SIZE]);
	/* the dashboard is taller than the window: GTK's overlay scrollbar may
	 * show over the right edge of the queue depth panel */
	iogplot_rect qr = r[IOGPLOT_QD];
	qr.w -= 24;
	long qd = pixels_differ(&shot[0], &shot[1], &a, qr);
	ck_assert_msg(by_bytes > 500, "v: %ld pixels of the size panel changed", by_bytes);
	ck_assert_msg(back == 0, "v v: %ld pixels of the size panel differ from the start", back);
	ck_assert_msg(qd == 0, "v: %ld pixels of the queue depth panel changed", qd);
	for (int k = 0; k < 3; k++)
		free(shot[k].px);
	ck_assert_int_eq(waitpid(v.pid, NULL, WNOHANG), 0);
	stop_view(&v);
}
END_TEST

/* Pixels in the warning colour in the top right of the area (the zoomed
 * slowdown panel's factors now), from a real screenshot. */
static long red_factors(const area *a, const char *save)
{
	image im;
	image_from_root(&im, save);
	iogplot_style st;
	iogplot_style_init(&st, 0);
	int r = (int)lround(st.warn.r * 255), g = (int)lround(st.warn.g * 255), b = (int)lround(st.warn.b * 255);
	long n = 0;
	for (int y = a->ry + 8; y < a->ry + 300 && y < im.h; y++)
		for (int x = a->rx + a->w - 200; x < a->rx + a->w - 8 && x < im.w; x++) {
			uint32_t p = im.px[(size_t)y * (size_t)im.w + (size_t)x];
			n += abs((int)(p >> 16 & 255) - r) + abs((int)(p >> 8 & 255) - g) + abs((int)(p & 255) - b) < 60;
		}
	free(im.px);
	return n;
}

/* iogram-view on recording job at its end, its test screenshots named
 * name-*.png: the window found and focused, the panels' area in *a. */
static Display *window_at_end(viewer *v, const char *name, char *job, area *a, Window *w)
{
	char *args[] = { "--replay", job, "--at", "-0", NULL };
	start_view(v, name, args);
	ck_assert_msg(wait_log(v, "screenshot written", 30), "no screenshot; log:\n%s", read_log(v));
	parse_area(v, a);
	Display *d = XOpenDisplay(display);
	ck_assert_ptr_nonnull(d);
	*w = wait_window(d, "iogram-view", 5);
	ck_assert(*w != 0);
	focus(d, *w);
	return d;
}

/* Key 0 zooms the slowdown panel of a job of three probes: the worst
 * (nodeC, its write at 8x) drawn with its factor in large red type; n steps
 * through the nodes, and only nodeC's probe has anything red; a selects
 * everything again (the worst). */
START_TEST(test_slowdown_window)
{
	char job[700];
	snprintf(job, sizeof(job), "%s/probes.iogr", dir);
	ck_assert_int_eq(tu_probe_job(dir, job), 0);
	viewer v;
	area a;
	Window w;
	Display *d = window_at_end(&v, "slowdown", job, &a, &w);
	long before = red_factors(&a, tu_fmt("%s/slowdown-dash.png", dir)), zoomed = 0;
	key(d, XK_0, 0);
	for (int i = 0; i < 40 && zoomed <= 150; i++) {   /* until it is drawn, at most 20 s */
		tu_sleep_ms(500);
		zoomed = red_factors(&a, tu_fmt("%s/slowdown-zoomed.png", dir));
	}
	ck_assert_msg(before == 0 && zoomed > 150, "red pixels: dashboard %ld, key 0 %ld", before, zoomed);
	int red_nodes = 0;
	for (int i = 0; i < 3; i++) {
		key(d, XK_n, 0);
		tu_sleep_ms(1000);
		red_nodes += red_factors(&a, tu_fmt("%s/slowdown-node%d.png", dir, i)) > 150;
	}
	ck_assert_int_eq(red_nodes, 1);
	key(d, XK_a, 0);
	tu_sleep_ms(1000);
	ck_assert_int_gt(red_factors(&a, tu_fmt("%s/slowdown-all.png", dir)), 150);
	XCloseDisplay(d);
	ck_assert_int_eq(waitpid(v.pid, NULL, WNOHANG), 0);
	stop_view(&v);
}
END_TEST

/* Pixels of the palette's hottest (viridis yellow) in the top of the area,
 * from a real screenshot. */
static long hot_cells(const area *a, const char *save)
{
	image im;
	image_from_root(&im, save);
	long n = 0;
	for (int y = a->ry + 8; y < a->ry + 300 && y < im.h; y++)
		for (int x = a->rx + 8; x < a->rx + a->w - 8 && x < im.w; x++) {
			uint32_t p = im.px[(size_t)y * (size_t)im.w + (size_t)x];
			n += (p >> 16 & 255) > 225 && (p >> 8 & 255) > 200 && (p & 255) < 80;
		}
	free(im.px);
	return n;
}

/* Key M zooms the MPI traffic panel of a job with a known matrix: its
 * hottest cell drawn at the top; Ctrl+E's CSV folder holds matrix.csv. */
START_TEST(test_matrix_window)
{
	char job[700], path[800];
	snprintf(job, sizeof(job), "%s/matrix.iogr", dir);
	ck_assert_int_eq(tu_matrix_job(job), 0);
	viewer v;
	area a;
	Window w;
	Display *d = window_at_end(&v, "matrix", job, &a, &w);
	long before = hot_cells(&a, tu_fmt("%s/matrix-dash.png", dir)), zoomed = 0;
	key(d, XK_M, 0);
	for (int i = 0; i < 40 && zoomed <= 150; i++) {   /* until it is drawn, at most 20 s */
		tu_sleep_ms(500);
		zoomed = hot_cells(&a, tu_fmt("%s/matrix-zoomed.png", dir));
	}
	ck_assert_msg(before == 0 && zoomed > 150, "hottest pixels: dashboard %ld, key M %ld", before, zoomed);
	snprintf(path, sizeof(path), "%s/mx.csv", dir);
	export_via_dialog(d, w, path);
	snprintf(path, sizeof(path), "%s/mx/matrix.csv", dir);
	ck_assert_msg(tu_wait_file(path, 8), "no %s; log:\n%s", path, read_log(&v));
	size_t n;
	uint64_t all = 0;
	for (int r = 0; r < TU_MX_RANKS; r++)
		for (int t = 0; t < TU_MX_RANKS; t++)
			all += tu_mx_msgs(r, t);
	char *b = tu_load(path, &n);
	ck_assert(b && !strncmp(b, "from_node,to_node,messages_count,bytes\n", 39));
	ck_assert_msg(strstr(b, tu_fmt("\ntotal,total,%" PRIu64 ",", all)) != NULL, "%s", b);
	free(b);
	XCloseDisplay(d);
	ck_assert_int_eq(waitpid(v.pid, NULL, WNOHANG), 0);
	stop_view(&v);
}
END_TEST

static int run_synth(void)
{
	pid_t pid = tu_spawn_opt((char *[]){ (char *)synth_bin, "--nodes", "6", "--sources-per-node", "2",
	                                     "--seconds", "180", "--seed", "11", "-o", rec, NULL },
	                         &(tu_opts){ .keep_err = 1 });
	return tu_wait(pid, 0) == 0 ? 0 : -1;
}

int main(void)
{
	view_bin = getenv("IOGRAM_VIEW");
	synth_bin = getenv("IOGRAM_SYNTH");
	iogram_bin = getenv("IOGRAM_BIN");
	if (!view_bin || !synth_bin || !iogram_bin) {
		fprintf(stderr, "check_view: set IOGRAM_VIEW, IOGRAM_SYNTH and IOGRAM_BIN\n");
		return 1;
	}
	XSetErrorHandler(x_error);
	tu_tmpdir(dir, sizeof(dir), "iogram-check-view");
	snprintf(rec, sizeof(rec), "%s/job.iogr", dir);
	if (run_synth() < 0) {
		fprintf(stderr, "check_view: iogram-synth failed\n");
		return 1;
	}
	if (start_xvfb() < 0) {
		fprintf(stderr, "check_view: cannot start Xvfb\n");
		return 1;
	}
	setenv("DISPLAY", display, 1);
	Suite *s = suite_create("view");
	TCase *tc = tcase_create("window");
	tcase_set_timeout(tc, 180);
	tcase_add_test(tc, test_replay_window);
	tcase_add_test(tc, test_replay_plays);
	tcase_add_test(tc, test_errors_shown);
	tcase_add_test(tc, test_live);
	tcase_add_test(tc, test_weight_key);
	tcase_add_test(tc, test_slowdown_window);
	tcase_add_test(tc, test_matrix_window);
	suite_add_tcase(s, tc);
	int failed = tu_run_srunner(s);
	tu_xvfb_stop(xvfb);
	if (!failed && !getenv("IOGRAM_KEEP") && tu_rmdir_all(dir) != 0)
		fprintf(stderr, "check_view: could not remove %s\n", dir);
	else if (failed || getenv("IOGRAM_KEEP"))
		fprintf(stderr, "check_view: files kept in %s\n", dir);
	return failed ? 1 : 0;
}
