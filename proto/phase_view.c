/* phase_view.c - I/O phases and findings as both viewers show them: rows,
 * labels and lanes of the phases panel, where a finding leads, and the
 * phases CSV and findings text of snapshots (iogp_phase_view.h). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "iogp_err.h"
#include "iogp_export.h"
#include "iogp_layers.h"
#include "iogp_panels.h"
#include "iogp_phase_view.h"
#include "iogp_units.h"

const char *const iogp_phase_heads[IOGP_PC_N] = {
	"start", "duration", "op", "layer", "ranks", "files", "fashion", "bytes", "mean req",
	"spatiality",
};

int iogp_phases_of_layer(const iogp_model *m, int layer, iogp_phase **out, size_t *n,
                         uint64_t *dropped)
{
	/* a view layer's per-file records carry its id (iogp_layers.h) */
	iogp_phase_opts o = { .layer = layer >= 0 && layer < IOGP_LAYER_N ? layer : IOGP_FR_POSIX };
	return iogp_model_phases(m, &o, out, n, dropped);
}

void iogp_phase_row_build(iogp_phase_row *r, const iogp_phase *p, int style)
{
	int cell = style == IOGP_UNITS_CELL;
	memset(r, 0, sizeof(*r));
	time_t t = (time_t)(p->start_ns / 1000000000ull);
	struct tm tm;
	localtime_r(&t, &tm);
	snprintf(r->cell[IOGP_PC_START], sizeof(r->cell[0]), "%02d:%02d:%02d.%u", tm.tm_hour, tm.tm_min,
	         tm.tm_sec, (unsigned)(p->start_ns % 1000000000ull / 100000000ull));
	char d[32];
	iogp_fmt_ns(d, sizeof(d), (double)(p->end_ns > p->start_ns ? p->end_ns - p->start_ns : 0), style);
	snprintf(r->cell[IOGP_PC_DURATION], sizeof(r->cell[0]), "%s%s", d, p->open ? "+" : "");
	snprintf(r->cell[IOGP_PC_OP], sizeof(r->cell[0]), "%s", p->op == IOGP_OP_WRITE ? "write" : "read");
	snprintf(r->cell[IOGP_PC_LAYER], sizeof(r->cell[0]), "%s", iogp_layer_title((int)p->layer));
	if (p->ranks == 1 && p->rank >= 0)
		snprintf(r->cell[IOGP_PC_RANKS], sizeof(r->cell[0]), "rank %" PRId64, p->rank);
	else
		snprintf(r->cell[IOGP_PC_RANKS], sizeof(r->cell[0]), "%u", p->ranks);
	snprintf(r->cell[IOGP_PC_FILES], sizeof(r->cell[0]), "%u", p->files);
	snprintf(r->cell[IOGP_PC_FASHION], sizeof(r->cell[0]), "%s",
	         p->shared ? "shared" : cell ? "per-proc" : "file per process");
	iogp_fmt_bytes(r->cell[IOGP_PC_BYTES], sizeof(r->cell[0]), (double)p->bytes, style);
	double mean = p->requests ? (double)p->bytes / (double)p->requests : 0;
	iogp_fmt_size(r->cell[IOGP_PC_REQUEST], sizeof(r->cell[0]), mean, style);
	snprintf(r->cell[IOGP_PC_SPATIALITY], sizeof(r->cell[0]), "%s", iogp_spatiality_name(p->spatiality));
	static const char *const brief[] = { "consec", "seq", "random", "?" };
	if (cell)
		snprintf(r->label, sizeof(r->label), "%s %s %s", r->cell[IOGP_PC_BYTES],
		         r->cell[IOGP_PC_REQUEST],
		         p->spatiality >= 0 && p->spatiality <= IOGP_SPAT_UNKNOWN ? brief[p->spatiality] : "?");
	else
		snprintf(r->label, sizeof(r->label), "%s · %s · %s", r->cell[IOGP_PC_BYTES],
		         r->cell[IOGP_PC_REQUEST], r->cell[IOGP_PC_SPATIALITY]);
	snprintf(r->label_short, sizeof(r->label_short), "%s", r->cell[IOGP_PC_BYTES]);
}

#define MAX_LANES 256

int iogp_phase_lanes(const double *x0, const double *x1, size_t n, int max, int *lane)
{
	double end[MAX_LANES];
	int used = 0;
	if (max > MAX_LANES)
		max = MAX_LANES;
	for (size_t i = 0; i < n; i++) {
		lane[i] = -1;
		for (int k = 0; k < used; k++)
			if (end[k] < x0[i]) {
				lane[i] = k;
				break;
			}
		if (lane[i] < 0 && used < max)
			lane[i] = used++;
		if (lane[i] >= 0)
			end[lane[i]] = x1[i];
	}
	return used;
}

int iogp_phases_write_csv(FILE *out, const iogp_phase *p, size_t n)
{
	int rc = iogp_phases_csv_header(out);
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = iogp_phases_csv_row(out, &p[i]);
	return rc;
}

const char *iogp_insight_severity_name(int severity)
{
	static const char *const n[] = { "info", "warn", "high" };
	return severity >= IOGP_SEV_INFO && severity <= IOGP_SEV_HIGH ? n[severity] : "?";
}

static int shown(int p, unsigned viewer)
{
	const iogp_panel *e = iogp_panel_get(p);
	return e && (e->viewers & viewer) ? p : -1;
}

int iogp_insight_panel(const iogp_insight *x, unsigned viewer)
{
	if (!x || !x->panel)
		return -1;
	int p = shown(iogp_panel_find(x->panel), viewer);
	if (p >= 0)
		return p;
	/* what shows the same where the named panel is not there (yet) */
	static const char *const instead[][2] = { { "nodes", "rates" }, { "files", "phases" } };
	for (size_t i = 0; i < sizeof(instead) / sizeof(instead[0]); i++)
		if (!strcmp(x->panel, instead[i][0]))
			return shown(iogp_panel_find(instead[i][1]), viewer);
	return -1;
}

int iogp_insights_write_text(FILE *out, const iogp_insight *v, size_t n)
{
	if (!n)
		fprintf(out, "no findings: nothing stands out (or too little data yet)\n");
	else
		fprintf(out, "%zu finding%s, most severe first\n", n, n == 1 ? "" : "s");
	for (size_t i = 0; i < n; i++)
		fprintf(out, "[%s] %s (%s panel)\n", iogp_insight_severity_name(v[i].severity), v[i].text,
		        v[i].panel ? v[i].panel : "no");
	return ferror(out) ? IOGP_EIO : 0;
}
