/* export_files.c - per-file records (iogp_model_files) as CSV: one row per
 * file, directory record or other-files record, by bytes moved. */
#include <inttypes.h>
#include <stdio.h>

#include "iogp_err.h"
#include "iogp_export.h"
#include "export_priv.h"

int iogp_files_csv_header(FILE *out)
{
	return fputs("file,kind,files,layer,sources,read_ops,read_bytes,read_max_request_bytes,"
	             "write_ops,write_bytes,write_max_request_bytes,meta_ops,io_time_s\n",
	             out) == EOF ? IOGP_EIO : 0;
}

int iogp_files_csv_row(FILE *out, const iogp_file_info *f)
{
	static const char *const layers[] = { "posix", "stdio", "mpiio" };
	const iogp_filerec *r = &f->total;
	int dir = !f->other && (r->flags & IOGP_FR_DIRAGG);
	iogp_csv_field(out, f->path);
	fprintf(out, ",%s,%" PRIu64 ",%s,%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
	        ",%" PRIu64 ",%" PRIu64 ",%.6f\n", f->other ? "other" : dir ? "directory" : "file",
	        f->other || dir ? r->overflow : 1, f->layer < 3 ? layers[f->layer] : "?", f->sources,
	        r->op[0].ops, r->op[0].bytes, r->op[0].max_req, r->op[1].ops, r->op[1].bytes,
	        r->op[1].max_req, r->meta_ops,
	        (double)(r->op[0].time_ns + r->op[1].time_ns + r->meta_ns) / 1e9);
	return ferror(out) ? IOGP_EIO : 0;
}
