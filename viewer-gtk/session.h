/* session.h - where iogram-view's data comes from: a replay file played at
 * a position, or live streams on ZeroMQ endpoints (optionally recorded), both
 * into one stream model, and the frames the panels draw. No GTK inside. */
#ifndef IOGV_SESSION_H
#define IOGV_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "iogplot.h"

typedef struct iogv_session iogv_session;

typedef struct iogv_opts {
	uint32_t history_s;      /* live rate history kept, 0 = 900 */
	int any_address;         /* listening beyond loopback allowed (--any-address) */
	int layer;               /* IOGP_LAYER_* shown first (0: POSIX) */
} iogv_opts;

iogv_session *iogv_session_new(const iogv_opts *opts);
void iogv_session_free(iogv_session *s);

/* ---- replay ---- */
/* Open a replay file (closes whatever was open). Reads the file once for
 * its time span and per-node rates; the model starts at the beginning. */
int iogv_open_replay(iogv_session *s, const char *path, char *err, size_t errlen);
int iogv_is_replay(const iogv_session *s);
/* Recording span, wall-clock seconds (receive times). */
void iogv_replay_span(const iogv_session *s, double *start, double *end);
double iogv_replay_pos(const iogv_session *s);
/* Bytes of the replay file skipped as damaged so far (0 live). */
uint64_t iogv_replay_damage(const iogv_session *s);
/* Move to wall-clock second t (clamped to the span): forward by reading on,
 * backward from the nearest keyframe. Returns records applied or an error. */
int iogv_replay_seek(iogv_session *s, double t);
/* The same a step at a time (iogp_feed_seek_start), for the window's keys
 * and timeline: begun here; iogv_replay_seek_step reads on for one pump's
 * budget, 1 while the seek goes on. iogv_replay_seeking: 1 while one is
 * under way, its target (wall-clock seconds) and the share read (0..1). */
int iogv_replay_seek_start(iogv_session *s, double t);
int iogv_replay_seek_step(iogv_session *s);
int iogv_replay_seeking(const iogv_session *s, double *to, double *done);
/* Keyframe times (wall-clock seconds), for the timeline's ticks. */
size_t iogv_replay_keyframes(const iogv_session *s, double *t, size_t max);

/* ---- live ---- */
/* Listen on / connect to an endpoint (a viewer binds; agents connect). */
int iogv_listen(iogv_session *s, const char *ep, char *err, size_t errlen);
int iogv_connect(iogv_session *s, const char *ep, char *err, size_t errlen);
int iogv_is_live(const iogv_session *s);
/* The endpoint last bound (resolves "tcp://127.0.0.1:*" to its port). */
int iogv_last_endpoint(iogv_session *s, char *buf, size_t len);
/* Apply what is waiting (within the feed's time budget) and tick the
 * model's clock; timeout_ms > 0 waits that long for the first message.
 * Returns the number of messages applied. */
int iogv_poll(iogv_session *s, int timeout_ms);
/* Socket problems seen since the last call ("tcp://...: connection refused,
 * retrying"), one per line; empty when none. */
int iogv_take_events(iogv_session *s, char *buf, size_t len);
/* Start or stop writing every received message to a replay file. */
int iogv_record_start(iogv_session *s, const char *path, char *err, size_t errlen);
int iogv_record_stop(iogv_session *s, char *err, size_t errlen);
const char *iogv_recording(const iogv_session *s);   /* path or NULL */

/* ---- frames ---- */
const iogp_model *iogv_model(const iogv_session *s);
/* Bumped whenever the model changed. */
uint64_t iogv_generation(const iogv_session *s);
/* Fill f for the selection (NULL = all) with histograms since the start
 * (window_s = 0) or of the last window_s seconds, per-node rates, access
 * samples and the header. */
int iogv_frame(iogv_session *s, const iogp_sel *sel, double window_s, iogplot_frame *f);
/* Per-node rates of the last bin (live) or at the position (replay), for
 * the sidebar: read and write bytes/s of node i. */
int iogv_node_rates(iogv_session *s, const char *node, double *rd, double *wr);
const char *iogv_title(const iogv_session *s);
/* The I/O layer (IOGP_LAYER_*) whose metrics every panel shows; switching
 * re-reads a replay's per-node rates of that layer. */
int iogv_layer(const iogv_session *s);
void iogv_set_layer(iogv_session *s, int layer);
/* The nodes table's rows with everything selected (IOGP_NT_NODES or
 * IOGP_NT_SOURCES; a selected node shows its processes), and whether frames
 * carry each node's latency p99 over time (the heatmap's p99 view). */
void iogv_set_table(iogv_session *s, int rows, int heat_p99);

#endif
