/* testutil_iogr.c - test helper over recordings: every run-*.iogr of a
 * directory (one per process of a job recorded with --output run-%p.iogr)
 * loaded into one model. Linked through testutil_iogr_dep. */
#include <check.h>
#include <dirent.h>
#include <string.h>

#include "iogp_export.h"
#include "testutil.h"
#include "testutil_iogr.h"

iogp_model *tu_load_runs(const char *dir, int *nfiles)
{
	iogp_model *m = iogp_model_new(NULL);
	ck_assert_ptr_nonnull(m);
	DIR *d = opendir(dir);
	ck_assert_msg(d != NULL, "cannot open %s", dir);
	struct dirent *de;
	int n = 0, guard = 0;
	while ((de = readdir(d)) != NULL && guard++ < 10000) {
		size_t l = strlen(de->d_name);
		if (strncmp(de->d_name, "run-", 4) != 0 || l < 5 || strcmp(de->d_name + l - 5, ".iogr") != 0)
			continue;
		char err[256] = "";
		iogp_load_stats st;
		int rc = iogp_load_file(tu_fmt("%s/%s", dir, de->d_name), m, &st, err, sizeof(err));
		ck_assert_msg(rc >= 0, "load %s: %d %s", de->d_name, rc, err);
		ck_assert_msg(st.bad == 0, "%s: %llu bad records", de->d_name, (unsigned long long)st.bad);
		n++;
	}
	closedir(d);
	if (nfiles)
		*nfiles = n;
	return m;
}
