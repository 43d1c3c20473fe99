/* dra.c: ocidec dra, a Kubernetes DRA driver for every vendor: a thin
 * dispatcher of subcommands, each an engine's. `serve`: the kubelet
 * plugin (engines/draplugin.c): the registration and DRA sockets, gRPC
 * over h2c; what a claim gets is a backend's (struct dra_backend). */
#include "applets/applet.h"
#include "engines/draplugin.h"
#include "base/util.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

const char dra_usage[] =
	"usage: ocidec dra serve --driver NAME [--driver NAME]... [--plugin-dir DIR]\n"
	"                        [--registry-dir DIR]\n"
	"\n"
	"A Kubernetes DRA (Dynamic Resource Allocation) driver's kubelet plugin.\n"
	"\n"
	"serve: for each driver NAME, a gRPC service socket (DIR/NAME/dra.sock of\n"
	"--plugin-dir) and a registration socket (NAME-reg.sock in --registry-dir),\n"
	"through which the kubelet finds the plugin (GetInfo: type DRAPlugin, NAME,\n"
	"the service socket, versions v1.DRAPlugin and v1beta1.DRAPlugin) and says\n"
	"whether it registered it (logged). The kubelet then asks the service to\n"
	"prepare and unprepare the claims allocated to NAME; each claim is answered\n"
	"on its own. Serves until SIGTERM or SIGINT, then removes its sockets; a\n"
	"stale socket of an earlier run is replaced, anything else there is refused.\n"
	"\n"
	"  --driver NAME         a driver name (a DNS subdomain, e.g.\n"
	"                        gpu.nvidia.ocidec.io); once per driver\n"
	"  --plugin-dir DIR      where the service sockets go (default\n"
	"                        " DRA_PLUGIN_DIR ")\n"
	"  --registry-dir DIR    the kubelet's plugin registry (default\n"
	"                        " DRA_REGISTRY_DIR ")\n";

static int serve(int argc, char **argv, struct oerr *err)
{
	static const struct option opts[] = {
		{ "driver", required_argument, NULL, 'd' },
		{ "plugin-dir", required_argument, NULL, 'p' },
		{ "registry-dir", required_argument, NULL, 'r' },
		{ 0 },
	};
	_cleanup_free_ const char **drivers = xcalloc((size_t)argc + 1, sizeof(*drivers));
	struct dra_opts o = { .plugin_dir = DRA_PLUGIN_DIR, .registry_dir = DRA_REGISTRY_DIR,
			      .drivers = drivers, .backend = &dra_backend_unwired };
	int c;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			if (!dra_driver_name_ok(optarg))
				return applet_usage_error("--driver %s: not a DNS subdomain (lowercase letters, "
							  "digits, '-' and '.')", optarg);
			for (size_t i = 0; i < o.ndrivers; i++)
				if (strcmp(drivers[i], optarg) == 0)
					return applet_usage_error("--driver %s: given twice", optarg);
			drivers[o.ndrivers++] = optarg;
			break;
		case 'p': o.plugin_dir = optarg; break;
		case 'r': o.registry_dir = optarg; break;
		default: return applet_bad_option(c, argc, argv);
		}
	}
	if (optind < argc)
		return applet_usage_error("serve takes no arguments: %s", argv[optind]);
	if (o.ndrivers == 0)
		return applet_usage_error("serve: give at least one --driver NAME");
	return dra_serve(&o, err) < 0 ? APPLET_FAILED : EXIT_OK;
}

APPLET_MAIN(dra)
{
	if (argc < 2)
		return applet_usage_error("a subcommand: serve");
	if (strcmp(argv[1], "serve") == 0)
		return serve(argc - 1, argv + 1, err);
	return applet_usage_error("%s: no such subcommand (serve)", argv[1]);
}
