/* check_wire.c - tests of the wire codec (proto/wire.c). */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iogp.h"

#include "realistic.h"
#include "testutil.h"

/* ck_assert* records a checkpoint (a pipe write) on success: in hot loops
 * use CHECK, which only acts on failure. */
#define CHECK(expr, ...) do { if (!(expr)) ck_abort_msg(__VA_ARGS__); } while (0)

static uint64_t rng_state;
static uint64_t rng_seed;

static uint64_t rnd(void)
{
	return tu_splitmix(&rng_state);
}

static void seed_rng(uint64_t seed)
{
	rng_seed = seed;
	rng_state = seed;
}

/* a value with a random bit length, so every varint size occurs */
static uint64_t rnd_bits(void)
{
	unsigned bits = (unsigned)(rnd() % 65);

	return bits == 0 ? 0 : rnd() >> (64 - bits);
}

/* ---- comparison ----------------------------------------------------------- */

static int str_eq(const char *a, const char *b)
{
	return strcmp(a != NULL ? a : "", b != NULL ? b : "") == 0;
}

static int bins_eq(const iogp_bins *a, const iogp_bins *b)
{
	if (a->kind != b->kind)
		return 0;
	switch (a->kind) {
	case IOGP_BINS_NATIVE: return a->k == b->k;
	case IOGP_BINS_LOG2: return 1;
	case IOGP_BINS_FIXED: return a->width == b->width && a->offset == b->offset;
	case IOGP_BINS_EDGES:
		return a->nedges == b->nedges &&
		    memcmp(a->edges, b->edges, a->nedges * sizeof a->edges[0]) == 0;
	}
	return 0;
}

/* Returns NULL when a and b carry the same message, else what differs. */
static const char *msg_diff(const iogp_msg *a, const iogp_msg *b)
{
	uint32_t i, j;

	if (a->kind != b->kind) return "kind";
	if (a->flags != b->flags) return "flags";
	if (a->source != b->source) return "source";
	if (a->seq != b->seq) return "seq";
	if (a->nlabels != b->nlabels) return "nlabels";
	for (i = 0; i < a->nlabels; i++) {
		if (!str_eq(a->labels[i].key, b->labels[i].key) ||
		    !str_eq(a->labels[i].value, b->labels[i].value))
			return "label";
	}
	if (a->nmetrics != b->nmetrics) return "nmetrics";
	for (i = 0; i < a->nmetrics; i++) {
		const iogp_metric_def *x = &a->metrics[i], *y = &b->metrics[i];

		if (x->id != y->id || x->kind != y->kind || !str_eq(x->name, y->name) ||
		    !str_eq(x->unit, y->unit))
			return "metric";
		if (x->kind == IOGP_HISTOGRAM && !bins_eq(&x->bins, &y->bins))
			return "metric bins";
	}
	if (a->t0_ns != b->t0_ns || a->t1_ns != b->t1_ns || a->wall_ns != b->wall_ns)
		return "interval";
	if (a->ncounters != b->ncounters) return "ncounters";
	for (i = 0; i < a->ncounters; i++) {
		if (a->counters[i].id != b->counters[i].id ||
		    a->counters[i].value != b->counters[i].value)
			return "counter";
	}
	if (a->ngauges != b->ngauges) return "ngauges";
	for (i = 0; i < a->ngauges; i++) {
		if (a->gauges[i].id != b->gauges[i].id || a->gauges[i].value != b->gauges[i].value)
			return "gauge";
	}
	if (a->nhists != b->nhists) return "nhists";
	for (i = 0; i < a->nhists; i++) {
		if (a->hists[i].id != b->hists[i].id || a->hists[i].nbins != b->hists[i].nbins)
			return "hist";
		for (j = 0; j < a->hists[i].nbins; j++) {
			if (a->hists[i].bins[j].idx != b->hists[i].bins[j].idx ||
			    a->hists[i].bins[j].count != b->hists[i].bins[j].count)
				return "hist bin";
		}
	}
	if (a->naccess != b->naccess) return "naccess";
	for (i = 0; i < a->naccess; i++) {
		const iogp_access *x = &a->access[i], *y = &b->access[i];

		if (x->id != y->id || x->t_ns != y->t_ns || x->file != y->file ||
		    x->op != y->op || x->offset != y->offset || x->size != y->size)
			return "access";
	}
	if (a->access_seen != b->access_seen) return "access_seen";
	if (a->nfiles != b->nfiles) return "nfiles";
	for (i = 0; i < a->nfiles; i++) {
		if (a->files[i].id != b->files[i].id || !str_eq(a->files[i].path, b->files[i].path))
			return "file";
	}
	if (a->dropped != b->dropped) return "dropped";
	return NULL;
}

static int msg_empty(const iogp_msg *m)
{
	return m->nlabels == 0 && m->nmetrics == 0 && m->ncounters == 0 &&
	    m->ngauges == 0 && m->nhists == 0 && m->naccess == 0 && m->nfiles == 0 &&
	    m->labels == NULL && m->hists == NULL && m->seq == 0 && m->source == 0;
}

/* Encodes m (size first, then exactly that size), decodes, compares; returns
 * the payload in *out (caller frees) and its length. */
static size_t roundtrip(const iogp_msg *m, uint8_t **out)
{
	long n = iogp_msg_encode(m, NULL, 0), n2;
	uint8_t *buf;
	iogp_msg d;
	char err[256];
	const char *why;
	int r;

	CHECK(n > 0, "encode size: %ld", n);
	buf = malloc((size_t)n);
	CHECK(buf != NULL, "malloc");
	n2 = iogp_msg_encode(m, buf, (size_t)n);
	CHECK(n2 == n, "encode: %ld, size said %ld", n2, n);
	iogp_msg_init(&d);
	r = iogp_msg_decode(&d, buf, (size_t)n, err, sizeof err);
	CHECK(r == 0, "decode: %d %s", r, err);
	why = msg_diff(m, &d);
	CHECK(why == NULL, "round trip differs in %s", why);
	CHECK(d.version == IOGP_WIRE_VERSION, "version");
	CHECK(d.canonical, "the encoder's bytes not decoded as canonical");
	iogp_msg_free(&d);
	if (out != NULL)
		*out = buf;
	else
		free(buf);
	return (size_t)n;
}

/* ---- a message with every section populated -------------------------------- */

struct full {
	iogp_label labels[6];
	iogp_metric_def metrics[10];
	iogp_counter_val counters[4];
	iogp_gauge_val gauges[5];
	iogp_hist_val hists[4];
	iogp_bin bins[3][1200];
	iogp_access access[64];
	iogp_file files[4];
	char maxkey[IOGP_MAX_KEY + 1], maxvalue[IOGP_MAX_VALUE + 1];
	char maxname[IOGP_MAX_NAME + 1], maxunit[IOGP_MAX_UNIT + 1];
	char maxpath[IOGP_MAX_PATH + 1];
};

static void fill_utf8(char *s, size_t n)
{
	static const char pat[] = "\xc3\xa4\xe6\x97\xa5\xf0\x9f\x99\x82"; /* 2, 3, 4 bytes */
	size_t i;

	for (i = 0; i < n; i++)
		s[i] = pat[i % 9];
	s[n] = '\0';
}

static void full_init(struct full *f, iogp_msg *m, iogp_kind kind, int big)
{
	uint32_t i, j;
	uint64_t idx;

	memset(f, 0, sizeof *f);
	fill_utf8(f->maxkey, IOGP_MAX_KEY);
	fill_utf8(f->maxvalue, IOGP_MAX_VALUE);
	fill_utf8(f->maxname, IOGP_MAX_NAME);
	memset(f->maxunit, 'u', IOGP_MAX_UNIT);
	fill_utf8(f->maxpath, IOGP_MAX_PATH);

	iogp_msg_init(m);
	m->kind = kind;
	m->flags = 0xffff;
	m->source = UINT64_MAX;
	m->seq = UINT64_MAX;

	f->labels[0] = (iogp_label){ "host", "n\xc3\xb6" "de-\xe6\x97\xa5\xe6\x9c\xac" };
	f->labels[1] = (iogp_label){ "", "" };
	f->labels[2] = (iogp_label){ f->maxkey, f->maxvalue };
	f->labels[3] = (iogp_label){ "emoji", "\xf0\x9f\x99\x82" };
	f->labels[4] = (iogp_label){ "rank", "17" };
	f->labels[5] = (iogp_label){ "empty", "" };
	m->nlabels = 6;
	m->labels = f->labels;

	f->metrics[0] = (iogp_metric_def){ .id = 0, .kind = IOGP_COUNTER, .name = "posix.read.ops", .unit = "ops" };
	f->metrics[1] = (iogp_metric_def){ .id = 1, .kind = IOGP_GAUGE, .name = "", .unit = "" };
	f->metrics[2] = (iogp_metric_def){ .id = 7, .kind = IOGP_ACCESS, .name = "posix.access", .unit = NULL };
	f->metrics[3] = (iogp_metric_def){ .id = 8, .kind = IOGP_HISTOGRAM, .name = f->maxname, .unit = f->maxunit };
	f->metrics[3].bins = (iogp_bins){ .kind = IOGP_BINS_NATIVE, .k = 1 };
	f->metrics[4] = (iogp_metric_def){ .id = 9, .kind = IOGP_HISTOGRAM, .name = "n8", .unit = "ns",
	    .bins = { .kind = IOGP_BINS_NATIVE, .k = 8 } };
	f->metrics[5] = (iogp_metric_def){ .id = 10, .kind = IOGP_HISTOGRAM, .name = "log2", .unit = "bytes",
	    .bins = { .kind = IOGP_BINS_LOG2 } };
	f->metrics[6] = (iogp_metric_def){ .id = 100000, .kind = IOGP_HISTOGRAM, .name = "fixed", .unit = "",
	    .bins = { .kind = IOGP_BINS_FIXED, .width = UINT64_MAX, .offset = UINT64_MAX } };
	f->metrics[7] = (iogp_metric_def){ .id = 100001, .kind = IOGP_HISTOGRAM, .name = "edges1", .unit = "",
	    .bins = { .kind = IOGP_BINS_EDGES, .nedges = 1, .edges = { UINT64_MAX } } };
	f->metrics[8] = (iogp_metric_def){ .id = UINT32_MAX - 1, .kind = IOGP_HISTOGRAM, .name = "edges", .unit = "" };
	f->metrics[8].bins.kind = IOGP_BINS_EDGES;
	f->metrics[8].bins.nedges = big ? IOGP_MAX_EDGES : 5;
	for (i = 0; i < f->metrics[8].bins.nedges; i++)
		f->metrics[8].bins.edges[i] = i == 0 ? 0 : i + 1 == f->metrics[8].bins.nedges ?
		    UINT64_MAX : f->metrics[8].bins.edges[i - 1] + 1 + rnd_bits() % (1ull << 40);
	f->metrics[9] = (iogp_metric_def){ .id = UINT32_MAX, .kind = IOGP_COUNTER, .name = "last", .unit = "" };
	m->nmetrics = 10;
	m->metrics = f->metrics;

	m->t0_ns = UINT64_MAX - 5;
	m->t1_ns = UINT64_MAX;
	m->wall_ns = 1700000000123456789ull;

	f->counters[0] = (iogp_counter_val){ 0, 0 };
	f->counters[1] = (iogp_counter_val){ 1, 1 };
	f->counters[2] = (iogp_counter_val){ 1000, UINT64_MAX };
	f->counters[3] = (iogp_counter_val){ UINT32_MAX, 12345 };
	m->ncounters = 4;
	m->counters = f->counters;

	f->gauges[0] = (iogp_gauge_val){ 2, INT64_MIN };
	f->gauges[1] = (iogp_gauge_val){ 3, INT64_MAX };
	f->gauges[2] = (iogp_gauge_val){ 4, -1 };
	f->gauges[3] = (iogp_gauge_val){ 5, 0 };
	f->gauges[4] = (iogp_gauge_val){ UINT32_MAX, 1 };
	m->ngauges = 5;
	m->gauges = f->gauges;

	f->bins[0][0] = (iogp_bin){ 0, 1 };
	f->bins[0][1] = (iogp_bin){ UINT64_MAX, UINT64_MAX };
	f->hists[0] = (iogp_hist_val){ 8, 2, f->bins[0] };
	f->hists[1] = (iogp_hist_val){ 9, 0, NULL };
	idx = 0;
	j = big ? 1200 : 12;
	for (i = 0; i < j; i++) {
		idx += 1 + (rnd() % 4 == 0 ? rnd_bits() % 100000 : 0);
		f->bins[1][i] = (iogp_bin){ idx, 1 + rnd_bits() % UINT64_MAX };
	}
	f->hists[2] = (iogp_hist_val){ 10, j, f->bins[1] };
	f->bins[2][0] = (iogp_bin){ 3, 7 };
	f->hists[3] = (iogp_hist_val){ UINT32_MAX, 1, f->bins[2] };
	m->nhists = 4;
	m->hists = f->hists;

	for (i = 0; i < 64; i++) {
		iogp_access *a = &f->access[i];

		a->id = i < 2 ? (i ? UINT32_MAX : 0) : 7 + (uint32_t)(rnd() % 2);
		a->t_ns = i < 2 ? (i ? 0 : UINT64_MAX) : rnd_bits();
		a->file = rnd() % 3 == 0 ? UINT64_MAX : rnd_bits();
		a->op = i == 5 ? UINT32_MAX : (uint32_t)(rnd() % 2);
		a->offset = rnd() % 2 ? rnd_bits() : (i ? f->access[i - 1].offset + f->access[i - 1].size : 0);
		a->size = i == 3 ? UINT64_MAX : rnd_bits();
	}
	m->naccess = 64;
	m->access = f->access;
	m->access_seen = 123456789;

	f->files[0] = (iogp_file){ 0, "" };
	f->files[1] = (iogp_file){ 5, "/scratch/\xe6\x97\xa5\xe6\x9c\xac/data \xf0\x9f\x99\x82.h5" };
	f->files[2] = (iogp_file){ 6, f->maxpath };
	f->files[3] = (iogp_file){ UINT64_MAX, "/last" };
	m->nfiles = 4;
	m->files = f->files;
	m->dropped = UINT64_MAX;
}

/* ---- raw payload builder for hand-made (hostile) messages ------------------ */

struct raw {
	uint8_t *b;
	size_t n, cap;
};

static void raw_bytes(struct raw *r, const void *p, size_t n)
{
	if (r->n + n > r->cap) {
		r->cap = (r->n + n) * 2 + 64;
		r->b = realloc(r->b, r->cap);
		ck_assert_ptr_nonnull(r->b);
	}
	memcpy(r->b + r->n, p, n);
	r->n += n;
}

static void raw_v(struct raw *r, uint64_t v)
{
	uint8_t t[10];

	raw_bytes(r, t, iogp_varint_put(t, v));
}

static void raw_hdr(struct raw *r, uint8_t kind, uint64_t seq)
{
	uint8_t h[16] = { 'I', 'O', 'G', 'W', IOGP_WIRE_VERSION, kind, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8 };

	r->n = 0;
	raw_bytes(r, h, 16);
	raw_v(r, seq);
}

static void raw_sect(struct raw *r, uint64_t tag, const struct raw *body)
{
	raw_v(r, tag);
	raw_v(r, body->n);
	raw_bytes(r, body->b, body->n);
}

static void raw_str(struct raw *r, const char *s, size_t n)
{
	raw_v(r, n);
	raw_bytes(r, s, n);
}

static int dec(const struct raw *r, iogp_msg *m, char *err, size_t errlen)
{
	return iogp_msg_decode(m, r->b, r->n, err, errlen);
}

/* payload of one section then END; the result of decoding it */
static int dec_one(uint64_t tag, const struct raw *body, char *err)
{
	struct raw r = { 0 };
	iogp_msg m;
	int rc;

	raw_hdr(&r, IOGP_DELTA, 1);
	raw_sect(&r, tag, body);
	raw_v(&r, 0);
	iogp_msg_init(&m);
	rc = dec(&r, &m, err, 256);
	if (rc < 0)
		ck_assert_msg(msg_empty(&m), "failed decode left data in the message");
	iogp_msg_free(&m);
	free(r.b);
	return rc;
}

/* ---- tests ------------------------------------------------------------------ */

START_TEST(test_varint_boundaries)
{
	static const uint64_t vals[] = {
		0, 1, 127, 128, 255, 16383, 16384, 2097151, 2097152, UINT32_MAX,
		1ull << 32, (1ull << 56) - 1, 1ull << 56, (1ull << 63) - 1, 1ull << 63,
		UINT64_MAX - 1, UINT64_MAX,
	};
	static const int64_t svals[] = { 0, 1, -1, 63, -64, 64, -65, INT32_MIN, INT32_MAX,
		INT64_MAX, INT64_MIN, INT64_MIN + 1, INT64_MAX - 1 };
	uint8_t buf[16];
	size_t i, n, want, k;
	uint64_t v;
	const uint8_t *p;

	for (i = 0; i < sizeof vals / sizeof vals[0]; i++) {
		uint64_t x = vals[i];

		want = 1;
		while (x >= 0x80) {
			x >>= 7;
			want++;
		}
		memset(buf, 0xaa, sizeof buf);
		n = iogp_varint_put(buf, vals[i]);
		ck_assert_uint_eq(n, want);
		ck_assert_uint_le(n, 10);
		ck_assert_uint_eq(buf[n], 0xaa);
		p = buf;
		ck_assert_int_eq(iogp_varint_get(&p, buf + n, &v), 0);
		ck_assert_uint_eq(v, vals[i]);
		ck_assert_ptr_eq(p, buf + n);
		for (k = 0; k < n; k++) {
			p = buf;
			ck_assert_int_eq(iogp_varint_get(&p, buf + k, &v), IOGP_ETRUNC);
			ck_assert_ptr_eq(p, buf);
		}
	}
	ck_assert_uint_eq(iogp_zigzag(0), 0);
	ck_assert_uint_eq(iogp_zigzag(-1), 1);
	ck_assert_uint_eq(iogp_zigzag(1), 2);
	ck_assert_uint_eq(iogp_zigzag(INT64_MAX), UINT64_MAX - 1);
	ck_assert_uint_eq(iogp_zigzag(INT64_MIN), UINT64_MAX);
	for (i = 0; i < sizeof svals / sizeof svals[0]; i++)
		ck_assert(iogp_unzigzag(iogp_zigzag(svals[i])) == svals[i]);

	seed_rng(11);
	for (i = 0; i < 200000; i++) {
		uint64_t x = rnd_bits();
		int64_t s = (int64_t)rnd_bits() * (rnd() % 2 ? -1 : 1);

		n = iogp_varint_put(buf, x);
		p = buf;
		CHECK(iogp_varint_get(&p, buf + n, &v) == 0 && v == x && p == buf + n,
		    "seed %" PRIu64 ": %" PRIu64, rng_seed, x);
		CHECK(iogp_unzigzag(iogp_zigzag(s)) == s, "zigzag %" PRId64, s);
		CHECK(iogp_zigzag(s) <= (uint64_t)(s < 0 ? -(s + 1) : s) * 2 + 1, "zigzag size");
	}
}
END_TEST

START_TEST(test_varint_overlong)
{
	uint8_t b[16] = { 0 };
	const uint8_t *p;
	uint64_t v;

	memset(b, 0x80, 11);
	b[10] = 0x00;
	p = b;
	ck_assert_int_eq(iogp_varint_get(&p, b + 11, &v), IOGP_ECORRUPT);
	memset(b, 0xff, 9);
	b[9] = 0x02;     /* bit 64 */
	p = b;
	ck_assert_int_eq(iogp_varint_get(&p, b + 10, &v), IOGP_ECORRUPT);
	b[9] = 0x81;     /* an 11th byte announced */
	b[10] = 0x00;
	p = b;
	ck_assert_int_eq(iogp_varint_get(&p, b + 11, &v), IOGP_ECORRUPT);
	b[9] = 0x01;
	p = b;
	ck_assert_int_eq(iogp_varint_get(&p, b + 10, &v), 0);
	ck_assert_uint_eq(v, UINT64_MAX);
	/* non-minimal forms: 0 in two bytes, 1 in three */
	b[0] = 0x80; b[1] = 0x00;
	p = b;
	ck_assert_int_eq(iogp_varint_get(&p, b + 2, &v), IOGP_ECORRUPT);
	b[0] = 0x81; b[1] = 0x80; b[2] = 0x00;
	p = b;
	ck_assert_int_eq(iogp_varint_get(&p, b + 3, &v), IOGP_ECORRUPT);
	p = b;
	ck_assert_int_eq(iogp_varint_get(&p, b, &v), IOGP_ETRUNC);
	b[0] = 0x80;
	p = b;
	ck_assert_int_eq(iogp_varint_get(&p, b + 1, &v), IOGP_ETRUNC);
	ck_assert_int_eq(iogp_varint_get(NULL, b + 1, &v), IOGP_EINVAL);
}
END_TEST

START_TEST(test_roundtrip_kinds)
{
	static struct full f;
	iogp_msg m;
	int kind, big;
	size_t n;

	seed_rng(21);
	for (big = 0; big < 2; big++) {
		for (kind = IOGP_HELLO; kind <= IOGP_BYE; kind++) {
			full_init(&f, &m, (iogp_kind)kind, big);
			roundtrip(&m, NULL);
		}
	}
	/* empty messages: 16 header bytes, 1-byte seq, END */
	for (kind = IOGP_HELLO; kind <= IOGP_BYE; kind++) {
		iogp_msg_init(&m);
		m.kind = (iogp_kind)kind;
		m.seq = 5;
		n = roundtrip(&m, NULL);
		ck_assert_uint_eq(n, IOGP_WIRE_HEADER_MIN + 1);
	}
	/* random messages */
	for (int it = 0; it < 300; it++) {
		full_init(&f, &m, (iogp_kind)(1 + rnd() % 4), 0);
		m.nlabels = (uint32_t)(rnd() % 7);
		m.nmetrics = (uint32_t)(rnd() % 11);
		m.ncounters = (uint32_t)(rnd() % 5);
		m.ngauges = (uint32_t)(rnd() % 6);
		m.nhists = (uint32_t)(rnd() % 5);
		m.naccess = (uint32_t)(rnd() % 65);
		m.nfiles = (uint32_t)(rnd() % 5);
		m.t0_ns = rnd_bits();
		m.t1_ns = m.t0_ns + rnd_bits() % (UINT64_MAX - m.t0_ns + (m.t0_ns == 0 ? 0 : 1));
		m.wall_ns = rnd_bits();
		m.dropped = rnd_bits();
		m.access_seen = rnd_bits();
		m.seq = rnd_bits();
		m.source = rnd();
		m.flags = (uint16_t)rnd();
		roundtrip(&m, NULL);
	}
}
END_TEST

START_TEST(test_roundtrip_realistic)
{
	realistic *r = realistic_new(3);
	iogp_msg m;
	uint8_t *buf;
	size_t n, total = 0;
	uint64_t seq;

	ck_assert_ptr_nonnull(r);
	iogp_msg_init(&m);
	realistic_hello(r, &m);
	ck_assert_uint_eq(m.nmetrics, 20);
	n = roundtrip(&m, &buf);
	free(buf);
	ck_assert_uint_lt(n, 1024);
	for (seq = 1; seq <= 200; seq++) {
		uint32_t i, bins = 0;

		realistic_delta(r, &m, seq);
		ck_assert_uint_eq(m.ncounters, 10);
		ck_assert_uint_eq(m.nhists, 6);
		for (i = 0; i < m.nhists; i++)
			bins += m.hists[i].nbins;
		ck_assert_uint_ge(bins, 6 * 7);
		ck_assert_uint_le(bins, 6 * 14);
		n = roundtrip(&m, &buf);
		free(buf);
		total += n;
		ck_assert_uint_lt(n, 320);
	}
	ck_assert_uint_lt(total / 200, 280);
	realistic_set_access(r, 100);
	realistic_delta(r, &m, 1);
	ck_assert_uint_eq(m.naccess, 100);
	ck_assert_uint_eq(m.nfiles, REALISTIC_NFILES);
	roundtrip(&m, NULL);
	/* sequential reads of one file: the offset costs one byte */
	{
		static iogp_access a[100];
		size_t base;
		int i;

		iogp_msg_init(&m);
		m.kind = IOGP_DELTA;
		base = (size_t)iogp_msg_encode(&m, NULL, 0);
		for (i = 0; i < 100; i++)
			a[i] = (iogp_access){ 20, 1000000000ull + (uint64_t)i * 1000, 3, IOGP_OP_READ,
			    (uint64_t)i * 65536 + (1ull << 40), 65536 };
		m.naccess = 100;
		m.access = a;
		n = roundtrip(&m, NULL);
		/* per sample: id 1, time 2, file 1, op 1, offset 1, size 3 */
		ck_assert_uint_le(n - base, 3 + 6 + 100 * 9 + 10);
	}
	realistic_snapshot(r, &m, 36000);
	roundtrip(&m, NULL);
	realistic_free(r);
}
END_TEST

/* Several valid payloads for the robustness tests. */
static size_t sample_payloads(uint8_t **out, size_t *lens, size_t max)
{
	static struct full f;
	realistic *r = realistic_new(5);
	iogp_msg m;
	size_t k = 0;

	seed_rng(31);
	realistic_set_access(r, 6);
	iogp_msg_init(&m);
	realistic_hello(r, &m);
	lens[k] = roundtrip(&m, &out[k]);
	k++;
	realistic_delta(r, &m, 1);
	lens[k] = roundtrip(&m, &out[k]);
	k++;
	realistic_snapshot(r, &m, 77);
	lens[k] = roundtrip(&m, &out[k]);
	k++;
	full_init(&f, &m, IOGP_SNAPSHOT, 0);
	lens[k] = roundtrip(&m, &out[k]);
	k++;
	iogp_msg_init(&m);
	m.kind = IOGP_BYE;
	m.seq = 300;
	lens[k] = roundtrip(&m, &out[k]);
	k++;
	ck_assert_uint_le(k, max);
	realistic_free(r);
	return k;
}

START_TEST(test_truncation)
{
	uint8_t *p[8];
	size_t lens[8], np = sample_payloads(p, lens, 8), i, cut;
	iogp_msg m;
	char err[256];

	iogp_msg_init(&m);
	for (i = 0; i < np; i++) {
		size_t len = lens[i];

		for (cut = 0; cut < len; cut++) {
			uint8_t *copy = malloc(cut + 1);   /* exact size, so ASan sees overreads */
			int r;

			memcpy(copy, p[i], cut);
			r = iogp_msg_decode(&m, copy, cut, err, sizeof err);
			CHECK(r < 0, "payload %zu cut at %zu of %zu decoded", i, cut, len);
			CHECK(err[0] != '\0', "no error text");
			CHECK(msg_empty(&m), "failed decode left data");
			if (cut >= IOGP_WIRE_HEADER_MIN && r == IOGP_ETRUNC)
				CHECK(strstr(err, "trunc") || strstr(err, "past the end") ||
				    strstr(err, "ends inside"), "%s", err);
			free(copy);
		}
		/* a prefix longer than the header still peeks */
		ck_assert_int_eq(iogp_msg_peek(p[i], 16 + 10 < len ? 16 + 10 : len, NULL, NULL, NULL, NULL), 0);
		ck_assert_int_eq(iogp_msg_peek(p[i], 10, NULL, NULL, NULL, NULL), IOGP_ETRUNC);
		free(p[i]);
	}
	iogp_msg_free(&m);
}
END_TEST

/* A decodable mutant must re-encode, and that must decode to the same. */
static int check_mutant(const uint8_t *buf, size_t len, iogp_msg *m)
{
	iogp_msg again;
	uint8_t *enc;
	long n;
	int r = iogp_msg_decode(m, buf, len, NULL, 0);

	if (r < 0) {
		CHECK(msg_empty(m), "failed decode left data");
		return r;
	}
	for (uint32_t i = 0; i < m->nmetrics; i++)
		CHECK(m->metrics[i].kind != IOGP_HISTOGRAM || iogp_bins_valid(&m->metrics[i].bins) == 0,
		    "decoded an invalid bin scheme");
	if (m->kind < IOGP_HELLO || m->kind > IOGP_BYE) {
		CHECK(!m->canonical, "an unknown kind decoded as canonical");
		return 0;
	}
	n = iogp_msg_encode(m, NULL, 0);
	CHECK(n > 0 && (size_t)n <= len, "re-encode: %ld (from %zu)", n, len);
	enc = malloc((size_t)n);
	CHECK(iogp_msg_encode(m, enc, (size_t)n) == n, "re-encode into %ld bytes", n);
	/* the replay writer stores transforms on the strength of this flag */
	CHECK(m->canonical == ((size_t)n == len && !memcmp(enc, buf, len)),
	    "canonical %d, but the encoder %s those bytes", m->canonical,
	    m->canonical ? "does not write" : "writes");
	iogp_msg_init(&again);
	CHECK(iogp_msg_decode(&again, enc, (size_t)n, NULL, 0) == 0, "re-decode");
	CHECK(msg_diff(m, &again) == NULL, "mutant re-encodes differently: %s",
	    msg_diff(m, &again));
	iogp_msg_free(&again);
	free(enc);
	return 0;
}

START_TEST(test_bitflips)
{
	realistic *r = realistic_new(9);
	iogp_msg m, d;
	uint8_t *p, *copy;
	size_t len, i, bad = 0, total = 0;
	int bit;

	/* small: a DELTA with access samples and files */
	realistic_set_access(r, 4);
	iogp_msg_init(&m);
	iogp_msg_init(&d);
	realistic_delta(r, &m, 1);
	len = roundtrip(&m, &p);
	copy = malloc(len);
	for (i = 0; i < len; i++) {
		for (bit = 0; bit < 8; bit++) {
			memcpy(copy, p, len);
			copy[i] ^= (uint8_t)(1u << bit);
			bad += check_mutant(copy, len, &d) < 0;
			total++;
		}
	}
	ck_assert_uint_gt(bad, 0);
	ck_assert_uint_lt(bad, total);
	/* every value of each header and first-section byte */
	for (i = 0; i < 24 && i < len; i++) {
		for (bit = 0; bit < 256; bit++) {
			memcpy(copy, p, len);
			copy[i] = (uint8_t)bit;
			check_mutant(copy, len, &d);
		}
	}
	free(copy);
	free(p);

	/* bigger messages: random multi-byte mutations */
	{
		uint8_t *ps[8];
		size_t lens[8], np = sample_payloads(ps, lens, 8), k;

		seed_rng(41);
		for (k = 0; k < np; k++) {
			long n = (long)lens[k];

			len = lens[k];
			copy = malloc(len);
			for (i = 0; i < len * 8; i++) {
				memcpy(copy, ps[k], len);
				copy[i / 8] ^= (uint8_t)(1u << (i % 8));
				check_mutant(copy, len, &d);
			}
			for (i = 0; i < 10000; i++) {
				int nm = 1 + (int)(rnd() % 4), j;

				memcpy(copy, ps[k], len);
				for (j = 0; j < nm; j++)
					copy[rnd() % (uint64_t)n] = (uint8_t)rnd();
				check_mutant(copy, len, &d);
				/* and shorter, so the end falls anywhere */
				check_mutant(copy, (size_t)(rnd() % (uint64_t)n), &d);
			}
			free(copy);
			free(ps[k]);
		}
	}
	/* pure garbage after a valid header */
	{
		uint8_t g[512];

		for (i = 0; i < 20000; i++) {
			size_t n = IOGP_WIRE_HEADER_MIN + rnd() % 400, j;

			for (j = 0; j < n; j++)
				g[j] = (uint8_t)(rnd() % 4 ? rnd() % 16 : rnd());
			memcpy(g, "IOGW\x01\x02", 6);
			check_mutant(g, n, &d);
		}
	}
	iogp_msg_free(&d);
	realistic_free(r);
}
END_TEST

START_TEST(test_limits)
{
	struct raw b = { 0 };
	char err[256], big[IOGP_MAX_PATH + 2];
	uint32_t i;

	memset(big, 'x', sizeof big);
	/* labels: 64 fine, 65 too many */
	for (i = 64; i <= 65; i++) {
		uint32_t j;

		b.n = 0;
		raw_v(&b, i);
		for (j = 0; j < i; j++) {
			raw_str(&b, "k", 1);
			raw_str(&b, "v", 1);
		}
		ck_assert_int_eq(dec_one(1, &b, err), i == 64 ? 0 : IOGP_ELIMIT);
	}
	ck_assert_msg(strstr(err, "labels") != NULL, "%s", err);
	/* strings one byte over */
	{
		static const struct { size_t key, value; int rc; } c[] = {
			{ IOGP_MAX_KEY, IOGP_MAX_VALUE, 0 },
			{ IOGP_MAX_KEY + 1, 1, IOGP_ELIMIT },
			{ 1, IOGP_MAX_VALUE + 1, IOGP_ELIMIT },
		};
		for (i = 0; i < 3; i++) {
			b.n = 0;
			raw_v(&b, 1);
			raw_str(&b, big, c[i].key);
			raw_str(&b, big, c[i].value);
			ck_assert_int_eq(dec_one(1, &b, err), c[i].rc);
		}
	}
	for (i = 0; i < 4; i++) {
		size_t nl = i == 1 ? IOGP_MAX_NAME + 1 : 4, ul = i == 2 ? IOGP_MAX_UNIT + 1 : 2;

		b.n = 0;
		raw_v(&b, 1);
		raw_v(&b, 3);
		raw_v(&b, IOGP_GAUGE);
		raw_str(&b, big, i == 3 ? IOGP_MAX_NAME : nl);
		raw_str(&b, big, i == 3 ? IOGP_MAX_UNIT : ul);
		ck_assert_int_eq(dec_one(2, &b, err), i == 0 || i == 3 ? 0 : IOGP_ELIMIT);
	}
	for (i = 0; i < 2; i++) {
		b.n = 0;
		raw_v(&b, 1);
		raw_v(&b, 3);
		raw_str(&b, big, IOGP_MAX_PATH + i);
		ck_assert_int_eq(dec_one(8, &b, err), i == 0 ? 0 : IOGP_ELIMIT);
	}
	/* histogram bins: 65536 fine, 65537 too many */
	for (i = 0; i < 2; i++) {
		uint32_t j, nb = IOGP_MAX_HIST_BINS + i;

		b.n = 0;
		raw_v(&b, 1);
		raw_v(&b, 3);
		raw_v(&b, nb);
		for (j = 0; j < nb; j++) {
			raw_v(&b, 0);
			raw_v(&b, 1);
		}
		ck_assert_int_eq(dec_one(6, &b, err), i == 0 ? 0 : IOGP_ELIMIT);
	}
	ck_assert_msg(strstr(err, "65537") != NULL, "%s", err);
	/* counts past the limits: metrics, counters, access, files */
	{
		static const struct { unsigned tag; uint32_t n; } c[] = {
			{ 2, IOGP_MAX_METRICS + 1 }, { 4, IOGP_MAX_METRICS + 1 },
			{ 5, IOGP_MAX_METRICS + 1 }, { 6, IOGP_MAX_METRICS + 1 },
			{ 7, IOGP_MAX_ACCESS + 1 }, { 8, IOGP_MAX_FILES + 1 },
		};
		for (i = 0; i < sizeof c / sizeof c[0]; i++) {
			b.n = 0;
			raw_v(&b, c[i].n);
			ck_assert_int_eq(dec_one(c[i].tag, &b, err), IOGP_ELIMIT);
		}
	}
	/* edges: 1025 too many, 0 invalid */
	for (i = 0; i < 2; i++) {
		b.n = 0;
		raw_v(&b, 1);
		raw_v(&b, 1);
		raw_v(&b, IOGP_HISTOGRAM);
		raw_str(&b, "h", 1);
		raw_str(&b, "", 0);
		raw_v(&b, IOGP_BINS_EDGES);
		raw_v(&b, i ? 0 : IOGP_MAX_EDGES + 1);
		for (uint32_t j = 0; j < IOGP_MAX_EDGES + 1; j++)
			raw_v(&b, 1);
		ck_assert_int_eq(dec_one(2, &b, err), i ? IOGP_ECORRUPT : IOGP_ELIMIT);
	}
	/* whole payload over the limit */
	{
		size_t n = IOGP_MAX_PAYLOAD + 1;
		uint8_t *p = calloc(1, n);
		iogp_msg m;

		memcpy(p, "IOGW\x01\x02", 6);
		iogp_msg_init(&m);
		ck_assert_int_eq(iogp_msg_decode(&m, p, n, err, sizeof err), IOGP_ELIMIT);
		iogp_msg_free(&m);
		free(p);
	}
	free(b.b);
}
END_TEST

START_TEST(test_decode_strict)
{
	struct raw b = { 0 }, r = { 0 };
	iogp_msg m;
	char err[256];

	iogp_msg_init(&m);
	/* NUL inside a string */
	raw_v(&b, 1);
	raw_str(&b, "a\0b", 3);
	raw_str(&b, "v", 1);
	ck_assert_int_eq(dec_one(1, &b, err), IOGP_ECORRUPT);
	ck_assert_msg(strstr(err, "NUL") != NULL, "%s", err);
	/* empty bin */
	b.n = 0;
	raw_v(&b, 1); raw_v(&b, 3); raw_v(&b, 2);
	raw_v(&b, 5); raw_v(&b, 1); raw_v(&b, 0); raw_v(&b, 0);
	ck_assert_int_eq(dec_one(6, &b, err), IOGP_ECORRUPT);
	/* bin index overflow: UINT64_MAX then another */
	b.n = 0;
	raw_v(&b, 1); raw_v(&b, 3); raw_v(&b, 2);
	raw_v(&b, UINT64_MAX); raw_v(&b, 1); raw_v(&b, 0); raw_v(&b, 1);
	ck_assert_int_eq(dec_one(6, &b, err), IOGP_ECORRUPT);
	b.n = 0;
	raw_v(&b, 1); raw_v(&b, 3); raw_v(&b, 2);
	raw_v(&b, UINT64_MAX - 1); raw_v(&b, 1); raw_v(&b, 1); raw_v(&b, 1);
	ck_assert_int_eq(dec_one(6, &b, err), IOGP_ECORRUPT);
	b.n = 0;
	raw_v(&b, 1); raw_v(&b, 3); raw_v(&b, 2);
	raw_v(&b, UINT64_MAX - 1); raw_v(&b, 1); raw_v(&b, 0); raw_v(&b, 1);
	ck_assert_int_eq(dec_one(6, &b, err), 0);
	/* id past 32 bits, and ids colliding by overflow */
	b.n = 0;
	raw_v(&b, 1); raw_v(&b, 1ull << 32); raw_v(&b, 1);
	ck_assert_int_eq(dec_one(4, &b, err), IOGP_ECORRUPT);
	b.n = 0;
	raw_v(&b, 2); raw_v(&b, UINT32_MAX); raw_v(&b, 1); raw_v(&b, 0); raw_v(&b, 1);
	ck_assert_int_eq(dec_one(4, &b, err), IOGP_ECORRUPT);
	b.n = 0;
	raw_v(&b, 2); raw_v(&b, UINT64_MAX); raw_str(&b, "", 0); raw_v(&b, 0); raw_str(&b, "", 0);
	ck_assert_int_eq(dec_one(8, &b, err), IOGP_ECORRUPT);
	/* metric kind and bin scheme */
	for (int k = 0; k < 6; k++) {
		static const int kinds[] = { 0, 5, 3, 3, 3, 3 };
		static const int schemes[] = { 0, 0, 0, 9, 0, 2 };

		b.n = 0;
		raw_v(&b, 1); raw_v(&b, 1); raw_v(&b, (uint64_t)kinds[k]);
		raw_str(&b, "m", 1); raw_str(&b, "", 0);
		raw_v(&b, (uint64_t)schemes[k]);
		raw_v(&b, k == 4 ? 9 : 0);   /* native k 0 and 9, fixed width 0 */
		if (k == 5)
			raw_v(&b, 0);
		ck_assert_int_eq(dec_one(2, &b, err), IOGP_ECORRUPT);
	}
	/* edges that overflow */
	b.n = 0;
	raw_v(&b, 1); raw_v(&b, 1); raw_v(&b, 3); raw_str(&b, "m", 1); raw_str(&b, "", 0);
	raw_v(&b, IOGP_BINS_EDGES); raw_v(&b, 2); raw_v(&b, UINT64_MAX); raw_v(&b, 0);
	ck_assert_int_eq(dec_one(2, &b, err), IOGP_ECORRUPT);
	/* interval: t1 past 2^64 */
	b.n = 0;
	raw_v(&b, UINT64_MAX); raw_v(&b, 1); raw_v(&b, 0);
	ck_assert_int_eq(dec_one(3, &b, err), IOGP_ECORRUPT);
	/* access: id past 32 bits, op past 32 bits */
	b.n = 0;
	raw_v(&b, 1); raw_v(&b, iogp_zigzag(-1)); raw_v(&b, 0); raw_v(&b, 0); raw_v(&b, 0);
	raw_v(&b, 0); raw_v(&b, 0);
	ck_assert_int_eq(dec_one(7, &b, err), IOGP_ECORRUPT);
	b.n = 0;
	raw_v(&b, 1); raw_v(&b, 0); raw_v(&b, 0); raw_v(&b, 0); raw_v(&b, 1ull << 32);
	raw_v(&b, 0); raw_v(&b, 0);
	ck_assert_int_eq(dec_one(7, &b, err), IOGP_ECORRUPT);
	/* a section with bytes left over; one that ends early */
	b.n = 0;
	raw_v(&b, 7);
	raw_v(&b, 0);
	ck_assert_int_eq(dec_one(9, &b, err), IOGP_ECORRUPT);
	ck_assert_msg(strstr(err, "dropped") != NULL, "%s", err);
	b.n = 0;
	raw_v(&b, 1); raw_v(&b, 3);
	ck_assert_int_lt(dec_one(4, &b, err), 0);
	/* count that cannot fit in the body */
	b.n = 0;
	raw_v(&b, 100); raw_v(&b, 1);
	ck_assert_int_eq(dec_one(4, &b, err), IOGP_ECORRUPT);
	/* an empty known section */
	b.n = 0;
	ck_assert_int_lt(dec_one(4, &b, err), 0);
	raw_v(&b, 0);
	ck_assert_int_eq(dec_one(4, &b, err), 0);

	/* framing: repeated section, bytes after END, no END, kind 0 */
	b.n = 0;
	raw_v(&b, 5);
	raw_hdr(&r, IOGP_DELTA, 1);
	raw_sect(&r, 9, &b);
	raw_sect(&r, 9, &b);
	raw_v(&r, 0);
	ck_assert_int_eq(dec(&r, &m, err, sizeof err), IOGP_ECORRUPT);
	ck_assert(msg_empty(&m));
	raw_hdr(&r, IOGP_DELTA, 1);
	raw_sect(&r, 9, &b);
	raw_v(&r, 0);
	ck_assert_int_eq(dec(&r, &m, err, sizeof err), 0);
	ck_assert_uint_eq(m.dropped, 5);
	raw_v(&r, 0);
	ck_assert_int_eq(dec(&r, &m, err, sizeof err), IOGP_ECORRUPT);
	r.n -= 2;
	ck_assert_int_eq(dec(&r, &m, err, sizeof err), IOGP_ETRUNC);
	raw_hdr(&r, 0, 1);
	raw_v(&r, 0);
	ck_assert_int_eq(dec(&r, &m, err, sizeof err), IOGP_ECORRUPT);
	/* overlong seq */
	raw_hdr(&r, IOGP_DELTA, 1);
	r.n--;
	raw_bytes(&r, "\x81\x00\x00", 3);
	ck_assert_int_eq(dec(&r, &m, err, sizeof err), IOGP_ECORRUPT);
	/* a section length past the end */
	raw_hdr(&r, IOGP_DELTA, 1);
	raw_v(&r, 9);
	raw_v(&r, 1000);
	raw_v(&r, 0);
	ck_assert_int_eq(dec(&r, &m, err, sizeof err), IOGP_ETRUNC);
	/* NULL arguments; a decode works after all the failures */
	ck_assert_int_eq(iogp_msg_decode(NULL, r.b, r.n, NULL, 0), IOGP_EINVAL);
	ck_assert_int_eq(iogp_msg_decode(&m, NULL, 0, err, sizeof err), IOGP_EINVAL);
	raw_hdr(&r, IOGP_BYE, 9);
	raw_v(&r, 0);
	ck_assert_int_eq(dec(&r, &m, NULL, 0), 0);
	ck_assert_uint_eq(m.seq, 9);
	ck_assert_uint_eq(m.kind, IOGP_BYE);
	ck_assert_uint_eq(m.source, 0x0807060504030201ull);
	iogp_msg_free(&m);
	free(b.b);
	free(r.b);
}
END_TEST

START_TEST(test_unknown_section)
{
	realistic *rs = realistic_new(4);
	iogp_msg m, d;
	uint8_t *p;
	size_t len, hdr;
	struct raw r = { 0 }, body = { 0 };
	char err[256];
	uint64_t seq;
	const uint8_t *q;

	iogp_msg_init(&m);
	iogp_msg_init(&d);
	realistic_delta(rs, &m, 2);
	len = roundtrip(&m, &p);
	/* header + seq, then an unknown section, the original sections, another
	 * unknown (empty) section and a large-tagged one before END */
	q = p + 16;
	ck_assert_int_eq(iogp_varint_get(&q, p + len, &seq), 0);
	hdr = (size_t)(q - p);
	raw_bytes(&r, p, hdr);
	raw_bytes(&body, "\x01\x02\x03\x00", 4);
	raw_sect(&r, 41, &body);
	raw_bytes(&r, p + hdr, len - hdr - 1);
	body.n = 0;
	raw_sect(&r, 42, &body);
	raw_bytes(&body, "hello", 5);
	raw_sect(&r, UINT64_MAX, &body);
	raw_sect(&r, 41, &body);   /* unknown tags may repeat */
	raw_v(&r, 0);
	ck_assert_int_eq(dec(&r, &d, err, sizeof err), 0);
	ck_assert_msg(msg_diff(&m, &d) == NULL, "%s", msg_diff(&m, &d));
	ck_assert(!d.canonical);
	/* an unknown section still has to fit */
	r.n -= 1 + 7;
	raw_v(&r, 41);
	raw_v(&r, 100);
	raw_v(&r, 0);
	ck_assert_int_eq(dec(&r, &d, err, sizeof err), IOGP_ETRUNC);
	free(p);
	free(r.b);
	free(body.b);
	iogp_msg_free(&d);
	realistic_free(rs);
}
END_TEST

/* Forms that decode but that the encoder does not write: each decodes as
 * not canonical, and the encoder's own form of the same message as
 * canonical (the replay writer stores transforms on that flag). */
START_TEST(test_canonical_forms)
{
	/* section bodies: (tag, bytes) pairs, END after the last */
	static const struct { const char *what; uint8_t b[12]; size_t n; int canon; } forms[] = {
		{ "an empty counter list", { 4, 1, 0 }, 3, 0 },
		{ "an interval of zeros", { 3, 3, 0, 0, 0 }, 5, 0 },
		{ "dropped 0", { 9, 1, 0 }, 3, 0 },
		{ "access_seen 0", { 10, 1, 0 }, 3, 0 },
		{ "counters before the interval", { 4, 3, 1, 1, 5, 3, 3, 1, 2, 3 }, 10, 0 },
		{ "the interval, then counters", { 3, 3, 1, 2, 3, 4, 3, 1, 1, 5 }, 10, 1 },
		{ "dropped 1", { 9, 1, 1 }, 3, 1 },
	};
	iogp_msg m;
	char err[256];

	iogp_msg_init(&m);
	for (size_t k = 0; k < sizeof forms / sizeof forms[0]; k++) {
		struct raw r = { 0 };
		uint8_t *enc;

		raw_hdr(&r, IOGP_DELTA, 1);
		raw_bytes(&r, forms[k].b, forms[k].n);
		raw_v(&r, 0);
		ck_assert_msg(dec(&r, &m, err, sizeof err) == 0, "%s: %s", forms[k].what, err);
		ck_assert_msg(m.canonical == forms[k].canon, "%s: canonical %d", forms[k].what,
		    m.canonical);
		long n = iogp_msg_encode(&m, NULL, 0);
		ck_assert_int_gt(n, 0);
		enc = malloc((size_t)n);
		ck_assert_int_eq(iogp_msg_encode(&m, enc, (size_t)n), n);
		ck_assert_int_eq(forms[k].canon, (size_t)n == r.n && !memcmp(enc, r.b, r.n));
		ck_assert_int_eq(iogp_msg_decode(&m, enc, (size_t)n, err, sizeof err), 0);
		ck_assert(m.canonical);
		free(enc);
		free(r.b);
	}
	iogp_msg_free(&m);
}
END_TEST

START_TEST(test_unknown_kind)
{
	realistic *rs = realistic_new(4);
	iogp_msg m, d;
	uint8_t *p;
	size_t len;
	char err[256], topic[64];
	iogp_kind kind;

	iogp_msg_init(&m);
	iogp_msg_init(&d);
	realistic_snapshot(rs, &m, 10);
	len = roundtrip(&m, &p);
	p[5] = 77;
	ck_assert_int_eq(iogp_msg_decode(&d, p, len, err, sizeof err), 0);
	ck_assert_int_eq((int)d.kind, 77);
	ck_assert(!d.canonical);
	d.kind = m.kind;
	ck_assert_msg(msg_diff(&m, &d) == NULL, "%s", msg_diff(&m, &d));
	ck_assert_int_eq(iogp_msg_peek(p, len, &kind, NULL, NULL, NULL), 0);
	ck_assert_int_eq((int)kind, 77);
	ck_assert_str_eq(iogp_kind_name(kind), "unknown");
	ck_assert_int_gt(iogp_topic(topic, sizeof topic, kind, 1), 0);
	ck_assert_str_eq(topic, "iog1/unknown/0000000000000001");
	p[5] = 255;
	ck_assert_int_eq(iogp_msg_decode(&d, p, len, err, sizeof err), 0);
	p[5] = 0;
	ck_assert_int_eq(iogp_msg_decode(&d, p, len, err, sizeof err), IOGP_ECORRUPT);
	/* the encoder only writes kinds it knows */
	m.kind = (iogp_kind)5;
	ck_assert_int_eq(iogp_msg_encode(&m, p, len), IOGP_EINVAL);
	m.kind = (iogp_kind)0;
	ck_assert_int_eq(iogp_msg_encode(&m, NULL, 0), IOGP_EINVAL);
	free(p);
	iogp_msg_free(&d);
	realistic_free(rs);
}
END_TEST

START_TEST(test_version_magic)
{
	iogp_msg m;
	uint8_t *p;
	size_t len;
	char err[256];

	iogp_msg_init(&m);
	m.kind = IOGP_HELLO;
	m.seq = 1;
	len = roundtrip(&m, &p);
	ck_assert_int_eq(memcmp(p, "IOGW\x01\x01", 6), 0);
	p[4] = 2;
	ck_assert_int_eq(iogp_msg_decode(&m, p, len, err, sizeof err), IOGP_EVERSION);
	ck_assert_msg(strstr(err, "version 2") != NULL, "%s", err);
	ck_assert_int_eq(iogp_msg_peek(p, len, NULL, NULL, NULL, NULL), IOGP_EVERSION);
	p[4] = 0;
	ck_assert_int_eq(iogp_msg_decode(&m, p, len, err, sizeof err), IOGP_EVERSION);
	p[4] = 1;
	p[0] = 'X';
	ck_assert_int_eq(iogp_msg_decode(&m, p, len, err, sizeof err), IOGP_EMAGIC);
	ck_assert_int_eq(iogp_msg_peek(p, len, NULL, NULL, NULL, NULL), IOGP_EMAGIC);
	ck_assert_int_eq(iogp_msg_decode(&m, (const uint8_t *)"GET / HTTP/1.1\r\n\r\n", 18,
	    err, sizeof err), IOGP_EMAGIC);
	p[0] = 'I';
	ck_assert_int_eq(iogp_msg_decode(&m, p, len, err, sizeof err), 0);
	free(p);
	iogp_msg_free(&m);
}
END_TEST

START_TEST(test_encode_cap)
{
	static struct full f;
	iogp_msg m, d;
	uint8_t *buf;
	long n, r;
	size_t cap;

	seed_rng(51);
	full_init(&f, &m, IOGP_SNAPSHOT, 1);
	n = iogp_msg_encode(&m, NULL, 0);
	ck_assert_int_gt(n, 10000);
	ck_assert_int_eq(iogp_msg_encode(&m, (uint8_t *)&cap, 0), n);
	buf = malloc((size_t)n + 64);
	for (cap = 1; cap < (size_t)n; cap += cap < 300 ? 1 : 97) {
		memset(buf, 0xa5, (size_t)n + 64);
		r = iogp_msg_encode(&m, buf, cap);
		CHECK(r == IOGP_ELIMIT, "cap %zu: %ld", cap, r);
		for (size_t i = cap; i < (size_t)n + 64; i++)
			CHECK(buf[i] == 0xa5, "cap %zu: byte %zu written", cap, i);
	}
	ck_assert_int_eq(iogp_msg_encode(&m, buf, (size_t)n - 1), IOGP_ELIMIT);
	ck_assert_int_eq(iogp_msg_encode(&m, buf, (size_t)n + 64), n);
	iogp_msg_init(&d);
	ck_assert_int_eq(iogp_msg_decode(&d, buf, (size_t)n, NULL, 0), 0);
	ck_assert_ptr_null(msg_diff(&m, &d));
	free(buf);

	/* a short last section: its 3-byte length reservation would run past an
	 * exactly sized buffer */
	{
		iogp_counter_val c = { 1, 2 };
		uint8_t small[32];

		iogp_msg_init(&m);
		m.kind = IOGP_DELTA;
		m.ncounters = 1;
		m.counters = &c;
		n = iogp_msg_encode(&m, NULL, 0);
		ck_assert_int_eq(n, 17 + 5 + 1);
		memset(small, 0xa5, sizeof small);
		ck_assert_int_eq(iogp_msg_encode(&m, small, (size_t)n), n);
		ck_assert_uint_eq(small[n], 0xa5);
		ck_assert_uint_eq(small[n - 1], 0);
		ck_assert_int_eq(iogp_msg_encode(&m, small, (size_t)n - 1), IOGP_ELIMIT);
		ck_assert_uint_eq(small[n - 1], 0);   /* the earlier END byte, past cap */
		ck_assert_int_eq(iogp_msg_encode(&m, small, (size_t)n), n);
		ck_assert_int_eq(iogp_msg_decode(&d, small, (size_t)n, NULL, 0), 0);
		ck_assert_uint_eq(d.counters[0].value, 2);
	}

	/* sections over 2 MiB need a 4-byte length (the encoder moves the body) */
	{
		static iogp_bin bins[IOGP_MAX_HIST_BINS];
		iogp_hist_val h[4];
		uint32_t i;

		for (i = 0; i < IOGP_MAX_HIST_BINS; i++)
			bins[i] = (iogp_bin){ (uint64_t)i * 3, UINT64_MAX - i };
		for (i = 0; i < 4; i++)
			h[i] = (iogp_hist_val){ i, IOGP_MAX_HIST_BINS, bins };
		iogp_msg_init(&m);
		m.kind = IOGP_DELTA;
		m.nhists = 4;
		m.hists = h;
		n = roundtrip(&m, NULL);
		ck_assert_int_gt(n, 2 << 20);
		ck_assert_int_le(n, IOGP_MAX_PAYLOAD);
		/* just too small: the body fits where it was written but not where
		 * the 4-byte length moves it */
		buf = malloc((size_t)n + 64);
		for (cap = (size_t)n - 3; cap < (size_t)n; cap++) {
			memset(buf + cap, 0xa5, (size_t)n + 64 - cap);
			ck_assert_int_eq(iogp_msg_encode(&m, buf, cap), IOGP_ELIMIT);
			for (size_t k = cap; k < (size_t)n + 64; k++)
				CHECK(buf[k] == 0xa5, "cap %zu: byte %zu written", cap, k);
		}
		free(buf);
		/* over the payload limit: invalid rather than "buffer too small" */
		{
			static iogp_hist_val hh[8];

			for (i = 0; i < 8; i++)
				hh[i] = (iogp_hist_val){ i, IOGP_MAX_HIST_BINS, bins };
			m.nhists = 8;
			m.hists = hh;
			ck_assert_int_eq(iogp_msg_encode(&m, NULL, 0), IOGP_EINVAL);
		}
	}
	iogp_msg_free(&d);
}
END_TEST

START_TEST(test_encode_invalid)
{
	static struct full f;
	iogp_msg m;
	int c;

	for (c = 0; c < 40; c++) {
		seed_rng(61);
		full_init(&f, &m, IOGP_SNAPSHOT, 0);
		ck_assert_int_gt(iogp_msg_encode(&m, NULL, 0), 0);
		switch (c) {
		case 0: f.bins[1][3].idx = f.bins[1][2].idx; break;        /* duplicate bin */
		case 1: f.bins[1][3].idx = f.bins[1][2].idx - 1; break;    /* unsorted */
		case 2: f.bins[1][4].count = 0; break;
		case 3: m.kind = (iogp_kind)0; break;
		case 4: f.metrics[0].kind = (iogp_metric_kind)0; break;
		case 5: f.metrics[0].kind = (iogp_metric_kind)5; break;
		case 6: f.metrics[3].bins.k = 0; break;
		case 7: f.metrics[3].bins.k = IOGP_NATIVE_K_MAX + 1; break;
		case 8: f.metrics[6].bins.width = 0; break;
		case 9: f.metrics[7].bins.nedges = 0; break;
		case 10: f.metrics[8].bins.edges[2] = f.metrics[8].bins.edges[1]; break;
		case 11: f.metrics[3].bins.kind = (iogp_bins_kind)7; break;
		case 12: f.metrics[4].id = f.metrics[3].id; break;
		case 13: f.counters[2].id = 0; break;
		case 14: f.gauges[1].id = f.gauges[0].id; break;
		case 15: f.hists[1].id = 1; break;
		case 16: f.files[1].id = 0; break;
		case 17: m.t1_ns = m.t0_ns - 1; break;
		case 18: f.metrics[1].name = NULL; break;
		case 19: f.labels[2].key = NULL; break;
		case 20: f.labels[2].value = NULL; break;
		case 21: f.files[2].path = NULL; break;
		case 22: m.labels = NULL; break;
		case 23: m.nlabels = IOGP_MAX_LABELS + 1; break;
		case 24: f.labels[0].key = f.maxvalue; break;               /* key too long */
		case 25: f.metrics[1].unit = f.maxname; break;
		case 26: f.hists[2].nbins = IOGP_MAX_HIST_BINS + 1; break;
		case 27: f.hists[1].nbins = 1; break;                       /* NULL bins */
		case 28: m.naccess = IOGP_MAX_ACCESS + 1; break;
		case 29: m.nfiles = IOGP_MAX_FILES + 1; break;
		case 30: m.nmetrics = IOGP_MAX_METRICS + 1; break;
		case 31: m.counters = NULL; break;
		case 32: f.bins[0][0].idx = UINT64_MAX; break;              /* nothing after max */
		case 33: f.files[3].id = UINT64_MAX; f.files[2].id = UINT64_MAX; break;
		case 34: m.kind = (iogp_kind)5; break;
		case 35: f.metrics[9].id = UINT32_MAX - 1; break;
		case 36: m.gauges = NULL; break;
		case 37: m.hists = NULL; break;
		case 38: m.access = NULL; break;
		case 39: m.metrics = NULL; break;
		}
		ck_assert_msg(iogp_msg_encode(&m, NULL, 0) == IOGP_EINVAL, "case %d", c);
	}
	ck_assert_int_eq(iogp_msg_encode(NULL, NULL, 0), IOGP_EINVAL);
}
END_TEST

START_TEST(test_topic_peek_label)
{
	char t[64];
	realistic *rs = realistic_new(8);
	iogp_msg m;
	uint8_t *p;
	size_t len;
	iogp_kind kind;
	uint16_t flags;
	uint64_t source, seq;

	ck_assert_int_eq(iogp_topic(t, sizeof t, IOGP_DELTA, 0xff), 27);
	ck_assert_str_eq(t, "iog1/delta/00000000000000ff");
	ck_assert_int_eq(iogp_topic(t, sizeof t, IOGP_HELLO, 0x0123456789abcdefull), 27);
	ck_assert_str_eq(t, "iog1/hello/0123456789abcdef");
	ck_assert_int_eq(iogp_topic(t, sizeof t, IOGP_SNAPSHOT, UINT64_MAX), 30);
	ck_assert_str_eq(t, "iog1/snapshot/ffffffffffffffff");
	ck_assert_int_eq(iogp_topic(t, sizeof t, IOGP_BYE, 0), 25);
	ck_assert_str_eq(t, "iog1/bye/0000000000000000");
	ck_assert_int_eq(iogp_topic(t, 25, IOGP_BYE, 0), IOGP_ELIMIT);
	ck_assert_int_eq(iogp_topic(t, 26, IOGP_BYE, 0), 25);
	ck_assert_str_eq(iogp_kind_name(IOGP_SNAPSHOT), "snapshot");

	iogp_msg_init(&m);
	realistic_snapshot(rs, &m, 12345);
	m.flags = IOGP_F_FINAL | IOGP_F_KEYFRAME;
	len = roundtrip(&m, &p);
	ck_assert_int_eq(iogp_msg_peek(p, len, &kind, &flags, &source, &seq), 0);
	ck_assert_int_eq(kind, IOGP_SNAPSHOT);
	ck_assert_uint_eq(flags, IOGP_F_FINAL | IOGP_F_KEYFRAME);
	ck_assert_uint_eq(source, realistic_source(rs));
	ck_assert_uint_eq(seq, 12345);
	iogp_msg_init(&m);
	ck_assert_int_eq(iogp_msg_decode(&m, p, len, NULL, 0), 0);
	ck_assert_str_eq(iogp_msg_label(&m, "host"), "node0008");
	ck_assert_str_eq(iogp_msg_label(&m, "rank"), "8");
	ck_assert_ptr_null(iogp_msg_label(&m, "nope"));
	ck_assert_ptr_null(iogp_msg_label(&m, NULL));
	iogp_msg_free(&m);
	ck_assert_ptr_null(m.arena);
	ck_assert_uint_eq(m.nlabels, 0);
	free(p);
	realistic_free(rs);
}
END_TEST

/* PEERS (MPI sends by destination): round trip, and an old reader's view:
 * a message with the section decodes the same apart from it. */
START_TEST(test_peers_roundtrip)
{
	iogp_peer pv[3] = { { .rank = 0, .msgs = 1, .bytes = 0 },
	                    { .rank = 7, .msgs = 1000, .bytes = 4096000 },
	                    { .rank = IOGP_MAX_PEER_RANK - 1, .msgs = UINT64_MAX, .bytes = UINT64_MAX } };
	iogp_msg m = { .kind = IOGP_DELTA, .source = 9, .seq = 3, .npeers = 3, .peers = pv }, d;
	uint8_t buf[256];
	char err[256];

	long n = iogp_msg_encode(&m, buf, sizeof buf);
	ck_assert_int_gt(n, 0);
	iogp_msg_init(&d);
	ck_assert_int_eq(iogp_msg_decode(&d, buf, (size_t)n, err, sizeof err), 0);
	ck_assert_uint_eq(d.npeers, 3);
	for (int i = 0; i < 3; i++) {
		ck_assert_uint_eq(d.peers[i].rank, pv[i].rank);
		ck_assert_uint_eq(d.peers[i].msgs, pv[i].msgs);
		ck_assert_uint_eq(d.peers[i].bytes, pv[i].bytes);
	}
	/* the encoder refuses what the decoder would */
	iogp_peer bad[2] = { { .rank = 5, .msgs = 1 }, { .rank = 5, .msgs = 1 } };
	iogp_msg b = m;
	b.peers = bad;
	b.npeers = 2;
	ck_assert_int_eq(iogp_msg_encode(&b, buf, sizeof buf), IOGP_EINVAL);   /* not ascending */
	bad[1].rank = 6;
	bad[1].msgs = 0;
	ck_assert_int_eq(iogp_msg_encode(&b, buf, sizeof buf), IOGP_EINVAL);   /* no messages */
	bad[1].msgs = 1;
	bad[1].rank = IOGP_MAX_PEER_RANK;
	ck_assert_int_eq(iogp_msg_encode(&b, buf, sizeof buf), IOGP_EINVAL);   /* rank too large */
	iogp_msg_free(&d);
}
END_TEST

/* Hostile PEERS sections: each is refused with its reason, nothing kept. */
START_TEST(test_peers_hostile)
{
	char err[256];
	struct raw b = { 0 };

	/* a count past the limit */
	raw_v(&b, IOGP_MAX_PEERS + 1);
	ck_assert_int_eq(dec_one(13, &b, err), IOGP_ELIMIT);
	/* a count the body cannot hold (3 bytes at least each) */
	b.n = 0;
	raw_v(&b, 1000);
	raw_v(&b, 0), raw_v(&b, 1), raw_v(&b, 1);
	ck_assert_int_eq(dec_one(13, &b, err), IOGP_ECORRUPT);
	/* a destination without messages */
	b.n = 0;
	raw_v(&b, 1);
	raw_v(&b, 4), raw_v(&b, 0), raw_v(&b, 10);
	ck_assert_int_eq(dec_one(13, &b, err), IOGP_ECORRUPT);
	ck_assert_msg(strstr(err, "peers") != NULL, "%s", err);
	/* a rank past the limit, directly and by gaps */
	b.n = 0;
	raw_v(&b, 1);
	raw_v(&b, IOGP_MAX_PEER_RANK), raw_v(&b, 1), raw_v(&b, 1);
	ck_assert_int_eq(dec_one(13, &b, err), IOGP_ECORRUPT);
	b.n = 0;
	raw_v(&b, 2);
	raw_v(&b, IOGP_MAX_PEER_RANK - 1), raw_v(&b, 1), raw_v(&b, 1);
	raw_v(&b, 0), raw_v(&b, 1), raw_v(&b, 1);
	ck_assert_int_eq(dec_one(13, &b, err), IOGP_ECORRUPT);
	b.n = 0;
	raw_v(&b, 2);
	raw_v(&b, 1), raw_v(&b, 1), raw_v(&b, 1);
	raw_v(&b, UINT64_MAX), raw_v(&b, 1), raw_v(&b, 1);
	ck_assert_int_eq(dec_one(13, &b, err), IOGP_ECORRUPT);
	/* ends inside a number; bytes left over */
	b.n = 0;
	raw_v(&b, 1);
	raw_v(&b, 3), raw_v(&b, 1);
	raw_bytes(&b, "\x80", 1);
	ck_assert_int_lt(dec_one(13, &b, err), 0);
	b.n = 0;
	raw_v(&b, 1);
	raw_v(&b, 3), raw_v(&b, 1), raw_v(&b, 1), raw_v(&b, 1);
	ck_assert_int_eq(dec_one(13, &b, err), IOGP_ECORRUPT);
	/* and a good one passes */
	b.n = 0;
	raw_v(&b, 2);
	raw_v(&b, 3), raw_v(&b, 2), raw_v(&b, 100);
	raw_v(&b, 0), raw_v(&b, 1), raw_v(&b, 0);
	ck_assert_int_eq(dec_one(13, &b, err), 0);
	free(b.b);

	/* the model refuses a hand-made message breaking the same rules, counted */
	iogp_model *md = iogp_model_new(NULL);
	iogp_peer pv[2] = { { .rank = 2, .msgs = 1 }, { .rank = 1, .msgs = 1 } };
	iogp_label lab[1] = { { "rank", "0" } };
	iogp_msg m = { .kind = IOGP_SNAPSHOT, .source = 5, .seq = 1, .nlabels = 1, .labels = lab,
	               .npeers = 2, .peers = pv };
	iogp_model_stats st;
	ck_assert_int_eq(iogp_model_apply(md, &m, 1), IOGP_EINVAL);
	iogp_model_get_stats(md, &st);
	ck_assert_uint_eq(st.bad_messages, 1);
	pv[1].rank = 3;
	ck_assert_int_eq(iogp_model_apply(md, &m, 2), 0);
	iogp_matrix x;
	iogp_matrix_query q = { .by = IOGP_MATRIX_RANK };
	ck_assert_int_eq(iogp_model_matrix(md, &q, &x), 0);
	ck_assert_uint_eq(x.n, 1);
	ck_assert_uint_eq(x.other_msgs, 2);   /* ranks 2 and 3 announced no source */
	iogp_matrix_free(&x);
	iogp_model_free(md);
}
END_TEST

START_TEST(test_arena)
{
	realistic *rs = realistic_new(2);
	iogp_msg m, d;
	uint8_t buf[4096], *p;
	void *arena = NULL;
	size_t cap = 0, len;
	uint64_t seq;
	long n;

	iogp_msg_init(&m);
	iogp_msg_init(&d);
	realistic_snapshot(rs, &m, 1000);   /* the largest of the stream first */
	n = iogp_msg_encode(&m, buf, sizeof buf);
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(iogp_msg_decode(&d, buf, (size_t)n, NULL, 0), 0);
	arena = d.arena;
	cap = d.arena_cap;
	ck_assert_uint_le(d.arena_len, d.arena_cap);
	for (seq = 1; seq <= 2000; seq++) {
		realistic_delta(rs, &m, seq);
		n = iogp_msg_encode(&m, buf, sizeof buf);
		CHECK(iogp_msg_decode(&d, buf, (size_t)n, NULL, 0) == 0, "decode %" PRIu64, seq);
		CHECK(d.arena == arena && d.arena_cap == cap, "arena reallocated at %" PRIu64, seq);
		CHECK(d.hists[5].id == m.hists[5].id && d.seq == seq, "content");
	}
	iogp_msg_free(&d);
	ck_assert_ptr_null(d.arena);

	/* allocation bound: without metric definitions the arena stays within
	 * (16 bytes per 2 input bytes twice, + strings) * 1.5 growth */
	{
		static struct full f;

		seed_rng(71);
		for (int it = 0; it < 200; it++) {
			full_init(&f, &m, IOGP_DELTA, it % 2);
			m.nmetrics = 0;
			m.nlabels = (uint32_t)(rnd() % 7);
			m.nhists = (uint32_t)(rnd() % 5);
			m.naccess = (uint32_t)(rnd() % 65);
			len = roundtrip(&m, &p);
			iogp_msg_init(&d);
			ck_assert_int_eq(iogp_msg_decode(&d, p, len, NULL, 0), 0);
			ck_assert_msg(d.arena_cap <= 1024 || d.arena_cap <= 17 * len,
			    "arena %zu for %zu bytes", d.arena_cap, len);
			iogp_msg_free(&d);
			free(p);
		}
	}
	realistic_free(rs);
}
END_TEST

int main(void)
{
	/* one case per test so CK_RUN_CASE=<name> runs a single one */
	const tu_case tests[] = {
		{ "varint_boundaries", test_varint_boundaries },
		{ "varint_overlong", test_varint_overlong },
		{ "roundtrip_kinds", test_roundtrip_kinds },
		{ "roundtrip_realistic", test_roundtrip_realistic },
		{ "truncation", test_truncation },
		{ "bitflips", test_bitflips },
		{ "limits", test_limits },
		{ "decode_strict", test_decode_strict },
		{ "unknown_section", test_unknown_section },
		{ "unknown_kind", test_unknown_kind },
		{ "canonical_forms", test_canonical_forms },
		{ "version_magic", test_version_magic },
		{ "encode_cap", test_encode_cap },
		{ "encode_invalid", test_encode_invalid },
		{ "topic_peek_label", test_topic_peek_label },
		{ "arena", test_arena },
		{ "peers_roundtrip", test_peers_roundtrip },
		{ "peers_hostile", test_peers_hostile },
	};
	const tu_suite_opts o = { .timeout_s = 120 };
	int rc = tu_run_cases("wire", tests, sizeof tests / sizeof tests[0], &o);

	if (rc)
		fprintf(stderr, "check_wire: PRNG seeds are fixed per test (seed_rng calls)\n");
	return rc;
}
