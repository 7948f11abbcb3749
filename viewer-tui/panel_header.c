/* panel_header.c - the two header lines: where the data comes from, sources
 * up/quiet/gone, messages/s, gaps, drops, recording, replay position; then
 * the selection (or a status message). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "iogp_probe_view.h"
#include "top.h"

struct pen {
	top_surf *s;
	int y, x, end;
	int measure;   /* only count the columns */
};

static void put(struct pen *p, int style, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void put(struct pen *p, int style, const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (p->measure) {
		p->x += (int)strlen(buf);
		return;
	}
	if (p->x >= p->end)
		return;
	/* never a word cut in two: what fits up to a space, else nothing */
	int room = p->end - p->x, len = (int)strlen(buf);
	if (len > room) {
		int n = room;
		while (n > 0 && buf[n] != ' ')
			n--;
		while (n > 0 && buf[n - 1] == ' ')
			n--;
		buf[n] = '\0';
		p->x += draw_text(p->s, p->y, p->x, room, style, buf);
		p->x = p->end;
		return;
	}
	p->x += draw_text(p->s, p->y, p->x, room, style, buf);
}

void header_sources(const top_frame *f, src_counts *c)
{
	iogp_model_live lv;
	iogp_model_get_live(f->m, &lv);
	c->up = lv.sources_live + lv.sources_new;
	c->quiet = lv.sources_quiet;
	c->gone = lv.sources_gone;
	c->restarted = lv.restarts;
}

static const char *base(const char *p)
{
	const char *s = p ? strrchr(p, '/') : NULL;
	return s ? s + 1 : p ? p : "";
}

/* Line 1; the file name or endpoint gets namew columns at most; c: the
 * sources' states (counted once a frame: a visit of every source, 2.5 ms
 * at 50,000, was made twice, to measure the line and to draw it). */
static void line1(const top_frame *f, struct pen *pp, int narrow, int namew, const src_counts *cp)
{
	const src_counts c = *cp;
	struct pen p = *pp;
	const top_status *st = f->st;
	switch (st->mode) {
	case MODE_REPLAY: {
		char pos[24], len[24];
		double span = st->f.last_ns > st->f.first_ns ? (double)(st->f.last_ns - st->f.first_ns) / 1e9 : 0;
		double at = st->f.pos_ns > st->f.first_ns ? (double)(st->f.pos_ns - st->f.first_ns) / 1e9 : 0;
		iogp_fmt_duration(pos, sizeof(pos), at);
		iogp_fmt_duration(len, sizeof(len), span);
		put(&p, ST_LABEL, "REPLAY");
		put(&p, ST_NORMAL, " %.*s %s/%s", namew, base(st->f.where), pos, len);
		put(&p, ST_NORMAL, " x%g", st->f.speed);
		if (st->f.seeking) {   /* the keys stay live meanwhile */
			char to[24];
			iogp_fmt_duration(to, sizeof(to), st->f.seek_to_ns > st->f.first_ns ?
			                  (double)(st->f.seek_to_ns - st->f.first_ns) / 1e9 : 0);
			put(&p, ST_WARN, " SEEKING %s %.0f%%", to, st->f.seek_done * 100);
		} else if (st->f.at_end)
			put(&p, ST_WARN, " END");
		else if (st->f.paused)
			put(&p, ST_WARN, " PAUSED");
		break;
	}
	case MODE_DEMO:
		put(&p, ST_LABEL, "DEMO");
		put(&p, ST_NORMAL, " %d worker%s", st->demo_workers, st->demo_workers == 1 ? "" : "s");
		if (st->f.paused)
			put(&p, ST_WARN, " PAUSED");
		break;
	default:
		put(&p, ST_LABEL, "LIVE");
		put(&p, ST_NORMAL, " %.*s", namew, st->f.where ? st->f.where : "");
		if (st->f.paused)
			put(&p, ST_WARN, " PAUSED");
		break;
	}
	const char *sp = narrow ? " " : "  ";
	put(&p, ST_NORMAL, "%s%s%zu up", sp, narrow ? "" : "sources ", c.up);
	put(&p, c.quiet ? ST_WARN : ST_NORMAL, " %zu quiet", c.quiet);
	put(&p, ST_NORMAL, " %zu gone", c.gone);
	if (c.restarted)
		put(&p, ST_WARN, " %zu restarted", c.restarted);
	put(&p, ST_NORMAL, "%s%.1f msg/s", sp, st->f.msgs_per_s);
	iogp_model_stats ms;
	iogp_model_get_stats(f->m, &ms);
	uint64_t drops = ms.dropped;   /* summed as they arrive: no visit of every source */
	put(&p, ms.gaps ? ST_WARN : ST_NORMAL, "%sgaps %" PRIu64, sp, ms.gaps);
	put(&p, drops ? ST_WARN : ST_NORMAL, "%sdrops %" PRIu64, sp, drops);
	uint64_t bad = ms.bad_messages + st->f.malformed;
	if (bad)
		put(&p, ST_BAD, "%sbad %" PRIu64, sp, bad);

	*pp = p;
}

void panel_header_draw(const top_frame *f, top_surf *s, top_rect r)
{
	if (r.h <= 0)
		return;
	const top_status *st = f->st;
	int narrow = r.w < 100;
	/* the name gives way first when the line is too long */
	int namew = narrow ? 24 : 60;
	struct pen m = { s, r.y, r.x, r.x + r.w, 1 };
	src_counts c;
	header_sources(f, &c);
	line1(f, &m, narrow, namew, &c);
	if (m.x > r.x + r.w) {
		const char *name = st->mode == MODE_REPLAY ? base(st->f.where) : st->f.where ? st->f.where : "";
		int nl = (int)strlen(name);
		namew = (nl < namew ? nl : namew) - (m.x - (r.x + r.w));
	}
	if (namew < 4)
		namew = 4;
	struct pen p = { s, r.y, r.x, r.x + r.w, 0 };
	line1(f, &p, narrow, namew, &c);
	if (r.h < 2)
		return;

	/* line 2: status message, else the selection and recording */
	p = (struct pen){ s, r.y + 1, r.x, r.x + r.w, 0 };
	draw_clear(s, (top_rect){ r.y + 1, r.x, 1, r.w });
	int message = f->v->msg[0] && f->mono_ns < f->v->msg_until;
	char rec[160];
	int rec_style = ST_DIM;
	if (st->f.recording) {
		char sz[24];
		iogp_fmt_bytes(sz, sizeof(sz), (double)st->f.rec_bytes, IOGP_UNITS_CELL);
		snprintf(rec, sizeof(rec), "REC %s %s", base(st->f.rec_path), sz);
		rec_style = ST_BAD;
	} else if (st->f.rec_error) {
		snprintf(rec, sizeof(rec), "rec failed: %s", st->f.rec_error);
		rec_style = ST_BAD;
	} else {
		snprintf(rec, sizeof(rec), "rec off");
	}
	/* right side, most important first: damage, findings, recording, help */
	char dmg[64] = "";
	if (st->f.bad_frames || st->f.skipped_bytes) {
		char b[24];
		iogp_fmt_bytes(b, sizeof(b), (double)st->f.skipped_bytes, IOGP_UNITS_CELL);
		snprintf(dmg, sizeof(dmg), "damaged %sB skipped", b);
	}
	/* the findings: how many, and the key of their panel */
	char ins[48] = "";
	size_t nins = 0;
	const iogp_insight *iv = insights_get(f, &nins, 0);
	if (nins)
		snprintf(ins, sizeof(ins), "%zu finding%s (%c)", nins, nins == 1 ? "" : "s",
		         iogp_panel_get(IOGP_PANEL_INSIGHTS)->key);
	/* probes: the largest slowdown now, and the key of their panel */
	char slow[48] = "";
	int64_t worst;
	int nprobe = panel_probe_worst(f, &worst);
	if (nprobe && worst >= 0) {
		char x[24];
		iogp_probe_factor(x, sizeof(x), worst);
		snprintf(slow, sizeof(slow), "slowdown %s (%c)", x, iogp_panel_get(IOGP_PANEL_PROBE)->key);
	}
	int lvl = iogp_probe_level(worst);
	const char *part[5] = { dmg, slow, ins, rec, "? help" };
	int style[5] = { ST_BAD, lvl == 2 ? ST_BAD : lvl == 1 ? ST_WARN : ST_NORMAL,
	                 nins && iv[0].severity > IOGP_SEV_INFO ? ST_WARN : ST_NORMAL, rec_style, ST_DIM };
	int room = p.end - p.x - 2 - (message ? 20 : 56), used = 0, show[5] = { 0, 0, 0, 0, 0 };
	for (int i = 0; i < 5; i++) {
		int l = (int)strlen(part[i]);
		if (l && used + l + (used ? 2 : 0) <= room) {
			used += l + (used ? 2 : 0);
			show[i] = 1;
		}
	}
	struct pen q = { s, p.y, p.end - used, p.end, 0 };
	for (int i = 0; i < 5; i++) {
		if (!show[i])
			continue;
		put(&q, style[i], "%s", part[i]);
		q.x += 2;
	}
	p.end -= used + (used ? 2 : 0);
	if (message) {
		put(&p, ST_STATUS, "%s", f->v->msg);
		return;
	}
	if (st->mode == MODE_LIVE && iogp_model_source_count(f->m) == 0) {
		/* nothing yet: say what to run */
		const char *w = st->f.where ? st->f.where : "";
		char ep[256];
		snprintf(ep, sizeof(ep), "%s", w);
		ep[strcspn(ep, " ")] = '\0';
		char t[3][320];
		if (w[0] == '<') {
			snprintf(t[0], sizeof(t[0]), "no sources yet: waiting for the relay %s", w + 1);
			snprintf(t[1], sizeof(t[1]), "no sources yet");
			t[2][0] = '\0';
		} else if (!strcmp(ep, IOGP_DEFAULT_ENDPOINT) || !ep[0]) {
			snprintf(t[0], sizeof(t[0]), "no sources yet: run  iogram-run -- ./app  (or iogram-top --demo)");
			snprintf(t[1], sizeof(t[1]), "no sources yet: run  iogram-run -- ./app");
			snprintf(t[2], sizeof(t[2]), "run: iogram-run -- ./app");
		} else {
			snprintf(t[0], sizeof(t[0]), "no sources yet: run  IOGRAM_ENDPOINT=%s iogram-run -- ./app", ep);
			snprintf(t[1], sizeof(t[1]), "run: IOGRAM_ENDPOINT=%s iogram-run -- ./app", ep);
			snprintf(t[2], sizeof(t[2]), "run: iogram-run -e %s -- ./app", ep);
		}
		int k = 0;   /* the longest that fits */
		while (k < 2 && t[k + 1][0] && (int)strlen(t[k]) > p.end - p.x)
			k++;
		put(&p, ST_WARN, "%s", t[k]);
		return;
	}
	const top_view *v = f->v;
	switch (v->sel) {
	case IOGP_SEL_NODE:
		put(&p, ST_LABEL, "node %s", v->sel_node);
		break;
	case IOGP_SEL_SOURCE: {
		size_t i;
		const char *host = "?";
		int64_t pid = -1;
		if (iogp_model_source_index(f->m, v->sel_source, &i) == 0) {
			iogp_source_info si;
			iogp_model_source(f->m, i, &si);
			host = si.node;
			pid = si.pid;
		}
		put(&p, ST_LABEL, "source %s:%" PRId64, host, pid);
		break;
	}
	default:
		put(&p, ST_LABEL, "all %zu node%s", iogp_model_node_count(f->m),
		    iogp_model_node_count(f->m) == 1 ? "" : "s");
		break;
	}
	double w = view_window(v);
	if (w > 0)
		put(&p, ST_NORMAL, " | last %gs", w);
	else
		put(&p, ST_NORMAL, " | since start");
	static const char *const dirs[] = { "read+write", "read", "write" };
	static const char *const bins[] = { "native", "log2", "fixed" };
	put(&p, ST_NORMAL, " | %s | %s | %s", dirs[v->dir], bins[v->bins], v->logscale ? "log" : "linear");
	put(&p, ST_NORMAL, " | %s", iogp_layer_title(v->layer));
}

