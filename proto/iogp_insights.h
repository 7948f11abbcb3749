/* iogp_insights.h - findings about a job, computed live from what the model
 * holds, in the spirit of Drishti's triggers for Darshan logs but while the
 * job runs: each names what it is about (node, rank, file), the numbers
 * behind it and the panel that shows it. No finding without evidence: each
 * rule has a minimum of data below which it stays silent. The thresholds
 * live in one table (insights.c) with their rationale; iogp_insight_rules
 * lists them. */
#ifndef IOGP_INSIGHTS_H
#define IOGP_INSIGHTS_H

#include "iogp_api.h"

#include <stddef.h>

#include "iogp_model.h"

enum {
	IOGP_INS_SMALL_REQUESTS = 0, /* most requests are small */
	IOGP_INS_RANDOM_FILE,        /* random access on a file */
	IOGP_INS_META_DOMINATES,     /* metadata time dominating data time */
	IOGP_INS_STRAGGLER,          /* one source far above the median I/O time */
	IOGP_INS_ONE_RANK,           /* all I/O from one rank */
	IOGP_INS_SMALL_FILES,        /* many small files */
	IOGP_INS_FPP_MANY,           /* a file per process with thousands of files */
	IOGP_INS_STDIO_TEXT,         /* stdio text I/O at high call rates */
	IOGP_INS_SYNC_EVERY_WRITE,   /* a sync call after (nearly) every write */
	IOGP_INS_N
};

enum { IOGP_SEV_INFO = 0, IOGP_SEV_WARN = 1, IOGP_SEV_HIGH = 2 };

typedef struct iogp_insight {
	int rule;             /* IOGP_INS_* */
	int severity;         /* IOGP_SEV_* */
	char text[256];       /* one line, with its numbers */
	char where[160];      /* what it names: "node n1", "rank 3", a file; "" for the job */
	const char *panel;    /* the panel that shows it: "size", "access", "latency",
	                       * "rates", "nodes", "files", "phases" */
} iogp_insight;

typedef struct iogp_insight_rule {
	int rule;
	const char *name;       /* "small-requests" */
	const char *threshold;  /* as people read it: "> 50% of requests < 64 KiB" */
	const char *evidence;   /* the least data it needs: ">= 1,000 requests" */
	const char *why;        /* rationale */
} iogp_insight_rule;

/* The rules, in IOGP_INS_* order. */
IOGP_API const iogp_insight_rule *iogp_insight_rules(size_t *n);

/* Findings for the selection (NULL: all) on a layer (IOGP_FR_POSIX or
 * IOGP_FR_STDIO; stdio findings come from either), at most max into out,
 * most severe first; *n gets how many. 0 or IOGP_ENOMEM. */
IOGP_API int iogp_model_insights(const iogp_model *m, const iogp_sel *sel, iogp_insight *out,
                                 size_t max, size_t *n);


/* The same in steps, for a viewer that must answer keys while it follows
 * tens of thousands of sources: begin takes the selection (copied) and the
 * sources there are now (later ones wait for the next computation); each
 * step takes at most `sources` of them into the per-source rules (one-rank,
 * straggler), about 1 us each; finish takes the rest and runs the rules
 * over the whole job, whose cost does not grow with the sources. The model
 * may take messages between steps: each source is read once, as it is
 * then. begin: NULL for a NULL model or out of memory. step: 1 while
 * sources remain, 0 when none, IOGP_EINVAL for another model (by
 * iogp_model_serial: also one at the address of the job's, freed) or one
 * with fewer sources. finish: 0, or step's error. free: NULL is fine. */
typedef struct iogp_insights_job iogp_insights_job;
IOGP_API iogp_insights_job *iogp_insights_begin(const iogp_model *m, const iogp_sel *sel);
IOGP_API int iogp_insights_step(iogp_insights_job *j, const iogp_model *m, size_t sources);
IOGP_API int iogp_insights_finish(iogp_insights_job *j, const iogp_model *m, iogp_insight *out,
                                  size_t max, size_t *n);
IOGP_API void iogp_insights_free(iogp_insights_job *j);
#endif
