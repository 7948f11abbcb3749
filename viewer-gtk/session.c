/* session.c - iogram-view's data: a replay file played at a position or live
 * ZeroMQ streams (and their recording) into one stream model, and frames. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

#include "iogp_metrics.h"
#include "iogp_sub.h"
#include "session.h"

#define MAX_EP 16

static const char *const hist_names[6] = { IOGP_POSIX_HISTS };
static const char *const rate_names[2] = { IOGP_M_READ_BYTES, IOGP_M_WRITE_BYTES };

struct iogv_session {
	iogv_opts o;
	iogp_model *m;
	uint64_t gen;
	char title[256];
	/* replay */
	char *path;
	iogp_replay_reader *r;
	uint64_t start_ns, end_ns, pos_ns;
	uint8_t *pend;
	size_t pend_len, pend_cap;
	uint64_t pend_ns;
	int has_pend, at_eof;
	iogplot_series file_rates;
	double *kf;
	size_t nkf;
	/* live */
	void *ctx, *sub, *mon;
	int nlisten, nconnect;
	char events[1024];
	iogp_recorder *rec;
	char *rec_path;
	uint8_t *buf;
	uint64_t live_first_ns;
	uint64_t rates_gen;   /* generation the live rates were built at */
};

static void seterr(char *err, size_t len, const char *fmt, ...)
{
	if (!err || !len)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static iogp_model *new_model(const iogv_session *s, int replay)
{
	iogp_model_opts mo;
	memset(&mo, 0, sizeof(mo));
	mo.live = 1;
	mo.nrates = 2;
	mo.rates[0] = rate_names[0];
	mo.rates[1] = rate_names[1];
	/* a replay draws rates from the whole file; its model needs windows only */
	mo.ring_bins = replay ? 16 : s->o.history_s;
	mo.window_slot_ns = 5000000000ull;
	mo.window_max_ns = 300000000000ull;
	mo.window_bytes = 65536;
	return iogp_model_new(&mo);
}

iogv_session *iogv_session_new(const iogv_opts *opts)
{
	iogv_session *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	if (opts)
		s->o = *opts;
	if (!s->o.history_s)
		s->o.history_s = 900;
	if (s->o.history_s > 86400)
		s->o.history_s = 86400;
	s->m = new_model(s, 0);
	if (!s->m) {
		free(s);
		return NULL;
	}
	snprintf(s->title, sizeof(s->title), "iogram-view");
	return s;
}

static void close_replay(iogv_session *s)
{
	if (s->r)
		iogp_replay_close_reader(s->r);
	s->r = NULL;
	free(s->path);
	s->path = NULL;
	free(s->pend);
	s->pend = NULL;
	s->pend_cap = s->pend_len = 0;
	s->has_pend = s->at_eof = 0;
	iogplot_series_free(&s->file_rates);
	free(s->kf);
	s->kf = NULL;
	s->nkf = 0;
}

void iogv_session_free(iogv_session *s)
{
	if (!s)
		return;
	close_replay(s);
	if (s->rec)
		iogp_recorder_close(s->rec);
	free(s->rec_path);
	if (s->mon)
		zmq_close(s->mon);
	if (s->sub)
		zmq_close(s->sub);
	if (s->ctx)
		zmq_ctx_term(s->ctx);
	free(s->buf);
	iogp_model_free(s->m);
	free(s);
}

const iogp_model *iogv_model(const iogv_session *s)
{
	return s->m;
}

uint64_t iogv_generation(const iogv_session *s)
{
	return s->gen;
}

const char *iogv_title(const iogv_session *s)
{
	return s->title;
}

/* ---- replay ---- */

int iogv_is_replay(const iogv_session *s)
{
	return s->r != NULL;
}

static int keep_pending(iogv_session *s, const iogp_replay_rec *rec)
{
	if (rec->len > s->pend_cap) {
		uint8_t *p = realloc(s->pend, rec->len);
		if (!p)
			return IOGP_ENOMEM;
		s->pend = p;
		s->pend_cap = rec->len;
	}
	memcpy(s->pend, rec->payload, rec->len);
	s->pend_len = rec->len;
	s->pend_ns = rec->recv_ns;
	s->has_pend = 1;
	return 0;
}

/* Apply records up to and including receive time ns. */
static int feed_until(iogv_session *s, uint64_t ns)
{
	int n = 0, rc;
	if (s->has_pend) {
		if (s->pend_ns > ns)
			return 0;
		iogp_model_feed(s->m, s->pend, s->pend_len, s->pend_ns);
		s->has_pend = 0;
		n++;
	}
	iogp_replay_rec rec;
	while (!s->at_eof) {
		rc = iogp_replay_next(s->r, &rec);
		if (rc == IOGP_EEOF) {
			s->at_eof = 1;
			break;
		}
		if (rc < 0)
			return rc;
		if (rec.recv_ns > ns) {
			if ((rc = keep_pending(s, &rec)) < 0)
				return rc;
			break;
		}
		iogp_model_feed(s->m, rec.payload, rec.len, rec.recv_ns);
		n++;
	}
	return n;
}

/* Start over at the keyframe before ns minus a warm-up, so the access
 * samples and "last N seconds" windows of the time shown are filled. */
#define WARMUP_NS 300000000000ull

static int reset_to(iogv_session *s, uint64_t ns)
{
	ns = ns > s->start_ns + WARMUP_NS ? ns - WARMUP_NS : s->start_ns;
	iogp_model *m = new_model(s, 1);
	if (!m)
		return IOGP_ENOMEM;
	iogp_model_free(s->m);
	s->m = m;
	s->has_pend = s->at_eof = 0;
	return iogp_replay_seek(s->r, ns);
}

int iogv_open_replay(iogv_session *s, const char *path, char *err, size_t errlen)
{
	iogp_replay_reader *r;
	int rc = iogp_replay_open(&r, path, err, errlen);
	if (rc < 0)
		return rc;
	iogp_replay_rec rec;
	uint64_t first = 0, last = 0;
	if ((rc = iogp_replay_next(r, &rec)) < 0) {
		seterr(err, errlen, "%s: %s", path,
		       rc == IOGP_EEOF ? "no records in this file" : iogp_strerror(rc));
		iogp_replay_close_reader(r);
		return rc == IOGP_EEOF ? IOGP_ENOTFOUND : rc;
	}
	first = last = rec.recv_ns;
	/* the span's end: read on from the last keyframe */
	const iogp_replay_kf *kf;
	size_t nkf = iogp_replay_keyframes(r, &kf);
	if (nkf && kf[nkf - 1].recv_ns > first && iogp_replay_seek(r, kf[nkf - 1].recv_ns) < 0)
		iogp_replay_rewind(r);
	while ((rc = iogp_replay_next(r, &rec)) == 0)
		if (rec.recv_ns > last)
			last = rec.recv_ns;
	if (rc != IOGP_EEOF) {
		seterr(err, errlen, "%s: %s", path, iogp_strerror(rc));
		iogp_replay_close_reader(r);
		return rc;
	}
	double *kt = malloc((nkf ? nkf : 1) * sizeof(double));
	if (!kt) {
		iogp_replay_close_reader(r);
		return IOGP_ENOMEM;
	}
	for (size_t i = 0; i < nkf; i++)
		kt[i] = (double)kf[i].recv_ns / 1e9;
	/* per-node rates of the whole file: a replay shows any hour at once */
	double dur = (double)(last - first) / 1e9;
	double step = fmax(1, ceil(dur / 20000));
	iogp_series sr, sw;
	char e2[256];
	memset(&sr, 0, sizeof(sr));
	memset(&sw, 0, sizeof(sw));
	int okr = iogp_series_from_file(&sr, path, rate_names[0], step, e2, sizeof(e2)) == 0;
	int okw = iogp_series_from_file(&sw, path, rate_names[1], step, e2, sizeof(e2)) == 0;
	iogplot_series rates;
	memset(&rates, 0, sizeof(rates));
	rc = iogplot_series_from_iogp(&rates, okr ? &sr : NULL, okw ? &sw : NULL);
	if (okr)
		iogp_series_free(&sr);
	if (okw)
		iogp_series_free(&sw);
	if (rc < 0)
		memset(&rates, 0, sizeof(rates));
	close_replay(s);
	s->r = r;
	s->path = strdup(path);
	s->start_ns = first;
	s->end_ns = last;
	s->file_rates = rates;
	s->kf = kt;
	s->nkf = nkf;
	const char *base = strrchr(path, '/');
	snprintf(s->title, sizeof(s->title), "replay %s", base ? base + 1 : path);
	if ((rc = reset_to(s, 0)) < 0 || (rc = iogp_replay_rewind(r)) < 0) {
		seterr(err, errlen, "%s: %s", path, iogp_strerror(rc));
		return rc;
	}
	s->pos_ns = first;
	rc = feed_until(s, first);
	iogp_model_tick(s->m, first);
	s->gen++;
	return rc < 0 ? rc : 0;
}

void iogv_replay_span(const iogv_session *s, double *start, double *end)
{
	*start = (double)s->start_ns / 1e9;
	*end = (double)s->end_ns / 1e9;
}

double iogv_replay_pos(const iogv_session *s)
{
	return (double)s->pos_ns / 1e9;
}

size_t iogv_replay_keyframes(const iogv_session *s, double *t, size_t max)
{
	size_t n = s->nkf < max ? s->nkf : max;
	if (t)
		memcpy(t, s->kf, n * sizeof(double));
	return s->nkf;
}

int iogv_replay_seek(iogv_session *s, double t)
{
	if (!s->r)
		return IOGP_EINVAL;
	uint64_t ns = t <= (double)s->start_ns / 1e9 ? s->start_ns :
	              t >= (double)s->end_ns / 1e9 ? s->end_ns : (uint64_t)llround(t * 1e9);
	if (ns == s->pos_ns)
		return 0;
	int rc;
	/* backward, or past a keyframe ahead: start over from a keyframe */
	int jump = ns < s->pos_ns;
	for (size_t i = 0; i < s->nkf && !jump; i++) {
		uint64_t k = (uint64_t)llround(s->kf[i] * 1e9);
		jump = k > s->pos_ns && ns > WARMUP_NS && k <= ns - WARMUP_NS;
	}
	if (jump && (rc = reset_to(s, ns)) < 0)
		return rc;
	rc = feed_until(s, ns);
	s->pos_ns = ns;
	iogp_model_tick(s->m, ns);
	s->gen++;
	return rc;
}

/* ---- live ---- */

int iogv_is_live(const iogv_session *s)
{
	return s->sub != NULL;
}

static int ensure_socket(iogv_session *s, char *err, size_t errlen)
{
	if (s->sub)
		return 0;
	if (!s->buf && !(s->buf = malloc(IOGP_MAX_PAYLOAD)))
		return IOGP_ENOMEM;
	s->ctx = zmq_ctx_new();
	if (!s->ctx) {
		seterr(err, errlen, "ZeroMQ: %s", zmq_strerror(zmq_errno()));
		return IOGP_EIO;
	}
	s->sub = iogp_sub_socket(s->ctx, 100000);
	if (!s->sub) {
		seterr(err, errlen, "ZeroMQ: %s", zmq_strerror(zmq_errno()));
		return IOGP_EIO;
	}
	char mon[64];
	snprintf(mon, sizeof(mon), "inproc://iogv-monitor-%p", (void *)s);
	if (zmq_socket_monitor(s->sub, mon, ZMQ_EVENT_CONNECT_RETRIED | ZMQ_EVENT_CONNECTED |
	                       ZMQ_EVENT_DISCONNECTED | ZMQ_EVENT_BIND_FAILED |
	                       ZMQ_EVENT_ACCEPT_FAILED) == 0) {
		s->mon = zmq_socket(s->ctx, ZMQ_PAIR);
		zmq_setsockopt(s->mon, ZMQ_LINGER, &(int){ 0 }, sizeof(int));
		if (zmq_connect(s->mon, mon) != 0) {
			zmq_close(s->mon);
			s->mon = NULL;
		}
	}
	if (snprintf(s->title, sizeof(s->title), "live") < 0)
		return IOGP_EINVAL;
	s->live_first_ns = 0;
	return 0;
}

static void title_add(iogv_session *s, const char *verb, const char *ep)
{
	size_t n = strlen(s->title);
	snprintf(s->title + n, sizeof(s->title) - n, " %s%s", verb, ep);
}

int iogv_listen(iogv_session *s, const char *ep, char *err, size_t errlen)
{
	int rc = ensure_socket(s, err, errlen);
	if (rc < 0)
		return rc;
	if (!iogp_endpoint_local(ep) && !getenv("IOGRAM_VIEW_ANY_ADDRESS")) {
		seterr(err, errlen, "%s is not a loopback endpoint (tcp://127.x, ipc://); start with "
		       "--any-address to listen on it", ep);
		return IOGP_EINVAL;
	}
	if (iogp_sock_bind(s->ctx, s->sub, ep, NULL, err, errlen) != 0)
		return IOGP_EIO;
	s->nlisten++;
	char real[256];
	size_t rl = sizeof(real);
	/* "tcp://127.0.0.1:*" binds a free port: show which */
	if (strchr(ep, '*') && zmq_getsockopt(s->sub, ZMQ_LAST_ENDPOINT, real, &rl) == 0) {
		real[sizeof(real) - 1] = 0;
		title_add(s, "", real);
	} else {
		title_add(s, "", ep);
	}
	return 0;
}

int iogv_connect(iogv_session *s, const char *ep, char *err, size_t errlen)
{
	int rc = ensure_socket(s, err, errlen);
	if (rc < 0)
		return rc;
	if (iogp_sock_connect(s->ctx, s->sub, ep, NULL, err, errlen) != 0)
		return IOGP_EIO;
	s->nconnect++;
	title_add(s, "→", ep);
	return 0;
}

int iogv_last_endpoint(iogv_session *s, char *buf, size_t len)
{
	size_t l = len;
	if (!s->sub || !len || zmq_getsockopt(s->sub, ZMQ_LAST_ENDPOINT, buf, &l) != 0)
		return IOGP_ENOTFOUND;
	buf[len - 1] = 0;
	return 0;
}

static void read_monitor(iogv_session *s)
{
	for (int k = 0; s->mon && k < 64; k++) {
		uint8_t ev[6];
		char addr[256];
		int n = zmq_recv(s->mon, ev, sizeof(ev), ZMQ_DONTWAIT);
		if (n < 0)
			return;
		int an = zmq_recv(s->mon, addr, sizeof(addr) - 1, 0);
		addr[an < 0 ? 0 : an > (int)sizeof(addr) - 1 ? (int)sizeof(addr) - 1 : an] = 0;
		uint16_t e = (uint16_t)(ev[0] | ev[1] << 8);
		uint32_t val = (uint32_t)ev[2] | (uint32_t)ev[3] << 8 | (uint32_t)ev[4] << 16 |
		               (uint32_t)ev[5] << 24;
		const char *what = NULL;
		char tmp[400];
		switch (e) {
		case ZMQ_EVENT_CONNECT_RETRIED: what = "not reachable, retrying"; break;
		case ZMQ_EVENT_DISCONNECTED: what = "disconnected"; break;
		case ZMQ_EVENT_BIND_FAILED: what = "listening failed"; break;
		case ZMQ_EVENT_ACCEPT_FAILED: what = "accept failed"; break;
		case ZMQ_EVENT_CONNECTED: what = "connected"; break;
		default: break;
		}
		(void)val;
		if (!what)
			continue;
		/* a listening viewer sees agents come and go: only its own links matter */
		if (e == ZMQ_EVENT_DISCONNECTED && !s->nconnect)
			continue;
		snprintf(tmp, sizeof(tmp), "%s: %s\n", addr, what);
		size_t l = strlen(s->events);
		if (l + strlen(tmp) < sizeof(s->events) && !strstr(s->events, tmp))
			memcpy(s->events + l, tmp, strlen(tmp) + 1);
	}
}

int iogv_poll(iogv_session *s, int timeout_ms, int max)
{
	if (!s->sub)
		return 0;
	if (timeout_ms > 0) {
		zmq_pollitem_t pi = { s->sub, 0, ZMQ_POLLIN, 0 };
		zmq_poll(&pi, 1, timeout_ms);
	}
	read_monitor(s);
	int n = 0;
	uint64_t now = now_ns();
	for (int k = 0; k < max; k++) {
		long len = iogp_sub_recv(s->sub, s->buf, IOGP_MAX_PAYLOAD);
		if (len == -1)
			break;
		if (len < 0)
			continue;
		if (s->rec)
			iogp_recorder_add(s->rec, s->buf, (size_t)len, now);
		if (iogp_model_feed(s->m, s->buf, (size_t)len, now) >= 0)
			n++;
	}
	if (n && !s->live_first_ns)
		s->live_first_ns = now;
	iogp_model_tick(s->m, now);
	if (n)
		s->gen++;
	if (s->rec) {
		static uint64_t last_flush;
		if (now - last_flush > 1000000000ull) {
			iogp_recorder_flush(s->rec);
			last_flush = now;
		}
	}
	return n;
}

int iogv_take_events(iogv_session *s, char *buf, size_t len)
{
	read_monitor(s);
	int n = snprintf(buf, len, "%s", s->events);
	s->events[0] = 0;
	return n;
}

int iogv_record_start(iogv_session *s, const char *path, char *err, size_t errlen)
{
	if (!s->sub) {
		seterr(err, errlen, "recording needs a live stream (a replay is a recording already)");
		return IOGP_EINVAL;
	}
	if (s->rec) {
		seterr(err, errlen, "already recording to %s", s->rec_path);
		return IOGP_EINVAL;
	}
	iogp_recorder_opts ro;
	memset(&ro, 0, sizeof(ro));
	ro.creator = "iogram-view " IOGRAM_VERSION;
	int rc = iogp_recorder_open(&s->rec, path, &ro, err, errlen);
	if (rc < 0) {
		s->rec = NULL;
		return rc;
	}
	/* start the file with what we know, so its first records make sense */
	uint64_t now = now_ns();
	iogp_msg msg;
	iogp_msg_init(&msg);
	for (size_t i = 0; i < iogp_model_source_count(s->m); i++)
		if (iogp_model_snapshot(s->m, i, 0, &msg) == 0)
			iogp_recorder_add_msg(s->rec, &msg, now);
	iogp_msg_free(&msg);
	free(s->rec_path);
	s->rec_path = strdup(path);
	return 0;
}

int iogv_record_stop(iogv_session *s, char *err, size_t errlen)
{
	if (!s->rec)
		return 0;
	int rc = iogp_recorder_close(s->rec);
	s->rec = NULL;
	if (rc < 0)
		seterr(err, errlen, "closing %s: %s", s->rec_path ? s->rec_path : "", iogp_strerror(rc));
	return rc;
}

const char *iogv_recording(const iogv_session *s)
{
	return s->rec ? s->rec_path : NULL;
}

/* ---- frames ---- */

static int live_rates(iogv_session *s, iogplot_series *out)
{
	const iogp_model_opts *mo = iogp_model_get_opts(s->m);
	size_t nn = iogp_model_node_count(s->m), nb = mo->ring_bins;
	uint64_t bin = mo->bin_ns, now = now_ns();
	uint64_t end = now / bin * bin;   /* the last whole bin */
	double *rate = malloc(nb * sizeof(double));
	uint8_t *cov = malloc(nb);
	iogplot_series_free(out);
	int rc = rate && cov ? iogplot_series_alloc(out, nn, nb, (double)(end - nb * bin) / 1e9,
	                                            (double)bin / 1e9) : IOGP_ENOMEM;
	for (size_t k = 0; k < nn && rc >= 0; k++) {
		iogp_sel sel = { .kind = IOGP_SEL_NODE, .node = iogp_model_node(s->m, k) };
		rc = iogplot_series_set_node(out, k, sel.node);
		for (int op = 0; op < 2 && rc >= 0; op++) {
			uint64_t first;
			int q = iogp_model_rate(s->m, rate_names[op], &sel, end, nb, rate, cov, &first);
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

int iogv_frame(iogv_session *s, const iogp_sel *sel, double window_s, iogplot_frame *f)
{
	int rc = iogplot_frame_from_model(f, s->m, sel);
	if (rc < 0)
		return rc;
	if (window_s > 0) {
		for (int i = 0; i < 6; i++) {
			iogp_hist *h = i < 2 ? &f->size[i] : i < 5 ? &f->lat[i - 2] : &f->qd;
			iogp_hist_free(h);
			rc = iogp_model_hist_window(s->m, hist_names[i], sel, (uint64_t)(window_s * 1e9), h);
			if (rc == IOGP_ENOMEM)
				return rc;
		}
		snprintf(f->window, sizeof(f->window), "last %.0f s", window_s);
	} else {
		snprintf(f->window, sizeof(f->window), "since start");
	}
	if (s->r) {
		if (f->rates.nbins != s->file_rates.nbins || f->rates.nnodes != s->file_rates.nnodes ||
		    f->rates.t0 != s->file_rates.t0) {
			iogplot_series_free(&f->rates);
			if ((rc = iogplot_series_copy(&f->rates, &s->file_rates)) < 0)
				return rc;
		}
		f->t_now = (double)s->pos_ns / 1e9;
		f->t_first = (double)s->start_ns / 1e9;
	} else {
		if (s->rates_gen != s->gen || !f->rates.nbins) {
			if ((rc = live_rates(s, &f->rates)) < 0)
				return rc;
			s->rates_gen = s->gen;
		}
		f->t_now = (double)now_ns() / 1e9;
		/* the sources' own first wall time (set by the frame) may be older than
		 * our first message: agents that were running before we started */
		if (s->live_first_ns && !(f->t_first > 0))
			f->t_first = (double)s->live_first_ns / 1e9;
	}
	iogp_model_live lv;
	iogp_model_get_live(s->m, &lv);
	f->msg_rate = lv.msgs_per_s;
	f->nlive = lv.sources_live + lv.sources_new;
	if (sel && sel->kind != IOGP_SEL_ALL) {
		/* per-selection liveness from the source list */
		f->nlive = 0;
		for (size_t i = 0; i < iogp_model_source_count(s->m); i++) {
			iogp_source_info si;
			if (iogp_model_source(s->m, i, &si) < 0)
				continue;
			int in = sel->kind == IOGP_SEL_NODE ? !strcmp(si.node ? si.node : "", sel->node) :
			         si.id == sel->source;
			f->nlive += in && (si.state == IOGP_SRC_LIVE || si.state == IOGP_SRC_NEW);
		}
	}
	snprintf(f->title, sizeof(f->title), "%s", s->title);
	f->recording = s->rec != NULL;
	snprintf(f->record_path, sizeof(f->record_path), "%s", s->rec_path ? s->rec_path : "");
	f->generation = s->gen;
	return 0;
}

int iogv_node_rates(iogv_session *s, const char *node, double *rd, double *wr)
{
	*rd = *wr = 0;
	if (s->r) {
		const iogplot_series *fr = &s->file_rates;
		double b = floor(((double)s->pos_ns / 1e9 - fr->t0) / fr->step) - 1;
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
	const iogp_model_opts *mo = iogp_model_get_opts(s->m);
	uint64_t end = now_ns() / mo->bin_ns * mo->bin_ns, first;
	double r[1];
	uint8_t c[1];
	if (iogp_model_rate(s->m, rate_names[0], &sel, end, 1, r, c, &first) == 0 && c[0])
		*rd = r[0];
	if (iogp_model_rate(s->m, rate_names[1], &sel, end, 1, r, c, &first) == 0 && c[0])
		*wr = r[0];
	return 0;
}
