/* snapshot.c - headless rendering of a replay at a time to PNG, SVG or PDF,
 * or its CSV files: cairo and the stream model only, for reports and batch
 * jobs. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "view.h"

int iogv_snapshot_csv_dir(const char *out, char *dir, size_t len)
{
	size_t n = strlen(out);
	if (n < 5 || strcasecmp(out + n - 4, ".csv"))
		return 0;
	if (dir)
		snprintf(dir, len, "%.*s", (int)(n - 4), out);
	return 1;
}

int iogv_snapshot(const iogv_args *a)
{
	char err[512] = "";
	iogv_opts o = { .history_s = a->history_s, .layer = a->layer };
	iogv_session *s = iogv_session_new(&o);
	if (!s) {
		fprintf(stderr, "iogram-view: out of memory\n");
		return IOGP_EXIT_ERROR;
	}
	int rc = iogv_open_replay(s, a->replay, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "iogram-view: %s\n", err[0] ? err : iogp_strerror(rc));
		iogv_session_free(s);
		return IOGP_EXIT_ERROR;
	}
	double start, end;
	iogv_replay_span(s, &start, &end);
	double t = end;
	if (a->have_at)
		t = signbit(a->at) ? end + a->at : start + a->at;   /* -0: the end */
	if (t > end || t < start)
		fprintf(stderr, "iogram-view: --at is outside the recording (0..%.0f s); using the %s\n",
		        end - start, t > end ? "end" : "start");
	if ((rc = iogv_replay_seek(s, t)) < 0) {
		fprintf(stderr, "iogram-view: %s: %s\n", a->replay, iogp_strerror(rc));
		iogv_session_free(s);
		return IOGP_EXIT_ERROR;
	}
	iogp_sel sel = { .kind = IOGP_SEL_ALL };
	if (a->node) {
		size_t n = iogp_model_node_count(iogv_model(s)), i = 0;
		while (i < n && strcmp(iogp_model_node(iogv_model(s), i), a->node))
			i++;
		if (i == n) {
			fprintf(stderr, "iogram-view: no node '%s' in %s at that time\n", a->node, a->replay);
			iogv_session_free(s);
			return IOGP_EXIT_ERROR;
		}
		sel = (iogp_sel){ .kind = IOGP_SEL_NODE, .node = a->node };
	}
	iogplot_frame f;
	iogplot_frame_init(&f);
	if ((rc = iogv_frame(s, &sel, a->window_s, &f)) < 0) {
		fprintf(stderr, "iogram-view: %s\n", iogp_strerror(rc));
		iogplot_frame_free(&f);
		iogv_session_free(s);
		return IOGP_EXIT_ERROR;
	}
	if (a->node)
		snprintf(f.selection, sizeof(f.selection), "node %s", a->node);
	snprintf(f.status, sizeof(f.status), "at %.0f s of %.0f s", t - start, end - start);
	/* a damaged file says so: on stderr and in the image's header */
	uint64_t dmg = iogv_replay_damage(s);
	if (dmg > 0) {
		char b[32];
		iogp_fmt_bytes(b, sizeof(b), (double)dmg, IOGP_UNITS_WIDE);
		fprintf(stderr, "iogram-view: warning: %s: %s skipped as damaged\n", a->replay, b);
		size_t u = strlen(f.status);
		snprintf(f.status + u, sizeof(f.status) - u, ", %s damaged (skipped)", b);
	}
	iogplot_style st;
	iogplot_style_init(&st, a->dark == 1);
	iogplot_view v;
	iogplot_view_init(&v);
	v.size_weight = a->weight;
	if (a->node) {
		v.highlight[0] = a->node;
		v.nhighlight = 1;
	}
	int panel = a->panel ? iogp_panel_find(a->panel) : IOGP_PANEL_DASHBOARD;
	if (panel < 0)
		panel = -1;
	double w = a->width, h = a->height;
	if (!a->have_size) {
		w = panel < 0 ? 1600 : panel == IOGP_PANEL_HEADER ? 1200 : 800;
		h = panel < 0 ? 1000 : panel == IOGP_PANEL_HEADER ? 30 : 500;
	}
	char dir[4096], names[1024];
	if (iogv_snapshot_csv_dir(a->snapshot, dir, sizeof(dir))) {   /* as the window's .csv export */
		rc = iogplot_export_csv(dir, &f, panel, names, sizeof(names), err, sizeof(err));
		if (rc >= 0)
			fprintf(stderr, "iogram-view: wrote %s to %s/\n", names, dir);
	} else {
		rc = iogplot_export(a->snapshot, &st, &f, &v, panel, w, h, a->scale, err, sizeof(err));
	}
	if (rc < 0)
		fprintf(stderr, "iogram-view: %s\n", err);
	iogplot_frame_free(&f);
	iogv_session_free(s);
	return rc < 0 ? IOGP_EXIT_ERROR : IOGP_EXIT_OK;
}
