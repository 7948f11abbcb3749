/* iogram.h - libiogram: count a program's own metrics into histograms and
 * counters and stream them live (ZeroMQ) and/or to a replay file.
 *
 *   #include <iogram.h>      pkg-config --cflags --libs iogram
 *
 *   static iog_metric *page_size;
 *   page_size = iog_histogram("rntuple.page.read.size", "bytes", NULL);
 *   iog_record(page_size, nbytes);          // lock-free, a few ns
 *
 * Everything is configured by the environment (IOGRAM_ENDPOINT,
 * IOGRAM_INTERVAL_MS, IOGRAM_OUTPUT, IOGRAM_NODE, IOGRAM_DISABLE) unless
 * iog_init() is called first. The library never blocks, slows or aborts the
 * program: sends never wait, errors and drops are counted and reported in the
 * stream, and on any internal failure it disables itself. */
#ifndef IOGRAM_H
#define IOGRAM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library builds with hidden visibility: what carries IOGRAM_API is its API. */
#define IOGRAM_API __attribute__((visibility("default")))

#define IOG_VERSION_MAJOR 0
#define IOG_VERSION_MINOR 1

/* Errors (negative returns). */
enum {
	IOG_OK = 0,
	IOG_EINVAL = -1,     /* bad argument */
	IOG_ENOMEM = -2,
	IOG_ELIMIT = -3,     /* too many metrics / labels */
	IOG_EEXIST = -4,     /* name registered with another kind or engine */
	IOG_EDISABLED = -5,  /* IOGRAM_DISABLE or an internal failure */
	IOG_ESTATE = -6,     /* iog_init after the agent started */
};
IOGRAM_API const char *iog_strerror(int err);

typedef struct iog_config {
	const char *endpoint;     /* NULL: IOGRAM_ENDPOINT, else the default loopback one;
	                           * "" or "none": no live stream */
	const char *output;       /* replay file; %p = pid, %h = host; NULL: IOGRAM_OUTPUT */
	uint32_t interval_ms;     /* 0: IOGRAM_INTERVAL_MS, else 1000; min 10 */
	const char *node;         /* host label; NULL: IOGRAM_NODE, else hostname */
	int disable;              /* 1: everything off */
} iog_config;

/* Optional: configure before the first metric is used. */
IOGRAM_API int iog_init(const iog_config *cfg);

/* Histogram engines: fixed width, log2, explicit edges, learned, and the
 * native log-linear one. Every
 * engine is exported the same way (bins with integer bounds). */
typedef enum iog_engine_kind {
	IOG_ENGINE_NATIVE = 0,    /* log-linear, k sub-bucket bits (default 4: <= 3.2% error) */
	IOG_ENGINE_LOG2 = 1,      /* power-of-two bins */
	IOG_ENGINE_FIXED = 2,     /* width, offset; nbins bins from the offset's beta bins on,
	                           * values past the last bin counted in it */
	IOG_ENGINE_INTERVALS = 3, /* user edges e0 < e1 < ...: [0,e0-1], [e0,e1-1], ..., [en-1, max] */
	IOG_ENGINE_LEARNING = 4,  /* the first `learn` values set `nbins` equal-width bins over
	                           * their [min, max]; then as FIXED */
} iog_engine_kind;

typedef struct iog_engine {
	iog_engine_kind kind;
	uint32_t k;               /* NATIVE: 1..8, 0 = 4 */
	uint64_t width, offset;   /* FIXED */
	uint32_t nbins;           /* FIXED / LEARNING: 0 = 256 */
	const uint64_t *edges;    /* INTERVALS */
	uint32_t nedges;
	uint32_t learn;           /* LEARNING: values in the learning phase, 0 = 1000 */
} iog_engine;

typedef struct iog_metric iog_metric;

/* Register (or look up, if already registered with the same kind) a metric.
 * Returns NULL on error (iog_last_error() says why) or when disabled; every
 * record function accepts NULL and does nothing, so callers need no checks. */
IOGRAM_API iog_metric *iog_counter(const char *name, const char *unit);
IOGRAM_API iog_metric *iog_gauge(const char *name, const char *unit);
IOGRAM_API iog_metric *iog_histogram(const char *name, const char *unit, const iog_engine *engine);
IOGRAM_API iog_metric *iog_access_metric(const char *name);
IOGRAM_API int iog_last_error(void);

IOGRAM_API void iog_add(iog_metric *m, uint64_t n);      /* counter += n */
IOGRAM_API void iog_set(iog_metric *m, int64_t v);       /* gauge = v */
IOGRAM_API void iog_record(iog_metric *m, uint64_t v);   /* histogram: one value */
IOGRAM_API void iog_record_n(iog_metric *m, uint64_t v, uint64_t n);

enum { IOG_OP_READ = 0, IOG_OP_WRITE = 1 };
/* File id for a path (stable within the process; announced once in the stream). */
IOGRAM_API uint64_t iog_file(const char *path);
/* One access (time now) for the offset-vs-time view; a bounded, unbiased sample
 * (reservoir) of each interval's accesses is sent. */
IOGRAM_API void iog_access(iog_metric *m, uint64_t file, int op, uint64_t offset, uint64_t size);

/* Extra source label (e.g. "phase" = "checkpoint"); sent in the next HELLO. */
IOGRAM_API int iog_label(const char *key, const char *value);

/* Send what has been counted now (normally every interval). */
IOGRAM_API void iog_flush(void);
/* Final SNAPSHOT + BYE, stop the publisher (also done at exit). */
IOGRAM_API void iog_shutdown(void);

/* Monotonic nanoseconds from the agent's clock (TSC when it is invariant). */
IOGRAM_API uint64_t iog_now_ns(void);

#ifdef __cplusplus
}
#endif
#endif
