/* cmd_keygen.c - `iogram keygen`: the user's CURVE key pair, which every
 * iogram socket (agents, recorders, relays, viewers) then uses by itself. */
#include <getopt.h>
#include <stdio.h>

#include "iogp_keys.h"
#include "iogram_cli.h"

static void keygen_usage(FILE *out)
{
	fprintf(out,
	"usage: iogram keygen [--force]\n\n"
	"Writes a new CURVE key pair (mode 0600) to $IOGRAM_KEYS/curve.key, else\n"
	"$XDG_CONFIG_HOME/iogram/curve.key, else ~/.config/iogram/curve.key. From then\n"
	"on every recorder, relay and viewer of this user requires it (what binds\n"
	"admits only clients holding this pair) and every agent of this user uses it\n"
	"without any flag and checks that its listener holds it too: other users can\n"
	"neither read nor inject streams, nor squat a port to receive them. The file\n"
	"is never replaced without --force. IOGRAM_KEYS=none switches keys off.\n\n"
	"EXAMPLES\n"
	"  iogram keygen\n"
	"  IOGRAM_KEYS=$HOME/job42 iogram keygen    # one pair for one job\n");
}

static int keygen_exec(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int force = 0, c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "fh", opts, NULL)) != -1) {
		switch (c) {
		case 'f': force = 1; break;
		case 'h': keygen_usage(stdout); return IOGP_EXIT_OK;
		default: keygen_usage(stderr); return IOGP_EXIT_USAGE;
		}
	}
	if (optind != argc) {
		iogram_err("keygen: unexpected argument '%s'", argv[optind]);
		return IOGP_EXIT_USAGE;
	}
	iogp_keys k;
	char err[1200];
	if (iogp_keys_generate(force, &k, err, sizeof(err)) < 0) {
		iogram_err("keygen: %s", err);
		return IOGP_EXIT_ERROR;
	}
	printf("wrote %s\npublic key %s\n", k.path, k.pub);
	return IOGP_EXIT_OK;
}

const struct iogram_cmd iogram_cmd_keygen = {
	.name = "keygen",
	.summary = "write the user's CURVE key pair (authenticated, encrypted streams)",
	.exec = keygen_exec,
};
