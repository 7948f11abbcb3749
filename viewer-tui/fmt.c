/* fmt.c - compact human units for a terminal cell budget. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "top.h"

static int sig3(char *buf, size_t len, double v, const char *suffix)
{
	if (v >= 100 || v == floor(v))
		return snprintf(buf, len, "%.0f%s", v, suffix);
	if (v >= 10)
		return snprintf(buf, len, "%.1f%s", v, suffix);
	return snprintf(buf, len, "%.2f%s", v, suffix);
}

int fmt_bytes(char *buf, size_t len, double v)
{
	static const char *const unit[] = { "K", "M", "G", "T", "P", "E" };
	if (!(v >= 0))
		v = 0;
	if (v < 10000)
		return snprintf(buf, len, "%.0f", floor(v));
	double d = 1024;
	for (int i = 0; i < 6; i++, d *= 1024) {
		double q = v / d;
		if (q < 1000 && q == floor(q))
			return snprintf(buf, len, "%.0f%s", q, unit[i]);
		if (q < 999.5 || i == 5) {
			/* 999.5..1023 would round to 1000: say 0.98M instead */
			return sig3(buf, len, q, unit[i]);
		}
	}
	return snprintf(buf, len, "%.0f", v);
}

int fmt_ns(char *buf, size_t len, double ns)
{
	if (!(ns >= 0))
		ns = 0;
	if (ns < 1000)
		return snprintf(buf, len, "%.0fns", ns);
	if (ns < 999500)
		return sig3(buf, len, ns / 1e3, "us");
	if (ns < 999500000)
		return sig3(buf, len, ns / 1e6, "ms");
	return sig3(buf, len, ns / 1e9, "s");
}

int fmt_count(char *buf, size_t len, double c)
{
	if (!(c >= 0))
		c = 0;
	if (c < 100000)
		return snprintf(buf, len, "%.0f", floor(c));
	if (c < 999500)
		return sig3(buf, len, c / 1e3, "k");
	if (c < 999500000)
		return sig3(buf, len, c / 1e6, "M");
	if (c < 999500000000.0)
		return sig3(buf, len, c / 1e9, "G");
	return sig3(buf, len, c / 1e12, "T");
}

int fmt_value(char *buf, size_t len, const char *unit, double v)
{
	if (unit && !strcmp(unit, "bytes"))
		return fmt_bytes(buf, len, v);
	if (unit && !strcmp(unit, "ns"))
		return fmt_ns(buf, len, v);
	return fmt_count(buf, len, v);
}

int fmt_rate(char *buf, size_t len, const char *unit, double per_s)
{
	static const char *const bu[] = { "K", "M", "G", "T", "P" };
	char t[32];
	if (!(per_s >= 0))
		per_s = 0;
	if (unit && !strcmp(unit, "bytes") && per_s >= 1000) {
		double d = 1024;
		int i = 0;
		while (per_s / d >= 999.5 && i < 4) {
			d *= 1024;
			i++;
		}
		sig3(t, sizeof(t), per_s / d, bu[i]);
	} else if (per_s < 10 && per_s != floor(per_s)) {
		snprintf(t, sizeof(t), "%.1f", per_s);
	} else {
		fmt_count(t, sizeof(t), per_s);
	}
	return snprintf(buf, len, "%s/s", t);
}

int fmt_clock(char *buf, size_t len, double s)
{
	if (!(s >= 0))
		s = 0;
	unsigned long t = (unsigned long)s;
	if (t >= 3600)
		return snprintf(buf, len, "%lu:%02lu:%02lu", t / 3600, t / 60 % 60, t % 60);
	return snprintf(buf, len, "%lu:%02lu", t / 60, t % 60);
}
