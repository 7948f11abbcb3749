/* check_feed.c - the feed both viewers pull from: a replay's span, play,
 * seek (a keyframe jump lands on the same state as reading every record),
 * recording while watching, live sockets with real ZeroMQ, the loopback
 * policy and waiting on a terminal descriptor, and a live stream taken
 * in gathered batches, not a wake-up per message. */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#include "iogp.h"
#include "iogp_feed.h"
#include "iogp_metrics.h"
#include "iogp_recorder.h"
#include "realistic.h"
#include "testutil.h"

#define T0 1700000000000000000ull
#define SEC 1000000000ull
#define NDELTA 1200   /* 20 minutes of one DELTA a second */

static char dir[256], file[512];

static iogp_model_opts model_opts(void)
{
	iogp_model_opts mo;
	memset(&mo, 0, sizeof(mo));
	mo.live = 1;
	mo.bin_ns = SEC;
	mo.ring_bins = 600;
	mo.window_slot_ns = 2 * SEC;
	mo.window_max_ns = 300 * SEC;
	mo.window_bytes = 65536;
	return mo;
}

static iogp_feed *new_feed_budget(int any, uint64_t budget_ns)
{
	iogp_feed_opts fo;
	memset(&fo, 0, sizeof(fo));
	fo.model = model_opts();
	fo.any_address = any;
	fo.budget_ns = budget_ns;
	fo.creator = "check_feed";
	iogp_feed *f = iogp_feed_new(&fo);
	ck_assert_ptr_nonnull(f);
	return f;
}

static iogp_feed *new_feed(int any)
{
	return new_feed_budget(any, 0);
}

/* Two sources, HELLO then a DELTA each per second, through the recorder
 * (which writes exact keyframes every 60 s). */
static void setup(void)
{
	tu_tmpdir(dir, sizeof(dir), "check_feed");
	snprintf(file, sizeof(file), "%s/job.iogr", dir);
	iogp_recorder_opts ro;
	memset(&ro, 0, sizeof(ro));
	ro.creator = "check_feed";
	ro.kf_min_ns = 60 * SEC;
	ro.kf_max_ns = 60 * SEC;
	ro.kf_ratio = 1;
	iogp_recorder *rec;
	char err[256];
	ck_assert_int_eq(iogp_recorder_open(&rec, file, &ro, err, sizeof(err)), 0);
	realistic *src[2] = { realistic_new(11), realistic_new(12) };
	iogp_msg m;
	iogp_msg_init(&m);
	for (int s = 0; s < 2; s++) {
		realistic_hello(src[s], &m);
		ck_assert_int_eq(iogp_recorder_add_msg(rec, &m, T0), 0);
	}
	for (uint64_t q = 1; q <= NDELTA; q++)
		for (int s = 0; s < 2; s++) {
			realistic_delta(src[s], &m, q);
			m.wall_ns = T0 + q * SEC;   /* as agents do: the windows are on the wall clock */
			ck_assert_int_eq(iogp_recorder_add_msg(rec, &m, T0 + q * SEC), 0);
		}
	iogp_msg_free(&m);
	iogp_recorder_stats st;
	iogp_recorder_get_stats(rec, &st);
	ck_assert_uint_ge(st.keyframes, 10);
	ck_assert_int_eq(iogp_recorder_close(rec), 0);
	realistic_free(src[0]);
	realistic_free(src[1]);
}

static void teardown(void)
{
	tu_rmdir_all(dir);
}

/* Ground truth: records in the file received in (from, to]. */
static long records_of(uint64_t from, uint64_t to, int keyframes)
{
	iogp_replay_reader *r;
	char err[256];
	ck_assert_int_eq(iogp_replay_open(&r, file, err, sizeof(err)), 0);
	iogp_replay_rec rec;
	long n = 0;
	while (iogp_replay_next(r, &rec) == 0)
		n += rec.recv_ns > from && rec.recv_ns <= to && (keyframes || !rec.keyframe);
	iogp_replay_close_reader(r);
	return n;
}

static long records_in(uint64_t from, uint64_t to)
{
	return records_of(from, to, 1);
}

static uint64_t total_of(iogp_feed *f, const char *metric)
{
	iogp_hist h;
	iogp_sel all = { .kind = IOGP_SEL_ALL };
	ck_assert_int_ge(iogp_model_hist(iogp_feed_model(f), metric, &all, &h), 0);
	uint64_t t = h.total;
	iogp_hist_free(&h);
	return t;
}

/* The requests of the last 300 s (the warm-up a seek feeds). */
static uint64_t window_total_of(iogp_feed *f, const char *metric)
{
	iogp_hist h;
	iogp_sel all = { .kind = IOGP_SEL_ALL };
	ck_assert_int_ge(iogp_model_hist_window(iogp_feed_model(f), metric, &all, 300 * SEC, &h), 0);
	uint64_t t = h.total;
	iogp_hist_free(&h);
	return t;
}

START_TEST(replay_span)
{
	iogp_feed *f = new_feed(0);
	char err[256] = "";
	ck_assert_int_eq(iogp_feed_open_replay(f, file, err, sizeof(err)), 0);
	iogp_feed_status st;
	iogp_feed_get_status(f, &st);
	ck_assert_int_eq(st.replay, 1);
	ck_assert_int_eq(st.live, 0);
	ck_assert_uint_eq(st.first_ns, T0);
	ck_assert_uint_eq(st.last_ns, T0 + NDELTA * SEC);
	ck_assert_uint_eq(st.pos_ns, T0);
	ck_assert_str_eq(st.where, file);
	ck_assert_str_eq(iogp_feed_path(f), file);
	/* the model starts at the first record: both HELLOs */
	ck_assert_uint_eq(iogp_model_source_count(iogp_feed_model(f)), 2);
	uint64_t kf[64];
	size_t nkf = iogp_feed_keyframes(f, kf, 64);
	ck_assert_uint_ge(nkf, 10);
	for (size_t i = 1; i < nkf && i < 64; i++)
		ck_assert_uint_gt(kf[i], kf[i - 1]);
	/* a second source on the same feed is refused */
	ck_assert_int_eq(iogp_feed_open_replay(f, file, err, sizeof(err)), IOGP_EINVAL);
	ck_assert_int_eq(iogp_feed_listen(f, "tcp://127.0.0.1:*", err, sizeof(err)), IOGP_EINVAL);
	iogp_feed_free(f);
}
END_TEST

/* Every way of arriving at a time gives the state of reading every record
 * up to it: straight there (a keyframe jump), in small steps, and back. */
START_TEST(seek_same_state)
{
	const char *metric = IOGP_M_READ_SIZE;
	iogp_feed *a = new_feed(0), *b = new_feed(0);
	char err[256];
	ck_assert_int_eq(iogp_feed_open_replay(a, file, err, sizeof(err)), 0);
	ck_assert_int_eq(iogp_feed_open_replay(b, file, err, sizeof(err)), 0);
	uint64_t t = T0 + 1000 * SEC;
	for (uint64_t s = T0; s <= t; s += 7 * SEC)
		ck_assert_int_eq(iogp_feed_seek(a, s), 0);
	ck_assert_int_eq(iogp_feed_seek(a, t), 0);
	ck_assert_int_eq(iogp_feed_seek(b, t), 0);   /* far: from a keyframe */
	uint64_t want = total_of(a, metric);
	ck_assert_uint_gt(want, 0);
	ck_assert_uint_eq(total_of(b, metric), want);
	iogp_model_stats sa, sb;
	iogp_model_get_stats(iogp_feed_model(a), &sa);
	iogp_model_get_stats(iogp_feed_model(b), &sb);
	ck_assert_uint_eq(sa.messages, (uint64_t)records_in(0, t));
	ck_assert_uint_lt(sb.messages, sa.messages);   /* it did skip */
	/* back to 500 s: the state of 500 s, whatever came after */
	ck_assert_int_eq(iogp_feed_seek(b, T0 + 500 * SEC), 0);
	iogp_feed *c = new_feed(0);
	ck_assert_int_eq(iogp_feed_open_replay(c, file, err, sizeof(err)), 0);
	for (uint64_t s = T0; s <= T0 + 500 * SEC; s += 50 * SEC)
		iogp_feed_seek(c, s);
	ck_assert_uint_eq(total_of(b, metric), total_of(c, metric));
	ck_assert_uint_lt(total_of(b, metric), want);
	/* clamped to the span */
	ck_assert_int_eq(iogp_feed_seek(b, 0), 0);
	ck_assert_uint_eq(iogp_feed_now(b), T0);
	ck_assert_int_eq(iogp_feed_seek_by(b, 1e9), 0);
	ck_assert_uint_eq(iogp_feed_now(b), T0 + NDELTA * SEC);
	iogp_feed_status st;
	iogp_feed_get_status(b, &st);
	ck_assert_int_eq(st.at_end, 1);
	iogp_feed_free(a);
	iogp_feed_free(b);
	iogp_feed_free(c);
}
END_TEST

/* Pumps until the seek under way arrived (at most 100,000); how many,
 * checking the progress never goes back and the clock follows the records
 * (*midway: both were seen between start and target). */
static long finish_seek(iogp_feed *f, uint64_t to, int *midway)
{
	long pumps = 0;
	double last = -1;
	uint64_t t, was = iogp_feed_now(f), first = was;
	double done;
	int mid_done = 0, mid_clock = 0;
	while (iogp_feed_seeking(f, &t, &done) && pumps < 100000) {
		ck_assert_uint_eq(t, to);
		ck_assert(done >= last && done >= 0 && done <= 1);
		ck_assert_uint_ge(iogp_feed_now(f), was);
		ck_assert_uint_le(iogp_feed_now(f), to);
		ck_assert_int_eq(iogp_feed_next_due_ms(f), 0);   /* paused, yet due now */
		mid_done |= done > 0 && done < 1;
		mid_clock |= iogp_feed_now(f) > first && iogp_feed_now(f) < to;
		last = done;
		was = iogp_feed_now(f);
		iogp_feed_pump(f);
		pumps++;
	}
	ck_assert_int_eq(iogp_feed_seeking(f, NULL, NULL), 0);
	ck_assert_uint_eq(iogp_feed_now(f), to);
	if (midway)
		*midway = mid_done && mid_clock;
	return pumps;
}

/* A viewer's seek goes a pump at a time (a budget each; here the least, a
 * pump takes 256 records) and arrives at the state a whole seek gives:
 * forward from a keyframe, back (start over), and a seek that changes its
 * mind on the way. */
START_TEST(seek_a_pump_at_a_time)
{
	const char *metric = IOGP_M_READ_SIZE;
	char err[256];
	iogp_feed *w = new_feed(0), *p = new_feed_budget(0, 1);
	ck_assert_int_eq(iogp_feed_open_replay(w, file, err, sizeof(err)), 0);
	ck_assert_int_eq(iogp_feed_open_replay(p, file, err, sizeof(err)), 0);
	iogp_feed_pause(w, 1);
	iogp_feed_pause(p, 1);
	uint64_t t = T0 + 1000 * SEC;
	ck_assert_int_eq(iogp_feed_seek(w, t), 0);
	uint64_t gen = iogp_feed_generation(p);
	ck_assert_int_eq(iogp_feed_seek_start(p, t), 0);
	ck_assert_uint_gt(iogp_feed_generation(p), gen);   /* a frame shows it began */
	iogp_feed_status st;
	iogp_feed_get_status(p, &st);
	ck_assert_int_eq(st.seeking, 1);
	ck_assert_uint_eq(st.seek_to_ns, t);
	ck_assert_double_lt(st.seek_done, 1);
	/* ~300 s of warm-up of two sources from the keyframe: 600 records */
	int midway = 0;
	ck_assert_int_gt(finish_seek(p, t, &midway), 1);
	ck_assert_msg(midway, "neither progress nor the clock were seen on the way");
	iogp_feed_get_status(p, &st);
	ck_assert_int_eq(st.seeking, 0);
	iogp_model_stats a, b;
	iogp_model_get_stats(iogp_feed_model(w), &a);
	iogp_model_get_stats(iogp_feed_model(p), &b);
	ck_assert_uint_eq(b.messages, a.messages);
	ck_assert_uint_eq(total_of(p, metric), total_of(w, metric));
	/* back 600 s: starts over */
	ck_assert_int_eq(iogp_feed_seek_by(w, -600), 0);
	ck_assert_int_eq(iogp_feed_seek_by_start(p, -600), 0);
	finish_seek(p, T0 + 400 * SEC, NULL);
	ck_assert_uint_eq(total_of(p, metric), total_of(w, metric));
	/* on the way to 1100 s, another seek: +50 s from that target (1150),
	 * then back to 700 s while the model is still before it, then behind
	 * where it has read */
	ck_assert_int_eq(iogp_feed_seek_start(p, T0 + 1100 * SEC), 0);
	ck_assert_int_eq(iogp_feed_seek_by_start(p, 50), 0);
	uint64_t to;
	ck_assert_int_eq(iogp_feed_seeking(p, &to, NULL), 1);
	ck_assert_uint_eq(to, T0 + 1150 * SEC);
	iogp_feed_pump(p);
	ck_assert_int_eq(iogp_feed_seek_start(p, T0 + 420 * SEC), 0);
	finish_seek(p, T0 + 420 * SEC, NULL);
	ck_assert_int_eq(iogp_feed_seek(w, T0 + 420 * SEC), 0);
	ck_assert_uint_eq(total_of(p, metric), total_of(w, metric));
	iogp_model_get_stats(iogp_feed_model(p), &b);
	ck_assert_uint_gt(b.messages, 0);
	/* moved back while a seek that started over reads its warm-up: the
	 * model starts over again, or the target would lack history (a whole
	 * seek's window holds 300 s) */
	ck_assert_int_eq(iogp_feed_seek(w, T0 + 1100 * SEC), 0);
	ck_assert_int_eq(iogp_feed_seek_start(p, T0 + 1200 * SEC), 0);   /* its first pump's worth read */
	ck_assert_int_eq(iogp_feed_seeking(p, NULL, NULL), 1);
	ck_assert_uint_gt(iogp_feed_now(p), T0 + 800 * SEC);   /* read past 1100 s - 300 s */
	ck_assert_uint_lt(iogp_feed_now(p), T0 + 1100 * SEC);
	ck_assert_int_eq(iogp_feed_seek_start(p, T0 + 1100 * SEC), 0);
	finish_seek(p, T0 + 1100 * SEC, NULL);
	const char *lat = IOGP_M_READ_LATENCY;   /* the one with a window here */
	ck_assert_uint_gt(window_total_of(w, lat), 0);
	ck_assert_uint_eq(window_total_of(p, lat), window_total_of(w, lat));
	ck_assert_uint_eq(total_of(p, metric), total_of(w, metric));
	/* a seek under way ends at the replay's end: playing on from there */
	ck_assert_int_eq(iogp_feed_seek_start(p, UINT64_MAX), 0);
	finish_seek(p, T0 + NDELTA * SEC, NULL);
	iogp_feed_get_status(p, &st);
	ck_assert_int_eq(st.at_end, 1);
	/* back from the end: not at the end meanwhile, so unpausing during the
	 * seek plays on from its target, not again from the start */
	ck_assert_int_eq(iogp_feed_seek_start(p, T0 + 600 * SEC), 0);
	iogp_feed_get_status(p, &st);
	ck_assert_int_eq(st.seeking, 1);
	ck_assert_int_eq(st.at_end, 0);
	iogp_feed_pause(p, 0);
	ck_assert_int_eq(iogp_feed_seeking(p, &to, NULL), 1);
	ck_assert_uint_eq(to, T0 + 600 * SEC);
	iogp_feed_pause(p, 1);
	finish_seek(p, T0 + 600 * SEC, NULL);
	iogp_feed_free(w);
	iogp_feed_free(p);
}
END_TEST

START_TEST(play_speed_pause)
{
	iogp_feed *f = new_feed(0);
	char err[256];
	ck_assert_int_eq(iogp_feed_open_replay(f, file, err, sizeof(err)), 0);
	ck_assert_int_ge(iogp_feed_next_due_ms(f), 0);
	iogp_feed_pause(f, 1);
	ck_assert_int_eq(iogp_feed_next_due_ms(f), -1);
	tu_sleep_ms(50);
	ck_assert_int_eq(iogp_feed_pump(f), 0);
	ck_assert_uint_eq(iogp_feed_now(f), T0);   /* paused: time stands */
	iogp_feed_pause(f, 0);
	for (int i = 0; i < 10; i++)
		iogp_feed_speed(f, +1);   /* 1024 x: 20 minutes in ~1.2 s */
	iogp_feed_status st;
	uint64_t gen = iogp_feed_generation(f);
	double end = tu_now() + 30;
	do {
		iogp_feed_wait(f, -1, 20);
		iogp_feed_pump(f);
		iogp_feed_get_status(f, &st);
	} while (!st.at_end && tu_now() < end);
	ck_assert_int_eq(st.at_end, 1);
	ck_assert_double_eq(st.speed, 1024);
	ck_assert_uint_gt(iogp_feed_generation(f), gen);
	ck_assert_uint_eq(st.messages, (uint64_t)records_in(0, UINT64_MAX));   /* all of it, once */
	ck_assert_int_eq(iogp_feed_next_due_ms(f), -1);
	/* unpausing at the end plays again from the start */
	iogp_feed_pause(f, 1);
	iogp_feed_pause(f, 0);
	ck_assert_uint_eq(iogp_feed_now(f), T0);
	for (int i = 0; i < 40; i++)
		iogp_feed_speed(f, -1);
	iogp_feed_get_status(f, &st);
	ck_assert_double_eq(st.speed, 1.0 / 64);
	iogp_feed_free(f);
}
END_TEST

static long count_records(const char *path, uint64_t *first, int *first_is_snapshot)
{
	iogp_replay_reader *r;
	char err[256];
	ck_assert_int_eq(iogp_replay_open(&r, path, err, sizeof(err)), 0);
	iogp_replay_rec rec;
	long n = 0;
	/* what was applied, without the keyframes the recording adds itself */
	while (iogp_replay_next(r, &rec) == 0) {
		if (rec.keyframe)
			continue;
		if (!n++) {
			*first = rec.recv_ns;
			iogp_kind kind;
			uint16_t flags;
			uint64_t source, seq;
			ck_assert_int_eq(iogp_msg_peek(rec.payload, rec.len, &kind, &flags, &source, &seq), 0);
			*first_is_snapshot = kind == IOGP_SNAPSHOT;
		}
	}
	iogp_replay_close_reader(r);
	return n;
}

START_TEST(record_while_watching)
{
	iogp_feed *f = new_feed(0);
	char err[256], out[600];
	ck_assert_int_eq(iogp_feed_open_replay(f, file, err, sizeof(err)), 0);
	ck_assert_int_eq(iogp_feed_seek(f, T0 + 100 * SEC), 0);
	snprintf(out, sizeof(out), "%s/clip.iogr", dir);
	ck_assert_int_eq(iogp_feed_record_start(f, out, err, sizeof(err)), 0);
	ck_assert_str_eq(iogp_feed_recording(f), out);
	ck_assert_int_eq(iogp_feed_record_start(f, out, err, sizeof(err)), IOGP_EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "already recording"));
	for (uint64_t s = 101; s <= 150; s++)
		ck_assert_int_eq(iogp_feed_seek(f, T0 + s * SEC), 0);
	ck_assert_int_eq(iogp_feed_record_stop(f, err, sizeof(err)), 0);
	ck_assert_ptr_null(iogp_feed_recording(f));
	uint64_t first = 0;
	int snap = 0;
	/* the state so far (one SNAPSHOT per source), then 50 s of two sources;
	 * the watched file's keyframes hold the state the recorder has, so it
	 * leaves them out (its own keyframes hold it) */
	ck_assert_int_eq(count_records(out, &first, &snap), 2 + records_of(T0 + 100 * SEC, T0 + 150 * SEC, 0));
	ck_assert_int_gt(records_in(T0 + 100 * SEC, T0 + 150 * SEC), records_of(T0 + 100 * SEC, T0 + 150 * SEC, 0));
	ck_assert_int_eq(snap, 1);
	ck_assert_uint_eq(first, T0 + 100 * SEC);
	/* a seek that starts over stops the recording and says why */
	snprintf(out, sizeof(out), "%s/clip2.iogr", dir);
	ck_assert_int_eq(iogp_feed_record_start(f, out, err, sizeof(err)), 0);
	ck_assert_int_eq(iogp_feed_seek(f, T0 + 10 * SEC), 0);
	ck_assert_ptr_null(iogp_feed_recording(f));
	iogp_feed_status st;
	iogp_feed_get_status(f, &st);
	ck_assert_ptr_nonnull(st.rec_error);
	ck_assert_ptr_nonnull(strstr(st.rec_error, "seek"));
	ck_assert_int_eq(count_records(out, &first, &snap), 2);
	/* an existing file is never replaced */
	ck_assert_int_lt(iogp_feed_record_start(f, out, err, sizeof(err)), 0);
	iogp_feed_free(f);
}
END_TEST

START_TEST(bad_files)
{
	iogp_feed *f = new_feed(0);
	char err[256] = "", path[600];
	snprintf(path, sizeof(path), "%s/not-a-replay", dir);
	FILE *o = fopen(path, "w");
	ck_assert_ptr_nonnull(o);
	fputs("hello, I am not a replay file\n", o);
	fclose(o);
	ck_assert_int_lt(iogp_feed_open_replay(f, path, err, sizeof(err)), 0);
	ck_assert_uint_gt(strlen(err), 0);
	iogp_feed_free(f);
	f = new_feed(0);
	ck_assert_int_lt(iogp_feed_open_replay(f, dir, err, sizeof(err)), 0);
	iogp_feed_free(f);
	f = new_feed(0);
	snprintf(path, sizeof(path), "%s/missing.iogr", dir);
	ck_assert_int_lt(iogp_feed_open_replay(f, path, err, sizeof(err)), 0);
	ck_assert_ptr_nonnull(strstr(err, "missing.iogr"));
	/* replay control on a feed with no replay does nothing */
	ck_assert_int_eq(iogp_feed_seek(f, T0), IOGP_EINVAL);
	ck_assert_int_eq(iogp_feed_next_due_ms(f), -1);
	ck_assert_int_eq(iogp_feed_pump(f), 0);
	iogp_feed_free(f);
}
END_TEST

static void send_msg(void *pub, const iogp_msg *m)
{
	static uint8_t buf[1 << 20];
	char topic[64];
	long n = iogp_msg_encode(m, buf, sizeof(buf));
	int tl = iogp_topic(topic, sizeof(topic), m->kind, m->source);
	ck_assert_int_gt(n, 0);
	ck_assert_int_gt(tl, 0);
	zmq_send(pub, topic, (size_t)tl, ZMQ_SNDMORE);
	zmq_send(pub, buf, (size_t)n, 0);
}

START_TEST(live_listen)
{
	iogp_feed *f = new_feed(0);
	char err[256], ep[256];
	ck_assert_int_eq(iogp_feed_listen(f, "tcp://127.0.0.1:*", err, sizeof(err)), 0);
	ck_assert_int_eq(iogp_feed_last_endpoint(f, ep, sizeof(ep)), 0);
	ck_assert_ptr_null(strchr(ep, '*'));
	iogp_feed_status st;
	iogp_feed_get_status(f, &st);
	ck_assert_str_eq(st.where, ep);   /* the port bound, not the wildcard */
	ck_assert_int_eq(iogp_feed_open_replay(f, file, err, sizeof(err)), IOGP_EINVAL);
	void *ctx = zmq_ctx_new(), *pub = zmq_socket(ctx, ZMQ_PUB);
	ck_assert_int_eq(zmq_connect(pub, ep), 0);
	realistic *src = realistic_new(5);
	iogp_msg m;
	iogp_msg_init(&m);
	/* a one-frame message is malformed: counted, not applied */
	double end = tu_now() + 20;
	uint64_t q = 0;
	do {
		zmq_send(pub, "iog1/junk", 9, 0);
		realistic_hello(src, &m);
		send_msg(pub, &m);
		realistic_delta(src, &m, ++q);
		send_msg(pub, &m);
		iogp_feed_wait(f, -1, 50);
		iogp_feed_pump(f);
		iogp_feed_get_status(f, &st);
	} while ((st.messages < 4 || !st.malformed) && tu_now() < end);
	ck_assert_uint_ge(st.messages, 4);
	ck_assert_uint_ge(st.malformed, 1);
	ck_assert_int_eq(st.live, 1);
	ck_assert_uint_eq(iogp_model_source_count(iogp_feed_model(f)), 1);
	/* recording a live stream: starts with the state so far */
	char out[600];
	snprintf(out, sizeof(out), "%s/live.iogr", dir);
	ck_assert_int_eq(iogp_feed_record_start(f, out, err, sizeof(err)), 0);
	uint64_t want = 0;
	end = tu_now() + 20;
	do {
		realistic_delta(src, &m, ++q);
		send_msg(pub, &m);
		iogp_feed_wait(f, -1, 50);
		want += (uint64_t)iogp_feed_pump(f);
	} while (want < 3 && tu_now() < end);
	ck_assert_int_eq(iogp_feed_record_stop(f, err, sizeof(err)), 0);
	uint64_t first;
	int snap;
	ck_assert_int_eq(count_records(out, &first, &snap), 1 + (long)want);
	ck_assert_int_eq(snap, 1);
	iogp_msg_free(&m);
	realistic_free(src);
	zmq_close(pub);
	zmq_ctx_term(ctx);
	iogp_feed_free(f);
}
END_TEST

START_TEST(live_connect_events)
{
	iogp_feed *f = new_feed(0);
	char err[256], ev[1024] = "", ep[64];
	snprintf(ep, sizeof(ep), "tcp://127.0.0.1:%d", tu_free_port());
	ck_assert_int_eq(iogp_feed_connect(f, ep, err, sizeof(err)), 0);
	iogp_feed_status st;
	iogp_feed_get_status(f, &st);
	ck_assert_ptr_nonnull(strstr(st.where, ep));
	ck_assert_int_eq(st.where[0], '<');
	/* nobody there: the feed says so, and keeps retrying */
	double end = tu_now() + 20;
	while (!strstr(ev, "retrying") && tu_now() < end) {
		iogp_feed_wait(f, -1, 100);
		iogp_feed_pump(f);
		size_t l = strlen(ev);
		iogp_feed_take_events(f, ev + l, sizeof(ev) - l);
	}
	ck_assert_ptr_nonnull(strstr(ev, ep));
	ck_assert_ptr_nonnull(strstr(ev, "not reachable, retrying"));
	iogp_feed_free(f);
}
END_TEST

START_TEST(loopback_policy)
{
	iogp_feed *f = new_feed(0);
	char err[512] = "", ev[1024] = "";
	ck_assert_int_eq(iogp_feed_listen(f, "tcp://0.0.0.0:*", err, sizeof(err)), IOGP_EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "not a loopback endpoint"));
	ck_assert_ptr_nonnull(strstr(err, "--any-address"));
	ck_assert_int_eq(iogp_feed_is_live(f), 0);   /* refused before any socket */
	iogp_feed_free(f);
	/* with consent and without a key: allowed, with a warning */
	setenv("IOGRAM_KEYS", "none", 1);
	f = new_feed(1);
	ck_assert_int_eq(iogp_feed_listen(f, "tcp://0.0.0.0:*", err, sizeof(err)), 0);
	ck_assert_int_gt(iogp_feed_take_events(f, ev, sizeof(ev)), 0);
	ck_assert_ptr_nonnull(strstr(ev, "without CURVE"));
	ck_assert_int_eq(iogp_feed_take_events(f, ev, sizeof(ev)), 0);   /* taken */
	iogp_feed_free(f);
	unsetenv("IOGRAM_KEYS");
	/* loopback needs no consent */
	f = new_feed(0);
	ck_assert_int_eq(iogp_feed_listen(f, "tcp://127.0.0.1:*", err, sizeof(err)), 0);
	iogp_feed_free(f);
}
END_TEST

/* The terminal's descriptor: readable, quiet, or gone (for live and replay
 * feeds, which wait through different polls). */
START_TEST(wait_on_fd)
{
	for (int live = 0; live < 2; live++) {
		iogp_feed *f = new_feed(0);
		char err[256];
		if (live)
			ck_assert_int_eq(iogp_feed_listen(f, "tcp://127.0.0.1:*", err, sizeof(err)), 0);
		else
			ck_assert_int_eq(iogp_feed_open_replay(f, file, err, sizeof(err)), 0);
		int p[2];
		ck_assert_int_eq(pipe(p), 0);
		ck_assert_int_eq(iogp_feed_wait(f, p[0], 10), 0);
		ck_assert_int_eq(write(p[1], "k", 1), 1);
		ck_assert_int_eq(iogp_feed_wait(f, p[0], 1000), 1);
		char c;
		ck_assert_int_eq(read(p[0], &c, 1), 1);
		close(p[1]);
		ck_assert_int_eq(iogp_feed_wait(f, p[0], 1000), -1);
		close(p[0]);
		ck_assert_int_eq(iogp_feed_wait(f, -1, 1), 0);
		iogp_feed_free(f);
	}
}
END_TEST


/* ---- a stream gathered: a wake-up per batch, not per message ---- */

#define GATHER_MSGS 6000   /* 6 a millisecond for about a second */

struct sender {
	void *pub;
	const uint8_t *hello, *delta;
	size_t hlen, dlen;
	long sent;
};

static void *send_stream(void *arg)
{
	struct sender *s = arg;
	zmq_send(s->pub, "iog1/h", 6, ZMQ_SNDMORE);
	zmq_send(s->pub, s->hello, s->hlen, 0);
	for (long i = 0; i < GATHER_MSGS; i++) {
		/* the same DELTA again: a gap the model counts, still applied */
		zmq_send(s->pub, "iog1/d", 6, ZMQ_SNDMORE);
		zmq_send(s->pub, s->delta, s->dlen, 0);
		s->sent++;
		if (i % 6 == 5)
			usleep(1000);
	}
	return NULL;
}

/* Messages streaming in while the loop waits and pumps as iogram-top's
 * does: every one applied, in far fewer pumps than messages (at most one
 * each GATHER_NS, 10 ms, plus the ones a full budget cut short: at 50,000
 * sources the loop woke 2,000-2,350 times a second for ~20 messages each),
 * and a key on the terminal is seen after such a pump. */
START_TEST(live_gathers)
{
	iogp_feed *f = new_feed(0);
	char err[256], ep[256];
	ck_assert_int_eq(iogp_feed_listen(f, "tcp://127.0.0.1:*", err, sizeof(err)), 0);
	ck_assert_int_eq(iogp_feed_last_endpoint(f, ep, sizeof(ep)), 0);
	void *ctx = zmq_ctx_new();
	/* a publisher that sends once the subscription came (the feed's
	 * socket takes its new peer in as the feed waits) */
	struct sender s = { .pub = zmq_socket(ctx, ZMQ_XPUB) };
	int hwm = 100000, zero = 0;
	zmq_setsockopt(s.pub, ZMQ_SNDHWM, &hwm, sizeof(hwm));
	zmq_setsockopt(s.pub, ZMQ_LINGER, &zero, sizeof(zero));
	ck_assert_int_eq(zmq_connect(s.pub, ep), 0);
	for (double e0 = tu_now() + 20;;) {
		uint8_t sub[64];
		iogp_feed_wait(f, -1, 10);
		iogp_feed_pump(f);
		if (zmq_recv(s.pub, sub, sizeof(sub), ZMQ_DONTWAIT) > 0 && sub[0] == 1)
			break;
		ck_assert_msg(tu_now() < e0, "no subscription within 20 s");
	}
	realistic *src = realistic_new(5);
	iogp_msg m;
	iogp_msg_init(&m);
	static uint8_t hb[1 << 16], db[1 << 16];
	realistic_hello(src, &m);
	long hl = iogp_msg_encode(&m, hb, sizeof(hb));
	realistic_delta(src, &m, 1);
	long dl = iogp_msg_encode(&m, db, sizeof(db));
	ck_assert(hl > 0 && dl > 0);
	s.hello = hb;
	s.hlen = (size_t)hl;
	s.delta = db;
	s.dlen = (size_t)dl;
	pthread_t th;
	double t0 = tu_now(), end = t0 + 60;
	ck_assert_int_eq(pthread_create(&th, NULL, send_stream, &s), 0);
	long got = 0, pumps = 0, n;
	while (got < 1 + GATHER_MSGS && tu_now() < end) {
		iogp_feed_wait(f, -1, 1000);
		if ((n = iogp_feed_pump(f)) > 0) {
			got += n;
			pumps++;
		}
	}
	double secs = tu_now() - t0;
	pthread_join(th, NULL);
	iogp_feed_status st;
	iogp_feed_get_status(f, &st);
	ck_assert_int_eq(got, 1 + GATHER_MSGS);
	ck_assert_uint_eq(st.malformed, 0);
	ck_assert_msg(pumps <= (long)(secs * 100) + 2, "%ld pumps took %ld messages in %.2f s", pumps,
	              got, secs);
	/* a key on the terminal after a pump that took messages: the wait
	 * that follows sees it (the gather waits on the terminal alone) */
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	zmq_send(s.pub, "iog1/d", 6, ZMQ_SNDMORE);
	zmq_send(s.pub, db, (size_t)dl, 0);
	for (double e2 = tu_now() + 20; iogp_feed_pump(f) == 0 && tu_now() < e2;)
		iogp_feed_wait(f, -1, 50);
	ck_assert_int_eq(write(p[1], "k", 1), 1);
	ck_assert_int_eq(iogp_feed_wait(f, p[0], 1000), 1);
	close(p[0]);
	close(p[1]);
	iogp_msg_free(&m);
	realistic_free(src);
	zmq_close(s.pub);
	zmq_ctx_term(ctx);
	iogp_feed_free(f);
}
END_TEST

int main(void)
{
	const tu_case cases[] = {
		{ "replay_span", replay_span },
		{ "seek_same_state", seek_same_state },
		{ "play_speed_pause", play_speed_pause },
		{ "record_while_watching", record_while_watching },
		{ "bad_files", bad_files }, { "seek_a_pump_at_a_time", seek_a_pump_at_a_time },
		{ "live_listen", live_listen },
		{ "live_connect_events", live_connect_events },
		{ "loopback_policy", loopback_policy },
		{ "wait_on_fd", wait_on_fd },
		{ "live_gathers", live_gathers },
	};
	return tu_run_suite("feed", cases, sizeof(cases) / sizeof(cases[0]), setup, teardown, 120);
}
