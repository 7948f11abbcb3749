/* fuzz_decode.c - libFuzzer target: decode arbitrary bytes; whatever decodes
 * must re-encode, decode to the same message, and encode to the same bytes;
 * it re-encodes to its own bytes exactly when decoded as canonical. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iogp_wire.h"

static void die(const char *why)
{
	fprintf(stderr, "fuzz_decode: %s\n", why);
	abort();
}

static int same(const iogp_msg *a, const iogp_msg *b)
{
	uint32_t i;

	if (a->kind != b->kind || a->flags != b->flags || a->source != b->source ||
	    a->seq != b->seq || a->nlabels != b->nlabels || a->nmetrics != b->nmetrics ||
	    a->ncounters != b->ncounters || a->ngauges != b->ngauges ||
	    a->nhists != b->nhists || a->naccess != b->naccess || a->nfiles != b->nfiles ||
	    a->t0_ns != b->t0_ns || a->t1_ns != b->t1_ns || a->wall_ns != b->wall_ns ||
	    a->dropped != b->dropped || a->access_seen != b->access_seen)
		return 0;
	for (i = 0; i < a->nhists; i++) {
		if (a->hists[i].id != b->hists[i].id || a->hists[i].nbins != b->hists[i].nbins ||
		    (a->hists[i].nbins > 0 && memcmp(a->hists[i].bins, b->hists[i].bins,
		    a->hists[i].nbins * sizeof(iogp_bin)) != 0))
			return 0;
	}
	for (i = 0; i < a->nlabels; i++) {
		if (strcmp(a->labels[i].key, b->labels[i].key) != 0 ||
		    strcmp(a->labels[i].value, b->labels[i].value) != 0)
			return 0;
	}
	for (i = 0; i < a->nmetrics; i++) {
		if (a->metrics[i].id != b->metrics[i].id || a->metrics[i].kind != b->metrics[i].kind ||
		    strcmp(a->metrics[i].name, b->metrics[i].name) != 0 ||
		    memcmp(&a->metrics[i].bins, &b->metrics[i].bins, sizeof(iogp_bins)) != 0)
			return 0;
	}
	/* field by field: the structs have padding */
	for (i = 0; i < a->ncounters; i++) {
		if (a->counters[i].id != b->counters[i].id ||
		    a->counters[i].value != b->counters[i].value)
			return 0;
	}
	for (i = 0; i < a->ngauges; i++) {
		if (a->gauges[i].id != b->gauges[i].id || a->gauges[i].value != b->gauges[i].value)
			return 0;
	}
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static iogp_msg m, again;
	static uint8_t *enc, *enc2;
	static size_t cap;
	char err[256];
	long n, n2;

	if (iogp_msg_decode(&m, data, size, err, sizeof err) < 0) {
		if (err[0] == '\0' || m.nhists != 0 || m.nlabels != 0)
			die("failed decode without a message or with data left");
		return 0;
	}
	for (uint32_t i = 0; i < m.nmetrics; i++) {
		if (m.metrics[i].kind == IOGP_HISTOGRAM && iogp_bins_valid(&m.metrics[i].bins) != 0)
			die("decoded an invalid bin scheme");
	}
	if (m.kind < IOGP_HELLO || m.kind > IOGP_BYE) {
		if (m.canonical)
			die("an unknown kind decoded as canonical");
		return 0;   /* unknown kinds decode but are not re-encodable */
	}
	n = iogp_msg_encode(&m, NULL, 0);
	if (n <= 0 || (size_t)n > size)
		die("re-encoding failed or grew");   /* canonical, never longer */
	if ((size_t)n > cap) {
		free(enc);
		free(enc2);
		cap = (size_t)n;
		enc = malloc(cap);
		enc2 = malloc(cap);
		if (enc == NULL || enc2 == NULL)
			die("out of memory");
	}
	if (iogp_msg_encode(&m, enc, (size_t)n) != n)
		die("encode into the announced size failed");
	/* the replay writer trusts the flag: exactly the bytes the encoder writes */
	if (m.canonical != ((size_t)n == size && !memcmp(enc, data, size)))
		die(m.canonical ? "decoded as canonical, encodes otherwise" :
		    "encodes to the same bytes, not decoded as canonical");
	if (iogp_msg_decode(&again, enc, (size_t)n, err, sizeof err) != 0)
		die(err);
	if (!same(&m, &again))
		die("decode(encode(m)) != m");
	n2 = iogp_msg_encode(&again, enc2, (size_t)n);
	if (n2 != n || memcmp(enc, enc2, (size_t)n) != 0)
		die("second encoding differs");
	return 0;
}
