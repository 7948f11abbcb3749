/* check_files.c - per-file records: the wire section (round trip, refusals,
 * every cut), the model's cumulative records (DELTA increments, SNAPSHOT
 * totals, caps) and the per-file query that merges sources by path. */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iogp_err.h"
#include "iogp_export.h"
#include "iogp_model.h"
#include "iogp_recorder.h"
#include "iogp_replay.h"
#include "iogp_wire.h"
#include "testutil.h"

static iogp_filerec rec(uint64_t file, uint32_t layer, uint64_t rops, uint64_t rbytes,
                        uint64_t wops, uint64_t wbytes, uint64_t t0)
{
	iogp_filerec r;
	memset(&r, 0, sizeof r);
	r.file = file;
	r.layer = layer;
	r.op[0] = (iogp_filerec_op){ .ops = rops, .bytes = rbytes, .time_ns = rops * 1000,
	                            .consec = rops, .max_req = rops ? rbytes / rops : 0,
	                            .first_ns = rops ? t0 : 0, .last_ns = rops ? t0 + 500 : 0 };
	r.op[1] = (iogp_filerec_op){ .ops = wops, .bytes = wbytes, .time_ns = wops * 2000,
	                            .random = wops, .max_req = wops ? wbytes / wops : 0,
	                            .first_ns = wops ? t0 + 10 : 0, .last_ns = wops ? t0 + 900 : 0 };
	r.meta_ops = 2;
	r.meta_ns = 77;
	return r;
}

START_TEST(wire_roundtrip)
{
	iogp_filerec r[3] = { rec(5, IOGP_FR_POSIX, 10, 40960, 0, 0, 1000000),
	                      rec(5, IOGP_FR_STDIO, 3, 30, 4, 4000, 2000000),
	                      rec(UINT64_MAX - 1, IOGP_FR_POSIX, 0, 0, 1, 1, 5) };
	r[2].flags = IOGP_FR_OTHER;
	r[2].overflow = 12345;
	iogp_msg msg = { .kind = IOGP_DELTA, .source = 9, .seq = 1, .nfilerecs = 3, .filerecs = r }, d;
	uint8_t buf[1024];
	long len = iogp_msg_encode(&msg, buf, sizeof buf);
	ck_assert_int_gt(len, 0);
	iogp_msg_init(&d);
	ck_assert_int_eq(iogp_msg_decode(&d, buf, (size_t)len, NULL, 0), 0);
	ck_assert_uint_eq(d.nfilerecs, 3);
	for (int i = 0; i < 3; i++)
		ck_assert_msg(!memcmp(&d.filerecs[i], &r[i], sizeof r[i]), "record %d differs", i);
	/* out of order or repeated records do not encode */
	iogp_filerec bad[2] = { r[1], r[0] };
	msg.filerecs = bad;
	msg.nfilerecs = 2;
	ck_assert_int_eq(iogp_msg_encode(&msg, buf, sizeof buf), IOGP_EINVAL);
	bad[0] = r[0];
	ck_assert_int_eq(iogp_msg_encode(&msg, buf, sizeof buf), IOGP_EINVAL);
	/* every cut is refused, never a crash */
	msg.filerecs = r;
	msg.nfilerecs = 3;
	len = iogp_msg_encode(&msg, buf, sizeof buf);
	for (long cut = 0; cut < len; cut++)
		ck_assert_int_lt(iogp_msg_decode(&d, buf, (size_t)cut, NULL, 0), 0);
	iogp_msg_free(&d);
}
END_TEST

static void apply(iogp_model *m, const iogp_msg *msg)
{
	uint8_t buf[1 << 16];
	long len = iogp_msg_encode(msg, buf, sizeof buf);
	ck_assert_int_gt(len, 0);
	ck_assert_int_eq(iogp_model_feed(m, buf, (size_t)len, 1), 0);
}

static void hello(iogp_model *m, uint64_t src, const char *host, const char *rank)
{
	iogp_label lab[2] = { { "host", host }, { "rank", rank } };
	iogp_file f[2] = { { 5, "/scratch/shared.dat" }, { 6 + src, "/scratch/own.dat" } };
	iogp_msg msg = { .kind = IOGP_HELLO, .source = src, .nlabels = 2, .labels = lab };
	apply(m, &msg);
	iogp_msg d = { .kind = IOGP_DELTA, .source = src, .seq = 1, .nfiles = 2, .files = f };
	apply(m, &d);
}

START_TEST(model_merge_snapshot)
{
	iogp_model *m = iogp_model_new(NULL), *m2 = iogp_model_new(NULL);
	/* 4 ranks write the shared file; each its own file too (same path on
	 * every node: one entry per path, sources counted) */
	for (uint64_t src = 1; src <= 4; src++) {
		char rank[8];
		snprintf(rank, sizeof rank, "%u", (unsigned)src - 1);
		hello(m, src, src <= 2 ? "n1" : "n2", rank);
		for (uint64_t k = 0; k < 3; k++) {
			iogp_filerec r[2] = { rec(5, IOGP_FR_POSIX, 0, 0, 8, 8 * 262144, 1000 * (k + 1)),
			                      rec(6 + src, IOGP_FR_POSIX, 2, 8192, 0, 0, 1000 * (k + 1)) };
			iogp_msg d = { .kind = IOGP_DELTA, .source = src, .seq = 2 + k, .nfilerecs = 2,
			               .filerecs = r };
			apply(m, &d);
		}
	}
	iogp_file_info *f;
	size_t n;
	ck_assert_int_eq(iogp_model_files(m, NULL, IOGP_FR_POSIX, &f, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(f[0].path, "/scratch/shared.dat");
	ck_assert_uint_eq(f[0].sources, 4);
	ck_assert_uint_eq(f[0].total.op[1].ops, 4 * 3 * 8);
	ck_assert_uint_eq(f[0].total.op[1].bytes, 4ull * 3 * 8 * 262144);
	ck_assert_uint_eq(f[0].total.op[1].random, 4 * 3 * 8);
	ck_assert_uint_eq(f[0].total.op[1].max_req, 262144);
	ck_assert_uint_eq(f[0].total.op[1].first_ns, 1010);
	ck_assert_uint_eq(f[0].total.op[1].last_ns, 3900);
	ck_assert_str_eq(f[1].path, "/scratch/own.dat");
	ck_assert_uint_eq(f[1].sources, 4);
	ck_assert_uint_eq(f[1].total.op[0].bytes, 4ull * 3 * 8192);
	iogp_model_files_free(f);
	/* one node: its two sources only */
	iogp_sel sel = { .kind = IOGP_SEL_NODE, .node = "n2" };
	ck_assert_int_eq(iogp_model_files(m, &sel, -1, &f, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(f[0].sources, 2);
	iogp_model_files_free(f);
	/* a SNAPSHOT of each source rebuilds the same in another model */
	for (size_t i = 0; i < iogp_model_source_count(m); i++) {
		iogp_msg snap;
		iogp_msg_init(&snap);
		ck_assert_int_eq(iogp_model_snapshot(m, i, 0, &snap), 0);
		ck_assert_uint_eq(snap.nfilerecs, 2);
		apply(m2, &snap);
		iogp_msg_free(&snap);
	}
	ck_assert_int_eq(iogp_model_files(m2, NULL, IOGP_FR_POSIX, &f, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(f[0].total.op[1].bytes, 4ull * 3 * 8 * 262144);
	ck_assert_uint_eq(f[0].sources, 4);
	iogp_model_files_free(f);
	iogp_model_free(m);
	iogp_model_free(m2);
}
END_TEST

/* Bounded: a model with little room refuses records and counts them;
 * an unknown layer is skipped. */
START_TEST(model_caps)
{
	iogp_model_opts o = { .max_bytes = 64 << 10 };
	iogp_model *m = iogp_model_new(&o);
	hello(m, 1, "n1", "0");
	iogp_filerec *r = calloc(2000, sizeof *r);
	for (uint32_t i = 0; i < 2000; i++)
		r[i] = rec(100 + i, i % 2 ? 7 : IOGP_FR_POSIX, 1, 1, 0, 0, 1);
	iogp_msg d = { .kind = IOGP_DELTA, .source = 1, .seq = 2, .nfilerecs = 2000, .filerecs = r };
	uint8_t *buf = malloc(1 << 20);
	long len = iogp_msg_encode(&d, buf, 1 << 20);
	ck_assert_int_gt(len, 0);
	iogp_model_feed(m, buf, (size_t)len, 1);
	iogp_model_stats st;
	iogp_model_get_stats(m, &st);
	ck_assert_uint_gt(st.refused, 0);
	iogp_file_info *f;
	size_t n;
	ck_assert_int_eq(iogp_model_files(m, NULL, -1, &f, &n), 0);
	ck_assert_uint_gt(n, 0);
	ck_assert_uint_lt(n, 1000);
	for (size_t i = 0; i < n; i++)
		ck_assert_uint_eq(f[i].layer, IOGP_FR_POSIX);
	iogp_model_files_free(f);
	free(buf);
	free(r);
	iogp_model_free(m);
}
END_TEST

/* ---- phases ------------------------------------------------------------------ */

/* Source src writes (op 1) or reads (op 0) `reqs` requests of `size` to file
 * over [t, t + dur] seconds of wall time, as DELTAs of 1 s each. */
static uint64_t seqs[16];
static void act(iogp_model *m, uint64_t src, uint64_t file, int op, double t, double dur,
                uint64_t reqs, uint64_t size, int consecutive)
{
	int nd = dur < 1 ? 1 : (int)dur;
	for (int k = 0; k < nd; k++) {
		double a = t + dur * k / nd, b = t + dur * (k + 1) / nd;
		uint64_t r = reqs / (uint64_t)nd + ((uint64_t)k < reqs % (uint64_t)nd);
		iogp_filerec fr;
		memset(&fr, 0, sizeof fr);
		fr.file = file;
		fr.op[op] = (iogp_filerec_op){ .ops = r, .bytes = r * size, .time_ns = r * 1000,
		                               .consec = consecutive ? r : 0, .random = consecutive ? 0 : r,
		                               .max_req = size, .first_ns = (uint64_t)(a * 1e9),
		                               .last_ns = (uint64_t)(b * 1e9) };
		/* monotonic = wall here: t1 = wall = b */
		iogp_msg d = { .kind = IOGP_DELTA, .source = src, .seq = ++seqs[src],
		               .t0_ns = (uint64_t)(a * 1e9), .t1_ns = (uint64_t)(b * 1e9),
		               .wall_ns = (uint64_t)(b * 1e9), .nfilerecs = 1, .filerecs = &fr };
		apply(m, &d);
	}
}

static iogp_model *job(int nsrc)
{
	iogp_model *m = iogp_model_new(NULL);
	memset(seqs, 0, sizeof seqs);
	for (int s = 1; s <= nsrc; s++) {
		char rank[8];
		snprintf(rank, sizeof rank, "%d", s - 1);
		iogp_label lab[2] = { { "host", "n1" }, { "rank", rank } };
		iogp_file f[6] = { { 5, "/s/shared.0" }, { 6, "/s/shared.1" }, { 7, "/s/shared.2" },
		                   { 8, "/s/shared.3" }, { 100 + (uint64_t)s, tu_fmt("/s/own.%d", s) } };
		iogp_msg h = { .kind = IOGP_HELLO, .source = (uint64_t)s, .nlabels = 2, .labels = lab,
		               .seq = 0 };
		apply(m, &h);
		iogp_msg d = { .kind = IOGP_DELTA, .source = (uint64_t)s, .seq = ++seqs[s], .nfiles = 5,
		               .files = f };
		apply(m, &d);
	}
	return m;
}

START_TEST(phases_single_a_b)
{
	/* SINGLE-A: 4 ranks write one shared file, contiguous 1 MiB requests */
	iogp_model *m = job(4);
	for (uint64_t s = 1; s <= 4; s++)
		act(m, s, 5, 1, 1000.0 + 0.01 * (double)s, 3.0, 30, 1 << 20, 1);
	iogp_phase *p;
	size_t n;
	ck_assert_int_eq(iogp_model_phases(m, NULL, &p, &n, NULL), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(p[0].op, IOGP_OP_WRITE);
	ck_assert_uint_eq(p[0].ranks, 4);
	ck_assert_int_eq(p[0].shared, 1);
	ck_assert_uint_eq(p[0].files, 1);
	ck_assert_uint_eq(p[0].requests, 120);
	ck_assert_uint_eq(p[0].bytes, 120ull << 20);
	ck_assert_int_eq(p[0].spatiality, IOGP_SPAT_CONSECUTIVE);
	ck_assert_str_eq(p[0].file, "/s/shared.0");
	ck_assert_uint_eq(p[0].start_ns, 1000010000000ull);
	ck_assert_uint_eq(p[0].end_ns, 1003040000000ull);
	ck_assert_uint_eq(p[0].io_time_ns, 30 * 1000);   /* the longest rank's: parallel */
	free(p);
	iogp_model_free(m);
	/* SINGLE-B: each rank its own file: one file-per-process phase */
	m = job(4);
	for (uint64_t s = 1; s <= 4; s++)
		act(m, s, 100 + s, 1, 1000.0, 2.0, 8, 4096, 1);
	ck_assert_int_eq(iogp_model_phases(m, NULL, &p, &n, NULL), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(p[0].ranks, 4);
	ck_assert_int_eq(p[0].shared, 0);
	ck_assert_uint_eq(p[0].files, 4);
	ck_assert_uint_eq(p[0].bytes, 4 * 8 * 4096);
	ck_assert_ptr_null(p[0].file);
	free(p);
	iogp_model_free(m);
}
END_TEST

START_TEST(phases_periodic_and_raw)
{
	/* PERIODIC: 4 write phases 2 s apart, a new shared file each, random */
	iogp_model *m = job(4);
	for (int ph = 0; ph < 4; ph++)
		for (uint64_t s = 1; s <= 4; s++)
			act(m, s, 5 + (uint64_t)ph, 1, 1000.0 + 3.0 * ph, 1.0, 10, 65536, 0);
	iogp_phase *p;
	size_t n;
	ck_assert_int_eq(iogp_model_phases(m, NULL, &p, &n, NULL), 0);
	ck_assert_uint_eq(n, 4);
	for (int i = 0; i < 4; i++) {
		ck_assert_uint_eq(p[i].start_ns, (uint64_t)(1000 + 3 * i) * 1000000000ull);
		ck_assert_uint_eq(p[i].end_ns, (uint64_t)(1001 + 3 * i) * 1000000000ull);
		ck_assert_uint_eq(p[i].ranks, 4);
		ck_assert_uint_eq(p[i].bytes, 4 * 10 * 65536);
		ck_assert_int_eq(p[i].spatiality, IOGP_SPAT_RANDOM);
		ck_assert_str_eq(p[i].file, tu_fmt("/s/shared.%d", i));
	}
	free(p);
	/* a distance of 3 s joins them */
	iogp_phase_opts o = { .distance_ns = 3000000000ull, .layer = -1 };
	ck_assert_int_eq(iogp_model_phases(m, &o, &p, &n, NULL), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(p[0].files, 4);
	ck_assert_uint_eq(p[0].ranks, 4);
	free(p);
	iogp_model_free(m);
	/* read after write: the same file, a write phase then a read phase */
	m = job(2);
	for (uint64_t s = 1; s <= 2; s++) {
		act(m, s, 5, 1, 2000.0, 2.0, 20, 4096, 1);
		act(m, s, 5, 0, 2005.0, 1.0, 20, 4096, 1);
	}
	ck_assert_int_eq(iogp_model_phases(m, NULL, &p, &n, NULL), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(p[0].op, IOGP_OP_WRITE);
	ck_assert_int_eq(p[1].op, IOGP_OP_READ);
	ck_assert_uint_eq(p[1].requests, 40);
	ck_assert_int_eq(p[1].open, 1);   /* the model's clock is its last DELTA */
	ck_assert_int_eq(p[0].open, 0);
	free(p);
	iogp_model_free(m);
}
END_TEST

/* A directory's record (the agent's IOGRAM_DIR_FILES): the wire keeps its
 * flag and folded count, refuses one without a directory, with the
 * other-files flag or with nothing folded; the model keeps the latest
 * count (cumulative) through DELTAs and SNAPSHOTs and sums the sources'
 * under one path; the label shows it; a recording gives back every
 * payload byte for byte (the replay file's DELTA transform). A record
 * without the flag (what older agents wrote) reads as before. */
START_TEST(dir_records)
{
	iogp_filerec r[2] = { rec(3, IOGP_FR_POSIX, 0, 0, 1, 100, 1000),
	                      rec(7, IOGP_FR_POSIX, 0, 0, 40, 4000, 2000) };
	r[1].flags = IOGP_FR_DIRAGG;
	r[1].overflow = 40;
	iogp_file names[2] = { { 3, "/d/out/a" }, { 7, "/d/out/*" } };
	iogp_msg msg = { .kind = IOGP_DELTA, .source = 9, .seq = 2, .nfilerecs = 2, .filerecs = r,
	                 .nfiles = 2, .files = names }, d;
	uint8_t buf[1024];
	long len = iogp_msg_encode(&msg, buf, sizeof buf);
	ck_assert_int_gt(len, 0);
	iogp_msg_init(&d);
	ck_assert_int_eq(iogp_msg_decode(&d, buf, (size_t)len, NULL, 0), 0);
	ck_assert_uint_eq(d.nfilerecs, 2);
	for (int i = 0; i < 2; i++)
		ck_assert_msg(!memcmp(&d.filerecs[i], &r[i], sizeof r[i]), "record %d differs", i);
	/* refused both ways: no directory, the other files' flag, nothing folded */
	iogp_filerec bad = r[1];
	iogp_msg b = { .kind = IOGP_DELTA, .source = 9, .seq = 2, .nfilerecs = 1, .filerecs = &bad };
	bad.file = 0;
	ck_assert_int_eq(iogp_msg_encode(&b, buf, sizeof buf), IOGP_EINVAL);
	bad = r[1];
	bad.flags |= IOGP_FR_OTHER;
	ck_assert_int_eq(iogp_msg_encode(&b, buf, sizeof buf), IOGP_EINVAL);
	bad = r[1];
	bad.overflow = 0;
	ck_assert_int_eq(iogp_msg_encode(&b, buf, sizeof buf), IOGP_EINVAL);
	bad.flags = 0;   /* a plain record encodes; with DIRAGG set by hand it decodes no more */
	len = iogp_msg_encode(&b, buf, sizeof buf);
	ck_assert_int_gt(len, 0);
	for (long i = len - 1; i > 0; i--)
		if (buf[i] == 0 && buf[i - 1] == IOGP_FR_POSIX && buf[i + 1] != 0) {
			buf[i] = IOGP_FR_DIRAGG;   /* the flags varint, after file gap and layer */
			break;
		}
	char err[128] = "";
	ck_assert_int_eq(iogp_msg_decode(&d, buf, (size_t)len, err, sizeof err), IOGP_ECORRUPT);
	ck_assert_msg(strstr(err, "directory") != NULL, "%s", err);

	/* the model: two DELTAs (the count grows), a second source's record of
	 * the same directory merged by path; a SNAPSHOT rebuilds the same */
	char path[128];
	tu_tmpdir(path, sizeof path, "iogram-files");
	char *file = tu_fmt("%s/dirs.iogr", path);
	iogp_recorder *rc;
	iogp_recorder_opts ro = { .replace = 1 };
	ck_assert_int_eq(iogp_recorder_open(&rc, file, &ro, err, sizeof err), 0);
	iogp_model *m = iogp_model_new(NULL), *m2 = iogp_model_new(NULL);
	uint8_t sent[4][1024];
	long sent_len[4];
	int ns = 0;
	for (uint64_t src = 1; src <= 2; src++) {
		iogp_label lab[1] = { { "host", src == 1 ? "n1" : "n2" } };
		iogp_msg h = { .kind = IOGP_HELLO, .source = src, .seq = 1, .nlabels = 1, .labels = lab };
		apply(m, &h);
		ck_assert_int_eq(iogp_recorder_add_msg(rc, &h, 1000 + src), 0);
		for (uint64_t k = 0; k < 2; k++) {
			r[1].overflow = 40 + 10 * k * src;   /* cumulative: 40, then 50 or 60 */
			msg.source = src;
			msg.seq = 2 + k;
			msg.nfiles = k == 0 ? 2 : 0;
			sent_len[ns] = iogp_msg_encode(&msg, sent[ns], sizeof sent[ns]);
			ck_assert_int_gt(sent_len[ns], 0);
			ck_assert_int_eq(iogp_model_feed(m, sent[ns], (size_t)sent_len[ns], 1), 0);
			ck_assert_int_eq(iogp_recorder_add(rc, sent[ns], (size_t)sent_len[ns], 2000 + (uint64_t)ns), 0);
			ns++;
		}
	}
	ck_assert_int_eq(iogp_recorder_close(rc), 0);
	iogp_file_info *f;
	size_t n;
	ck_assert_int_eq(iogp_model_files(m, NULL, IOGP_FR_POSIX, &f, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(f[0].path, "/d/out/*");
	ck_assert_uint_eq(f[0].sources, 2);
	ck_assert(f[0].total.flags & IOGP_FR_DIRAGG);
	ck_assert_uint_eq(f[0].total.overflow, 50 + 60);
	ck_assert_uint_eq(f[0].total.op[1].ops, 2 * 2 * 40);
	char label[128];
	iogp_file_label(label, sizeof label, f[0].path, f[0].other, f[0].total.overflow);
	ck_assert_str_eq(label, "/d/out/* (110 files)");
	ck_assert(!(f[1].total.flags & IOGP_FR_DIRAGG));
	ck_assert_uint_eq(f[1].total.overflow, 0);
	iogp_file_label(label, sizeof label, f[1].path, f[1].other, f[1].total.overflow);
	ck_assert_str_eq(label, "/d/out/a");
	iogp_file_label(label, sizeof label, "", 1, 1234567);
	ck_assert_str_eq(label, "(other files: 1,234,567 beyond the limit)");
	/* iogram export files: the folded count in its own column */
	char *csv = NULL;
	size_t csvlen = 0;
	FILE *o = open_memstream(&csv, &csvlen);
	ck_assert_ptr_nonnull(o);
	ck_assert_int_eq(iogp_files_csv_header(o), 0);
	for (size_t i = 0; i < n; i++)
		ck_assert_int_eq(iogp_files_csv_row(o, &f[i]), 0);
	fclose(o);
	ck_assert_str_eq(csv, "file,kind,files,layer,sources,read_ops,read_bytes,read_max_request_bytes,"
	                 "write_ops,write_bytes,write_max_request_bytes,meta_ops,io_time_s\n"
	                 "/d/out/*,directory,110,posix,2,0,0,0,160,16000,100,8,0.000320\n"
	                 "/d/out/a,file,1,posix,2,0,0,0,4,400,100,8,0.000008\n");
	free(csv);
	iogp_model_files_free(f);
	for (size_t i = 0; i < iogp_model_source_count(m); i++) {
		iogp_msg snap;
		iogp_msg_init(&snap);
		ck_assert_int_eq(iogp_model_snapshot(m, i, 0, &snap), 0);
		ck_assert_uint_eq(snap.nfilerecs, 2);
		ck_assert_uint_eq(snap.filerecs[1].flags, IOGP_FR_DIRAGG);
		ck_assert_uint_eq(snap.filerecs[1].overflow, 40 + 10 * (i + 1));
		apply(m2, &snap);
		iogp_msg_free(&snap);
	}
	ck_assert_int_eq(iogp_model_files(m2, NULL, IOGP_FR_POSIX, &f, &n), 0);
	ck_assert_uint_eq(f[0].total.overflow, 110);
	ck_assert(f[0].total.flags & IOGP_FR_DIRAGG);
	iogp_model_files_free(f);
	iogp_model_free(m);
	iogp_model_free(m2);

	/* a stream that turns a directory's record into a plain one, or gives
	 * it the other files' flag, leaves a model whose SNAPSHOT encodes */
	iogp_model *h = iogp_model_new(NULL);
	iogp_msg hh = { .kind = IOGP_HELLO, .source = 5, .seq = 1 };
	apply(h, &hh);
	iogp_filerec hx = rec(9, IOGP_FR_POSIX, 1, 1, 0, 0, 5);
	iogp_msg xd = { .kind = IOGP_DELTA, .source = 5, .seq = 2, .nfilerecs = 1, .filerecs = &hx };
	for (int k = 0; k < 3; k++) {
		hx.flags = k == 1 ? 0 : k == 2 ? IOGP_FR_OTHER : IOGP_FR_DIRAGG;
		hx.overflow = k == 0 ? 3 : 0;
		xd.seq = 2 + (uint64_t)k;
		apply(h, &xd);
		iogp_msg snap;
		iogp_msg_init(&snap);
		ck_assert_int_eq(iogp_model_snapshot(h, 0, 0, &snap), 0);
		ck_assert_int_gt(iogp_msg_encode(&snap, buf, sizeof buf), 0);
		ck_assert_uint_eq(snap.filerecs[0].flags & IOGP_FR_DIRAGG, k == 0 ? IOGP_FR_DIRAGG : 0);
		iogp_msg_free(&snap);
	}
	iogp_model_free(h);

	/* the recording gives back every DELTA byte for byte */
	iogp_replay_reader *rd;
	ck_assert_int_eq(iogp_replay_open(&rd, file, err, sizeof err), 0);
	iogp_replay_rec x;
	int got = 0;
	while (iogp_replay_next(rd, &x) == 0) {
		if (x.keyframe || x.recv_ns < 2000)
			continue;
		ck_assert_int_lt(got, ns);
		ck_assert_uint_eq(x.len, (size_t)sent_len[got]);
		ck_assert_msg(!memcmp(x.payload, sent[got], x.len), "DELTA %d differs", got);
		got++;
	}
	ck_assert_int_eq(got, ns);
	iogp_replay_close_reader(rd);
	iogp_msg_free(&d);
	tu_rmdir_all(path);
}
END_TEST

int main(void)
{
	const tu_case cases[] = {
		{ "wire_roundtrip", wire_roundtrip },
		{ "model_merge_snapshot", model_merge_snapshot },
		{ "model_caps", model_caps },
		{ "phases_single_a_b", phases_single_a_b },
		{ "phases_periodic_and_raw", phases_periodic_and_raw },
		{ "dir_records", dir_records },
	};
	return tu_run_suite("files", cases, sizeof(cases) / sizeof(cases[0]), NULL, NULL, 120);
}
