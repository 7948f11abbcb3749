/* plot_style.c - colours, fonts, text and human units of the plots. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "plot.h"

static iogplot_rgba hex(unsigned rgb, double a)
{
	return (iogplot_rgba){ ((rgb >> 16) & 255) / 255.0, ((rgb >> 8) & 255) / 255.0,
	                       (rgb & 255) / 255.0, a };
}

void iogplot_style_init(iogplot_style *s, int dark)
{
	memset(s, 0, sizeof(*s));
	s->dark = dark;
	s->font_size = 11;
	snprintf(s->font, sizeof(s->font), "DejaVu Sans");
	if (dark) {
		s->bg = hex(0x1b1b1d, 1);
		s->panel = hex(0x242427, 1);
		s->fg = hex(0xe6e6e6, 1);
		s->dim = hex(0x9d9da3, 1);
		s->grid = hex(0x35353a, 1);
		s->axis = hex(0x6c6c73, 1);
		s->op[0] = hex(0x4ea1f3, 1);
		s->op[1] = hex(0xff8c42, 1);
		s->op[2] = hex(0x62d36b, 1);
		s->total = hex(0xc9a0ff, 1);
		s->accent = hex(0xf5d547, 1);
		s->warn = hex(0xff6b6b, 1);
		s->select = hex(0xffffff, 1);
	} else {
		s->bg = hex(0xebebed, 1);
		s->panel = hex(0xffffff, 1);
		s->fg = hex(0x1e1e1e, 1);
		s->dim = hex(0x62626a, 1);
		s->grid = hex(0xe6e6ea, 1);
		s->axis = hex(0x9a9aa2, 1);
		s->op[0] = hex(0x1f6fc0, 1);
		s->op[1] = hex(0xe0600f, 1);
		s->op[2] = hex(0x2e9a3c, 1);
		s->total = hex(0x7a3fb8, 1);
		s->accent = hex(0xb08800, 1);
		s->warn = hex(0xc62828, 1);
		s->select = hex(0x000000, 1);
	}
}

void pl_rgba(cairo_t *cr, iogplot_rgba c, double alpha)
{
	cairo_set_source_rgba(cr, c.r, c.g, c.b, c.a * alpha);
}

/* Selecting a toy font by name asks fontconfig every time; keep the faces. */
static struct {
	char name[64];
	cairo_font_face_t *face[2];
} faces;

void pl_font(cairo_t *cr, const iogplot_style *st, double rel, int bold)
{
	const char *name = st->font[0] ? st->font : "sans-serif";
	if (strcmp(faces.name, name)) {
		for (int i = 0; i < 2; i++) {
			if (faces.face[i])
				cairo_font_face_destroy(faces.face[i]);
			faces.face[i] = cairo_toy_font_face_create(name, CAIRO_FONT_SLANT_NORMAL,
			                                           i ? CAIRO_FONT_WEIGHT_BOLD :
			                                               CAIRO_FONT_WEIGHT_NORMAL);
		}
		snprintf(faces.name, sizeof(faces.name), "%s", name);
	}
	cairo_set_font_face(cr, faces.face[bold ? 1 : 0]);
	cairo_set_font_size(cr, (st->font_size > 4 ? st->font_size : 11) * rel);
}

double pl_text_w(cairo_t *cr, const char *s)
{
	cairo_text_extents_t te;
	cairo_text_extents(cr, s, &te);
	return te.x_advance;
}

void pl_text(cairo_t *cr, double x, double y, double ax, double ay, const char *s)
{
	cairo_font_extents_t fe;
	cairo_font_extents(cr, &fe);
	double w = ax > 0 ? pl_text_w(cr, s) : 0;
	/* ascent-only box: digits and capitals sit centred */
	double top = fe.ascent * 0.78;
	cairo_move_to(cr, x - w * ax, y + top - top * ay);
	cairo_show_text(cr, s);
	cairo_new_path(cr);
}

/* ---- human units ---- */

void iogplot_fmt_clock(char *buf, size_t len, double wall_s, int seconds)
{
	time_t t = (time_t)floor(wall_s);
	struct tm tm;
	localtime_r(&t, &tm);
	if (seconds)
		snprintf(buf, len, "%02d:%02d:%02d", tm.tm_hour, tm.tm_min, tm.tm_sec);
	else
		snprintf(buf, len, "%02d:%02d", tm.tm_hour, tm.tm_min);
}

/* ---- heatmap palette: a viridis-like ramp through a few control points ---- */
void pl_heat_color(double t, double *r, double *g, double *b)
{
	static const double cp[][3] = {
		{ 0.267, 0.005, 0.329 }, { 0.283, 0.141, 0.458 }, { 0.254, 0.265, 0.530 },
		{ 0.207, 0.372, 0.553 }, { 0.164, 0.471, 0.558 }, { 0.128, 0.567, 0.551 },
		{ 0.135, 0.659, 0.518 }, { 0.267, 0.749, 0.441 }, { 0.478, 0.821, 0.318 },
		{ 0.741, 0.873, 0.150 }, { 0.993, 0.906, 0.144 },
	};
	const int n = (int)(sizeof(cp) / sizeof(cp[0]));
	if (!(t > 0))
		t = 0;
	if (t > 1)
		t = 1;
	double x = t * (n - 1);
	int i = (int)x;
	if (i >= n - 1)
		i = n - 2;
	double f = x - i;
	*r = cp[i][0] + (cp[i + 1][0] - cp[i][0]) * f;
	*g = cp[i][1] + (cp[i + 1][1] - cp[i][1]) * f;
	*b = cp[i][2] + (cp[i + 1][2] - cp[i][2]) * f;
}
