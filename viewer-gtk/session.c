/* session.c - iogram-view's data: the shared feed (a replay file at a
 * position, or live streams and their recording) and the frames drawn from it:
 * windows, per-node rates of the whole file or the live ring, the header. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "iogp_feed.h"
#include "iogp_layers.h"
#include "iogp_metrics.h"
#include "session.h"
#include "iogp_sys.h"

/* The metric of layer table slot k in the session's layer (NULL: none). */
#define HIST_NAME(s, i) iogp_layer_slot_metric((s)->layer, (i))
#define RATE_NAME(s, op) iogp_layer_slot_metric((s)->layer, (op) ? IOGP_SLOT_WRITE_BYTES : IOGP_SLOT_READ_BYTES)

struct iogv_session {
	iogp_feed *feed;
	int layer;                   /* IOGP_LAYER_*: whose metrics the frames show */
	char path[4096];             /* the replay open, for its rates in another layer */
	char title[256];
	iogplot_series file_rates;   /* a replay: per-node rates of the whole file */
	uint64_t live_first_ns;
	uint64_t rates_gen;          /* generation the live rates were built at */
	int rows, heat_p99;          /* the nodes table's rows; latency over time wanted */
	iogp_heat *heat;             /* each node's latency p99 per window slot */
};

static iogp_model_opts model_opts(uint32_t ring_bins)
{
	iogp_model_opts mo;
	memset(&mo, 0, sizeof(mo));
	mo.live = 1;
	mo.nrates = iogp_layer_rate_set(mo.rates, IOGP_MODEL_MAX_RATES, 0);
	mo.ring_bins = ring_bins;
	mo.source_ring_bins = ring_bins < 120 ? ring_bins : 120;   /* a source's own rates: 2 minutes */
	mo.rate_total = 128ull << 20;      /* 120 bins a source up to ~25,000 of them, 64 at least beyond */
	mo.window_slot_ns = 5000000000ull;
	mo.window_max_ns = 300000000000ull;
	mo.window_bytes = 65536;
	mo.window_total = 128ull << 20;   /* 64 KB a source up to 2,048 of them, less beyond: the panels read the node sums */
	mo.access_total = 4u << 20;       /* samples (48 B in a ring): full rings and runs up to ~340 sources, less beyond */
	return mo;
}

iogv_session *iogv_session_new(const iogv_opts *opts)
{
	iogv_session *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	uint32_t history = opts && opts->history_s ? opts->history_s : 900;
	if (history > 86400)
		history = 86400;
	iogp_feed_opts fo;
	memset(&fo, 0, sizeof(fo));
	fo.model = model_opts(history);
	/* a replay draws rates from the whole file; its model needs windows only */
	fo.replay_model = model_opts(16);
	fo.any_address = opts && opts->any_address;
	fo.creator = "iogram-view " IOGRAM_VERSION;
	if (!(s->feed = iogp_feed_new(&fo))) {
		free(s);
		return NULL;
	}
	snprintf(s->title, sizeof(s->title), "iogram-view");
	s->layer = opts && iogp_layer_get(opts->layer) ? opts->layer : IOGP_LAYER_POSIX;
	return s;
}

void iogv_session_free(iogv_session *s)
{
	if (!s)
		return;
	iogplot_series_free(&s->file_rates);
	iogp_heat_free(s->heat);
	iogp_feed_free(s->feed);
	free(s);
}

const iogp_model *iogv_model(const iogv_session *s)
{
	return iogp_feed_model(s->feed);
}

uint64_t iogv_generation(const iogv_session *s)
{
	return iogp_feed_generation(s->feed);
}

const char *iogv_title(const iogv_session *s)
{
	return s->title;
}

/* ---- replay ---- */

static int file_rates(iogv_session *s, const char *path);

int iogv_layer(const iogv_session *s)
{
	return s->layer;
}

void iogv_set_layer(iogv_session *s, int layer)
{
	if (!iogp_layer_get(layer) || layer == s->layer)
		return;
	s->layer = layer;
	s->rates_gen = UINT64_MAX;   /* live rates: rebuilt by the next frame */
	if (iogp_feed_is_replay(s->feed) && s->path[0])
		file_rates(s, s->path);
}

void iogv_set_table(iogv_session *s, int rows, int heat_p99)
{
	s->rows = rows == IOGP_NT_SOURCES ? IOGP_NT_SOURCES : IOGP_NT_NODES;
	s->heat_p99 = heat_p99;
}

int iogv_is_replay(const iogv_session *s)
{
	return iogp_feed_is_replay(s->feed);
}

/* Per-node rates of the whole replay file, in the session's layer. */
static int file_rates(iogv_session *s, const char *path)
{
	iogp_feed_status st;
	iogp_feed_get_status(s->feed, &st);
	/* per-node rates of the whole file: a replay shows any hour at once */
	double dur = (double)(st.last_ns - st.first_ns) / 1e9;
	double step = fmax(1, ceil(dur / 20000));
	iogp_series sr, sw;
	char e2[256];
	memset(&sr, 0, sizeof(sr));
	memset(&sw, 0, sizeof(sw));
	int okr = iogp_series_from_file(&sr, path, RATE_NAME(s, 0), step, e2, sizeof(e2)) == 0;
	int okw = iogp_series_from_file(&sw, path, RATE_NAME(s, 1), step, e2, sizeof(e2)) == 0;
	iogplot_series_free(&s->file_rates);
	int rc = iogplot_series_from_iogp(&s->file_rates, okr ? &sr : NULL, okw ? &sw : NULL);
	if (okr)
		iogp_series_free(&sr);
	if (okw)
		iogp_series_free(&sw);
	if (rc < 0)
		memset(&s->file_rates, 0, sizeof(s->file_rates));
	return rc;
}

int iogv_open_replay(iogv_session *s, const char *path, char *err, size_t errlen)
{
	int rc = iogp_feed_open_replay(s->feed, path, err, errlen);
	if (rc < 0)
		return rc;
	iogp_feed_pause(s->feed, 1);   /* the timeline moves the position */
	snprintf(s->path, sizeof(s->path), "%s", path);
	file_rates(s, path);
	const char *base = strrchr(path, '/');
	snprintf(s->title, sizeof(s->title), "replay %s", base ? base + 1 : path);
	return 0;
}

void iogv_replay_span(const iogv_session *s, double *start, double *end)
{
	iogp_feed_status st;
	iogp_feed_get_status(s->feed, &st);
	*start = (double)st.first_ns / 1e9;
	*end = (double)st.last_ns / 1e9;
}

double iogv_replay_pos(const iogv_session *s)
{
	return (double)iogp_feed_now(s->feed) / 1e9;
}

uint64_t iogv_replay_damage(const iogv_session *s)
{
	iogp_feed_status st;
	iogp_feed_get_status(s->feed, &st);
	return st.replay ? st.skipped_bytes : 0;
}

size_t iogv_replay_keyframes(const iogv_session *s, double *t, size_t max)
{
	size_t n = iogp_feed_keyframes(s->feed, NULL, 0), k = n < max ? n : max;
	uint64_t *ns = t && k ? malloc(k * sizeof(*ns)) : NULL;
	if (ns) {
		iogp_feed_keyframes(s->feed, ns, k);
		for (size_t i = 0; i < k; i++)
			t[i] = (double)ns[i] / 1e9;
		free(ns);
	}
	return n;
}

/* t clamped to the span, in ns; 1 when the replay is there already. */
static int seek_target(const iogv_session *s, double t, uint64_t *ns)
{
	iogp_feed_status st;
	iogp_feed_get_status(s->feed, &st);
	*ns = t <= (double)st.first_ns / 1e9 ? st.first_ns :
	      t >= (double)st.last_ns / 1e9 ? st.last_ns : (uint64_t)llround(t * 1e9);
	return *ns == st.pos_ns && !st.seeking;
}

int iogv_replay_seek(iogv_session *s, double t)
{
	uint64_t ns;
	if (!iogp_feed_is_replay(s->feed))
		return IOGP_EINVAL;
	return seek_target(s, t, &ns) ? 0 : iogp_feed_seek(s->feed, ns);
}

int iogv_replay_seek_start(iogv_session *s, double t)
{
	uint64_t ns;
	if (!iogp_feed_is_replay(s->feed))
		return IOGP_EINVAL;
	return seek_target(s, t, &ns) ? 0 : iogp_feed_seek_start(s->feed, ns);
}

int iogv_replay_seek_step(iogv_session *s)
{
	if (!iogp_feed_is_replay(s->feed) || !iogp_feed_seeking(s->feed, NULL, NULL))
		return 0;
	iogp_feed_pump(s->feed);   /* while seeking, a pump only reads on */
	return iogp_feed_seeking(s->feed, NULL, NULL);
}

int iogv_replay_seeking(const iogv_session *s, double *to, double *done)
{
	uint64_t ns = 0;
	if (!iogp_feed_is_replay(s->feed) || !iogp_feed_seeking(s->feed, &ns, done))
		return 0;
	if (to)
		*to = (double)ns / 1e9;
	return 1;
}

/* ---- live ---- */

int iogv_is_live(const iogv_session *s)
{
	return iogp_feed_is_live(s->feed);
}

static void set_live_title(iogv_session *s)
{
	iogp_feed_status st;
	iogp_feed_get_status(s->feed, &st);
	snprintf(s->title, sizeof(s->title), "live %.240s", st.where);
}

int iogv_listen(iogv_session *s, const char *ep, char *err, size_t errlen)
{
	int rc = iogp_feed_listen(s->feed, ep, err, errlen);
	if (rc == 0)
		set_live_title(s);
	return rc;
}

int iogv_connect(iogv_session *s, const char *ep, char *err, size_t errlen)
{
	int rc = iogp_feed_connect(s->feed, ep, err, errlen);
	if (rc == 0)
		set_live_title(s);
	return rc;
}

int iogv_last_endpoint(iogv_session *s, char *buf, size_t len)
{
	return iogp_feed_last_endpoint(s->feed, buf, len);
}

int iogv_poll(iogv_session *s, int timeout_ms)
{
	if (!iogp_feed_is_live(s->feed))
		return 0;
	if (timeout_ms > 0)
		iogp_feed_wait(s->feed, -1, timeout_ms);
	long n = iogp_feed_pump(s->feed);
	if (n && !s->live_first_ns)
		s->live_first_ns = iogp_wall_ns();
	return (int)n;
}

int iogv_take_events(iogv_session *s, char *buf, size_t len)
{
	return iogp_feed_take_events(s->feed, buf, len);
}

int iogv_record_start(iogv_session *s, const char *path, char *err, size_t errlen)
{
	if (!iogp_feed_is_live(s->feed)) {
		snprintf(err, errlen, "recording needs a live stream (a replay is a recording already)");
		return IOGP_EINVAL;
	}
	return iogp_feed_record_start(s->feed, path, err, errlen);
}

int iogv_record_stop(iogv_session *s, char *err, size_t errlen)
{
	return iogp_feed_record_stop(s->feed, err, errlen);
}

const char *iogv_recording(const iogv_session *s)
{
	return iogp_feed_recording(s->feed);
}

/* ---- frames ---- */

static int live_rates(iogv_session *s, iogplot_series *out)
{
	const iogp_model_opts *mo = iogp_model_get_opts(iogp_feed_model(s->feed));
	size_t nn = iogp_model_node_count(iogp_feed_model(s->feed)), nb = mo->ring_bins;
	uint64_t bin = mo->bin_ns, now = iogp_wall_ns();
	uint64_t end = now / bin * bin;   /* the last whole bin */
	double *rate = malloc(nb * sizeof(double));
	uint8_t *cov = malloc(nb);
	iogplot_series_free(out);
	int rc = rate && cov ? iogplot_series_alloc(out, nn, nb, (double)(end - nb * bin) / 1e9,
	                                            (double)bin / 1e9) : IOGP_ENOMEM;
	for (size_t k = 0; k < nn && rc >= 0; k++) {
		iogp_sel sel = { .kind = IOGP_SEL_NODE, .node = iogp_model_node(iogp_feed_model(s->feed), k) };
		rc = iogplot_series_set_node(out, k, sel.node);
		for (int op = 0; op < 2 && rc >= 0; op++) {
			uint64_t first;
			int q = iogp_model_rate(iogp_feed_model(s->feed), RATE_NAME(s, op), &sel, end, nb, rate, cov, &first);
			if (q < 0)
				continue;
			for (size_t b = 0; b < nb; b++)
				if (cov[b])
					out->v[op][k * nb + b] = (float)rate[b];
		}
	}
	free(rate);
	free(cov);
	if (rc < 0) {
		iogplot_series_free(out);
		return rc;
	}
	iogplot_series_stats(out);
	return 0;
}

/* The nodes table of the selection: its nodes, or the processes of the
 * node selected (of the selected process's node). */
static int frame_nodes(iogv_session *s, const iogp_sel *sel, double window_s, iogplot_frame *f)
{
	const iogp_model *m = iogp_feed_model(s->feed);
	iogp_nt_opts o = { .scope = s->rows, .layer = s->layer, .window_s = window_s };
	char node[256] = "";
	f->selected_source = 0;
	if (sel && sel->kind == IOGP_SEL_NODE && sel->node) {
		snprintf(node, sizeof(node), "%s", sel->node);
		o.scope = IOGP_NT_SOURCES;
		o.node = node;
	} else if (sel && sel->kind == IOGP_SEL_SOURCE) {
		size_t i;
		iogp_source_info si;
		if (iogp_model_source_index(m, sel->source, &i) == 0 && iogp_model_source(m, i, &si) == 0) {
			snprintf(node, sizeof(node), "%s", si.node ? si.node : "");
			o.scope = IOGP_NT_SOURCES;
			o.node = node;
			f->selected_source = sel->source;
		}
	}
	return iogp_node_table_rebuild(&f->nodes, m, &o);   /* last frame's memory reused */
}

/* Each node's latency p99 per window slot, as a series (nodes by name). */
static int frame_lat(iogv_session *s, iogplot_frame *f)
{
	iogplot_series_free(&f->lat_heat);
	if (!s->heat && !(s->heat = iogp_heat_new()))
		return IOGP_ENOMEM;
	int rc = iogp_heat_update(s->heat, iogp_feed_model(s->feed), s->layer);
	return rc < 0 ? rc : iogplot_series_from_heat(&f->lat_heat, s->heat);
}

int iogv_frame(iogv_session *s, const iogp_sel *sel, double window_s, iogplot_frame *f)
{
	int relayer = f->layer != s->layer;   /* its rates are another layer's */
	f->layer = s->layer;
	int rc = iogplot_frame_from_model(f, iogp_feed_model(s->feed), sel);
	if (rc < 0)
		return rc;
	if (window_s > 0) {
		for (int i = 0; i < 6; i++) {
			iogp_hist *h = i < 2 ? &f->size[i] : i < 5 ? &f->lat[i - 2] : &f->qd;
			if (!HIST_NAME(s, i))
				continue;   /* none in this layer: left empty */
			iogp_hist_free(h);
			rc = iogp_model_hist_window(iogp_feed_model(s->feed), HIST_NAME(s, i), sel, (uint64_t)(window_s * 1e9), h);
			if (rc == IOGP_ENOMEM)
				return rc;
		}
		/* the MPI traffic and message sizes of the window too */
		if ((rc = iogplot_frame_mpi(f, iogp_feed_model(s->feed), sel, window_s)) < 0)
			return rc;
	}
	iogp_panel_window_text(iogp_feed_model(s->feed), sel, window_s, 0, f->window, sizeof(f->window));
	if (iogp_feed_is_replay(s->feed)) {
		if (relayer || f->rates.nbins != s->file_rates.nbins || f->rates.nnodes != s->file_rates.nnodes ||
		    f->rates.t0 != s->file_rates.t0) {
			iogplot_series_free(&f->rates);
			if ((rc = iogplot_series_copy(&f->rates, &s->file_rates)) < 0)
				return rc;
		}
		f->t_now = (double)iogp_feed_now(s->feed) / 1e9;
		iogp_feed_status st;
		iogp_feed_get_status(s->feed, &st);
		/* the data may start before the first record arrived (a phase's
		 * first calls, within the agent's first interval) */
		double first = (double)st.first_ns / 1e9;
		if (!(f->t_first > 0) || first < f->t_first)
			f->t_first = first;
	} else {
		if (relayer || s->rates_gen != iogp_feed_generation(s->feed) || !f->rates.nbins) {
			if ((rc = live_rates(s, &f->rates)) < 0)
				return rc;
			s->rates_gen = iogp_feed_generation(s->feed);
		}
		f->t_now = (double)iogp_wall_ns() / 1e9;
		/* the sources' own first wall time (set by the frame) may be older than
		 * our first message: agents that were running before we started */
		if (s->live_first_ns && !(f->t_first > 0))
			f->t_first = (double)s->live_first_ns / 1e9;
	}
	iogp_model_live lv;
	iogp_model_get_live(iogp_feed_model(s->feed), &lv);
	f->msg_rate = lv.msgs_per_s;
	f->nlive = lv.sources_live + lv.sources_new;
	if (sel && sel->kind != IOGP_SEL_ALL) {
		/* per-selection liveness from the source list */
		f->nlive = 0;
		for (size_t i = 0; i < iogp_model_source_count(iogp_feed_model(s->feed)); i++) {
			iogp_source_info si;
			if (iogp_model_source(iogp_feed_model(s->feed), i, &si) < 0)
				continue;
			int in = sel->kind == IOGP_SEL_NODE ? !strcmp(si.node ? si.node : "", sel->node) :
			         si.id == sel->source;
			f->nlive += in && (si.state == IOGP_SRC_LIVE || si.state == IOGP_SRC_NEW);
		}
	}
	if ((rc = frame_nodes(s, sel, window_s, f)) < 0)
		return rc;
	if (s->heat_p99 && (rc = frame_lat(s, f)) < 0)
		return rc;
	snprintf(f->title, sizeof(f->title), "%s", s->title);
	const char *rec = iogp_feed_recording(s->feed);
	f->recording = rec != NULL;
	snprintf(f->record_path, sizeof(f->record_path), "%s", rec ? rec : "");
	f->generation = iogp_feed_generation(s->feed);
	return 0;
}

int iogv_node_rates(iogv_session *s, const char *node, double *rd, double *wr)
{
	*rd = *wr = 0;
	if (iogp_feed_is_replay(s->feed)) {
		const iogplot_series *fr = &s->file_rates;
		double b = floor(((double)iogp_feed_now(s->feed) / 1e9 - fr->t0) / fr->step) - 1;
		if (b < 0 || b >= (double)fr->nbins)
			return 0;
		for (size_t k = 0; k < fr->nnodes; k++)
			if (!strcmp(fr->nodes[k], node)) {
				float a = fr->v[0][k * fr->nbins + (size_t)b], w = fr->v[1][k * fr->nbins + (size_t)b];
				*rd = isnan(a) ? 0 : a;
				*wr = isnan(w) ? 0 : w;
			}
		return 0;
	}
	iogp_sel sel = { .kind = IOGP_SEL_NODE, .node = node };
	const iogp_model_opts *mo = iogp_model_get_opts(iogp_feed_model(s->feed));
	uint64_t end = iogp_wall_ns() / mo->bin_ns * mo->bin_ns, first;
	double r[1];
	uint8_t c[1];
	if (iogp_model_rate(iogp_feed_model(s->feed), RATE_NAME(s, 0), &sel, end, 1, r, c, &first) == 0 && c[0])
		*rd = r[0];
	if (iogp_model_rate(iogp_feed_model(s->feed), RATE_NAME(s, 1), &sel, end, 1, r, c, &first) == 0 && c[0])
		*wr = r[0];
	return 0;
}
