/* plot_csv.c - what a panel shows as CSV files in a directory, named and
 * shaped as iogram-top's snapshot: histograms as lower_bound,upper_bound,count,
 * the common request sizes, rates as iogram export's series, access samples
 * of the busiest file, the slowdown probes' factors now, the MPI traffic
 * matrix and its message sizes. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "iogp_phase_view.h"
#include "iogp_size_table.h"
#include "plot.h"

/* One op of a frame's series as iogp_series, to share its CSV writer. */
static int write_rates(const iogplot_series *s, int op, FILE *out)
{
	iogp_series t;
	memset(&t, 0, sizeof(t));
	t.step_s = s->step;
	t.origin_ns = (uint64_t)llround(s->t0 * 1e9);
	t.nbins = t.cap = s->nbins;
	t.nnodes = s->nnodes;
	t.nodes = s->nodes;
	t.kind = IOGP_COUNTER;
	snprintf(t.unit, sizeof(t.unit), "bytes");
	t.v = calloc(s->nnodes ? s->nnodes : 1, sizeof(double *));
	t.covered = calloc(s->nnodes ? s->nnodes : 1, sizeof(uint8_t *));
	int rc = t.v && t.covered ? 0 : IOGP_ENOMEM;
	for (size_t k = 0; k < s->nnodes && !rc; k++) {
		t.v[k] = calloc(s->nbins ? s->nbins : 1, sizeof(double));
		t.covered[k] = calloc(s->nbins ? s->nbins : 1, 1);
		if (!t.v[k] || !t.covered[k]) {
			rc = IOGP_ENOMEM;
			break;
		}
		for (size_t b = 0; b < s->nbins; b++) {
			float x = s->v[op][k * s->nbins + b];
			t.covered[k][b] = !isnan(x);
			t.v[k][b] = isnan(x) ? 0 : x;
		}
	}
	if (!rc)
		rc = iogp_series_write_csv(&t, out);
	for (size_t k = 0; t.v && k < s->nnodes; k++)
		free(t.v[k]);
	for (size_t k = 0; t.covered && k < s->nnodes; k++)
		free(t.covered[k]);
	free(t.v);
	free(t.covered);
	return rc;
}

int iogplot_export_csv(const char *dir, const iogplot_frame *f, int panel, char *names,
                       size_t nlen, char *err, size_t errlen)
{
	if (names && nlen)
		names[0] = 0;
	if (mkdir(dir, 0777) < 0 && errno != EEXIST) {
		iogp_errf(err, errlen, "%s: %s", dir, strerror(errno));
		return IOGP_EIO;
	}
	static const char *const opn[3] = { "read", "write", "meta" };
	int fail = 0, files = 0;
	char failed[256] = "";
	for (int p = IOGPLOT_SIZE; p < IOGPLOT_NPANELS; p++) {
		/* the traffic panel draws the message sizes inside it: both files */
		if (panel >= 0 && p != panel && !(panel == IOGPLOT_MATRIX && p == IOGPLOT_MSGSIZE))
			continue;
		const iogp_panel *e = iogp_panel_get(p);
		char name[64];
		if (e->data == IOGP_DATA_HIST) {
			const iogp_hist *h[3];
			int ops[3], n = pl_hist_series(f, p, h, ops);
			int single = !e->metrics[1];   /* queue depth: one file, even empty */
			for (int k = 0; k < n; k++) {
				if (!h[k]->total && (!single || p == IOGPLOT_MSGSIZE))   /* no MPI: none */
					continue;
				iogp_panel_file(p, single ? NULL : opn[ops[k]], "csv", name, sizeof(name));
				FILE *o = iogp_export_open(dir, name, names, nlen);
				if (!o || iogp_hist_write_csv(h[k], o) < 0) {
					snprintf(failed, sizeof(failed), "%s: %s", name, strerror(errno ? errno : EIO));
					fail = 1;
				}
				if (o && iogp_export_close(o) < 0)
					fail = 1;
				files++;
				if (p != IOGPLOT_SIZE || !h[k]->nexact)
					continue;
				/* and its common sizes (as the panel's table) */
				char part[32];
				snprintf(part, sizeof(part), "common-%s", opn[ops[k]]);
				iogp_panel_file(p, part, "csv", name, sizeof(name));
				o = iogp_export_open(dir, name, names, nlen);
				if (!o || iogp_size_table_write_csv(h[k], o) < 0) {
					snprintf(failed, sizeof(failed), "%s: %s", name, strerror(errno ? errno : EIO));
					fail = 1;
				}
				if (o && iogp_export_close(o) < 0)
					fail = 1;
				files++;
			}
		} else if (e->data == IOGP_DATA_RATES && (p == IOGPLOT_RATES || panel == p)) {
			/* the heatmap's data is the rates series: the same files, once */
			for (int op = 0; op < 2; op++) {
				iogp_panel_file(IOGPLOT_RATES, opn[op], "csv", name, sizeof(name));
				FILE *o = iogp_export_open(dir, name, names, nlen);
				if (!o || write_rates(&f->rates, op, o) < 0) {
					snprintf(failed, sizeof(failed), "%s: %s", name, strerror(errno ? errno : EIO));
					fail = 1;
				}
				if (o && iogp_export_close(o) < 0)
					fail = 1;
				files++;
			}
		} else if (e->data == IOGP_DATA_PHASES || e->data == IOGP_DATA_INSIGHTS) {
			/* the phases as iogram export phases writes them; the findings as text */
			int ph = e->data == IOGP_DATA_PHASES;
			iogp_panel_file(p, NULL, ph ? "csv" : "txt", name, sizeof(name));
			FILE *o = iogp_export_open(dir, name, names, nlen);
			if (!o || (ph ? iogp_phases_write_csv(o, f->phases, f->nphases)
			              : iogp_insights_write_text(o, f->insights, f->ninsights)) < 0) {
				snprintf(failed, sizeof(failed), "%s: %s", name, strerror(errno ? errno : EIO));
				fail = 1;
			}
			if (o && iogp_export_close(o) < 0)
				fail = 1;
			files++;
		} else if (e->data == IOGP_DATA_PROBE && f->probes) {
			/* every probe's factors now (iogp_probe_view.h), as iogram-top's */
			iogp_panel_file(p, NULL, "csv", name, sizeof(name));
			FILE *o = iogp_export_open(dir, name, names, nlen);
			if (!o || iogp_probe_panel_csv(o, f->probes) < 0) {
				snprintf(failed, sizeof(failed), "%s: %s", name, strerror(errno ? errno : EIO));
				fail = 1;
			}
			if (o && iogp_export_close(o) < 0)
				fail = 1;
			files++;
		} else if (e->data == IOGP_DATA_MATRIX && f->matrix && f->matrix->x.n && !f->matrix->empty) {
			/* every cell, messages and bytes, and the totals (iogram export matrix's) */
			iogp_panel_file(p, NULL, "csv", name, sizeof(name));
			FILE *o = iogp_export_open(dir, name, names, nlen);
			if (!o || iogp_matrix_csv(o, &f->matrix->x, f->matrix->by) < 0) {
				snprintf(failed, sizeof(failed), "%s: %s", name, strerror(errno ? errno : EIO));
				fail = 1;
			}
			if (o && iogp_export_close(o) < 0)
				fail = 1;
			files++;
		} else if (e->data == IOGP_DATA_NODES && f->nodes.n) {
			/* a row per node or process by name, units in the header */
			size_t *ord = malloc(f->nodes.n * sizeof(*ord));
			iogp_panel_file(p, NULL, "csv", name, sizeof(name));
			FILE *o = ord ? iogp_export_open(dir, name, names, nlen) : NULL;
			if (o)
				iogp_node_table_order(&f->nodes, IOGP_NT_NAME, 0, ord);
			if (!o || iogp_node_table_write_csv(&f->nodes, ord, o) < 0) {
				snprintf(failed, sizeof(failed), "%s: %s", name, strerror(errno ? errno : EIO));
				fail = 1;
			}
			if (o && iogp_export_close(o) < 0)
				fail = 1;
			free(ord);
			files++;
		} else if (e->data == IOGP_DATA_ACCESS && f->nfiles) {
			iogp_panel_file(p, NULL, "csv", name, sizeof(name));
			FILE *o = iogp_export_open(dir, name, names, nlen);
			if (!o) {
				snprintf(failed, sizeof(failed), "%s: %s", name, strerror(errno));
				fail = 1;
				continue;
			}
			iogp_access_csv_header(o);
			for (size_t i = 0; i < f->naccess; i++) {
				const iogplot_access_pt *a = &f->access[i];
				if (a->file == 0)
					iogp_access_csv_row(o, (uint64_t)llround(a->t * 1e9), f->files[0].path,
					                    a->op, a->offset, a->size);
			}
			fail |= iogp_export_close(o) < 0;
			files++;
		}
	}
	if (fail) {
		iogp_errf(err, errlen, "%s: writing failed (%s)", dir, failed[0] ? failed : "I/O error");
		return IOGP_EIO;
	}
	if (!files) {
		iogp_errf(err, errlen, "nothing to write for this panel");
		return IOGP_ENOTFOUND;
	}
	return files;
}
