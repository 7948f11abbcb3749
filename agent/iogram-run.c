/* iogram-run.c - run a command with the iogram POSIX interposer preloaded. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#ifndef IOGRAM_LIBDIR
#define IOGRAM_LIBDIR "/usr/local/lib"
#endif
#ifndef IOGRAM_VERSION
#define IOGRAM_VERSION "0"
#endif

#define PRELOAD_NAME "libiogram-posix.so"
#define PRELOAD_MPI_NAME "libiogram-mpi.so"

static void usage(FILE *out)
{
	fprintf(out,
	"usage: iogram-run [OPTIONS] [--] COMMAND [ARGS...]\n"
	"\n"
	"Run COMMAND with the iogram interposer preloaded: its POSIX and stdio I/O\n"
	"(request sizes, latency, queue depth, access pattern) is counted in the\n"
	"process and streamed live over ZeroMQ and/or recorded to a replay file.\n"
	"Child processes and exec'd programs are instrumented too (each is a source).\n"
	"\n"
	"options:\n"
	"  -e, --endpoint E    ZeroMQ endpoint to connect to (IOGRAM_ENDPOINT;\n"
	"                      default: the loopback endpoint viewers listen on;\n"
	"                      \"none\": no live stream)\n"
	"  -o, --output FILE   also record to FILE (.iogr; %%p = pid, %%h = host)\n"
	"  -i, --interval MS   send interval in milliseconds (default 1000, min 10)\n"
	"  -n, --node NAME     node label (default: the host name)\n"
	"  -d, --disable       preload the interposer but count nothing\n"
	"      --all-files     count pipes, FIFOs, character devices and files under\n"
	"                      /proc, /sys and /dev as storage too (IOGRAM_ALL_FILES=1)\n"
	"      --mpi           also preload the MPI layer (libiogram-mpi.so: MPI-IO,\n"
	"                      messages by destination, collectives); the same as\n"
	"                      IOGRAM_LAYERS=posix,mpi\n"
	"  -h, --help          show this help\n"
	"  -V, --version       show the version\n"
	"\n"
	"The exit status is COMMAND's; 126 if it is found but cannot be run, 127 if\n"
	"it is not found, 2 on a usage error.\n"
	"A statically linked or set-id COMMAND, which the loader does not preload\n"
	"into, is run all the same, with a warning on stderr.\n"
	"The library is looked up next to iogram-run, then in " IOGRAM_LIBDIR ",\n"
	"then at $IOGRAM_PRELOAD ($IOGRAM_PRELOAD_MPI for the MPI layer). They are\n"
	"prepended to any existing LD_PRELOAD.\n"
	"\n"
	"EXAMPLES\n"
	"  iogram-run -- dd if=/dev/zero of=/tmp/x bs=1M count=100\n"
	"  iogram-run --output run-%%p.iogr --interval 200 -- ./app input.dat\n"
	"  mpirun -np 64 iogram-run --endpoint tcp://login1:7461 -- ./solver\n"
	"  mpirun -np 64 iogram-run --mpi -o job-%%h-%%p.iogr -- ./solver\n"
	"  srun iogram-run -o job-%%h-%%p.iogr -- ./app\n");
}

static int is_file(const char *path)
{
	return path && path[0] && access(path, R_OK) == 0;
}

/* Absolute path of the library name (next to us, in the libdir, at $env), or NULL. */
static char *find_lib(const char *argv0, const char *name, const char *envname, char *path)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0 && argv0 && realpath(argv0, self))
		n = (ssize_t)strlen(self);
	if (n > 0) {
		self[n] = '\0';
		char *slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			snprintf(path, PATH_MAX + 64, "%s/%s", self, name);
			if (is_file(path))
				return path;
		}
	}
	snprintf(path, PATH_MAX + 64, "%s/%s", IOGRAM_LIBDIR, name);
	if (is_file(path))
		return path;
	const char *env = getenv(envname);
	if (is_file(env)) {
		if (env[0] == '/')
			return (char *)env;
		if (realpath(env, path))
			return path;
	}
	return NULL;
}

static int set_env(const char *name, const char *value)
{
	if (setenv(name, value, 1) != 0) {
		fprintf(stderr, "iogram-run: setenv %s: %s\n", name, strerror(errno));
		return -1;
	}
	return 0;
}

/* ---- programs the interposer cannot reach -------------------------------- */

/* COMMAND as execvp will find it: itself when it has a slash, else the first
 * executable regular file of that name on PATH (execvp's default path when
 * PATH is unset). 0, or -1 when there is none (execvp reports it). */
static int resolve(const char *cmd, char *out, size_t len)
{
	if (strchr(cmd, '/')) {
		if (strlen(cmd) >= len)
			return -1;
		strcpy(out, cmd);
		return 0;
	}
	const char *path = getenv("PATH");
	if (path == NULL)
		path = "/bin:/usr/bin";
	for (const char *p = path;; ) {
		const char *colon = strchr(p, ':');
		size_t n = colon ? (size_t)(colon - p) : strlen(p);
		struct stat st;
		/* an empty entry is the current directory */
		if ((size_t)snprintf(out, len, "%.*s%s%s", (int)n, p, n ? "/" : "", cmd) < len &&
		    stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0)
			return 0;
		if (!colon)
			return -1;
		p = colon + 1;
	}
}

/* 1 when path is an ELF executable without a program interpreter (static,
 * or static-pie): the dynamic loader, and so LD_PRELOAD, never runs. A
 * script (#!) is judged by its interpreter (then copied into interp, when
 * not NULL), once. 0 otherwise, or when it cannot be read. */
static int is_static(const char *path, char *interp, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	unsigned char h[256];
	ssize_t n = pread(fd, h, sizeof(h) - 1, 0);
	int r = 0;
	if (n >= 2 && h[0] == '#' && h[1] == '!') {
		h[n] = '\0';
		char *p = (char *)h + 2;
		p += strspn(p, " \t");
		p[strcspn(p, " \t\r\n")] = '\0';
		r = interp && p[0] == '/' && is_static(p, NULL, 0);
		if (r)
			snprintf(interp, len, "%s", p);
	} else if (n >= (ssize_t)sizeof(Elf64_Ehdr) && memcmp(h, ELFMAG, SELFMAG) == 0) {
		/* program headers as the kernel reads them: ours are native-endian */
		uint64_t phoff;
		unsigned phnum, phentsize, type;
		if (h[EI_CLASS] == ELFCLASS64) {
			Elf64_Ehdr e;
			memcpy(&e, h, sizeof(e));
			phoff = e.e_phoff, phnum = e.e_phnum, phentsize = e.e_phentsize, type = e.e_type;
		} else if (h[EI_CLASS] == ELFCLASS32) {
			Elf32_Ehdr e;
			memcpy(&e, h, sizeof(e));
			phoff = e.e_phoff, phnum = e.e_phnum, phentsize = e.e_phentsize, type = e.e_type;
		} else {
			goto out;
		}
		if ((type != ET_EXEC && type != ET_DYN) || phentsize < sizeof(uint32_t) || phnum == 0 ||
		    phnum > 4096)
			goto out;
		r = 1;
		for (unsigned i = 0; i < phnum; i++) {
			uint32_t pt;
			if (pread(fd, &pt, sizeof(pt), (off_t)(phoff + (uint64_t)i * phentsize)) != sizeof(pt)) {
				r = 0;   /* unreadable: the kernel will say so */
				break;
			}
			if (pt == PT_INTERP) {
				r = 0;
				break;
			}
		}
	}
out:
	close(fd);
	return r;
}

/* Why the loader will run path in secure-execution mode (AT_SECURE: it then
 * drops LD_PRELOAD), or NULL: a set-user-ID or set-group-ID program whose
 * owner or group is not ours, or one with file capabilities run by another
 * user than root, unless the bits are ignored (a nosuid mount, no_new_privs). */
static const char *secure_exec(const char *path)
{
	struct stat st;
	struct statvfs fs;
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return NULL;
	if ((statvfs(path, &fs) == 0 && (fs.f_flag & ST_NOSUID)) || prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1)
		return NULL;
	if ((st.st_mode & S_ISUID) && st.st_uid != getuid())
		return "setuid";
	if ((st.st_mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP) && st.st_gid != getgid())
		return "setgid";
	if (getuid() != 0 && getxattr(path, "security.capability", NULL, 0) > 0)
		return "given file capabilities";
	return NULL;
}

/* Not a silent miss: say when COMMAND's own I/O cannot be counted. */
static void warn_unreachable(const char *cmd)
{
	char path[PATH_MAX], interp[256] = "";
	if (resolve(cmd, path, sizeof(path)) != 0)
		return;
	const char *why = secure_exec(path);
	if (why)
		fprintf(stderr, "iogram-run: %s is %s: the loader ignores LD_PRELOAD for it; its I/O "
		        "cannot be counted\n", cmd, why);
	else if (is_static(path, interp, sizeof(interp)))
		fprintf(stderr, "iogram-run: %s%s%s is statically linked: its I/O cannot be counted "
		        "(dynamic programs it starts are)\n", cmd, interp[0] ? ": its interpreter " : "", interp);
}

static int parse_interval(const char *s, unsigned long *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v == 0 || v > 3600000)
		return -1;
	*out = v;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "endpoint", required_argument, NULL, 'e' },
		{ "output", required_argument, NULL, 'o' },
		{ "interval", required_argument, NULL, 'i' },
		{ "node", required_argument, NULL, 'n' },
		{ "disable", no_argument, NULL, 'd' },
		{ "all-files", no_argument, NULL, 'A' },
		{ "mpi", no_argument, NULL, 'M' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *endpoint = NULL, *output = NULL, *interval = NULL, *node = NULL;
	int disable = 0, all_files = 0, mpi = 0, c;
	unsigned long iv;

	/* "+": stop at the first non-option, so COMMAND's own flags are its. */
	while ((c = getopt_long(argc, argv, "+e:o:i:n:dhV", opts, NULL)) != -1) {
		switch (c) {
		case 'e': endpoint = optarg; break;
		case 'o': output = optarg; break;
		case 'i':
			if (parse_interval(optarg, &iv) != 0) {
				fprintf(stderr, "iogram-run: bad --interval '%s' (milliseconds, 1..3600000)\n", optarg);
				return 2;
			}
			interval = optarg;
			break;
		case 'n': node = optarg; break;
		case 'd': disable = 1; break;
		case 'A': all_files = 1; break;
		case 'M': mpi = 1; break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("iogram-run %s\n", IOGRAM_VERSION); return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "iogram-run: no command given\n");
		usage(stderr);
		return 2;
	}
	if (node && !node[0]) {
		fprintf(stderr, "iogram-run: empty --node\n");
		return 2;
	}

	/* IOGRAM_LAYERS: posix (always: the base layer) and mpi, comma-separated */
	const char *layers = getenv("IOGRAM_LAYERS");
	if (layers && strstr(layers, "mpi"))
		mpi = 1;
	static char libpath[PATH_MAX + 64], mpipath[PATH_MAX + 64];
	const char *lib = find_lib(argv[0], PRELOAD_NAME, "IOGRAM_PRELOAD", libpath);
	const char *mpilib = mpi ? find_lib(argv[0], PRELOAD_MPI_NAME, "IOGRAM_PRELOAD_MPI", mpipath) : "";
	if (!lib || !mpilib) {
		fprintf(stderr, "iogram-run: cannot find %s (looked next to iogram-run, in %s and "
		        "at $%s)\n", lib ? PRELOAD_MPI_NAME : PRELOAD_NAME, IOGRAM_LIBDIR,
		        lib ? "IOGRAM_PRELOAD_MPI" : "IOGRAM_PRELOAD");
		return 127;
	}
	const char *old = getenv("LD_PRELOAD");
	size_t len = strlen(lib) + strlen(mpilib) + (old ? strlen(old) : 0) + 3;
	char *preload = malloc(len);
	if (!preload) {
		fprintf(stderr, "iogram-run: out of memory\n");
		return 127;
	}
	snprintf(preload, len, "%s%s%s%s%s", lib, *mpilib ? ":" : "", mpilib,
	         old && old[0] ? ":" : "", old && old[0] ? old : "");

	if (set_env("LD_PRELOAD", preload) ||
	    (endpoint && set_env("IOGRAM_ENDPOINT", endpoint)) ||
	    (output && set_env("IOGRAM_OUTPUT", output)) ||
	    (interval && set_env("IOGRAM_INTERVAL_MS", interval)) ||
	    (node && set_env("IOGRAM_NODE", node)) ||
	    (disable && set_env("IOGRAM_DISABLE", "1")) ||
	    (all_files && set_env("IOGRAM_ALL_FILES", "1"))) {
		free(preload);
		return 127;
	}
	free(preload);   /* setenv copied it */

	if (!disable)
		warn_unreachable(argv[optind]);
	execvp(argv[optind], &argv[optind]);
	int e = errno;
	fprintf(stderr, "iogram-run: %s: %s\n", argv[optind], strerror(e));
	/* as a shell says it (and env): found but not runnable 126, else 127 */
	return e == EACCES || e == ENOEXEC || e == EISDIR || e == ETXTBSY ? 126 : 127;
}
