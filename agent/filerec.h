/* filerec.h - the publisher's side of the per-file records (filerec.c). */
#ifndef IOG_FILEREC_H
#define IOG_FILEREC_H

#include "agent.h"

/* msg gets, as increments, what receivers lack of the files touched: all
 * of it (all = 1: a flush), else the iog__frec_budget most urgent records
 * and every one that waited IOG_FREC_MAX_WAIT intervals (iv: the interval
 * being collected); 0, or -1 when out of memory. */
int iog__frecs_collect(iogp_msg *msg, uint64_t iv, int all);
/* 1 when a record waits: a SNAPSHOT is preceded by a DELTA with all = 1,
 * so DELTAs alone add up to every total (live windows, phases). */
int iog__frecs_waiting(void);
/* msg gets every file's totals as last collected; once it is sent,
 * iog__frecs_snapshot_sent(): nothing waits any more. */
int iog__frecs_snapshot(iogp_msg *msg);
void iog__frecs_snapshot_sent(void);
/* Fork child: what the parent sent is not the child's. */
void iog__frecs_child(void);

#endif
