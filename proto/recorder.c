/* recorder.c - replay writer plus stream model, with the keyframe policy. */
#include <stdlib.h>
#include <string.h>

#include "iogp_err.h"
#include "iogp_recorder.h"
#include "iogp_sys.h"
#include "replay_priv.h"

struct iogp_recorder {
	iogp_replay_writer *w;
	iogp_model *model;
	iogp_recorder_opts o;
	iogp_msg snap, in;
	uint8_t *buf, *cmp;
	size_t bufcap, cmpcap;
	uint64_t last_kf_ns;
	int have_time;
	uint64_t added, rejected, keyframes, snapshots_skipped;
	uint64_t since_kf_records;
	uint64_t last_recv_ns;
	int noted;
	uint64_t noted_gaps, noted_refused;  /* as last written to the file */
};

int iogp_recorder_open(iogp_recorder **rp, const char *path,
                       const iogp_recorder_opts *opts, char *err, size_t errlen)
{
	iogp_recorder *r = calloc(1, sizeof(*r));
	if (!r)
		return IOGP_ENOMEM;
	if (opts)
		r->o = *opts;
	if (!r->o.kf_min_ns)
		r->o.kf_min_ns = 5ull * 1000000000ull;
	if (!r->o.kf_max_ns)
		r->o.kf_max_ns = 300ull * 1000000000ull;
	/* Keyframes then take ~1/17 of the file (plus ~1% for the DELTA
	 * prediction each restarts), and a seek reads about a minute's worth
	 * of records at 64 busy sources (bench_disk). */
	if (!r->o.kf_ratio)
		r->o.kf_ratio = 16;
	/* Keyframes leave access samples out (iogp_model_snapshot) and nothing
	 * reads the recorder's: none kept, not 4096 a source (~200 KB of
	 * memory touched per busy source); nor the activity runs (phases) its
	 * file records open: keyframes hold the records, readers rebuild the
	 * runs. */
	r->o.model.no_access = 1;
	r->o.model.no_phases = 1;
	r->model = iogp_model_new(&r->o.model);
	if (!r->model) {
		free(r);
		return IOGP_ENOMEM;
	}
	iogp_msg_init(&r->snap);
	iogp_msg_init(&r->in);
	iogp_replay_wopts wo = {
		.creator = r->o.creator ? r->o.creator : "iogram " IOGRAM_VERSION,
		.compress = !r->o.plain,
		.zstd_level = r->o.zstd_level ? r->o.zstd_level : 1,
		.replace = r->o.replace,
	};
	int rc = iogp_replay_create(&r->w, path, &wo, err, errlen);
	if (rc < 0) {
		iogp_model_free(r->model);
		free(r);
		return rc;
	}
	*rp = r;
	return 0;
}

static int grow(uint8_t **buf, size_t *bufcap, size_t need)
{
	if (need <= *bufcap)
		return 0;
	size_t cap = *bufcap ? *bufcap : 4096;
	while (cap < need)
		cap *= 2;
	uint8_t *b = realloc(*buf, cap);
	if (!b)
		return IOGP_ENOMEM;
	*buf = b;
	*bufcap = cap;
	return 0;
}

static int ensure_buf(iogp_recorder *r, size_t need)
{
	return grow(&r->buf, &r->bufcap, need);
}

int iogp_recorder_keyframe(iogp_recorder *r, uint64_t recv_ns)
{
	size_t n = iogp_model_source_count(r->model);
	int rc = iogp_replay_keyframe_begin(r->w, recv_ns);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < n && rc >= 0; i++) {
		iogp_source_info si;
		if (iogp_model_source(r->model, i, &si) < 0)
			continue;
		uint16_t flags = IOGP_F_KEYFRAME | (si.state == IOGP_SRC_GONE ? IOGP_F_FINAL : 0);
		rc = iogp_model_snapshot(r->model, i, flags, &r->snap);
		if (rc < 0)
			break;
		long len = iogp_msg_encode(&r->snap, NULL, 0);
		if (len < 0) {
			rc = (int)len;
			break;
		}
		if ((rc = ensure_buf(r, (size_t)len)) < 0)
			break;
		len = iogp_msg_encode(&r->snap, r->buf, r->bufcap);
		if (len < 0) {
			rc = (int)len;
			break;
		}
		rc = iogp_replay_write(r->w, recv_ns, r->buf, (size_t)len);
	}
	int rc2 = iogp_replay_keyframe_end(r->w);
	if (rc >= 0 && rc2 < 0)
		rc = rc2;
	if (rc >= 0) {
		r->keyframes++;
		r->last_kf_ns = recv_ns;
		r->since_kf_records = 0;
	}
	return rc < 0 ? rc : 0;
}

static int maybe_keyframe(iogp_recorder *r, uint64_t now)
{
	if (!r->have_time) {
		r->have_time = 1;
		r->last_kf_ns = now;
		return 0;
	}
	if (now < r->last_kf_ns || !r->since_kf_records)
		return 0;
	uint64_t age = now - r->last_kf_ns;
	if (age < r->o.kf_min_ns)
		return 0;
	iogp_replay_wstats st;
	iogp_replay_writer_stats(r->w, &st);
	uint64_t kf = st.last_keyframe_bytes ? st.last_keyframe_bytes : 0;
	if (age >= r->o.kf_max_ns || r->keyframes == 0 ||
	    st.bytes_since_keyframe >= (uint64_t)r->o.kf_ratio * kf)
		return iogp_recorder_keyframe(r, now);
	return 0;
}

/* Whether r->in (payload, decoded) is a SNAPSHOT that brings nothing: no
 * new sequence number (seq is the source's last, so readers see no gap
 * without it), not a source's last word (FINAL), a source in sync, and
 * exactly the state the model holds for it: the model's own SNAPSHOT of the
 * source, with this one's flags and clocks (t1 and wall only move the
 * source's clock, which its next DELTA moves anyway), encodes to the same
 * bytes. Keyframes already hold that state, so it is neither applied nor
 * written: the recorder's model stays what a reader of the file rebuilds. */
static int snapshot_redundant(iogp_recorder *r, const void *payload, size_t len)
{
	const iogp_msg *m = &r->in;
	size_t i;
	iogp_source_info si;
	if (m->kind != IOGP_SNAPSHOT || (m->flags & IOGP_F_FINAL) ||
	    iogp_model_source_index(r->model, m->source, &i) < 0 ||
	    iogp_model_source(r->model, i, &si) < 0 || !si.messages || !si.in_sync ||
	    m->seq != si.last_seq || iogp_model_snapshot(r->model, i, m->flags, &r->snap) < 0)
		return 0;
	r->snap.t1_ns = m->t1_ns;
	r->snap.wall_ns = m->wall_ns;
	/* not r->buf: the payload may be there (iogp_recorder_add_msg) */
	long n = iogp_msg_encode(&r->snap, NULL, 0);
	if (n != (long)len || grow(&r->cmp, &r->cmpcap, len) < 0 ||
	    iogp_msg_encode(&r->snap, r->cmp, r->cmpcap) != n)
		return 0;
	return !memcmp(r->cmp, payload, len);
}

int iogp_recorder_add(iogp_recorder *r, const void *payload, size_t len, uint64_t recv_ns)
{
	/* A DELTA's source state (model and transform: thousands of sources
	 * outgrow the caches) is asked for first, so it arrives while the
	 * payload is decoded, once, for the model and the writer's transform. */
	iogp_kind kind;
	uint64_t source;
	if (iogp_msg_peek(payload, len, &kind, NULL, &source, NULL) == 0 && kind == IOGP_DELTA) {
		iogp_model_prefetch(r->model, source);
		replay__prefetch(r->w, source);
	}
	int rc = iogp_msg_decode(&r->in, payload, len, NULL, 0);
	if (rc >= 0 && r->in.kind == IOGP_SNAPSHOT && snapshot_redundant(r, payload, len)) {
		r->snapshots_skipped++;
		return 0;
	}
	if (rc >= 0)
		rc = iogp_model_apply(r->model, &r->in, recv_ns);
	if (rc < 0 && rc != IOGP_EUNKNOWN) {
		r->rejected++;
		return rc;
	}
	/* An undecodable-by-model DELTA (source not yet known) is still the
	 * stream's data: keep it, a later SNAPSHOT makes it readable. */
	if ((rc = iogp_replay_write_msg(r->w, recv_ns, payload, len, &r->in)) < 0)
		return rc;
	r->added++;
	r->last_recv_ns = recv_ns;
	r->since_kf_records++;
	return maybe_keyframe(r, recv_ns);
}

int iogp_recorder_add_msg(iogp_recorder *r, const iogp_msg *msg, uint64_t recv_ns)
{
	long len = iogp_msg_encode(msg, NULL, 0);
	if (len < 0)
		return (int)len;
	int rc = ensure_buf(r, (size_t)len);
	if (rc < 0)
		return rc;
	len = iogp_msg_encode(msg, r->buf, r->bufcap);
	if (len < 0)
		return (int)len;
	/* The model may hold pointers into r->buf only during add; copy-free. */
	return iogp_recorder_add(r, r->buf, (size_t)len, recv_ns);
}

void iogp_recorder_refused(iogp_recorder *r, uint64_t n)
{
	r->rejected += n;
}

/* A losses note first (so a file says "none"), then whenever the counts
 * moved since the last one. */
static int note_losses(iogp_recorder *r)
{
	iogp_model_stats ms;
	iogp_model_get_stats(r->model, &ms);
	if (r->noted && ms.gaps == r->noted_gaps && r->rejected == r->noted_refused)
		return 0;
	uint64_t t = r->last_recv_ns ? r->last_recv_ns : iogp_wall_ns();
	int rc = iogp_replay_note_losses(r->w, t, ms.gaps, r->rejected);
	if (rc < 0)
		return rc;
	r->noted = 1;
	r->noted_gaps = ms.gaps;
	r->noted_refused = r->rejected;
	return 0;
}

int iogp_recorder_flush(iogp_recorder *r)
{
	int rc = note_losses(r);
	if (rc < 0)
		return rc;
	return iogp_replay_flush(r->w);
}

static void recorder_free(iogp_recorder *r)
{
	iogp_model_free(r->model);
	iogp_msg_free(&r->snap);
	iogp_msg_free(&r->in);
	free(r->buf);
	free(r->cmp);
	free(r);
}

int iogp_recorder_close(iogp_recorder *r)
{
	if (!r)
		return 0;
	int rc = note_losses(r);
	int rc2 = iogp_replay_close(r->w);
	if (rc >= 0)
		rc = rc2;
	recorder_free(r);
	return rc;
}

void iogp_recorder_abandon(iogp_recorder *r)
{
	if (!r)
		return;
	iogp_replay_abandon(r->w);
	recorder_free(r);
}

const iogp_model *iogp_recorder_model(const iogp_recorder *r)
{
	return r->model;
}

void iogp_recorder_get_stats(const iogp_recorder *r, iogp_recorder_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->added = r->added;
	st->rejected = r->rejected;
	iogp_model_stats ms;
	iogp_model_get_stats(r->model, &ms);
	st->gaps = ms.gaps;
	st->keyframes = r->keyframes;
	st->snapshots_skipped = r->snapshots_skipped;
	iogp_replay_writer_stats(r->w, &st->file);
}
