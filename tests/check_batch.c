/* check_batch.c - iogp_model_feed_many gives the model iogp_model_feed
 * gives: 300 realistic sources (access samples on) whose HELLOs, DELTAs,
 * SNAPSHOTs and BYEs arrive interleaved, with duplicates, gaps, a source
 * that speaks before its HELLO, garbage and empty payloads, fed one at a
 * time to one live model and in batches of random sizes to another; every
 * source's SNAPSHOT encodes to the same bytes, the stats, the live counters
 * and every all- and node-wide answer (counters, histograms, windows,
 * rates) are equal. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "iogp.h"
#include "iogp_layers.h"
#include "realistic.h"
#include "testutil.h"

#define NSRC 300
#define ROUNDS 12
#define SEC 1000000000ull
#define T0 1790000000000000000ull

struct pl {
	uint8_t *b;
	size_t n;
	uint64_t recv;
};

static iogp_model *live(void)
{
	iogp_model_opts o = {
		.live = 1, .bin_ns = SEC, .ring_bins = 120, .source_ring_bins = 60,
		.window_slot_ns = 2 * SEC, .window_max_ns = 60 * SEC, .window_bytes = 16384,
		.window_total = 64u << 20, .access_total = 1u << 20,
	};
	o.nrates = iogp_layer_rate_set(o.rates, IOGP_MODEL_MAX_RATES, 1);
	return iogp_model_new(&o);
}

static void put(struct pl *v, size_t *n, const iogp_msg *m, uint64_t recv)
{
	long len = iogp_msg_encode(m, NULL, 0);

	ck_assert_int_gt(len, 0);
	v[*n].b = malloc((size_t)len);
	ck_assert_ptr_nonnull(v[*n].b);
	ck_assert_int_eq(iogp_msg_encode(m, v[*n].b, (size_t)len), len);
	v[*n].n = (size_t)len;
	v[*n].recv = recv;
	(*n)++;
}

static void same_hist(const iogp_model *a, const iogp_model *b, const char *name,
                      const iogp_sel *sel, uint64_t since)
{
	iogp_hist ha, hb;
	int ra = since ? iogp_model_hist_window(a, name, sel, since, &ha) : iogp_model_hist(a, name, sel, &ha);
	int rb = since ? iogp_model_hist_window(b, name, sel, since, &hb) : iogp_model_hist(b, name, sel, &hb);

	ck_assert_int_eq(ra, rb);
	if (ra < 0)
		return;
	ck_assert_uint_eq(ha.total, hb.total);
	ck_assert_uint_eq(ha.n, hb.n);
	ck_assert_msg(ha.n == 0 || !memcmp(ha.bins, hb.bins, ha.n * sizeof *ha.bins), "%s bins", name);
	iogp_hist_free(&ha);
	iogp_hist_free(&hb);
}

static void compare(const iogp_model *a, const iogp_model *b, uint64_t now)
{
	static uint8_t ea[1 << 20], eb[1 << 20];
	iogp_msg sa, sb;
	iogp_model_stats xa, xb;
	iogp_model_live la, lb;

	iogp_model_get_stats(a, &xa);
	iogp_model_get_stats(b, &xb);
	ck_assert_msg(!memcmp(&xa, &xb, sizeof xa), "stats differ: messages %llu/%llu bad %llu/%llu",
	              (unsigned long long)xa.messages, (unsigned long long)xb.messages,
	              (unsigned long long)xa.bad_messages, (unsigned long long)xb.bad_messages);
	ck_assert_uint_gt(xa.messages, (uint64_t)NSRC * ROUNDS / 2);
	ck_assert_uint_gt(xa.bad_messages, 0);
	ck_assert_uint_gt(xa.duplicates, 0);
	ck_assert_uint_gt(xa.unknown, 0);
	iogp_model_get_live(a, &la);
	iogp_model_get_live(b, &lb);
	ck_assert_msg(!memcmp(&la, &lb, sizeof la), "live counters differ");
	ck_assert_uint_eq(iogp_model_source_count(a), iogp_model_source_count(b));
	iogp_msg_init(&sa);
	iogp_msg_init(&sb);
	for (size_t i = 0; i < iogp_model_source_count(a); i++) {
		ck_assert_int_eq(iogp_model_snapshot(a, i, 0, &sa), 0);
		ck_assert_int_eq(iogp_model_snapshot(b, i, 0, &sb), 0);
		long na = iogp_msg_encode(&sa, ea, sizeof ea), nb = iogp_msg_encode(&sb, eb, sizeof eb);
		ck_assert_int_gt(na, 0);
		ck_assert_msg(na == nb && !memcmp(ea, eb, (size_t)na), "source %zu's state differs", i);
	}
	iogp_msg_free(&sa);
	iogp_msg_free(&sb);
	static const char *const names[] = { "posix.read.bytes", "posix.read.size", "posix.read.latency",
	                                     "posix.write.latency", "posix.queue_depth" };
	for (size_t k = 0; k < sizeof(names) / sizeof(*names); k++) {
		iogp_sel all = { .kind = IOGP_SEL_ALL }, node = { .kind = IOGP_SEL_NODE,
		                                                  .node = iogp_model_node(a, 1) };
		uint64_t va = 0, vb = 0;
		int ra = iogp_model_counter(a, names[k], &all, &va), rb = iogp_model_counter(b, names[k], &all, &vb);
		ck_assert_int_eq(ra, rb);
		ck_assert_uint_eq(va, vb);
		same_hist(a, b, names[k], &node, 0);
		same_hist(a, b, names[k], &all, 0);
		same_hist(a, b, names[k], &all, now - 20 * SEC);
		same_hist(a, b, names[k], &node, now - 10 * SEC);
	}
	double ra[60], rb[60];
	uint8_t ca[60], cb[60];
	iogp_sel node = { .kind = IOGP_SEL_NODE, .node = iogp_model_node(a, 2) };
	ck_assert_int_eq(iogp_model_rate(a, "posix.read.bytes", &node, now, 60, ra, ca, NULL),
	                 iogp_model_rate(b, "posix.read.bytes", &node, now, 60, rb, cb, NULL));
	ck_assert(!memcmp(ra, rb, sizeof ra) && !memcmp(ca, cb, sizeof ca));
}

START_TEST(batches_equal_singles)
{
	realistic *src[NSRC];
	iogp_msg m;
	size_t cap = (size_t)NSRC * (ROUNDS + 4) + 64, n = 0;
	struct pl *v = calloc(cap, sizeof *v);

	ck_assert_ptr_nonnull(v);
	iogp_msg_init(&m);
	for (int i = 0; i < NSRC; i++) {
		ck_assert_ptr_nonnull(src[i] = realistic_new(7000 + (uint64_t)i));
		realistic_set_access(src[i], i % 3 ? 16 : 0);
	}
	/* a DELTA before its HELLO: unknown */
	realistic_delta(src[0], &m, 1);
	put(v, &n, &m, T0);
	for (int i = 0; i < NSRC; i++) {
		realistic_hello(src[i], &m);
		put(v, &n, &m, T0);
	}
	for (int r = 1; r <= ROUNDS; r++) {
		for (int i = 0; i < NSRC; i++) {
			uint64_t seq = (uint64_t)r;
			uint64_t recv = T0 + (uint64_t)r * SEC + (uint64_t)i * 1000;

			if (i % 37 == 5 && r == 4)
				continue;   /* a gap */
			if (i % 41 == 3 && r % 5 == 0)
				realistic_snapshot(src[i], &m, seq);
			else
				realistic_delta(src[i], &m, seq);
			put(v, &n, &m, recv);
			if (i % 53 == 1 && r == 6)
				put(v, &n, &m, recv);   /* a duplicate */
		}
		/* garbage and an empty payload */
		v[n].b = malloc(16);
		memset(v[n].b, 0xa5, 16);
		v[n].n = 16;
		v[n++].recv = T0 + (uint64_t)r * SEC;
		v[n].b = NULL;
		v[n].n = 0;
		v[n++].recv = T0 + (uint64_t)r * SEC;
	}
	ck_assert_uint_le(n, cap);

	iogp_model *a = live(), *b = live();
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	/* batches of 1-20 (every size, in a scrambled order), all with the
	 * first one's receive time: the singles get the same */
	size_t applied_b = 0, applied_a = 0;
	for (size_t i = 0, turn = 0; i < n; turn++) {
		size_t k = 1 + (turn * 7 + 3) % 20;
		const void *p[20];
		size_t len[20];

		k = k > n - i ? n - i : k;
		for (size_t j = 0; j < k; j++) {
			p[j] = v[i + j].b;
			len[j] = v[i + j].n;
			v[i + j].recv = v[i].recv;
		}
		applied_b += iogp_model_feed_many(b, p, len, k, v[i].recv);
		i += k;
	}
	for (size_t i = 0; i < n; i++)
		applied_a += iogp_model_feed(a, v[i].b, v[i].n, v[i].recv) >= 0;
	ck_assert_uint_eq(applied_a, applied_b);
	uint64_t now = T0 + (uint64_t)(ROUNDS + 1) * SEC;
	iogp_model_tick(a, now);
	iogp_model_tick(b, now);
	compare(a, b, now);

	iogp_model_free(a);
	iogp_model_free(b);
	for (size_t i = 0; i < n; i++)
		free(v[i].b);
	free(v);
	for (int i = 0; i < NSRC; i++)
		realistic_free(src[i]);
	iogp_msg_free(&m);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("batch");
	TCase *tc = tcase_create("batch");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, batches_equal_singles);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
