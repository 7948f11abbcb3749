/* view.h - iogram-view's command line, shared by the window and the
 * headless snapshot. */
#ifndef IOGV_VIEW_H
#define IOGV_VIEW_H

#include "session.h"

#include "iogp_err.h"   /* IOGP_EXIT_* */
#define IOGV_MAX_EP 16

typedef struct iogv_args {
	const char *listen[IOGV_MAX_EP], *connect[IOGV_MAX_EP];
	int nlisten, nconnect;
	const char *replay, *record, *snapshot, *panel, *node;
	double at;            /* seconds into the replay; < 0 from its end */
	int have_at;
	double window_s;      /* 0: since start */
	double width, height, scale;
	int have_size;
	int dark;             /* -1 follow the system, 0 light, 1 dark */
	int demo, any_address;
	int layer;            /* IOGP_LAYER_*: --layer, and the y key's choice */
	int weight;           /* IOGP_WEIGHT_*: --weight, the size panel by count or bytes */
	uint32_t history_s;
	double speed;
	int paused;
} iogv_args;

/* Headless: render a replay at a time to a file; no display needed. */
int iogv_snapshot(const iogv_args *a);
/* 1 when out names a CSV snapshot (OUT.csv: the folder OUT, into dir when
 * not NULL), else 0. */
int iogv_snapshot_csv_dir(const char *out, char *dir, size_t len);
/* The window (only in a build with GTK). */
int iogv_app_run(const iogv_args *a, int argc, char **argv);

#endif
