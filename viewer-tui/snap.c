/* snap.c - the x key: what is on screen as CSV files in a new directory
 * (histograms as lower_bound,upper_bound,count, rates as series CSV, access
 * samples), and PNGs drawn by the cairo plot code when built with it. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "iogp_metrics.h"
#include "top.h"
#ifdef TOP_HAVE_PLOT
#include "iogplot.h"
#endif

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

static FILE *open_in(const char *dir, const char *name, char *names, size_t nlen)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	if (f && names) {
		size_t u = strlen(names);
		snprintf(names + u, nlen - u, "%s%s", u ? " " : "", name);
	}
	return f;
}

static int close_ok(FILE *f)
{
	int bad = ferror(f);
	return fclose(f) != 0 || bad ? -1 : 0;
}

#ifdef TOP_HAVE_PLOT
/* The dashboard (and a zoomed panel) as PNG, from the same selection and
 * window as the screen. */
static int snap_png(const top_frame *f, const top_layout *l, const char *dir, char *names,
                    size_t nlen, char *err, size_t errlen)
{
	static const char *const hist_metric[6] = { IOGP_POSIX_HISTS };
	iogplot_frame pf;
	iogplot_frame_init(&pf);
	iogp_sel sel;
	frame_sel(f, &sel);
	int rc = iogplot_frame_from_model(&pf, f->m, &sel);
	iogp_hist *slot[6] = { &pf.size[0], &pf.size[1], &pf.lat[0], &pf.lat[1], &pf.lat[2], &pf.qd };
	for (int i = 0; i < 6 && rc >= 0; i++) {   /* "last N seconds" as on screen */
		iogp_hist h;
		panel_hist_query(f, hist_metric[i], &h);
		iogp_hist_free(slot[i]);
		*slot[i] = h;
	}
	iogp_series rd, wr;
	if (rc >= 0 && panel_rates_series(f, IOGP_M_READ_BYTES, 0, &rd) == 0) {
		if (panel_rates_series(f, IOGP_M_WRITE_BYTES, 0, &wr) == 0) {
			iogplot_series_from_iogp(&pf.rates, &rd, &wr);
			iogp_series_free(&wr);
		}
		iogp_series_free(&rd);
	}
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
	char path[4200];
	int zoom = f->v->zoom, panel = -1;
	static const int map[NPANELS] = { IOGPLOT_SIZE, IOGPLOT_QD, IOGPLOT_LATENCY, IOGPLOT_ACCESS, IOGPLOT_RATES };
	if (zoom >= 0 && zoom < NPANELS && l->visible[zoom])
		panel = map[zoom];
	static const char *const png[NPANELS] = { "size.png", "queue_depth.png", "latency.png",
	                                          "access.png", "rates.png" };
	const char *name = panel < 0 ? "dashboard.png" : png[zoom];
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
	static const char *const stem[3] = { [P_SIZE] = "size", [P_QD] = "queue_depth", [P_LAT] = "latency" };
	for (int p = 0; p < NPANELS; p++) {
		if (!l->visible[p])
			continue;
		if (p == P_SIZE || p == P_QD || p == P_LAT) {
			hist_view hv;
			if (panel_hist_view(f, l->panel[p], p, &hv) < 0) {
				fail = 1;
				hist_view_free(&hv);
				continue;
			}
			for (int d = 0; d < hv.nd; d++) {
				char name[64];
				if (p == P_QD)
					snprintf(name, sizeof(name), "%s.csv", stem[p]);
				else
					snprintf(name, sizeof(name), "%s-%s.csv", stem[p], hv.what[d]);
				FILE *o = open_in(dir, name, names, sizeof(names));
				if (!o) {
					fail = 1;
					continue;
				}
				fprintf(o, "lower_bound,upper_bound,count\n");
				for (size_t i = 0; i < hv.nrows; i++)
					if (hv.rows[i].count[d])
						fprintf(o, "%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", hv.rows[i].lo,
						        hv.rows[i].hi, hv.rows[i].count[d]);
				fail |= close_ok(o) < 0;
				files++;
			}
			hist_view_free(&hv);
		} else if (p == P_RATES) {
			for (int d = 0; d < 2; d++) {
				if ((d == 0 && f->v->dir == DIR_WRITE) || (d == 1 && f->v->dir == DIR_READ))
					continue;
				iogp_series s;
				const char *metric = d ? IOGP_M_WRITE_BYTES : IOGP_M_READ_BYTES;
				if (panel_rates_series(f, metric, l->panel[p].w, &s) < 0) {
					fail = 1;
					continue;
				}
				FILE *o = open_in(dir, d ? "rates-write.csv" : "rates-read.csv", names, sizeof(names));
				if (o) {
					iogp_series_write_csv(&s, o);
					fail |= close_ok(o) < 0;
					files++;
				} else {
					fail = 1;
				}
				iogp_series_free(&s);
			}
		} else if (p == P_ACCESS) {
			char path[512];
			FILE *o = open_in(dir, "access.csv", NULL, 0);
			if (!o) {
				fail = 1;
				continue;
			}
			int rc = panel_access_csv(f, o, path, sizeof(path));
			fail |= close_ok(o) < 0;
			char full[4200];
			snprintf(full, sizeof(full), "%s/access.csv", dir);
			if (rc == IOGP_ENOTFOUND) {
				remove(full);
			} else {
				size_t u = strlen(names);
				snprintf(names + u, sizeof(names) - u, "%saccess.csv", u ? " " : "");
				files++;
			}
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
