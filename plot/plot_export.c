/* plot_export.c - one panel or the whole dashboard to PNG, SVG or PDF, the
 * format chosen by the file name's extension. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <cairo.h>
#ifdef CAIRO_HAS_SVG_SURFACE
#include <cairo-svg.h>
#endif
#ifdef CAIRO_HAS_PDF_SURFACE
#include <cairo-pdf.h>
#endif

#include "plot.h"

static cairo_status_t png_write(void *fp, const unsigned char *data, unsigned int len)
{
	return fwrite(data, 1, len, fp) == len ? CAIRO_STATUS_SUCCESS : CAIRO_STATUS_WRITE_ERROR;
}

const char *iogplot_export_format(const char *path)
{
	const char *dot = path ? strrchr(path, '.') : NULL;
	if (!dot || strchr(dot, '/'))
		return NULL;
	if (!strcasecmp(dot, ".png"))
		return "png";
	if (!strcasecmp(dot, ".svg"))
		return "svg";
	if (!strcasecmp(dot, ".pdf"))
		return "pdf";
	return NULL;
}

static void draw(cairo_surface_t *s, const iogplot_style *st, const iogplot_frame *f,
                 const iogplot_view *v, int panel, double w, double h)
{
	cairo_t *cr = cairo_create(s);
	pl_rgba(cr, st->bg, 1);
	cairo_paint(cr);
	if (panel < 0)
		iogplot_dashboard(cr, st, f, v, w, h);
	else
		iogplot_panel(cr, st, f, v, panel, w, h);
	cairo_destroy(cr);
}

int iogplot_export(const char *path, const iogplot_style *st, const iogplot_frame *f,
                   const iogplot_view *v, int panel, double w, double h, double scale,
                   char *err, size_t errlen)
{
	const char *fmt = iogplot_export_format(path);
	if (!fmt) {
		iogp_errf(err, errlen, "%s: unknown format (use a .png, .svg or .pdf name)", path ? path : "");
		return IOGP_EINVAL;
	}
	if (!(w >= 16 && h >= 16 && w <= 20000 && h <= 20000)) {
		iogp_errf(err, errlen, "size %.0fx%.0f out of range (16..20000)", w, h);
		return IOGP_EINVAL;
	}
	if (!(scale >= 0.25 && scale <= 8))
		scale = 1;
	if (panel >= IOGPLOT_NPANELS) {
		iogp_errf(err, errlen, "no panel %d", panel);
		return IOGP_EINVAL;
	}
	iogplot_view vv = *v;
	vv.cache = NULL;   /* the grid cache holds screen surfaces */
	cairo_surface_t *s;
	cairo_status_t cs;
	errno = 0;
	if (!strcmp(fmt, "png")) {
		s = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, (int)(w * scale + 0.5),
		                               (int)(h * scale + 0.5));
		if ((cs = cairo_surface_status(s)) != CAIRO_STATUS_SUCCESS) {
			iogp_errf(err, errlen, "%s: %s", path, cairo_status_to_string(cs));
			cairo_surface_destroy(s);
			return IOGP_ENOMEM;
		}
		cairo_surface_set_device_scale(s, scale, scale);
		draw(s, st, f, &vv, panel, w, h);
		FILE *fp = fopen(path, "wb");
		if (!fp) {
			iogp_errf(err, errlen, "%s: %s", path, strerror(errno));
			cairo_surface_destroy(s);
			return IOGP_EIO;
		}
		cs = cairo_surface_write_to_png_stream(s, png_write, fp);
		if (fclose(fp) != 0 && cs == CAIRO_STATUS_SUCCESS)
			cs = CAIRO_STATUS_WRITE_ERROR;
		cairo_surface_destroy(s);
	} else {
#if defined(CAIRO_HAS_SVG_SURFACE) && defined(CAIRO_HAS_PDF_SURFACE)
		if (!strcmp(fmt, "svg"))
			s = cairo_svg_surface_create(path, w, h);
		else
			s = cairo_pdf_surface_create(path, w, h);
		if ((cs = cairo_surface_status(s)) != CAIRO_STATUS_SUCCESS) {
			iogp_errf(err, errlen, "%s: %s", path, errno ? strerror(errno) : cairo_status_to_string(cs));
			cairo_surface_destroy(s);
			return IOGP_EIO;
		}
		if (!strcmp(fmt, "pdf")) {
			char title[128];
			snprintf(title, sizeof(title), "iogram %s", iogplot_panel_title(panel));
			cairo_pdf_surface_set_metadata(s, CAIRO_PDF_METADATA_TITLE, title);
			cairo_pdf_surface_set_metadata(s, CAIRO_PDF_METADATA_CREATOR, "iogram-view");
		}
		draw(s, st, f, &vv, panel, w, h);
		cairo_surface_finish(s);
		cs = cairo_surface_status(s);
		cairo_surface_destroy(s);
#else
		iogp_errf(err, errlen, "%s: this cairo has no %s support", path, fmt);
		return IOGP_EINVAL;
#endif
	}
	if (cs != CAIRO_STATUS_SUCCESS) {
		iogp_errf(err, errlen, "%s: %s", path, errno ? strerror(errno) : cairo_status_to_string(cs));
		return IOGP_EIO;
	}
	return 0;
}
