/* layers.c - the layer table: which metric each panel slot is in each
 * I/O layer (iogp_layers.h). */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "iogp_layers.h"
#include "iogp_model.h"
#include "iogp_metrics.h"

static const iogp_layer layers[IOGP_LAYER_N] = {
	{ IOGP_LAYER_POSIX, "posix", "POSIX",
	  { IOGP_M_READ_SIZE, IOGP_M_WRITE_SIZE, IOGP_M_READ_LATENCY, IOGP_M_WRITE_LATENCY,
	    IOGP_M_META_LATENCY, IOGP_M_QUEUE_DEPTH, IOGP_M_READ_BYTES, IOGP_M_WRITE_BYTES,
	    IOGP_M_READ_OPS, IOGP_M_WRITE_OPS, IOGP_M_ACCESS } },
	{ IOGP_LAYER_STDIO, "stdio", "STDIO",
	  { IOGP_M_STDIO_READ_SIZE, IOGP_M_STDIO_WRITE_SIZE, IOGP_M_STDIO_READ_LATENCY,
	    IOGP_M_STDIO_WRITE_LATENCY, NULL, NULL, IOGP_M_STDIO_READ_BYTES,
	    IOGP_M_STDIO_WRITE_BYTES, IOGP_M_STDIO_READ_OPS, IOGP_M_STDIO_WRITE_OPS,
	    IOGP_M_STDIO_ACCESS } },
	/* iogp_metrics.h's IOGP_MPIIO_METRICS: no queue depth, no access samples */
	{ IOGP_LAYER_MPIIO, "mpiio", "MPI-IO",
	  { "mpiio.read.size", "mpiio.write.size", "mpiio.read.latency", "mpiio.write.latency",
	    "mpiio.meta.latency", NULL, "mpiio.read.bytes", "mpiio.write.bytes", "mpiio.read.ops",
	    "mpiio.write.ops", NULL } },
};

static const char *const slot_labels[IOGP_SLOT_N] = {
	"read size", "write size", "read latency", "write latency", "meta latency",
	"queue depth", "read bytes", "write bytes", "read ops", "write ops", "access samples",
};

const iogp_layer *iogp_layer_get(int id)
{
	return id >= 0 && id < IOGP_LAYER_N ? &layers[id] : NULL;
}

const char *iogp_layer_name(int id)
{
	return id >= 0 && id < IOGP_LAYER_N ? layers[id].name : "?";
}

const char *iogp_layer_title(int id)
{
	return id >= 0 && id < IOGP_LAYER_N ? layers[id].title : "?";
}

int iogp_layer_find(const char *name)
{
	for (int i = 0; i < IOGP_LAYER_N && name; i++)
		if (!strcasecmp(name, layers[i].name))
			return i;
	return -1;
}

int iogp_layer_step(int id, int dir)
{
	return ((id + dir) % IOGP_LAYER_N + IOGP_LAYER_N) % IOGP_LAYER_N;
}

int iogp_layer_slot(const char *posix_metric)
{
	for (int s = 0; s < IOGP_SLOT_N && posix_metric; s++)
		if (!strcmp(posix_metric, layers[IOGP_LAYER_POSIX].metrics[s]))
			return s;
	return -1;
}

const char *iogp_layer_slot_metric(int layer, int slot)
{
	const iogp_layer *l = iogp_layer_get(layer);
	return l && slot >= 0 && slot < IOGP_SLOT_N ? l->metrics[slot] : NULL;
}

const char *iogp_layer_metric(int layer, const char *posix_metric)
{
	int s = iogp_layer_slot(posix_metric);
	if (s < 0)
		return posix_metric;
	return iogp_layer_slot_metric(layer, s);
}

const char *iogp_layer_slot_label(int slot)
{
	return slot >= 0 && slot < IOGP_SLOT_N ? slot_labels[slot] : "metric";
}

const char *iogp_layer_names(char *buf, unsigned long len)
{
	size_t u = 0;
	if (len)
		buf[0] = 0;
	for (int i = 0; i < IOGP_LAYER_N && u < len; i++)
		u += (size_t)snprintf(buf + u, len - u, "%s%s", i ? ", " : "", layers[i].name);
	return buf;
}

unsigned iogp_layer_rate_set(const char **out, unsigned max, int with_ops)
{
	unsigned n = 0;

	for (int l = 0; l < IOGP_LAYER_N; l++)
		for (int k = IOGP_SLOT_READ_BYTES; k <= IOGP_SLOT_WRITE_BYTES; k++)
			if (n < max && iogp_layer_slot_metric(l, k) != NULL)
				out[n++] = iogp_layer_slot_metric(l, k);
	for (int k = IOGP_SLOT_READ_OPS; with_ops && k <= IOGP_SLOT_WRITE_OPS; k++)
		if (n < max)
			out[n++] = iogp_layer_slot_metric(IOGP_LAYER_POSIX, k);
	/* an aggregating relay's per-source summaries, for their rows in a
	 * window (node_table.c); a ring gives them room only if they come */
	static const char *const sum[] = { IOGP_M_SUMMARY_READ_BYTES, IOGP_M_SUMMARY_WRITE_BYTES,
	                                   IOGP_M_SUMMARY_OPS, IOGP_M_SUMMARY_IO_TIME };
	for (unsigned k = 0; k < sizeof(sum) / sizeof(*sum) && n < max; k++)
		out[n++] = sum[k];
	return n;
}
