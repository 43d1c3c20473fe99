/* dra: the Kubernetes DRA driver of every vendor, one driver name each.
 *
 * See: ocidec-dra(1). A thin dispatcher of subcommands: the API server's
 * side (claim, publish: engines/draclaim.c, engines/draslice.c over
 * engines/kubeapi.c) and the kubelet's (serve: engines/draplugin.c, its
 * claims and its tick engines/draserve.c).
 */
#include "applets/applet.h"
#include "base/cleanup.h"
#include "base/log.h"
#include "devices/config.h"
#include "engines/draclaim.h"
#include "engines/draplugin.h"
#include "engines/draserve.h"
#include "engines/draslice.h"
#include "engines/kubeapi.h"
#include "formats/json.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DRA_CDI_DIR "/var/run/cdi"   /* (the refreshed specs', as ocidec nri's) */

const char dra_usage[] =
	"usage: ocidec dra serve [OPTIONS] [SERVE OPTIONS]\n"
	"       ocidec dra claim [OPTIONS] NAMESPACE NAME [UID]\n"
	"       ocidec dra publish [OPTIONS]\n"
	"       ocidec dra classes [-c DIR]\n"
	"\n"
	"The Kubernetes DRA (resource.k8s.io/v1) driver of every configured vendor:\n"
	"VENDOR.ocidec.io, its devices named by index (gpu-0), the node's pool.\n"
	"\n"
	"  serve      the kubelet plugin: each driver registered with the kubelet,\n"
	"             its claims prepared (their devices' CDI IDs, kept for the\n"
	"             kubelet's next ask) and unprepared; the vendors' CDI specs\n"
	"             refreshed and the node's slices published, now and at\n"
	"             each --every\n"
	"  claim      what preparing the ResourceClaim NAMESPACE/NAME (of UID, when\n"
	"             given) would give: its devices of ocidec's drivers, a line each:\n"
	"             request, driver, pool, device, CDI IDs; or why it is refused\n"
	"  classes    a DeviceClass for each vendor's driver (its CEL selector),\n"
	"             as a List for kubectl apply -f -\n"
	"  publish    the node's ResourceSlices made what its vendors have now:\n"
	"             created, updated (the pool's generation one up) or deleted\n"
	"\n"
	"  -c, --config-dir DIR  vendor configs (default " CONFIG_DIR_DEFAULT ")\n"
	"  -n, --node-name NAME  this node (default: $NODE_NAME, the DaemonSet's)\n"
	"      --server URL      https://HOST:PORT (default: in-cluster,\n"
	"                        $KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT)\n"
	"      --token-file FILE the bearer token, read again when it changes\n"
	"                        (default " KUBE_SA_DIR "/token)\n"
	"      --ca-file FILE    the API server's CA (default " KUBE_SA_DIR "/ca.crt)\n"
	"      --timeout SEC     each request's deadline (default 15)\n"
	"\n"
	"serve's options:\n"
	"      --driver NAME     serve this driver only (VENDOR.ocidec.io; again for\n"
	"                        more; default: every vendor that is this platform's)\n"
	"      --plugin-dir DIR  the DRA sockets and claims kept (default\n"
	"                        " DRA_PLUGIN_DIR ")\n"
	"      --registry-dir DIR the kubelet's plugin registry (default\n"
	"                        " DRA_REGISTRY_DIR ")\n"
	"      --cdi-dir DIR     where the refreshed CDI specs go (default\n"
	"                        " DRA_CDI_DIR ")\n"
	"      --no-cdi          no spec written (the node's own refresh keeps them)\n"
	"      --hook-path PATH  the specs' hook: the node's path of ocidec\n"
	"                        (default: this binary's)\n"
	"      --every SEC       the refresh and the slices again (default 60)\n"
	"      --no-publish      no slices (another publishes them)\n"
	"      --host-root DIR   the node's root (a DaemonSet's hostPath /): every path\n"
	"                        but the token's and the CA's is the node's (give\n"
	"                        --hook-path, the node's path of ocidec)\n"
	"\n"
	"Exit status: 0; 2 refused (one line: the claim and why, or what the API\n"
	"server got wrong); 1 the API server not reached in time.\n";

/* ---- the API server's side: claim, publish ---- */

struct dra_api {
	const char *dir, *node;
	struct kube_opts ko;
	/* serve's */
	bool serve, no_cdi, no_publish;
	const char **drivers;
	size_t ndrivers;
	const char *plugin_dir, *registry_dir, *cdi_dir, *hook, *host_root;
	unsigned every;
};

/* The options into A (serve's where A->serve): the index of the first
 * operand, or -1 after a usage error (said) */
static int api_options(int argc, char **argv, struct dra_api *a)
{
	static const struct option opts[] = {
		{ "config-dir", required_argument, NULL, 'c' }, { "node-name", required_argument, NULL, 'n' },
		{ "server", required_argument, NULL, 'S' },     { "token-file", required_argument, NULL, 'T' },
		{ "ca-file", required_argument, NULL, 'A' },    { "timeout", required_argument, NULL, 't' },
		{ "driver", required_argument, NULL, 'd' },     { "plugin-dir", required_argument, NULL, 'p' },
		{ "registry-dir", required_argument, NULL, 'r' }, { "cdi-dir", required_argument, NULL, 'C' },
		{ "no-cdi", no_argument, NULL, 'N' },           { "hook-path", required_argument, NULL, 'H' },
		{ "every", required_argument, NULL, 'e' },      { "no-publish", no_argument, NULL, 'P' },
		{ "host-root", required_argument, NULL, 'R' },
		{ 0 },
	};
	unsigned long sec;
	char *end;
	int o;

	a->dir = config_dir_default();
	a->node = getenv("NODE_NAME");
	opterr = 0;
	optind = 1;
	while ((o = getopt_long(argc, argv, ":c:n:", opts, NULL)) != -1) {
		if (!a->serve && o > 0 && strchr("dprCNHePR", o))
			return applet_usage_error("%s: an option of serve's", argv[optind - 1]), -1;
		switch (o) {
		case 'c': a->dir = optarg; break;
		case 'n': a->node = optarg; break;
		case 'S': a->ko.server = optarg; break;
		case 'T': a->ko.token_file = optarg; break;
		case 'A': a->ko.ca_file = optarg; break;
		case 't':
		case 'e':
			sec = strtoul(optarg, &end, 10);
			if (end == optarg || *end || sec == 0 || sec > 3600)
				return applet_usage_error("--%s %s: seconds, 1 to 3600", o == 't' ? "timeout" : "every",
							  optarg), -1;
			if (o == 't')
				a->ko.timeout_ms = (unsigned)sec * 1000;
			else
				a->every = (unsigned)sec;
			break;
		case 'd':
			if (!dra_driver_name_ok(optarg))
				return applet_usage_error("--driver %s: not a DNS subdomain", optarg), -1;
			for (size_t i = 0; i < a->ndrivers; i++)
				if (strcmp(a->drivers[i], optarg) == 0)
					return applet_usage_error("--driver %s: given twice", optarg), -1;
			a->drivers[a->ndrivers++] = optarg;
			break;
		case 'p': a->plugin_dir = optarg; break;
		case 'r': a->registry_dir = optarg; break;
		case 'C': a->cdi_dir = optarg; break;
		case 'N': a->no_cdi = true; break;
		case 'H': a->hook = optarg; break;
		case 'P': a->no_publish = true; break;
		case 'R': a->host_root = optarg; break;
		default: return applet_bad_option(o, argc, argv), -1;
		}
	}
	if (!a->node || !a->node[0])
		return applet_usage_error("no node name: give --node-name or set NODE_NAME"), -1;
	if (!dra_driver_name_ok(a->node))
		return applet_usage_error("node name '%.100s' is no DNS subdomain", a->node), -1;
	return optind;
}

/* serve: the drivers (given, or every vendor's that is this platform's), the
 * kubelet's sockets, the claims through the API server */
static int dra_serve_cmd(int argc, char **argv, struct oerr *err)
{
	_cleanup_free_ const char **drivers = xcalloc((size_t)argc + 1, sizeof(*drivers));
	struct dra_api a = { .serve = true, .drivers = drivers, .plugin_dir = DRA_PLUGIN_DIR,
			     .registry_dir = DRA_REGISTRY_DIR, .cdi_dir = DRA_CDI_DIR, .every = 60 };
	_cleanup_config_ struct config cfg = { 0 };
	_cleanup_kube_ struct kube *k = NULL;
	struct strv names = { 0 };
	char self[4096];
	struct dra_server s;
	struct dra_opts o;
	int i = api_options(argc, argv, &a), r;

	if (i < 0)
		return EXIT_USAGE;
	if (i != argc)
		return applet_usage_error("serve: no operand (%s)", argv[i]);
	if (a.host_root && !a.hook)
		return applet_usage_error("--host-root: give --hook-path, the node's path of ocidec");
	if (!a.hook && self_exe(self, sizeof(self)) < 0)
		return oerr_set(err, errno, "/proc/self/exe"), APPLET_FAILED;
	/* (the token's directory and the CA read before a chroot into the
	 * node's root: they are the pod's) */
	if (kube_open(&a.ko, &k, err) < 0)
		return APPLET_FAILED;
	if (a.host_root && (chroot(a.host_root) < 0 || chdir("/") < 0))
		return oerr_set(err, errno, "--host-root %s", a.host_root), APPLET_FAILED;
	/* (a DaemonSet's pod may start before the toolkit's install put the
	 * configs there: waited for, said once) */
	for (bool said = false; config_load(&cfg, a.dir, err) < 0 || !cfg.n;) {
		if (err->msg[0] && !strstr(err->msg, "No such file"))
			return APPLET_FAILED;
		if (!said)
			log_warn("no vendor config in %s yet: waiting for it (ocidec install puts it there)", a.dir);
		said = true;
		config_free(&cfg);
		memset(err, 0, sizeof(*err));
		sleep(5);
	}
	/* the drivers: the vendors' that are this platform's (with devices or
	 * not yet: a driver loaded later gives them, published at a tick), or
	 * those given (each a vendor's) */
	for (size_t v = 0; v < cfg.n; v++) {
		_cleanup_free_ char *name = dra_driver_name(&cfg.vendors[v]);
		bool given = false;

		for (size_t d = 0; name && d < a.ndrivers; d++)
			given |= strcmp(a.drivers[d], name) == 0;
		if (!name || (a.ndrivers ? !given : !vendor_here(&cfg.vendors[v])))
			continue;
		strv_push(&names, name);
	}
	for (size_t d = 0; d < a.ndrivers; d++)
		if (!strv_contains(&names, a.drivers[d])) {
			strv_free(&names);
			return oerr_usage(err, "--driver %s: no vendor's in %s (VENDOR.ocidec.io)", a.drivers[d], a.dir),
			       APPLET_FAILED;
		}
	if (!names.n) {
		strv_free(&names);
		return oerr_usage(err, "no vendor of %s is this platform's: no driver to serve", a.dir), APPLET_FAILED;
	}
	s = (struct dra_server){ .k = k, .cfg = &cfg, .node = a.node, .drivers = &names, .plugin_dir = a.plugin_dir,
				 .config_dir = a.dir, .cdi_dir = a.no_cdi ? NULL : a.cdi_dir,
				 .hook = a.hook ? a.hook : self, .publish = !a.no_publish };
	o = (struct dra_opts){ .plugin_dir = a.plugin_dir, .registry_dir = a.registry_dir,
			       .drivers = (const char *const *)names.v, .ndrivers = names.n,
			       .backend = &dra_server_backend, .tick = dra_server_tick, .tick_arg = &s,
			       .tick_ms = (int)a.every * 1000 };
	{
		struct dra_backend b = dra_server_backend;

		b.arg = &s;
		o.backend = &b;
		r = dra_serve(&o, err);
	}
	if (r == 0)
		dra_server_end(&s, (const char *const *)names.v, names.n);
	strv_free(&names);
	return r < 0 ? APPLET_FAILED : EXIT_OK;
}

static int dra_claim_cmd(int argc, char **argv, struct oerr *err)
{
	struct dra_api a = { 0 };
	_cleanup_config_ struct config cfg = { 0 };
	_cleanup_kube_ struct kube *k = NULL;
	_cleanup_dra_result_ struct dra_result r = { 0 };
	struct dra_claim_ref ref;
	int i = api_options(argc, argv, &a);
	char b[128];

	if (i < 0)
		return EXIT_USAGE;
	if (argc - i < 2 || argc - i > 3)
		return applet_usage_error("claim: give NAMESPACE NAME [UID]");
	ref = (struct dra_claim_ref){ .ns = argv[i], .name = argv[i + 1], .uid = argv[i + 2], .node = a.node };
	if (config_load(&cfg, a.dir, err) < 0 || kube_open(&a.ko, &k, err) < 0 ||
	    dra_claim_prepare(k, &cfg, &ref, &r, err) < 0)
		return APPLET_FAILED;
	out("claim %s/%s uid %s: %zu device%s of ocidec's\n", ref.ns, ref.name, escape_bytes(r.uid, b, sizeof(b)), r.n,
	    r.n == 1 ? "" : "s");
	for (size_t d = 0; d < r.n; d++) {
		_cleanup_free_ char *ids = strv_join(&r.v[d].cdi, ",");

		out("%s\t%s\t%s\t%s\t%s\n", escape_bytes(r.v[d].request, b, sizeof(b)), r.v[d].driver, r.v[d].pool,
		    r.v[d].device, ids);
	}
	return applet_finish_stdout(EXIT_OK);
}

static int dra_publish_cmd(int argc, char **argv, struct oerr *err)
{
	struct dra_api a = { 0 };
	_cleanup_config_ struct config cfg = { 0 };
	_cleanup_kube_ struct kube *k = NULL;
	int i = api_options(argc, argv, &a);

	if (i < 0)
		return EXIT_USAGE;
	if (i != argc)
		return applet_usage_error("publish: no operand (%s)", argv[i]);
	if (config_load(&cfg, a.dir, err) < 0 || kube_open(&a.ko, &k, err) < 0 || dra_publish(k, &cfg, a.node, NULL, err) < 0)
		return APPLET_FAILED;
	return applet_finish_stdout(EXIT_OK);
}

static int dra_classes_cmd(int argc, char **argv, struct oerr *err)
{
	static const struct option opts[] = { { "config-dir", required_argument, NULL, 'c' }, { 0 } };
	_cleanup_config_ struct config cfg = { 0 };
	_cleanup_json_ cJSON *list = NULL;
	_cleanup_free_ char *text = NULL;
	const char *dir = config_dir_default();
	int o;

	opterr = 0;
	optind = 1;
	while ((o = getopt_long(argc, argv, ":c:", opts, NULL)) != -1) {
		if (o != 'c')
			return applet_bad_option(o, argc, argv);
		dir = optarg;
	}
	if (optind != argc)
		return applet_usage_error("classes: no operand (%s)", argv[optind]);
	if (config_load(&cfg, dir, err) < 0)
		return APPLET_FAILED;
	list = dra_device_classes(&cfg);
	if (!(text = cJSON_Print(list)))
		oom();
	out("%s\n", text);
	return applet_finish_stdout(EXIT_OK);
}

/* ---- the dispatcher ---- */

APPLET_MAIN(dra)
{
	static const struct {
		const char *name;
		int (*fn)(int argc, char **argv, struct oerr *err);
	} cmds[] = {
		{ "serve", dra_serve_cmd },
		{ "claim", dra_claim_cmd },
		{ "publish", dra_publish_cmd },
		{ "classes", dra_classes_cmd },
	};

	if (argc < 2)
		return applet_usage_error("give a subcommand: serve, claim, publish or classes (--help)");
	for (size_t i = 0; i < ARRAY_SIZE(cmds); i++)
		if (strcmp(argv[1], cmds[i].name) == 0)
			return cmds[i].fn(argc - 1, argv + 1, err);
	return applet_usage_error("%s: no such subcommand (serve, claim, publish, classes)", argv[1]);
}
