/* iogp_layers.h - the I/O layers a viewer can show (POSIX system calls,
 * stdio calls, MPI-IO calls): for each, the name of its metric in every
 * slot the panels use, NULL where the layer has none. The panel catalog
 * names the POSIX metrics; iogp_layer_metric maps them to a layer. */
#ifndef IOGP_LAYERS_H
#define IOGP_LAYERS_H

enum iogp_layer_id {
	IOGP_LAYER_POSIX = 0,
	IOGP_LAYER_STDIO,
	IOGP_LAYER_MPIIO,        /* libiogram-mpi.so: what the application asked of MPI-IO */
	IOGP_LAYER_N
};

/* The slots: the six histograms in IOGP_POSIX_HISTS order, then the
 * byte counters of the rates panels, then the op counters, then the access
 * samples. A layer's per-file records (iogp_model_files) are its id:
 * IOGP_LAYER_POSIX = IOGP_FR_POSIX, IOGP_LAYER_STDIO = IOGP_FR_STDIO,
 * IOGP_LAYER_MPIIO = IOGP_FR_MPIIO. */
enum iogp_layer_slot {
	IOGP_SLOT_READ_SIZE = 0,
	IOGP_SLOT_WRITE_SIZE,
	IOGP_SLOT_READ_LATENCY,
	IOGP_SLOT_WRITE_LATENCY,
	IOGP_SLOT_META_LATENCY,
	IOGP_SLOT_QUEUE_DEPTH,
	IOGP_SLOT_READ_BYTES,
	IOGP_SLOT_WRITE_BYTES,
	IOGP_SLOT_READ_OPS,
	IOGP_SLOT_WRITE_OPS,
	IOGP_SLOT_ACCESS,        /* the access samples: posix.access, stdio.access */
	IOGP_SLOT_N
};
#define IOGP_LAYER_NHISTS 6   /* slots 0..5 */

typedef struct iogp_layer {
	int id;                           /* enum iogp_layer_id */
	const char *name;                 /* "posix": --layer, file names */
	const char *title;                /* "POSIX": headers */
	const char *metrics[IOGP_SLOT_N]; /* NULL: none in this layer */
} iogp_layer;

/* NULL if id is out of range. */
const iogp_layer *iogp_layer_get(int id);
/* A layer's name ("posix"; "?" if out of range) and title ("POSIX"). */
const char *iogp_layer_name(int id);
const char *iogp_layer_title(int id);
/* By name, case-insensitive ("posix", "stdio"); -1 if unknown. */
int iogp_layer_find(const char *name);
/* The next (dir 1) or previous (-1) layer, wrapping. */
int iogp_layer_step(int id, int dir);
/* The slot of a POSIX metric name (as the panel catalog has it); -1 if
 * the name is in no slot. */
int iogp_layer_slot(const char *posix_metric);
/* The metric of a slot in a layer; NULL where the layer has none. */
const char *iogp_layer_slot_metric(int layer, int slot);
/* A POSIX metric's counterpart in a layer: the same name if it is in no
 * slot (the layers share it), NULL if the layer has none. */
const char *iogp_layer_metric(int layer, const char *posix_metric);
/* What a slot measures, for "no <what> in the STDIO layer": "queue depth". */
const char *iogp_layer_slot_label(int slot);
/* The viewers' rate set: every layer's read and write bytes (the layer key
 * switches between them), then with_ops POSIX's read and write ops, then
 * an aggregating relay's summary counters (summary.*); how many went into
 * out (at most max). */
unsigned iogp_layer_rate_set(const char **out, unsigned max, int with_ops);
/* "posix, stdio" into buf (for usage and errors). */
const char *iogp_layer_names(char *buf, unsigned long len);

#endif
