/* filerec.h - the publisher's side of the per-file records (filerec.c). */
#ifndef IOG_FILEREC_H
#define IOG_FILEREC_H

#include "agent.h"

/* msg gets the files touched since the last call, as increments (iv: the
 * interval being collected); 0, or -1 when out of memory. */
int iog__frecs_collect(iogp_msg *msg, uint64_t iv);
/* msg gets every file's totals as last collected. */
int iog__frecs_snapshot(iogp_msg *msg);
/* Fork child: what the parent sent is not the child's. */
void iog__frecs_child(void);

#endif
