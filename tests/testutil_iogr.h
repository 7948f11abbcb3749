/* testutil_iogr.h - recordings for tests (testutil_iogr.c). */
#ifndef TESTUTIL_IOGR_H
#define TESTUTIL_IOGR_H

#include "iogp_model.h"

/* Every run-*.iogr of dir in one model (no record may be bad); *nfiles (when
 * not NULL) gets how many files there were. */
iogp_model *tu_load_runs(const char *dir, int *nfiles);

#endif
