/* input.c - iogram-top's source: the shared feed (live sockets or a replay
 * file) opened from the command line, plus the built-in demo's workers. */
#include <stdlib.h>
#include <string.h>

#include "top.h"
#include "iogp_sys.h"

#define DEMO_DRAIN_NS 300000000ull   /* the demo's final SNAPSHOTs and BYEs */

struct top_input {
	top_mode mode;
	iogp_feed *feed;
	iogram_demo *demo;
};

static int open_sources(top_input *in, const top_input_opts *o, char *err, size_t errlen)
{
	if (o->replay)
		return iogp_feed_open_replay(in->feed, o->replay, err, errlen) < 0 ? -1 : 0;
	if (o->demo) {
		char ep[256], where[300];
		if (iogp_feed_listen(in->feed, "tcp://127.0.0.1:*", err, errlen) < 0 ||
		    iogp_feed_last_endpoint(in->feed, ep, sizeof(ep)) < 0 ||
		    demo_start(&in->demo, ep, err, errlen) < 0)
			return -1;
		snprintf(where, sizeof(where), "demo %s", ep);
		iogp_feed_set_where(in->feed, where);
		return 0;
	}
	int nl = o->nlisten, nc = o->nconnect;
	for (int i = 0; i < (nl || nc ? nl : 1); i++) {
		int rc = iogp_feed_listen(in->feed, nl ? o->listen[i] : IOGP_DEFAULT_ENDPOINT, err, errlen);
		if (rc < 0)
			return rc == IOGP_EINVAL ? -2 : -1;
	}
	for (int i = 0; i < nc; i++)
		if (iogp_feed_connect(in->feed, o->connect[i], err, errlen) < 0)
			return -1;
	return 0;
}

int input_open(top_input **out, const top_input_opts *o, char *err, size_t errlen)
{
	*out = NULL;
	top_input *in = calloc(1, sizeof(*in));
	iogp_feed_opts fo = {
		.model = {
			.live = 1,
			.bin_ns = 1000000000ull,
			.ring_bins = 600,
			.source_ring_bins = 120,   /* a source's own rates: 2 minutes (bench_modelmem) */
			.rate_total = 128ull << 20,  /* 120 bins a source up to ~25,000 of them, 64 at least beyond */
			.window_slot_ns = 2000000000ull,
			.window_max_ns = 300000000000ull,
			.window_bytes = 65536,
			.window_total = 128ull << 20,   /* 64 KB a source up to 2,048 of them, less beyond: the panels read the node sums */
			.access_total = 4u << 20,       /* samples (48 B in a ring): full rings and runs up to ~340 sources, less beyond, no rings past ~16,000 */
		},
		.any_address = o->any_address,
		.creator = "iogram-top " IOGRAM_VERSION,
		/* a key that arrives while messages go in waits for this at most;
		 * the loop comes back for the rest at once */
		.budget_ns = 8000000ull,
	};
	fo.model.nrates = iogp_layer_rate_set(fo.model.rates, IOGP_MODEL_MAX_RATES, 1);
	if (!in || !(in->feed = iogp_feed_new(&fo))) {
		snprintf(err, errlen, "out of memory");
		free(in);
		return -1;
	}
	in->mode = o->replay ? MODE_REPLAY : o->demo ? MODE_DEMO : MODE_LIVE;
	int rc = open_sources(in, o, err, errlen);
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
		uint64_t end = iogp_mono_ns() + DEMO_DRAIN_NS;
		while (iogp_feed_recording(in->feed) && iogp_mono_ns() < end) {
			iogp_feed_wait(in->feed, -1, 50);
			iogp_feed_pump(in->feed);
		}
	}
	iogp_feed_free(in->feed);
	free(in);
}

iogp_feed *input_feed(top_input *in)
{
	return in->feed;
}

long input_pump(top_input *in)
{
	if (in->demo)
		demo_tick(in->demo);
	return iogp_feed_pump(in->feed);
}

top_mode input_mode(const top_input *in)
{
	return in->mode;
}

void input_status(top_input *in, top_status *st)
{
	memset(st, 0, sizeof(*st));
	st->mode = in->mode;
	iogp_feed_get_status(in->feed, &st->f);
	if (in->demo)
		st->demo_workers = demo_workers(in->demo, &st->demo_restarts);
}
