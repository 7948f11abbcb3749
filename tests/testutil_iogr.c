/* testutil_iogr.c - test helper over recordings: every run-*.iogr of a
 * directory (one per process of a job recorded with --output run-%p.iogr)
 * loaded into one model. Linked through testutil_iogr_dep. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "iogp_export.h"
#include "iogp_recorder.h"
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

const char *tu_mx_node(int r)
{
	return r < 2 ? "mxa" : r < 4 ? "mxb" : "mxc";
}

int tu_matrix_job(const char *path)
{
	iogp_recorder *rec;
	char err[256];
	if (iogp_recorder_open(&rec, path, NULL, err, sizeof(err)) < 0)
		return -1;
	const uint64_t t0 = 1790000000000000000ull, sec = 1000000000ull;
	int bad = 0;
	for (int r = 0; r < TU_MX_RANKS && !bad; r++) {
		char rank[16];
		snprintf(rank, sizeof(rank), "%d", r);
		iogp_label lab[4] = { { "host", tu_mx_node(r) }, { "pid", "100" }, { "rank", rank },
		                      { "job", "77" } };
		iogp_metric_def def[1] = { { .id = 1, .kind = IOGP_HISTOGRAM, .name = "mpi.p2p.size",
		                             .unit = "bytes" } };
		iogp_bins_native(&def[0].bins, 4);
		iogp_msg h = { .kind = IOGP_HELLO, .source = 0x5000 + (uint64_t)r, .labels = lab, .nlabels = 4,
		               .metrics = def, .nmetrics = 1 };
		bad |= iogp_recorder_add_msg(rec, &h, t0) < 0;
	}
	for (int s = 0; s < TU_MX_SECONDS && !bad; s++)
		for (int r = 0; r < TU_MX_RANKS && !bad; r++) {
			iogp_peer p[TU_MX_RANKS];
			iogp_bin b[TU_MX_RANKS];
			uint32_t np = 0;
			for (int d = 0; d < TU_MX_RANKS; d++) {
				uint64_t n = tu_mx_msgs(r, d) / TU_MX_SECONDS;
				if (!n)
					continue;
				p[np] = (iogp_peer){ .rank = (uint32_t)d, .msgs = n, .bytes = n * tu_mx_size(d) };
				b[np] = (iogp_bin){ iogp_native_index(tu_mx_size(d), 4), n };
				np++;
			}
			iogp_hist_val hv = { 1, np, b };
			iogp_msg m = { .kind = IOGP_DELTA, .source = 0x5000 + (uint64_t)r, .seq = (uint64_t)s + 1,
			               .t0_ns = 10 * sec + (uint64_t)s * sec, .t1_ns = 10 * sec + (uint64_t)(s + 1) * sec,
			               .wall_ns = t0 + (uint64_t)(s + 1) * sec, .hists = &hv, .nhists = 1,
			               .peers = p, .npeers = np };
			bad |= iogp_recorder_add_msg(rec, &m, m.wall_ns + 1000) < 0;
		}
	return iogp_recorder_close(rec) < 0 || bad ? -1 : 0;
}
