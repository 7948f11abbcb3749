/* export_priv.h - shared by the CSV writers (export.c, export_phases.c). Not installed. */
#ifndef IOGP_EXPORT_PRIV_H
#define IOGP_EXPORT_PRIV_H

#include <stdio.h>

/* str as one CSV field (quoted when it holds a comma, quote or newline). */
void iogp__csv_field(FILE *out, const char *str);

#endif
