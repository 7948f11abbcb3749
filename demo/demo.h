/* demo.h - the built-in workload both viewers run with --demo: worker
 * processes, each labelled as its own node, doing real file I/O in a
 * temporary directory under the real interposer and streaming to the
 * viewer's private endpoint. */
#ifndef IOGRAM_DEMO_H
#define IOGRAM_DEMO_H

#include <stddef.h>

typedef struct iogram_demo iogram_demo;
/* Start the workers streaming to endpoint; -1 with err set on failure. */
int demo_start(iogram_demo **d, const char *endpoint, char *err, size_t errlen);
/* Reap exited workers and restart them (a restart is a new source). */
void demo_tick(iogram_demo *d);
int demo_workers(const iogram_demo *d, int *restarts);
void demo_stop(iogram_demo *d);   /* stop workers, remove the temp dir */
const char *demo_dir(const iogram_demo *d);

#endif
