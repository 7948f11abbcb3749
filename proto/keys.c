/* keys.c - the user's CURVE key pair (iogp_keys.h): where it lives, reading
 * it strictly, writing a new one, and the ZeroMQ options and ZAP handler
 * that make every iogram socket use it. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include "iogp_keys.h"

#define ZAP_EP "inproc://zeromq.zap.01"

static void seterr(char *err, size_t len, const char *fmt, const char *a, const char *b)
{
	if (err && len)
		snprintf(err, len, fmt, a, b);
}

int iogp_keys_path(char *buf, size_t len)
{
	const char *d = getenv("IOGRAM_KEYS"), *x = getenv("XDG_CONFIG_HOME"), *h = getenv("HOME");
	int n;

	if (d && !strcmp(d, "none"))
		return -1;
	if (d && *d)
		n = snprintf(buf, len, "%s/curve.key", d);
	else if (x && x[0] == '/')
		n = snprintf(buf, len, "%s/iogram/curve.key", x);
	else if (h && h[0] == '/')
		n = snprintf(buf, len, "%s/.config/iogram/curve.key", h);
	else
		return -1;
	return n > 0 && (size_t)n < len ? 0 : -1;
}

/* The line "\nNAME = KEY" (Z85 has '=' and '#' in its alphabet: exact). */
static int field(const char *text, const char *name, char out[41])
{
	char pre[32];
	snprintf(pre, sizeof(pre), "\n%s = ", name);
	const char *p = strstr(text, pre);
	if (p == NULL)
		return -1;
	p += strlen(pre);
	size_t n = strcspn(p, "\r\n");
	if (n != 40)
		return -1;
	memcpy(out, p, 40);
	out[40] = '\0';
	uint8_t bin[32];
	return zmq_z85_decode(bin, out) ? 0 : -1;
}

int iogp_keys_load(iogp_keys *k, char *err, size_t errlen)
{
	struct stat st;
	char text[512];

	memset(k, 0, sizeof(*k));
	if (iogp_keys_path(k->path, sizeof(k->path)) < 0)
		return 0;
	int fd = open(k->path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		seterr(err, errlen, "cannot read the key %s: %s", k->path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077)) {
		close(fd);
		seterr(err, errlen, "%s%s", k->path,
		       ": refused (must be a regular file of yours, mode 0600; iogram keygen --force writes a new one)");
		return -1;
	}
	ssize_t n = read(fd, text, sizeof(text) - 1);
	close(fd);
	text[n > 0 ? n : 0] = '\0';
	if (n <= 0 || field(text, "public", k->pub) < 0 || field(text, "secret", k->sec) < 0) {
		seterr(err, errlen, "%s%s", k->path, ": not an iogram key file (iogram keygen --force writes one)");
		return -1;
	}
	k->present = 1;
	return 0;
}

static int mkdirs(char *path)
{
	/* every directory above the file, created 0700 */
	for (char *s = strchr(path + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		int rc = mkdir(path, 0700);
		*s = '/';
		if (rc < 0 && errno != EEXIST)
			return -1;
	}
	return 0;
}

int iogp_keys_generate(int force, iogp_keys *k, char *err, size_t errlen)
{
	char text[256];

	memset(k, 0, sizeof(*k));
	if (iogp_keys_path(k->path, sizeof(k->path)) < 0) {
		seterr(err, errlen, "%s%s", "no place for the key: set HOME, XDG_CONFIG_HOME or IOGRAM_KEYS", "");
		return -1;
	}
	if (zmq_curve_keypair(k->pub, k->sec) != 0) {
		seterr(err, errlen, "%s%s", "this ZeroMQ has no CURVE support", "");
		return -1;
	}
	if (mkdirs(k->path) < 0) {
		seterr(err, errlen, "cannot create the directory of %s: %s", k->path, strerror(errno));
		return -1;
	}
	if (force)
		unlink(k->path);
	int fd = open(k->path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		seterr(err, errlen, errno == EEXIST ? "%s exists (use --force to replace it)%s" :
		       "cannot create %s: %s", k->path, errno == EEXIST ? "" : strerror(errno));
		return -1;
	}
	int n = snprintf(text, sizeof(text),
	                 "# iogram CURVE key pair: keep it secret (mode 0600)\npublic = %s\nsecret = %s\n",
	                 k->pub, k->sec);
	int ok = write(fd, text, (size_t)n) == n;
	if (close(fd) < 0 || !ok) {
		unlink(k->path);
		seterr(err, errlen, "cannot write %s: %s", k->path, strerror(errno));
		return -1;
	}
	k->present = 1;
	return 0;
}

/* ---- ZAP: only our own public key gets in -------------------------------- */

struct zap {
	void *rep;
	uint8_t allow[32];
};

static void *zap_main(void *arg)
{
	struct zap *z = arg;
	for (;;) {
		zmq_msg_t f[7];
		int n = 0, more = 1;
		while (more && n < 7) {
			zmq_msg_init(&f[n]);
			if (zmq_msg_recv(&f[n], z->rep, 0) < 0) {
				zmq_msg_close(&f[n]);
				goto out;   /* the context ends */
			}
			more = zmq_msg_more(&f[n]);
			n++;
		}
		while (more) {   /* more frames than a ZAP request has: drain */
			zmq_msg_t x;
			zmq_msg_init(&x);
			if (zmq_msg_recv(&x, z->rep, 0) < 0) {
				zmq_msg_close(&x);
				break;
			}
			more = zmq_msg_more(&x);
			zmq_msg_close(&x);
		}
		/* version, request id, domain, address, identity, mechanism, key */
		int ok = n == 7 && zmq_msg_size(&f[5]) == 5 && !memcmp(zmq_msg_data(&f[5]), "CURVE", 5) &&
		         zmq_msg_size(&f[6]) == 32 && !memcmp(zmq_msg_data(&f[6]), z->allow, 32);
		zmq_send(z->rep, "1.0", 3, ZMQ_SNDMORE);
		zmq_send(z->rep, n >= 2 ? zmq_msg_data(&f[1]) : "", n >= 2 ? zmq_msg_size(&f[1]) : 0, ZMQ_SNDMORE);
		zmq_send(z->rep, ok ? "200" : "400", 3, ZMQ_SNDMORE);
		zmq_send(z->rep, ok ? "OK" : "not this user's key", ok ? 2 : 19, ZMQ_SNDMORE);
		zmq_send(z->rep, "", 0, ZMQ_SNDMORE);
		zmq_send(z->rep, "", 0, 0);
		for (int i = 0; i < n; i++)
			zmq_msg_close(&f[i]);
	}
out:
	zmq_close(z->rep);
	free(z);
	return NULL;
}

/* One handler per context: the endpoint already bound means it runs. */
static int zap_start(void *ctx, const iogp_keys *k)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	int rc = 0;

	pthread_mutex_lock(&lock);
	struct zap *z = calloc(1, sizeof(*z));
	int zero = 0;
	if (z == NULL || (z->rep = zmq_socket(ctx, ZMQ_REP)) == NULL ||
	    zmq_setsockopt(z->rep, ZMQ_LINGER, &zero, sizeof(zero)) < 0 || zmq_bind(z->rep, ZAP_EP) < 0) {
		int inuse = zmq_errno() == EADDRINUSE;
		if (z && z->rep)
			zmq_close(z->rep);
		free(z);
		rc = inuse ? 0 : -1;
		goto done;
	}
	zmq_z85_decode(z->allow, k->pub);
	pthread_t t;
	if (pthread_create(&t, NULL, zap_main, z) != 0) {
		zmq_close(z->rep);
		free(z);
		rc = -1;
		goto done;
	}
	pthread_detach(t);
done:
	pthread_mutex_unlock(&lock);
	return rc;
}

int iogp_keys_server(void *ctx, void *sock, const iogp_keys *k)
{
	int one = 1;
	if (!k->present)
		return 0;
	if (zap_start(ctx, k) < 0)
		return -1;
	/* the handler is bound before the socket: every CURVE handshake asks it */
	return zmq_setsockopt(sock, ZMQ_ZAP_DOMAIN, "iogram", 6) < 0 ||
	       zmq_setsockopt(sock, ZMQ_CURVE_SERVER, &one, sizeof(one)) < 0 ||
	       zmq_setsockopt(sock, ZMQ_CURVE_SECRETKEY, k->sec, 40) < 0 ? -1 : 0;
}

int iogp_keys_client(void *sock, const iogp_keys *k)
{
	int zero = 0;
	if (!k->present)
		return 0;
	return zmq_setsockopt(sock, ZMQ_CURVE_SERVER, &zero, sizeof(zero)) < 0 ||
	       zmq_setsockopt(sock, ZMQ_CURVE_SERVERKEY, k->pub, 40) < 0 ||
	       zmq_setsockopt(sock, ZMQ_CURVE_PUBLICKEY, k->pub, 40) < 0 ||
	       zmq_setsockopt(sock, ZMQ_CURVE_SECRETKEY, k->sec, 40) < 0 ? -1 : 0;
}
