/* model_apply.c - applying HELLO, DELTA, SNAPSHOT and BYE messages to the
 * stream model: structural and value checks, sequence numbers (gaps,
 * duplicates, false jumps), catalogs, files, access samples, cumulative
 * values and the caps on what a source may hold. */
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "iogp_err.h"
#include "iogp_model.h"
#include "model_priv.h"

#define MODEL_IV_MIN 1000000ull          /* bounds of a DELTA interval taken into the average */
#define MODEL_IV_MAX 3600000000000ull

/* ---- caps, catalog, files, access samples ---------------------------------- */

#define cost_fits model__cost_fits
#define cost_add model__cost_add
#define cost_sub model__cost_sub

/* An id keeps its first definition; later definitions of it are ignored. */
static int catalog_add(iogp_model *m, uint32_t si, const iogp_metric_def *d)
{
	struct source *s = &m->src[si];
	const char *unit = d->unit != NULL ? d->unit : "";
	struct slot *sl;
	struct gmetric *g;
	uint32_t gi, sc = NONE;

	if (model__slot_by_id(s, d->id) != NONE)
		return 0;
	uint64_t c = COST_METRIC + (d->kind == IOGP_HISTOGRAM && d->bins.kind == IOGP_BINS_EDGES ?
	                            (uint64_t)d->bins.nedges * 10 : 0);
	if (s->nslots >= IOGP_MAX_METRICS || !cost_fits(m, s, c) ||
	    (model__gm_find(m, d->name) == NONE && m->ngm >= MODEL_MAX_NAMES)) {
		m->st.refused++;
		return 0;
	}
	gi = model__gm_add(m, d, unit);
	if (gi == NONE)
		return IOGP_ENOMEM;
	if (d->kind == IOGP_HISTOGRAM) {
		sc = model__scheme_intern(m, &d->bins);
		if (sc == NONE && m->nschemes >= MODEL_MAX_SCHEMES) {
			m->st.refused++;
			return 0;
		}
		if (sc == NONE)
			return IOGP_ENOMEM;
	}
	cost_add(m, s, c);
	if (model__slots_reserve(s, s->nslots + 1, false) < 0)
		return IOGP_ENOMEM;
	g = &m->gm[gi];
	sl = &s->slots[s->nslots];
	memset(sl, 0, sizeof *sl);
	sl->id = d->id;
	sl->gm = gi;
	sl->kind = (uint8_t)d->kind;
	sl->scheme = sc;
	if (strcmp(unit, g->unit) != 0) {
		struct ounit *o = realloc(s->ounit, (s->nounit + 1) * sizeof *o);
		char *u = strdup(unit);

		if (o != NULL)
			s->ounit = o;
		if (o == NULL || u == NULL) {
			free(u);
			return IOGP_ENOMEM;
		}
		s->ounit[s->nounit++] = (struct ounit){ s->nslots, u };
	}
	/* a second id with the same name in one source is kept but not linked */
	sl->linked = g->kind == d->kind && model__slot_by_gm(s, gi) == NONE;
	if (model__sidx_put(&s->by_id, d->id, s->nslots) < 0)
		goto fail;
	if (sl->linked) {
		if (model__grow(&g->h, &g->cap, g->n + 1, sizeof *g->h) < 0)
			sl->linked = 0;
		else if (model__sidx_put(&s->by_gm, gi, s->nslots) < 0)
			sl->linked = 0;
		else
			g->h[g->n++] = (struct holder){ si, s->nslots };
	}
	model__agg_link(m, s, sl);
	s->nhist += sl->linked && d->kind == IOGP_HISTOGRAM;
	if (sl->linked && g->rate != 0) {
		sl->rate = (uint8_t)g->rate;
		s->rate_mask |= 1u << (g->rate - 1);
	}
	s->nslots++;
	return 0;
fail:
	if (s->nounit > 0 && s->ounit[s->nounit - 1].slot == s->nslots)
		free(s->ounit[--s->nounit].unit);
	return IOGP_ENOMEM;
}

static int files_add(iogp_model *m, struct source *s, const iogp_file *f, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		uint32_t fi = model__file_find(s, f[i].id);
		char *p;

		if (fi != NONE) {
			if (strcmp(s->files[fi].path, f[i].path) == 0)
				continue;
			/* a renamed file costs what its new name adds */
			size_t ol = strlen(s->files[fi].path), nl = strlen(f[i].path);
			if (nl > ol && !cost_fits(m, s, nl - ol)) {
				s->files_ignored++;
				m->st.refused++;
				continue;
			}
			p = strdup(f[i].path);
			if (p == NULL)
				return IOGP_ENOMEM;
			if (nl > ol)
				cost_add(m, s, nl - ol);
			else
				cost_sub(m, s, ol - nl);
			free(s->files[fi].path);
			s->files[fi].path = p;
			continue;
		}
		uint64_t c = COST_FILE + strlen(f[i].path);
		if (s->nfiles >= IOGP_MAX_FILES || !cost_fits(m, s, c)) {
			s->files_ignored++;
			m->st.refused++;
			continue;
		}
		cost_add(m, s, c);
		if (model__grow(&s->files, &s->files_cap, s->nfiles + 1, sizeof *s->files) < 0)
			return IOGP_ENOMEM;
		p = strdup(f[i].path);
		if (p == NULL)
			return IOGP_ENOMEM;
		if (model__imap_put(&s->file_map, model__hash_u64(f[i].id), s->nfiles) < 0) {
			free(p);
			return IOGP_ENOMEM;
		}
		s->files[s->nfiles].id = f[i].id;
		s->files[s->nfiles].path = p;
		s->nfiles++;
	}
	return 0;
}

/* ---- histogram slots ------------------------------------------------------ */

static void hs_load(iogp_model *m, struct slot *sl)
{
	iogp_hist *h = &m->hs;

	if (m->hs_scheme != sl->scheme) {
		const iogp_bins *b = &m->schemes[sl->scheme]->b;

		/* header and the used edges only: the rest is never read */
		h->scheme.kind = b->kind;
		h->scheme.k = b->k;
		h->scheme.width = b->width;
		h->scheme.offset = b->offset;
		h->scheme.nedges = b->nedges;
		memcpy(h->scheme.edges, b->edges, b->nedges * sizeof b->edges[0]);
		m->hs_scheme = sl->scheme;
	}
	h->bins = sl->bins;
	h->n = sl->n;
	h->cap = sl->cap;
	h->total = sl->total;
}

static void hs_store(iogp_model *m, struct slot *sl)
{
	iogp_hist *h = &m->hs;

	sl->bins = h->bins;
	sl->n = (uint32_t)h->n;
	sl->cap = (uint32_t)h->cap;
	sl->total = h->total;
	h->bins = NULL;
	h->n = h->cap = 0;
	h->total = 0;
}

/* Bins of b (ascending) that sl does not hold yet. */
static uint64_t bins_new(const struct slot *sl, const iogp_bin *b, size_t n)
{
	size_t i = 0, j = 0;
	uint64_t add = 0;

	while (j < n) {
		if (i < sl->n && sl->bins[i].idx < b[j].idx) {
			i++;
		} else if (i < sl->n && sl->bins[i].idx == b[j].idx) {
			i++;
			j++;
		} else {
			add++;
			j++;
		}
	}
	return add;
}

static int slot_hist_add(iogp_model *m, struct source *s, struct slot *sl, const iogp_bin *b, size_t n)
{
	int r;

	if (n == 0)
		return 0;
	/* every bin new fits (the usual case): no pass to count the new ones;
	 * the cost is what the add took */
	uint64_t c = (uint64_t)n * COST_BIN, before = sl->n;
	if (sl->n + n > IOGP_MAX_HIST_BINS || !cost_fits(m, s, c)) {
		c = bins_new(sl, b, n) * COST_BIN;
		if (sl->n + c / COST_BIN > IOGP_MAX_HIST_BINS || !cost_fits(m, s, c)) {
			m->st.refused++;
			return IOGP_ELIMIT;
		}
	}
	hs_load(m, sl);
	r = iogp_hist_add_bins(&m->hs, b, n);
	hs_store(m, sl);
	if (sl->n > before)
		cost_add(m, s, (sl->n - before) * COST_BIN);
	if (r == 0)
		model__agg_bins(m, s, sl, b, (uint32_t)n, false);
	return r;
}

/* sl's exact values += e (ascending), bounded as iogp_exact_merge says. */
static int slot_exact_add(iogp_model *m, struct source *s, struct slot *sl,
                          const iogp_exact *e, uint32_t n)
{
	if (n == 0)
		return 0;
	if (sl->ex == NULL) {
		uint64_t c = MODEL_EXACT_MAX * COST_BIN;

		if (!cost_fits(m, s, c) || (sl->ex = malloc(MODEL_EXACT_MAX * sizeof *sl->ex)) == NULL) {
			m->st.refused++;
			return IOGP_ELIMIT;
		}
		cost_add(m, s, c);
		sl->nex = 0;
	}
	/* the old values only go to the sums, kept live only (model_agg.c) */
	if (!m->opts.live) {
		iogp_exact_merge(sl->ex, &sl->nex, MODEL_EXACT_MAX, e, n);
		return 0;
	}
	iogp_exact old[MODEL_EXACT_MAX];
	uint32_t nold = sl->nex;

	memcpy(old, sl->ex, nold * sizeof *old);
	iogp_exact_merge(sl->ex, &sl->nex, MODEL_EXACT_MAX, e, n);
	model__agg_exact(m, s, sl, old, nold, sl->ex, sl->nex);
	return 0;
}

/* Window rings take exact values as entries past the bins (model_priv.h). */
static void win_exact_add(iogp_model *m, struct source *s, struct slot *sl, uint64_t j,
                          const iogp_exact *e, uint32_t n)
{
	iogp_bin b[64];
	uint32_t k = 0;

	if (m->schemes[sl->scheme]->nbins > MODEL_WIN_EXACT)
		return;
	for (uint32_t i = 0; i < n && k < 64; i++)
		if (e[i].value < MODEL_WIN_EXACT)
			b[k++] = (iogp_bin){ MODEL_WIN_EXACT + e[i].value, e[i].count };
	if (k > 0) {
		model__win_add(m, s, sl, j, b, k);
		model__agg_win(m, s, sl, j, b, k, false);
	}
}

/* ---- message checks --------------------------------------------------------- */

static bool str_ok(const char *s, size_t max)
{
	return s != NULL && strnlen(s, max + 1) <= max;
}

/* Structural checks, so a message built by hand is held to the limits the
 * decoder enforces and nothing is changed by a message that is rejected. */
static int msg_check(const iogp_msg *msg)
{
	if (msg->nlabels > IOGP_MAX_LABELS || msg->nmetrics > IOGP_MAX_METRICS ||
	    msg->naccess > IOGP_MAX_ACCESS || msg->nfiles > IOGP_MAX_FILES)
		return IOGP_ELIMIT;
	if ((msg->nlabels && msg->labels == NULL) || (msg->nmetrics && msg->metrics == NULL) ||
	    (msg->ncounters && msg->counters == NULL) || (msg->ngauges && msg->gauges == NULL) ||
	    (msg->nhists && msg->hists == NULL) || (msg->naccess && msg->access == NULL) ||
	    (msg->nfiles && msg->files == NULL))
		return IOGP_EINVAL;
	for (uint32_t i = 0; i < msg->nlabels; i++) {
		if (!str_ok(msg->labels[i].key, IOGP_MAX_KEY) ||
		    !str_ok(msg->labels[i].value, IOGP_MAX_VALUE))
			return IOGP_EINVAL;
	}
	for (uint32_t i = 0; i < msg->nmetrics; i++) {
		const iogp_metric_def *d = &msg->metrics[i];

		if (d->kind < IOGP_COUNTER || d->kind > IOGP_ACCESS ||
		    !str_ok(d->name, IOGP_MAX_NAME) ||
		    (d->unit != NULL && !str_ok(d->unit, IOGP_MAX_UNIT)))
			return IOGP_EINVAL;
		if (d->kind == IOGP_HISTOGRAM && iogp_bins_valid(&d->bins) != 0)
			return IOGP_EINVAL;
	}
	for (uint32_t i = 0; i < msg->nhists; i++) {
		const iogp_hist_val *h = &msg->hists[i];

		if (h->nbins > IOGP_MAX_HIST_BINS)
			return IOGP_ELIMIT;
		if (h->nbins && h->bins == NULL)
			return IOGP_EINVAL;
		for (uint32_t j = 1; j < h->nbins; j++) {
			if (h->bins[j].idx <= h->bins[j - 1].idx)
				return IOGP_EINVAL;
		}
	}
	for (uint32_t i = 0; i < msg->nfiles; i++) {
		if (!str_ok(msg->files[i].path, IOGP_MAX_PATH))
			return IOGP_EINVAL;
	}
	int fr = model__files_check(msg);
	if (fr < 0 || (fr = model__peers_check(msg)) < 0)
		return fr;
	if (msg->nexact > IOGP_MAX_METRICS)
		return IOGP_ELIMIT;
	if (msg->nexact && msg->exact == NULL)
		return IOGP_EINVAL;
	for (uint32_t i = 0; i < msg->nexact; i++) {
		const iogp_exact_val *x = &msg->exact[i];

		if (x->n > IOGP_MAX_EXACT)
			return IOGP_ELIMIT;
		if ((x->n && x->v == NULL) || (i > 0 && x->id <= msg->exact[i - 1].id))
			return IOGP_EINVAL;
		for (uint32_t j = 0; j < x->n; j++) {
			if (x->v[j].count == 0 || (j > 0 && x->v[j].value <= x->v[j - 1].value))
				return IOGP_EINVAL;
		}
	}
	return 0;
}

/* The slots values_check found for a message's counters, gauges,
 * histograms and exact values, in that order, so apply_values does not look
 * them up again (two lookups a value were ~8% of the recorder's ingest);
 * off (n = MEMO_OFF) for a message with more values than fit. */
#define MEMO_MAX 256
#define MEMO_OFF UINT32_MAX
struct slot_memo {
	uint32_t n;
	uint32_t v[MEMO_MAX];
};

static void memo_init(struct slot_memo *mm, const iogp_msg *msg)
{
	uint64_t n = (uint64_t)msg->ncounters + msg->ngauges + msg->nhists + msg->nexact;

	mm->n = n <= MEMO_MAX ? 0 : MEMO_OFF;
}

/* Slot of the memo's next value, or a lookup when it is off. */
static uint32_t memo_next(struct slot_memo *mm, const struct source *s, uint32_t id)
{
	return mm->n == MEMO_OFF ? model__slot_by_id(s, id) : mm->v[mm->n++];
}

static int resolve(const struct source *s, uint32_t id, iogp_metric_kind kind, uint32_t *slot)
{
	*slot = model__slot_by_id(s, id);
	if (*slot == NONE)
		return IOGP_EUNKNOWN;
	if (s->slots[*slot].kind != kind)
		return IOGP_EINVAL;
	return 0;
}

/* resolve, noting the slot in mm. What a histogram's values are added to
 * (bins, exact values) is asked for now, to arrive while the values before
 * it are applied: with thousands of sources it is in no cache. */
static int resolve_memo(const struct source *s, uint32_t id, iogp_metric_kind kind,
                        uint32_t *slot, struct slot_memo *mm)
{
	int r = resolve(s, id, kind, slot);

	if (r == 0 && mm->n != MEMO_OFF)
		mm->v[mm->n++] = *slot;
	if (r == 0 && kind == IOGP_HISTOGRAM) {
		const struct slot *sl = &s->slots[*slot];

		if (sl->bins != NULL)
			__builtin_prefetch(sl->bins);
		if (sl->ex != NULL)
			__builtin_prefetch(sl->ex);
	}
	return r;
}

/* Every value names a known metric of the right kind and every bin lies in
 * its scheme. The slots found go to mm (memo_init'ed), rewound after. */
static int values_check(const iogp_model *m, const struct source *s, const iogp_msg *msg,
                        struct slot_memo *mm)
{
	uint32_t sl;
	int r;

	memo_init(mm, msg);
	for (uint32_t i = 0; i < msg->ncounters; i++) {
		if ((r = resolve_memo(s, msg->counters[i].id, IOGP_COUNTER, &sl, mm)) < 0)
			return r;
	}
	for (uint32_t i = 0; i < msg->ngauges; i++) {
		if ((r = resolve_memo(s, msg->gauges[i].id, IOGP_GAUGE, &sl, mm)) < 0)
			return r;
	}
	for (uint32_t i = 0; i < msg->nhists; i++) {
		const iogp_hist_val *h = &msg->hists[i];

		if ((r = resolve_memo(s, h->id, IOGP_HISTOGRAM, &sl, mm)) < 0)
			return r;
		/* ascending: the first and the last decide (EDGES from 0 has no bin 0) */
		const iogp_bins *sb = &m->schemes[s->slots[sl].scheme]->b;
		if (h->nbins > 0 &&
		    (h->bins[h->nbins - 1].idx >= m->schemes[s->slots[sl].scheme]->nbins ||
		     !iogp_bins_index_ok(sb, h->bins[0].idx) ||
		     !iogp_bins_index_ok(sb, h->bins[h->nbins - 1].idx)))
			return IOGP_EINVAL;
	}
	/* a DELTA's samples (up to thousands) mostly name one metric */
	for (uint32_t i = 0; i < msg->naccess; i++) {
		if (i > 0 && msg->access[i].id == msg->access[i - 1].id)
			continue;
		if ((r = resolve(s, msg->access[i].id, IOGP_ACCESS, &sl)) < 0)
			return r;
	}
	for (uint32_t i = 0; i < msg->nexact; i++) {
		if ((r = resolve_memo(s, msg->exact[i].id, IOGP_HISTOGRAM, &sl, mm)) < 0)
			return r;
	}
	if (mm->n != MEMO_OFF)
		mm->n = 0;
	return 0;
}

/* ---- applying messages ------------------------------------------------------ */

/* Per-DELTA accumulation, filled while the values are applied. */
struct live_acc {
	double amt[IOGP_MODEL_MAX_RATES];
	uint64_t slot;     /* window slot of the DELTA's wall time */
	bool win;          /* wall time known: windows take its histograms */
};

static void note_applied(iogp_model *m, struct source *s, uint64_t recv_ns)
{
	uint64_t sec = recv_ns / 1000000000ull;

	if (m->mps[sec % MODEL_MPS_RING].sec != sec) {
		m->mps[sec % MODEL_MPS_RING].sec = sec;
		m->mps[sec % MODEL_MPS_RING].n = 0;
	}
	m->mps[sec % MODEL_MPS_RING].n++;
	s->replaced = false;
	if (s->messages == 0 || recv_ns < s->first_recv)
		s->first_recv = recv_ns;
	if (s->messages == 0 || recv_ns > s->last_recv)
		s->last_recv = recv_ns;
	s->messages++;
	if (!m->have_recv || recv_ns < m->st.first_recv_ns)
		m->st.first_recv_ns = recv_ns;
	if (!m->have_recv || recv_ns > m->st.last_recv_ns)
		m->st.last_recv_ns = recv_ns;
	m->have_recv = true;
	m->st.messages++;
}

/* A forward jump of more than this many numbers is held in doubt: one
 * source's messages never arrive out of order, so a message numbered inside
 * the jump proves it false (a spoofed sequence number), and it is undone. */
#define SEQ_JUMP_DOUBT 64

/* Move the sequence forward; returns the number of sequence numbers missed. */
static uint64_t seq_advance(iogp_model *m, struct source *s, uint64_t seq)
{
	uint64_t g = 0;

	if (!s->has_seq) {
		/* nothing to check a first number against: in doubt until the next */
		s->has_seq = true;
		s->last_seq = seq;
		s->jumped = true;
		s->pre_jump_seq = 0;
		s->jump_gaps = 0;
		return 0;
	}
	if (seq > s->last_seq) {
		g = seq - s->last_seq - 1;
		/* a message after its BYE (or FINAL): the source speaks again, and
		 * nothing was missed (a relay's aggregate after a restart: its id
		 * is its group's name, its numbers go on from the clock in ms) */
		if (s->state == IOGP_SRC_GONE) {
			s->state = IOGP_SRC_LIVE;
			g = 0;
		}
		if (g > SEQ_JUMP_DOUBT) {
			s->jumped = true;
			s->pre_jump_seq = s->last_seq;
			s->jump_gaps = g;
		} else if (s->jumped && g == 0) {
			s->jumped = false;   /* the stream goes on from the jump: real */
		}
		s->gaps += g;
		m->st.gaps += g;
		s->last_seq = seq;
	}
	return g;
}

/* seq is at or behind the source's last: a duplicate (true), or the proof
 * that the last jump was false (undone; the message then applies). */
static bool seq_is_old(iogp_model *m, struct source *s, uint64_t seq, bool allow_equal)
{
	if (!s->has_seq || seq > s->last_seq || (allow_equal && seq == s->last_seq))
		return false;
	if (s->jumped && seq > s->pre_jump_seq) {
		s->gaps -= s->jump_gaps;
		m->st.gaps -= s->jump_gaps;
		m->st.seq_spoofs++;
		s->last_seq = seq - 1;
		s->jumped = false;
		s->in_sync = false;   /* what came with the false jump: until a SNAPSHOT */
		return false;
	}
	return true;
}

static void times_note(struct source *s, const iogp_msg *msg, bool snapshot)
{
	if (snapshot || !s->has_mono) {
		s->start_mono = msg->t0_ns;
		s->has_mono = true;
	}
	s->last_mono = msg->t1_ns;
	if (msg->wall_ns != 0) {
		if (!s->has_wall) {
			s->first_wall = msg->wall_ns;
			s->has_wall = true;
		}
		s->last_wall = msg->wall_ns;
	}
}

static int catalog_apply(iogp_model *m, uint32_t si, const iogp_msg *msg)
{
	int r = model__labels_set(m, si, msg);
	struct source *s = &m->src[si];

	/* a first catalog of an agent's size: slots for exactly its metrics
	 * (doubling as they came left a third of them empty: ~1 KB a source);
	 * a bigger one grows as the caps let its metrics in */
	if (r == 0 && s->slots == NULL && msg->nmetrics > 0 && msg->nmetrics <= 256) {
		if (model__slots_reserve(s, msg->nmetrics, true) < 0)
			return IOGP_ENOMEM;
	}
	for (uint32_t i = 0; r == 0 && i < msg->nmetrics; i++)
		r = catalog_add(m, si, &msg->metrics[i]);
	return r;
}

static int get_source(iogp_model *m, const iogp_msg *msg, uint32_t *si)
{
	int err = 0;

	const char *host = model__labels_find(msg->labels, msg->nlabels, "host");

	*si = model__src_find(m, msg->source);
	if (*si == NONE)
		*si = model__source_new(m, msg->source, host != NULL ? host : "", &err);
	return *si == NONE ? err : 0;
}

static void final_check(struct source *s, const iogp_msg *msg)
{
	if (msg->flags & IOGP_F_FINAL)
		s->state = IOGP_SRC_GONE;
}

static int apply_hello(iogp_model *m, const iogp_msg *msg, uint64_t recv_ns)
{
	struct source *s;
	uint32_t si;
	int r;

	if ((r = get_source(m, msg, &si)) < 0)
		return r;
	r = catalog_apply(m, si, msg);
	s = &m->src[si];
	if (r < 0) {
		s->in_sync = false;
		return r;
	}
	(void)seq_is_old(m, s, msg->seq, true);
	if (seq_advance(m, s, msg->seq) > 0)
		s->in_sync = false;
	final_check(s, msg);
	note_applied(m, s, recv_ns);
	return 0;
}

/* acc (DELTAs, live side on) collects rate increments and feeds windows. */
static int apply_values(iogp_model *m, struct source *s, const iogp_msg *msg, bool snapshot,
                        struct live_acc *acc, struct slot_memo *mm)
{
	int r = 0;

	for (uint32_t i = 0; i < msg->ncounters; i++) {
		struct slot *sl = &s->slots[memo_next(mm, s, msg->counters[i].id)];
		uint64_t v = msg->counters[i].value;

		uint64_t old = sl->counter;

		sl->counter = snapshot ? v : sl->counter + v;
		model__agg_counter(m, s, sl, old, sl->counter);
		if (acc != NULL && sl->rate != 0)
			acc->amt[sl->rate - 1] += (double)v;
	}
	for (uint32_t i = 0; i < msg->ngauges; i++) {
		struct slot *sl = &s->slots[memo_next(mm, s, msg->gauges[i].id)];
		int64_t old = sl->gauge;

		sl->gauge = msg->gauges[i].value;
		model__agg_gauge(m, s, sl, old, sl->gauge);
	}
	if (msg->ngauges && m->opts.live)
		model__probes_note(m, s, msg);
	for (uint32_t i = 0; i < msg->nhists; i++) {
		const iogp_hist_val *h = &msg->hists[i];
		struct slot *sl = &s->slots[memo_next(mm, s, h->id)];
		int e;

		if ((e = slot_hist_add(m, s, sl, h->bins, h->nbins)) < 0) {
			r = e;
			continue;
		}
		if (acc == NULL || !sl->linked)
			continue;
		if (sl->rate != 0) {
			for (uint32_t j = 0; j < h->nbins; j++)
				acc->amt[sl->rate - 1] += (double)h->bins[j].count;
		}
		if (acc->win) {
			model__win_add(m, s, sl, acc->slot, h->bins, h->nbins);
			model__agg_win(m, s, sl, acc->slot, h->bins, h->nbins, true);
		}
	}
	for (uint32_t i = 0; i < msg->nexact; i++) {
		const iogp_exact_val *x = &msg->exact[i];
		struct slot *sl = &s->slots[memo_next(mm, s, x->id)];
		int e;

		if ((e = slot_exact_add(m, s, sl, x->v, x->n)) < 0)
			r = e;
		else if (acc != NULL && acc->win && sl->linked)
			win_exact_add(m, s, sl, acc->slot, x->v, x->n);
	}
	if (r == 0 && !m->opts.no_access)
		r = model__access_apply(m, s, msg, snapshot);   /* model_access.c */
	s->access_seen = snapshot ? msg->access_seen : s->access_seen + msg->access_seen;
	if (r == 0)
		r = files_add(m, s, msg->files, msg->nfiles);
	if (r == 0 && (msg->nfilerecs > 0 || snapshot))
		r = model__files_apply(m, s, msg->filerecs, msg->nfilerecs, snapshot);
	if (r == 0 && (msg->npeers > 0 || snapshot))
		r = model__peers_apply(m, s, msg, snapshot);   /* model_peers.c */
	m->st.dropped += msg->dropped - s->dropped;   /* the sum over sources, exact mod 2^64 */
	s->dropped = msg->dropped;
	times_note(s, msg, snapshot);
	return r;
}

static int apply_delta(iogp_model *m, const iogp_msg *msg, uint64_t recv_ns)
{
	uint32_t si = model__src_find(m, msg->source);
	struct live_acc acc;
	struct slot_memo mm;
	struct source *s;
	int r;

	if (si == NONE) {
		m->st.unknown++;
		return IOGP_EUNKNOWN;
	}
	s = &m->src[si];
	if (seq_is_old(m, s, msg->seq, false)) {
		m->st.duplicates++;
		return 0;
	}
	if (m->opts.live && !m->batched)   /* a batch fetched it (model_batch.c) */
		model__live_prefetch(m, s, msg);
	if ((r = values_check(m, s, msg, &mm)) < 0) {
		if (r == IOGP_EUNKNOWN)
			m->st.unknown++;
		else
			m->st.bad_messages++;
		return r;
	}
	if (seq_advance(m, s, msg->seq) > 0)
		s->in_sync = false;
	if (m->opts.live) {
		memset(acc.amt, 0, sizeof acc.amt);
		acc.win = msg->wall_ns != 0;
		acc.slot = msg->wall_ns / m->opts.window_slot_ns;
	}
	r = apply_values(m, s, msg, false, m->opts.live ? &acc : NULL, &mm);
	if (msg->nfilerecs > 0 && !m->opts.no_phases)
		model__phases_note(m, s, si, msg);
	if (r < 0)
		s->in_sync = false;
	if (m->opts.live)
		model__live_rates(m, s, msg, acc.amt);
	if (msg->t1_ns >= msg->t0_ns) {
		uint64_t d = msg->t1_ns - msg->t0_ns;

		d = d < MODEL_IV_MIN ? MODEL_IV_MIN : d > MODEL_IV_MAX ? MODEL_IV_MAX : d;
		s->iv = s->iv == 0 ? d : (uint64_t)((int64_t)s->iv + ((int64_t)d - (int64_t)s->iv) / 8);
	}
	if (msg->wall_ns > m->wall_hi)
		m->wall_hi = msg->wall_ns;
	final_check(s, msg);
	note_applied(m, s, recv_ns);
	return r;
}

static int apply_snapshot(iogp_model *m, const iogp_msg *msg, uint64_t recv_ns)
{
	struct source *s;
	struct slot_memo mm;
	uint32_t si = model__src_find(m, msg->source);
	int r;

	if (si != NONE && seq_is_old(m, &m->src[si], msg->seq, true)) {
		m->st.duplicates++;
		return 0;
	}
	if ((r = get_source(m, msg, &si)) < 0)
		return r;
	r = catalog_apply(m, si, msg);
	s = &m->src[si];
	if (r == 0 && (r = values_check(m, s, msg, &mm)) < 0) {
		if (r == IOGP_EUNKNOWN)
			m->st.unknown++;
		else
			m->st.bad_messages++;
	}
	if (r < 0) {
		s->in_sync = false;
		return r;
	}
	seq_advance(m, s, msg->seq);
	for (uint32_t i = 0; i < s->nslots; i++) {
		struct slot *sl = &s->slots[i];

		/* the sums lose what the snapshot replaces (a gauge keeps its
		 * value until the snapshot says another) */
		if (sl->kind == IOGP_COUNTER) {
			model__agg_counter(m, s, sl, sl->counter, 0);
			sl->counter = 0;
		}
		if (sl->kind != IOGP_HISTOGRAM)
			continue;
		model__agg_bins(m, s, sl, sl->bins, (uint32_t)sl->n, true);
		model__agg_exact(m, s, sl, sl->ex, sl->nex, NULL, 0);
		cost_sub(m, s, sl->n * COST_BIN);
		sl->n = 0;
		sl->total = 0;
		sl->nex = 0;
	}
	r = apply_values(m, s, msg, true, NULL, &mm);
	s->in_sync = r == 0;
	final_check(s, msg);
	note_applied(m, s, recv_ns);
	return r;
}

static int apply_bye(iogp_model *m, const iogp_msg *msg, uint64_t recv_ns)
{
	uint32_t si = model__src_find(m, msg->source);
	struct source *s;

	if (si == NONE) {
		m->st.unknown++;
		return IOGP_EUNKNOWN;
	}
	s = &m->src[si];
	if (seq_is_old(m, s, msg->seq, true)) {
		m->st.duplicates++;
		return 0;
	}
	if (seq_advance(m, s, msg->seq) > 0)
		s->in_sync = false;
	s->state = IOGP_SRC_GONE;
	note_applied(m, s, recv_ns);
	return 0;
}

int iogp_model_apply(iogp_model *m, const iogp_msg *msg, uint64_t recv_ns)
{
	int r;

	if (m == NULL || msg == NULL)
		return IOGP_EINVAL;
	if (msg->kind < IOGP_HELLO || msg->kind > IOGP_BYE)
		return 0;  /* a kind from a newer version: skipped */
	m->cur_recv = recv_ns;
	if ((r = msg_check(msg)) < 0) {
		m->st.bad_messages++;
		return r;
	}
	switch (msg->kind) {
	case IOGP_HELLO:
		return apply_hello(m, msg, recv_ns);
	case IOGP_DELTA:
		return apply_delta(m, msg, recv_ns);
	case IOGP_SNAPSHOT:
		return apply_snapshot(m, msg, recv_ns);
	case IOGP_BYE:
		return apply_bye(m, msg, recv_ns);
	}
	return 0;
}

int iogp_model_feed(iogp_model *m, const void *payload, size_t len, uint64_t recv_ns)
{
	int r;

	if (m == NULL || (payload == NULL && len > 0))
		return IOGP_EINVAL;
	r = iogp_msg_decode(&m->scratch, payload, len, NULL, 0);
	if (r < 0) {
		m->st.bad_messages++;
		return r;
	}
	return iogp_model_apply(m, &m->scratch, recv_ns);
}
