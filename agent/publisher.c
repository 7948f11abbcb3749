/* publisher.c - the publisher thread: every interval it sums the shards,
 * diffs against what it sent and sends a DELTA over ZeroMQ (XPUB, connecting)
 * and/or to a replay file; HELLO, SNAPSHOT and BYE; start, flush, exit, exec
 * and fork. Exit waits for a subscriber at most IOGRAM_EXIT_WAIT_MS and
 * spools what it could not deliver: never longer than a bound. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "agent.h"
#include "iogp_err.h"
#include "iogp_keys.h"
#include "iogp_recorder.h"
#include "filerec.h"
#include "peers.h"
#include "sizes.h"

#define NS_PER_MS 1000000ull
/* The periodic SNAPSHOT (receivers that saw a gap resync from it): at
 * least SNAPSHOT_EVERY_NS apart, and then only once the DELTAs since the
 * last SNAPSHOT have cost SNAPSHOT_RATIO times its size, or after
 * SNAPSHOT_MAX_NS, or when this agent dropped a message since (its
 * receivers have a gap): so a source with thousands of files, whose
 * SNAPSHOT holds every name and record, does not resend them every 10 s;
 * resending costs at most ~1/SNAPSHOT_RATIO of the stream. New subscribers
 * get theirs at once (SUB_SNAP_MIN_NS), the exit its final one. */
#define SNAPSHOT_EVERY_NS (10000ull * NS_PER_MS)
#define SNAPSHOT_MAX_NS (300000ull * NS_PER_MS)
#define SNAPSHOT_RATIO 16
#define HEARTBEAT_NS (10000ull * NS_PER_MS)
#define CALIBRATE_NS (15ull * NS_PER_MS)
#define SPOOL_SCAN_NS (2000ull * NS_PER_MS) /* look for others' spooled finals */
#define SPOOL_FILES_PER_SCAN 64
#define STOP_BOUND_MS 1000                  /* the host waits no longer */
#define FLUSH_BOUND_MS 1000
#define LINGER_MS 100
#define SNDHWM 100
#define SUBS_PER_TURN 64                    /* subscription messages read per turn */
#define SUBS_PAUSE_NS (250ull * NS_PER_MS)  /* after a full turn: a flood, wait */
#define SUBS_RCVHWM 64
#define SUB_SNAP_MIN_NS (250ull * NS_PER_MS) /* HELLO+SNAPSHOT for new subscribers, at most */
#define SPIN_LIMIT 20000                   /* loop turns ... */
#define SPIN_WINDOW_NS (1000ull * NS_PER_MS) /* ... within this: broken, off */

enum { ST_IDLE, ST_RUNNING, ST_STOPPED, ST_DISABLED };
enum { STOP_SHUTDOWN = 1, STOP_EXIT, STOP_EXEC };
enum { CONN_UNKNOWN, CONN_UP, CONN_DOWN };

/* lifecycle, under life_lock */
static pthread_mutex_t life_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t life_cond = PTHREAD_COND_INITIALIZER;
static int state = ST_IDLE;     /* also read without the lock (acquire) */
static int once;                /* config, labels, handlers done */
static pthread_t thr;
static int wakefd = -1;
static int req_stop, stopped;
static uint64_t req_flush, done_flush;
static long my_pid;
static uint64_t source_id;
static uint64_t start_mono, start_wall;
static struct iog__cfg cfg;
static int is_fork_child;

struct pmetric {
	int announced;
	uint32_t nb;
	uint64_t base;        /* wire index of dense bucket 0 */
	uint32_t *raw;        /* last sum over shards, mod 2^32 */
	uint64_t *cum;
	uint64_t *pend;       /* counts not sent yet (a DELTA over budget: hists_budget) */
	uint32_t npend;       /* bins with pending counts */
	uint64_t pend_since;  /* the DELTA (P.ndelta) they began to wait in; 0: none */
	iog__xpub *x;         /* exact metrics: common sizes (sizes.c) */
	uint64_t counter;
	int64_t gauge;
	uint64_t gauge_t;
	int gauge_set;
};

struct shard_acc {
	uint64_t seen;
	uint32_t n, take;
	iog_access_sample *s;
};

/* the publisher thread's own state (a fork child starts it afresh) */
static struct {
	void *ctx, *sock, *mon;
	iogp_recorder *rec;
	uint64_t seq, dropped;
	uint64_t ndelta;                  /* DELTAs collected, from 1 */
	int conn, subscribed, sub_pending;
	uint32_t sent_gen;
	uint64_t t_last, wall_last;       /* time of the state last collected */
	uint64_t last_delta, last_snap;
	uint64_t snap_len, delta_bytes;   /* the last SNAPSHOT's size, DELTA bytes since */
	uint64_t snap_dropped;            /* dropped when it was sent */
	uint64_t access_seen;
	double acc_budget;        /* samples the next DELTAs may carry (access_budget) */
	uint64_t acc_budget_t;
	uint64_t rng;
	struct pmetric pm[IOG_MAX_METRICS];
	uint8_t *buf;
	size_t cap;
	iogp_counter_val cv[IOG_MAX_METRICS];
	iogp_gauge_val gv[IOG_MAX_METRICS];
	iogp_hist_val hv[IOG_MAX_METRICS];
	iogp_exact_val xv[IOG_MAX_METRICS];
	uint64_t *tabd;       /* per bucket: counts from the size tables */
	iogp_bin *bins;
	size_t bins_cap;
	uint32_t *sum;
	size_t sum_cap;
	iogp_access acc[IOG_ACCESS_OUT];
	struct shard_acc *sacc;
	iog_access_sample *pool;
	size_t sacc_cap;
	iogp_file *files;
	uint32_t files_cap;
	uint64_t *want;        /* file ids a DELTA refers to */
	uint32_t want_cap;
	iogp_label lab[IOGP_MAX_LABELS];
	char *labbuf;
	size_t labcap;
	int spooling;          /* emit() appends to spool instead of sending */
	uint8_t *spool;
	size_t spool_len, spool_cap;
	uint64_t last_spool_scan;
	uint64_t last_sub_snap;   /* when a subscription last got HELLO+SNAPSHOT */
	uint64_t subs_paused_until;
} P;

static void pub_reset(void);

/* ---- small helpers ---------------------------------------------------------- */

static uint64_t random_id(void)
{
	uint64_t id = 0;

	if (getrandom(&id, sizeof(id), GRND_NONBLOCK) != sizeof(id) || id == 0) {
		uint64_t x = iog__wall_ns() ^ ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)&id;
		x ^= x >> 33;
		x *= 0xff51afd7ed558ccdull;
		x ^= x >> 33;
		id = x ? x : 1;
	}
	return id;
}

static uint64_t prng(void)
{
	uint64_t z = (P.rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

uint64_t iog__source_id(void)
{
	return source_id;
}

int iog__started(void)
{
	return once || __atomic_load_n(&state, __ATOMIC_ACQUIRE) != ST_IDLE;
}

/* life_cond waits on CLOCK_MONOTONIC: a wall clock step never stretches a bound */
static void cond_setup(void)
{
	pthread_condattr_t a;

	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(&life_cond, &a);
	pthread_condattr_destroy(&a);
}

static void deadline_after(struct timespec *ts, long ms)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

/* The host may have closed our number by raw syscall and reused it: never
 * write into or close what is not our eventfd. */
static dev_t wake_dev;
static ino_t wake_ino;

static int wakefd_ours(void)
{
	struct stat st;
	return wakefd >= 0 && fstat(wakefd, &st) == 0 && st.st_dev == wake_dev && st.st_ino == wake_ino;
}

static void wakefd_close(void)
{
	if (wakefd_ours())
		close(wakefd);
	wakefd = -1;
}

static void wake(void)
{
	uint64_t one = 1;

	if (wakefd_ours() && write(wakefd, &one, sizeof(one)) < 0) {
		/* EAGAIN: already signalled */
	}
}

void iog__disable(void)
{
	__atomic_store_n(&iog__enabled, 0, __ATOMIC_RELAXED);
	iog__metrics_disable();
}

/* ---- sending ------------------------------------------------------------------ */

static void spool_add(const uint8_t *b, size_t len)
{
	size_t need = P.spool_len + 4 + len;
	if (need > IOG_SPOOL_MAX_FILE)
		return;
	if (need > P.spool_cap) {
		size_t cap = need * 2 < IOG_SPOOL_MAX_FILE ? need * 2 : IOG_SPOOL_MAX_FILE;
		uint8_t *n = realloc(P.spool, cap);
		if (n == NULL)
			return;
		P.spool = n;
		P.spool_cap = cap;
	}
	uint32_t l = (uint32_t)len;
	memcpy(P.spool + P.spool_len, &l, 4);
	memcpy(P.spool + P.spool_len + 4, b, len);
	P.spool_len = need;
}

/* One message on the live socket: topic frame, then the payload. */
static int send_frames(iogp_kind kind, uint64_t src, const uint8_t *b, size_t len)
{
	char topic[64];
	int tl = iogp_topic(topic, sizeof(topic), kind, src);
	if (tl < 0 || zmq_send(P.sock, topic, (size_t)tl, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0 ||
	    zmq_send(P.sock, b, len, ZMQ_DONTWAIT) < 0)
		return -1;
	return 0;
}

/* Another source's spooled message, sent on unchanged under its own topic. */
static void spool_send(const uint8_t *b, size_t len, void *arg)
{
	iogp_kind kind;
	uint16_t flags;
	uint64_t src, seq;

	(void)arg;
	if (P.sock != NULL && iogp_msg_peek(b, len, &kind, &flags, &src, &seq) == 0)
		send_frames(kind, src, b, len);
}

static void spool_scan(uint64_t mono)
{
	P.last_spool_scan = mono;
	if (P.sock != NULL && P.subscribed)
		iog__spool_drain(cfg.spool, SPOOL_FILES_PER_SCAN, spool_send, NULL);
}

static void emit(iogp_msg *msg)
{
	long len;

	msg->source = source_id;
	msg->seq = P.seq++;
	len = iogp_msg_encode(msg, P.buf, P.cap);
	if (len == IOGP_ELIMIT || (len >= 0 && P.buf == NULL)) {
		long need = iogp_msg_encode(msg, NULL, 0);
		uint8_t *b = need > 0 ? realloc(P.buf, (size_t)need + 4096) : NULL;
		if (b == NULL) {
			P.dropped++;
			return;
		}
		P.buf = b;
		P.cap = (size_t)need + 4096;
		len = iogp_msg_encode(msg, P.buf, P.cap);
	}
	if (len < 0) {
		P.dropped++;
		return;
	}
	if (msg->kind == IOGP_SNAPSHOT) {
		P.snap_len = (uint64_t)len;
		P.delta_bytes = 0;
		P.snap_dropped = P.dropped;
	} else if (msg->kind == IOGP_DELTA) {
		P.delta_bytes += (uint64_t)len;
	}
	if (P.rec != NULL)
		iogp_recorder_add(P.rec, P.buf, (size_t)len, iog__wall_ns());
	if (P.spooling) {
		spool_add(P.buf, (size_t)len);
		return;
	}
	/* nobody connected loses nothing: a new peer gets a SNAPSHOT */
	if (P.sock != NULL && send_frames(msg->kind, source_id, P.buf, (size_t)len) < 0 &&
	    P.conn == CONN_UP)
		P.dropped++;
}

static int pm_setup(uint32_t slot, const iog_metric *m)
{
	struct pmetric *pm = &P.pm[slot];

	if (m->kind == IOGP_HISTOGRAM) {
		pm->nb = m->nbuckets;
		pm->base = iog__dense_base(m);
		pm->raw = calloc(pm->nb, sizeof(*pm->raw));
		pm->cum = calloc(pm->nb, sizeof(*pm->cum));
		pm->pend = calloc(pm->nb, sizeof(*pm->pend));
		if (pm->raw == NULL || pm->cum == NULL || pm->pend == NULL) {
			free(pm->raw);
			free(pm->cum);
			free(pm->pend);
			pm->raw = NULL;
			pm->cum = NULL;
			pm->pend = NULL;
			return -1;
		}
	}
	pm->announced = 1;
	return 0;
}

/* The catalog: announce = 1 (HELLO) adds every metric that has a scheme;
 * else only those announced already (SNAPSHOT). */
static iogp_metric_def *defs_build(int announce, uint32_t *ndefs)
{
	uint32_t n = __atomic_load_n(&iog__nmetrics, __ATOMIC_ACQUIRE), k = 0;
	iogp_metric_def *d = n ? malloc(n * sizeof(*d)) : NULL;

	*ndefs = 0;
	if (d == NULL)
		return NULL;
	for (uint32_t i = 0; i < n; i++) {
		iog_metric *m = iog__metrics[i];
		if (!P.pm[i].announced) {
			if (!announce || !__atomic_load_n(&m->ready, __ATOMIC_ACQUIRE))
				continue;
			if (pm_setup(i, m) < 0) {
				iog__disable();
				continue;
			}
		}
		d[k].id = i;
		d[k].kind = (iogp_metric_kind)m->kind;
		d[k].name = m->name;
		d[k].unit = m->unit;
		/* only the used part of the (large) bins struct */
		size_t bl = offsetof(iogp_bins, edges);
		if (m->kind == IOGP_HISTOGRAM && m->bins.kind == IOGP_BINS_EDGES)
			bl += m->bins.nedges * sizeof(m->bins.edges[0]);
		memcpy(&d[k].bins, &m->bins, bl);
		if (m->kind != IOGP_HISTOGRAM)
			d[k].bins.kind = IOGP_BINS_NATIVE;
		k++;
	}
	*ndefs = k;
	return d;
}

static int labels_build(iogp_msg *msg)
{
	int n;

	for (;;) {
		n = iog__labels_copy(P.lab, IOGP_MAX_LABELS, P.labbuf, P.labcap);
		if (n != IOG_ELIMIT)
			break;
		size_t cap = P.labcap ? P.labcap * 2 : 4096;
		char *b = cap <= (1u << 20) ? realloc(P.labbuf, cap) : NULL;
		if (b == NULL)
			return -1;
		P.labbuf = b;
		P.labcap = cap;
	}
	msg->labels = P.lab;
	msg->nlabels = n > 0 ? (uint32_t)n : 0;
	return 0;
}

static void send_hello(void)
{
	iogp_msg msg;
	uint32_t gen = __atomic_load_n(&iog__catalog_gen, __ATOMIC_ACQUIRE);

	memset(&msg, 0, sizeof(msg));
	msg.kind = IOGP_HELLO;
	labels_build(&msg);
	msg.metrics = defs_build(1, &msg.nmetrics);
	emit(&msg);
	free(msg.metrics);
	P.sent_gen = gen;
}

static int bins_reserve(size_t n)
{
	if (n <= P.bins_cap)
		return 0;
	iogp_bin *b = realloc(P.bins, n * sizeof(*b));
	if (b == NULL)
		return -1;
	P.bins = b;
	P.bins_cap = n;
	return 0;
}

static size_t bins_needed(void)
{
	size_t need = 0;
	uint32_t n = __atomic_load_n(&iog__nmetrics, __ATOMIC_ACQUIRE);

	for (uint32_t i = 0; i < n; i++)
		if (P.pm[i].announced)
			need += P.pm[i].nb;
	return need;
}

/* The samples a DELTA may carry: a budget that grows by a rate a second,
 * saved up while a source is quiet to at most IOG_ACCESS_OUT, ACCESS_START
 * at the start (so a short run or a first burst is drawn in detail: the
 * model keeps at most 64 a DELTA per file anyway), never fewer than
 * ACCESS_MIN a DELTA. The rate is what the rest of the stream leaves
 * of ACCESS_TARGET bytes a second (a sample is ~ACCESS_SAMPLE bytes, ~9 on
 * disk), between ACCESS_PER_S_MIN and ACCESS_PER_S_MAX: a source whose
 * latency histograms already fill ~80 bins a second sends ~9 samples a
 * second, a quiet-histogram one 16 (past HIST_TARGET, histograms wait
 * instead). Over a minute that is 250-1,000 dots uniform over the
 * requests, and the model's run tier (64 slices of 64) fills within
 * minutes. */
#define ACCESS_PER_S_MAX 16
#define ACCESS_PER_S_MIN 4
#define ACCESS_TARGET 384          /* raw bytes a second, all sections: ~300-370 on disk
                                    * (560 was ~450 for fio's random reads: bins and
                                    * samples compress little) */
#define ACCESS_SAMPLE 16           /* raw bytes a sample (fio's random 4 KiB reads: 15.5) */
#define ACCESS_MIN 4
#define ACCESS_START 64
#define ACCESS_T_RES (1ull << 20)   /* ns: ~1 ms */
static uint32_t access_budget(uint64_t now, long len)
{
	if (P.acc_budget_t == 0) {
		P.acc_budget = ACCESS_START;
		P.acc_budget_t = now;
	} else if (now > P.acc_budget_t) {
		double span = (double)(now - P.acc_budget_t) / 1e9;
		double per_s = ACCESS_PER_S_MAX;
		if (len > 0 && span > 0)
			per_s = (ACCESS_TARGET - (double)len / (span < 1 ? 1 : span)) / ACCESS_SAMPLE;
		per_s = per_s < ACCESS_PER_S_MIN ? ACCESS_PER_S_MIN :
		        per_s > ACCESS_PER_S_MAX ? ACCESS_PER_S_MAX : per_s;
		P.acc_budget += span * per_s;
		if (P.acc_budget > IOG_ACCESS_OUT)
			P.acc_budget = IOG_ACCESS_OUT;
		P.acc_budget_t = now;
	}
	uint32_t b = (uint32_t)P.acc_budget;
	return b < ACCESS_MIN ? ACCESS_MIN : b;
}

/* Access samples of the interval that just ended: each shard's reservoir is
 * a uniform sample of its accesses; pick how many to take (the budget
 * above; len: the DELTA's size without them, histograms that wait
 * included, so waiting saves bytes rather than making room for samples)
 * from each shard by drawing without replacement over all accesses seen
 * (weights = seen), then take that many uniformly from the shard's
 * samples. */
static uint32_t access_harvest(uint64_t *seen_out, uint64_t now, long len)
{
	uint64_t e = __atomic_load_n(&iog__interval, __ATOMIC_RELAXED);
	uint32_t ns = 0, nout = 0;
	uint64_t total = 0;

	__atomic_store_n(&iog__interval, e + 1, __ATOMIC_RELEASE);
	*seen_out = 0;
	for (iog_shard *s = iog__shards(); s != NULL; s = s->next)
		ns++;
	if (ns > P.sacc_cap) {
		struct shard_acc *sa = realloc(P.sacc, ns * sizeof(*sa));
		if (sa != NULL)
			P.sacc = sa;
		iog_access_sample *pool = sa ? realloc(P.pool, (size_t)ns * IOG_ACCESS_RESERVOIR * sizeof(*pool)) : NULL;
		if (pool != NULL)
			P.pool = pool;
		if (sa == NULL || pool == NULL)
			return 0;
		P.sacc_cap = ns;
	}
	uint32_t k = 0;
	for (iog_shard *s = iog__shards(); s != NULL && k < ns; s = s->next) {
		__typeof__(s->acc[0]) *a = &s->acc[e & 1];
		struct shard_acc *sa = &P.sacc[k];
		if (__atomic_load_n(&a->interval, __ATOMIC_RELAXED) != e)
			continue;
		sa->seen = __atomic_load_n(&a->seen, __ATOMIC_ACQUIRE);
		if (sa->seen == 0)
			continue;
		sa->n = sa->seen < IOG_ACCESS_RESERVOIR ? (uint32_t)sa->seen : IOG_ACCESS_RESERVOIR;
		sa->take = 0;
		sa->s = P.pool + (size_t)k * IOG_ACCESS_RESERVOIR;
		memcpy(sa->s, a->s, sa->n * sizeof(sa->s[0]));
		total += sa->seen;
		k++;
	}
	ns = k;
	*seen_out = total;
	if (total == 0)
		return 0;
	uint64_t budget = access_budget(now, len), rem = total;
	uint64_t want = total < budget ? total : budget;
	P.acc_budget -= (double)want;
	if (P.acc_budget < 0)
		P.acc_budget = 0;
	for (uint64_t j = 0; j < want; j++) {
		uint64_t r = prng() % rem;
		for (k = 0; k < ns; k++) {
			uint64_t left = P.sacc[k].seen - P.sacc[k].take;
			if (r < left)
				break;
			r -= left;
		}
		if (k == ns)
			k = ns - 1;
		P.sacc[k].take++;
		rem--;
	}
	uint32_t nm = __atomic_load_n(&iog__nmetrics, __ATOMIC_ACQUIRE);
	for (k = 0; k < ns; k++) {
		struct shard_acc *sa = &P.sacc[k];
		uint32_t take = sa->take < sa->n ? sa->take : sa->n;
		for (uint32_t i = 0; i < take; i++) {
			uint32_t j = i + (uint32_t)(prng() % (sa->n - i));
			iog_access_sample t = sa->s[j];
			sa->s[j] = sa->s[i];
			sa->s[i] = t;
			if (t.metric >= nm || !P.pm[t.metric].announced ||
			    iog__metrics[t.metric]->kind != IOGP_ACCESS)
				continue;
			/* a sample's time to ACCESS_T_RES (not before the interval):
			 * the wire codes times as differences, and a plot of offsets
			 * over seconds needs no nanoseconds, so each costs ~2 bytes
			 * less on disk */
			uint64_t ts = t.t_ns & ~(ACCESS_T_RES - 1);
			if (ts < P.t_last)
				ts = t.t_ns < P.t_last ? t.t_ns : P.t_last;
			P.acc[nout++] = (iogp_access){ t.metric, ts, t.file, t.op, t.offset, t.size };
		}
	}
	/* time order: the wire codes times as deltas */
	for (uint32_t i = 1; i < nout; i++) {
		iogp_access x = P.acc[i];
		uint32_t j = i;
		while (j > 0 && P.acc[j - 1].t_ns > x.t_ns) {
			P.acc[j] = P.acc[j - 1];
			j--;
		}
		P.acc[j] = x;
	}
	return nout;
}

/* The file ids msg's records (and samples, with_access) refer to, into
 * P.want; their number, or -1 when out of memory. */
static int want_files(const iogp_msg *msg, int with_access)
{
	uint32_t nw = msg->nfilerecs + (with_access ? msg->naccess : 0);

	if (nw > P.want_cap) {
		uint64_t *w = realloc(P.want, nw * sizeof(*w));
		if (w == NULL)
			return -1;
		P.want = w;
		P.want_cap = nw;
	}
	nw = 0;
	for (uint32_t i = 0; i < msg->nfilerecs; i++)
		P.want[nw++] = msg->filerecs[i].file;
	for (uint32_t i = 0; with_access && i < msg->naccess; i++)
		P.want[nw++] = msg->access[i].file;
	return (int)nw;
}

/* Histograms over budget: a DELTA whose size (samples aside) passes
 * HIST_TARGET (what leaves room for half the most samples) leaves out its
 * largest histograms, one by one, until it fits; their counts wait in pend
 * and go, coalesced, with a later DELTA, at the latest after HIST_MAX_WAIT
 * DELTAs or in the DELTA before a SNAPSHOT (waiting()).
 * Exact-size histograms never wait (their exact values describe the same
 * DELTA), nor anything at a flush. A busy source's latency histogram
 * changes ~160 bins a second (~250 B on disk): sent every third second
 * instead, 2-3 seconds' counts in one, it costs about half. Counters
 * never wait: the live rates stay per interval. */
#define HIST_TARGET (ACCESS_TARGET - ACCESS_PER_S_MAX / 2 * ACCESS_SAMPLE)   /* room for 8 samples */
#define HIST_MAX_WAIT 2

static int hist_may_wait(const struct pmetric *pm, uint32_t id, int all)
{
	return !all && !iog__metrics[id]->exact && P.ndelta - pm->pend_since < HIST_MAX_WAIT;
}

/* Something waits (histogram counts, file records): a SNAPSHOT goes only
 * after a DELTA that sends it all (flush_waiting), so the DELTAs alone add
 * up to every total, as the live windows, rates and phases need. */
static int waiting(void)
{
	uint32_t n = __atomic_load_n(&iog__nmetrics, __ATOMIC_ACQUIRE);

	for (uint32_t i = 0; i < n; i++)
		if (P.pm[i].npend)
			return 1;
	return iog__frecs_waiting();
}

static void pend_clear(struct pmetric *pm)
{
	if (pm->npend)
		memset(pm->pend, 0, pm->nb * sizeof(*pm->pend));
	pm->npend = 0;
	pm->pend_since = 0;
}

/* msg->hists: what waits, less what may wait longer while msg is over
 * HIST_TARGET; returns msg's size with everything that waits. */
static long hists_budget(iogp_msg *msg, int all)
{
	uint32_t n = __atomic_load_n(&iog__nmetrics, __ATOMIC_ACQUIRE), nh = 0;
	size_t used = 0;

	for (uint32_t i = 0; i < n; i++) {
		struct pmetric *pm = &P.pm[i];
		if (!pm->announced || pm->npend == 0)
			continue;
		iogp_bin *out = P.bins + used;
		uint32_t cnt = 0;
		for (uint32_t b = 0; b < pm->nb; b++)
			if (pm->pend[b])
				out[cnt++] = (iogp_bin){ pm->base + b, pm->pend[b] };
		P.hv[nh++] = (iogp_hist_val){ i, cnt, out };
		used += cnt;
	}
	msg->hists = P.hv;
	msg->nhists = nh;
	long full = iogp_msg_encode(msg, NULL, 0), len = full;
	while (len > HIST_TARGET) {
		uint32_t big = nh;
		for (uint32_t k = 0; k < nh; k++)
			if (hist_may_wait(&P.pm[P.hv[k].id], P.hv[k].id, all) &&
			    (big == nh || P.hv[k].nbins > P.hv[big].nbins))
				big = k;
		if (big == nh)
			break;
		memmove(&P.hv[big], &P.hv[big + 1], (nh - big - 1) * sizeof(P.hv[0]));
		msg->nhists = --nh;
		len = iogp_msg_encode(msg, NULL, 0);
	}
	for (uint32_t k = 0; k < nh; k++)
		pend_clear(&P.pm[P.hv[k].id]);
	return full;
}

/* Sum the shards into the cumulative state; msg gets what changed (all:
 * a flush, nothing waits). */
static void collect(iogp_msg *msg, uint64_t now, int all)
{
	uint32_t n = __atomic_load_n(&iog__nmetrics, __ATOMIC_ACQUIRE);

	if (bins_reserve(bins_needed()) < 0) {
		iog__disable();
		return;
	}
	P.ndelta++;
	for (uint32_t i = 0; i < n; i++) {
		struct pmetric *pm = &P.pm[i];
		iog_metric *m = iog__metrics[i];

		if (!pm->announced)
			continue;
		switch (m->kind) {
		case IOGP_COUNTER: {
			uint64_t tot = 0;
			for (iog_shard *s = iog__shards(); s != NULL; s = s->next)
				tot += __atomic_load_n(&s->counters[i], __ATOMIC_RELAXED);
			if (tot != pm->counter)
				P.cv[msg->ncounters++] = (iogp_counter_val){ i, tot - pm->counter };
			pm->counter = tot;
			break;
		}
		case IOGP_GAUGE: {
			uint64_t best = 0;
			int64_t v = 0;
			for (iog_shard *s = iog__shards(); s != NULL; s = s->next) {
				uint64_t t = __atomic_load_n(&s->gauge_t[i], __ATOMIC_ACQUIRE);
				if (t > best) {
					best = t;
					v = __atomic_load_n(&s->gauge[i], __ATOMIC_RELAXED);
				}
			}
			if (best > pm->gauge_t) {
				if (!pm->gauge_set || v != pm->gauge)
					P.gv[msg->ngauges++] = (iogp_gauge_val){ i, v };
				pm->gauge = v;
				pm->gauge_t = best;
				pm->gauge_set = 1;
			}
			break;
		}
		case IOGP_HISTOGRAM: {
			uint32_t nb = pm->nb;
			if (nb > P.sum_cap) {
				uint32_t *sm = realloc(P.sum, nb * sizeof(*sm));
				uint64_t *td = sm != NULL ? realloc(P.tabd, nb * sizeof(*td)) : NULL;
				if (sm != NULL)
					P.sum = sm;
				if (td == NULL) {
					iog__disable();
					return;
				}
				P.tabd = td;
				P.sum_cap = nb;
			}
			memset(P.sum, 0, nb * sizeof(*P.sum));
			memset(P.tabd, 0, nb * sizeof(*P.tabd));
			if (m->exact) {
				if (pm->x == NULL && (pm->x = calloc(1, sizeof(*pm->x))) == NULL) {
					iog__disable();
					return;
				}
				iog__sizes_collect(m, pm->x, P.tabd, nb);
			}
			for (iog_shard *s = iog__shards(); s != NULL; s = s->next) {
				uint32_t *c = __atomic_load_n(&s->hist[i], __ATOMIC_ACQUIRE);
				if (c == NULL)
					continue;
				for (uint32_t b = 0; b < nb; b++)
					P.sum[b] += __atomic_load_n(&c[b], __ATOMIC_RELAXED);
			}
			for (uint32_t b = 0; b < nb; b++) {
				/* mod 2^32, plus what the size tables held */
				uint64_t d = (uint32_t)(P.sum[b] - pm->raw[b]) + P.tabd[b];
				if (d == 0)
					continue;
				pm->raw[b] = P.sum[b];
				pm->cum[b] += d;
				pm->npend += pm->pend[b] == 0;
				pm->pend[b] += d;
			}
			if (pm->npend && !pm->pend_since)
				pm->pend_since = P.ndelta;
			if (pm->x != NULL && pm->x->ntop > 0)
				P.xv[msg->nexact++] = (iogp_exact_val){ i, pm->x->ntop, pm->x->top };
			break;
		}
		}
	}
	iog__sizes_tick(iog__mono_ns());
	msg->exact = P.xv;
	if (iog__frecs_collect(msg, __atomic_load_n(&iog__interval, __ATOMIC_RELAXED), all) < 0 ||
	    iog__peers_collect(msg) < 0) {
		iog__disable();
		return;
	}
	msg->counters = P.cv;
	msg->gauges = P.gv;
	long full = hists_budget(msg, all);
	msg->naccess = access_harvest(&msg->access_seen, now, full);
	msg->access = P.acc;
	P.access_seen += msg->access_seen;
	/* the names this DELTA refers to that were never sent */
	int nw = want_files(msg, 1);
	if (nw < 0) {
		iog__disable();
		return;
	}
	int nf = iog__files_copy(P.want, (uint32_t)nw, &P.files, &P.files_cap);
	msg->files = P.files;
	msg->nfiles = nf > 0 ? (uint32_t)nf : 0;
	msg->t0_ns = P.t_last;
	msg->t1_ns = now > P.t_last ? now : P.t_last;
	msg->wall_ns = iog__wall_ns();
	msg->dropped = P.dropped;
	P.t_last = msg->t1_ns;
	P.wall_last = msg->wall_ns;
}

static void send_delta(uint64_t mono, int force, int all)
{
	iogp_msg msg;

	memset(&msg, 0, sizeof(msg));
	msg.kind = IOGP_DELTA;
	collect(&msg, iog__now_ns(), all);
	if (force || msg.ncounters || msg.ngauges || msg.nhists || msg.naccess || msg.nfilerecs ||
	    msg.nfiles || msg.access_seen) {
		emit(&msg);
		P.last_delta = mono;
	}
}

static void send_snapshot(uint16_t flags, uint64_t mono)
{
	iogp_msg msg;
	uint32_t nc = 0, ng = 0, nh = 0;
	size_t used = 0;

	memset(&msg, 0, sizeof(msg));
	msg.kind = IOGP_SNAPSHOT;
	msg.flags = flags;
	labels_build(&msg);
	msg.metrics = defs_build(0, &msg.nmetrics);
	if (bins_reserve(bins_needed()) < 0) {
		free(msg.metrics);
		iog__disable();
		return;
	}
	for (uint32_t k = 0; k < msg.nmetrics; k++) {
		uint32_t i = msg.metrics[k].id;
		struct pmetric *pm = &P.pm[i];
		switch (msg.metrics[k].kind) {
		case IOGP_COUNTER:
			if (pm->counter)
				P.cv[nc++] = (iogp_counter_val){ i, pm->counter };
			break;
		case IOGP_GAUGE:
			if (pm->gauge_set)
				P.gv[ng++] = (iogp_gauge_val){ i, pm->gauge };
			break;
		case IOGP_HISTOGRAM: {
			uint32_t cnt = 0;
			iogp_bin *out = P.bins + used;
			for (uint32_t b = 0; b < pm->nb; b++)
				if (pm->cum[b])
					out[cnt++] = (iogp_bin){ pm->base + b, pm->cum[b] };
			if (cnt) {
				P.hv[nh++] = (iogp_hist_val){ i, cnt, out };
				used += cnt;
			}
			if (pm->x != NULL && pm->x->ncum > 0)
				P.xv[msg.nexact++] = (iogp_exact_val){ i, pm->x->ncum, pm->x->cum };
			break;
		}
		default:
			break;
		}
	}
	msg.counters = P.cv;
	msg.ncounters = nc;
	msg.gauges = P.gv;
	msg.ngauges = ng;
	msg.hists = P.hv;
	msg.nhists = nh;
	msg.exact = P.xv;
	/* records that waited may name files not named yet: name them first */
	int nw;
	if (iog__frecs_snapshot(&msg) < 0 || iog__peers_snapshot(&msg) < 0 ||
	    (nw = want_files(&msg, 0)) < 0 ||
	    iog__files_copy(P.want, (uint32_t)nw, &P.files, &P.files_cap) < 0) {
		free(msg.metrics);
		iog__disable();
		return;
	}
	int nf = iog__files_copy(NULL, 0, &P.files, &P.files_cap);
	msg.files = P.files;
	msg.nfiles = nf > 0 ? (uint32_t)nf : 0;
	msg.t0_ns = start_mono;
	msg.t1_ns = P.t_last > start_mono ? P.t_last : start_mono;
	msg.wall_ns = P.wall_last;
	msg.access_seen = P.access_seen;
	msg.dropped = P.dropped;
	emit(&msg);
	for (uint32_t k = 0; k < msg.nmetrics; k++)
		if (msg.metrics[k].kind == IOGP_HISTOGRAM)
			pend_clear(&P.pm[msg.metrics[k].id]);
	free(msg.metrics);
	iog__frecs_snapshot_sent();   /* receivers have every total: nothing waits */
	P.last_snap = mono;
}

static void send_bye(void)
{
	iogp_msg msg;

	memset(&msg, 0, sizeof(msg));
	msg.kind = IOGP_BYE;
	emit(&msg);
}

/* ---- ZeroMQ ---------------------------------------------------------------------- */

static void live_close(int linger)
{
	if (P.sock != NULL) {
		zmq_setsockopt(P.sock, ZMQ_LINGER, &linger, sizeof(linger));
		zmq_socket_monitor(P.sock, NULL, 0);
	}
	if (P.mon != NULL)
		zmq_close(P.mon);      /* else zmq_ctx_term hangs */
	if (P.sock != NULL)
		zmq_close(P.sock);
	if (P.ctx != NULL)
		zmq_ctx_term(P.ctx);
	P.mon = P.sock = P.ctx = NULL;
}

static int live_open(void)
{
	int one = 1, linger = LINGER_MS, hwm = SNDHWM, ivl = 100, zero = 0;
	int64_t maxsub = 256;
	int rcvhwm = SUBS_RCVHWM;
	char ep[64];

	if ((P.ctx = zmq_ctx_new()) == NULL)
		return -1;
	zmq_ctx_set(P.ctx, ZMQ_BLOCKY, 0);
	zmq_ctx_set(P.ctx, ZMQ_IO_THREADS, 1);
	if ((P.sock = zmq_socket(P.ctx, ZMQ_XPUB)) == NULL)
		goto fail;
	if (zmq_setsockopt(P.sock, ZMQ_LINGER, &linger, sizeof(linger)) < 0 ||
	    zmq_setsockopt(P.sock, ZMQ_XPUB_VERBOSE, &one, sizeof(one)) < 0 ||
	    zmq_setsockopt(P.sock, ZMQ_IMMEDIATE, &one, sizeof(one)) < 0 ||
	    /* a full pipe says EAGAIN (counted) instead of dropping silently */
	    zmq_setsockopt(P.sock, ZMQ_XPUB_NODROP, &one, sizeof(one)) < 0 ||
	    zmq_setsockopt(P.sock, ZMQ_SNDHWM, &hwm, sizeof(hwm)) < 0 ||
	    zmq_setsockopt(P.sock, ZMQ_RECONNECT_IVL, &ivl, sizeof(ivl)) < 0 ||
	    /* subscribers send subscriptions only: a larger frame is hostile */
	    zmq_setsockopt(P.sock, ZMQ_MAXMSGSIZE, &maxsub, sizeof(maxsub)) < 0 ||
	    zmq_setsockopt(P.sock, ZMQ_RCVHWM, &rcvhwm, sizeof(rcvhwm)) < 0)
		goto fail;
	snprintf(ep, sizeof(ep), "inproc://iogram-monitor-%llx", (unsigned long long)source_id);
	if (zmq_socket_monitor(P.sock, ep, ZMQ_EVENT_CONNECTED | ZMQ_EVENT_DISCONNECTED |
	                       ZMQ_EVENT_CONNECT_RETRIED | ZMQ_EVENT_CLOSED) < 0)
		goto fail;
	if ((P.mon = zmq_socket(P.ctx, ZMQ_PAIR)) == NULL ||
	    zmq_setsockopt(P.mon, ZMQ_LINGER, &zero, sizeof(zero)) < 0 ||
	    zmq_connect(P.mon, ep) < 0)
		goto fail;
	/* the user's key, when there is one: only the owner's listener gets
	 * anything (a bad key file: no live stream rather than a plain one) */
	iogp_keys keys;
	if (iogp_keys_load(&keys, NULL, 0) < 0 || iogp_keys_client(P.sock, &keys) < 0)
		goto fail;
	if (zmq_connect(P.sock, cfg.endpoint) < 0)
		goto fail;
	P.conn = CONN_UNKNOWN;
	return 0;
fail:
	live_close(0);
	return -1;
}

/* Subscriptions: at most SUBS_PER_TURN a turn; a full turn means a flood,
 * and the socket is then not read for SUBS_PAUSE_NS (its small receive
 * queue fills and TCP holds the rest at the sender: the host's CPU is not
 * spent on it). */
static void read_subs(void)
{
	uint8_t b[256];
	int n, k = 0;

	if (P.sock == NULL || iog__mono_ns() < P.subs_paused_until)
		return;
	for (; k < SUBS_PER_TURN && (n = zmq_recv(P.sock, b, sizeof(b), ZMQ_DONTWAIT)) >= 0; k++) {
		if (n >= 1 && b[0] == 1) {
			P.subscribed = 1;
			P.sub_pending = 1;
		}
	}
	if (k == SUBS_PER_TURN)
		P.subs_paused_until = iog__mono_ns() + SUBS_PAUSE_NS;
}

static void read_mon(void)
{
	zmq_msg_t f;

	if (P.mon == NULL)
		return;
	for (;;) {
		uint16_t ev = 0;
		int more = 0;
		size_t ml = sizeof(more);

		zmq_msg_init(&f);
		if (zmq_msg_recv(&f, P.mon, ZMQ_DONTWAIT) < 0) {
			zmq_msg_close(&f);
			return;
		}
		if (zmq_msg_size(&f) >= 2)
			memcpy(&ev, zmq_msg_data(&f), sizeof(ev));
		zmq_msg_close(&f);
		/* the endpoint frame */
		while (zmq_getsockopt(P.mon, ZMQ_RCVMORE, &more, &ml) == 0 && more) {
			zmq_msg_init(&f);
			int rc = zmq_msg_recv(&f, P.mon, ZMQ_DONTWAIT);
			zmq_msg_close(&f);
			if (rc < 0)
				break;
		}
		switch (ev) {
		case ZMQ_EVENT_CONNECTED:
			P.conn = CONN_UP;
			break;
		case ZMQ_EVENT_DISCONNECTED:
			P.conn = CONN_DOWN;
			P.subscribed = 0;
			break;
		case ZMQ_EVENT_CONNECT_RETRIED:
		case ZMQ_EVENT_CLOSED:
			if (P.conn != CONN_UP)
				P.conn = CONN_DOWN;
			break;
		}
	}
}

/* At exit or exec: wait until a subscription has arrived (then send), the
 * connection is refused or down (leave now), or the exit budget passed
 * (then the finals go to the spool; after an exec the new image, the same
 * process, sends them on once it has its subscriber). */
static void exit_wait(void)
{
	uint64_t end = iog__mono_ns() + cfg.exit_wait_ms * NS_PER_MS;

	if (P.sock == NULL)
		return;
	read_mon();
	read_subs();
	while (!P.subscribed && P.conn != CONN_DOWN) {
		uint64_t now = iog__mono_ns();
		if (now >= end)
			break;
		zmq_pollitem_t it[2] = {
			{ P.sock, 0, ZMQ_POLLIN, 0 },
			{ P.mon, 0, ZMQ_POLLIN, 0 },
		};
		zmq_poll(it, 2, (long)((end - now + NS_PER_MS - 1) / NS_PER_MS));
		read_mon();
		read_subs();
	}
}

/* ---- the thread -------------------------------------------------------------------- */

static void output_open(void)
{
	char path[4096 + 128], err[256];
	iogp_recorder_opts o;

	if (cfg.output[0] == '\0')
		return;
	if (iog__config_expand(path, sizeof(path) - 96, cfg.output, iog__label_host(), my_pid) < 0)
		return;
	/* Never truncate what another image wrote: an exec'd program keeps the
	 * pid (so %p expands the same), a fork child may share the name, a job
	 * may be rerun. Take the first free NAME.N instead. */
	char ext[64] = "";
	char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
	if (dot && (!slash || dot > slash + 1) && strlen(dot) < sizeof(ext)) {
		snprintf(ext, sizeof(ext), "%s", dot);   /* job.iogr -> job.1.iogr */
		*dot = '\0';
	}
	size_t base = strlen(path);
	snprintf(path + base, 32 + sizeof(ext), "%s", ext);
	for (int n = 1; access(path, F_OK) == 0 && n < 10000; n++)
		snprintf(path + base, 32 + sizeof(ext), ".%d%s", n, ext);
	memset(&o, 0, sizeof(o));
	o.creator = "libiogram " IOGRAM_VERSION;
	if (iogp_recorder_open(&P.rec, path, &o, err, sizeof(err)) < 0)
		P.rec = NULL;
}

static void finish(void)
{
	uint64_t now = iog__mono_ns();

	iog__learn_finish_all();
	exit_wait();
	if (P.subscribed)
		spool_scan(now);   /* a predecessor's finals first */
	/* a listener that took the connection but has not subscribed (stopped,
	 * slow): the finals wait in the spool instead of the host waiting */
	P.spooling = P.sock != NULL && !P.subscribed && P.conn != CONN_DOWN;
	if (P.spooling || __atomic_load_n(&iog__catalog_gen, __ATOMIC_ACQUIRE) != P.sent_gen)
		send_hello();
	send_delta(now, 0, 1);   /* nothing waits past the end */
	send_snapshot(IOGP_F_FINAL, now);
	send_bye();
	if (P.spooling) {
		iog__spool_write(cfg.spool, source_id, P.spool, P.spool_len);
		P.spooling = 0;
		P.spool_len = 0;
	}
	/* flushing to a subscriber that stopped reading waits no longer than the
	 * exit budget, and never longer than LINGER_MS whatever it is set to */
	live_close(P.subscribed ? (int)(cfg.exit_wait_ms < LINGER_MS ? cfg.exit_wait_ms : LINGER_MS) : 0);
	if (P.rec != NULL) {
		iogp_recorder_close(P.rec);
		P.rec = NULL;
	}
}

/* flush: iog_flush() asked, nothing waits */
static void tick(uint64_t mono, uint64_t interval_ns, int flush)
{
	iog__clock_tick(interval_ns);
	if (__atomic_load_n(&iog__catalog_gen, __ATOMIC_ACQUIRE) != P.sent_gen)
		send_hello();
	uint64_t since = mono - P.last_snap;
	int snap = since >= SNAPSHOT_EVERY_NS &&
	           (since >= SNAPSHOT_MAX_NS || P.dropped != P.snap_dropped ||
	            P.delta_bytes >= SNAPSHOT_RATIO * P.snap_len);
	send_delta(mono, mono - P.last_delta >= HEARTBEAT_NS, flush || snap);
	if (snap)
		send_snapshot(0, mono);
	if (P.rec != NULL)
		iogp_recorder_flush(P.rec);
	if (mono - P.last_spool_scan >= SPOOL_SCAN_NS)
		spool_scan(mono);
}

static void *pub_main(void *arg)
{
	uint64_t interval = (uint64_t)cfg.interval_ms * NS_PER_MS;
	uint64_t t0 = iog__mono_ns(), next = t0 + interval, cal_at = t0 + CALIBRATE_NS;
	int cal_pending = 1, mode;
	uint64_t flush_seen = 0, spin_t0 = t0, spins = 0;

	(void)arg;
	iog__tls_in_agent = 1;
	iog__tls_agent_thread = 1;
	/* before anything opens a descriptor on this thread */
	iog__fdg_private_enter(wakefd);
	pthread_setname_np(pthread_self(), "iogram");
	iog__clock_start();
	P.rng = source_id ^ 0x5deece66dull;
	if (P.t_last == 0) {
		P.t_last = start_mono;
		P.wall_last = start_wall;
	}
	P.last_delta = P.last_snap = t0;
	output_open();
	if (cfg.endpoint[0] != '\0' && live_open() < 0 && P.rec == NULL) {
		/* no way to report anything: off, quietly */
		iog__disable();
		pthread_mutex_lock(&life_lock);
		stopped = 1;
		__atomic_store_n(&state, ST_DISABLED, __ATOMIC_RELEASE);
		wakefd_close();     /* every wake() runs under life_lock */
		pthread_detach(pthread_self());
		pthread_cond_broadcast(&life_cond);
		pthread_mutex_unlock(&life_lock);
		return NULL;
	}
	send_hello();
	for (;;) {
		uint64_t now = iog__mono_ns(), until = next;
		zmq_pollitem_t it[3];
		int n = 0;

		if (cal_pending && cal_at < until)
			until = cal_at;
		if (P.sub_pending && P.last_sub_snap + SUB_SNAP_MIN_NS < until)
			until = P.last_sub_snap + SUB_SNAP_MIN_NS;
		long ms = until > now ? (long)((until - now + NS_PER_MS - 1) / NS_PER_MS) : 0;
		if (P.sock != NULL) {
			if (now >= P.subs_paused_until)
				it[n++] = (zmq_pollitem_t){ P.sock, 0, ZMQ_POLLIN, 0 };
			else if (P.subs_paused_until < until)
				ms = (long)((P.subs_paused_until - now + NS_PER_MS - 1) / NS_PER_MS);
			it[n++] = (zmq_pollitem_t){ P.mon, 0, ZMQ_POLLIN, 0 };
		}
		it[n++] = (zmq_pollitem_t){ NULL, wakefd, ZMQ_POLLIN, 0 };
		if (zmq_poll(it, n, ms) < 0 && errno != EINTR)
			usleep(1000);
		read_mon();
		read_subs();
		uint64_t v;
		if (read(wakefd, &v, sizeof(v)) < 0 && errno != EAGAIN && errno != EINTR)
			spins = SPIN_LIMIT;   /* our wake-up descriptor is gone */
		/* a loop that never sleeps means something of ours is broken: off */
		if (++spins >= SPIN_LIMIT) {
			uint64_t t = iog__mono_ns();
			if (t - spin_t0 < SPIN_WINDOW_NS) {
				iog__fault();
				pthread_detach(pthread_self());
				return NULL;
			}
			spins = 0;
			spin_t0 = t;
		}
		pthread_mutex_lock(&life_lock);
		mode = req_stop;
		uint64_t fl = req_flush;
		pthread_mutex_unlock(&life_lock);
		if (mode)
			break;
		now = iog__mono_ns();
		if (cal_pending && now >= cal_at) {
			iog__clock_tick(interval);
			cal_pending = 0;
		}
		if (P.sub_pending && (P.last_sub_snap == 0 || now - P.last_sub_snap >= SUB_SNAP_MIN_NS)) {
			/* a new subscriber starts exact: catalog and totals (however
			 * many subscribe, at most 4 times a second) */
			P.sub_pending = 0;
			P.last_sub_snap = now;
			if (waiting())
				send_delta(now, 0, 1);
			send_hello();
			send_snapshot(0, now);
			spool_scan(now);
		}
		if (now >= next || fl != flush_seen) {
			tick(now, interval, fl != flush_seen);
			if (now >= next)
				next += interval;
			if (next <= now)
				next = now + interval;
			if (fl != flush_seen) {
				flush_seen = fl;
				pthread_mutex_lock(&life_lock);
				done_flush = fl;
				pthread_cond_broadcast(&life_cond);
				pthread_mutex_unlock(&life_lock);
			}
		}
	}
	finish();
	pthread_mutex_lock(&life_lock);
	stopped = 1;
	pthread_cond_broadcast(&life_cond);
	pthread_mutex_unlock(&life_lock);
	return NULL;
}

/* ---- lifecycle --------------------------------------------------------------------- */

static void at_exit_handler(void)
{
	iog__at_exit();
}

static void fork_prepare(void)
{
	pthread_mutex_lock(&life_lock);
	iog__registry_prepare();
}

static void fork_parent(void)
{
	iog__registry_parent();
	pthread_mutex_unlock(&life_lock);
}

static void fork_child(void)
{
	int saved = iog__tls_in_agent;

	iog__tls_in_agent = 1;
	iog__registry_child();
	iog__fdg_child();
	cond_setup();
	if (state == ST_RUNNING || (state == ST_IDLE && once)) {
		/* a new source; the parent's context, sockets and file are not ours */
		my_pid = getpid();
		is_fork_child = 1;
		source_id = random_id();
		start_wall = iog__wall_ns();
		start_mono = iog__now_ns();
		iog__labels_set_pid(my_pid, start_wall);
		iog__shards_child();
		/* the next record claims a shard and so restarts the publisher */
		if (iog__tls_shard != NULL) {
			iog__tls_shard->in_use = 0;
			iog__tls_shard = NULL;
		}
		pub_reset();
		wakefd = -1;       /* closed with the parent's other descriptors */
		req_stop = stopped = 0;
		req_flush = done_flush = 0;
		state = ST_IDLE;
	}
	pthread_mutex_unlock(&life_lock);
	iog__tls_in_agent = saved;
}

static void pub_reset(void)
{
	/* the parent's memory stays with the child unused: freeing it is not
	 * worth the risk of a structure caught mid-update by fork */
	memset(&P, 0, sizeof(P));
	iog__frecs_child();
	iog__peers_child();
}

static int start_locked(void)
{
	sigset_t all, old;

	if (!once) {
		cond_setup();
		iog__config_load(&cfg);
		if (cfg.disable)
			return -1;
		iog__paths_mode = cfg.paths;
		iog__frec_limit = cfg.max_files;
		iog__frec_budget = cfg.file_budget;
		iog__dir_files = cfg.dir_files;
		my_pid = getpid();
		source_id = random_id();
		start_wall = iog__wall_ns();
		start_mono = iog__now_ns();
		iog__labels_init(cfg.node, start_wall);
		pthread_atfork(fork_prepare, fork_parent, fork_child);
		atexit(at_exit_handler);
		once = 1;
	}
	/* no descriptor of ours may sit where the host expects its own */
	if (iog__fdg_setup() < 0)
		return -1;
	if (wakefd < 0) {
		struct stat st;
		if ((wakefd = iog__fdg_adopt(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK))) < 0)
			return -1;
		if (fstat(wakefd, &st) < 0) {
			wakefd_close();
			return -1;
		}
		wake_dev = st.st_dev;
		wake_ino = st.st_ino;
	}
	req_stop = 0;
	stopped = 0;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(&thr, NULL, pub_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc == 0 ? 0 : -1;
}

int iog__ensure_started(void)
{
	int st = __atomic_load_n(&state, __ATOMIC_ACQUIRE);

	if (__builtin_expect(st == ST_RUNNING, 1))
		return 0;
	if (st != ST_IDLE || iog__tls_in_agent)
		return -1;
	iog__tls_in_agent = 1;
	pthread_mutex_lock(&life_lock);
	int rc = 0;
	if (state == ST_IDLE) {
		if (start_locked() < 0) {
			iog__disable();
			__atomic_store_n(&state, ST_DISABLED, __ATOMIC_RELEASE);
		} else {
			__atomic_store_n(&state, ST_RUNNING, __ATOMIC_RELEASE);
		}
	}
	rc = state == ST_RUNNING ? 0 : -1;
	pthread_mutex_unlock(&life_lock);
	iog__tls_in_agent = 0;
	return rc;
}

static int on_publisher(void)
{
	return __atomic_load_n(&state, __ATOMIC_ACQUIRE) == ST_RUNNING &&
	       pthread_equal(pthread_self(), thr);
}

/* life_lock within STOP_BOUND_MS (1 on success): the host never waits
 * longer for the agent. */
static int lock_bounded(void)
{
	for (int tries = 0; pthread_mutex_trylock(&life_lock) != 0; tries++) {
		if (tries >= STOP_BOUND_MS)
			return 0;
		usleep(1000);
	}
	return 1;
}

static void stop(int mode)
{
	struct timespec dl;
	int saved = iog__tls_in_agent;

	if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) != ST_RUNNING || on_publisher())
		return;
	/* vfork child or a fork child not yet reset: not our publisher */
	if (getpid() != my_pid)
		return;
	iog__tls_in_agent = 1;
	deadline_after(&dl, STOP_BOUND_MS);
	if (!lock_bounded()) {
		iog__tls_in_agent = saved;
		return;
	}
	if (state == ST_RUNNING) {
		if (!req_stop) {
			req_stop = mode;
			wake();
		}
		while (!stopped && state == ST_RUNNING)
			if (pthread_cond_timedwait(&life_cond, &life_lock, &dl) == ETIMEDOUT)
				break;
	}
	if (state == ST_RUNNING) {
		if (stopped) {
			pthread_join(thr, NULL);
			wakefd_close();
		} else {
			pthread_detach(thr);   /* stuck: give up, never hang the host */
		}
		if (mode == STOP_EXEC && stopped) {
			__atomic_store_n(&state, ST_IDLE, __ATOMIC_RELEASE);
		} else {
			__atomic_store_n(&state, ST_STOPPED, __ATOMIC_RELEASE);
			__atomic_store_n(&iog__enabled, 0, __ATOMIC_RELAXED);
		}
	}
	pthread_mutex_unlock(&life_lock);
	iog__tls_in_agent = saved;
}

void iog__fault(void)
{
	iog__disable();
	__atomic_store_n(&state, ST_DISABLED, __ATOMIC_RELEASE);
	if (pthread_mutex_trylock(&life_lock) == 0) {
		pthread_cond_broadcast(&life_cond);
		pthread_mutex_unlock(&life_lock);
	}
}

void iog__surrender(void)
{
	stop(STOP_SHUTDOWN);
	int st = __atomic_load_n(&state, __ATOMIC_ACQUIRE);
	if (iog__fdg_count() && st != ST_RUNNING && getpid() == my_pid) {
		/* a publisher that failed or is stuck: its descriptors go back anyway */
		iog__disable();
		iog__fdg_child();
	}
}

void iog_shutdown(void)
{
	stop(STOP_SHUTDOWN);
}

void iog__at_exit(void)
{
	stop(STOP_EXIT);
}

void iog__creds_changing(void)
{
	if (my_pid != 0 && getpid() != my_pid)
		return;   /* a vfork child: the parent's publisher is not its own */
	stop(STOP_EXIT);
	/* and none again in this process (its exec'd image is a new source) */
	int saved = iog__tls_in_agent;
	iog__tls_in_agent = 1;
	iog__disable();
	if (lock_bounded()) {
		if (state == ST_IDLE || state == ST_RUNNING)   /* never started, or could not stop */
			__atomic_store_n(&state, ST_DISABLED, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&life_lock);
	}
	iog__tls_in_agent = saved;
}

void iog__before_exec(void)
{
	stop(STOP_EXEC);
}

void iog_flush(void)
{
	struct timespec dl;

	int saved = iog__tls_in_agent;

	if (on_publisher() || (!saved && iog__ensure_started() < 0))
		return;
	iog__tls_in_agent = 1;
	deadline_after(&dl, FLUSH_BOUND_MS);
	pthread_mutex_lock(&life_lock);
	if (state == ST_RUNNING && !req_stop) {
		uint64_t ticket = ++req_flush;
		wake();
		while (done_flush < ticket && !stopped && state == ST_RUNNING)
			if (pthread_cond_timedwait(&life_cond, &life_lock, &dl) == ETIMEDOUT)
				break;
	}
	pthread_mutex_unlock(&life_lock);
	iog__tls_in_agent = saved;
}
