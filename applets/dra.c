/* dra: the Kubernetes DRA kubelet plugin, one driver per vendor.
 *
 * See: ocidec-dra(1). A thin dispatcher of subcommands: the API server's
 * side (claim, publish: engines/draclaim.c, engines/draslice.c over
 * engines/kubeapi.c) and the kubelet's (serve).
 */
#include "applets/applet.h"
#include "devices/config.h"
#include "engines/draclaim.h"
#include "engines/draslice.h"
#include "engines/kubeapi.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char dra_usage[] =
	"usage: ocidec dra claim [OPTIONS] NAMESPACE NAME [UID]\n"
	"       ocidec dra publish [OPTIONS]\n"
	"\n"
	"The Kubernetes DRA (resource.k8s.io/v1) driver of every configured vendor:\n"
	"VENDOR.ocidec.io, its devices named by index (gpu-0), the node's pool.\n"
	"\n"
	"  claim      what preparing the ResourceClaim NAMESPACE/NAME (of UID, when\n"
	"             given) would give: its devices of ocidec's drivers, a line each:\n"
	"             request, driver, pool, device, CDI IDs; or why it is refused\n"
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
	"Exit status: 0; 2 refused (one line: the claim and why, or what the API\n"
	"server got wrong); 1 the API server not reached in time.\n";

/* ---- the API server's side: claim, publish ---- */

struct dra_api {
	const char *dir, *node;
	struct kube_opts ko;
};

/* Is S a DNS subdomain (a node's name)? */
static bool dns_subdomain(const char *s)
{
	char label[64];
	size_t n = strlen(s);

	if (n == 0 || n > 253)
		return false;
	for (const char *p = s; *p;) {
		size_t k = strcspn(p, ".");

		if (k >= sizeof(label))
			return false;
		memcpy(label, p, k);
		label[k] = '\0';
		if (!dra_dns_label(label))
			return false;
		p += k + (p[k] == '.');
		if (p[-1] == '.' && !*p)
			return false;
	}
	return true;
}

/* The options of claim and publish into A: the index of the first
 * operand, or -1 after a usage error (said) */
static int api_options(int argc, char **argv, struct dra_api *a)
{
	static const struct option opts[] = {
		{ "config-dir", required_argument, NULL, 'c' }, { "node-name", required_argument, NULL, 'n' },
		{ "server", required_argument, NULL, 'S' },     { "token-file", required_argument, NULL, 'T' },
		{ "ca-file", required_argument, NULL, 'A' },    { "timeout", required_argument, NULL, 't' },
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
		switch (o) {
		case 'c': a->dir = optarg; break;
		case 'n': a->node = optarg; break;
		case 'S': a->ko.server = optarg; break;
		case 'T': a->ko.token_file = optarg; break;
		case 'A': a->ko.ca_file = optarg; break;
		case 't':
			sec = strtoul(optarg, &end, 10);
			if (end == optarg || *end || sec == 0 || sec > 3600)
				return applet_usage_error("--timeout %s: seconds, 1 to 3600", optarg), -1;
			a->ko.timeout_ms = (unsigned)sec * 1000;
			break;
		default: return applet_bad_option(o, argc, argv), -1;
		}
	}
	if (!a->node || !a->node[0])
		return applet_usage_error("no node name: give --node-name or set NODE_NAME"), -1;
	if (!dns_subdomain(a->node))
		return applet_usage_error("node name '%.100s' is no DNS subdomain", a->node), -1;
	return optind;
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
	if (config_load(&cfg, a.dir, err) < 0 || kube_open(&a.ko, &k, err) < 0 || dra_publish(k, &cfg, a.node, err) < 0)
		return APPLET_FAILED;
	return applet_finish_stdout(EXIT_OK);
}

/* ---- the dispatcher ---- */

APPLET_MAIN(dra)
{
	static const struct {
		const char *name;
		int (*fn)(int argc, char **argv, struct oerr *err);
	} cmds[] = {
		{ "claim", dra_claim_cmd },
		{ "publish", dra_publish_cmd },
	};

	if (argc < 2)
		return applet_usage_error("give a subcommand: claim or publish (--help)");
	for (size_t i = 0; i < ARRAY_SIZE(cmds); i++)
		if (strcmp(argv[1], cmds[i].name) == 0)
			return cmds[i].fn(argc - 1, argv + 1, err);
	return applet_usage_error("%s: no such subcommand (claim, publish)", argv[1]);
}
