/* iogp_feed.h - where a viewer's or the command's messages come from: live
 * SUB sockets or a replay file played at a speed with pause and seek, all
 * into one stream model, optionally recorded while watching (not installed).
 *
 * One feed is either live (any number of listen/connect endpoints) or a
 * replay; it is driven by its owner's loop: wait, pump, draw. Nothing in it
 * blocks longer than the wait asked for or the pump's time budget. */
#ifndef IOGP_FEED_H
#define IOGP_FEED_H

#include <stddef.h>
#include <stdint.h>

#include "iogp_model.h"

typedef struct iogp_feed iogp_feed;

typedef struct iogp_feed_opts {
	iogp_model_opts model;        /* the model live streams feed */
	iogp_model_opts replay_model; /* the model a replay feeds; all zero = model */
	int any_address;              /* 1: listening beyond loopback is allowed */
	const char *creator;          /* written into recordings ("iogram-top 0.1.0") */
	uint64_t budget_ns;           /* one pump's time budget; 0 = 40 ms */
	uint64_t warmup_ns;           /* history fed before a seek target; 0 = 300 s */
	uint64_t scan_limit;          /* replays up to this size are scanned whole at
	                               * open (exact span, damage found); 0 = 64 MiB */
	int hwm;                      /* receive high-water mark; 0 = 100000 */
} iogp_feed_opts;

typedef struct iogp_feed_status {
	int live, replay;
	const char *where;       /* endpoints ("ep ep <ep": listened, connected) or the file */
	double msgs_per_s;       /* over the last few seconds */
	uint64_t messages, bad, malformed;
	/* replay */
	uint64_t first_ns, last_ns, pos_ns;
	double speed;
	int paused, at_end;
	uint64_t skipped_bytes, bad_frames;
	int seeking;             /* a seek under way (iogp_feed_seek_start): */
	uint64_t seek_to_ns;     /* its target */
	double seek_done;        /* and the share of its records read, 0..1 */
	/* recording */
	int recording;
	const char *rec_path;
	uint64_t rec_bytes;
	const char *rec_error;   /* why the last recording stopped by itself, or NULL */
} iogp_feed_status;

iogp_feed *iogp_feed_new(const iogp_feed_opts *o);
void iogp_feed_free(iogp_feed *f);

/* ---- sources: either a replay file or live endpoints ---- */
/* Open a replay file; its span is known at once, the model starts at the
 * first record, playing at speed 1. Fails on a live feed. */
int iogp_feed_open_replay(iogp_feed *f, const char *path, char *err, size_t errlen);
/* Bind (a viewer listens; agents connect) or connect to an endpoint. A
 * non-loopback bind needs opts.any_address; without a CURVE key it is
 * allowed with a warning in the events. Fails on a replay feed. */
int iogp_feed_listen(iogp_feed *f, const char *ep, char *err, size_t errlen);
int iogp_feed_connect(iogp_feed *f, const char *ep, char *err, size_t errlen);
int iogp_feed_is_live(const iogp_feed *f);
int iogp_feed_is_replay(const iogp_feed *f);
/* The endpoint last bound ("tcp://127.0.0.1:*" resolved to its port). */
int iogp_feed_last_endpoint(iogp_feed *f, char *buf, size_t len);
/* What the status line says the feed reads ("demo tcp://..."). */
void iogp_feed_set_where(iogp_feed *f, const char *where);

/* ---- the loop ---- */
/* Wait up to timeout_ms for messages or input on fd (-1: none): 1 when fd
 * is readable, 0 otherwise, -1 when fd hung up or failed without input.
 * Live, within 10 ms of a pump that took messages and emptied the queue,
 * only input (or the timeout) ends the wait: messages gather meanwhile,
 * for one pump, not a wake-up each. */
int iogp_feed_wait(iogp_feed *f, int fd, int timeout_ms);
/* Apply what has arrived (live) or is due (replay), within the time budget,
 * then tick the model's clock. Flushes a recording once a second. Returns
 * the number of messages applied. */
long iogp_feed_pump(iogp_feed *f);
iogp_model *iogp_feed_model(const iogp_feed *f);
/* Bumped whenever the model changed (messages applied, seek, reopen). */
uint64_t iogp_feed_generation(const iogp_feed *f);
/* The time panels are drawn at: now (live) or the replay position. */
uint64_t iogp_feed_now(const iogp_feed *f);
void iogp_feed_get_status(const iogp_feed *f, iogp_feed_status *st);
/* Socket events since the last call ("ep: not reachable, retrying"), one
 * per line, and warnings; returns the length, 0 when none. */
int iogp_feed_take_events(iogp_feed *f, char *buf, size_t len);

/* ---- replay control ---- */
void iogp_feed_pause(iogp_feed *f, int paused);   /* unpausing at the end plays again */
int iogp_feed_paused(const iogp_feed *f);
/* The replay's speed, and whether it is paused or at its end, in constant
 * time (iogp_feed_get_status gathers more: take it once a frame). */
void iogp_feed_play_state(const iogp_feed *f, double *speed, int *paused, int *at_end);
void iogp_feed_speed(iogp_feed *f, int dir);      /* x2 (dir > 0) or /2, 1/64..1024 */
/* ms until the next replay record is due; -1 when nothing is scheduled. */
int iogp_feed_next_due_ms(const iogp_feed *f);
/* Move to wall-clock ns t, clamped to the span: forward by reading on (from
 * a keyframe when one lies far enough ahead), backward from the keyframe
 * before t minus the warm-up. A seek that starts over stops a recording. */
int iogp_feed_seek(iogp_feed *f, uint64_t t_ns);
int iogp_feed_seek_by(iogp_feed *f, double delta_s);
/* The same a pump at a time, for a viewer's keys: the seek begins (a
 * start-over happens at once) and each pump then reads on for its budget
 * (a second of 5,000 sources is ~5,000 records; 300 s of warm-up at that
 * scale takes seconds), the clock following the records read, until it
 * shows the target. Another seek meanwhile reads on from where the model
 * is (or starts over when that is behind it); seek_by_start moves from the
 * target of the seek under way. */
int iogp_feed_seek_start(iogp_feed *f, uint64_t t_ns);
int iogp_feed_seek_by_start(iogp_feed *f, double delta_s);
/* 1 while a seek is under way: its target and the share of its records
 * read (0..1, by receive time); 0 otherwise. */
int iogp_feed_seeking(const iogp_feed *f, uint64_t *to_ns, double *done);
/* Keyframe times (wall-clock ns); returns how many there are. */
size_t iogp_feed_keyframes(const iogp_feed *f, uint64_t *t, size_t max);
const char *iogp_feed_path(const iogp_feed *f);   /* the replay file, or NULL */

/* ---- recording while watching ---- */
/* Start writing every applied message to path (NULL: a timestamped name in
 * the current directory), beginning with every source's SNAPSHOT. */
int iogp_feed_record_start(iogp_feed *f, const char *path, char *err, size_t errlen);
int iogp_feed_record_stop(iogp_feed *f, char *err, size_t errlen);
const char *iogp_feed_recording(const iogp_feed *f);   /* path, or NULL */

#endif
