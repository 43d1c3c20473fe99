/* relabel: set the SELinux contexts the vendor configs name on the host
 * paths `list` prints, without libselinux.
 *
 * See: ocidec-relabel(1); restorecon(8). Device nodes get
 * selinux_device_context, everything else selinux_file_context (a vendor
 * without the key leaves those paths alone). lgetxattr/lsetxattr of
 * "security.selinux": a symlink is labelled itself, never followed; the file
 * it resolves to inside the driver root is its own line in the list and is
 * labelled as such. Works where the file system keeps the attribute (ext4,
 * xfs, tmpfs, overlay: driver containers' /run/nvidia/driver). A path that
 * cannot be labelled is reported and skipped; exit 1 at the end then.
 */
#include "applets/applet.h"
#include "devices/config.h"
#include "base/log.h"
#include "pipeline/plan.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

const char relabel_usage[] =
	"usage: ocidec relabel [-c DIR] [-n] [-v] [VENDOR...]\n"
	"\n"
	"Set the SELinux contexts the vendor configs name (selinux_device_context,\n"
	"selinux_file_context) on the host paths `ocidec list` prints.\n"
	"\n"
	"  -c, --config-dir DIR  vendor configs (default " CONFIG_DIR_DEFAULT ")\n"
	"  -n, --dry-run         only say what would change\n"
	"  -v, --verbose         say each change, as restorecon -v does\n";

#define XATTR "security.selinux"

/* Label the item (the symlink itself when LINK; PATH names it for people)
 * with CTX; 0 done or nothing to do, -1 failed (reported). */
static int label(const struct plan_item *it, bool link, const char *path, const char *ctx, bool dry,
		 bool verbose)
{
	char cur[4096] = "", esc[1024], ecur[1024];
	ssize_t n = plan_getxattr(it, link, XATTR, cur, sizeof(cur) - 1);

	/* a driver root's names are anyone's: no line forged, no terminal escape */
	path = escape_bytes(path, esc, sizeof(esc));

	if (n < 0 && errno != ENODATA && errno != ENOTSUP) {
		log_msg(LOG_ERROR, "%s: reading its context: %s", path, strerror(errno));
		return -1;
	}
	if (n > 0) {
		cur[n] = '\0';
		if (strcmp(cur, ctx) == 0)
			return 0;
		/* and its label, which whoever owns the file may have set */
		escape_bytes(cur, ecur, sizeof(ecur));
	}
	if (dry) {
		out("Would relabel %s from %s to %s\n", path, n > 0 ? ecur : "<no context>", ctx);
		return 0;
	}
	if (plan_setxattr(it, link, XATTR, ctx, strlen(ctx) + 1) < 0) {
		/* the kernel refuses a context its policy does not know */
		log_msg(LOG_ERROR, "%s: setting %s: %s%s", path, ctx, strerror(errno),
			errno == EINVAL ? " (the loaded policy does not know this context: is ocidec's module "
					  "loaded? ocidec selinux-check)" : "");
		return -1;
	}
	if (verbose)
		out("Relabeled %s from %s to %s\n", path, n > 0 ? ecur : "<no context>", ctx);
	return 0;
}

struct relabel {
	bool dry, verbose;
	int failed;
};

static void relabel_one(const struct vendor *v, const struct plan_item *it, bool link, const char *path,
			const char *ctx, void *arg)
{
	struct relabel *r = arg;

	(void)v;
	if (label(it, link, path, ctx, r->dry, r->verbose) < 0)
		r->failed++;
}

APPLET_MAIN(relabel)
{
	static const struct option opts[] = {
		{ "config-dir", required_argument, NULL, 'c' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "verbose", no_argument, NULL, 'v' },
		{ 0 },
	};
	const char *dir = config_dir_default();
	_cleanup_config_ struct config cfg = { 0 };
	struct relabel r = { 0 };
	int o;

	opterr = 0;
	while ((o = getopt_long(argc, argv, ":c:nv", opts, NULL)) != -1) {
		switch (o) {
		case 'c': dir = optarg; break;
		case 'n': r.dry = true; break;
		case 'v': r.verbose = true; break;
		default: return applet_bad_option(o, argc, argv);
		}
	}
	if (config_load_named(&cfg, dir, argv + optind, argc - optind, err) < 0)
		return APPLET_FAILED;
	if (plan_label_walk(&cfg, argv + optind, argc - optind, false, relabel_one, &r, err) < 0)
		return APPLET_FAILED;
	if (r.failed)
		log_msg(LOG_ERROR, "%d path%s could not be labelled", r.failed, r.failed == 1 ? "" : "s");
	return applet_finish_stdout(r.failed ? EXIT_FAIL : EXIT_OK);
}
