/* feed.c - live sockets or a replay file played with pause, speed and seek,
 * feeding one stream model and optionally a recording, for both viewers. */
#include <errno.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

#include "iogp_err.h"
#include "iogp_feed.h"
#include "iogp_recorder.h"
#include "iogp_replay.h"
#include "iogp_sub.h"
#include "iogp_sys.h"

#define BUDGET_NS 40000000ull          /* per pump: keys stay responsive */
#define WARMUP_NS 300000000000ull      /* fed before a seek target: windows filled */
#define SCAN_LIMIT (64ull << 20)
#define FLUSH_NS 1000000000ull
#define TRIM_NS 10000000000ull    /* freed memory back to the system at most this often */
/* After a pump that emptied the queue, messages gather this long before
 * the next is taken (input is waited for as ever): at 50,000 sources the
 * loop woke 2,000-2,350 times a second for ~20 messages each, and ZeroMQ
 * signalled each wake-up from its I/O thread. */
#define GATHER_NS 10000000ull

struct iogp_feed {
	iogp_feed_opts o;
	iogp_model *m;
	uint64_t gen;
	char where[512];
	char events[1024];
	uint64_t malformed;
	int paused;
	/* live */
	void *ctx, *sub, *mon;
	int nconnect;
	uint8_t *buf;
	uint64_t trim_at;   /* the last return of freed memory (pump_live) */
	uint64_t gather_until;   /* messages left to queue until then (iogp_feed_wait) */
	/* replay */
	iogp_replay_reader *r;
	char *path;
	uint64_t first_ns, last_ns, pos_ns, last_mono;
	int have_next, at_end;
	uint64_t next_recv;
	uint8_t *next;
	size_t next_len, next_cap;
	double speed;
	uint64_t skipped_bytes, bad_frames;
	uint64_t *kf;
	size_t nkf;
	/* a seek under way (iogp_feed_seek_start): records up to seek_to are
	 * read a pump at a time; applied_ns is the last one's receive time,
	 * seek_base where this seek began reading */
	int seeking;
	uint64_t seek_to, seek_base, applied_ns;
	uint64_t hist_from;   /* the model has read every record since this */
	/* recording */
	iogp_recorder *rec;
	char rec_path[1024];
	char rec_err[256];
	uint64_t rec_flush;
};

static iogp_model *new_model(const iogp_feed *f)
{
	return iogp_model_new(f->r ? &f->o.replay_model : &f->o.model);
}

static void add_event(iogp_feed *f, const char *line)
{
	size_t l = strlen(f->events), n = strlen(line);
	if (l + n + 1 < sizeof(f->events) && !strstr(f->events, line)) {
		memcpy(f->events + l, line, n);
		memcpy(f->events + l + n, "\n", 2);
	}
}

iogp_feed *iogp_feed_new(const iogp_feed_opts *o)
{
	iogp_feed *f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	if (o)
		f->o = *o;
	static const iogp_model_opts zero;
	if (!memcmp(&f->o.replay_model, &zero, sizeof(zero)))
		f->o.replay_model = f->o.model;
	if (!f->o.budget_ns)
		f->o.budget_ns = BUDGET_NS;
	if (!f->o.warmup_ns)
		f->o.warmup_ns = WARMUP_NS;
	if (!f->o.scan_limit)
		f->o.scan_limit = SCAN_LIMIT;
	if (f->o.hwm <= 0)
		f->o.hwm = 100000;
	f->speed = 1;
	f->m = new_model(f);
	if (!f->m) {
		free(f);
		return NULL;
	}
	return f;
}

void iogp_feed_free(iogp_feed *f)
{
	if (!f)
		return;
	if (f->rec)
		iogp_recorder_close(f->rec);
	if (f->mon)
		zmq_close(f->mon);
	if (f->sub)
		zmq_close(f->sub);
	if (f->ctx)
		zmq_ctx_term(f->ctx);
	if (f->r)
		iogp_replay_close_reader(f->r);
	iogp_model_free(f->m);
	free(f->buf);
	free(f->next);
	free(f->kf);
	free(f->path);
	free(f);
}

/* ---- recording ----------------------------------------------------------- */

static void rec_fail(iogp_feed *f, int rc)
{
	snprintf(f->rec_err, sizeof(f->rec_err), "%.180s: %s", f->rec_path,
	         rc == IOGP_EIO ? strerror(errno ? errno : EIO) : iogp_strerror(rc));
	iogp_recorder_abandon(f->rec);
	f->rec = NULL;
}

static void apply(iogp_feed *f, const void *p, size_t len, uint64_t recv)
{
	iogp_model_feed(f->m, p, len, recv);
	if (f->rec) {
		int rc = iogp_recorder_add(f->rec, p, len, recv);
		if (rc == IOGP_EIO || rc == IOGP_ENOMEM)
			rec_fail(f, rc);
	}
}

static void rec_tick(iogp_feed *f)
{
	if (!f->rec)
		return;
	uint64_t now = iogp_mono_ns();
	if (now < f->rec_flush)
		return;
	if (iogp_recorder_flush(f->rec) == IOGP_EIO)
		rec_fail(f, IOGP_EIO);
	f->rec_flush = now + FLUSH_NS;
}

int iogp_feed_record_start(iogp_feed *f, const char *path, char *err, size_t errlen)
{
	if (f->rec) {
		iogp_errf(err, errlen, "already recording to %s", f->rec_path);
		return IOGP_EINVAL;
	}
	if (path) {
		snprintf(f->rec_path, sizeof(f->rec_path), "%s", path);
	} else {
		time_t t = time(NULL);
		struct tm tm;
		localtime_r(&t, &tm);
		strftime(f->rec_path, sizeof(f->rec_path), "iogram-%Y%m%d-%H%M%S.iogr", &tm);
	}
	iogp_recorder_opts ro;
	memset(&ro, 0, sizeof(ro));
	ro.creator = f->o.creator ? f->o.creator : "iogram " IOGRAM_VERSION;
	int rc = iogp_recorder_open(&f->rec, f->rec_path, &ro, err, errlen);
	if (rc < 0) {
		f->rec = NULL;
		return rc;
	}
	f->rec_err[0] = '\0';
	/* the recording starts with the state so far: every source's SNAPSHOT */
	uint64_t now = iogp_feed_now(f);
	iogp_msg msg;
	iogp_msg_init(&msg);
	for (size_t i = 0; i < iogp_model_source_count(f->m); i++)
		if (iogp_model_snapshot(f->m, i, 0, &msg) == 0)
			iogp_recorder_add_msg(f->rec, &msg, now);
	iogp_msg_free(&msg);
	f->rec_flush = iogp_mono_ns() + FLUSH_NS;
	return 0;
}

int iogp_feed_record_stop(iogp_feed *f, char *err, size_t errlen)
{
	if (!f->rec)
		return 0;
	int rc = iogp_recorder_close(f->rec);
	f->rec = NULL;
	if (rc < 0) {
		iogp_errf(err, errlen, "closing %s: %s", f->rec_path, iogp_strerror(rc));
		snprintf(f->rec_err, sizeof(f->rec_err), "%.180s: closing failed", f->rec_path);
	}
	return rc;
}

const char *iogp_feed_recording(const iogp_feed *f)
{
	return f->rec ? f->rec_path : NULL;
}

/* ---- live ---------------------------------------------------------------- */

static int ensure_socket(iogp_feed *f, char *err, size_t errlen)
{
	if (f->r) {
		iogp_errf(err, errlen, "this view plays a recording; open a new one for live streams");
		return IOGP_EINVAL;
	}
	if (f->sub)
		return 0;
	if (!(f->buf = malloc(2 * (size_t)IOGP_MAX_PAYLOAD + 8)))
		return IOGP_ENOMEM;
	f->ctx = zmq_ctx_new();
	f->sub = f->ctx ? iogp_sub_socket(f->ctx, f->o.hwm) : NULL;
	if (!f->sub) {
		iogp_errf(err, errlen, "cannot create a ZeroMQ socket: %s", zmq_strerror(zmq_errno()));
		return IOGP_EIO;
	}
	char mon[64];
	snprintf(mon, sizeof(mon), "inproc://iogp-feed-monitor-%p", (void *)f);
	if (zmq_socket_monitor(f->sub, mon, ZMQ_EVENT_CONNECT_RETRIED | ZMQ_EVENT_CONNECTED |
	                       ZMQ_EVENT_DISCONNECTED | ZMQ_EVENT_BIND_FAILED |
	                       ZMQ_EVENT_ACCEPT_FAILED) == 0) {
		f->mon = zmq_socket(f->ctx, ZMQ_PAIR);
		int zero = 0;
		if (f->mon)
			zmq_setsockopt(f->mon, ZMQ_LINGER, &zero, sizeof(zero));
		if (f->mon && zmq_connect(f->mon, mon) != 0) {
			zmq_close(f->mon);
			f->mon = NULL;
		}
	}
	return 0;
}

static void where_add(iogp_feed *f, const char *prefix, const char *ep)
{
	size_t u = strlen(f->where);
	snprintf(f->where + u, sizeof(f->where) - u, "%s%s%s", u ? " " : "", prefix, ep);
}

int iogp_feed_listen(iogp_feed *f, const char *ep, char *err, size_t errlen)
{
	char msg[1200] = "";
	int pol = iogp_endpoint_policy(ep, f->o.any_address, msg, sizeof(msg));
	if (pol < 0) {
		iogp_errf(err, errlen, "%s", msg);
		return IOGP_EINVAL;
	}
	int rc = ensure_socket(f, err, errlen);
	if (rc < 0)
		return rc;
	if (iogp_sock_bind(f->ctx, f->sub, ep, NULL, err, errlen) != 0) {
		if (zmq_errno() == EADDRINUSE && err) {
			size_t l = strlen(err);
			iogp_errf(err + l, errlen - l, " (is another viewer or 'iogram record' listening "
			       "there? use --listen or --connect)");
		}
		return IOGP_EIO;
	}
	if (pol > 0)
		add_event(f, msg);
	char real[256];
	/* "tcp://127.0.0.1:*" binds a free port: show which */
	if (strchr(ep, '*') && iogp_feed_last_endpoint(f, real, sizeof(real)) == 0)
		where_add(f, "", real);
	else
		where_add(f, "", ep);
	return 0;
}

int iogp_feed_connect(iogp_feed *f, const char *ep, char *err, size_t errlen)
{
	int rc = ensure_socket(f, err, errlen);
	if (rc < 0)
		return rc;
	if (iogp_sock_connect(f->ctx, f->sub, ep, NULL, err, errlen) != 0)
		return IOGP_EIO;
	f->nconnect++;
	where_add(f, "<", ep);
	return 0;
}

int iogp_feed_is_live(const iogp_feed *f)
{
	return f->sub != NULL;
}

int iogp_feed_last_endpoint(iogp_feed *f, char *buf, size_t len)
{
	size_t l = len;
	if (!f->sub || !len || zmq_getsockopt(f->sub, ZMQ_LAST_ENDPOINT, buf, &l) != 0)
		return IOGP_ENOTFOUND;
	buf[len - 1] = 0;
	return 0;
}

void iogp_feed_set_where(iogp_feed *f, const char *where)
{
	snprintf(f->where, sizeof(f->where), "%s", where ? where : "");
}

static void read_monitor(iogp_feed *f)
{
	for (int k = 0; f->mon && k < 64; k++) {
		uint8_t ev[6];
		char addr[256], line[400];
		if (zmq_recv(f->mon, ev, sizeof(ev), ZMQ_DONTWAIT) < 0)
			return;
		int an = zmq_recv(f->mon, addr, sizeof(addr) - 1, 0);
		addr[an < 0 ? 0 : an > (int)sizeof(addr) - 1 ? (int)sizeof(addr) - 1 : an] = 0;
		const char *what = NULL;
		switch (ev[0] | ev[1] << 8) {
		case ZMQ_EVENT_CONNECT_RETRIED: what = "not reachable, retrying"; break;
		case ZMQ_EVENT_BIND_FAILED: what = "listening failed"; break;
		case ZMQ_EVENT_ACCEPT_FAILED: what = "accept failed"; break;
		case ZMQ_EVENT_CONNECTED: what = "connected"; break;
		/* a listening feed sees agents come and go: only its own links matter */
		case ZMQ_EVENT_DISCONNECTED: what = f->nconnect ? "disconnected" : NULL; break;
		default: break;
		}
		if (!what)
			continue;
		snprintf(line, sizeof(line), "%s: %s", addr, what);
		add_event(f, line);
	}
}

int iogp_feed_take_events(iogp_feed *f, char *buf, size_t len)
{
	read_monitor(f);
	int n = snprintf(buf, len, "%s", f->events);
	f->events[0] = 0;
	return n;
}

/* Messages are taken a few at a time (iogp_model_feed_many fetches the
 * state of a batch at once): buf holds two payloads' worth, so the next
 * one always fits whole after those already taken. */
#define PUMP_BATCH 8

static long pump_live(iogp_feed *f)
{
	uint64_t t0 = iogp_mono_ns(), bad0 = f->malformed;
	long n = 0, taken = 0;   /* applied; taken off the socket, refused ones too */
	int got_all = 0;         /* the queue found empty */
	for (;;) {
		const void *p[PUMP_BATCH];
		size_t len[PUMP_BATCH], off = 0, k = 0;
		long got = 0;
		for (int tries = 0; k < PUMP_BATCH && off <= IOGP_MAX_PAYLOAD && tries < PUMP_BATCH; tries++) {
			got = iogp_sub_recv(f->sub, f->buf + off, IOGP_MAX_PAYLOAD);
			if (got == -1)
				break;
			if (got == -2) {
				f->malformed++;
				continue;
			}
			p[k] = f->buf + off;
			len[k++] = (size_t)got;
			off += ((size_t)got + 7) & ~(size_t)7;
		}
		uint64_t now = iogp_wall_ns();
		iogp_model_feed_many(f->m, p, len, k, now);
		for (size_t i = 0; i < k && f->rec; i++) {
			int rc = iogp_recorder_add(f->rec, p[i], len[i], now);
			if (rc == IOGP_EIO || rc == IOGP_ENOMEM)
				rec_fail(f, rc);
		}
		n += (long)k;
		if (got == -1) {
			got_all = 1;
			break;
		}
		/* bounded: a flood, of garbage too, must not starve the keyboard */
		taken += PUMP_BATCH;
		if (taken % 256 == 0 && iogp_mono_ns() - t0 > f->o.budget_ns)
			break;
	}
	iogp_model_tick(f->m, iogp_wall_ns());
	if (got_all && (n || f->malformed != bad0))   /* a flood of garbage gathers too */
		f->gather_until = iogp_mono_ns() + GATHER_NS;
	/* Queued messages are ZeroMQ's, in its I/O thread's heap, freed by
	 * this one: malloc keeps what a backlog held (a viewer joining 50,000
	 * sources queued their HELLOs and SNAPSHOTs: 110-160 MB within 4 s,
	 * held for good, 2-3 KB a source). Once a pump finds the queue empty,
	 * at most every TRIM_NS, the free pages go back (3-22 ms; 30-67 MB of
	 * those heaps stay in use then, measured). */
#ifdef __GLIBC__
	if (got_all && iogp_mono_ns() >= f->trim_at + TRIM_NS) {
		malloc_trim(0);
		f->trim_at = iogp_mono_ns();
	}
#endif
	return n;
}

/* ---- replay -------------------------------------------------------------- */

int iogp_feed_is_replay(const iogp_feed *f)
{
	return f->r != NULL;
}

const char *iogp_feed_path(const iogp_feed *f)
{
	return f->path;
}

static void note_damage(iogp_feed *f)
{
	iogp_replay_rstats rs;
	iogp_replay_reader_stats(f->r, &rs);
	if (rs.skipped_bytes > f->skipped_bytes)
		f->skipped_bytes = rs.skipped_bytes;
	if (rs.bad_frames > f->bad_frames)
		f->bad_frames = rs.bad_frames;
}

/* Read the record after the ones applied; have_next says whether there is. */
static int read_next(iogp_feed *f)
{
	iogp_replay_rec rec;
	f->have_next = 0;
	int rc = iogp_replay_next(f->r, &rec);
	if (rc < 0)
		return rc;
	if (rec.len > f->next_cap) {
		size_t nc = rec.len + 4096;
		uint8_t *p = realloc(f->next, nc);
		if (!p)
			return IOGP_ENOMEM;
		f->next = p;
		f->next_cap = nc;
	}
	memcpy(f->next, rec.payload, rec.len);
	f->next_len = rec.len;
	f->next_recv = rec.recv_ns;
	f->have_next = 1;
	return 0;
}

/* Apply every record up to receive time t; within the time budget unless
 * whole (a seek must arrive where it was asked to). */
static long feed_until(iogp_feed *f, uint64_t t, int whole)
{
	uint64_t t0 = iogp_mono_ns();
	long n = 0;
	while (f->have_next && f->next_recv <= t) {
		apply(f, f->next, f->next_len, f->next_recv);
		f->applied_ns = f->next_recv;
		read_next(f);
		/* behind after the budget: the next pump goes on from here */
		if (!whole && ++n % 256 == 0 && iogp_mono_ns() - t0 > f->o.budget_ns)
			break;
	}
	note_damage(f);
	return n;
}

/* The span: a whole scan for files up to the scan limit (it also finds
 * damage), else the first record and on from the last keyframe. */
static int find_span(iogp_feed *f, char *err, size_t errlen)
{
	iogp_replay_info info;
	iogp_replay_get_info(f->r, &info);
	iogp_replay_rec rec;
	int rc = iogp_replay_next(f->r, &rec);
	if (rc < 0) {
		iogp_errf(err, errlen, "%s: %s", f->path,
		       rc == IOGP_EEOF ? "no records in this file" : iogp_strerror(rc));
		return rc == IOGP_EEOF ? IOGP_ENOTFOUND : rc;
	}
	f->first_ns = f->last_ns = rec.recv_ns;
	const iogp_replay_kf *kf;
	size_t nkf = iogp_replay_keyframes(f->r, &kf);
	if (info.file_bytes > f->o.scan_limit && nkf && kf[nkf - 1].recv_ns > f->first_ns &&
	    iogp_replay_seek(f->r, kf[nkf - 1].recv_ns) < 0)
		iogp_replay_rewind(f->r);
	while ((rc = iogp_replay_next(f->r, &rec)) == 0)
		if (rec.recv_ns > f->last_ns)
			f->last_ns = rec.recv_ns;
	note_damage(f);
	if (rc != IOGP_EEOF) {
		iogp_errf(err, errlen, "%s: %s", f->path, iogp_strerror(rc));
		return rc;
	}
	if (!(f->kf = malloc((nkf ? nkf : 1) * sizeof(*f->kf))))
		return IOGP_ENOMEM;
	for (size_t i = 0; i < nkf; i++)
		f->kf[i] = kf[i].recv_ns;
	f->nkf = nkf;
	return 0;
}

int iogp_feed_open_replay(iogp_feed *f, const char *path, char *err, size_t errlen)
{
	if (f->sub || f->r) {
		iogp_errf(err, errlen, "this feed already has a source; open a new one");
		return IOGP_EINVAL;
	}
	int rc = iogp_replay_open(&f->r, path, err, errlen);
	if (rc < 0) {
		f->r = NULL;
		return rc;
	}
	if (!(f->path = strdup(path)))
		return IOGP_ENOMEM;
	iogp_feed_set_where(f, path);
	if ((rc = find_span(f, err, errlen)) < 0)
		return rc;
	iogp_model *m = new_model(f);
	if (!m)
		return IOGP_ENOMEM;
	iogp_model_free(f->m);
	f->m = m;
	if ((rc = iogp_replay_rewind(f->r)) < 0 || (rc = read_next(f)) < 0) {
		iogp_errf(err, errlen, "%s: %s", path, iogp_strerror(rc));
		return rc;
	}
	f->pos_ns = f->first_ns;
	f->hist_from = f->first_ns;
	feed_until(f, f->first_ns, 1);
	iogp_model_tick(f->m, f->pos_ns);
	f->last_mono = iogp_mono_ns();
	f->gen++;
	return 0;
}

static long seek_step(iogp_feed *f, int whole);

static long pump_replay(iogp_feed *f)
{
	if (f->seeking)
		return seek_step(f, 0);
	uint64_t now = iogp_mono_ns();
	if (!f->paused && !f->at_end)
		f->pos_ns += (uint64_t)((double)(now - f->last_mono) * f->speed);
	f->last_mono = now;
	if (f->pos_ns >= f->last_ns) {
		f->pos_ns = f->last_ns;
		f->at_end = 1;
	}
	long n = feed_until(f, f->pos_ns, 0);
	if (!f->have_next) {
		f->at_end = 1;
		f->pos_ns = f->last_ns;
	}
	iogp_model_tick(f->m, f->pos_ns);
	return n;
}

/* Where the warm-up before t begins: the history a seek to t feeds. */
static uint64_t warm_from(const iogp_feed *f, uint64_t t)
{
	return t > f->first_ns + f->o.warmup_ns ? t - f->o.warmup_ns : f->first_ns;
}

/* Start over with an empty model at the keyframe before t minus the
 * warm-up, so the access samples and windows of the time shown are full. */
static int start_over(iogp_feed *f, uint64_t t)
{
	uint64_t from = warm_from(f, t);
	iogp_model *m = new_model(f);
	if (!m)
		return IOGP_ENOMEM;
	if (f->rec) {   /* a recording cannot go back in time or skip */
		iogp_recorder_close(f->rec);
		f->rec = NULL;
		snprintf(f->rec_err, sizeof(f->rec_err), "stopped by the seek");
	}
	iogp_model_free(f->m);
	f->m = m;
	int rc = iogp_replay_seek(f->r, from);
	if (rc < 0)
		return rc;
	rc = read_next(f);
	/* its history: from the keyframe it read first (at or before from) */
	f->hist_from = f->have_next && f->next_recv < from ? f->next_recv : from;
	return rc == IOGP_EEOF ? 0 : rc;
}

/* Read on towards the seek's target (all of it when whole, else a pump's
 * budget); once there, the clock shows the target. The records read. */
static long seek_step(iogp_feed *f, int whole)
{
	long n = feed_until(f, f->seek_to, whole);
	if (f->have_next && f->next_recv <= f->seek_to) {
		/* under way: the clock where the records are */
		if (f->applied_ns > f->pos_ns)
			f->pos_ns = f->applied_ns;
		iogp_model_tick(f->m, f->pos_ns);
		return n;
	}
	f->seeking = 0;
	f->pos_ns = f->seek_to;
	f->at_end = f->seek_to >= f->last_ns;
	f->last_mono = iogp_mono_ns();
	iogp_model_tick(f->m, f->seek_to);
	f->gen++;
	return n;
}

static int seek_begin(iogp_feed *f, uint64_t t)
{
	if (!f->r)
		return IOGP_EINVAL;
	if (t < f->first_ns)
		t = f->first_ns;
	if (t > f->last_ns)
		t = f->last_ns;
	/* backward from where the model is (a seek under way: the clock follows
	 * the records read), or to where the model lacks the warm-up (a seek
	 * moved back while the one under way reads its own), or past a keyframe
	 * far enough ahead: start over from one */
	uint64_t need = warm_from(f, t);
	int rc = 0, jump = t < f->pos_ns || need < f->hist_from;
	for (size_t i = 0; i < f->nkf && !jump; i++)
		jump = f->kf[i] > f->pos_ns && f->kf[i] <= need;
	if (jump && (rc = start_over(f, t)) < 0) {
		f->seeking = 0;
		return rc;
	}
	if (jump || !f->seeking)
		f->seek_base = f->have_next && f->next_recv < t ? f->next_recv : t;
	if (jump)
		f->pos_ns = f->seek_base;   /* the clock from where the new model reads */
	f->seeking = 1;
	f->seek_to = t;
	f->at_end = 0;   /* until it arrives (unpausing meanwhile must not play again from the start) */
	return 0;
}

int iogp_feed_seek(iogp_feed *f, uint64_t t)
{
	int rc = seek_begin(f, t);
	if (rc == 0)
		seek_step(f, 1);
	return rc;
}

int iogp_feed_seek_start(iogp_feed *f, uint64_t t)
{
	int rc = seek_begin(f, t);
	if (rc == 0) {
		seek_step(f, 0);
		f->gen++;
	}
	return rc;
}

/* delta_s from where the replay is, or is going to */
static uint64_t seek_by_target(const iogp_feed *f, double delta_s)
{
	double t = (double)(f->seeking ? f->seek_to : f->pos_ns) + delta_s * 1e9;
	return t <= (double)f->first_ns ? f->first_ns : t >= (double)f->last_ns ? f->last_ns : (uint64_t)t;
}

int iogp_feed_seek_by(iogp_feed *f, double delta_s)
{
	return f->r ? iogp_feed_seek(f, seek_by_target(f, delta_s)) : IOGP_EINVAL;
}

int iogp_feed_seek_by_start(iogp_feed *f, double delta_s)
{
	return f->r ? iogp_feed_seek_start(f, seek_by_target(f, delta_s)) : IOGP_EINVAL;
}

int iogp_feed_seeking(const iogp_feed *f, uint64_t *to_ns, double *done)
{
	if (!f->seeking)
		return 0;
	if (to_ns)
		*to_ns = f->seek_to;
	if (done) {
		uint64_t a = f->applied_ns > f->seek_base ? f->applied_ns - f->seek_base : 0;
		uint64_t span = f->seek_to > f->seek_base ? f->seek_to - f->seek_base : 1;
		*done = a >= span ? 1.0 : (double)a / (double)span;
	}
	return 1;
}

size_t iogp_feed_keyframes(const iogp_feed *f, uint64_t *t, size_t max)
{
	size_t n = f->nkf < max ? f->nkf : max;
	if (t && n)
		memcpy(t, f->kf, n * sizeof(*t));
	return f->nkf;
}

void iogp_feed_pause(iogp_feed *f, int paused)
{
	if (f->r && !paused && f->at_end)
		iogp_feed_seek(f, f->first_ns);   /* play again from the start */
	f->paused = paused;
	f->last_mono = iogp_mono_ns();
}

int iogp_feed_paused(const iogp_feed *f)
{
	return f->paused;
}

void iogp_feed_play_state(const iogp_feed *f, double *speed, int *paused, int *at_end)
{
	*speed = f->speed;
	*paused = f->paused;
	*at_end = f->at_end;
}

void iogp_feed_speed(iogp_feed *f, int dir)
{
	if (dir > 0 && f->speed < 1024)
		f->speed *= 2;
	else if (dir < 0 && f->speed > 1.0 / 64)
		f->speed /= 2;
}

int iogp_feed_next_due_ms(const iogp_feed *f)
{
	if (f->r && f->seeking)
		return 0;   /* records to read at once */
	if (!f->r || f->paused || f->at_end || !f->have_next)
		return -1;
	if (f->next_recv <= f->pos_ns)
		return 0;
	double ms = (double)(f->next_recv - f->pos_ns) / 1e6 / f->speed;
	return ms > 1000 ? 1000 : (int)ms + 1;
}

/* ---- the loop ------------------------------------------------------------ */

/* fd alone (-1: a sleep) */
static int wait_fd(int fd, int timeout_ms)
{
	struct pollfd pf = { fd, POLLIN, 0 };
	if (poll(&pf, fd >= 0, timeout_ms) <= 0 || fd < 0)
		return 0;
	if ((pf.revents & (POLLERR | POLLHUP | POLLNVAL)) && !(pf.revents & POLLIN))
		return -1;
	return (pf.revents & POLLIN) != 0;
}

int iogp_feed_wait(iogp_feed *f, int fd, int timeout_ms)
{
	if (timeout_ms < 0)
		timeout_ms = 0;
	if (!f->sub)
		return wait_fd(fd, timeout_ms);
	/* messages gathering: only the input wakes the loop meanwhile */
	uint64_t now = iogp_mono_ns();
	if (now < f->gather_until) {
		int left = (int)((f->gather_until - now + 999999) / 1000000);
		return wait_fd(fd, left < timeout_ms ? left : timeout_ms);
	}
	/* A terminal that went away (SSH dropped, tmux killed) reports an error
	 * or hang-up without input: say so, or the caller would spin. */
	zmq_pollitem_t pi[2] = { { f->sub, 0, ZMQ_POLLIN, 0 }, { NULL, fd, ZMQ_POLLIN, 0 } };
	if (zmq_poll(pi, fd >= 0 ? 2 : 1, timeout_ms) < 0 || fd < 0)
		return 0;
	if ((pi[1].revents & ZMQ_POLLERR) && !(pi[1].revents & ZMQ_POLLIN))
		return -1;
	return (pi[1].revents & ZMQ_POLLIN) != 0;
}

long iogp_feed_pump(iogp_feed *f)
{
	long n = 0;
	if (f->r)
		n = pump_replay(f);
	else if (f->sub)
		n = pump_live(f);
	rec_tick(f);
	if (n)
		f->gen++;
	return n;
}

iogp_model *iogp_feed_model(const iogp_feed *f)
{
	return f->m;
}

uint64_t iogp_feed_generation(const iogp_feed *f)
{
	return f->gen;
}

uint64_t iogp_feed_now(const iogp_feed *f)
{
	return f->r ? f->pos_ns : iogp_wall_ns();
}

void iogp_feed_get_status(const iogp_feed *f, iogp_feed_status *st)
{
	memset(st, 0, sizeof(*st));
	st->live = f->sub != NULL;
	st->replay = f->r != NULL;
	st->where = f->where;
	st->msgs_per_s = iogp_model_msgs_per_s(f->m);   /* no count of every source's state */
	iogp_model_stats ms;
	iogp_model_get_stats(f->m, &ms);
	st->messages = ms.messages;
	st->bad = ms.bad_messages;
	st->malformed = f->malformed;
	st->first_ns = f->first_ns;
	st->last_ns = f->last_ns;
	st->pos_ns = f->pos_ns;
	st->speed = f->speed;
	st->paused = f->paused;
	st->at_end = f->at_end;
	st->skipped_bytes = f->skipped_bytes;
	st->bad_frames = f->bad_frames;
	st->seeking = iogp_feed_seeking(f, &st->seek_to_ns, &st->seek_done);
	st->recording = f->rec != NULL;
	st->rec_path = f->rec_path;
	if (f->rec) {
		iogp_recorder_stats rs;
		iogp_recorder_get_stats(f->rec, &rs);
		st->rec_bytes = rs.file.file_bytes;
	}
	st->rec_error = f->rec_err[0] ? f->rec_err : NULL;
}
