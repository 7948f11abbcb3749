/* relay_agg.h - the aggregator behind `iogram relay --aggregate node|job`:
 * every member source's messages go into a stream model (proto/model*.c:
 * sequence numbers, gaps, duplicates, SNAPSHOT resync, caps), and at each
 * flush the change of every member's cumulative state since the previous
 * flush is added to its group's totals. Each group is one synthetic source
 * whose DELTAs carry the group totals' change since its previous message,
 * so its cumulative state is, exactly, the sum of its members' (counters,
 * histogram bins, exact values; gauges: the sum of the latest values). */
#ifndef IOGRAM_RELAY_AGG_H
#define IOGRAM_RELAY_AGG_H

#include <stddef.h>
#include <stdint.h>

#include "iogp_wire.h"

enum { RELAY_AGG_NODE = 1, RELAY_AGG_JOB = 2 };

typedef struct relay_agg relay_agg;

typedef struct relay_agg_stats {
	uint64_t in;            /* payloads fed */
	uint64_t malformed;     /* not decodable: refused */
	uint64_t refused;       /* decoded but refused by the model (unknown source
	                         * or metric, invalid values, caps) */
	uint64_t conflicts;     /* member metrics left out: same name as the group's
	                         * metric but another kind or bin scheme */
	uint64_t files_skipped, access_skipped; /* per-file records / access
	                         * samples not carried by aggregates */
	uint64_t duplicates, gaps; /* the members' (iogp_model_stats) */
	uint64_t members, groups;
	uint64_t deltas, snapshots, hellos, byes, summaries; /* sent */
	uint64_t bytes_out;
	uint64_t encode_errors; /* messages that could not be encoded (not sent;
	                         * their changes go with the next one) */
} relay_agg_stats;

/* Called for each message to send: kind, source id, encoded payload. */
typedef void (*relay_agg_out)(void *ctx, iogp_kind kind, uint64_t source, const uint8_t *p,
                              size_t n);

/* mode RELAY_AGG_NODE or RELAY_AGG_JOB; summaries: also send, for each
 * member that did something in the interval, a tiny DELTA under its own id
 * (labels: its own and summary = "1"): counters summary.read.bytes,
 * summary.write.bytes, summary.ops (reads + writes), summary.io_time (ns in
 * read, write and meta calls, from the latency bins: within their bucket
 * error) and the gauge summary.latency.p99 (ns, the interval's reads and
 * writes). Names apart from posix.*, so no total counts twice; a relay
 * above passes summary sources on unchanged. seq0: first sequence number of every
 * group (a restarted relay must start above what its previous run sent:
 * the caller passes the wall clock in microseconds). NULL on ENOMEM. */
relay_agg *relay_agg_new(int mode, int summaries, uint64_t seq0);
void relay_agg_free(relay_agg *a);
/* One payload (frame 2) received at recv_ns (CLOCK_REALTIME). 0, or a
 * negative code when it was refused (counted). */
int relay_agg_feed(relay_agg *a, const void *payload, size_t len, uint64_t recv_ns);
/* Fold the members' changes into their groups and send each group's DELTA
 * (a SNAPSHOT when a total went down: a member's SNAPSHOT said less than
 * what its DELTAs had added), HELLOs first where labels or catalog changed.
 * mono/wall: the relay's clocks now. Returns messages sent. */
int relay_agg_flush(relay_agg *a, uint64_t mono, uint64_t wall, relay_agg_out out, void *ctx);
/* Flush, then a SNAPSHOT of every group (flags: IOGP_F_FINAL at exit). */
int relay_agg_snapshots(relay_agg *a, uint64_t mono, uint64_t wall, uint16_t flags,
                        relay_agg_out out, void *ctx);
/* A new subscriber: relay_agg_snapshots, the summaries' HELLOs again
 * (before their next DELTA) and a SNAPSHOT of every summary source passed
 * on from below. */
int relay_agg_subscriber(relay_agg *a, uint64_t mono, uint64_t wall, relay_agg_out out, void *ctx);
/* BYE from every group (after the final SNAPSHOTs). */
int relay_agg_bye(relay_agg *a, relay_agg_out out, void *ctx);
void relay_agg_get_stats(const relay_agg *a, relay_agg_stats *st);
/* Where summary sources from an aggregating relay below (label "summary")
 * go, unchanged, as they arrive (relay_agg_feed). */
void relay_agg_passthrough(relay_agg *a, relay_agg_out out, void *ctx);

#endif
