/* view.c - iogram-view's entry: parse the command line first, so a headless
 * snapshot never touches GTK or a display; otherwise open the window. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view.h"
#include "iogp_actions.h"
#include "iogp_layers.h"
#include "iogp_size_table.h"

static void usage(FILE *out)
{
	char panels[256], label[32];
	iogp_panel_names(panels, sizeof(panels));
	fprintf(out,
	"usage: iogram-view [--listen E]... [--connect E]... [--replay FILE] [--record FILE]\n"
	"                   [--demo] [--window SECONDS] [--node NAME] [--layer posix|stdio|mpiio]\n"
	"                   [--weight count|bytes] [--dark | --light]\n"
	"       iogram-view --replay FILE --snapshot OUT.png|.svg|.pdf|.csv [--at SECONDS]\n"
	"                   [--panel NAME] [--size WxH] [--scale S] [--layer posix|stdio|mpiio]\n"
	"                   [--weight count|bytes]\n\n"
	"Shows iogram streams in a window: request sizes, queue depth, latency with\n"
	"p50/p90/p99, file access pattern, per-node throughput with min/avg/max and\n"
	"total, and a node x time heatmap. With no source option it listens on\n"
	IOGP_DEFAULT_ENDPOINT ", where agents connect by default.\n\n"
	"  -l, --listen E     bind E and receive from agents (repeatable)\n"
	"  -c, --connect E    connect to a relay's publish endpoint E (repeatable)\n"
	"  -r, --replay FILE  play a recording (.iogr): pause, speed, seek\n"
	"  -o, --record FILE  record what arrives live to FILE\n"
	"      --demo         start iogram-top's demo workers and show them\n"
	"  -W, --window S     histograms of the last S seconds (default: since start)\n"
	"  -w S|FILE          --window S when S is a number, else --record FILE\n"
	"                     (as in iogram-top)\n"
	"  -n, --node NAME    select a node at start\n"
	"      --layer L      show the posix (system calls, default) or stdio layer\n"
	"                     in every panel (y cycles; also for --snapshot)\n"
	"      --weight W     request-size bars by count (default) or by bytes, the\n"
	"                     share of the data moved at each size (v toggles; also\n"
	"                     for --snapshot)\n"
	"      --dark, --light  force a theme (default: follow the system)\n"
	"      --history S    live rate history in seconds (default 900)\n"
	"      --any-address  allow listening beyond loopback\n\n"
	"Headless (no display needed):\n"
	"  -s, --snapshot OUT write the dashboard or one panel to OUT and exit;\n"
	"                     the format follows the extension: .png, .svg, .pdf;\n"
	"                     OUT.csv: the panel's CSV files in the folder OUT\n"
	"      --at SECONDS   position in the replay (default: its end; negative,\n"
	"                     or -0, from the end); the window opens a replay at\n"
	"                     its start and plays it, with --at paused there\n"
	"  -p, --panel NAME   one panel instead of the whole dashboard, by name:\n"
	"                       %s\n"
	"      --size WxH     logical pixels (default 1600x1000, a panel 800x500)\n"
	"      --scale S      device pixels per logical pixel for PNG (default 1)\n\n"
	"Keys in the window (the same table as iogram-top's; * in a replay only).\n"
	"Scroll zooms the time axis of a panel, drag pans it; l, L and x act on the\n"
	"panel under the pointer:\n", panels);
	size_t pos = 0;
	const iogp_action *a;
	while ((a = iogp_help_next(&pos, IOGP_VIEWER_GTK, label, sizeof(label))))
		fprintf(out, "  %-10s %s%s\n", label, iogp_action_help(a, IOGP_VIEWER_GTK),
		        a->replay_only ? " *" : "");
	fprintf(out, "\n"
	"EXAMPLES\n"
	"  iogram-view\n"
	"  iogram-view --replay job.iogr\n"
	"  iogram-view --connect tcp://login1:7462 --record job.iogr\n"
	"  iogram-view --replay job.iogr --snapshot report.pdf --at 600\n"
	"  iogram-view --replay job.iogr --snapshot lat.png --panel latency --size 900x500\n");
}

static int parse_size(const char *s, double *w, double *h)
{
	char *end;
	double a = strtod(s, &end);
	if (end == s || (*end != 'x' && *end != 'X'))
		return -1;
	const char *p = end + 1;
	double b = strtod(p, &end);
	if (end == p || *end || !(a >= 16 && a <= 20000 && b >= 16 && b <= 20000))
		return -1;
	*w = a;
	*h = b;
	return 0;
}

static int parse_num(const char *s, double *v)
{
	char *end;
	*v = strtod(s, &end);
	return end == s || *end || !isfinite(*v) ? -1 : 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "connect", required_argument, NULL, 'c' },
		{ "replay", required_argument, NULL, 'r' },
		{ "record", required_argument, NULL, 'o' },
		{ "demo", no_argument, NULL, 'D' },
		{ "snapshot", required_argument, NULL, 's' },
		{ "at", required_argument, NULL, 'a' },
		{ "panel", required_argument, NULL, 'p' },
		{ "size", required_argument, NULL, 'S' },
		{ "scale", required_argument, NULL, 'k' },
		{ "window", required_argument, NULL, 'W' },
		{ "node", required_argument, NULL, 'n' },
		{ "dark", no_argument, NULL, 'K' },
		{ "light", no_argument, NULL, 'L' },
		{ "history", required_argument, NULL, 'H' },
		{ "any-address", no_argument, NULL, 'A' },
		{ "layer", required_argument, NULL, 'Y' },
		{ "weight", required_argument, NULL, 'G' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	iogv_args a;
	memset(&a, 0, sizeof(a));
	a.dark = -1;
	a.scale = 1;
	a.speed = 1;
	int c;
	double v;
	while ((c = getopt_long(argc, argv, "l:c:r:o:s:p:w:W:n:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'l':
		case 'c':
			if ((c == 'l' ? a.nlisten : a.nconnect) >= IOGV_MAX_EP) {
				fprintf(stderr, "iogram-view: at most %d endpoints of each kind\n", IOGV_MAX_EP);
				return IOGP_EXIT_USAGE;
			}
			if (c == 'l')
				a.listen[a.nlisten++] = optarg;
			else
				a.connect[a.nconnect++] = optarg;
			break;
		case 'r': a.replay = optarg; break;
		case 'o': a.record = optarg; break;
		case 'D': a.demo = 1; break;
		case 's': a.snapshot = optarg; break;
		case 'a':
			if (parse_num(optarg, &a.at) < 0) {
				fprintf(stderr, "iogram-view: bad --at '%s' (seconds)\n", optarg);
				return IOGP_EXIT_USAGE;
			}
			a.have_at = 1;
			break;
		case 'p': a.panel = optarg; break;
		case 'S':
			if (parse_size(optarg, &a.width, &a.height) < 0) {
				fprintf(stderr, "iogram-view: bad --size '%s' (WxH, 16..20000)\n", optarg);
				return IOGP_EXIT_USAGE;
			}
			a.have_size = 1;
			break;
		case 'k':
			if (parse_num(optarg, &a.scale) < 0 || a.scale < 0.25 || a.scale > 8) {
				fprintf(stderr, "iogram-view: bad --scale '%s' (0.25..8)\n", optarg);
				return IOGP_EXIT_USAGE;
			}
			break;
		case 'w':   /* a number: --window, else --record (iogram-top's -w FILE) */
			if (parse_num(optarg, &v) < 0) {
				a.record = optarg;
				break;
			}
			/* fall through */
		case 'W':
			if (parse_num(optarg, &a.window_s) < 0 || a.window_s < 0 || a.window_s > 300) {
				fprintf(stderr, "iogram-view: bad --window '%s' (0..300 seconds)\n", optarg);
				return IOGP_EXIT_USAGE;
			}
			break;
		case 'n': a.node = optarg; break;
		case 'K': a.dark = 1; break;
		case 'L': a.dark = 0; break;
		case 'H':
			if (parse_num(optarg, &v) < 0 || v < 10 || v > 86400) {
				fprintf(stderr, "iogram-view: bad --history '%s' (10..86400)\n", optarg);
				return IOGP_EXIT_USAGE;
			}
			a.history_s = (uint32_t)v;
			break;
		case 'A': a.any_address = 1; break;
		case 'Y':
			if ((a.layer = iogp_layer_find(optarg)) < 0) {
				char names[64];
				fprintf(stderr, "iogram-view: bad --layer '%s' (one of %s)\n", optarg,
				        iogp_layer_names(names, sizeof(names)));
				return IOGP_EXIT_USAGE;
			}
			break;
		case 'G':
			if ((a.weight = iogp_size_weight_find(optarg)) < 0) {
				fprintf(stderr, "iogram-view: bad --weight '%s' (count or bytes)\n", optarg);
				return IOGP_EXIT_USAGE;
			}
			break;
		case 'h': usage(stdout); return IOGP_EXIT_OK;
		case 'V': printf("iogram-view %s\n", IOGRAM_VERSION); return IOGP_EXIT_OK;
		default: usage(stderr); return IOGP_EXIT_USAGE;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "iogram-view: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return IOGP_EXIT_USAGE;
	}
	if (a.panel && iogp_panel_find(a.panel) == -1) {
		char panels[256];
		iogp_panel_names(panels, sizeof(panels));
		fprintf(stderr, "iogram-view: no panel '%s' (%s)\n", a.panel, panels);
		return IOGP_EXIT_USAGE;
	}
	if (a.replay && (a.nlisten || a.nconnect || a.demo)) {
		fprintf(stderr, "iogram-view: --replay cannot be combined with live sources\n");
		return IOGP_EXIT_USAGE;
	}
	if (a.snapshot) {
		if (!a.replay) {
			fprintf(stderr, "iogram-view: --snapshot needs --replay FILE\n");
			return IOGP_EXIT_USAGE;
		}
		if (!iogplot_export_format(a.snapshot) && !iogv_snapshot_csv_dir(a.snapshot, NULL, 0)) {
			fprintf(stderr, "iogram-view: %s: unknown format (use .png, .svg, .pdf or .csv)\n",
			        a.snapshot);
			return IOGP_EXIT_USAGE;
		}
		return iogv_snapshot(&a);
	}
#ifdef IOGV_HAVE_GTK
	char *gargv[2] = { argv[0], NULL };
	return iogv_app_run(&a, 1, gargv);
#else
	fprintf(stderr, "iogram-view: this build has no GTK; only the headless mode works:\n"
	        "  iogram-view --replay FILE --snapshot OUT.png|.svg|.pdf [--at S] [--panel NAME]\n");
	return IOGP_EXIT_ERROR;
#endif
}
