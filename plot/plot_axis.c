/* plot_axis.c - linear and log axes: mapping, tick placement, labels. */
#include <math.h>
#include <stdio.h>

#include "plot.h"

static double safe_log(double v)
{
	return log(v > 1e-300 ? v : 1e-300);
}

double pl_map(const pl_axis *a, double v)
{
	double f;
	if (a->log) {
		double l0 = safe_log(a->lo), l1 = safe_log(a->hi);
		f = l1 > l0 ? (safe_log(v < a->lo * 1e-6 ? a->lo * 1e-6 : v) - l0) / (l1 - l0) : 0;
	} else {
		f = a->hi > a->lo ? (v - a->lo) / (a->hi - a->lo) : 0;
	}
	return a->p0 + f * (a->p1 - a->p0);
}

double pl_unmap(const pl_axis *a, double p)
{
	double f = a->p1 != a->p0 ? (p - a->p0) / (a->p1 - a->p0) : 0;
	if (a->log) {
		double l0 = safe_log(a->lo), l1 = safe_log(a->hi);
		return exp(l0 + f * (l1 - l0));
	}
	return a->lo + f * (a->hi - a->lo);
}

double pl_nice_ceil(double v)
{
	static const double m[] = { 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10 };
	if (!(v > 0) || !isfinite(v))
		return 1;
	double e = pow(10, floor(log10(v)));
	for (int i = 0; i < 11; i++)
		if (m[i] * e >= v * (1 - 1e-12))
			return m[i] * e;
	return 10 * e;
}

static double nice125(double raw)
{
	double e = pow(10, floor(log10(raw)));
	double f = raw / e;
	return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * e;
}

static int lin_ticks(const pl_axis *a, double gap, double *out, int max)
{
	double px = fabs(a->p1 - a->p0), range = a->hi - a->lo;
	if (!(range > 0) || px < 1)
		return 0;
	double raw = range * gap / px, step;
	if (a->unit == PL_TIME) {
		static const double ts[] = { 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800,
		                             3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800 };
		step = ts[19];
		for (int i = 0; i < 20; i++)
			if (ts[i] >= raw) {
				step = ts[i];
				break;
			}
		if (raw > step)
			step = nice125(raw / 86400) * 86400;
	} else {
		/* steps of 1, 2, 5 x 10^n in the unit the step is written in (200 MiB,
		 * not a tenth of a GiB's "102 MiB") */
		double base = 1;
		double b = a->unit == PL_BYTES || a->unit == PL_SIZE || a->unit == PL_RATE ? 1024 :
		           a->unit == PL_NS ? 1000 : 0;
		if (b > 0)
			while (raw >= base * b)
				base *= b;
		step = nice125(raw / base) * base;
		if (a->unit == PL_SIZE && raw >= 1) {   /* 4 KiB, 8 KiB, 16 KiB: round sizes only */
			step = 1;
			while (step < raw)
				step *= 2;
		}
	}
	int n = 0;
	double first = ceil(a->lo / step - 1e-9) * step;
	for (int i = 0; n < max && i < 1000; i++) {
		double v = first + i * step;
		if (v > a->hi + step * 1e-9)
			break;
		out[n++] = fabs(v) < step * 1e-9 ? 0 : v;
	}
	return n;
}

static int log_ticks(const pl_axis *a, double gap, double *out, int max)
{
	if (!(a->lo > 0) || !(a->hi > a->lo))
		return 0;
	double px = fabs(a->p1 - a->p0);
	double per_ln = px / (log(a->hi) - log(a->lo));
	int n = 0;
	if (a->unit == PL_BYTES || a->unit == PL_SIZE || a->unit == PL_RATE) {
		static const int strides[] = { 1, 2, 5, 10, 20, 30 };
		int s = 30;
		for (int i = 0; i < 6; i++)
			if (strides[i] * log(2) * per_ln >= gap) {
				s = strides[i];
				break;
			}
		int j0 = (int)floor(log2(a->lo)), j1 = (int)ceil(log2(a->hi));
		for (int j = j0; j <= j1 && n < max; j++) {
			if (((j % s) + s) % s)
				continue;
			double v = ldexp(1, j);
			if (v >= a->lo * (1 - 1e-9) && v <= a->hi * (1 + 1e-9))
				out[n++] = v;
		}
		return n;
	}
	double dec = log(10) * per_ln;
	int s = 1;
	while (s * dec < gap && s < 30)
		s++;
	int sub = dec >= 3 * gap ? 3 : dec >= 1.6 * gap ? 2 : 1;
	static const double mult[] = { 1, 2, 5 };
	int j0 = (int)floor(log10(a->lo)), j1 = (int)ceil(log10(a->hi));
	for (int j = j0; j <= j1 && n < max; j++) {
		if (((j % s) + s) % s)
			continue;
		for (int k = 0; k < (s == 1 ? sub : 1) && n < max; k++) {
			if (sub == 2 && k == 1)
				k = 2;   /* 1, 5 when 2 does not fit */
			double v = mult[k] * pow(10, j);
			if (v >= a->lo * (1 - 1e-9) && v <= a->hi * (1 + 1e-9))
				out[n++] = v;
		}
	}
	return n;
}

int pl_ticks(const pl_axis *a, double gap, double *out, int max)
{
	return a->log ? log_ticks(a, gap, out, max) : lin_ticks(a, gap, out, max);
}

void pl_label(const pl_axis *a, double v, char *buf, size_t len)
{
	switch (a->unit) {
	case PL_BYTES: iogp_fmt_bytes(buf, len, v, IOGP_UNITS_WIDE); break;
	case PL_SIZE: iogp_fmt_size(buf, len, v, IOGP_UNITS_WIDE); break;
	case PL_RATE: iogp_fmt_rate(buf, len, "bytes", v, IOGP_UNITS_WIDE); break;
	case PL_NS: iogp_fmt_ns(buf, len, v, IOGP_UNITS_WIDE); break;
	case PL_COUNT: iogp_fmt_count(buf, len, v, IOGP_UNITS_WIDE); break;
	case PL_TIME: iogplot_fmt_clock(buf, len, v, fmod(v, 60) != 0); break;
	default: snprintf(buf, len, "%g", v); break;
	}
}
