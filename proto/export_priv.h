/* export_priv.h - shared by the CSV writers (export.c, export_phases.c). Not installed. */
#ifndef IOGP_EXPORT_PRIV_H
#define IOGP_EXPORT_PRIV_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* export_idmap.c: source ids and node names in constant time. Open
 * addressing, linear probing; slots hold index + 1 (0 = empty). */
typedef struct idmap {
	uint64_t *keys;
	uint32_t *vals;
	size_t cap, n;         /* cap: a power of two, or 0 */
} idmap;
uint64_t iogp__mix64(uint64_t x);
uint64_t iogp__hash_str(const char *p);
void iogp__idmap_free(idmap *m);
long iogp__idmap_get(const idmap *m, uint64_t key);        /* index for key, or -1 */
int iogp__idmap_put(idmap *m, uint64_t key, uint32_t idx);
/* The index of name (hash h) among names, through m; -1 when absent. */
long iogp__name_get(const idmap *m, char *const *names, const char *name, uint64_t h);

/* The element of *arr (elem bytes each, *n of *cap) that key maps to in m;
 * a new key gets a zeroed element appended (*fresh = 1). NULL when out of
 * memory or when max elements are already held (*full = 1 then). */
void *iogp__idmap_slot(idmap *m, uint64_t key, void **arr, size_t *n, size_t *cap, size_t elem,
                       size_t max, int *fresh, int *full);

/* The most sources a series or access export follows. */
#define SERIES_MAX_SOURCES 1000000

#endif
