/* probe.h - the slowdown prober behind `iogram probe` (after Kunkel & Betke,
 * "Tracking user-perceived I/O slowdown via probing"): its working files,
 * the six operations, and the statistics that turn response times into a
 * slowdown factor. */
#ifndef IOGRAM_PROBE_H
#define IOGRAM_PROBE_H

#include <stddef.h>
#include <stdint.h>

/* The six operations of the seed, run one after the other every interval. */
enum { PROBE_READ, PROBE_WRITE, PROBE_CREATE, PROBE_STAT, PROBE_SMALLREAD, PROBE_DELETE, PROBE_NOPS };
extern const char *const probe_op_name[PROBE_NOPS];   /* "read", ..., "delete" */

#define PROBE_BLOCK (1u << 20)     /* data requests: 1 MiB */
#define PROBE_SMALL 3901u          /* the pool's small files */

enum { STAT_MEDIAN, STAT_P90, STAT_P95, STAT_P99, STAT_MEAN, STAT_N };
extern const char *const probe_stat_name[STAT_N];     /* "median", "p90", ... */

typedef struct probe_files {
	char dir[4096];          /* DIR/.iogram-probe.HOST.PID */
	int data_fd;
	uint64_t file_size;      /* the large file, a multiple of 1 MiB */
	uint32_t pool;           /* small files kept */
	uint64_t oldest, next;   /* pool file numbers: [oldest, next) exist */
	int direct;              /* O_DIRECT on the large file */
	void *buf;               /* PROBE_BLOCK, 4 KiB aligned */
	uint64_t rng;
} probe_files;

/* Create the working directory, the large file and the pool under dir.
 * Refuses (a message in err, -1) a directory it cannot write, and one whose
 * file system has less free space than twice what it needs. */
int probe_setup(probe_files *p, const char *dir, uint64_t file_size, uint32_t pool, int direct,
                char *err, size_t errlen);
/* One round: the six operations in order, each one's response time in
 * ns[op] (0 when it failed: then *failed says which, as a bit mask). */
void probe_round(probe_files *p, uint64_t ns[PROBE_NOPS], unsigned *failed);
/* Remove everything probe_setup made (safe to call twice). */
void probe_cleanup(probe_files *p);
/* The file system type DIR lives on ("ext4", "tmpfs", "lustre", ...). */
void probe_fstype(const char *dir, char *buf, size_t len);

/* Samples of one operation in a sliding window (bounded ring), and the
 * statistic of a set of samples. */
typedef struct probe_ring {
	uint64_t *t, *v;         /* time (monotonic ns) and response time */
	size_t cap, head, n;
} probe_ring;
int probe_ring_init(probe_ring *r, size_t cap);
void probe_ring_free(probe_ring *r);
void probe_ring_add(probe_ring *r, uint64_t t, uint64_t v);
/* Drop samples older than t - window_ns. */
void probe_ring_expire(probe_ring *r, uint64_t t, uint64_t window_ns);
/* The statistic of v[0..n) (sorted in place); 0 when n = 0. */
uint64_t probe_stat(uint64_t *v, size_t n, int stat);
/* The median of what the ring holds (scratch: room for its n). */
uint64_t probe_ring_median(const probe_ring *r, uint64_t *scratch);

#endif
