/* spool.c - final messages that missed their exit budget wait here for
 * another agent of the same user to send them. The directory is the user's
 * own (created 0700, refused unless owned by us and not a link); files are
 * written 0600 under a temporary name and renamed in whole, and claimed by
 * rename before they are read, so each is sent once. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"

static int dir_ok(const char *dir, int create)
{
	struct stat st;

	if (dir[0] != '/')
		return -1;
	if (lstat(dir, &st) < 0) {
		if (!create || errno != ENOENT || mkdir(dir, 0700) < 0 || lstat(dir, &st) < 0)
			return -1;
	}
	/* someone else's directory, or a link to one, is never written or read */
	if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077))
		return -1;
	return 0;
}

static int write_all(int fd, const uint8_t *b, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, b, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

static int count_files(const char *dir)
{
	DIR *d = opendir(dir);
	int n = 0;

	if (d == NULL)
		return -1;
	for (struct dirent *de; n <= IOG_SPOOL_MAX_FILES && (de = readdir(d)) != NULL;)
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

int iog__spool_write(const char *dir, uint64_t source, const uint8_t *buf, size_t len)
{
	char tmp[1200], fin[1200];

	if (dir[0] == '\0' || len == 0 || len > IOG_SPOOL_MAX_FILE || dir_ok(dir, 1) < 0)
		return -1;
	/* bounded: a spool nobody drains stops growing */
	if (count_files(dir) >= IOG_SPOOL_MAX_FILES)
		return -1;
	snprintf(tmp, sizeof(tmp), "%s/.%016llx.%ld.tmp", dir, (unsigned long long)source, (long)getpid());
	snprintf(fin, sizeof(fin), "%s/%016llx.%ld.iogs", dir, (unsigned long long)source, (long)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	int rc = write_all(fd, buf, len);
	if (close(fd) < 0)
		rc = -1;
	if (rc == 0 && rename(tmp, fin) == 0)
		return 0;
	unlink(tmp);
	return -1;
}

/* One claimed file: read it whole (bounded), pass each message on. */
static int drain_file(const char *path, iog__spool_fn fn, void *arg)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), n = 0;

	if (fd < 0)
		return 0;
	uint8_t *b = NULL;
	/* finals older than IOG_SPOOL_MAX_AGE_S belong to nobody listening now */
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == getuid() &&
	    st.st_size > 0 && (uint64_t)st.st_size <= IOG_SPOOL_MAX_FILE &&
	    time(NULL) - st.st_mtime <= IOG_SPOOL_MAX_AGE_S)
		b = malloc((size_t)st.st_size);
	size_t len = 0;
	while (b != NULL && len < (size_t)st.st_size) {
		ssize_t r = read(fd, b + len, (size_t)st.st_size - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	for (size_t o = 0; b != NULL && o + 4 <= len;) {
		uint32_t l;
		memcpy(&l, b + o, 4);
		o += 4;
		if (l == 0 || l > len - o || l > IOGP_MAX_PAYLOAD)
			break;   /* damaged: what came before was sent, the rest is dropped */
		fn(b + o, l, arg);
		n++;
		o += l;
	}
	free(b);
	return n;
}

int iog__spool_drain(const char *dir, int max_files, iog__spool_fn fn, void *arg)
{
	char from[1200], claim[1200];
	int sent = 0, files = 0;

	if (dir[0] == '\0' || dir_ok(dir, 0) < 0)
		return 0;
	DIR *d = opendir(dir);
	if (d == NULL)
		return 0;
	for (struct dirent *de; files < max_files && (de = readdir(d)) != NULL;) {
		size_t nl = strlen(de->d_name);
		if (de->d_name[0] == '.' || nl < 6 || strcmp(de->d_name + nl - 5, ".iogs") != 0)
			continue;
		snprintf(from, sizeof(from), "%s/%s", dir, de->d_name);
		snprintf(claim, sizeof(claim), "%s/.%s.%ld.claim", dir, de->d_name, (long)getpid());
		if (rename(from, claim) < 0)
			continue;   /* another agent took it */
		sent += drain_file(claim, fn, arg);
		unlink(claim);
		files++;
	}
	closedir(d);
	return sent;
}
