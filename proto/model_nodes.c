/* model_nodes.c - the model over time for comparing nodes: the histogram
 * of each window slot (per-node latency quantiles over time for the node x
 * time heatmaps), from the "last N seconds" windows. */
#include <stdint.h>
#include <string.h>

#include "iogp_err.h"
#include "iogp_model.h"
#include "model_priv.h"

/* The window holding slots [jhi - k, jhi] (jhi the slot of the clock):
 * iogp_model_hist_window with window_ns = now % S + k S; empty for k < 0
 * and for the current slot alone when the clock sits on its first
 * nanosecond (nothing can be in it yet, and window_ns 0 means "all"). */
static int window_k(const iogp_model *m, const char *metric, const iogp_sel *sel, int64_t k,
                    iogp_hist *out)
{
	uint64_t S = m->opts.window_slot_ns, r = model__clock(m) % S;
	int rc;

	if (k < 0 || (k == 0 && r == 0)) {
		iogp_hist tmp;

		/* the metric's scheme, and its errors (unknown metric, live off) */
		rc = iogp_model_hist_window(m, metric, sel, 1, &tmp);
		if (rc < 0 && rc != IOGP_ESCHEME) {
			*out = tmp;
			return rc;
		}
		iogp_hist_init(out, &tmp.scheme);
		iogp_hist_free(&tmp);
		return rc;
	}
	return iogp_model_hist_window(m, metric, sel, r + (uint64_t)k * S, out);
}

int iogp_model_hist_slots(const iogp_model *m, const char *metric, const iogp_sel *sel,
                          uint64_t first, size_t n, iogp_hist *out)
{
	iogp_bins nat;
	uint64_t S, now, jhi, oldest;
	iogp_hist prev;
	int rc = 0, scheme = 0;

	iogp_bins_native(&nat, IOGP_NATIVE_K_DEFAULT);
	for (size_t i = 0; i < n && out != NULL; i++)
		iogp_hist_init(&out[i], &nat);
	if (m == NULL || out == NULL || metric == NULL)
		return IOGP_EINVAL;
	if (!m->opts.live)
		return IOGP_EINVAL;
	S = m->opts.window_slot_ns;
	now = model__clock(m);
	jhi = now / S;
	/* slots whose window still fits window_max_ns (longer ones are cut) */
	oldest = m->opts.window_max_ns >= now % S ? (m->opts.window_max_ns - now % S) / S : 0;
	oldest = oldest > jhi ? 0 : jhi - oldest;
	if (n == 0)
		return 0;
	if (first > jhi || first + n - 1 > jhi || first < oldest)
		return IOGP_ENOTFOUND;
	/* W(k) - W(k - 1) is slot jhi - k, newest first */
	rc = window_k(m, metric, sel, (int64_t)(jhi - (first + n - 1)) - 1, &prev);
	if (rc == IOGP_ESCHEME)
		scheme = 1;
	else if (rc < 0) {
		iogp_hist_free(&prev);
		return rc;
	}
	for (size_t i = n; i-- > 0;) {
		iogp_hist cur;

		rc = window_k(m, metric, sel, (int64_t)(jhi - (first + i)), &cur);
		if (rc == IOGP_ESCHEME)
			scheme = 1;
		else if (rc < 0) {
			iogp_hist_free(&cur);
			iogp_hist_free(&prev);
			return rc;
		}
		iogp_hist_free(&out[i]);
		rc = iogp_hist_diff(&out[i], &cur, &prev);
		iogp_hist_free(&prev);
		prev = cur;
		if (rc < 0) {
			iogp_hist_free(&prev);
			return rc;
		}
	}
	iogp_hist_free(&prev);
	return scheme ? IOGP_ESCHEME : 0;
}
