/* probe_view.c - slowdown probes as both viewers show them: the drawn
 * probe, factors, the log axis, agreement across nodes and the panel's CSV
 * (iogp_probe_view.h). */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "iogp_err.h"
#include "iogp_export.h"
#include "iogp_probe_view.h"

static int64_t worst_of(const iogp_probe *p)
{
	int64_t w = -1;
	for (uint32_t o = 0; o < p->nops; o++)
		if (p->slowdown_milli[o] > w)
			w = p->slowdown_milli[o];
	return w;
}

void iogp_probe_set_get(iogp_probe_set *set, const iogp_model *m, const char *node)
{
	set->total = iogp_model_probes(m, set->p, IOGP_PROBE_VIEW_MAX);
	set->n = set->total < IOGP_PROBE_VIEW_MAX ? set->total : IOGP_PROBE_VIEW_MAX;
	set->shown = -1;
	set->worst = 0;
	if (node && *node)
		for (size_t i = 0; i < set->n && set->shown < 0; i++)
			if (!strcmp(set->p[i].node, node))
				set->shown = (int)i;
	if (set->shown >= 0 || set->n == 0)
		return;
	int64_t best = -2;
	for (size_t i = 0; i < set->n; i++) {
		int64_t w = worst_of(&set->p[i]);
		if (w > best) {
			best = w;
			set->shown = (int)i;
		}
	}
	set->worst = set->n > 1;
}

void iogp_probe_factor(char *buf, size_t len, int64_t milli)
{
	if (milli < 0) {
		snprintf(buf, len, "-");
		return;
	}
	double f = (double)milli / 1000.0;
	if (f < 9.995)
		snprintf(buf, len, "%.2fx", f);
	else if (f < 99.95)
		snprintf(buf, len, "%.1fx", f);
	else
		snprintf(buf, len, "%.0fx", f);
}

int iogp_probe_level(int64_t milli)
{
	return milli < 0 ? -1 : milli < 1500 ? 0 : milli < 3000 ? 1 : 2;
}

void iogp_probe_title(char *buf, size_t len, const iogp_probe *p)
{
	snprintf(buf, len, "%s / %s", p->statistic[0] ? p->statistic : "median",
	         p->expected[0] ? p->expected : "expected");
}

void iogp_probe_where(char *buf, size_t len, const iogp_probe *p)
{
	if (p->fs[0])
		snprintf(buf, len, "%s %s (%s)", p->node, p->dir, p->fs);
	else
		snprintf(buf, len, "%s %s", p->node, p->dir);
}

/* ---- the log axis ---- */

void iogp_probe_axis_fit(iogp_probe_axis *a, double min, double max, int max_ticks)
{
	if (!(min > 0) || !isfinite(min))
		min = 1;
	if (!(max > 0) || !isfinite(max))
		max = 1;
	if (min < 1e-3)
		min = 1e-3;
	if (max > 1e6)
		max = 1e6;
	/* 0.5x and 2x at least, so a quiet file system is a flat line at 1x;
	 * beyond them whole decades */
	a->lo = min >= 0.5 ? 0.5 : pow(10, floor(log10(min) + 1e-9));
	a->hi = max <= 2 ? 2 : pow(10, ceil(log10(max) - 1e-9));
	if (max_ticks > IOGP_PROBE_MAX_TICKS)
		max_ticks = IOGP_PROBE_MAX_TICKS;
	/* 1-2-5 per decade, then 1-10 per decade, then every other decade */
	static const double steps[3][3] = { { 1, 2, 5 }, { 1, 0, 0 }, { 1, 0, 0 } };
	for (int pass = 0; pass < 3; pass++) {
		a->nticks = 0;
		int every = pass == 2 ? 2 : 1, ok = 1;
		for (int e = (int)floor(log10(a->lo) + 1e-9), k = 0; e <= (int)ceil(log10(a->hi)); e++, k++) {
			if (k % every)
				continue;
			for (int s = 0; s < 3; s++) {
				double v = steps[pass][s] * pow(10, e);
				if (!(steps[pass][s] > 0) || v < a->lo * 0.999 || v > a->hi * 1.001)
					continue;
				if (a->nticks >= max_ticks) {
					ok = 0;
					break;
				}
				a->tick[a->nticks++] = v;
			}
		}
		if (ok)
			break;
	}
}

double iogp_probe_axis_pos(const iogp_probe_axis *a, double v)
{
	if (!(v > 0))
		return 0;
	double p = log(v / a->lo) / log(a->hi / a->lo);
	return p < 0 ? 0 : p > 1 ? 1 : p;
}

void iogp_probe_tick_label(char *buf, size_t len, double v)
{
	if (v >= 1)
		snprintf(buf, len, "%.0fx", v);
	else
		snprintf(buf, len, "%gx", v);
}

/* ---- side by side ---- */

int iogp_probe_op_index(const iogp_probe *p, const char *op)
{
	for (uint32_t o = 0; o < p->nops; o++)
		if (!strcmp(p->op[o], op))
			return (int)o;
	return -1;
}

size_t iogp_probe_ops(const iogp_probe_set *set, const char **ops, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < set->n; i++)
		for (uint32_t o = 0; o < set->p[i].nops; o++) {
			size_t k = 0;
			while (k < n && strcmp(ops[k], set->p[i].op[o]))
				k++;
			if (k == n && n < max)
				ops[n++] = set->p[i].op[o];
		}
	return n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

void iogp_probe_agreement(const iogp_probe_set *set, const char *op, iogp_probe_agree *out)
{
	static double v[IOGP_PROBE_VIEW_MAX];
	memset(out, 0, sizeof(*out));
	out->odd = -1;
	out->agree = -1;
	for (size_t i = 0; i < set->n; i++) {
		int o = iogp_probe_op_index(&set->p[i], op);
		if (o >= 0 && set->p[i].slowdown_milli[o] >= 0)
			v[out->n++] = (double)set->p[i].slowdown_milli[o] / 1000.0;
	}
	if (out->n == 0) {
		snprintf(out->text, sizeof(out->text), "no reports yet");
		return;
	}
	qsort(v, out->n, sizeof(*v), cmp_double);
	out->min = v[0];
	out->max = v[out->n - 1];
	out->median = out->n % 2 ? v[out->n / 2] : (v[out->n / 2 - 1] + v[out->n / 2]) / 2;
	/* the farthest from the median, by ratio */
	double far = 0;
	for (size_t i = 0; i < set->n; i++) {
		int o = iogp_probe_op_index(&set->p[i], op);
		if (o < 0 || set->p[i].slowdown_milli[o] < 0)
			continue;
		double f = (double)set->p[i].slowdown_milli[o] / 1000.0;
		double r = f > 0 && out->median > 0 ? fabs(log(f / out->median)) : INFINITY;
		if (r > far || out->odd < 0) {
			far = r;
			out->odd = (int)i;
		}
	}
	char a[24], b[24], c[24];
	iogp_probe_factor(a, sizeof(a), (int64_t)(out->min * 1000 + 0.5));
	iogp_probe_factor(b, sizeof(b), (int64_t)(out->max * 1000 + 0.5));
	iogp_probe_factor(c, sizeof(c), (int64_t)(out->median * 1000 + 0.5));
	if (out->n < 2) {
		snprintf(out->text, sizeof(out->text), "one node: %s", a);
		return;
	}
	int agree = 1;
	for (uint32_t i = 0; i < out->n; i++) {
		double r = out->median > 0 ? v[i] / out->median : INFINITY;
		if ((r > 1.5 || r < 1 / 1.5) && fabs(v[i] - out->median) > 0.25)
			agree = 0;
	}
	out->agree = agree;
	if (agree) {
		snprintf(out->text, sizeof(out->text), "%u nodes agree: %s-%s", out->n, a, b);
	} else {
		const iogp_probe *p = &set->p[out->odd];
		char d[24];
		iogp_probe_factor(d, sizeof(d), p->slowdown_milli[iogp_probe_op_index(p, op)]);
		snprintf(out->text, sizeof(out->text), "nodes differ: %.60s %s, median %s (%u nodes)",
		         p->node, d, c, out->n);
	}
}

int iogp_probe_panel_csv(FILE *out, const iogp_probe_set *set)
{
	fprintf(out, "node,dir,fs,op,statistic,expected_by,stat_ns,expected_ns,slowdown\n");
	for (size_t i = 0; i < set->n; i++) {
		const iogp_probe *p = &set->p[i];
		for (uint32_t o = 0; o < p->nops; o++) {
			iogp_csv_field(out, p->node);
			fputc(',', out);
			iogp_csv_field(out, p->dir);
			fputc(',', out);
			iogp_csv_field(out, p->fs);
			fprintf(out, ",%s,", p->op[o]);
			iogp_csv_field(out, p->statistic);
			fputc(',', out);
			iogp_csv_field(out, p->expected);
			fputc(',', out);
			if (p->stat_ns[o] >= 0)
				fprintf(out, "%" PRId64, p->stat_ns[o]);
			fputc(',', out);
			if (p->expected_ns[o] >= 0)
				fprintf(out, "%" PRId64, p->expected_ns[o]);
			fputc(',', out);
			if (p->slowdown_milli[o] >= 0)
				fprintf(out, "%.3f", (double)p->slowdown_milli[o] / 1000.0);
			fputc('\n', out);
		}
	}
	return ferror(out) ? IOGP_EIO : 0;
}
