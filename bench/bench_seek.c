/* bench_seek.c - a replay seek in iogram-top at scale (issue 16: every key
 * within 100 ms): iogram-top's own feed (viewer-tui/input.c) on a recording
 * of N sources at 1 Hz, seeking to the end and back 10 s. Each seek once
 * whole (iogp_feed_seek: what a key cost before seeks went a pump at a
 * time) and once a pump at a time (iogp_feed_seek_start, as the keys do
 * now): the longest pump (how long a key waits at most meanwhile, besides
 * a frame), the pumps and the time to arrive; both arrive at the same
 * state (messages applied, read bytes). Environment: BENCH_SEEK_FILE (a
 * recording to use), else BENCH_SEEK_N sources (default 2,000, 16 a node)
 * for BENCH_SEEK_SECONDS (default 330: past the 300 s warm-up) written by
 * IOGRAM_SYNTH into a temporary directory. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iogp.h"
#include "iogp_feed.h"
#include "iogp_metrics.h"
#include "testutil.h"
#include "top.h"

struct run {
	double ms, worst_pump_ms;
	long pumps;
	uint64_t messages, read_bytes;
};

static void state_of(top_input *in, struct run *r)
{
	iogp_model *m = iogp_feed_model(input_feed(in));
	iogp_model_stats st;
	iogp_model_get_stats(m, &st);
	r->messages = st.messages;
	r->read_bytes = 0;
	iogp_model_counter(m, IOGP_M_READ_BYTES, NULL, &r->read_bytes);
}

/* Seek from the start of the replay to t (by: seconds from the end, as a
 * key does after the jump), whole or a pump at a time. */
static int seek(const char *file, int whole, double back_s, struct run *r)
{
	top_input_opts o = { .replay = file };
	top_input *in;
	char err[512];
	if (input_open(&in, &o, err, sizeof(err)) != 0) {
		fprintf(stderr, "bench_seek: %s\n", err);
		return -1;
	}
	iogp_feed *f = input_feed(in);
	iogp_feed_pause(f, 1);
	memset(r, 0, sizeof(*r));
	if (back_s > 0)   /* at the end first, whole: the key under test is the step back */
		iogp_feed_seek(f, UINT64_MAX);
	double t0 = tu_now();
	if (whole) {
		if (back_s > 0)
			iogp_feed_seek_by(f, -back_s);
		else
			iogp_feed_seek(f, UINT64_MAX);
	} else {
		double p0 = tu_now();
		if (back_s > 0)
			iogp_feed_seek_by_start(f, -back_s);
		else
			iogp_feed_seek_start(f, UINT64_MAX);
		r->worst_pump_ms = (tu_now() - p0) * 1e3;
		for (long k = 0; k < 100000000 && iogp_feed_seeking(f, NULL, NULL); k++) {
			p0 = tu_now();
			input_pump(in);
			double ms = (tu_now() - p0) * 1e3;
			r->worst_pump_ms = ms > r->worst_pump_ms ? ms : r->worst_pump_ms;
			r->pumps++;
		}
	}
	r->ms = (tu_now() - t0) * 1e3;
	state_of(in, r);
	input_close(in);
	return 0;
}

int main(void)
{
	char dir[256] = "", file[512];
	const char *given = getenv("BENCH_SEEK_FILE");
	long n = getenv("BENCH_SEEK_N") ? atol(getenv("BENCH_SEEK_N")) : 2000;
	long secs = getenv("BENCH_SEEK_SECONDS") ? atol(getenv("BENCH_SEEK_SECONDS")) : 330;
	if (given) {
		snprintf(file, sizeof(file), "%s", given);
	} else {
		const char *synth = getenv("IOGRAM_SYNTH");
		if (!synth || n < 16 || n > 100000 || secs < 10 || secs > 3600) {
			fprintf(stderr, "bench_seek: set IOGRAM_SYNTH (or BENCH_SEEK_FILE); N 16..100000, seconds 10..3600\n");
			return 1;
		}
		tu_tmpdir(dir, sizeof(dir), "iogram-bench-seek");
		snprintf(file, sizeof(file), "%s/seek.iogr", dir);
		double g0 = tu_now();
		if (tu_system(tu_fmt("%s -o %s --nodes %ld --sources-per-node 16 --seconds %ld --interval-ms 1000",
		                     synth, file, n / 16, secs)) != 0) {
			fprintf(stderr, "bench_seek: iogram-synth failed\n");
			return 1;
		}
		printf("recording: %ld sources (16 a node) for %ld s, written in %.0f s\n", n / 16 * 16, secs,
		       tu_now() - g0);
	}
	static const struct { const char *what; double back; } seeks[] = {
		{ "start -> end", 0 }, { "end -> back 10 s", 10 },
	};
	int bad = 0;
	for (size_t i = 0; i < sizeof(seeks) / sizeof(seeks[0]); i++) {
		struct run w, p;
		if (seek(file, 1, seeks[i].back, &w) < 0 || seek(file, 0, seeks[i].back, &p) < 0)
			return 1;
		int same = w.messages == p.messages && w.read_bytes == p.read_bytes;
		bad |= !same;
		printf("seek %-17s whole: the key waits %.0f ms | a pump at a time: longest pump %.1f ms, "
		       "%ld pumps, there in %.0f ms | %" PRIu64 " messages applied%s\n",
		       seeks[i].what, w.ms, p.worst_pump_ms, p.pumps, p.ms, p.messages,
		       same ? "" : "  DIFFERENT STATE");
	}
	if (dir[0])
		tu_rmdir_all(dir);
	return bad;
}
