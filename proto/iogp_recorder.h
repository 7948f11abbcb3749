/* iogp_recorder.h - a replay file writer that keeps a stream model of what it
 * wrote, so it can insert keyframes (the full state of every source). Used by
 * `iogram record`, `iogram merge`, the agent's IOGRAM_OUTPUT and the tests. */
#ifndef IOGP_RECORDER_H
#define IOGP_RECORDER_H

#include "iogp_api.h"

#include <stddef.h>
#include <stdint.h>

#include "iogp_model.h"
#include "iogp_replay.h"

typedef struct iogp_recorder iogp_recorder;

/* Keyframe policy: a keyframe is written when at least kf_min_ns have passed
 * since the last one and the file grew by kf_ratio x the last keyframe's size
 * (so keyframes cost at most ~1/kf_ratio of the file and a seek replays at
 * most ~kf_ratio keyframes' worth of records), or when kf_max_ns have passed
 * and anything was written. The first keyframe follows the first kf_min_ns. */
typedef struct iogp_recorder_opts {
	const char *creator;
	int plain;            /* 1: no compression */
	int replace;          /* 1: replace an existing file (--force); 0: refuse */
	int zstd_level;       /* 0 = 1: zstd's fastest positive level. On realistic
	                       * DELTAs (predicted, see iogp_replay.h) it costs
	                       * ~1.5% more disk than 3 for about half the time */
	uint64_t kf_min_ns;   /* 0 = 5 s */
	uint64_t kf_max_ns;   /* 0 = 300 s */
	uint32_t kf_ratio;    /* 0 = 16 */
	iogp_model_opts model;
} iogp_recorder_opts;

IOGP_API int iogp_recorder_open(iogp_recorder **r, const char *path,
                       const iogp_recorder_opts *opts, char *err, size_t errlen);
/* Decode payload, apply it to the model and append it unchanged. A payload
 * that does not decode, or that the model refuses (hostile, over the caps),
 * is not written and is counted in rejected (returns its error). A
 * SNAPSHOT that holds exactly the state the model has for its source (its
 * t1 and wall aside), with no new sequence number (seq = the source's last)
 * and not FINAL, is neither applied nor written (the keyframes hold that
 * state) and is counted in snapshots_skipped; returns 0. One that takes a
 * number of its own (today's agents and loadgen number SNAPSHOTs as they
 * do DELTAs) is written: without it every reader would count a gap. */
IOGP_API int iogp_recorder_add(iogp_recorder *r, const void *payload, size_t len, uint64_t recv_ns);
/* Encode msg and add it. */
IOGP_API int iogp_recorder_add_msg(iogp_recorder *r, const iogp_msg *msg, uint64_t recv_ns);
/* Count n messages the caller refused before they reached the recorder
 * (malformed on the socket): they are noted in the file with the others. */
IOGP_API void iogp_recorder_refused(iogp_recorder *r, uint64_t n);
/* Write a keyframe now. */
IOGP_API int iogp_recorder_keyframe(iogp_recorder *r, uint64_t recv_ns);
/* Note the losses when they changed (a small frame, iogp_replay.h:
 * iogram info shows them), then push everything to the file. */
IOGP_API int iogp_recorder_flush(iogp_recorder *r);
/* Flush, write index, close; frees r. */
IOGP_API int iogp_recorder_close(iogp_recorder *r);
IOGP_API void iogp_recorder_abandon(iogp_recorder *r);   /* as if the process died */

IOGP_API const iogp_model *iogp_recorder_model(const iogp_recorder *r);
typedef struct iogp_recorder_stats {
	uint64_t added, rejected, keyframes;
	uint64_t gaps;         /* sequence numbers the sources skipped: lost before us */
	uint64_t snapshots_skipped; /* SNAPSHOTs equal to the state, not written */
	iogp_replay_wstats file;
} iogp_recorder_stats;
IOGP_API void iogp_recorder_get_stats(const iogp_recorder *r, iogp_recorder_stats *st);

#endif
