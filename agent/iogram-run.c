/* iogram-run.c - run a command with the iogram POSIX interposer preloaded. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef IOGRAM_LIBDIR
#define IOGRAM_LIBDIR "/usr/local/lib"
#endif
#ifndef IOGRAM_VERSION
#define IOGRAM_VERSION "0"
#endif

#define PRELOAD_NAME "libiogram-posix.so"

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
	"  -h, --help          show this help\n"
	"  -V, --version       show the version\n"
	"\n"
	"The exit status is COMMAND's; 127 if it cannot be run, 2 on a usage error.\n"
	"The library is looked up next to iogram-run, then in " IOGRAM_LIBDIR ",\n"
	"then at $IOGRAM_PRELOAD. It is prepended to any existing LD_PRELOAD.\n"
	"\n"
	"EXAMPLES\n"
	"  iogram-run -- dd if=/dev/zero of=/tmp/x bs=1M count=100\n"
	"  iogram-run --output run-%%p.iogr --interval 200 -- ./app input.dat\n"
	"  mpirun -np 64 iogram-run --endpoint tcp://login1:7461 -- ./solver\n"
	"  srun iogram-run -o job-%%h-%%p.iogr -- ./app\n");
}

static int is_file(const char *path)
{
	return path && path[0] && access(path, R_OK) == 0;
}

/* Absolute path of the interposer, or NULL. */
static char *find_preload(const char *argv0)
{
	static char path[PATH_MAX + sizeof(PRELOAD_NAME) + 1];
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0 && argv0 && realpath(argv0, self))
		n = (ssize_t)strlen(self);
	if (n > 0) {
		self[n] = '\0';
		char *slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			snprintf(path, sizeof(path), "%s/%s", self, PRELOAD_NAME);
			if (is_file(path))
				return path;
		}
	}
	snprintf(path, sizeof(path), "%s/%s", IOGRAM_LIBDIR, PRELOAD_NAME);
	if (is_file(path))
		return path;
	const char *env = getenv("IOGRAM_PRELOAD");
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
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *endpoint = NULL, *output = NULL, *interval = NULL, *node = NULL;
	int disable = 0, c;
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

	const char *lib = find_preload(argv[0]);
	if (!lib) {
		fprintf(stderr, "iogram-run: cannot find %s (looked next to iogram-run, in %s and "
		        "at $IOGRAM_PRELOAD)\n", PRELOAD_NAME, IOGRAM_LIBDIR);
		return 127;
	}
	const char *old = getenv("LD_PRELOAD");
	size_t len = strlen(lib) + (old ? strlen(old) : 0) + 2;
	char *preload = malloc(len);
	if (!preload) {
		fprintf(stderr, "iogram-run: out of memory\n");
		return 127;
	}
	if (old && old[0])
		snprintf(preload, len, "%s:%s", lib, old);
	else
		snprintf(preload, len, "%s", lib);

	if (set_env("LD_PRELOAD", preload) ||
	    (endpoint && set_env("IOGRAM_ENDPOINT", endpoint)) ||
	    (output && set_env("IOGRAM_OUTPUT", output)) ||
	    (interval && set_env("IOGRAM_INTERVAL_MS", interval)) ||
	    (node && set_env("IOGRAM_NODE", node)) ||
	    (disable && set_env("IOGRAM_DISABLE", "1"))) {
		free(preload);
		return 127;
	}
	free(preload);   /* setenv copied it */

	execvp(argv[optind], &argv[optind]);
	fprintf(stderr, "iogram-run: %s: %s\n", argv[optind], strerror(errno));
	return 127;
}
