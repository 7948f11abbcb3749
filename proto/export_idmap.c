/* export_idmap.c - the exports' constant-time lookups: source ids and node
 * names (export_priv.h). */
#include <stdlib.h>
#include <string.h>

#include "iogp_err.h"
#include "export_priv.h"


uint64_t iogp__mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

uint64_t iogp__hash_str(const char *p)
{
	uint64_t h = 0xcbf29ce484222325ull;   /* FNV-1a */
	for (; *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
	return iogp__mix64(h);
}

void iogp__idmap_free(idmap *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

/* Index stored for key, or -1. */
long iogp__idmap_get(const idmap *m, uint64_t key)
{
	if (!m->cap)
		return -1;
	size_t mask = m->cap - 1;
	for (size_t i = iogp__mix64(key) & mask;; i = (i + 1) & mask) {
		if (!m->vals[i])
			return -1;
		if (m->keys[i] == key)
			return (long)m->vals[i] - 1;
	}
}

static int idmap_grow(idmap *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64;
	uint64_t *k = calloc(cap, sizeof(*k));
	uint32_t *v = calloc(cap, sizeof(*v));
	if (!k || !v) {
		free(k);
		free(v);
		return IOGP_ENOMEM;
	}
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->vals[i])
			continue;
		size_t j = iogp__mix64(m->keys[i]) & (cap - 1);
		while (v[j])
			j = (j + 1) & (cap - 1);
		k[j] = m->keys[i];
		v[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = k;
	m->vals = v;
	m->cap = cap;
	return 0;
}

/* Add key -> idx (key not present). */
int iogp__idmap_put(idmap *m, uint64_t key, uint32_t idx)
{
	if ((m->n + 1) * 4 > m->cap * 3) {
		int rc = idmap_grow(m);
		if (rc < 0)
			return rc;
	}
	size_t mask = m->cap - 1, i = iogp__mix64(key) & mask;
	while (m->vals[i])
		i = (i + 1) & mask;
	m->keys[i] = key;
	m->vals[i] = idx + 1;
	m->n++;
	return 0;
}

/* Node names: keys are the names' hashes, collisions settled by strcmp. */
long iogp__name_get(const idmap *m, char *const *names, const char *name, uint64_t h)
{
	if (!m->cap)
		return -1;
	size_t mask = m->cap - 1;
	for (size_t i = iogp__mix64(h) & mask;; i = (i + 1) & mask) {
		if (!m->vals[i])
			return -1;
		if (m->keys[i] == h && !strcmp(names[m->vals[i] - 1], name))
			return (long)m->vals[i] - 1;
	}
}


void *iogp__idmap_slot(idmap *m, uint64_t key, void **arr, size_t *n, size_t *cap, size_t elem,
                       size_t max, int *fresh, int *full)
{
	long i = iogp__idmap_get(m, key);

	*fresh = *full = 0;
	if (i >= 0)
		return (char *)*arr + (size_t)i * elem;
	if (*n >= max) {
		*full = 1;
		return NULL;
	}
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 64;
		void *p = realloc(*arr, c * elem);
		if (!p)
			return NULL;
		*arr = p;
		*cap = c;
	}
	if (iogp__idmap_put(m, key, (uint32_t)*n) < 0)
		return NULL;
	char *e = (char *)*arr + (*n)++ * elem;
	memset(e, 0, elem);
	*fresh = 1;
	return e;
}
