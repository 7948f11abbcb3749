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
 * it cost a byte or two (a path hash cost 9-10 random bytes each time). */
struct fent {
	uint64_t id;
	uint64_t h;     /* the full path's hash: what the table is looked up by */
	char *path;
	int named;      /* its path went out in a message (iog__files_copy) */
};
static struct fent *fents;      /* insertion order */
static uint32_t nfents, fents_cap;
static uint32_t *fhash;         /* open addressing: index + 1 into fents */
static uint32_t fhash_cap;
static size_t fbytes;

static uint64_t path_hash(const char *p)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *p; p++)
		h = (h ^ (uint8_t)*p) * 0x100000001b3ull;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return h ? h : 1;
}

static int fhash_grow(void)
{
	uint32_t cap = fhash_cap ? fhash_cap * 2 : 1024;
	uint32_t *h = calloc(cap, sizeof(*h));

	if (h == NULL)
		return IOG_ENOMEM;
	for (uint32_t i = 0; i < nfents; i++) {
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
static uint64_t frec_refused;             /* files the table could not take */

/* A table position as a record index. */
static uint32_t frec_ix(uint32_t pos)
{
	return pos < iog__frec_limit ? pos : iog__frec_limit;
}

uint64_t iog__file_at(uint32_t ix)
{
	return ix < iog__frec_limit ? __atomic_load_n(&frec_ids[ix], __ATOMIC_ACQUIRE) : 0;
}

uint64_t iog__file_overflow(void)
{
	uint32_t n = __atomic_load_n(&nfents, __ATOMIC_RELAXED);

	return (n > iog__frec_limit ? n - iog__frec_limit : 0) +
	       __atomic_load_n(&frec_refused, __ATOMIC_RELAXED);
}

uint64_t iog__file_id(const char *path)
{
	uint32_t ix;

	return iog__file_id_ix(path, &ix);
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
	if (fhash_cap) {
		for (uint32_t j = (uint32_t)h & (fhash_cap - 1); fhash[j]; j = (j + 1) & (fhash_cap - 1))
			if (fents[fhash[j] - 1].h == h) {
				*ix = frec_ix(fhash[j] - 1);
				id = fents[fhash[j] - 1].id;
				goto out;
			}
	}
	*ix = iog__frec_limit;   /* unless it gets a place below */
	if (nfents >= IOG_MAX_FILES || fbytes + len > IOG_MAX_FILE_BYTES) {
		__atomic_add_fetch(&frec_refused, 1, __ATOMIC_RELAXED);
		goto out;
	}
	if ((nfents + 1) * 2 > fhash_cap && fhash_grow() < 0)
		goto out;
	if (nfents == fents_cap) {
		uint32_t cap = fents_cap ? fents_cap * 2 : 256;
		struct fent *f = realloc(fents, cap * sizeof(*f));
		if (f == NULL)
			goto out;
		fents = f;
		fents_cap = cap;
	}
	/* what leaves the process: the full path, its last part, or only the
	 * id (IOGRAM_PATHS); the id is always the full path's */
	char hashed[24];
	const char *shown = path;
	if (iog__paths_mode == IOG_PATHS_BASENAME) {
		const char *slash = strrchr(path, '/');
		shown = slash && slash[1] ? slash + 1 : path;
	} else if (iog__paths_mode == IOG_PATHS_HASH) {
		snprintf(hashed, sizeof(hashed), "#%016llx", (unsigned long long)h);
		shown = hashed;
	}
	char *p = strdup(shown);
	if (p == NULL)
		goto out;
	id = (uint64_t)nfents + 1;
	fents[nfents] = (struct fent){ id, h, p, 0 };
	if (nfents < iog__frec_limit)
		__atomic_store_n(&frec_ids[nfents], id, __ATOMIC_RELEASE);
	*ix = frec_ix(nfents);
	uint32_t j = (uint32_t)h & (fhash_cap - 1);
	while (fhash[j])
		j = (j + 1) & (fhash_cap - 1);
	__atomic_store_n(&nfents, nfents + 1, __ATOMIC_RELAXED);
	fhash[j] = nfents;
	fbytes += len;
out:
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
