/* snap.c - the x key: what is on screen as CSV files in a new directory
 * (histograms as lower_bound,upper_bound,count, common request sizes, rates
 * as series CSV, access samples), and PNGs drawn by the cairo plot code when
 * built with it. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "iogp_metrics.h"
#include "top.h"
#ifdef TOP_HAVE_PLOT
#include "iogplot.h"
#endif

/* The common sizes of direction d of the size panel: size-common-read.csv
 * (none without exact sizes). */
static int common_csv(const char *dir, const hist_view *hv, int d, char *names, size_t nlen)
{
	iogp_size_table t;
	iogp_size_table_build(&t, &hv->native[d], IOGP_SIZE_TABLE_ROWS, IOGP_UNITS_CELL);
	if (!t.nrows)
		return 0;
	char part[32], name[64];
	snprintf(part, sizeof(part), "common-%s", hv->what[d]);
	iogp_panel_file(IOGP_PANEL_SIZE, part, "csv", name, sizeof(name));
	FILE *o = iogp_export_open(dir, name, names, nlen);
	if (!o)
		return -1;
	int rc = iogp_size_table_write_csv(&hv->native[d], o);
	return iogp_export_close(o) < 0 || rc < 0 ? -1 : 1;
}

static int make_dir(const char *base, char *out, size_t len)
{
	time_t t = time(NULL);
	struct tm tm;
	localtime_r(&t, &tm);
	char stamp[32];
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	for (int i = 0; i < 100; i++) {
		if (i)
			snprintf(out, len, "%s/iogram-snap-%s-%d", base, stamp, i);
		else
			snprintf(out, len, "%s/iogram-snap-%s", base, stamp);
		if (mkdir(out, 0777) == 0)
			return 0;
		if (errno != EEXIST)
			return -1;
	}
	errno = EEXIST;
	return -1;
}

#ifdef TOP_HAVE_PLOT
/* The dashboard (and a zoomed panel) as PNG, from the same selection and
 * window as the screen. */
static int snap_png(const top_frame *f, const top_layout *l, const char *dir, char *names,
                    size_t nlen, char *err, size_t errlen)
{
	iogplot_frame pf;
	iogplot_frame_init(&pf);
	pf.layer = f->v->layer;
	iogp_sel sel;
	frame_sel(f, &sel);
	int rc = iogplot_frame_from_model(&pf, f->m, &sel);
	if (rc >= 0 && view_window(f->v) > 0)   /* the traffic over the window, as on screen */
		rc = iogplot_frame_mpi(&pf, f->m, &sel, view_window(f->v));
	iogp_hist *slot[6] = { &pf.size[0], &pf.size[1], &pf.lat[0], &pf.lat[1], &pf.lat[2], &pf.qd };
	for (int i = 0; i < 6 && rc >= 0; i++) {   /* "last N seconds" as on screen */
		const char *metric = iogp_layer_slot_metric(f->v->layer, i);
		if (!metric)
			continue;   /* none in this layer: left empty */
		iogp_hist h;
		panel_hist_query(f, metric, &h);
		iogp_hist_free(slot[i]);
		*slot[i] = h;
	}
	iogp_series rd, wr;
	const iogp_panel *rates = iogp_panel_get(IOGP_PANEL_RATES);
	if (rc >= 0 && panel_rates_series(f, frame_metric(f, rates->metrics[0]), 0, &rd) == 0) {
		if (panel_rates_series(f, frame_metric(f, rates->metrics[1]), 0, &wr) == 0) {
			iogplot_series_from_iogp(&pf.rates, &rd, &wr);
			iogp_series_free(&wr);
		}
		iogp_series_free(&rd);
	}
	size_t *norder = NULL;   /* the nodes table as on screen */
	if (rc >= 0 && panel_nodes_table(f, &pf.nodes, &norder) < 0)
		iogp_node_table_free(&pf.nodes);
	free(norder);
	if (rc >= 0 && f->heat && f->v->rates_mode == RATES_HEAT_P99 &&
	    iogp_heat_update(f->heat, f->m, f->v->layer) == 0)
		iogplot_series_from_heat(&pf.lat_heat, f->heat);
	if (f->v->sel == IOGP_SEL_SOURCE)
		pf.selected_source = f->v->sel_source;
	const top_status *st = f->st;
	snprintf(pf.title, sizeof(pf.title), "%s %s", st->mode == MODE_REPLAY ? "replay" :
	         st->mode == MODE_DEMO ? "demo" : "live", st->f.where ? st->f.where : "");
	if (f->v->sel == IOGP_SEL_NODE)
		snprintf(pf.selection, sizeof(pf.selection), "node %s", f->v->sel_node);
	else if (f->v->sel == IOGP_SEL_SOURCE)
		snprintf(pf.selection, sizeof(pf.selection), "source %016llx", (unsigned long long)f->v->sel_source);
	else
		snprintf(pf.selection, sizeof(pf.selection), "all nodes");
	double w = view_window(f->v);
	if (w > 0)
		snprintf(pf.window, sizeof(pf.window), "last %g s", w);
	else
		snprintf(pf.window, sizeof(pf.window), "since start");
	pf.msg_rate = st->f.msgs_per_s;
	pf.recording = st->f.recording;
	if (st->f.recording)
		snprintf(pf.record_path, sizeof(pf.record_path), "%s", st->f.rec_path);
	pf.t_now = (double)f->now_ns / 1e9;
	iogplot_style ps;
	iogplot_style_init(&ps, 0);
	iogplot_view pv;
	iogplot_view_init(&pv);
	pv.size_weight = f->v->weight;
	pv.sort_col = f->v->sort_col;
	pv.sort_desc = f->v->sort_desc;
	pv.heat_p99 = f->v->rates_mode == RATES_HEAT_P99;
	char path[4200], name[64] = "dashboard.png";
	int zoom = f->v->zoom, panel = -1;
	if (panel_shown(zoom) && l->visible[zoom]) {
		panel = zoom;   /* the catalog's ids are the plot's */
		iogp_panel_file(panel, NULL, "png", name, sizeof(name));
	}
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (rc >= 0)
		rc = iogplot_export(path, &ps, &pf, &pv, panel, panel < 0 ? 1280 : 960, panel < 0 ? 800 : 600,
		                    1, err, errlen);
	else
		snprintf(err, errlen, "%s", iogp_strerror(rc));
	if (rc >= 0) {
		size_t u = strlen(names);
		snprintf(names + u, nlen - u, "%s%s", u ? " " : "", name);
	}
	iogplot_frame_free(&pf);
	return rc;
}
#endif

int snap_write(const top_frame *f, const top_layout *l, const char *base, char *msg, size_t msglen)
{
	char dir[4096], names[2048] = "";
	int files = 0, fail = 0;
	if (!base || !base[0])
		base = ".";
	if (make_dir(base, dir, sizeof(dir)) < 0) {
		snprintf(msg, msglen, "%s: %s", base, strerror(errno));
		return -1;
	}
	for (int p = 0; p < IOGP_PANEL_N; p++) {
		if (!l->visible[p])
			continue;
		int data = iogp_panel_get(p)->data;
		if (data == IOGP_DATA_HIST) {
			hist_view hv;
			if (panel_hist_view(f, l->panel[p], p, &hv) < 0) {
				fail = 1;
				hist_view_free(&hv);
				continue;
			}
			for (int d = 0; d < hv.nd; d++) {
				char name[64];
				iogp_panel_file(p, hv.what[d], "csv", name, sizeof(name));
				FILE *o = iogp_export_open(dir, name, names, sizeof(names));
				if (!o) {
					fail = 1;
					continue;
				}
				/* at full native resolution (exact sizes where known), whatever
				 * the screen merged or re-binned */
				fail |= iogp_hist_write_csv(&hv.native[d], o) < 0;
				fail |= iogp_export_close(o) < 0;
				files++;
				if (p == IOGP_PANEL_SIZE && hv.what[d][0]) {
					int c = common_csv(dir, &hv, d, names, sizeof(names));
					fail |= c < 0;
					files += c > 0;
				}
			}
			hist_view_free(&hv);
		} else if (data == IOGP_DATA_RATES) {
			static const char *const what[2] = { "read", "write" };
			for (int d = 0; d < 2; d++) {
				if ((d == 0 && f->v->dir == DIR_WRITE) || (d == 1 && f->v->dir == DIR_READ))
					continue;
				iogp_series s;
				const char *metric = frame_metric(f, iogp_panel_get(p)->metrics[d]);
				if (panel_rates_series(f, metric, l->panel[p].w, &s) < 0) {
					fail = 1;
					continue;
				}
				char name[64];
				iogp_panel_file(p, what[d], "csv", name, sizeof(name));
				FILE *o = iogp_export_open(dir, name, names, sizeof(names));
				if (o) {
					iogp_series_write_csv(&s, o);
					fail |= iogp_export_close(o) < 0;
					files++;
				} else {
					fail = 1;
				}
				iogp_series_free(&s);
			}
		} else if (data == IOGP_DATA_NODES) {
			/* the table in the order on screen */
			iogp_node_table t;
			size_t *order = NULL;
			char name[64];
			iogp_panel_file(p, NULL, "csv", name, sizeof(name));
			FILE *o = panel_nodes_table(f, &t, &order) == 0 ? iogp_export_open(dir, name, names, sizeof(names))
			                                                : NULL;
			if (o) {
				fail |= iogp_node_table_write_csv(&t, order, o) < 0;
				fail |= iogp_export_close(o) < 0;
				files++;
			} else {
				fail = 1;
			}
			iogp_node_table_free(&t);
			free(order);
		} else if (data == IOGP_DATA_ACCESS) {
			char path[512], name[64], full[4200];
			iogp_panel_file(p, NULL, "csv", name, sizeof(name));
			FILE *o = iogp_export_open(dir, name, NULL, 0);
			if (!o) {
				fail = 1;
				continue;
			}
			int rc = panel_access_csv(f, o, path, sizeof(path));
			fail |= iogp_export_close(o) < 0;
			snprintf(full, sizeof(full), "%s/%s", dir, name);
			if (rc == IOGP_ENOTFOUND) {
				remove(full);
			} else {
				size_t u = strlen(names);
				snprintf(names + u, sizeof(names) - u, "%s%s", u ? " " : "", name);
				files++;
			}
		}
	}
	/* the phases (iogram export phases' CSV) and the findings, whatever is on screen */
	static const int job[2] = { IOGP_PANEL_PHASES, IOGP_PANEL_INSIGHTS };
	for (int k = 0; k < 2; k++) {
		char name[64];
		iogp_panel_file(job[k], NULL, k ? "txt" : "csv", name, sizeof(name));
		FILE *o = iogp_export_open(dir, name, names, sizeof(names));
		if (!o) {
			fail = 1;
			continue;
		}
		fail |= (k ? panel_insights_text(f, o) : panel_phases_csv(f, o)) < 0;
		fail |= iogp_export_close(o) < 0;
		files++;
	}
	/* the MPI traffic matrix as shown, when there is any */
	{
		char name[64], full[4200];
		iogp_panel_file(IOGP_PANEL_MATRIX, NULL, "csv", name, sizeof(name));
		FILE *o = iogp_export_open(dir, name, NULL, 0);
		if (o) {
			int rc = panel_matrix_csv(f, o);
			fail |= iogp_export_close(o) < 0 || (rc < 0 && rc != IOGP_ENOTFOUND);
			snprintf(full, sizeof(full), "%s/%s", dir, name);
			if (rc < 0) {
				remove(full);
			} else {
				size_t u = strlen(names);
				snprintf(names + u, sizeof(names) - u, "%s%s", u ? " " : "", name);
				files++;
			}
		} else {
			fail = 1;
		}
	}
	/* the probes, when there are any */
	int64_t worst;
	if (panel_probe_worst(f, &worst) > 0) {
		char name[64];
		iogp_panel_file(IOGP_PANEL_PROBE, NULL, "csv", name, sizeof(name));
		FILE *o = iogp_export_open(dir, name, names, sizeof(names));
		if (o) {
			fail |= panel_probe_csv(f, o) < 0;
			fail |= iogp_export_close(o) < 0;
			files++;
		} else {
			fail = 1;
		}
	}
#ifdef TOP_HAVE_PLOT
	char perr[256] = "";
	if (snap_png(f, l, dir, names, sizeof(names), perr, sizeof(perr)) < 0)
		fail = 1;
	snprintf(msg, msglen, "snapshot %s/: %s%s%s", dir, names, perr[0] ? "; PNG failed: " : "", perr);
#else
	snprintf(msg, msglen, "snapshot %s/: %s%s; PNG: not built (needs iogram-view's cairo plots)",
	         dir, names, fail ? " (some files failed)" : "");
#endif
	(void)files;
	return fail ? -1 : 0;
}
