/* posix_env.c - children that drop the environment stay sources. A program
 * that starts a child with an environment of its own (execve, execvpe,
 * fexecve, execveat, posix_spawn and posix_spawnp with an explicit envp;
 * execv/execvp after clearenv; `env -i CMD`, which calls execvp with an empty
 * environ) would leave it without LD_PRELOAD and the IOGRAM_* settings: it
 * would silently not be counted. The exec wrappers (posix.c) and the spawn
 * wrappers here give the child a new array instead, the caller's entries
 * first and unchanged, then what is missing:
 *  - LD_PRELOAD: our entry (as it was written in the LD_PRELOAD we were
 *    started with) when the variable is absent or empty; put first in an
 *    LD_PRELOAD that lacks it (an entry of the same file name counts as ours);
 *  - every IOGRAM_* variable we were started with that the child's
 *    environment does not set (one it sets, IOGRAM_DISABLE=1 say, wins).
 * Not done when we were not preloaded (linked in), when IOGRAM_INHERIT=0 was
 * in our environment or is in the child's, nor for a set-user-ID or
 * set-group-ID target (left exactly as the caller made it). The caller's
 * array is never written; the new one is on the caller's stack (up to
 * IOG_ENV_STACK bytes) or, larger, in a private mapping (not in a vfork
 * child: there the environment is left as it is) unmapped when the call
 * returns. No malloc, no lock: a vfork child may call these. errno and the
 * results are the real calls'. */
#undef _FORTIFY_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "posix.h"

extern char **environ;

#define IOG_ENV_MAX_VARS 64

static struct {
	int on;
	const char *self;       /* our LD_PRELOAD entry */
	size_t self_len;
	const char *base;       /* its file name */
	size_t base_len;
	int nvars;
	const char *var[IOG_ENV_MAX_VARS];   /* "IOGRAM_NAME=value" */
	size_t name_len[IOG_ENV_MAX_VARS];   /* "IOGRAM_NAME=" */
} env;

#define IOG_ENV_REALS(X) \
	X(posix_spawn, int, (pid_t *, const char *, const posix_spawn_file_actions_t *, \
	                     const posix_spawnattr_t *, char *const[], char *const[])) \
	X(posix_spawnp, int, (pid_t *, const char *, const posix_spawn_file_actions_t *, \
	                      const posix_spawnattr_t *, char *const[], char *const[]))

IOG_ENV_REALS(IOG_REAL_GETTER)

static int is_sep(char c)
{
	return c == ':' || c == ' ';
}

/* The entry of an LD_PRELOAD value that names our library (by its file
 * name), its length in *len; NULL if none does. */
static const char *find_us(const char *v, size_t *len)
{
	while (*v) {
		while (is_sep(*v))
			v++;
		const char *t = v;
		while (*v && !is_sep(*v))
			v++;
		size_t n = (size_t)(v - t), b = env.base_len;
		if (n >= b && memcmp(v - b, env.base, b) == 0 && (n == b || v[-(ptrdiff_t)b - 1] == '/')) {
			*len = n;
			return t;
		}
	}
	return NULL;
}

static int names_us(const char *v)
{
	size_t n;
	return find_us(v, &n) != NULL;
}

void iog__posix_env_init(void)
{
#define X(n, ret, args) (void)get_##n();
	IOG_ENV_REALS(X)
#undef X
	const char *inherit = getenv("IOGRAM_INHERIT");
	if (inherit && strcmp(inherit, "0") == 0)
		return;
	Dl_info di;
	if (dladdr((void *)iog__posix_env_init, &di) == 0 || di.dli_fname == NULL)
		return;
	const char *b = strrchr(di.dli_fname, '/');
	env.base = b ? b + 1 : di.dli_fname;
	env.base_len = strlen(env.base);
	/* our entry in the LD_PRELOAD we were started with: not there, we were
	 * linked in, and children are not ours to instrument */
	const char *pre = getenv("LD_PRELOAD");
	if (pre == NULL || env.base_len == 0)
		return;
	size_t n;
	const char *t = find_us(pre, &n);
	char *self = t ? strndup(t, n) : NULL;
	if (self == NULL)
		return;
	env.self = self;
	env.self_len = n;
	for (char **e = environ; e && *e && env.nvars < IOG_ENV_MAX_VARS; e++) {
		const char *eq = strchr(*e, '=');
		if (strncmp(*e, "IOGRAM_", 7) != 0 || eq == NULL)
			continue;
		char *s = strdup(*e);
		if (s == NULL)
			return;
		env.var[env.nvars] = s;
		env.name_len[env.nvars] = (size_t)(eq - *e) + 1;
		env.nvars++;
	}
	env.on = 1;
}

/* One pass over envp: with out == NULL it sizes the new array (0: envp
 * needs nothing); else it builds it in out (need bytes). */
static size_t env_pass(char *const envp[], char **out, size_t need)
{
	uint64_t present = 0;
	size_t n = 0, fix = 0, o = 0;
	int seen_pre = 0;
	char *str = out ? (char *)out + need : NULL;   /* strings from the end down */
	for (char *const *e = envp; e && *e; e++, n++) {
		const char *s = *e;
		if (s[0] == 'I' && strncmp(s, "IOGRAM_", 7) == 0) {
			if (strcmp(s, "IOGRAM_INHERIT=0") == 0)
				return 0;
			for (int i = 0; i < env.nvars; i++)
				if (strncmp(s, env.var[i], env.name_len[i]) == 0)
					present |= 1ull << i;
		} else if (s[0] == 'L' && strncmp(s, "LD_PRELOAD=", 11) == 0) {
			seen_pre = 1;
			if (!names_us(s + 11)) {
				/* LD_PRELOAD=ours[:theirs] */
				size_t l = strlen(s + 11), len = 11 + env.self_len + (l ? 1 + l : 0) + 1;
				fix += len;
				if (out) {
					str -= len;
					memcpy(str, "LD_PRELOAD=", 11);
					memcpy(str + 11, env.self, env.self_len);
					if (l) {
						str[11 + env.self_len] = ':';
						memcpy(str + 12 + env.self_len, s + 11, l);
					}
					str[len - 1] = '\0';
					out[o++] = str;
					continue;
				}
			}
		}
		if (out)
			out[o++] = (char *)s;
	}
	int missing = 0;
	for (int i = 0; i < env.nvars; i++)
		if (!(present & (1ull << i))) {
			missing++;
			if (out)
				out[o++] = (char *)env.var[i];
		}
	size_t add = seen_pre ? 0 : 11 + env.self_len + 1;
	if (!seen_pre && out) {
		str -= add;
		memcpy(str, "LD_PRELOAD=", 11);
		memcpy(str + 11, env.self, env.self_len + 1);
		out[o++] = str;
	}
	if (fix == 0 && missing == 0 && seen_pre)
		return 0;
	if (out)
		out[o] = NULL;
	return (n + (size_t)missing + !seen_pre + 1) * sizeof(char *) + fix + add;
}

size_t iog__env_need(char *const envp[])
{
	if (LIKELY(!env.on))
		return 0;
	return env_pass(envp, NULL, 0);
}

char **iog__env_fill(char *const envp[], void *buf, size_t need)
{
	/* another thread may have changed envp since it was sized: then it
	 * goes as it is */
	if (env_pass(envp, NULL, 0) != need)
		return (char **)envp;
	env_pass(envp, buf, need);
	return buf;
}

void *iog__env_map(size_t need)
{
	long p = syscall(SYS_mmap, NULL, need, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0L);
	return p < 0 && p > -4096 ? NULL : (void *)p;
}

void iog__env_unmap(void *p, size_t need)
{
	if (p) {
		int e = errno;
		syscall(SYS_munmap, p, need);
		errno = e;
	}
}

/* ---- set-id targets: their environment is the caller's ---- */

static int setid_mode(const struct stat *st)
{
	return S_ISREG(st->st_mode) && ((st->st_mode & S_ISUID) ||
	       (st->st_mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP));
}

int iog__env_setid(int dirfd, const char *path, int flags)
{
	int e = errno;
	struct stat st;
	int r = path && syscall(SYS_newfstatat, dirfd, path, &st,
	                        flags & (AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW)) == 0 && setid_mode(&st);
	errno = e;
	return r;
}

int iog__env_setid_fd(int fd)
{
	int e = errno;
	struct stat st;
	int r = syscall(SYS_fstat, fd, &st) == 0 && setid_mode(&st);
	errno = e;
	return r;
}

/* file as execvp and posix_spawnp find it: on our PATH unless it has a slash. */
int iog__env_setid_search(const char *file)
{
	if (file == NULL || file[0] == '\0')
		return 0;
	if (strchr(file, '/'))
		return iog__env_setid(AT_FDCWD, file, 0);
	const char *path = getenv("PATH");
	if (path == NULL)
		path = "/bin:/usr/bin";
	size_t fl = strlen(file);
	int e = errno;
	int r = 0;
	for (const char *p = path;; ) {
		const char *colon = strchr(p, ':');
		size_t n = colon ? (size_t)(colon - p) : strlen(p);
		char cand[PATH_MAX];
		struct stat st;
		if (n + 1 + fl < sizeof(cand)) {
			memcpy(cand, p, n);
			size_t k = n;
			if (n)
				cand[k++] = '/';
			memcpy(cand + k, file, fl + 1);
			if (syscall(SYS_newfstatat, AT_FDCWD, cand, &st, 0) == 0 && S_ISREG(st.st_mode) &&
			    syscall(SYS_faccessat, AT_FDCWD, cand, X_OK) == 0) {
				r = setid_mode(&st);
				break;
			}
		}
		if (!colon)
			break;
		p = colon + 1;
	}
	errno = e;
	return r;
}

/* ---- posix_spawn ---- */

EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
                       const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	posix_spawn_fn f = get_posix_spawn();
	if (!f)
		return ENOSYS;
	IOG_CHILD_ENV(ce, envp, iog__env_setid(AT_FDCWD, path, 0), 1);
	int r = f(pid, path, fa, attr, argv, ce);
	IOG_CHILD_ENV_DONE(ce);
	return r;
}

EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
                        const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	posix_spawnp_fn f = get_posix_spawnp();
	if (!f)
		return ENOSYS;
	IOG_CHILD_ENV(ce, envp, iog__env_setid_search(file), 1);
	int r = f(pid, file, fa, attr, argv, ce);
	IOG_CHILD_ENV_DONE(ce);
	return r;
}
