/* panels.c - the panel catalog: one row per panel (names, aliases, titles,
 * metrics, tooltip, file stem, key, viewers) and the lookups on it. */
#include <stdio.h>
#include <string.h>

#include "iogp_metrics.h"
#include "iogp_model.h"
#include "iogp_panels.h"
#include "iogp_units.h"

/* Most rows leave zoom_only out (0: in the dashboard grids). */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
static const iogp_panel catalog[IOGP_PANEL_N] = {
	{ IOGP_PANEL_HEADER, "header", { NULL }, "Status", "status",
	  "Sources, messages per second, gaps, drops and recording", "header", 0,
	  IOGP_DATA_STATUS, { NULL }, 0, IOGP_VIEWER_GTK },
	{ IOGP_PANEL_SIZE, "size", { NULL }, "Request size", "request size",
	  "How large reads and writes are: a histogram of request sizes", "size", '1',
	  IOGP_DATA_HIST, { IOGP_M_READ_SIZE, IOGP_M_WRITE_SIZE }, 0, IOGP_VIEWER_ALL },
	{ IOGP_PANEL_QD, "qd", { "queue", "queue-depth", "queue_depth" }, "Queue depth", "queue depth",
	  "Requests already in flight when one starts", "queue_depth", '2',
	  IOGP_DATA_HIST, { IOGP_M_QUEUE_DEPTH }, 0, IOGP_VIEWER_ALL },
	{ IOGP_PANEL_LATENCY, "latency", { "latencies", "lat" }, "Latency", "latency",
	  "Time per request, read, write and metadata, with p50/p90/p99", "latency", '3',
	  IOGP_DATA_HIST, { IOGP_M_READ_LATENCY, IOGP_M_WRITE_LATENCY, IOGP_M_META_LATENCY }, 0,
	  IOGP_VIEWER_ALL },
	{ IOGP_PANEL_ACCESS, "access", { NULL }, "Access pattern", "access pattern",
	  "File offset against time for the busiest file, by read and write", "access", '4',
	  IOGP_DATA_ACCESS, { IOGP_M_ACCESS }, 1, IOGP_VIEWER_ALL },
	{ IOGP_PANEL_RATES, "rates", { NULL }, "Throughput per node", "node rates",
	  "Bytes per second per node: min, average, max and total", "rates", '5',
	  IOGP_DATA_RATES, { IOGP_M_READ_BYTES, IOGP_M_WRITE_BYTES }, 1, IOGP_VIEWER_ALL },
	{ IOGP_PANEL_HEATMAP, "heatmap", { NULL }, "Node heatmap", "node heatmap",
	  "Bytes per second of every node over time, as colour", "heatmap", '6',
	  IOGP_DATA_RATES, { IOGP_M_READ_BYTES, IOGP_M_WRITE_BYTES }, 1, IOGP_VIEWER_GTK },
	{ IOGP_PANEL_NODES, "nodes", { "ranks", "table", "stragglers" }, "Nodes and ranks",
	  "nodes and ranks",
	  "Each node or rank: rates, latency p50/p99, I/O time share, queue depth; the slowest "
	  "against the median", "nodes", '7', IOGP_DATA_NODES, { NULL }, 0, IOGP_VIEWER_ALL },
	{ IOGP_PANEL_PHASES, "phases", { "phase", "files" }, "I/O phases", "I/O phases",
	  "What the job does when: its phases of reads and writes over time, and their table",
	  "phases", '8', IOGP_DATA_PHASES, { NULL }, 1, IOGP_VIEWER_ALL },
	{ IOGP_PANEL_INSIGHTS, "insights", { "findings" }, "Insights", "insights",
	  "What stands out, with its numbers; a finding leads to the panel that shows it",
	  "insights", '9', IOGP_DATA_INSIGHTS, { NULL }, 0, IOGP_VIEWER_ALL },
	{ IOGP_PANEL_PROBE, "slowdown", { "probe", "probes" }, "Slowdown", "slowdown",
	  "The file system's slowdown as iogram probe feels it: each operation's response time "
	  "against its expected one, over time and per node", "slowdown", '0', IOGP_DATA_PROBE,
	  { NULL }, 1, IOGP_VIEWER_ALL, 1 },
	{ IOGP_PANEL_MATRIX, "matrix", { "traffic", "mpi" }, "MPI traffic", "MPI traffic",
	  "Bytes or messages each node (or rank of a node) sent to every other, with row and column "
	  "totals, and the message sizes", "matrix", 'M', IOGP_DATA_MATRIX, { NULL }, 0,
	  IOGP_VIEWER_ALL, 1 },
	{ IOGP_PANEL_MSGSIZE, "msgsize", { "message-size", "messages" }, "MPI message size",
	  "message size", "How large point-to-point MPI messages are: a histogram of their sizes",
	  "msgsize", 0, IOGP_DATA_HIST, { "mpi.p2p.size" }, 0, IOGP_VIEWER_ALL },
};

const iogp_panel *iogp_panel_get(int id)
{
	return id >= 0 && id < IOGP_PANEL_N ? &catalog[id] : NULL;
}

const char *iogp_panel_name(int id)
{
	return id >= 0 && id < IOGP_PANEL_N ? catalog[id].name : "dashboard";
}

const char *iogp_panel_title(int id)
{
	return id >= 0 && id < IOGP_PANEL_N ? catalog[id].title : "Dashboard";
}

int iogp_panel_find(const char *name)
{
	if (!name)
		return -1;
	if (!strcmp(name, "dashboard") || !strcmp(name, "all"))
		return IOGP_PANEL_DASHBOARD;
	for (int i = 0; i < IOGP_PANEL_N; i++) {
		if (!strcmp(name, catalog[i].name))
			return i;
		for (int a = 0; a < IOGP_PANEL_MAX_ALIASES && catalog[i].aliases[a]; a++)
			if (!strcmp(name, catalog[i].aliases[a]))
				return i;
	}
	return -1;
}

int iogp_panel_in_grid(int id, unsigned viewer)
{
	const iogp_panel *e = iogp_panel_get(id);
	return e && e->key && (e->viewers & viewer) && !e->zoom_only;
}

int iogp_panel_by_key(int key, unsigned viewer)
{
	for (int i = 0; i < IOGP_PANEL_N && key; i++)
		if (catalog[i].key == key && (catalog[i].viewers & viewer))
			return i;
	return -1;
}

int iogp_panel_step(int id, int dir, unsigned viewer)
{
	for (int n = 1; n <= IOGP_PANEL_N; n++) {
		int p = ((id + dir * n) % IOGP_PANEL_N + IOGP_PANEL_N) % IOGP_PANEL_N;
		if (catalog[p].key && (catalog[p].viewers & viewer))
			return p;
	}
	return id;
}

size_t iogp_panel_names(char *buf, size_t len)
{
	size_t u = 0;
	if (len)
		buf[0] = 0;
	/* the panels with a key in key order, then the others, then the whole */
	for (int keyed = 1; keyed >= 0; keyed--)
		for (int i = 0; i < IOGP_PANEL_N; i++)
			if (!catalog[i].key == !keyed && u < len)
				u += (size_t)snprintf(buf + u, len - u, "%s, ", catalog[i].name);
	if (u < len)
		u += (size_t)snprintf(buf + u, len - u, "dashboard");
	return u;
}

/* The unit of a catalog metric ("bytes", "ns", "requests"), NULL if unknown. */
static const char *metric_unit(const char *name)
{
#define X(id, mname, kind, unit, label) if (!strcmp(name, mname)) return unit;
	IOGP_POSIX_METRICS(X)
#undef X
	return NULL;
}

size_t iogp_panel_file(int id, const char *part, const char *ext, char *buf, size_t len)
{
	const iogp_panel *e = iogp_panel_get(id);
	const char *stem = e ? e->stem : "dashboard";
	/* a histogram's CSV names its unit: size-read.bytes.csv, latency-write.ns.csv */
	const char *unit = e && e->data == IOGP_DATA_HIST && e->metrics[0] && !strcmp(ext, "csv") ?
	                   metric_unit(e->metrics[0]) : NULL;
	char x[48];
	snprintf(x, sizeof(x), "%s%s%s", unit ? unit : "", unit ? "." : "", ext);
	int n;
	if (e && part && part[0] && e->metrics[0] && e->metrics[1])
		n = snprintf(buf, len, "%s-%s.%s", stem, part, x);
	else
		n = snprintf(buf, len, "%s.%s", stem, x);
	return n < 0 ? 0 : (size_t)n;
}

size_t iogp_panel_window_text(const struct iogp_model *m, const struct iogp_sel *sel,
                              double window_s, int cell, char *buf, size_t len)
{
	const char *sp = cell ? "" : " ";
	int n;

	if (window_s <= 0)
		n = snprintf(buf, len, "since start");
	else if (m != NULL && sel != NULL && sel->kind == IOGP_SEL_SOURCE &&
	         iogp_model_source_window_bytes(m, sel->source) == 0) {
		char c[32];

		iogp_fmt_count(c, sizeof(c), (double)iogp_model_source_count(m), 0);
		n = snprintf(buf, len, "last %g%ss: not kept per source at %s sources", window_s, sp, c);
	} else {
		n = snprintf(buf, len, "last %g%ss", window_s, sp);
	}
	return n > 0 ? (size_t)n : 0;
}
