/* registry.c - the metrics registry (slot = wire metric id), the histogram
 * engines' index math, the learning phase, source labels and the file table. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"

iog_metric *iog__metrics[IOG_MAX_METRICS];
uint32_t iog__nmetrics;
uint32_t iog__catalog_gen = 1;

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;   /* metrics, labels, learning */
static pthread_mutex_t files_lock = PTHREAD_MUTEX_INITIALIZER;
static __thread int last_error;

const char *iog_strerror(int err)
{
	switch (err) {
	case IOG_OK: return "success";
	case IOG_EINVAL: return "invalid argument";
	case IOG_ENOMEM: return "out of memory";
	case IOG_ELIMIT: return "too many metrics or labels";
	case IOG_EEXIST: return "name registered with another kind or engine";
	case IOG_EDISABLED: return "iogram is disabled";
	case IOG_ESTATE: return "the agent has already started";
	}
	return "unknown error";
}

int iog_last_error(void)
{
	return last_error;
}

static void gen_bump(void)
{
	__atomic_add_fetch(&iog__catalog_gen, 1, __ATOMIC_RELEASE);
}

/* ---- engines -------------------------------------------------------------- */

/* Bins of a FIXED scheme that exist before the index math overflows. */
static uint32_t fixed_fit(uint64_t width, uint64_t offset, uint32_t nbins)
{
	uint64_t fit = (UINT64_MAX - offset) / width + 1;

	return fit < nbins ? (uint32_t)fit : nbins;
}

/* Normalise and check an engine; fills m's engine, bins and nbuckets. */
static int engine_setup(iog_metric *m, const iog_engine *eng)
{
	iog_engine e = eng ? *eng : (iog_engine){ .kind = IOG_ENGINE_NATIVE };

	switch (e.kind) {
	case IOG_ENGINE_NATIVE:
		if (e.k == 0)
			e.k = IOG_NATIVE_K;
		if (e.k < IOGP_NATIVE_K_MIN || e.k > IOGP_NATIVE_K_MAX)
			return IOG_EINVAL;
		iogp_bins_native(&m->bins, e.k);
		m->nbuckets = iogp_native_nbuckets(e.k);
		m->fast = e.k == IOG_NATIVE_K;
		m->ready = 1;
		e = (iog_engine){ .kind = e.kind, .k = e.k };
		break;
	case IOG_ENGINE_LOG2:
		iogp_bins_log2(&m->bins);
		m->nbuckets = 65;
		m->ready = 1;
		e = (iog_engine){ .kind = e.kind };
		break;
	case IOG_ENGINE_FIXED:
		if (e.nbins == 0)
			e.nbins = 256;
		if (e.width == 0 || e.nbins > IOG_MAX_BINS)
			return IOG_EINVAL;
		if (iogp_bins_fixed(&m->bins, e.width, e.offset) < 0)
			return IOG_EINVAL;
		m->nbuckets = fixed_fit(e.width, e.offset, e.nbins);
		m->ready = 1;
		e = (iog_engine){ .kind = e.kind, .width = e.width, .offset = e.offset, .nbins = e.nbins };
		break;
	case IOG_ENGINE_INTERVALS:
		if (e.edges == NULL || e.nedges == 0 || e.nedges > IOGP_MAX_EDGES)
			return IOG_EINVAL;
		if (iogp_bins_edges(&m->bins, e.edges, e.nedges) < 0)
			return IOG_EINVAL;
		m->nbuckets = e.nedges + 1;
		m->ready = 1;
		e = (iog_engine){ .kind = e.kind, .nedges = e.nedges, .edges = m->bins.edges };
		break;
	case IOG_ENGINE_LEARNING:
		if (e.nbins == 0)
			e.nbins = 256;
		if (e.learn == 0)
			e.learn = 1000;
		if (e.nbins > IOG_MAX_BINS || e.learn > IOG_MAX_LEARN)
			return IOG_EINVAL;
		m->nbuckets = 0;
		m->ready = 0;
		e = (iog_engine){ .kind = e.kind, .nbins = e.nbins, .learn = e.learn };
		break;
	default:
		return IOG_EINVAL;
	}
	m->engine = e;
	return 0;
}

static int engine_equal(const iog_engine *a, const iog_engine *b)
{
	if (a->kind != b->kind || a->k != b->k || a->width != b->width ||
	    a->offset != b->offset || a->nbins != b->nbins || a->nedges != b->nedges ||
	    a->learn != b->learn)
		return 0;
	return a->kind != IOG_ENGINE_INTERVALS ||
	       memcmp(a->edges, b->edges, a->nedges * sizeof(a->edges[0])) == 0;
}

uint64_t iog__dense_base(const iog_metric *m)
{
	if (m->bins.kind == IOGP_BINS_FIXED)
		return iogp_bins_index(&m->bins, m->bins.offset);
	return 0;
}

/* Dense bucket of v. FIXED (and learned) schemes clamp: values below the
 * first bin are counted in it, values past the last bin in the last. */
uint32_t iog__dense_index(const iog_metric *m, uint64_t v)
{
	switch (m->bins.kind) {
	case IOGP_BINS_NATIVE:
		return iogp_native_index(v, m->bins.k);
	case IOGP_BINS_LOG2:
		return v ? 64u - (uint32_t)__builtin_clzll(v) : 0;
	case IOGP_BINS_FIXED: {
		if (v < m->bins.offset)
			return 0;
		uint64_t d = (v - m->bins.offset) / m->bins.width;
		return d >= m->nbuckets ? m->nbuckets - 1 : (uint32_t)d;
	}
	case IOGP_BINS_EDGES:
		return (uint32_t)iogp_bins_index(&m->bins, v);
	}
	return 0;
}

/* ---- registration ----------------------------------------------------------- */

static iog_metric *fail(int err)
{
	last_error = err;
	return NULL;
}

static iog_metric *reg(const char *name, const char *unit, int kind, const iog_engine *eng)
{
	iog_metric tmp, *m;
	int rc;

	if (name == NULL || *name == '\0' || strlen(name) > IOGP_MAX_NAME)
		return fail(IOG_EINVAL);
	if (unit == NULL)
		unit = "";
	if (strlen(unit) > IOGP_MAX_UNIT)
		return fail(IOG_EINVAL);
	memset(&tmp, 0, sizeof(tmp));
	tmp.kind = kind;
	if (kind == IOGP_HISTOGRAM) {
		if ((rc = engine_setup(&tmp, eng)) < 0)
			return fail(rc);
	} else {
		tmp.ready = 1;
	}
	if (iog__ensure_started() < 0 || !iog__enabled)
		return fail(IOG_EDISABLED);

	pthread_mutex_lock(&reg_lock);
	uint32_t n = iog__nmetrics;
	for (uint32_t i = 0; i < n; i++) {
		m = iog__metrics[i];
		if (strcmp(m->name, name) != 0)
			continue;
		if (m->kind != kind || (kind == IOGP_HISTOGRAM && !engine_equal(&m->engine, &tmp.engine)))
			m = NULL;
		pthread_mutex_unlock(&reg_lock);
		return m ? m : fail(IOG_EEXIST);
	}
	if (n >= IOG_MAX_METRICS) {
		pthread_mutex_unlock(&reg_lock);
		return fail(IOG_ELIMIT);
	}
	if ((m = calloc(1, sizeof(*m))) == NULL) {
		pthread_mutex_unlock(&reg_lock);
		return fail(IOG_ENOMEM);
	}
	memcpy(m, &tmp, offsetof(iog_metric, bins));
	if (kind == IOGP_HISTOGRAM) {
		memcpy(&m->bins, &tmp.bins, sizeof(m->bins));
		if (m->engine.kind == IOG_ENGINE_INTERVALS)
			m->engine.edges = m->bins.edges;
	}
	m->nbuckets = tmp.nbuckets;
	m->fast = tmp.fast && iog__enabled;
	m->ready = tmp.ready;
	m->slot = n;
	snprintf(m->name, sizeof(m->name), "%s", name);
	snprintf(m->unit, sizeof(m->unit), "%s", unit);
	iog__metrics[n] = m;
	__atomic_store_n(&iog__nmetrics, n + 1, __ATOMIC_RELEASE);
	gen_bump();
	pthread_mutex_unlock(&reg_lock);
	return m;
}

iog_metric *iog_counter(const char *name, const char *unit)
{
	return reg(name, unit, IOGP_COUNTER, NULL);
}

iog_metric *iog_gauge(const char *name, const char *unit)
{
	return reg(name, unit, IOGP_GAUGE, NULL);
}

iog_metric *iog_histogram(const char *name, const char *unit, const iog_engine *engine)
{
	return reg(name, unit, IOGP_HISTOGRAM, engine);
}

iog_metric *iog_access_metric(const char *name)
{
	return reg(name, "", IOGP_ACCESS, NULL);
}

void iog__metrics_disable(void)
{
	uint32_t n = __atomic_load_n(&iog__nmetrics, __ATOMIC_ACQUIRE);

	for (uint32_t i = 0; i < n; i++)
		iog__metrics[i]->fast = 0;
}

/* ---- learning ---------------------------------------------------------------- */

struct learn {
	uint64_t *v, *n;     /* (value, count) pairs in arrival order */
	uint32_t len, cap;
	uint64_t count, min, max;
};
static struct learn learns[IOG_MAX_METRICS];

/* Under reg_lock: set equal-width bins over [min, max] of what was seen,
 * then count the buffered values. */
static void learn_finish(iog_shard *s, iog_metric *m)
{
	struct learn *l = &learns[m->slot];
	uint32_t nb = m->engine.nbins;
	uint64_t width = (l->max - l->min) / nb + 1;

	iogp_bins_fixed(&m->bins, width, l->min);
	m->nbuckets = fixed_fit(width, l->min, nb);
	__atomic_store_n(&m->ready, 1, __ATOMIC_RELEASE);
	if (s != NULL)
		for (uint32_t i = 0; i < l->len; i++)
			iog__hist_record_slow(s, m, l->v[i], l->n[i]);
	free(l->v);
	free(l->n);
	memset(l, 0, sizeof(*l));
	gen_bump();
}

void iog__learn_record(iog_shard *s, iog_metric *m, uint64_t v, uint64_t n)
{
	pthread_mutex_lock(&reg_lock);
	if (m->ready) {
		pthread_mutex_unlock(&reg_lock);
		iog__hist_record_slow(s, m, v, n);
		return;
	}
	struct learn *l = &learns[m->slot];
	if (l->len == l->cap) {
		uint32_t cap = l->cap ? l->cap * 2 : 64;
		if (cap > m->engine.learn)
			cap = m->engine.learn;
		uint64_t *nv = realloc(l->v, cap * sizeof(*nv));
		if (nv != NULL)
			l->v = nv;
		uint64_t *nn = nv ? realloc(l->n, cap * sizeof(*nn)) : NULL;
		if (nn != NULL)
			l->n = nn;
		if (nv == NULL || nn == NULL) {
			pthread_mutex_unlock(&reg_lock);
			iog__disable();
			return;
		}
		l->cap = cap;
	}
	if (l->len == 0 || v < l->min)
		l->min = v;
	if (l->len == 0 || v > l->max)
		l->max = v;
	l->v[l->len] = v;
	l->n[l->len] = n;
	l->len++;
	l->count += n;
	if (l->count >= m->engine.learn || l->len >= m->engine.learn)
		learn_finish(s, m);
	pthread_mutex_unlock(&reg_lock);
}

void iog__learn_finish_all(void)
{
	iog_shard *s = iog__shard();

	pthread_mutex_lock(&reg_lock);
	for (uint32_t i = 0; i < iog__nmetrics; i++) {
		iog_metric *m = iog__metrics[i];
		if (m->kind == IOGP_HISTOGRAM && !m->ready && learns[i].len > 0)
			learn_finish(s, m);
	}
	pthread_mutex_unlock(&reg_lock);
}

/* ---- labels ------------------------------------------------------------------- */

static struct {
	char *key, *value;
} labels[IOGP_MAX_LABELS];
static uint32_t nlabels;
static char host[256];

/* Under reg_lock. */
static int label_put(const char *key, const char *value)
{
	uint32_t i;

	for (i = 0; i < nlabels; i++)
		if (strcmp(labels[i].key, key) == 0)
			break;
	if (i == nlabels && nlabels == IOGP_MAX_LABELS)
		return IOG_ELIMIT;
	char *v = strdup(value);
	if (v == NULL)
		return IOG_ENOMEM;
	if (i == nlabels) {
		if ((labels[i].key = strdup(key)) == NULL) {
			free(v);
			return IOG_ENOMEM;
		}
		nlabels++;
	} else {
		free(labels[i].value);
	}
	labels[i].value = v;
	return 0;
}

int iog_label(const char *key, const char *value)
{
	int rc;

	if (key == NULL || value == NULL || *key == '\0' || strlen(key) > IOGP_MAX_KEY ||
	    strlen(value) > IOGP_MAX_VALUE)
		return IOG_EINVAL;
	pthread_mutex_lock(&reg_lock);
	rc = label_put(key, value);
	pthread_mutex_unlock(&reg_lock);
	if (rc == 0)
		gen_bump();
	return rc;
}

static void num_label(const char *key, uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	label_put(key, buf);
}

int iog__labels_init(const char *node, uint64_t start_wall_ns)
{
	static const char *const rank_vars[] = { "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK" };
	char exe[IOGP_MAX_VALUE + 1];
	const char *e;
	ssize_t n;

	pthread_mutex_lock(&reg_lock);
	if (node != NULL && *node)
		snprintf(host, sizeof(host), "%s", node);
	else if (gethostname(host, sizeof(host) - 1) < 0 || host[0] == '\0')
		snprintf(host, sizeof(host), "localhost");
	host[sizeof(host) - 1] = '\0';
	label_put("host", host);
	num_label("pid", (uint64_t)getpid());
	for (size_t i = 0; i < sizeof(rank_vars) / sizeof(rank_vars[0]); i++) {
		if ((e = getenv(rank_vars[i])) != NULL && *e && strlen(e) <= IOGP_MAX_VALUE) {
			label_put("rank", e);
			break;
		}
	}
	if ((e = getenv("SLURM_JOB_ID")) != NULL && *e && strlen(e) <= IOGP_MAX_VALUE)
		label_put("job", e);
	if ((n = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) > 0) {
		exe[n] = '\0';
		label_put("exe", exe);
	}
	num_label("start", start_wall_ns);
	pthread_mutex_unlock(&reg_lock);
	gen_bump();
	return 0;
}

/* Fork child (single threaded, locks already reset). */
void iog__labels_set_pid(long pid, uint64_t start_wall_ns)
{
	num_label("pid", (uint64_t)pid);
	num_label("start", start_wall_ns);
	gen_bump();
}

const char *iog__label_host(void)
{
	return host;
}

int iog__labels_copy(iogp_label *lab, uint32_t max, char *buf, size_t cap)
{
	size_t o = 0;
	int rc;

	pthread_mutex_lock(&reg_lock);
	rc = (int)nlabels;
	for (uint32_t i = 0; i < nlabels; i++) {
		size_t kl = strlen(labels[i].key) + 1, vl = strlen(labels[i].value) + 1;
		if (i >= max || o + kl + vl > cap) {
			rc = IOG_ELIMIT;
			break;
		}
		lab[i].key = memcpy(buf + o, labels[i].key, kl);
		o += kl;
		lab[i].value = memcpy(buf + o, labels[i].value, vl);
		o += vl;
	}
	pthread_mutex_unlock(&reg_lock);
	return rc;
}

/* ---- file table ---------------------------------------------------------------- */

/* A file's id is its place in the table + 1: small and ascending, so the
 * wire's gap-coded file lists, the records and the access samples that name
 * it cost a byte or two (a path hash cost 9-10 random bytes each time).
 * A directory's files beyond the first iog__dir_files (IOGRAM_DIR_FILES)
 * get no place of their own: they fold into the directory's entry,
 * "<dir>/\*", which has a place, a record and an id like a file's. */
struct fent {
	uint64_t id;
	uint64_t h;     /* the full path's hash: what the table is looked up by */
	char *path;
	int named;      /* its path went out in a message (iog__files_copy) */
	int dir;        /* a directory's entry: not in fhash */
};
static struct fent *fents;      /* insertion order */
static uint32_t nfents, fents_cap;
static uint32_t *fhash;         /* open addressing: index + 1 into fents */
static uint32_t fhash_cap;
static size_t fbytes;

/* A hash -> value map, open addressing (key 0: empty), for the directories
 * (the directory's hash -> its files with a place, and its entry's place
 * + 1 << 32) and the folded files (the file's hash -> its directory
 * entry's place), so a folded file is counted once however often opened. */
struct hmap {
	uint64_t *k, *v;
	uint32_t n, cap;
};
static struct hmap dirs, folds;
uint32_t iog__dir_files = 16;

static uint64_t path_hash_n(const char *p, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)p[i]) * 0x100000001b3ull;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return h ? h : 1;
}

static uint64_t path_hash(const char *p)
{
	return path_hash_n(p, strlen(p));
}

static uint64_t *hmap_find(const struct hmap *m, uint64_t h)
{
	for (uint32_t j = m->cap ? (uint32_t)h & (m->cap - 1) : 0; m->cap && m->k[j];
	     j = (j + 1) & (m->cap - 1))
		if (m->k[j] == h)
			return &m->v[j];
	return NULL;
}

/* The value of key h, inserted as 0 when absent (NULL: no memory, or the
 * map holds IOG_MAX_FILES already). */
static uint64_t *hmap_at(struct hmap *m, uint64_t h)
{
	uint64_t *v = hmap_find(m, h);
	uint32_t j;

	if (v != NULL)
		return v;
	if (m->n >= IOG_MAX_FILES)
		return NULL;
	if ((m->n + 1) * 2 > m->cap) {
		uint32_t cap = m->cap ? m->cap * 2 : 256;
		uint64_t *k = calloc(cap, sizeof(*k)), *v = calloc(cap, sizeof(*v));
		if (k == NULL || v == NULL) {
			free(k);
			free(v);
			return NULL;
		}
		for (uint32_t i = 0; i < m->cap; i++) {
			if (!m->k[i])
				continue;
			for (j = (uint32_t)m->k[i] & (cap - 1); k[j]; j = (j + 1) & (cap - 1))
				;
			k[j] = m->k[i];
			v[j] = m->v[i];
		}
		free(m->k);
		free(m->v);
		m->k = k;
		m->v = v;
		m->cap = cap;
	}
	for (j = (uint32_t)h & (m->cap - 1); m->k[j]; j = (j + 1) & (m->cap - 1))
		;
	m->k[j] = h;
	m->v[j] = 0;
	m->n++;
	return &m->v[j];
}

static int fhash_grow(void)
{
	uint32_t cap = fhash_cap ? fhash_cap * 2 : 1024;
	uint32_t *h = calloc(cap, sizeof(*h));

	if (h == NULL)
		return IOG_ENOMEM;
	for (uint32_t i = 0; i < nfents; i++) {
		if (fents[i].dir)
			continue;
		uint32_t j = (uint32_t)fents[i].h & (cap - 1);
		while (h[j])
			j = (j + 1) & (cap - 1);
		h[j] = i + 1;
	}
	free(fhash);
	fhash = h;
	fhash_cap = cap;
	return 0;
}

int iog__paths_mode;
uint32_t iog__frec_limit = 1024;
static uint64_t frec_ids[IOG_FREC_MAX];   /* id by record index, written once */
static uint64_t frec_folded[IOG_FREC_MAX]; /* a directory's record: files folded */
static uint64_t frec_refused;             /* files the table could not take */
static uint32_t dirs_beyond;              /* directory entries past the limit ... */
static uint64_t folded_beyond;            /* ... and the files folded into them */

/* A table position as a record index. */
static uint32_t frec_ix(uint32_t pos)
{
	return pos < iog__frec_limit ? pos : iog__frec_limit;
}

uint64_t iog__file_at(uint32_t ix)
{
	return ix < iog__frec_limit ? __atomic_load_n(&frec_ids[ix], __ATOMIC_ACQUIRE) : 0;
}

uint64_t iog__file_folded(uint32_t ix)
{
	return ix < iog__frec_limit ? __atomic_load_n(&frec_folded[ix], __ATOMIC_RELAXED) : 0;
}

uint64_t iog__file_overflow(void)
{
	uint32_t n = __atomic_load_n(&nfents, __ATOMIC_RELAXED);

	return (n > iog__frec_limit ? n - iog__frec_limit : 0) -
	       __atomic_load_n(&dirs_beyond, __ATOMIC_RELAXED) +
	       __atomic_load_n(&folded_beyond, __ATOMIC_RELAXED) +
	       __atomic_load_n(&frec_refused, __ATOMIC_RELAXED);
}

uint64_t iog__file_id(const char *path)
{
	uint32_t ix;

	return iog__file_id_ix(path, &ix);
}

/* A new entry (files_lock held), its name p (malloc'd, taken): its place,
 * or -1 when the table is full or out of memory. len: the bytes it counts
 * against the table's. */
static int64_t fent_add(uint64_t h, char *p, size_t len, int dir)
{
	if (p == NULL || nfents >= IOG_MAX_FILES || fbytes + len > IOG_MAX_FILE_BYTES ||
	    (!dir && (nfents + 1) * 2 > fhash_cap && fhash_grow() < 0))
		goto fail;
	if (nfents == fents_cap) {
		uint32_t cap = fents_cap ? fents_cap * 2 : 256;
		struct fent *f = realloc(fents, cap * sizeof(*f));
		if (f == NULL)
			goto fail;
		fents = f;
		fents_cap = cap;
	}
	uint32_t pos = nfents;
	fents[pos] = (struct fent){ (uint64_t)pos + 1, h, p, 0, dir };
	if (pos < iog__frec_limit)
		__atomic_store_n(&frec_ids[pos], fents[pos].id, __ATOMIC_RELEASE);
	if (!dir) {
		uint32_t j = (uint32_t)h & (fhash_cap - 1);
		while (fhash[j])
			j = (j + 1) & (fhash_cap - 1);
		fhash[j] = pos + 1;
	}
	__atomic_store_n(&nfents, pos + 1, __ATOMIC_RELAXED);
	fbytes += len;
	return pos;
fail:
	free(p);
	return -1;
}

/* What leaves the process for a path (IOGRAM_PATHS), malloc'd: the full
 * path, its last part, or only its hash h. A directory's entry (dir: the
 * directory of path, up to its last '/', slash, NULL for none) is
 * "<dir>/\*", "<last part of dir>/\*", "#<h>/\*". */
static char *shown_name(const char *path, uint64_t h, int dir, const char *slash)
{
	if (iog__paths_mode == IOG_PATHS_HASH) {
		char hashed[24];
		snprintf(hashed, sizeof(hashed), "#%016llx%s", (unsigned long long)h, dir ? "/*" : "");
		return strdup(hashed);
	}
	if (!dir) {
		const char *last = strrchr(path, '/');
		return strdup(iog__paths_mode == IOG_PATHS_BASENAME && last && last[1] ? last + 1 : path);
	}
	const char *from = path;
	if (iog__paths_mode == IOG_PATHS_BASENAME && slash) {
		for (from = slash; from > path && from[-1] != '/'; from--)
			;
		if (from == slash)   /* "/f": the root's */
			from = path;
	}
	size_t n = slash ? (size_t)(slash - from) + 1 : 0;
	char *p = malloc(n + 2);
	if (p != NULL) {
		memcpy(p, from, n);
		memcpy(p + n, "*", 2);
	}
	return p;
}

/* A new file in a directory that has iog__dir_files already (files_lock
 * held) folds into the directory's entry, made with the first: its place
 * (-1: none, the file is refused). d: the directory's value in dirs. */
static int64_t fold(const char *path, uint64_t h, const char *slash, uint64_t dh, uint64_t *d)
{
	uint32_t pos = (uint32_t)(*d >> 32);   /* + 1 */
	if (pos == 0) {
		size_t n = slash ? (size_t)(slash - path) + 2 : 1;
		int64_t p = fent_add(dh, shown_name(path, dh, 1, slash), n, 1);
		if (p < 0)
			return -1;
		pos = (uint32_t)p + 1;
		*d |= (uint64_t)pos << 32;
		if (pos - 1 >= iog__frec_limit)
			__atomic_add_fetch(&dirs_beyond, 1, __ATOMIC_RELAXED);
	}
	uint64_t *f = hmap_at(&folds, h);
	if (f == NULL)
		return -1;
	*f = pos - 1;
	if (pos - 1 < iog__frec_limit)
		__atomic_add_fetch(&frec_folded[pos - 1], 1, __ATOMIC_RELAXED);
	else
		__atomic_add_fetch(&folded_beyond, 1, __ATOMIC_RELAXED);
	return pos - 1;
}

uint64_t iog__file_id_ix(const char *path, uint32_t *ix)
{
	*ix = IOG_FREC_NONE;
	if (path == NULL)
		return 0;
	size_t len = strnlen(path, IOGP_MAX_PATH + 1);
	uint64_t h = path_hash(path);
	/* a file without a place in the table: an id no place can have */
	uint64_t id = h | (1ull << 63);

	if (len > IOGP_MAX_PATH) {
		*ix = iog__frec_limit;
		return id;
	}
	pthread_mutex_lock(&files_lock);
	int64_t pos = -1;
	if (fhash_cap) {
		for (uint32_t j = (uint32_t)h & (fhash_cap - 1); fhash[j]; j = (j + 1) & (fhash_cap - 1))
			if (fents[fhash[j] - 1].h == h) {
				pos = fhash[j] - 1;
				goto placed;
			}
	}
	const char *slash = strrchr(path, '/');
	uint64_t *d = NULL, *f;
	if (iog__dir_files) {
		if ((f = hmap_find(&folds, h)) != NULL) {   /* folded before */
			pos = (int64_t)*f;
			goto placed;
		}
		/* the directory, with its slash */
		uint64_t dh = path_hash_n(path, slash ? (size_t)(slash - path) + 1 : 0);
		d = hmap_at(&dirs, dh);   /* NULL: no memory; the file is on its own */
		if (d && (uint32_t)*d >= iog__dir_files) {
			pos = fold(path, h, slash, dh, d);
			goto placed;
		}
	}
	pos = fent_add(h, shown_name(path, h, 0, NULL), len, 0);
	if (pos >= 0 && d)
		(*d)++;
placed:
	if (pos < 0) {
		__atomic_add_fetch(&frec_refused, 1, __ATOMIC_RELAXED);
		*ix = iog__frec_limit;
	} else {
		*ix = frec_ix((uint32_t)pos);
		id = fents[pos].id;
	}
	pthread_mutex_unlock(&files_lock);
	return id;
}

uint64_t iog_file(const char *path)
{
	return iog__file_id(path);
}

static int file_cmp(const void *a, const void *b)
{
	uint64_t x = ((const iogp_file *)a)->id, y = ((const iogp_file *)b)->id;

	return x < y ? -1 : x > y;
}

static int arr_reserve(iogp_file **arr, uint32_t *cap, uint32_t n)
{
	if (n <= *cap)
		return 0;
	uint32_t c = *cap > 64 ? *cap : 64;
	while (c < n)
		c *= 2;
	iogp_file *a = realloc(*arr, c * sizeof(*a));
	if (a == NULL)
		return IOG_ENOMEM;
	*arr = a;
	*cap = c;
	return 0;
}

/* The names a message needs, ascending by id. A path leaves the process
 * only when something refers to it: want (nwant ids, any order,
 * duplicates allowed) lists what a DELTA refers to (its per-file records
 * and access samples); each of those not named before is put in *arr and
 * marked named. want == NULL (a SNAPSHOT): every file named so far, so a
 * receiver that starts from it, or missed the DELTA that named one, has
 * every name the stream has referred to. A file no record or sample
 * refers to (past IOGRAM_MAX_FILES and never sampled) is never named: it
 * is counted in the other files' record. */
int iog__files_copy(const uint64_t *want, uint32_t nwant, iogp_file **arr, uint32_t *cap)
{
	uint32_t n = 0;

	pthread_mutex_lock(&files_lock);
	if (want == NULL) {
		for (uint32_t i = 0; i < nfents; i++) {
			if (!fents[i].named)
				continue;
			if (arr_reserve(arr, cap, n + 1) < 0)
				goto nomem;
			(*arr)[n++] = (iogp_file){ fents[i].id, fents[i].path };
		}
	} else {
		for (uint32_t k = 0; k < nwant; k++) {
			uint64_t id = want[k];
			if (id == 0 || id > nfents || fents[id - 1].named)
				continue;
			if (arr_reserve(arr, cap, n + 1) < 0)
				goto nomem;
			fents[id - 1].named = 1;
			(*arr)[n++] = (iogp_file){ id, fents[id - 1].path };
		}
	}
	pthread_mutex_unlock(&files_lock);
	if (n > 1)
		qsort(*arr, n, sizeof(**arr), file_cmp);
	return (int)n;
nomem:
	/* what was marked but not handed out is named again next time */
	for (uint32_t i = 0; want != NULL && i < n; i++)
		fents[(*arr)[i].id - 1].named = 0;
	pthread_mutex_unlock(&files_lock);
	return IOG_ENOMEM;
}

/* ---- fork ---------------------------------------------------------------------- */

void iog__registry_prepare(void)
{
	pthread_mutex_lock(&reg_lock);
	pthread_mutex_lock(&files_lock);
}

void iog__registry_parent(void)
{
	pthread_mutex_unlock(&files_lock);
	pthread_mutex_unlock(&reg_lock);
}

void iog__registry_child(void)
{
	pthread_mutex_unlock(&files_lock);
	pthread_mutex_unlock(&reg_lock);
	/* a new source: nothing is named to its receivers yet */
	for (uint32_t i = 0; i < nfents; i++)
		fents[i].named = 0;
	/* learning restarts: the parent's values are not the child's */
	for (uint32_t i = 0; i < iog__nmetrics; i++) {
		learns[i].len = 0;
		learns[i].count = 0;
	}
}
