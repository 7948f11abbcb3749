/* fuzz_model.c - libFuzzer target: hostile message sequences into the stream
 * model. Whatever arrived, every source's keyframe (iogp_model_snapshot)
 * must encode within the wire limits, decode to the same bytes, rebuild the
 * same source in a fresh model (its keyframe encodes to the same bytes), and
 * change nothing when applied to its own model.
 *
 * Input: byte 0 picks model options, then at most MAX_STEPS steps, each an op
 * byte and its operands (reads past the end give zeros):
 *   op & 7        0 raw chunk: u16 length, that many bytes, fed as they are
 *                 1 HELLO, 2 DELTA, 3 SNAPSHOT, 4 BYE: built from the fuzz
 *                   bytes (a few source ids, sequence numbers up to 2^64 - 1,
 *                   huge bin indexes, long strings), encoded, then fed
 *                 5 DELTA built against the source's actual catalog (its
 *                   counter / gauge / histogram ids, bins inside the scheme)
 *                 6 the keyframe of one of the model's sources, fed back
 *                 7 tick the model's clock and run queries
 *   op >> 3 & 7   receive-time step before the message
 *   op & 0x40     flip one byte of the encoded message before feeding it
 *   op & 0x80     big lists: up to the wire limits (bins, metrics, files, ...)
 * Messages that do not encode are not fed; bytes that do not decode must be
 * refused and counted without changing the model. Every message fed is also
 * written to a replay file as the recorder writes it (with what it decoded
 * to), the writer running the reader's inverse on each DELTA it transforms:
 * none may be found wrong (the transform is invertible by construction). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "iogp_err.h"
#include "iogp_model.h"
#include "iogp_replay.h"
#include "iogp_testing.h"
#include "iogp_wire.h"

#define MAX_STEPS 64
#define MAX_LIST 8            /* small lists */
#define BIG_ACCESS 5000       /* more than the default access ring (4096) */
#define BIG_FILES 2048
#define BIN_POOL (2 * (IOGP_MAX_HIST_BINS + 1))
#define BUDGET (40u << 20)    /* encoded bytes built per input */

static const uint64_t src_ids[] = { 1, 2, 3, 0x8000000000000000ull, UINT64_MAX, 0 };
#define NSRC (sizeof src_ids / sizeof src_ids[0])

static const uint64_t v64[] = {
	0, 1, 2, 3, 7, 15, 16, 63, 64, 65, 127, 128, 255, 975, 976, 1000, 1023, 1024,
	1025, 4095, 4096, 14591, 14592, 65535, 65536, 65537, 1ull << 31, UINT32_MAX,
	1ull << 32, 1000000000ull, 30000000000ull, 1ull << 53, 1ull << 62,
	(1ull << 63) - 1, 1ull << 63, (1ull << 63) + 1, UINT64_MAX - 1, UINT64_MAX,
};
#define NV64 (sizeof v64 / sizeof v64[0])

static const char *const label_keys[] = { "host", "pid", "rank", "job", "exe", "k", "" };
static const char *const label_vals[] = { "n1", "n2", "", "1", "42", "7", "/bin/x", "-1" };
static const char *const metric_names[] = {
	"posix.read.bytes", "posix.write.bytes", "posix.read.ops", "posix.write.ops",
	"posix.read.size", "posix.lat", "c", "g", "h", "a", "",
};
static const char *const units[] = { "", "bytes", "ns", "ops" };
static const char *const paths[] = { "/a", "/b", "", "/tmp/x", "/a/b/c" };

struct rd {
	const uint8_t *p;
	size_t n;
};

static uint8_t u8(struct rd *r)
{
	if (r->n == 0)
		return 0;
	r->n--;
	return *r->p++;
}

static uint16_t u16(struct rd *r)
{
	uint16_t v = u8(r);

	return (uint16_t)(v | (uint16_t)u8(r) << 8);
}

static uint64_t u64(struct rd *r)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v |= (uint64_t)u8(r) << (8 * i);
	return v;
}

static uint64_t pick64(struct rd *r)
{
	uint8_t s = u8(r);

	if (s < 64)
		return s;
	if (s < 64 + 4 * NV64)
		return v64[(s - 64) % NV64];
	if (s < 240)
		return u16(r);
	return u64(r);
}

/* ---- shared state (static: libFuzzer runs one input at a time) -------------- */

static char g_long[IOGP_MAX_PATH + 2];     /* g_long + sizeof - 1 - n: n bytes */
static char g_names[IOGP_MAX_METRICS + 1][16];
static iogp_label g_labels[IOGP_MAX_LABELS + 1];
static iogp_metric_def *g_metrics;         /* IOGP_MAX_METRICS + 1, ~8 KiB each */
static iogp_counter_val g_counters[IOGP_MAX_METRICS];
static iogp_gauge_val g_gauges[IOGP_MAX_METRICS];
static iogp_hist_val g_hists[MAX_LIST];
static iogp_bin *g_bins;                   /* BIN_POOL */
static iogp_access g_access[BIG_ACCESS];
static iogp_file g_files[BIG_FILES];
static uint8_t *g_enc, *g_ka, *g_kb, *g_kc; /* IOGP_MAX_PAYLOAD each */
static iogp_msg g_msg, g_probe, g_snap, g_dec, g_cat;

static uint64_t sim_seq[NSRC], sim_t1[NSRC];

static void die(const char *why)
{
	fprintf(stderr, "fuzz_model: %s\n", why);
	abort();
}

static void setup(void)
{
	static int done;

	if (done)
		return;
	done = 1;
	for (size_t i = 0; i < sizeof g_long - 1; i++)
		g_long[i] = (char)('a' + i % 26);
	g_long[sizeof g_long - 1] = '\0';
	g_metrics = calloc(IOGP_MAX_METRICS + 1, sizeof *g_metrics);
	g_bins = calloc(BIN_POOL, sizeof *g_bins);
	g_enc = malloc(IOGP_MAX_PAYLOAD);
	g_ka = malloc(IOGP_MAX_PAYLOAD);
	g_kb = malloc(IOGP_MAX_PAYLOAD);
	g_kc = malloc(IOGP_MAX_PAYLOAD);
	if (!g_metrics || !g_bins || !g_enc || !g_ka || !g_kb || !g_kc)
		die("out of memory");
	iogp_msg_init(&g_msg);
	iogp_msg_init(&g_probe);
	iogp_msg_init(&g_snap);
	iogp_msg_init(&g_dec);
	iogp_msg_init(&g_cat);
}

static const char *lng(size_t n)
{
	if (n > sizeof g_long - 1)
		n = sizeof g_long - 1;
	return g_long + (sizeof g_long - 1 - n);
}

/* A string from tab, or one of (about) max bytes: at, just past, or below. */
static const char *pick_str(struct rd *r, const char *const *tab, size_t n, size_t max)
{
	uint8_t s = u8(r);

	if (s < 0xf0)
		return tab[s % n];
	switch (s & 3) {
	case 0:
		return lng(max);
	case 1:
		return lng(max + 1);
	case 2:
		return lng(u8(r) % (max + 1));
	default:
		return lng(u16(r) % (max + 1));
	}
}

static uint64_t pick_id(struct rd *r)
{
	static const uint64_t big[] = { 255, 4095, 65535, UINT32_MAX - 3, UINT32_MAX };
	uint8_t s = u8(r);

	return s < 0xf8 ? s % 16 : big[s % 5];
}

static uint16_t pick_flags(struct rd *r)
{
	uint8_t s = u8(r);

	switch (s & 7) {
	case 4:
		return 0xffff;
	case 5:
		return u16(r);
	case 6:
	case 7:
		return 0;
	default:
		return (uint16_t)(s & 3);   /* KEYFRAME / FINAL */
	}
}

static uint64_t pick_seq(struct rd *r, size_t si)
{
	uint8_t s = u8(r);
	uint64_t *q = &sim_seq[si];

	switch (s & 7) {
	case 4:
		break;                       /* repeat */
	case 5:
		*q += 2 + (s >> 3);          /* small gap */
		break;
	case 6:
		*q -= 1 + (s >> 3);          /* back */
		break;
	case 7:
		*q = pick64(r);              /* anything: 2^63, UINT64_MAX, ... */
		break;
	default:
		(*q)++;
		break;
	}
	return *q;
}

static void pick_bins(struct rd *r, iogp_bins *b)
{
	uint8_t s = u8(r);

	b->kind = (iogp_bins_kind)(s % 4);
	if ((s & 0xf0) == 0xf0)
		b->kind = (iogp_bins_kind)(4 + s % 4);   /* not a scheme */
	switch (b->kind) {
	case IOGP_BINS_NATIVE:
		b->k = (s >> 2) % 10;                /* 1..8 valid */
		if (b->k == 0)
			b->k = IOGP_NATIVE_K_DEFAULT;
		break;
	case IOGP_BINS_FIXED:
		b->width = (s & 0x40) ? pick64(r) : 1 + (s >> 2 & 7);
		b->offset = (s & 0x80) ? pick64(r) : 0;
		break;
	case IOGP_BINS_EDGES: {
		uint32_t n = u16(r) % (IOGP_MAX_EDGES + 2);
		uint64_t e = pick64(r), step = (s & 0x40) ? pick64(r) : 1 + (s >> 2 & 15);

		if (n == 0)
			n = 1;
		b->nedges = 0;
		for (uint32_t i = 0; i < n && b->nedges < IOGP_MAX_EDGES; i++) {
			b->edges[b->nedges++] = e;
			if (e > UINT64_MAX - step)
				break;
			e += step;
		}
		if (n > IOGP_MAX_EDGES)
			b->nedges = IOGP_MAX_EDGES + 1;   /* over the limit */
		break;
	}
	default:
		break;
	}
}

/* Ascending ids from a picked start; false when they run out of range. */
static int next_id(struct rd *r, uint64_t *id, int first, uint64_t max)
{
	if (first)
		*id = pick_id(r);
	else
		*id += 1 + u8(r) % 3;
	return *id <= max;
}

static uint32_t build_labels(struct rd *r, int big)
{
	uint32_t n = big ? IOGP_MAX_LABELS + (u8(r) & 1) : u8(r) % 6;

	for (uint32_t i = 0; i < n; i++) {
		g_labels[i].key = pick_str(r, label_keys, 7, IOGP_MAX_KEY);
		g_labels[i].value = pick_str(r, label_vals, 8, IOGP_MAX_VALUE);
	}
	return n;
}

static uint32_t build_metrics(struct rd *r, int big)
{
	uint32_t n, i;
	uint64_t id = 0;

	if (big) {
		/* one template, repeated under ascending ids and (maybe) own names */
		uint8_t s = u8(r);
		iogp_metric_def *t = &g_metrics[0];

		n = u16(r) % (IOGP_MAX_METRICS + 2);
		t->kind = (iogp_metric_kind)(1 + s % 4);
		t->unit = pick_str(r, units, 4, IOGP_MAX_UNIT);
		t->name = pick_str(r, metric_names, 11, IOGP_MAX_NAME);
		if (t->kind == IOGP_HISTOGRAM)
			pick_bins(r, &t->bins);
		id = pick_id(r);
		for (i = 0; i < n && id <= UINT32_MAX; i++, id++) {
			iogp_metric_def *d = &g_metrics[i];

			if (i > 0) {
				d->kind = t->kind;
				d->unit = t->unit;
				d->name = t->name;
				if (t->kind == IOGP_HISTOGRAM) {
					d->bins.kind = t->bins.kind;
					d->bins.k = t->bins.k;
					d->bins.width = t->bins.width;
					d->bins.offset = t->bins.offset;
					d->bins.nedges = t->bins.nedges;
					if (t->bins.kind == IOGP_BINS_EDGES && t->bins.nedges <= IOGP_MAX_EDGES)
						memcpy(d->bins.edges, t->bins.edges,
						       t->bins.nedges * sizeof t->bins.edges[0]);
				}
			}
			d->id = (uint32_t)id;
			if (s & 0x80) {
				snprintf(g_names[i], sizeof g_names[i], "m%u", (unsigned)id);
				d->name = g_names[i];
			}
		}
		return i;
	}
	n = u8(r) % (MAX_LIST + 1);
	for (i = 0; i < n; i++) {
		iogp_metric_def *d = &g_metrics[i];
		uint8_t s;

		if (!next_id(r, &id, i == 0, UINT32_MAX))
			break;
		s = u8(r);
		d->id = (uint32_t)id;
		d->kind = (iogp_metric_kind)(1 + s % 4);
		if (s == 0xff)
			d->kind = (iogp_metric_kind)5;   /* not a kind */
		d->name = pick_str(r, metric_names, 11, IOGP_MAX_NAME);
		d->unit = (s & 0x40) ? NULL : pick_str(r, units, 4, IOGP_MAX_UNIT);
		if (d->kind == IOGP_HISTOGRAM)
			pick_bins(r, &d->bins);
	}
	return i;
}

static uint32_t build_bins(struct rd *r, int big, uint32_t *pool_used, iogp_bin **out)
{
	uint32_t left = BIN_POOL - *pool_used, n, i;
	uint8_t s = u8(r);
	uint64_t idx = pick64(r), stride;
	iogp_bin *b = g_bins + *pool_used;

	if (big) {
		n = (s & 1) ? IOGP_MAX_HIST_BINS - (u8(r) & 1) + (s >> 1 & 1) : 1 + u16(r);
		stride = (s & 4) ? 1 + pick64(r) % 1000 : 1 + (s >> 3 & 7);
	} else {
		n = u8(r) % (MAX_LIST + 1);
		stride = (s & 4) ? pick64(r) : 1 + (s >> 3 & 7);
		if (stride == 0)
			stride = 1;
	}
	if (n > left)
		n = left;
	for (i = 0; i < n; i++) {
		b[i].idx = idx;
		b[i].count = (s & 2) || big ? 1 + (i & 7) : pick64(r);
		if (idx > UINT64_MAX - stride) {
			i++;
			break;
		}
		idx += stride;
	}
	*pool_used += i;
	*out = b;
	return i;
}

static uint32_t build_hists(struct rd *r, int big, iogp_msg *m)
{
	uint32_t n = big ? 1 + (u8(r) & 1) : u8(r) % 4, used = 0, i;
	uint64_t id = 0;

	for (i = 0; i < n; i++) {
		if (!next_id(r, &id, i == 0, UINT32_MAX))
			break;
		g_hists[i].id = (uint32_t)id;
		g_hists[i].nbins = build_bins(r, big, &used, &g_hists[i].bins);
	}
	m->hists = g_hists;
	return i;
}

static uint32_t build_access(struct rd *r, int big)
{
	uint32_t n = big ? u16(r) % (BIG_ACCESS + 1) : u8(r) % 5;
	uint8_t s = u8(r);
	uint64_t t = pick64(r);

	for (uint32_t i = 0; i < n; i++) {
		iogp_access *a = &g_access[i];

		if (big && i > 0) {
			*a = g_access[i - 1];
			a->t_ns += 1 + (s & 1) * 1000;
			a->offset += a->size;
			continue;
		}
		a->id = (uint32_t)pick_id(r);
		a->t_ns = t += pick64(r);
		a->file = pick64(r);
		a->op = u8(r) % 3;
		a->offset = pick64(r);
		a->size = pick64(r);
	}
	return n;
}

static uint32_t build_files(struct rd *r, int big)
{
	uint32_t n, i;
	uint64_t id = 0;

	if (big) {
		size_t len = u16(r) % (IOGP_MAX_PATH + 1);
		uint64_t step = 1 + u8(r) % 4;

		n = u16(r) % (BIG_FILES + 1);
		id = pick64(r);
		for (i = 0; i < n; i++) {
			g_files[i].id = id;
			g_files[i].path = lng(len);
			if (id > UINT64_MAX - step) {
				i++;
				break;
			}
			id += step;
		}
		return i;
	}
	n = u8(r) % 5;
	for (i = 0; i < n; i++) {
		if (!next_id(r, &id, i == 0, UINT64_MAX - 3))
			break;
		g_files[i].id = id;
		g_files[i].path = pick_str(r, paths, 5, IOGP_MAX_PATH);
	}
	return i;
}

enum {
	S_LABELS = 1, S_METRICS = 2, S_INTERVAL = 4, S_COUNTERS = 8, S_GAUGES = 16,
	S_HISTS = 32, S_ACCESS = 64, S_FILES = 128,
};

static const uint8_t def_sections[5] = {
	0,
	S_LABELS | S_METRICS,
	S_INTERVAL | S_COUNTERS | S_GAUGES | S_HISTS | S_FILES,
	0xff & ~S_ACCESS,
	0,
};

static void build_interval(struct rd *r, iogp_msg *m, size_t si, uint64_t recv)
{
	uint8_t s = u8(r);

	switch (s & 3) {
	case 0:   /* like an agent: consecutive intervals, wall = receive time */
		m->t0_ns = sim_t1[si];
		m->t1_ns = m->t0_ns + 1000000ull * (1 + (s >> 2));
		m->wall_ns = recv;
		sim_t1[si] = m->t1_ns;
		break;
	case 1:
		m->t0_ns = pick64(r);
		m->t1_ns = m->t0_ns + pick64(r);   /* may wrap: then it does not encode */
		m->wall_ns = pick64(r);
		break;
	case 2:
		m->t0_ns = m->t1_ns = 0;
		m->wall_ns = recv - pick64(r);
		break;
	default:
		break;
	}
}

/* A message of the given kind from the fuzz bytes, into m (caller memory). */
static void build(struct rd *r, iogp_kind kind, int big, uint64_t recv, iogp_msg *m)
{
	size_t si = u8(r) % NSRC;
	uint8_t sect, extra;
	uint64_t id = 0;

	memset(m, 0, sizeof *m);
	m->kind = kind;
	m->source = src_ids[si];
	m->seq = pick_seq(r, si);
	m->flags = pick_flags(r);
	sect = u8(r) ^ def_sections[kind];
	extra = u8(r);
	if (sect & S_LABELS) {
		m->nlabels = build_labels(r, big && (extra & 1));
		m->labels = g_labels;
	}
	if (sect & S_METRICS) {
		m->nmetrics = build_metrics(r, big);
		m->metrics = g_metrics;
	}
	if (sect & S_INTERVAL)
		build_interval(r, m, si, recv);
	if (sect & S_COUNTERS) {
		uint32_t n = u8(r) % (MAX_LIST + 1), i;

		for (i = 0; i < n && next_id(r, &id, i == 0, UINT32_MAX); i++)
			g_counters[i] = (iogp_counter_val){ (uint32_t)id, pick64(r) };
		m->ncounters = i;
		m->counters = g_counters;
	}
	if (sect & S_GAUGES) {
		uint32_t n = u8(r) % (MAX_LIST + 1), i;

		for (i = 0; i < n && next_id(r, &id, i == 0, UINT32_MAX); i++)
			g_gauges[i] = (iogp_gauge_val){ (uint32_t)id, (int64_t)pick64(r) };
		m->ngauges = i;
		m->gauges = g_gauges;
	}
	if (sect & S_HISTS)
		m->nhists = build_hists(r, big && (extra & 2), m);
	if (sect & S_ACCESS) {
		m->naccess = build_access(r, big && (extra & 4));
		m->access = g_access;
		m->access_seen = pick64(r);
	}
	if (sect & S_FILES) {
		m->nfiles = build_files(r, big && (extra & 8));
		m->files = g_files;
	}
	if (extra & 0x10)
		m->dropped = pick64(r);
	if (extra & 0x20)
		m->access_seen = pick64(r);
}

/* A DELTA that the model should accept: ids and bins from the source's own
 * catalog (taken from its keyframe). */
static int build_coherent(struct rd *r, iogp_model *a, int big, uint64_t recv, iogp_msg *m)
{
	size_t n = iogp_model_source_count(a), i, si;
	uint32_t nc = 0, ng = 0, nh = 0, used = 0;

	if (n == 0)
		return -1;
	i = u8(r) % n;
	if (iogp_model_snapshot(a, i, 0, &g_cat) != 0)
		die("snapshot of an existing source failed");
	memset(m, 0, sizeof *m);
	m->kind = IOGP_DELTA;
	m->source = g_cat.source;
	for (si = 0; si < NSRC && src_ids[si] != m->source; si++)
		;
	if (si < NSRC) {
		m->seq = pick_seq(r, si);
	} else {
		uint8_t s = u8(r);

		m->seq = g_cat.seq + (s < 0xc0 ? 1 : s < 0xe0 ? 0 : pick64(r));
	}
	m->flags = (u8(r) & 0x0f) == 0x0f ? IOGP_F_FINAL : 0;
	m->t0_ns = g_cat.t1_ns;
	m->t1_ns = m->t0_ns + 1000000000ull;
	if (m->t1_ns < m->t0_ns)
		m->t1_ns = m->t0_ns;
	m->wall_ns = recv;
	for (uint32_t j = 0; j < g_cat.nmetrics; j++) {
		const iogp_metric_def *d = &g_cat.metrics[j];
		uint8_t s = u8(r);

		if (s & 1)
			continue;
		if (d->kind == IOGP_COUNTER) {
			g_counters[nc++] = (iogp_counter_val){ d->id, s & 2 ? pick64(r) : s >> 2 };
		} else if (d->kind == IOGP_GAUGE) {
			g_gauges[ng++] = (iogp_gauge_val){ d->id, (int64_t)pick64(r) };
		} else if (d->kind == IOGP_HISTOGRAM && nh < MAX_LIST) {
			uint64_t nb = iogp_bins_count(&d->bins), idx, stride;
			uint32_t cnt, left = BIN_POOL - used, k;
			iogp_bin *b = g_bins + used;

			if (nb == 0)
				continue;
			cnt = big ? 1 + u16(r) : 1 + u8(r) % MAX_LIST;
			if (big && (s & 4))
				cnt = IOGP_MAX_HIST_BINS;
			if (cnt > left)
				cnt = left;
			idx = pick64(r) % nb;
			stride = 1 + (s >> 3 & 3);
			for (k = 0; k < cnt && idx < nb; k++) {
				b[k].idx = idx;
				b[k].count = s & 2 ? pick64(r) | 1 : 1;
				if (idx > UINT64_MAX - stride)
					break;
				idx += stride;
			}
			if (k == 0)
				continue;
			used += k;
			g_hists[nh++] = (iogp_hist_val){ d->id, k, b };
		}
	}
	m->ncounters = nc;
	m->counters = g_counters;
	m->ngauges = ng;
	m->gauges = g_gauges;
	m->nhists = nh;
	m->hists = g_hists;
	m->dropped = g_cat.dropped + (u8(r) & 1);
	return 0;
}

/* ---- feeding and checking ----------------------------------------------------- */

static void stats_check(const iogp_model *a)
{
	iogp_model_stats st;
	uint64_t msgs = 0, gaps = 0;
	iogp_source_info si;

	iogp_model_get_stats(a, &st);
	for (size_t i = 0; i < iogp_model_source_count(a); i++) {
		if (iogp_model_source(a, i, &si) != 0)
			die("iogp_model_source failed for an index < count");
		msgs += si.messages;
		gaps += si.gaps;
	}
	if (msgs != st.messages)
		die("sources' message counts do not add up to stats.messages");
	if (gaps != st.gaps)
		die("sources' gaps do not add up to stats.gaps");
}

static iogp_replay_writer *g_w;

static void feed(iogp_model *a, const uint8_t *p, size_t n, uint64_t recv)
{
	iogp_model_stats s0, s1;
	size_t nsrc = iogp_model_source_count(a);
	int dec = iogp_msg_decode(&g_probe, p, n, NULL, 0), rc;

	if (g_w && iogp_replay_write_msg(g_w, recv, p, n, dec < 0 ? NULL : &g_probe) < 0)
		die("the replay writer refused a message");

	iogp_model_get_stats(a, &s0);
	rc = iogp_model_feed(a, p, n, recv);
	iogp_model_get_stats(a, &s1);
	if (dec < 0) {
		if (rc != dec || s1.bad_messages != s0.bad_messages + 1 ||
		    s1.messages != s0.messages || iogp_model_source_count(a) != nsrc)
			die("undecodable bytes were not refused cleanly");
		return;
	}
	/* A rejected message changes nothing; only the caps refuse part of a
	 * message that still applies (IOGP_ELIMIT, counted in stats.refused). */
	if (rc < 0 && s1.messages != s0.messages &&
	    !(rc == IOGP_ELIMIT && s1.refused > s0.refused)) {
		fprintf(stderr, "fuzz_model: rc %d (%s), kind %d, source %#llx\n", rc,
		        iogp_strerror(rc), (int)g_probe.kind, (unsigned long long)g_probe.source);
		die("a rejected message was applied (counted in stats.messages)");
	}
	if (rc == 0 && g_probe.kind >= IOGP_HELLO && g_probe.kind <= IOGP_BYE &&
	    s1.messages != s0.messages + 1 && s1.duplicates != s0.duplicates + 1)
		die("an accepted message was neither applied nor a duplicate");
	if (iogp_model_source_count(a) < nsrc)
		die("sources disappeared");
}

static void describe(const iogp_msg *k, long rc)
{
	uint32_t maxbins = 0, hmax = 0;
	uint64_t paths = 0;

	for (uint32_t i = 0; i < k->nhists; i++) {
		if (k->hists[i].nbins > maxbins) {
			maxbins = k->hists[i].nbins;
			hmax = k->hists[i].id;
		}
	}
	for (uint32_t i = 0; i < k->nfiles; i++)
		paths += strlen(k->files[i].path);
	fprintf(stderr,
	        "fuzz_model: keyframe of source %#llx: encode returned %ld (%s); seq %llu, "
	        "%u labels, %u metrics, %u counters, %u gauges, %u hists (largest: id %u "
	        "with %u bins, limit %u), %u files (%llu path bytes); payload limit %u\n",
	        (unsigned long long)k->source, rc, iogp_strerror((int)rc),
	        (unsigned long long)k->seq, k->nlabels, k->nmetrics, k->ncounters, k->ngauges,
	        k->nhists, hmax, maxbins, IOGP_MAX_HIST_BINS, k->nfiles,
	        (unsigned long long)paths, IOGP_MAX_PAYLOAD);
}

/* Keyframe of source i of a into buf: it must encode. */
static size_t keyframe(const iogp_model *a, size_t i, uint16_t flags, iogp_msg *k, uint8_t *buf)
{
	long n;

	if (iogp_model_snapshot(a, i, flags, k) != 0)
		die("iogp_model_snapshot failed for an index < count");
	if (k->kind != IOGP_SNAPSHOT || (k->flags & flags) != flags)
		die("keyframe has the wrong kind or lost its flags");
	n = iogp_msg_encode(k, buf, IOGP_MAX_PAYLOAD);
	if (n <= 0) {
		describe(k, n);
		die("a keyframe does not encode: the model holds state the wire cannot carry");
	}
	return (size_t)n;
}

static int hist_same(const iogp_hist *a, const iogp_hist *b)
{
	if (a->n != b->n || a->total != b->total || a->nexact != b->nexact)
		return 0;
	for (size_t i = 0; i < a->n; i++)
		if (a->bins[i].idx != b->bins[i].idx || a->bins[i].count != b->bins[i].count)
			return 0;
	for (size_t i = 0; i < a->nexact; i++)
		if (a->exact[i].value != b->exact[i].value || a->exact[i].count != b->exact[i].count)
			return 0;
	return 1;
}

static void tick_and_query(struct rd *r, iogp_model *a, uint64_t recv, int live)
{
	size_t nm = iogp_model_metric_count(a), ns = iogp_model_source_count(a);
	size_t nn = iogp_model_node_count(a);
	iogp_metric_info mi;
	iogp_model_live lv;
	iogp_sel sel = { .kind = IOGP_SEL_ALL };
	uint8_t s = u8(r);

	iogp_model_tick(a, recv);
	iogp_model_get_live(a, &lv);
	if (nm == 0 || iogp_model_metric(a, u8(r) % nm, &mi) != 0)
		return;
	if ((s & 3) == 1 && nn > 0) {
		sel.kind = IOGP_SEL_NODE;
		sel.node = iogp_model_node(a, u8(r) % nn);
	} else if ((s & 3) == 2 && ns > 0) {
		iogp_source_info si;

		sel.kind = IOGP_SEL_SOURCE;
		if (iogp_model_source(a, u8(r) % ns, &si) != 0)
			die("iogp_model_source failed for an index < count");
		sel.source = si.id;
	} else if ((s & 3) == 3) {
		sel.kind = IOGP_SEL_SOURCE;
		sel.source = pick64(r);
	}
	/* a live model answers all- and node-wide queries from its sums: they
	 * must equal a visit of every source (windows: unless a ring evicted,
	 * dropped or refused late data, clamped a count at 2^32 - 1, or sources
	 * kept none of their own, which the sums keep apart) */
	int cmp = live && sel.kind != IOGP_SEL_SOURCE;
	int cmp_win = cmp && lv.window_evicted == 0 && lv.window_dropped == 0 &&
	              lv.window_late == 0 && lv.window_saturated == 0 && lv.window_unkept == 0;

	/* and while the clock is behind the newest data, a node's window has
	 * moved on with it where a source's own ring has not */
	for (size_t i = 0; cmp_win && i < ns; i++) {
		iogp_source_info si;

		if (iogp_model_source(a, i, &si) == 0 && si.last_wall_ns > lv.now_ns)
			cmp_win = 0;
	}

	if (mi.kind == IOGP_HISTOGRAM) {
		iogp_hist h, v;
		uint64_t q, w = pick64(r);
		int rh = 0;

		memset(&h, 0, sizeof h);
		rh = iogp_model_hist(a, mi.name, &sel, &h);
		iogp_hist_quantile(&h, (s >> 2 & 3) / 3.0, &q);
		if (cmp) {
			iogp__model_aggregates(a, 0);
			if (iogp_model_hist(a, mi.name, &sel, &v) != rh || !hist_same(&h, &v))
				die("a sum's histogram differs from the sources' (iogp_model_hist)");
			iogp__model_aggregates(a, 1);
			iogp_hist_free(&v);
		}
		iogp_hist_free(&h);
		if (live) {
			memset(&h, 0, sizeof h);
			rh = iogp_model_hist_window(a, mi.name, &sel, w, &h);
			if (cmp_win) {
				iogp__model_aggregates(a, 0);
				if (iogp_model_hist_window(a, mi.name, &sel, w, &v) != rh || !hist_same(&h, &v))
					die("a sum's window differs from the sources' (iogp_model_hist_window)");
				iogp__model_aggregates(a, 1);
				iogp_hist_free(&v);
			}
			iogp_hist_free(&h);
		}
	} else if (mi.kind == IOGP_COUNTER) {
		uint64_t v, v2;
		int rv = iogp_model_counter(a, mi.name, &sel, &v);

		if (cmp) {
			iogp__model_aggregates(a, 0);
			if (iogp_model_counter(a, mi.name, &sel, &v2) != rv || v != v2)
				die("a sum's counter differs from the sources'");
			iogp__model_aggregates(a, 1);
		}
	} else if (mi.kind == IOGP_GAUGE) {
		int64_t v, v2;
		int rv = iogp_model_gauge(a, mi.name, &sel, &v);

		if (cmp) {
			iogp__model_aggregates(a, 0);
			if (iogp_model_gauge(a, mi.name, &sel, &v2) != rv || v != v2)
				die("a sum's gauge differs from the sources'");
			iogp__model_aggregates(a, 1);
		}
	}
	if (live && (mi.kind == IOGP_COUNTER || mi.kind == IOGP_HISTOGRAM)) {
		double rate[16];
		uint8_t cov[16];
		iogp_rate_across ac[16];
		uint64_t first, end = (s & 0x10) ? pick64(r) : 0;
		size_t n = 1 + u8(r) % 16;

		iogp_model_rate(a, mi.name, &sel, end, n, rate, cov, &first);
		iogp_model_rate_across(a, mi.name, end, n, ac, &first);
	}
}

/* The round trip: every keyframe encodes, decodes to the same bytes and
 * rebuilds its source in a fresh model; a keyframe applied to its own model
 * changes nothing. */
static void check_keyframes(iogp_model *a)
{
	size_t n = iogp_model_source_count(a);
	iogp_model *b = iogp_model_new(NULL);
	char err[256];

	if (b == NULL)
		die("out of memory");
	for (size_t i = 0; i < n; i++) {
		size_t ka = keyframe(a, i, IOGP_F_KEYFRAME, &g_snap, g_ka), j;
		long kc;
		int rc;

		if (iogp_msg_decode(&g_dec, g_ka, ka, err, sizeof err) != 0) {
			fprintf(stderr, "fuzz_model: %s\n", err);
			die("a keyframe does not decode");
		}
		kc = iogp_msg_encode(&g_dec, g_kc, IOGP_MAX_PAYLOAD);
		if (kc < 0 || (size_t)kc != ka || memcmp(g_ka, g_kc, ka) != 0)
			die("a decoded keyframe re-encodes differently");
		rc = iogp_model_apply(b, &g_dec, 1000 + i);
		if (rc != 0) {
			fprintf(stderr, "fuzz_model: apply: %s\n", iogp_strerror(rc));
			die("a fresh model refused a keyframe");
		}
		if (iogp_model_source_index(b, g_snap.source, &j) != 0)
			die("the keyframe's source is missing from the fresh model");
	}
	if (iogp_model_source_count(b) != n)
		die("the fresh model has another number of sources");
	/* after all of them went in (sources share metric names and nodes) */
	for (size_t i = 0; i < n; i++) {
		size_t ka = keyframe(a, i, IOGP_F_KEYFRAME, &g_snap, g_ka), j, kb;

		if (iogp_model_source_index(b, g_snap.source, &j) != 0)
			die("the keyframe's source is missing from the fresh model");
		kb = keyframe(b, j, IOGP_F_KEYFRAME, &g_dec, g_kb);
		if (ka != kb || memcmp(g_ka, g_kb, ka) != 0) {
			fprintf(stderr, "fuzz_model: source %#llx: %zu vs %zu bytes\n",
			        (unsigned long long)g_snap.source, ka, kb);
			die("the rebuilt source's keyframe differs from the original's");
		}
	}
	stats_check(b);
	iogp_model_free(b);

	/* a keyframe into its own model changes nothing */
	for (size_t i = 0; i < n; i++) {
		size_t ka = keyframe(a, i, IOGP_F_KEYFRAME, &g_snap, g_ka), kb;
		int rc;

		if (iogp_msg_decode(&g_dec, g_ka, ka, NULL, 0) != 0)
			die("a keyframe does not decode");
		rc = iogp_model_apply(a, &g_dec, UINT64_MAX - n + i);
		if (rc != 0) {
			fprintf(stderr, "fuzz_model: apply: %s\n", iogp_strerror(rc));
			die("a model refused its own keyframe");
		}
		kb = keyframe(a, i, IOGP_F_KEYFRAME, &g_snap, g_kb);
		if (ka != kb || memcmp(g_ka, g_kb, ka) != 0)
			die("a keyframe applied to its own model changed the source");
	}
	stats_check(a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint64_t steps[8] = {
		0, 1, 1000, 1000000, 1000000000ull, 5000000000ull, 31000000000ull, 3600000000000ull,
	};
	struct rd r = { data, size };
	iogp_model_opts o = { 0 };
	uint64_t recv = 1700000000000000000ull, budget = 0;
	uint8_t hdr;
	iogp_model *a;

	setup();
	memset(sim_seq, 0, sizeof sim_seq);
	memset(sim_t1, 0, sizeof sim_t1);
	hdr = u8(&r);
	o.live = hdr & 1;
	o.max_sources = (hdr & 2) ? 3 : 0;
	o.access_ring = (hdr & 4) ? 8 : 0;
	o.window_bytes = (hdr & 8) ? 1024 : 0;
	o.ring_bins = (hdr & 16) ? 2 : 0;
	o.bin_ns = (hdr & 32) ? 1000000 : 0;
	o.window_slot_ns = (hdr & 32) ? 1000000 : 0;
	o.quiet_intervals = (hdr & 64) ? 1 : 0;
	o.gone_ns = (hdr & 128) ? 1 : 0;
	a = iogp_model_new(&o);
	if (a == NULL)
		die("out of memory");
	char path[64];
	snprintf(path, sizeof path, "/tmp/fuzz_model.%d.iogr", (int)getpid());
	iogp_replay_wopts wo = { .replace = 1, .compress = 1, .zstd_level = 1 };
	if (iogp_replay_create(&g_w, path, &wo, NULL, 0) < 0)
		die("cannot create the replay file");
	iogp__replay_verify(g_w, 1, 0);

	for (int step = 0; step < MAX_STEPS && r.n > 0; step++) {
		uint8_t op = u8(&r);
		int big = op >> 7, act = op & 7;
		long len = -1;

		recv += steps[op >> 3 & 7];
		switch (act) {
		case 0: {
			size_t n = u16(&r);

			if (n > r.n)
				n = r.n;
			feed(a, r.p, n, recv);
			r.p += n;
			r.n -= n;
			continue;
		}
		case 1:
		case 2:
		case 3:
		case 4:
			build(&r, (iogp_kind)act, big && budget < BUDGET, recv, &g_msg);
			len = iogp_msg_encode(&g_msg, g_enc, IOGP_MAX_PAYLOAD);
			break;
		case 5:
			if (build_coherent(&r, a, big && budget < BUDGET, recv, &g_msg) == 0)
				len = iogp_msg_encode(&g_msg, g_enc, IOGP_MAX_PAYLOAD);
			break;
		case 6: {
			size_t ns = iogp_model_source_count(a);
			uint8_t s = u8(&r);

			if (ns == 0)
				break;
			len = (long)keyframe(a, s % ns, pick_flags(&r), &g_snap, g_enc);
			if (s & 0x80) {   /* renumbered: stale, repeated or ahead */
				g_snap.seq += (uint64_t)(int8_t)u8(&r);
				len = iogp_msg_encode(&g_snap, g_enc, IOGP_MAX_PAYLOAD);
			}
			break;
		}
		default:
			tick_and_query(&r, a, recv, o.live);
			continue;
		}
		if (len <= 0)
			continue;   /* built but not encodable: never sent */
		budget += (uint64_t)len;
		if (op & 0x40) {
			uint16_t pos = u16(&r);

			g_enc[pos % (size_t)len] ^= (uint8_t)(u8(&r) | 1);
		}
		feed(a, g_enc, (size_t)len, recv);
	}
	stats_check(a);
	check_keyframes(a);
	iogp_model_free(a);
	if (iogp__replay_verify(g_w, 1, 0) != 0)
		die("a DELTA's transform does not read back as its payload");
	iogp_replay_abandon(g_w);
	g_w = NULL;
	unlink(path);
	return 0;
}
