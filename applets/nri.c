/* nri.c: ocidec nri, an NRI plugin (the Node Resource Interface of
 * containerd 1.7 and 2.x and of CRI-O): at each CreateContainer the
 * runtime asks, and the container gets its vendors' edits as NRI's
 * adjustment, decided and planned on the path the hook and the shim share
 * (container.h), turned into NRI's terms by nri.c. No engine config is
 * edited, no engine restarted, no RuntimeClass needed.
 *
 * One process, one connection, one request at a time: the runtime's
 * socket, NRI's multiplexer and ttrpc under it (ttrpc.c); protobuf-c for
 * the messages. Each container is decided in a child process, bounded in
 * time, whose memory goes with it (NRI_BACKSTOP_MS). When the runtime
 * goes (restarted, upgraded), the plugin connects again; while the plugin
 * is gone, the runtime starts containers without it (NRI's rule), so a
 * container that asks for nothing never waits on ocidec. The plugin is
 * engines/nriplugin.c; here, the command line and --status. */
#include "applets/applet.h"
#include "devices/config.h"
#include "engines/nrictl.h"
#include "engines/nriplugin.h"
#include "base/util.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

const char nri_usage[] =
	"usage: ocidec nri [-c DIR] [--socket PATH] [--hook-path PATH] [--name NAME] [--index NN]\n"
	"                  [--cdi-dir DIR | --no-cdi] [--host-root DIR]\n"
	"       ocidec nri --status [--any] [--name NAME] [--host-root DIR]\n"
	"\n"
	"An NRI plugin: connects to the runtime's NRI socket (containerd 2.x, containerd\n"
	"1.7 with NRI enabled, CRI-O), registers, and gives each container that asks\n"
	"for a vendor's devices its edits at creation (device nodes and their cgroup\n"
	"rules, read-only mounts, the cache hook), as the hook and the shim would;\n"
	"a refusal fails the container with ocidec's line in the runtime's error.\n"
	"Where the runtime injects CDI devices a plugin names (containerd 2.1 and\n"
	"later), the same decision gives the devices of ocidec's own CDI specs\n"
	"instead, no OCI hook (NRI's validators pass it), when those specs are\n"
	"current; else the edits above, said in the log.\n"
	"Runs until SIGTERM; connects again when the runtime restarts. A newer plugin\n"
	"of the same name and configs takes the connection over from a running one\n"
	"(no container is created between the two without a plugin); exit 3 then.\n"
	"\n"
	"  -c, --config-dir DIR  the vendor configs (default /etc/ocidec/ocidec.d)\n"
	"  --socket PATH         the runtime's NRI socket (default " NRI_SOCKET ")\n"
	"  --hook-path PATH      the cache hook the runtime runs: the host's path of this\n"
	"                        ocidec (default: this binary's own path; required with\n"
	"                        --host-root)\n"
	"  --name NAME, --index NN   the plugin's name and two-digit index (ocidec, 50):\n"
	"                        plugins are called in index order\n"
	"  --cdi-dir DIR         ocidec's CDI specs, kept true there (every 5 s), which\n"
	"                        the runtime reads (default: none kept; /var/run/cdi,\n"
	"                        the refresh service's, read)\n"
	"  --no-cdi              the edits above always, never CDI devices\n"
	"  --host-root DIR       the node's root, where everything above is (a pod's\n"
	"                        /host): entered first (chroot)\n"
	"  --status              the running plugin's state, one line: exit 0 when a\n"
	"                        runtime took it and it runs in this PID namespace (a\n"
	"                        readiness probe), else 1\n"
	"  --any                 (--status) a plugin of another PID namespace counts too (an\n"
	"                        init container waiting for the DaemonSet's)\n";

static int valid_index(const char *s)
{
	return strlen(s) == 2 && s[0] >= '0' && s[0] <= '9' && s[1] >= '0' && s[1] <= '9';
}

/* The hook the runtime runs as root: a file of root's no one else may write */
static int hook_ok(const char *hook, struct oerr *err)
{
	struct stat st;

	if (stat(hook, &st) < 0)
		return oerr_usage(err, "--hook-path %s: %s", hook, strerror(errno));
	if (!S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)))
		return oerr_usage(err, "--hook-path %s: not a file of root's that only root may write: the "
				  "runtime would run it as root", hook);
	/* nor a directory above it (where another could put its own) */
	for (_cleanup_free_ char *d = path_dir(hook); strcmp(d, "/") != 0;) {
		char *up;

		if (stat(d, &st) < 0 || st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)))
			return oerr_usage(err, "--hook-path %s: its directory %s is not root's alone", hook, d);
		up = path_dir(d);
		free(d);
		d = up;
	}
	return 0;
}

/* --status: the running plugin's line; 0 when a runtime took it and the
 * plugin is of this PID namespace (a pod's own, not another pod's: during
 * a DaemonSet's surge the new pod is ready when its own plugin is) */
static int status(const char *name, bool any)
{
	int pid = 0;
	_cleanup_close_ int c = nrictl_ask(name, NRICTL_STATUS, NULL, &pid);
	struct timeval tv = { .tv_sec = 2 };   /* it answers between two requests */
	char line[300];
	ssize_t n;

	if (c >= 0)
		setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	n = c < 0 ? -1 : read(c, line, sizeof(line) - 1);
	if (n <= 0) {
		out(c < 0 ? "no ocidec nri plugin %s runs here\n" : "the ocidec nri plugin %s did not answer within 2 s\n",
		    name);
		return applet_finish_stdout(EXIT_FAIL);
	}
	line[n] = '\0';
	out("%s", line);
	if (pid == 0 && !any) {
		out("(the plugin of another PID namespace: another pod's; --any takes it)\n");
		return applet_finish_stdout(EXIT_FAIL);
	}
	return applet_finish_stdout(strncmp(line, "registered ", 11) == 0 ? EXIT_OK : EXIT_FAIL);
}

APPLET_MAIN(nri)
{
	static const struct option opts[] = {
		{ "config-dir", required_argument, NULL, 'c' }, { "socket", required_argument, NULL, 'S' },
		{ "hook-path", required_argument, NULL, 'H' },  { "name", required_argument, NULL, 'N' },
		{ "index", required_argument, NULL, 'I' },      { "host-root", required_argument, NULL, 'R' },
		{ "status", no_argument, NULL, 's' },           { "any", no_argument, NULL, 'A' },
		{ "cdi-dir", required_argument, NULL, 'C' },    { "no-cdi", no_argument, NULL, 'n' },
		{ 0 },
	};
	struct nri_opts o = { .dir = config_dir_default(), .socket = NRI_SOCKET, .name = "ocidec", .index = "50" };
	char self[PATH_MAX];
	bool ask = false, any = false;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":c:", opts, NULL)) != -1) {
		switch (c) {
		case 'c': o.dir = optarg; break;
		case 'S': o.socket = optarg; break;
		case 'H': o.hook = optarg; break;
		case 'N': o.name = optarg; break;
		case 'I': o.index = optarg; break;
		case 'R': o.host_root = optarg; break;
		case 's': ask = true; break;
		case 'A': any = true; break;
		case 'C': o.cdi_dir = optarg; break;
		case 'n': o.no_cdi = true; break;
		default: return applet_bad_option(c, argc, argv);
		}
	}
	if (optind < argc)
		return applet_usage_error("no arguments: %s", argv[optind]);
	if (!valid_index(o.index) || !*o.name || strchr(o.name, '/'))
		return applet_usage_error("--index: two digits (00 to 99); --name: not empty, no '/'");
	if (o.host_root && !o.hook && !ask)
		return applet_usage_error("--host-root: give --hook-path, the node's path of ocidec (this binary's "
					  "is not the node's)");
	if (!o.hook && self_exe(self, sizeof(self)) < 0)
		return oerr_set(err, errno, "/proc/self/exe"), APPLET_FAILED;
	o.hook = o.hook ? o.hook : self;
	if (o.hook[0] != '/')
		return applet_usage_error("--hook-path %s: an absolute path", o.hook);
	/* a DaemonSet's pod: the node's root is its own from here on */
	if (o.host_root && (chroot(o.host_root) < 0 || chdir("/") < 0))
		return oerr_set(err, errno, "--host-root %s", o.host_root), APPLET_FAILED;
	if (ask)
		return status(o.name, any);
	if (hook_ok(o.hook, err) < 0)
		return APPLET_FAILED;
	c = nri_plugin(&o, err);
	return c < 0 ? APPLET_FAILED : c == 1 ? NRI_HANDED_OVER : EXIT_OK;
}
