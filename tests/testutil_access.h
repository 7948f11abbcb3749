/* testutil_access.h - a job whose access samples are known (testutil_access.c):
 * sources that read and write files at known rates, sampled as the agent
 * samples (a reservoir of at most 256 per interval over every access metric
 * and file, access_seen the requests it was drawn from), with per-file
 * records; into a model, a recording, or both. */
#ifndef TESTUTIL_ACCESS_H
#define TESTUTIL_ACCESS_H

#include <stdint.h>

#include "iogp.h"

#define TU_ACC_MAX_FILES 8
#define TU_ACC_EPOCH_NS 1795000000000000000ull   /* 2026-11-18, as iogram-synth */

typedef struct tu_acc_file {
	const char *path;
	int layer;               /* IOGP_FR_POSIX (posix.access) or IOGP_FR_STDIO (stdio.access) */
	uint64_t per_s;          /* requests a second */
	uint64_t size;           /* bytes a request */
	int op;                  /* IOGP_OP_READ, IOGP_OP_WRITE, or 2: alternating */
	uint64_t span;           /* offsets wrap at this (random offsets: 0 = sequential) */
	int random;
	uint32_t from_s, to_s;   /* active in [from_s, to_s) seconds of the run (0, 0: always) */
	uint64_t folded;         /* > 0: a directory's record (IOGP_FR_DIRAGG) folding as many */
} tu_acc_file;

typedef struct tu_acc_job {
	uint32_t seconds;        /* run length; one DELTA a second per source */
	uint32_t nsources;       /* each has every file (its own copy, same path) */
	uint32_t nfiles;
	tu_acc_file files[TU_ACC_MAX_FILES];
	int filerecs;            /* send per-file records (iogp_model_files) */
	uint64_t seed;
	/* truth, filled by tu_acc_run: per file, summed over the sources */
	uint64_t requests[TU_ACC_MAX_FILES], bytes[TU_ACC_MAX_FILES];
	uint64_t sampled[TU_ACC_MAX_FILES];    /* samples sent */
	uint64_t t0_wall, t1_wall;             /* wall span of the run */
} tu_acc_job;

/* Play the job into m (may be NULL) and into a recording at path (may be
 * NULL); the truth is filled in. Fails the test on an error. */
void tu_acc_run(tu_acc_job *j, iogp_model *m, const char *path);

#endif
