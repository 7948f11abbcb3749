/* export_matrix.c - the MPI traffic matrix (iogp_model_matrix) as CSV: one
 * row per (sender, destination) cell, then the row, column and grand
 * totals; units in the header. */
#include <inttypes.h>
#include <stdio.h>

#include "iogp_err.h"
#include "iogp_export.h"

static void row(FILE *out, const char *from, const char *to, uint64_t msgs, uint64_t bytes)
{
	iogp_csv_field(out, from);
	fputc(',', out);
	iogp_csv_field(out, to);
	fprintf(out, ",%" PRIu64 ",%" PRIu64 "\n", msgs, bytes);
}

int iogp_matrix_csv(FILE *out, const iogp_matrix *x, int by)
{
	const char *what = by == IOGP_MATRIX_RANK ? "rank" : "node";

	fprintf(out, "from_%s,to_%s,messages_count,bytes\n", what, what);
	for (uint32_t r = 0; r < x->n; r++)
		for (uint32_t c = 0; c < x->n; c++)
			row(out, x->names[r], x->names[c], x->msgs[(size_t)r * x->n + c],
			    x->bytes[(size_t)r * x->n + c]);
	for (uint32_t r = 0; r < x->n; r++)
		row(out, x->names[r], "total", x->row_msgs[r], x->row_bytes[r]);
	for (uint32_t c = 0; c < x->n; c++)
		row(out, "total", x->names[c], x->col_msgs[c], x->col_bytes[c]);
	row(out, "total", "total", x->total_msgs, x->total_bytes);
	return ferror(out) ? IOGP_EIO : 0;
}
