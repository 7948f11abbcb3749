/* check_hostile.c - hostile peers get nothing: a peer that speaks ZMTP and
 * claims an 8 GiB frame (at the recorder, at both sides of a relay, at an
 * agent through its subscription channel) is cut off with memory bounded; a
 * subscription storm gets an agent's SNAPSHOTs at a bounded rate; a stalled
 * subscriber behind a relay costs a healthy one nothing. Real processes,
 * real loopback sockets. */
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zmq.h>

#include "iogp_export.h"
#include "iogp_model.h"
#include "iogp_wire.h"
#include "testutil.h"

static char dir[256];

static void setup(void)
{
	tu_tmpdir(dir, sizeof(dir), "iogram-hostile");
	char sp[300];
	snprintf(sp, sizeof(sp), "%s/spool", dir);
	setenv("IOGRAM_SPOOL", sp, 1);
}

static void teardown(void)
{
	tu_rmdir_all(dir);
}

static char *in_dir(const char *name)
{
	return tu_fmt("%s/%s", dir, name);
}

static int send_all(int fd, const void *b, size_t n)
{
	const uint8_t *p = b;
	while (n > 0) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* ZMTP 3.0 with the NULL mechanism, as a socket of type `type` (PUB, SUB...):
 * greeting and READY both ways. 0 once the peer's READY has been read. */
static int zmtp_hello(int fd, const char *type)
{
	uint8_t g[64] = { 0xff, 0, 0, 0, 0, 0, 0, 0, 1, 0x7f, 3, 0 };
	memcpy(g + 12, "NULL", 4);
	if (send_all(fd, g, sizeof(g)) < 0)
		return -1;
	uint8_t in[64];
	size_t got = 0;
	while (got < 64) {
		ssize_t r = recv(fd, in + got, 64 - got, 0);
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	uint8_t cmd[64];
	size_t tl = strlen(type), n = 0;
	cmd[n++] = 0x04;
	cmd[n++] = (uint8_t)(6 + 1 + 11 + 4 + tl);
	memcpy(cmd + n, "\x05READY", 6);
	n += 6;
	cmd[n++] = 11;
	memcpy(cmd + n, "Socket-Type", 11);
	n += 11;
	cmd[n++] = 0;
	cmd[n++] = 0;
	cmd[n++] = 0;
	cmd[n++] = (uint8_t)tl;
	memcpy(cmd + n, type, tl);
	n += tl;
	if (send_all(fd, cmd, n) < 0)
		return -1;
	/* the peer's READY: flags, size, body */
	uint8_t h[2];
	if (recv(fd, h, 2, MSG_WAITALL) != 2 || !(h[0] & 0x04))
		return -1;
	uint8_t body[256];
	return recv(fd, body, h[1], MSG_WAITALL) == h[1] ? 0 : -1;
}

/* Claim one 8 GiB frame and stream up to `bytes` of it; returns how many
 * bytes the peer took before it cut us off. */
static size_t claim_huge(int fd, size_t bytes)
{
	uint8_t h[9] = { 0x02 };
	uint64_t claim = 8ull << 30;
	for (int i = 0; i < 8; i++)
		h[1 + i] = (uint8_t)(claim >> (56 - 8 * i));
	if (send_all(fd, h, sizeof(h)) < 0)
		return 0;
	static uint8_t chunk[65536];
	memset(chunk, 0x5a, sizeof(chunk));
	size_t sent = 0;
	struct timeval tv = { 2, 0 };
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	while (sent < bytes) {
		ssize_t w = send(fd, chunk, sizeof(chunk), MSG_NOSIGNAL);
		if (w <= 0)
			break;
		sent += (size_t)w;
	}
	return sent;
}

static void wait_port(int port)
{
	ck_assert_msg(tu_wait_port(port, 10), "port %d never opened", port);
}

/* Memory of pid stays within limit_kib of where it was while a hostile
 * peer (speaking as `type`) claims a huge frame at port. */
static void attack(pid_t pid, int port, const char *type, long limit_kib, const char *what)
{
	long before = tu_rss_kib(pid);
	int fd = tu_tcp_connect(port);
	ck_assert_msg(fd >= 0, "%s: cannot connect", what);
	ck_assert_msg(zmtp_hello(fd, type) == 0, "%s: no ZMTP handshake", what);
	size_t took = claim_huge(fd, 64u << 20);
	close(fd);
	tu_sleep_ms(200);
	long after = tu_rss_kib(pid);
	fprintf(stderr, "%s: took %zu bytes of the claimed 8 GiB frame; RSS %ld -> %ld KiB\n", what,
	        took, before, after);
	ck_assert_msg(after > 0, "%s: the process died", what);
	ck_assert_msg(after - before < limit_kib, "%s: grew by %ld KiB", what, after - before);
	ck_assert_msg(took < (32u << 20), "%s: accepted %zu bytes of an oversized frame", what, took);
}

/* An iogram relay on two free loopback ports, listening when it returns. */
static pid_t relay_start(int *lp, char le[64], int *pp, char pe[64])
{
	*lp = tu_free_port();
	*pp = tu_free_port();
	snprintf(le, 64, "%s", tu_ep(*lp));
	snprintf(pe, 64, "%s", tu_ep(*pp));
	pid_t relay = tu_spawn((char *[]){ (char *)tu_env("IOGRAM_BIN"), "relay", "--listen", le,
	                                   "--publish", pe, "--quiet", NULL }, NULL, NULL, 0);
	wait_port(*lp);
	wait_port(*pp);
	return relay;
}

START_TEST(test_oversize_recorder)
{
	int port = tu_free_port();
	char ep[64];
	snprintf(ep, sizeof(ep), "%s", tu_ep(port));
	pid_t rec = tu_spawn((char *[]){ (char *)tu_env("IOGRAM_BIN"), "record", "--listen", ep, "-o",
	                                 in_dir("r.iogr"), NULL }, NULL, NULL, 0);
	wait_port(port);
	attack(rec, port, "PUB", 16384, "recorder");
	/* still recording: a real agent's totals arrive */
	char of[500];
	snprintf(of, sizeof(of), "of=%s", in_dir("dd.out"));
	ck_assert_int_eq(tu_run((char *[]){ (char *)tu_env("IOGRAM_RUN"), "--endpoint", ep, "--", "dd",
		"if=/dev/zero", of, "bs=4096", "count=50", NULL }, NULL, 60), 0);
	tu_sleep_ms(300);
	kill(rec, SIGINT);
	ck_assert_int_eq(tu_wait(rec, 20), 0);
	iogp_model *m = iogp_model_new(NULL);
	iogp_load_stats st;
	char err[256] = "";
	ck_assert_msg(iogp_load_file(in_dir("r.iogr"), m, &st, err, sizeof(err)) >= 0, "%s", err);
	uint64_t w = 0;
	ck_assert_int_eq(iogp_model_counter(m, "posix.write.ops", NULL, &w), 0);
	ck_assert_uint_eq(w, 50);
	iogp_model_free(m);
}
END_TEST

START_TEST(test_oversize_relay)
{
	int lp, pp;
	char le[64], pe[64];
	pid_t relay = relay_start(&lp, le, &pp, pe);
	attack(relay, lp, "PUB", 16384, "relay --listen");
	/* a "subscriber" whose subscription message is 8 GiB */
	attack(relay, pp, "XSUB", 16384, "relay --publish");
	kill(relay, SIGINT);
	ck_assert_int_eq(tu_wait(relay, 20), 0);
}
END_TEST

/* The agent connects to us; we answer as a SUB and send an 8 GiB
 * "subscription". The host must neither grow nor notice. */
START_TEST(test_oversize_agent)
{
	int port, ls = tu_listen(&port);
	char ep[64];
	snprintf(ep, sizeof(ep), "%s", tu_ep(port));
	pid_t host = tu_spawn((char *[]){ (char *)tu_env("IOGRAM_RUN"), "--endpoint", ep, "--", "bash", "-c",
		"for i in $(seq 40); do echo $i >> \"$1\"; sleep 0.05; done; cat \"$1\" | wc -l", "bash",
		in_dir("host.txt"), NULL }, in_dir("host.out"), NULL, 0);
	struct timeval tv = { 10, 0 };
	setsockopt(ls, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	int fd = accept(ls, NULL, NULL);
	ck_assert_msg(fd >= 0, "the agent never connected");
	ck_assert_int_eq(zmtp_hello(fd, "SUB"), 0);
	tu_sleep_ms(100);
	long before = tu_rss_kib(host);
	size_t took = claim_huge(fd, 64u << 20);
	long after = tu_rss_kib(host);
	fprintf(stderr, "agent: took %zu bytes of the claimed frame; host RSS %ld -> %ld KiB\n", took,
	        before, after);
	close(fd);
	ck_assert_msg(took < (32u << 20), "agent accepted %zu bytes", took);
	ck_assert_msg(after - before < 16384, "host grew by %ld KiB", after - before);
	ck_assert_int_eq(tu_wait(host, 60), 0);
	ck_assert_str_eq(tu_slurp(in_dir("host.out")), "40\n");
	close(ls);
}
END_TEST

/* Count SNAPSHOTs from one agent while its subscriber sends a storm of
 * subscriptions. */
START_TEST(test_subscription_storm)
{
	void *ctx = zmq_ctx_new();
	void *x = zmq_socket(ctx, ZMQ_XSUB);
	int zero = 0, hwm = 0;
	zmq_setsockopt(x, ZMQ_LINGER, &zero, sizeof(zero));
	zmq_setsockopt(x, ZMQ_SNDHWM, &hwm, sizeof(hwm));
	ck_assert_int_eq(zmq_bind(x, "tcp://127.0.0.1:*"), 0);
	char ep[256];
	size_t el = sizeof(ep);
	zmq_getsockopt(x, ZMQ_LAST_ENDPOINT, ep, &el);
	pid_t host = tu_spawn((char *[]){ (char *)tu_env("IOGRAM_RUN"), "--endpoint", ep, "--", "bash", "-c",
		"for i in $(seq 60); do echo $i >> \"$1\"; sleep 0.05; done", "bash", in_dir("storm.txt"), NULL },
		NULL, NULL, 0);
	int snaps = 0, subs = 0, nsrc = 0, most = 0;
	struct { uint64_t id; int n; } per[256];
	double t0 = tu_now(), first = 0;
	uint8_t buf[65536];
	while (tu_now() - t0 < 2.5) {
		for (int k = 0; k < 200; k++, subs++)
			zmq_send(x, "\x01", 1, ZMQ_DONTWAIT);
		zmq_pollitem_t it = { x, 0, ZMQ_POLLIN, 0 };
		while (zmq_poll(&it, 1, 0) > 0) {
			int n = zmq_recv(x, buf, sizeof(buf), 0);
			int more = 0;
			size_t ml = sizeof(more);
			zmq_getsockopt(x, ZMQ_RCVMORE, &more, &ml);
			if (more && (n = zmq_recv(x, buf, sizeof(buf), 0)) > 0) {
				iogp_kind kind;
				uint16_t fl;
				uint64_t src, seq;
				if (iogp_msg_peek(buf, (size_t)(n < (int)sizeof(buf) ? n : (int)sizeof(buf)),
				                  &kind, &fl, &src, &seq) == 0 && kind == IOGP_SNAPSHOT) {
					if (!snaps)
						first = tu_now();
					snaps++;
					int i = 0;
					while (i < nsrc && per[i].id != src)
						i++;
					if (i == nsrc && nsrc < 256)
						{ per[nsrc].id = src; per[nsrc++].n = 0; }
					if (i < nsrc && ++per[i].n > most)
						most = per[i].n;
				}
			}
		}
		tu_sleep_ms(1);
	}
	double span = tu_now() - (first ? first : t0);
	fprintf(stderr, "storm: %d subscriptions sent, %d SNAPSHOTs from %d sources in %.2f s, "
	        "at most %d from one\n", subs, snaps, nsrc, span, most);
	ck_assert_msg(snaps >= 1, "no SNAPSHOT at all");
	/* per source: at most 4 a second for subscribers, plus the periodic one */
	ck_assert_msg(most <= (int)(span * 4) + 3, "%d SNAPSHOTs from one source in %.2f s", most, span);
	ck_assert_int_eq(tu_wait(host, 60), 0);
	zmq_close(x);
	zmq_ctx_term(ctx);
}
END_TEST

/* Sequence numbers per source seen by a subscriber: what it missed. */
typedef struct seq_track {
	struct { uint64_t id, last; } per[256];
	int nsrc;
	long got;
	uint64_t gaps;
} seq_track;

/* Receive one waiting message from sub into t; 0 when none is waiting. */
static int take_one(void *sub, uint8_t *buf, seq_track *t)
{
	char topic[256];
	if (zmq_recv(sub, topic, sizeof(topic), ZMQ_DONTWAIT) < 0)
		return 0;
	int n = zmq_recv(sub, buf, IOGP_MAX_PAYLOAD, 0);
	iogp_kind kind;
	uint16_t fl;
	uint64_t src, seq;
	if (n <= 0 || iogp_msg_peek(buf, (size_t)n, &kind, &fl, &src, &seq) != 0)
		return 1;
	t->got++;
	int i = 0;
	while (i < t->nsrc && t->per[i].id != src)
		i++;
	if (i == t->nsrc && t->nsrc < 256) {
		t->per[t->nsrc].id = src;
		t->per[t->nsrc++].last = seq;
	} else if (i < t->nsrc) {
		if (seq > t->per[i].last + 1)
			t->gaps += seq - t->per[i].last - 1;
		if (seq > t->per[i].last)
			t->per[i].last = seq;
	}
	return 1;
}

/* loadgen -> relay -> {a SUB that never reads, a healthy SUB}: the healthy
 * one gets every message (no gaps). */
START_TEST(test_stalled_subscriber)
{
	int lp, pp;
	char le[64], pe[64];
	pid_t relay = relay_start(&lp, le, &pp, pe);
	void *ctx = zmq_ctx_new();
	void *stalled = zmq_socket(ctx, ZMQ_SUB), *healthy = zmq_socket(ctx, ZMQ_SUB);
	int small = 10, big = 1000000, zero = 0;
	zmq_setsockopt(stalled, ZMQ_RCVHWM, &small, sizeof(small));
	zmq_setsockopt(stalled, ZMQ_RCVBUF, &(int){ 4096 }, sizeof(int));
	zmq_setsockopt(healthy, ZMQ_RCVHWM, &big, sizeof(big));
	zmq_setsockopt(stalled, ZMQ_LINGER, &zero, sizeof(zero));
	zmq_setsockopt(healthy, ZMQ_LINGER, &zero, sizeof(zero));
	zmq_setsockopt(stalled, ZMQ_SUBSCRIBE, "", 0);
	zmq_setsockopt(healthy, ZMQ_SUBSCRIBE, "", 0);
	ck_assert_int_eq(zmq_connect(stalled, pe), 0);
	ck_assert_int_eq(zmq_connect(healthy, pe), 0);
	tu_sleep_ms(300);
	/* past the relay's 100,000-message queue for the stalled one (240,000
	 * messages at 80,000/s: a pace the ASan build on a busy machine keeps) */
	pid_t gen = tu_spawn((char *[]){ (char *)tu_env("IOGRAM_BIN"), "loadgen", "--sources", "160", "--rate",
		"500", "--duration", "3", "--fast", "--endpoint", le, "--quiet", NULL }, NULL, NULL, 0);
	uint8_t *buf = malloc(IOGP_MAX_PAYLOAD);
	seq_track t = { .nsrc = 0 };
	double end = tu_now() + 30;
	int done = 0;
	while (tu_now() < end) {
		zmq_pollitem_t it = { healthy, 0, ZMQ_POLLIN, 0 };
		if (zmq_poll(&it, 1, 50) > 0) {
			/* drain what is there: a reader slower than the relay's queue for
			 * it (100,000) would lose messages of its own making */
			for (int k = 0; k < 100000 && take_one(healthy, buf, &t); k++)
				;
		} else if (done) {
			break;
		}
		if (!done && waitpid(gen, NULL, WNOHANG) == gen) {
			done = 1;
			end = tu_now() + 5;
		}
	}
	ck_assert_msg(done, "loadgen did not finish");
	fprintf(stderr, "stalled beside healthy: healthy received %ld messages from %d sources, %llu gaps\n",
	        t.got, t.nsrc, (unsigned long long)t.gaps);
	/* the old relay stopped everyone at the stalled queue: exactly 100,000 */
	ck_assert_msg(t.got > 105000, "healthy subscriber got only %ld messages", t.got);
	ck_assert_uint_eq(t.gaps, 0);
	free(buf);
	zmq_close(stalled);
	zmq_close(healthy);
	zmq_ctx_term(ctx);
	kill(relay, SIGINT);
	ck_assert_int_eq(tu_wait(relay, 20), 0);
}
END_TEST

/* ---- CURVE ------------------------------------------------------------------ */

static void keygen(const char *keydir)
{
	setenv("IOGRAM_KEYS", keydir, 1);
	ck_assert_int_eq(tu_run((char *[]){ (char *)tu_env("IOGRAM_BIN"), "keygen", NULL }, NULL, 30), 0);
}

/* A recorder at ep with keys keydir ("none": plain); returns its pid. */
static pid_t recorder(const char *keydir, const char *ep, const char *file)
{
	setenv("IOGRAM_KEYS", keydir, 1);
	pid_t p = tu_spawn((char *[]){ (char *)tu_env("IOGRAM_BIN"), "record", "--listen", (char *)ep, "-o",
	                               (char *)file, "--quiet", NULL }, NULL, in_dir("rec.err"), 0);
	/* listening before any agent starts (a fixed sleep was short for an
	 * ASan recorder setting up CURVE on a loaded machine) */
	const char *port = strrchr(ep, ':');
	ck_assert_msg(p > 0 && port && tu_wait_port(atoi(port + 1), 30), "recorder on %s not listening", ep);
	return p;
}

/* dd COUNT x 4 KiB under the agent with keys keydir; at exit it waits
 * wait_ms for its subscriber (the CURVE handshake and the subscription of
 * an accepted agent: 1000, as meson.build's; 300 where none may come). */
static void dd_as(const char *keydir, const char *ep, const char *count, const char *wait_ms)
{
	char of[500];
	setenv("IOGRAM_KEYS", keydir, 1);
	setenv("IOGRAM_EXIT_WAIT_MS", wait_ms, 1);
	snprintf(of, sizeof(of), "of=%s", in_dir("dd.out"));
	char cnt[32];
	snprintf(cnt, sizeof(cnt), "count=%s", count);
	ck_assert_int_eq(tu_run((char *[]){ (char *)tu_env("IOGRAM_RUN"), "--endpoint", (char *)ep, "--",
	                                    "dd", "if=/dev/zero", of, "bs=4096", cnt, NULL }, NULL, 60), 0);
}

static uint64_t writes_in(const char *file)
{
	iogp_model *m = iogp_model_new(NULL);
	iogp_load_stats st;
	char err[256] = "";
	ck_assert_msg(iogp_load_file(file, m, &st, err, sizeof(err)) >= 0, "%s", err);
	uint64_t w = 0;
	if (iogp_model_source_count(m) > 0)
		iogp_model_counter(m, "posix.write.ops", NULL, &w);
	iogp_model_free(m);
	return w;
}

START_TEST(test_curve)
{
	char k1[300], k2[300], ep[64];
	snprintf(k1, sizeof(k1), "%s/k1", dir);
	snprintf(k2, sizeof(k2), "%s/k2", dir);
	keygen(k1);
	keygen(k2);
	struct stat st;
	char kf[400];
	snprintf(kf, sizeof(kf), "%s/curve.key", k1);
	ck_assert_int_eq(stat(kf, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0600);
	/* never replaced without --force */
	setenv("IOGRAM_KEYS", k1, 1);
	ck_assert_int_eq(tu_run((char *[]){ (char *)tu_env("IOGRAM_BIN"), "keygen", NULL }, NULL, 30), 1);

	/* the owner's recorder: its own agent gets in exactly, a wrong key and
	 * no key get nothing in */
	snprintf(ep, sizeof(ep), "%s", tu_ep(tu_free_port()));
	pid_t r = recorder(k1, ep, in_dir("owner.iogr"));
	dd_as(k1, ep, "50", "1000");
	dd_as(k2, ep, "70", "300");
	dd_as("none", ep, "90", "300");
	/* a plain ZeroMQ peer injecting a message */
	void *ctx = zmq_ctx_new(), *pub = zmq_socket(ctx, ZMQ_PUB);
	int zero = 0;
	zmq_setsockopt(pub, ZMQ_LINGER, &zero, sizeof(zero));
	ck_assert_int_eq(zmq_connect(pub, ep), 0);
	tu_sleep_ms(300);
	zmq_send(pub, "iog1/x", 6, ZMQ_SNDMORE);
	zmq_send(pub, "junk", 4, 0);
	tu_sleep_ms(300);
	zmq_close(pub);
	zmq_ctx_term(ctx);
	kill(r, SIGINT);
	ck_assert_int_eq(tu_wait(r, 20), 0);
	ck_assert_uint_eq(writes_in(in_dir("owner.iogr")), 50);

	/* squatters on the port the owner's agents use: plain, and CURVE with
	 * another key. Neither receives anything. */
	const char *squat[2] = { "none", k2 };
	for (int i = 0; i < 2; i++) {
		char file[64];
		snprintf(file, sizeof(file), "squat%d.iogr", i);
		snprintf(ep, sizeof(ep), "%s", tu_ep(tu_free_port()));
		pid_t sq = recorder(squat[i], ep, in_dir(file));
		dd_as(k1, ep, "30", "300");
		tu_sleep_ms(200);
		kill(sq, SIGINT);
		ck_assert_int_eq(tu_wait(sq, 20), 0);
		ck_assert_msg(writes_in(in_dir(file)) == 0, "squatter %d received the owner's stream", i);
	}
	unsetenv("IOGRAM_KEYS");
	unsetenv("IOGRAM_EXIT_WAIT_MS");
}
END_TEST

int main(void)
{
	const tu_case cases[] = {
		{ "oversize_recorder", test_oversize_recorder }, { "oversize_relay", test_oversize_relay },
		{ "oversize_agent", test_oversize_agent }, { "subscription_storm", test_subscription_storm },
		{ "stalled_subscriber", test_stalled_subscriber }, { "curve", test_curve },
	};
	return tu_run_suite("hostile", cases, sizeof(cases) / sizeof(cases[0]), setup, teardown, 120);
}
