/* draw.c - the drawing surface: clipped text, eighth-block bars, braille
 * dots, heat cells; colour pairs with monochrome attributes as fallback and
 * plain ASCII where the locale is not UTF-8. */
#define NCURSES_WIDECHAR 1
#include <curses.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "top.h"

struct style {
	short fg, bg;
	attr_t color_attr;   /* with colours */
	attr_t mono_attr;    /* without */
};

static const struct style styles[ST_COUNT] = {
	[ST_NORMAL] = { -1, -1, A_NORMAL, A_NORMAL },
	[ST_TITLE] = { COLOR_CYAN, -1, A_BOLD | A_UNDERLINE, A_BOLD | A_UNDERLINE },
	/* not bold: many terminals draw bold black as grey, unreadable on cyan */
	[ST_FOCUS] = { COLOR_BLACK, COLOR_CYAN, A_NORMAL, A_REVERSE | A_BOLD },
	[ST_READ] = { COLOR_GREEN, -1, A_NORMAL, A_NORMAL },
	[ST_WRITE] = { COLOR_MAGENTA, -1, A_BOLD, A_BOLD },
	[ST_BOTH] = { COLOR_CYAN, -1, A_BOLD, A_BOLD },
	[ST_DIM] = { -1, -1, A_DIM, A_DIM },
	[ST_LABEL] = { -1, -1, A_BOLD, A_BOLD },
	[ST_WARN] = { COLOR_YELLOW, -1, A_BOLD, A_BOLD },
	[ST_BAD] = { COLOR_RED, -1, A_BOLD, A_BOLD | A_REVERSE },
	[ST_GOOD] = { COLOR_GREEN, -1, A_BOLD, A_NORMAL },
	[ST_STATUS] = { COLOR_BLACK, COLOR_YELLOW, A_NORMAL, A_REVERSE },
	[ST_HEAT0 + 0] = { COLOR_BLUE, -1, A_NORMAL, A_NORMAL },
	[ST_HEAT0 + 1] = { COLOR_BLUE, -1, A_BOLD, A_NORMAL },
	[ST_HEAT0 + 2] = { COLOR_CYAN, -1, A_NORMAL, A_NORMAL },
	[ST_HEAT0 + 3] = { COLOR_CYAN, -1, A_BOLD, A_NORMAL },
	[ST_HEAT0 + 4] = { COLOR_GREEN, -1, A_BOLD, A_NORMAL },
	[ST_HEAT0 + 5] = { COLOR_YELLOW, -1, A_NORMAL, A_BOLD },
	[ST_HEAT0 + 6] = { COLOR_YELLOW, -1, A_BOLD, A_BOLD },
	[ST_HEAT0 + 7] = { COLOR_RED, -1, A_BOLD, A_BOLD },
};

/* 256-colour heat ramp (dark blue to yellow), used when the terminal has it. */
static const short heat256[ST_NHEAT] = { 17, 19, 25, 31, 37, 71, 178, 226 };

void draw_setup(top_surf *s, void *win, int unicode, int want_color)
{
	memset(s, 0, sizeof(*s));
	s->win = win;
	s->unicode = unicode;
	if (win) {
		s->rows = getmaxy((WINDOW *)win);
		s->cols = getmaxx((WINDOW *)win);
	}
	if (!win || !want_color || !has_colors() || start_color() == ERR)
		return;
	use_default_colors();
	int many = COLORS >= 256 && COLOR_PAIRS > ST_COUNT;
	for (int i = 1; i < ST_COUNT; i++) {
		short fg = styles[i].fg;
		if (many && i >= ST_HEAT0)
			fg = heat256[i - ST_HEAT0];
		init_pair((short)i, fg, styles[i].bg);
	}
	s->color = 1;
}

static void style_of(const top_surf *s, int st, attr_t *a, short *pair)
{
	if (st < 0 || st >= ST_COUNT)
		st = ST_NORMAL;
	if (s->color) {
		*a = styles[st].color_attr;
		*pair = (short)st;
	} else {
		*a = styles[st].mono_attr;
		*pair = 0;
	}
}

static int inside(const top_surf *s, int y, int x)
{
	return s->win && y >= 0 && x >= 0 && y < s->rows && x < s->cols;
}

void draw_clear(top_surf *s, top_rect r)
{
	if (!s->win)
		return;
	WINDOW *w = s->win;
	wattr_set(w, A_NORMAL, 0, NULL);
	for (int y = r.y; y < r.y + r.h; y++) {
		if (y < 0 || y >= s->rows)
			continue;
		int x0 = r.x < 0 ? 0 : r.x, x1 = r.x + r.w > s->cols ? s->cols : r.x + r.w;
		if (x1 > x0)
			mvwhline(w, y, x0, ' ', x1 - x0);
	}
}

int draw_text(top_surf *s, int y, int x, int maxw, int style, const char *t)
{
	if (!inside(s, y, x) || maxw <= 0 || !t)
		return 0;
	int n = (int)strlen(t);
	if (n > maxw)
		n = maxw;
	if (n > s->cols - x)
		n = s->cols - x;
	attr_t a;
	short pair;
	style_of(s, style, &a, &pair);
	WINDOW *w = s->win;
	wattr_set(w, a, pair, NULL);
	/* only printable ASCII reaches the terminal: labels come from the wire */
	char buf[512];
	if (n > (int)sizeof(buf))
		n = (int)sizeof(buf);
	for (int i = 0; i < n; i++)
		buf[i] = (t[i] >= 32 && t[i] < 127) ? t[i] : '?';
	mvwaddnstr(w, y, x, buf, n);
	wattr_set(w, A_NORMAL, 0, NULL);
	return n;
}

int draw_textf(top_surf *s, int y, int x, int maxw, int style, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return draw_text(s, y, x, maxw, style, buf);
}

void draw_glyph(top_surf *s, int y, int x, int style, unsigned wc, char ascii)
{
	if (!inside(s, y, x))
		return;
	attr_t a;
	short pair;
	style_of(s, style, &a, &pair);
	WINDOW *w = s->win;
	if (s->unicode && wc) {
		wchar_t ws[2] = { (wchar_t)wc, 0 };
		cchar_t cc;
		setcchar(&cc, ws, a, pair, NULL);
		mvwadd_wch(w, y, x, &cc);
	} else {
		wattr_set(w, a, pair, NULL);
		mvwaddch(w, y, x, (chtype)(unsigned char)ascii);
		wattr_set(w, A_NORMAL, 0, NULL);
	}
}

void draw_hbar(top_surf *s, int y, int x, int maxw, double len, int style)
{
	if (!(len > 0))
		return;
	if (len > maxw)
		len = maxw;
	int eighths = (int)(len * 8 + 0.5);
	if (eighths < 1)
		eighths = 1;   /* a non-empty bin always shows */
	int full = eighths / 8, part = eighths % 8;
	for (int i = 0; i < full; i++)
		draw_glyph(s, y, x + i, style, 0x2588, '#');
	if (part && full < maxw) {
		if (s->unicode)
			draw_glyph(s, y, x + full, style, 0x2590u - (unsigned)part, '#');
		else if (part >= 4 || !full)
			draw_glyph(s, y, x + full, style, 0, part >= 4 ? '#' : '|');
	}
}

void draw_spark(top_surf *s, int y, int x, const double *v, int n, double max, int style)
{
	static const char ascii[] = ".,:-=+*#";
	for (int i = 0; i < n; i++) {
		if (!(v[i] > 0) || !(max > 0)) {
			if (v[i] < 0)   /* no data */
				continue;
			draw_glyph(s, y, x + i, ST_DIM, 0, ' ');
			continue;
		}
		int e = (int)(v[i] / max * 8 + 0.5);
		if (e < 1)
			e = 1;
		if (e > 8)
			e = 8;
		draw_glyph(s, y, x + i, style, 0x2580u + (unsigned)e, ascii[e - 1]);
	}
}

void draw_heat(top_surf *s, int y, int x, double level)
{
	static const unsigned uni[ST_NHEAT] = { 0x2591, 0x2591, 0x2592, 0x2592, 0x2593, 0x2593, 0x2588, 0x2588 };
	static const char ascii[ST_NHEAT] = { '.', ':', '-', '=', '+', '*', '#', '@' };
	if (level < 0)
		return;
	if (level == 0) {
		draw_glyph(s, y, x, ST_DIM, 0, ' ');
		return;
	}
	int i = (int)(level * ST_NHEAT);
	if (i >= ST_NHEAT)
		i = ST_NHEAT - 1;
	draw_glyph(s, y, x, ST_HEAT0 + i, uni[i], ascii[i]);
}

void draw_title(top_surf *s, top_rect r, int focused, int key, const char *title, const char *right)
{
	if (r.h <= 0 || r.w <= 0 || !s->win)
		return;
	int st = focused ? ST_FOCUS : ST_TITLE;
	char line[512];
	int w = r.w < (int)sizeof(line) - 1 ? r.w : (int)sizeof(line) - 1;
	memset(line, ' ', (size_t)w);
	line[w] = '\0';
	char left[256];
	if (key)
		snprintf(left, sizeof(left), "%c %s", key, title);
	else
		snprintf(left, sizeof(left), "%s", title);
	int ll = (int)strlen(left);
	memcpy(line, left, (size_t)(ll < w ? ll : w));
	if (right && right[0]) {
		int rl = (int)strlen(right);
		if (ll + 2 + rl <= w) {
			memcpy(line + w - rl, right, (size_t)rl);
		} else if (ll + 6 < w) {   /* what fits of it, from its start, in whole words */
			int n = w - ll - 2;
			while (n > 0 && right[n] != ' ' && right[n] != ',')
				n--;
			while (n > 0 && (right[n - 1] == ' ' || right[n - 1] == ','))
				n--;
			memcpy(line + ll + 2, right, (size_t)n);
		}
	}
	draw_text(s, r.y, r.x, w, st, line);
}

int canvas_init(top_canvas *c, int cw, int ch)
{
	memset(c, 0, sizeof(*c));
	if (cw <= 0 || ch <= 0)
		return 0;
	c->bits = calloc((size_t)cw * (size_t)ch, 1);
	c->cls = calloc((size_t)cw * (size_t)ch, 1);
	if (!c->bits || !c->cls) {
		canvas_free(c);
		return IOGP_ENOMEM;
	}
	c->cw = cw;
	c->ch = ch;
	return 0;
}

void canvas_free(top_canvas *c)
{
	free(c->bits);
	free(c->cls);
	memset(c, 0, sizeof(*c));
}

void canvas_dot(top_canvas *c, int px, int py, int cls)
{
	static const uint8_t bit[2][4] = { { 0x01, 0x02, 0x04, 0x40 }, { 0x08, 0x10, 0x20, 0x80 } };
	if (px < 0 || py < 0 || px >= 2 * c->cw || py >= 4 * c->ch)
		return;
	size_t i = (size_t)(py / 4) * (size_t)c->cw + (size_t)(px / 2);
	c->bits[i] |= bit[px & 1][py & 3];
	c->cls[i] |= (uint8_t)cls;
}

void canvas_column(top_canvas *c, int px, int h, int cls)
{
	int rows = 4 * c->ch;
	if (h > rows)
		h = rows;
	for (int k = 0; k < h; k++)
		canvas_dot(c, px, rows - 1 - k, cls);
}

void canvas_paint(top_surf *s, const top_canvas *c, int y, int x)
{
	for (int r = 0; r < c->ch; r++) {
		for (int q = 0; q < c->cw; q++) {
			size_t i = (size_t)r * (size_t)c->cw + (size_t)q;
			uint8_t b = c->bits[i], k = c->cls[i];
			int st = k == 3 ? ST_BOTH : k == 2 ? ST_WRITE : ST_READ;
			if (!b) {
				draw_glyph(s, y + r, x + q, ST_NORMAL, 0, ' ');
				continue;
			}
			char a;
			if (__builtin_popcount(b) >= 6)
				a = k == 2 ? 'X' : '#';
			else
				a = k == 3 ? '*' : k == 2 ? 'x' : '.';
			draw_glyph(s, y + r, x + q, st, 0x2800u + b, a);
		}
	}
}

static void fmt_clock(char *buf, size_t len, uint64_t wall_ns)
{
	time_t t = (time_t)(wall_ns / 1000000000ull);
	struct tm tm;
	if (!localtime_r(&t, &tm)) {
		snprintf(buf, len, "?");
		return;
	}
	strftime(buf, len, "%H:%M:%S", &tm);
}

/* The time axis under the plot at x..x+w: start, middle and end clocks,
 * and the span between them when it fits. */
void draw_time_axis(top_surf *s, int y, int x, int w, uint64_t t0, uint64_t t1)
{
	char a[16], b[16], span[32], mid[48];
	fmt_clock(a, sizeof(a), t0);
	fmt_clock(b, sizeof(b), t1);
	iogp_fmt_duration(span, sizeof(span), (double)(t1 - t0) / 1e9);
	int la = (int)strlen(a), lb = (int)strlen(b);
	if (la + lb + 1 > w) {
		draw_text(s, y, x, w, ST_DIM, b);
		return;
	}
	draw_text(s, y, x, la, ST_DIM, a);
	draw_text(s, y, x + w - lb, lb, ST_DIM, b);
	snprintf(mid, sizeof(mid), "<- %s ->", span);
	int lm = (int)strlen(mid);
	if (la + lb + lm + 4 > w) {
		snprintf(mid, sizeof(mid), "%s", span);
		lm = (int)strlen(mid);
	}
	if (la + lb + lm + 2 <= w)
		draw_text(s, y, x + la + (w - la - lb - lm) / 2, lm, ST_DIM, mid);
}
