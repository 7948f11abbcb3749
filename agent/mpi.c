/* mpi.c - libiogram-mpi: the MPI layer, through the MPI profiling interface.
 * Start-up at MPI_Init (labels from MPI: world rank and size, the node from
 * MPI_Get_processor_name unless IOGRAM_NODE is set; the layer's metrics),
 * the flush at MPI_Finalize, and point-to-point sends counted by
 * destination (peers.h) with the message-size histogram. Collectives are in
 * mpi_coll.c, MPI-IO in mpi_io.c. Before MPI_Init, after MPI_Finalize, on
 * agent threads and when anything here fails, every wrapper only calls the
 * MPI library: the host never notices. */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "mpi_layer.h"

int iog__mpi_on;
iog_mpi_slots iog__ms;
iog_mpi_hists iog__mh;

void *iog__mpi_sym(const char *name)
{
	void *f = dlsym(RTLD_NEXT, name);
	return f ? f : dlsym(RTLD_DEFAULT, name);
}

uint64_t iog__mpi_bytes(MPI_Datatype t, int64_t count)
{
	MPI_Count sz = 0;

	if (count <= 0 || IOG_CALL(MPI_Type_size_x, t, &sz) != MPI_SUCCESS || sz <= 0)
		return 0;
	return (uint64_t)count * (uint64_t)sz;
}

/* ---- communicator ranks to world ranks ---------------------------------------
 * Sends name their destination by its rank in a communicator; the matrix
 * wants world ranks. MPI_COMM_WORLD needs nothing; other communicators get
 * a translation table at their first send, in a fixed lock-free cache
 * (claimed by compare-and-swap, published with a release store, dropped at
 * MPI_Comm_free and then reused). A table is never freed while the process
 * runs (a racing sender may hold it: a few bytes per communicator); a full
 * cache translates each send on its own. */
#define COMM_CACHE 128
static struct comm_ent {
	uint64_t key;           /* the handle's bits, written before state = READY */
	int state;              /* FREE, BUSY (being built), READY, DEAD (freed) */
	int n;
	int32_t *map;
} comms[COMM_CACHE];
enum { C_FREE, C_BUSY, C_READY, C_DEAD };

static uint64_t handle_key(const void *h, size_t len)
{
	uint64_t k = 0;
	memcpy(&k, h, len < sizeof(k) ? len : sizeof(k));
	return k;
}

/* The group of comm's destinations (the remote group of an intercommunicator). */
static int dest_group(MPI_Comm comm, MPI_Group *g)
{
	int inter = 0;
	if (IOG_CALL(MPI_Comm_test_inter, comm, &inter) != MPI_SUCCESS)
		return -1;
	return (inter ? IOG_CALL(MPI_Comm_remote_group, comm, g) : IOG_CALL(MPI_Comm_group, comm, g)) ==
	               MPI_SUCCESS ? 0 : -1;
}

/* MPI_COMM_WORLD's group, made once (0), or -1. */
static int world_group(MPI_Group *out)
{
	static MPI_Group wg;
	static int have;
	if (!__atomic_load_n(&have, __ATOMIC_ACQUIRE)) {
		MPI_Group g;
		if (IOG_CALL(MPI_Comm_group, MPI_COMM_WORLD, &g) != MPI_SUCCESS)
			return -1;
		int no = 0;
		if (__atomic_compare_exchange_n(&have, &no, 2, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			wg = g;
			__atomic_store_n(&have, 1, __ATOMIC_RELEASE);
		} else {
			IOG_CALL(MPI_Group_free, &g);
		}
	}
	if (__atomic_load_n(&have, __ATOMIC_ACQUIRE) != 1)
		return -1;
	*out = wg;
	return 0;
}

static int64_t translate_one(MPI_Comm comm, int dest)
{
	MPI_Group g, wg;
	int w = -1;
	if (world_group(&wg) < 0 || dest_group(comm, &g) < 0)
		return -1;
	if (IOG_CALL(MPI_Group_translate_ranks, g, 1, &dest, wg, &w) != MPI_SUCCESS)
		w = -1;
	IOG_CALL(MPI_Group_free, &g);
	return w >= 0 ? w : -1;
}

static void build(struct comm_ent *e, MPI_Comm comm, uint64_t key)
{
	MPI_Group g, wg;
	int n = 0;
	int32_t *map = NULL, *idx = NULL;
	if (world_group(&wg) == 0 && dest_group(comm, &g) == 0) {
		if (IOG_CALL(MPI_Group_size, g, &n) == MPI_SUCCESS && n > 0 &&
		    (map = malloc((size_t)n * sizeof(*map))) != NULL &&
		    (idx = malloc((size_t)n * sizeof(*idx))) != NULL) {
			for (int i = 0; i < n; i++)
				idx[i] = i;
			if (IOG_CALL(MPI_Group_translate_ranks, g, n, idx, wg, map) != MPI_SUCCESS) {
				free(map);
				map = NULL;
			}
		}
		free(idx);
		IOG_CALL(MPI_Group_free, &g);
	}
	e->n = map ? n : 0;
	e->map = map;
	e->key = key;
	__atomic_store_n(&e->state, C_READY, __ATOMIC_RELEASE);
}

static int64_t world_rank(MPI_Comm comm, int dest)
{
	if (dest < 0)
		return -1;
	if (comm == MPI_COMM_WORLD)
		return dest;
	uint64_t key = handle_key(&comm, sizeof(comm));
	uint32_t h = (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 40) % COMM_CACHE;
	for (uint32_t k = 0; k < COMM_CACHE; k++) {
		struct comm_ent *e = &comms[(h + k) % COMM_CACHE];
		int st = __atomic_load_n(&e->state, __ATOMIC_ACQUIRE);
		if (st == C_READY && e->key == key)
			return dest < e->n && e->map[dest] >= 0 ? e->map[dest] : -1;
		if (st == C_FREE || st == C_DEAD) {
			int free_ = st;
			if (__atomic_compare_exchange_n(&e->state, &free_, C_BUSY, 0, __ATOMIC_ACQ_REL,
			                                __ATOMIC_RELAXED)) {
				build(e, comm, key);
				return dest < e->n && e->map[dest] >= 0 ? e->map[dest] : -1;
			}
			if (free_ == C_BUSY)
				break;   /* another thread builds it: translate this one alone */
		}
	}
	return translate_one(comm, dest);
}

static void comm_forget(MPI_Comm comm)
{
	uint64_t key = handle_key(&comm, sizeof(comm));
	for (uint32_t i = 0; i < COMM_CACHE; i++)
		if (__atomic_load_n(&comms[i].state, __ATOMIC_ACQUIRE) == C_READY && comms[i].key == key)
			__atomic_store_n(&comms[i].state, C_DEAD, __ATOMIC_RELEASE);
}

EXPORT int MPI_Comm_free(MPI_Comm *comm)
{
	if (iog__mpi_counting() && comm != NULL)
		comm_forget(*comm);
	return IOG_CALL(MPI_Comm_free, comm);
}

EXPORT int MPI_Comm_disconnect(MPI_Comm *comm)
{
	if (iog__mpi_counting() && comm != NULL)
		comm_forget(*comm);
	return IOG_CALL(MPI_Comm_disconnect, comm);
}

/* ---- sends --------------------------------------------------------------------- */

static void count_send_bytes(MPI_Comm comm, int dest, uint64_t bytes)
{
	iog_shard *s;
	if (dest == MPI_PROC_NULL || (s = iog__shard()) == NULL)
		return;
	s->counters[iog__ms.p2p_ops]++;
	s->counters[iog__ms.p2p_bytes] += bytes;
	iog__hist_record(iog__mh.p2p_size, bytes);
	int64_t w = world_rank(comm, dest);
	if (w < 0 || iog__peer_add(s, (uint32_t)w, bytes) < 0)
		s->counters[iog__ms.p2p_unmapped]++;
}

static inline void count_send(int rc, MPI_Comm comm, int dest, int count, MPI_Datatype t)
{
	if (rc == MPI_SUCCESS && iog__mpi_counting())
		count_send_bytes(comm, dest, iog__mpi_bytes(t, count));
}

#define SEND_WRAP(fn) \
EXPORT int fn(const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm) \
{ \
	int rc = IOG_CALL(fn, buf, count, t, dest, tag, comm); \
	count_send(rc, comm, dest, count, t); \
	return rc; \
}
SEND_WRAP(MPI_Send)
SEND_WRAP(MPI_Bsend)
SEND_WRAP(MPI_Ssend)
SEND_WRAP(MPI_Rsend)

#define ISEND_WRAP(fn) \
EXPORT int fn(const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm, \
              MPI_Request *req) \
{ \
	int rc = IOG_CALL(fn, buf, count, t, dest, tag, comm, req); \
	count_send(rc, comm, dest, count, t); \
	return rc; \
}
ISEND_WRAP(MPI_Isend)
ISEND_WRAP(MPI_Ibsend)
ISEND_WRAP(MPI_Issend)
ISEND_WRAP(MPI_Irsend)

EXPORT int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype st, int dest, int stag,
                        void *rbuf, int rcount, MPI_Datatype rt, int source, int rtag,
                        MPI_Comm comm, MPI_Status *status)
{
	int rc = IOG_CALL(MPI_Sendrecv, sbuf, scount, st, dest, stag, rbuf, rcount, rt, source, rtag,
	                  comm, status);
	count_send(rc, comm, dest, scount, st);
	return rc;
}

EXPORT int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype t, int dest, int stag,
                                int source, int rtag, MPI_Comm comm, MPI_Status *status)
{
	int rc = IOG_CALL(MPI_Sendrecv_replace, buf, count, t, dest, stag, source, rtag, comm, status);
	count_send(rc, comm, dest, count, t);
	return rc;
}

/* ---- persistent sends: counted each time they are started ----------------------
 * A fixed lock-free table from the request's handle to (destination, bytes),
 * filled by *_init, read by MPI_Start/Startall, emptied by MPI_Request_free.
 * A full table leaves the request uncounted by destination (unmapped). */
#define PREQ_MAX 4096
static struct preq {
	uint64_t key;    /* 0 free, 1 deleted, else the handle's bits | tag bit */
	int64_t dest;    /* world rank, -1 unknown; -2 MPI_PROC_NULL */
	uint64_t bytes;
} preqs[PREQ_MAX];
static const uint64_t PREQ_TAG = 1ull << 63;

static uint64_t preq_key(MPI_Request r)
{
	return handle_key(&r, sizeof(r)) | PREQ_TAG;
}

static uint32_t preq_home(uint64_t key)
{
	return (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 40) % PREQ_MAX;
}

static void preq_put(MPI_Request r, int64_t dest, uint64_t bytes)
{
	uint64_t key = preq_key(r);
	uint32_t h = preq_home(key);
	for (uint32_t k = 0; k < 64; k++) {
		struct preq *p = &preqs[(h + k) % PREQ_MAX];
		uint64_t cur = __atomic_load_n(&p->key, __ATOMIC_ACQUIRE);
		if (cur == key)
			return;
		if (cur > 1)
			continue;
		/* claim with a busy key, fill, then publish */
		if (__atomic_compare_exchange_n(&p->key, &cur, 1ull << 62, 0, __ATOMIC_ACQ_REL,
		                                __ATOMIC_RELAXED)) {
			p->dest = dest;
			p->bytes = bytes;
			__atomic_store_n(&p->key, key, __ATOMIC_RELEASE);
			return;
		}
	}
}

static struct preq *preq_find(MPI_Request r)
{
	uint64_t key = preq_key(r);
	uint32_t h = preq_home(key);
	for (uint32_t k = 0; k < 64; k++) {
		struct preq *p = &preqs[(h + k) % PREQ_MAX];
		uint64_t cur = __atomic_load_n(&p->key, __ATOMIC_ACQUIRE);
		if (cur == key)
			return p;
		if (cur == 0)
			return NULL;
	}
	return NULL;
}

#define PSEND_WRAP(fn) \
EXPORT int fn(const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm, \
              MPI_Request *req) \
{ \
	int rc = IOG_CALL(fn, buf, count, t, dest, tag, comm, req); \
	if (rc == MPI_SUCCESS && iog__mpi_counting() && req != NULL) \
		preq_put(*req, dest == MPI_PROC_NULL ? -2 : world_rank(comm, dest), \
		         iog__mpi_bytes(t, count)); \
	return rc; \
}
PSEND_WRAP(MPI_Send_init)
PSEND_WRAP(MPI_Bsend_init)
PSEND_WRAP(MPI_Ssend_init)
PSEND_WRAP(MPI_Rsend_init)

static void count_started(MPI_Request r)
{
	struct preq *p = preq_find(r);
	iog_shard *s;
	if (p == NULL || p->dest == -2 || (s = iog__shard()) == NULL)
		return;
	s->counters[iog__ms.p2p_ops]++;
	s->counters[iog__ms.p2p_bytes] += p->bytes;
	iog__hist_record(iog__mh.p2p_size, p->bytes);
	if (p->dest < 0 || iog__peer_add(s, (uint32_t)p->dest, p->bytes) < 0)
		s->counters[iog__ms.p2p_unmapped]++;
}

EXPORT int MPI_Start(MPI_Request *req)
{
	MPI_Request r = req ? *req : 0;
	int rc = IOG_CALL(MPI_Start, req);
	if (rc == MPI_SUCCESS && req != NULL && iog__mpi_counting())
		count_started(r);
	return rc;
}

EXPORT int MPI_Startall(int n, MPI_Request reqs[])
{
	int rc = IOG_CALL(MPI_Startall, n, reqs);
	if (rc == MPI_SUCCESS && reqs != NULL && iog__mpi_counting())
		for (int i = 0; i < n; i++)
			count_started(reqs[i]);
	return rc;
}

EXPORT int MPI_Request_free(MPI_Request *req)
{
	struct preq *p;
	if (req != NULL && iog__mpi_counting() && (p = preq_find(*req)) != NULL)
		__atomic_store_n(&p->key, 1, __ATOMIC_RELEASE);
	return IOG_CALL(MPI_Request_free, req);
}

/* ---- start-up and finalize -------------------------------------------------------- */

static int reg_counter(const char *name, const char *unit, uint32_t *slot)
{
	iog_metric *m = iog_counter(name, unit);
	if (m == NULL)
		return -1;
	*slot = m->slot;
	return 0;
}

static int reg_hist(const char *name, const char *unit, iog_metric **out)
{
	*out = iog_histogram(name, unit, NULL);
	return *out != NULL && (*out)->fast ? 0 : -1;
}

static int register_metrics(void)
{
	iog_mpi_slots *s = &iog__ms;
	iog_mpi_hists *h = &iog__mh;
	int bad = 0;
	/* the catalogs, in their order (so their wire ids follow it) */
#define X(id, name, kind, unit, label) \
	bad |= kind == IOGP_COUNTER ? reg_counter(name, unit, &io[IOGP_MPIIO_##id]) \
	                            : reg_hist(name, unit, &ioh[IOGP_MPIIO_##id]);
	uint32_t io[IOGP_MPIIO_NMETRICS] = { 0 };
	iog_metric *ioh[IOGP_MPIIO_NMETRICS] = { 0 };
	IOGP_MPIIO_METRICS(X)
#undef X
#define X(id, name, kind, unit, label) \
	bad |= kind == IOGP_COUNTER ? reg_counter(name, unit, &mp[IOGP_MPI_##id]) \
	                            : reg_hist(name, unit, &mph[IOGP_MPI_##id]);
	uint32_t mp[IOGP_MPI_NMETRICS] = { 0 };
	iog_metric *mph[IOGP_MPI_NMETRICS] = { 0 };
	IOGP_MPI_METRICS(X)
#undef X
	char name[64];
#define X(id, nm) \
	snprintf(name, sizeof(name), "mpi.coll.%s.ops", nm); \
	bad |= reg_counter(name, "ops", &s->coll_kind_ops[IOGP_MPI_COLL_##id]); \
	snprintf(name, sizeof(name), "mpi.coll.%s.bytes", nm); \
	bad |= reg_counter(name, "bytes", &s->coll_kind_bytes[IOGP_MPI_COLL_##id]);
	IOGP_MPI_COLLS(X)
#undef X
	if (bad)
		return -1;
	for (int op = 0; op < 2; op++) {
		s->io_ops[op] = io[op ? IOGP_MPIIO_WRITE_OPS : IOGP_MPIIO_READ_OPS];
		s->io_bytes[op] = io[op ? IOGP_MPIIO_WRITE_BYTES : IOGP_MPIIO_READ_BYTES];
		s->io_coll[op] = io[op ? IOGP_MPIIO_WRITE_COLL : IOGP_MPIIO_READ_COLL];
		s->io_indep[op] = io[op ? IOGP_MPIIO_WRITE_INDEP : IOGP_MPIIO_READ_INDEP];
		s->io_nb[op] = io[op ? IOGP_MPIIO_WRITE_NB : IOGP_MPIIO_READ_NB];
		h->io_size[op] = ioh[op ? IOGP_MPIIO_WRITE_SIZE : IOGP_MPIIO_READ_SIZE];
		h->io_lat[op] = ioh[op ? IOGP_MPIIO_WRITE_LATENCY : IOGP_MPIIO_READ_LATENCY];
	}
	s->io_meta = io[IOGP_MPIIO_META_OPS];
	s->io_sync = io[IOGP_MPIIO_SYNC_OPS];
	s->io_errors = io[IOGP_MPIIO_ERRORS];
	h->io_meta_lat = ioh[IOGP_MPIIO_META_LATENCY];
	s->p2p_ops = mp[IOGP_MPI_P2P_OPS];
	s->p2p_bytes = mp[IOGP_MPI_P2P_BYTES];
	s->p2p_unmapped = mp[IOGP_MPI_P2P_UNMAPPED];
	s->coll_ops = mp[IOGP_MPI_COLL_OPS];
	s->coll_bytes = mp[IOGP_MPI_COLL_BYTES];
	h->p2p_size = mph[IOGP_MPI_P2P_SIZE];
	h->io_size[0]->exact = h->io_size[1]->exact = 1;   /* common sizes, exactly */
	return 0;
}

static void num_label(const char *key, long v)
{
	char buf[24];
	snprintf(buf, sizeof(buf), "%ld", v);
	iog_label(key, buf);
}

/* Labels from MPI itself; the job from the launcher when Slurm gave none. */
static void set_labels(int rank, int size)
{
	const char *e;
	char host[MPI_MAX_PROCESSOR_NAME + 1];
	int len = 0;

	num_label("rank", rank);
	num_label("nranks", size);
	if (((e = getenv("IOGRAM_NODE")) == NULL || *e == '\0') &&
	    IOG_CALL(MPI_Get_processor_name, host, &len) == MPI_SUCCESS && len > 0 &&
	    len <= MPI_MAX_PROCESSOR_NAME) {
		host[len] = '\0';
		iog_label("host", host);
	}
	if ((e = getenv("SLURM_JOB_ID")) == NULL || *e == '\0') {
		if ((e = getenv("PMIX_NAMESPACE")) != NULL && *e)
			iog_label("job", e);
		else if ((e = getenv("OMPI_MCA_ess_base_jobid")) != NULL && *e)
			iog_label("job", e);
	}
}

static void mpi_start(void)
{
	int rank = -1, size = 0, e = errno;

#ifdef OPEN_MPI
	if (&ompi_mpi_comm_world == NULL)   /* built for Open MPI, loaded with another MPI */
		goto out;
#endif
	if (iog__ensure_started() < 0 || !iog__enabled ||
	    IOG_CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank) != MPI_SUCCESS ||
	    IOG_CALL(MPI_Comm_size, MPI_COMM_WORLD, &size) != MPI_SUCCESS || size <= 0 ||
	    iog__peers_setup((uint32_t)size) < 0 || register_metrics() < 0)
		goto out;
	set_labels(rank, size);
	__atomic_store_n(&iog__mpi_on, 1, __ATOMIC_RELEASE);
out:
	errno = e;
}

EXPORT int MPI_Init(int *argc, char ***argv)
{
	int rc = IOG_CALL(MPI_Init, argc, argv);
	if (rc == MPI_SUCCESS && !iog__tls_in_agent)
		mpi_start();
	return rc;
}

EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	int rc = IOG_CALL(MPI_Init_thread, argc, argv, required, provided);
	if (rc == MPI_SUCCESS && !iog__tls_in_agent)
		mpi_start();
	return rc;
}

/* What was counted leaves now: a job often ends (or is killed by its
 * launcher) right after MPI_Finalize. */
EXPORT int MPI_Finalize(void)
{
	if (__atomic_exchange_n(&iog__mpi_on, 0, __ATOMIC_ACQ_REL))
		iog_flush();
	return IOG_CALL(MPI_Finalize);
}
