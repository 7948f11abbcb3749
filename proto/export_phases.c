/* export_phases.c - I/O phases (iogp_model_phases) as CSV: one row per
 * phase in SummarIO's fields, units in the header. */
#include <inttypes.h>
#include <stdio.h>

#include "iogp_err.h"
#include "iogp_export.h"
#include "export_priv.h"

int iogp_phases_csv_header(FILE *out)
{
	return fputs("start,epoch_start_s,end,epoch_end_s,duration_s,operation,layer,ranks,rank,"
	             "bytes,requests,mean_request_bytes,max_request_bytes,io_time_s,spatiality,"
	             "files,fashion,file,open\n", out) == EOF ? IOGP_EIO : 0;
}

int iogp_phases_csv_row(FILE *out, const iogp_phase *p)
{
	static const char *const layers[] = { "posix", "stdio", "mpiio" };
	char a[40], b[40], rank[24] = "";
	iogp_fmt_iso_ms(a, sizeof(a), p->start_ns);
	iogp_fmt_iso_ms(b, sizeof(b), p->end_ns);
	if (p->rank >= 0)
		snprintf(rank, sizeof(rank), "%" PRId64, p->rank);
	fprintf(out, "%s,%" PRIu64 ".%03u,%s,%" PRIu64 ".%03u,%.3f,%s,%s,%u,%s,%" PRIu64 ",%" PRIu64
	        ",%" PRIu64 ",%" PRIu64 ",%.6f,%s,%u,%s,", a, (uint64_t)(p->start_ns / 1000000000u),
	        (unsigned)(p->start_ns % 1000000000ull / 1000000ull), b, (uint64_t)(p->end_ns / 1000000000u),
	        (unsigned)(p->end_ns % 1000000000ull / 1000000ull),
	        (double)(p->end_ns - p->start_ns) / 1e9, p->op ? "write" : "read",
	        p->layer < 3 ? layers[p->layer] : "?", p->ranks, rank, p->bytes, p->requests,
	        p->requests ? p->bytes / p->requests : 0, p->max_req, (double)p->io_time_ns / 1e9,
	        iogp_spatiality_name(p->spatiality), p->files, p->shared ? "shared" : "file-per-process");
	iogp_csv_field(out, p->file ? p->file : "");
	fprintf(out, ",%d\n", p->open);
	return ferror(out) ? IOGP_EIO : 0;
}
