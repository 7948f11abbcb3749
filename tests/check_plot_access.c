/* check_plot_access.c - iogram-view's access plot from the model (plot/
 * plot_access.c): the frame's files are the layer's files with samples in
 * iogp_model_files' byte order, its samples cover the whole run of a busy
 * file, the counts of requests they stand for are the model's, and a
 * stdio-only file is on the STDIO layer alone. */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iogp.h"
#include "iogp_layers.h"
#include "iogplot.h"
#include "testutil.h"
#include "testutil_access.h"

START_TEST(frame_files_and_samples)
{
	tu_acc_job j = { .seconds = 60, .nsources = 2, .nfiles = 3, .filerecs = 1,
	                 .files = { { "/d/alpha", IOGP_FR_POSIX, 20000, 4096, IOGP_OP_READ, 1ull << 30, 1, 0, 0 },
	                            { "/d/zeta", IOGP_FR_POSIX, 3000, 65536, IOGP_OP_WRITE, 0, 0, 0, 0 },
	                            { "/d/lines", IOGP_FR_STDIO, 500, 11, IOGP_OP_WRITE, 0, 0, 0, 0 } } };
	iogp_model_opts o = { .live = 1 };
	iogp_model *m = iogp_model_new(&o);
	tu_acc_run(&j, m, NULL);
	iogplot_frame f;
	iogplot_frame_init(&f);
	f.layer = IOGP_LAYER_POSIX;
	ck_assert_int_eq(iogplot_frame_from_model(&f, m, NULL), 0);
	ck_assert_uint_eq(f.nfiles, 2);
	ck_assert_str_eq(f.files[0].path, "/d/zeta");    /* most bytes first, not most requests */
	ck_assert_str_eq(f.files[1].path, "/d/alpha");
	ck_assert_str_eq(f.files[0].source, "2 sources");
	ck_assert_uint_eq(f.files[0].folded, 0);
	iogp_access_query q = { .metric = "posix.access", .path = "/d/zeta" };
	iogp_access_set set;
	ck_assert_int_eq(iogp_model_access_query(m, &q, &set), 0);
	ck_assert_uint_eq(f.files[0].n, set.n);
	ck_assert_int_eq(set.exact, 0);   /* the samples estimate it ... */
	ck_assert_uint_eq(f.files[0].requests, j.requests[1]);   /* ... the per-file records count it */
	ck_assert_int_eq(f.files[0].exact, 1);
	iogp_access_set_free(&set);
	ck_assert_uint_gt(f.access_requests, f.naccess);
	/* the busy file's samples in every 10 s */
	double t0 = (double)j.t0_wall / 1e9;
	for (int k = 0; k < 6; k++) {
		size_t c = 0;
		for (size_t i = 0; i < f.naccess; i++)
			c += f.access[i].file == 1 && f.access[i].t >= t0 + 10 * k && f.access[i].t < t0 + 10 * (k + 1);
		ck_assert_msg(c > 0, "alpha: no samples in 10 s slice %d", k);
	}
	for (size_t i = 0; i < f.naccess; i++)
		ck_assert_uint_lt(f.access[i].file, 2);
	/* the STDIO layer: the stdio file only */
	f.layer = IOGP_LAYER_STDIO;
	ck_assert_int_eq(iogplot_frame_from_model(&f, m, NULL), 0);
	ck_assert_uint_eq(f.nfiles, 1);
	ck_assert_str_eq(f.files[0].path, "/d/lines");
	ck_assert_uint_gt(f.naccess, 0);
	for (size_t i = 0; i < f.naccess; i++)
		ck_assert_uint_eq(f.access[i].size, 11);
	/* a PNG of the panel draws (the title with its note) */
	iogplot_style st;
	iogplot_style_init(&st, 0);
	iogplot_view v;
	iogplot_view_init(&v);
	char err[256], path[512];
	char dir[256];
	tu_tmpdir(dir, sizeof(dir), "iogram-check-plot-access");
	snprintf(path, sizeof(path), "%s/access.png", dir);
	ck_assert_int_eq(iogplot_export(path, &st, &f, &v, IOGPLOT_ACCESS, 800, 500, 1, err, sizeof(err)), 0);
	ck_assert(tu_wait_file(path, 1));
	tu_rmdir_all(dir);
	iogplot_frame_free(&f);
	iogp_model_free(m);
}
END_TEST

/* A directory's record (the agent's IOGRAM_DIR_FILES) is a file of the
 * plot with the files it folded, summed over the sources, in its name. */
START_TEST(frame_dir_record)
{
	tu_acc_job j = { .seconds = 10, .nsources = 2, .nfiles = 2, .filerecs = 1,
	                 .files = { { "/d/out/*", IOGP_FR_POSIX, 2000, 3901, IOGP_OP_WRITE, 0, 0, 0, 0, 617 },
	                            { "/d/out/a", IOGP_FR_POSIX, 10, 3901, IOGP_OP_WRITE, 0, 0, 0, 0, 0 } } };
	iogp_model_opts o = { .live = 1 };
	iogp_model *m = iogp_model_new(&o);
	tu_acc_run(&j, m, NULL);
	iogplot_frame f;
	iogplot_frame_init(&f);
	f.layer = IOGP_LAYER_POSIX;
	ck_assert_int_eq(iogplot_frame_from_model(&f, m, NULL), 0);
	ck_assert_uint_eq(f.nfiles, 2);
	ck_assert_str_eq(f.files[0].path, "/d/out/*");
	ck_assert_uint_eq(f.files[0].folded, 2 * 617);
	ck_assert_uint_eq(f.files[1].folded, 0);
	char label[128];
	iogp_file_label(label, sizeof label, f.files[0].path, 0, f.files[0].folded);
	ck_assert_str_eq(label, "/d/out/* (1,234 files)");
	iogplot_style st;
	iogplot_style_init(&st, 0);
	iogplot_view v;
	iogplot_view_init(&v);
	char err[256], path[512], dir[256];
	tu_tmpdir(dir, sizeof(dir), "iogram-check-plot-access");
	snprintf(path, sizeof(path), "%s/access.png", dir);
	ck_assert_int_eq(iogplot_export(path, &st, &f, &v, IOGPLOT_ACCESS, 800, 500, 1, err, sizeof(err)), 0);
	tu_rmdir_all(dir);
	iogplot_frame_free(&f);
	iogp_model_free(m);
}
END_TEST

int main(void)
{
	const tu_case cases[] = {
		{ "frame_files_and_samples", frame_files_and_samples },
		{ "frame_dir_record", frame_dir_record },
	};
	return tu_run_suite("plot_access", cases, sizeof(cases) / sizeof(cases[0]), NULL, NULL, 120);
}
