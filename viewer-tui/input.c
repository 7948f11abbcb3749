/* input.c - where messages come from: SUB sockets (live and demo) or a
 * replay file played at a speed with pause and seek; all of it feeds one
 * stream model, and optionally a recording. */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <zmq.h>

#include "iogp_sub.h"
#include "top.h"

#define BUDGET_NS 40000000ull      /* per pump: keys stay responsive */
#define HISTORY_NS 300000000000ull /* fed before a backward seek target */
#define SCAN_LIMIT (64ull << 20)   /* files up to this are scanned whole at open */

struct top_input {
	top_mode mode;
	iogp_model *m;
	iogp_model_opts mo;
	char where[512];
	uint64_t malformed, fed;
	int paused;
	/* live */
	void *ctx, *sub;
	uint8_t *buf;
	/* replay */
	iogp_replay_reader *r;
	uint64_t first_ns, last_ns, pos_ns, last_mono;
	int have_next, at_end;
	uint64_t next_recv;
	uint8_t *next;
	size_t next_len, next_cap;
	double speed;
	uint64_t skipped_bytes, bad_frames;
	/* recording */
	iogp_recorder *rec;
	char rec_path[1024];
	char rec_err[256];
	uint64_t rec_flush;
	/* demo */
	iogram_demo *demo;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t real_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static iogp_model *new_model(top_input *in)
{
	return iogp_model_new(&in->mo);
}

static void rec_add(top_input *in, const void *p, size_t len, uint64_t recv)
{
	if (!in->rec)
		return;
	int rc = iogp_recorder_add(in->rec, p, len, recv);
	if (rc == IOGP_EIO || rc == IOGP_ENOMEM) {
		snprintf(in->rec_err, sizeof(in->rec_err), "%.180s: %s", in->rec_path,
		         rc == IOGP_EIO ? strerror(errno ? errno : EIO) : "out of memory");
		iogp_recorder_abandon(in->rec);
		in->rec = NULL;
	}
}

static void feed(top_input *in, const void *p, size_t len, uint64_t recv)
{
	iogp_model_feed(in->m, p, len, recv);
	in->fed++;
	rec_add(in, p, len, recv);
}

/* ---- live -------------------------------------------------------------- */

static int open_live(top_input *in, const top_input_opts *o, char *err, size_t errlen)
{
	in->ctx = zmq_ctx_new();
	in->sub = in->ctx ? iogp_sub_socket(in->ctx, 100000) : NULL;
	in->buf = malloc(IOGP_MAX_PAYLOAD);
	if (!in->sub || !in->buf) {
		snprintf(err, errlen, "cannot create a ZeroMQ socket: %s", zmq_strerror(zmq_errno()));
		return -1;
	}
	size_t u = 0;
	if (o->demo) {
		if (iogp_sock_bind(in->ctx, in->sub, "tcp://127.0.0.1:*", NULL, err, errlen) != 0)
			return -1;
		char ep[256];
		size_t el = sizeof(ep);
		zmq_getsockopt(in->sub, ZMQ_LAST_ENDPOINT, ep, &el);
		if (demo_start(&in->demo, ep, err, errlen) < 0)
			return -1;
		snprintf(in->where, sizeof(in->where), "demo %s", ep);
		return 0;
	}
	const char *dflt = IOGP_DEFAULT_ENDPOINT;
	int nl = o->nlisten, nc = o->nconnect;
	for (int i = 0; i < (nl || nc ? nl : 1); i++) {
		const char *ep = nl ? o->listen[i] : dflt;
		if (!o->any_address && !iogp_endpoint_local(ep)) {
			snprintf(err, errlen, "%s is not a loopback endpoint (tcp://127.x, ipc://); add "
			         "--any-address to listen on it", ep);
			return -2;
		}
		if (iogp_sock_bind(in->ctx, in->sub, ep, NULL, err, errlen) != 0) {
			if (zmq_errno() == EADDRINUSE) {
				size_t l = strlen(err);
				snprintf(err + l, errlen - l, " (is another iogram-top or iogram record "
				         "running? use --listen or --connect)");
			}
			return -1;
		}
		u += (size_t)snprintf(in->where + u, sizeof(in->where) - u, "%s%s", u ? " " : "", ep);
		if (u >= sizeof(in->where))
			u = sizeof(in->where) - 1;
	}
	for (int i = 0; i < nc; i++) {
		if (iogp_sock_connect(in->ctx, in->sub, o->connect[i], NULL, err, errlen) != 0)
			return -1;
		u += (size_t)snprintf(in->where + u, sizeof(in->where) - u, "%s<%s", u ? " " : "", o->connect[i]);
		if (u >= sizeof(in->where))
			u = sizeof(in->where) - 1;
	}
	return 0;
}

static long pump_live(top_input *in)
{
	uint64_t t0 = mono_ns();
	long n = 0;
	for (;;) {
		long len = iogp_sub_recv(in->sub, in->buf, IOGP_MAX_PAYLOAD);
		if (len == -1)
			break;
		if (len == -2) {
			in->malformed++;
			continue;
		}
		feed(in, in->buf, (size_t)len, real_ns());
		/* bounded: a flood must not starve the keyboard */
		if (++n % 256 == 0 && mono_ns() - t0 > BUDGET_NS)
			break;
	}
	iogp_model_tick(in->m, real_ns());
	return n;
}

/* ---- replay ------------------------------------------------------------ */

static int read_next(top_input *in)
{
	iogp_replay_rec rec;
	in->have_next = 0;
	int rc = iogp_replay_next(in->r, &rec);
	if (rc < 0)
		return rc;
	if (rec.len > in->next_cap) {
		size_t nc = rec.len + 4096;
		uint8_t *p = realloc(in->next, nc);
		if (!p)
			return IOGP_ENOMEM;
		in->next = p;
		in->next_cap = nc;
	}
	memcpy(in->next, rec.payload, rec.len);
	in->next_len = rec.len;
	in->next_recv = rec.recv_ns;
	in->have_next = 1;
	return 0;
}

static void damage(top_input *in)
{
	iogp_replay_rstats rs;
	iogp_replay_reader_stats(in->r, &rs);
	if (rs.skipped_bytes > in->skipped_bytes)
		in->skipped_bytes = rs.skipped_bytes;
	if (rs.bad_frames > in->bad_frames)
		in->bad_frames = rs.bad_frames;
}

static int open_replay(top_input *in, const char *path, char *err, size_t errlen)
{
	if (iogp_replay_open(&in->r, path, err, errlen) < 0)
		return -1;
	snprintf(in->where, sizeof(in->where), "%s", path);
	/* the span: a whole scan for files of moderate size (it also finds
	 * damage), else from the last keyframe on */
	iogp_replay_info info;
	iogp_replay_get_info(in->r, &info);
	if (info.file_bytes > SCAN_LIMIT)
		iogp_replay_seek(in->r, UINT64_MAX - 1);
	int rc;
	iogp_replay_rec rec;
	uint64_t n = 0;
	while ((rc = iogp_replay_next(in->r, &rec)) == 0) {
		if (!n++ && info.file_bytes <= SCAN_LIMIT)
			in->first_ns = rec.recv_ns;
		if (rec.recv_ns > in->last_ns)
			in->last_ns = rec.recv_ns;
	}
	damage(in);
	if (rc != IOGP_EEOF && n == 0) {
		snprintf(err, errlen, "%s: %s", path, iogp_strerror(rc));
		return -1;
	}
	iogp_replay_rewind(in->r);
	rc = read_next(in);
	if (rc < 0) {
		snprintf(err, errlen, "%s: no records (%s)", path, iogp_strerror(rc));
		return -1;
	}
	if (!in->first_ns || in->next_recv < in->first_ns)
		in->first_ns = in->next_recv;
	if (in->last_ns < in->first_ns)
		in->last_ns = in->first_ns;
	in->pos_ns = in->first_ns;
	in->speed = 1;
	in->last_mono = mono_ns();
	return 0;
}

/* Feed every record up to t; bounded by a time budget unless whole. */
static void feed_until(top_input *in, uint64_t t, int whole)
{
	uint64_t t0 = mono_ns();
	long n = 0;
	while (in->have_next && in->next_recv <= t) {
		feed(in, in->next, in->next_len, in->next_recv);
		int rc = read_next(in);
		if (rc < 0 && rc != IOGP_EEOF)
			in->have_next = 0;
		/* behind after the budget: the next pump goes on from here */
		if (!whole && ++n % 256 == 0 && mono_ns() - t0 > BUDGET_NS)
			break;
	}
	damage(in);
}

static long pump_replay(top_input *in)
{
	uint64_t now = mono_ns(), fed = in->fed;
	if (!in->paused && !in->at_end)
		in->pos_ns += (uint64_t)((double)(now - in->last_mono) * in->speed);
	in->last_mono = now;
	if (in->pos_ns >= in->last_ns) {
		in->pos_ns = in->last_ns;
		in->at_end = 1;
	}
	feed_until(in, in->pos_ns, 0);
	if (!in->have_next) {
		in->at_end = 1;
		in->pos_ns = in->last_ns;
	}
	iogp_model_tick(in->m, in->pos_ns);
	return (long)(in->fed - fed);
}

static void seek_abs(top_input *in, uint64_t t)
{
	if (t < in->first_ns)
		t = in->first_ns;
	if (t > in->last_ns)
		t = in->last_ns;
	if (t < in->pos_ns) {
		iogp_model *m = new_model(in);
		if (!m)
			return;
		if (in->rec) {   /* a recording cannot go back in time */
			iogp_recorder_close(in->rec);
			in->rec = NULL;
			snprintf(in->rec_err, sizeof(in->rec_err), "stopped by the seek back");
		}
		iogp_model_free(in->m);
		in->m = m;
		uint64_t from = t > in->first_ns + HISTORY_NS ? t - HISTORY_NS : in->first_ns;
		iogp_replay_seek(in->r, from);
		read_next(in);
	}
	feed_until(in, t, 1);
	in->pos_ns = t;
	in->at_end = t >= in->last_ns;
	in->last_mono = mono_ns();
	iogp_model_tick(in->m, in->pos_ns);
}

/* ---- public ------------------------------------------------------------ */

int input_open(top_input **out, const top_input_opts *o, char *err, size_t errlen)
{
	*out = NULL;
	top_input *in = calloc(1, sizeof(*in));
	if (!in) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	in->mo = (iogp_model_opts){
		.live = 1,
		.bin_ns = 1000000000ull,
		.ring_bins = 600,
		.window_slot_ns = 2000000000ull,
		.window_max_ns = 300000000000ull,
		.window_bytes = 65536,
	};
	in->m = new_model(in);
	if (!in->m) {
		snprintf(err, errlen, "out of memory");
		free(in);
		return -1;
	}
	int rc;
	if (o->replay) {
		in->mode = MODE_REPLAY;
		rc = open_replay(in, o->replay, err, errlen);
	} else {
		in->mode = o->demo ? MODE_DEMO : MODE_LIVE;
		rc = open_live(in, o, err, errlen);
	}
	if (rc < 0) {
		input_close(in);
		return rc;
	}
	*out = in;
	return 0;
}

void input_close(top_input *in)
{
	if (!in)
		return;
	if (in->demo) {
		demo_stop(in->demo);
		/* their final SNAPSHOTs and BYEs, for a recording that ends with
		 * every source gone */
		uint64_t end = mono_ns() + 300000000ull;
		while (in->rec && mono_ns() < end) {
			zmq_pollitem_t pi = { in->sub, 0, ZMQ_POLLIN, 0 };
			if (zmq_poll(&pi, 1, 50) > 0)
				pump_live(in);
		}
	}
	if (in->rec)
		iogp_recorder_close(in->rec);
	if (in->sub)
		zmq_close(in->sub);
	if (in->ctx)
		zmq_ctx_term(in->ctx);
	if (in->r)
		iogp_replay_close_reader(in->r);
	iogp_model_free(in->m);
	free(in->buf);
	free(in->next);
	free(in);
}

iogp_model *input_model(top_input *in)
{
	return in->m;
}

int input_wait(top_input *in, int timeout_ms)
{
	if (timeout_ms < 0)
		timeout_ms = 0;
	/* A terminal that went away (SSH dropped, tmux killed) reports an error
	 * or hang-up without input: say so, or the caller would spin. */
	if (in->sub) {
		zmq_pollitem_t pi[2] = { { in->sub, 0, ZMQ_POLLIN, 0 }, { NULL, 0, ZMQ_POLLIN, 0 } };
		if (zmq_poll(pi, 2, timeout_ms) < 0)
			return 0;
		if ((pi[1].revents & ZMQ_POLLERR) && !(pi[1].revents & ZMQ_POLLIN))
			return -1;
		return (pi[1].revents & ZMQ_POLLIN) != 0;
	}
	struct pollfd pf = { 0, POLLIN, 0 };
	if (poll(&pf, 1, timeout_ms) <= 0)
		return 0;
	if ((pf.revents & (POLLERR | POLLHUP | POLLNVAL)) && !(pf.revents & POLLIN))
		return -1;
	return (pf.revents & POLLIN) != 0;
}

long input_pump(top_input *in)
{
	long n;
	if (in->demo)
		demo_tick(in->demo);
	if (in->mode == MODE_REPLAY)
		n = pump_replay(in);
	else
		n = pump_live(in);
	if (in->rec) {
		uint64_t now = mono_ns();
		if (now >= in->rec_flush) {
			if (iogp_recorder_flush(in->rec) == IOGP_EIO) {
				snprintf(in->rec_err, sizeof(in->rec_err), "%.180s: %s", in->rec_path,
				         strerror(errno ? errno : EIO));
				iogp_recorder_abandon(in->rec);
				in->rec = NULL;
			}
			in->rec_flush = now + 1000000000ull;
		}
	}
	return n;
}

uint64_t input_now(top_input *in)
{
	return in->mode == MODE_REPLAY ? in->pos_ns : real_ns();
}

int input_next_due_ms(top_input *in)
{
	if (in->mode != MODE_REPLAY || in->paused || in->at_end || !in->have_next)
		return -1;
	if (in->next_recv <= in->pos_ns)
		return 0;
	double ms = (double)(in->next_recv - in->pos_ns) / 1e6 / in->speed;
	return ms > 1000 ? 1000 : (int)ms + 1;
}

void input_status(top_input *in, top_status *st)
{
	memset(st, 0, sizeof(*st));
	st->mode = in->mode;
	st->where = in->where;
	iogp_model_live lv;
	iogp_model_get_live(in->m, &lv);
	st->msgs_per_s = lv.msgs_per_s;
	iogp_model_stats ms;
	iogp_model_get_stats(in->m, &ms);
	st->messages = ms.messages;
	st->bad = ms.bad_messages;
	st->malformed = in->malformed;
	st->first_ns = in->first_ns;
	st->last_ns = in->last_ns;
	st->pos_ns = in->pos_ns;
	st->speed = in->speed;
	st->paused = in->paused;
	st->at_end = in->at_end;
	st->skipped_bytes = in->skipped_bytes;
	st->bad_frames = in->bad_frames;
	st->recording = in->rec != NULL;
	st->rec_path = in->rec_path;
	if (in->rec) {
		iogp_recorder_stats rs;
		iogp_recorder_get_stats(in->rec, &rs);
		st->rec_bytes = rs.file.file_bytes;
	}
	st->rec_error = in->rec_err[0] ? in->rec_err : NULL;
	if (in->demo)
		st->demo_workers = demo_workers(in->demo, &st->demo_restarts);
}

void input_pause(top_input *in, int paused)
{
	if (in->mode == MODE_REPLAY && !paused && in->at_end) {
		/* play again from the start */
		seek_abs(in, in->first_ns);
	}
	in->paused = paused;
	in->last_mono = mono_ns();
}

int input_paused(top_input *in)
{
	return in->paused;
}

void input_speed(top_input *in, int dir)
{
	if (dir > 0 && in->speed < 1024)
		in->speed *= 2;
	else if (dir < 0 && in->speed > 1.0 / 64)
		in->speed /= 2;
}

void input_seek(top_input *in, double delta_s)
{
	if (in->mode != MODE_REPLAY)
		return;
	double d = delta_s * 1e9;
	uint64_t t = in->pos_ns;
	if (d < 0)
		t = (double)t + d < (double)in->first_ns ? in->first_ns : t - (uint64_t)-d;
	else
		t += (uint64_t)d;
	seek_abs(in, t);
}

void input_seek_to(top_input *in, int end)
{
	if (in->mode == MODE_REPLAY)
		seek_abs(in, end ? in->last_ns : in->first_ns);
}

int input_record_start(top_input *in, const char *path, char *err, size_t errlen)
{
	if (in->rec) {
		snprintf(err, errlen, "already recording to %s", in->rec_path);
		return -1;
	}
	if (path)
		snprintf(in->rec_path, sizeof(in->rec_path), "%s", path);
	else {
		time_t t = time(NULL);
		struct tm tm;
		localtime_r(&t, &tm);
		strftime(in->rec_path, sizeof(in->rec_path), "iogram-%Y%m%d-%H%M%S.iogr", &tm);
	}
	iogp_recorder_opts ro = { .creator = "iogram-top " IOGRAM_VERSION };
	if (iogp_recorder_open(&in->rec, in->rec_path, &ro, err, errlen) < 0) {
		in->rec = NULL;
		return -1;
	}
	in->rec_err[0] = '\0';
	/* the recording starts with the state so far: every source's SNAPSHOT */
	uint64_t now = input_now(in);
	size_t ns = iogp_model_source_count(in->m);
	iogp_msg msg;
	iogp_msg_init(&msg);
	for (size_t i = 0; i < ns; i++)
		if (iogp_model_snapshot(in->m, i, 0, &msg) == 0)
			iogp_recorder_add_msg(in->rec, &msg, now);
	iogp_msg_free(&msg);
	in->rec_flush = mono_ns() + 1000000000ull;
	return 0;
}

void input_record_stop(top_input *in)
{
	if (!in->rec)
		return;
	if (iogp_recorder_close(in->rec) < 0)
		snprintf(in->rec_err, sizeof(in->rec_err), "%.180s: closing failed", in->rec_path);
	in->rec = NULL;
}

int input_recording(top_input *in)
{
	return in->rec != NULL;
}
