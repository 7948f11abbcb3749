/* units.c - bytes, durations, counts and rates as text, in the wide style
 * of plots and the command or the compact style of terminal cells. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "iogp_units.h"

/* "1.0 KiB" -> "1 KiB", "2.50" -> "2.5" */
static void trim(char *buf)
{
	char *dot = strchr(buf, '.');
	if (!dot)
		return;
	char *end = dot;
	while (*end && (end[0] == '.' || (end[0] >= '0' && end[0] <= '9')))
		end++;
	char *z = end;
	while (z > dot + 1 && z[-1] == '0')
		z--;
	if (z == dot + 1)
		z = dot;
	memmove(z, end, strlen(end) + 1);
}

/* Three significant digits of v, then sep, unit and suffix. */
static int sig3(char *buf, size_t len, double v, const char *sep, const char *unit,
                const char *suffix)
{
	double a = fabs(v);
	const char *f = a >= 100 || a == floor(a) ? "%.0f%s%s%s" : a >= 10 ? "%.1f%s%s%s" : "%.2f%s%s%s";
	return snprintf(buf, len, f, v, sep, unit, suffix);
}

/* Wide: scaled by base until below it, three digits, trailing zeros cut. */
static int wide(char *buf, size_t len, double v, double base, const char *const *units,
                int nunits, const char *suffix)
{
	int i = 0;
	double a = fabs(v);
	while (i < nunits - 1 && a >= base * 0.9995) {
		a /= base;
		v /= base;
		i++;
	}
	sig3(buf, len, v, " ", units[i], suffix);
	trim(buf);
	return (int)strlen(buf);
}

static const char *const wide_bytes[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
static const char *const cell_bytes[] = { "K", "M", "G", "T", "P", "E" };

int iogp_fmt_bytes(char *buf, size_t len, double v, int style)
{
	if (style != IOGP_UNITS_CELL)
		return wide(buf, len, v, 1024, wide_bytes, 7, "");
	if (!(v >= 0))
		v = 0;
	if (v < 10000)
		return snprintf(buf, len, "%.0f", floor(v));
	double d = 1024;
	for (int i = 0; i < 6; i++, d *= 1024) {
		double q = v / d;
		if (q < 1000 && q == floor(q))
			return snprintf(buf, len, "%.0f%s", q, cell_bytes[i]);
		if (q < 999.5 || i == 5)   /* 999.5..1023 would round to 1000: 0.98M instead */
			return sig3(buf, len, q, "", cell_bytes[i], "");
	}
	return snprintf(buf, len, "%.0f", v);
}

/* "1234567" -> "1,234,567" */
static int thousands(char *buf, size_t len, unsigned long long v, const char *suffix)
{
	char tmp[32], out[48];
	int n = snprintf(tmp, sizeof(tmp), "%llu", v), o = 0;
	for (int i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			out[o++] = ',';
		out[o++] = tmp[i];
	}
	out[o] = 0;
	return snprintf(buf, len, "%s%s", out, suffix);
}

int iogp_fmt_int(char *buf, size_t len, uint64_t v)
{
	return thousands(buf, len, (unsigned long long)v, "");
}

int iogp_fmt_size(char *buf, size_t len, double bytes, int style)
{
	int cell = style == IOGP_UNITS_CELL;
	if (!(bytes >= 0))
		bytes = 0;
	if (bytes > 9.2e18)
		bytes = 9.2e18;
	unsigned long long v = (unsigned long long)floor(bytes);
	int round = v >= 1024 && ((v & (v - 1)) == 0 || v % 4096 == 0 || (v >= 102400 && v % 1024 == 0));
	if (round) {
		static const char *const wu[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
		int i = 0;
		unsigned long long q = v / 1024;
		while (i < 5 && q % 1024 == 0) {
			q /= 1024;
			i++;
		}
		if (cell)
			return snprintf(buf, len, "%llu%s", q, cell_bytes[i]);
		char sfx[8];
		snprintf(sfx, sizeof(sfx), " %s", wu[i]);
		return thousands(buf, len, q, sfx);
	}
	if (cell)
		return snprintf(buf, len, "%llu", v);
	return thousands(buf, len, v, " B");
}

int iogp_fmt_ns(char *buf, size_t len, double ns, int style)
{
	if (style != IOGP_UNITS_CELL) {
		static const char *const u[] = { "ns", "µs", "ms", "s" };
		if (fabs(ns) < 60e9)
			return wide(buf, len, ns, 1000, u, 4, "");
		double s = ns / 1e9;
		snprintf(buf, len, fabs(s) >= 3600 ? "%.1f h" : "%.1f min", fabs(s) >= 3600 ? s / 3600 : s / 60);
		trim(buf);
		return (int)strlen(buf);
	}
	if (!(ns >= 0))
		ns = 0;
	if (ns < 1000)
		return snprintf(buf, len, "%.0fns", ns);
	if (ns < 999500)
		return sig3(buf, len, ns / 1e3, "", "us", "");
	if (ns < 999500000)
		return sig3(buf, len, ns / 1e6, "", "ms", "");
	return sig3(buf, len, ns / 1e9, "", "s", "");
}

int iogp_fmt_count(char *buf, size_t len, double c, int style)
{
	if (style != IOGP_UNITS_CELL) {
		static const char *const u[] = { "", "k", "M", "G", "T", "P" };
		if (fabs(c) < 1000 && c == floor(c))
			return snprintf(buf, len, "%.0f", c);
		wide(buf, len, c, 1000, u, 6, "");
		char *sp = strchr(buf, ' ');   /* "1.2 k" -> "1.2k" */
		if (sp)
			memmove(sp, sp + 1, strlen(sp));
		return (int)strlen(buf);
	}
	static const char *const u[] = { "k", "M", "G", "T" };
	if (!(c >= 0))
		c = 0;
	if (c < 100000)
		return snprintf(buf, len, "%.0f", floor(c));
	double d = 1e3;
	int i = 0;
	while (i < 3 && c >= d * 999.5)
		d *= 1e3, i++;
	return sig3(buf, len, c / d, "", u[i], "");
}

int iogp_fmt_value(char *buf, size_t len, const char *unit, double v, int style)
{
	if (unit && !strcmp(unit, "bytes"))
		return iogp_fmt_bytes(buf, len, v, style);
	if (unit && !strcmp(unit, "ns"))
		return iogp_fmt_ns(buf, len, v, style);
	return iogp_fmt_count(buf, len, v, style);
}

int iogp_fmt_rate(char *buf, size_t len, const char *unit, double per_s, int style)
{
	int bytes = unit && !strcmp(unit, "bytes");
	char t[48];
	if (style != IOGP_UNITS_CELL) {
		if (bytes)
			return wide(buf, len, per_s, 1024, wide_bytes, 7, "/s");
		iogp_fmt_count(t, sizeof(t), per_s, style);
		return snprintf(buf, len, "%s/s", t);
	}
	if (!(per_s >= 0))
		per_s = 0;
	if (bytes && per_s >= 1000) {
		double d = 1024;
		int i = 0;
		while (per_s / d >= 999.5 && i < 4) {
			d *= 1024;
			i++;
		}
		sig3(t, sizeof(t), per_s / d, "", cell_bytes[i], "");
	} else if (per_s < 10 && per_s != floor(per_s)) {
		snprintf(t, sizeof(t), "%.1f", per_s);
	} else {
		iogp_fmt_count(t, sizeof(t), per_s, style);
	}
	return snprintf(buf, len, "%s/s", t);
}

int iogp_fmt_duration(char *buf, size_t len, double s)
{
	if (!(s >= 0))
		s = 0;
	unsigned long t = (unsigned long)s;
	if (t >= 3600)
		return snprintf(buf, len, "%lu:%02lu:%02lu", t / 3600, t / 60 % 60, t % 60);
	return snprintf(buf, len, "%lu:%02lu", t / 60, t % 60);
}
