/* hookio.c: see hookio.h. */
#include "pipeline/hookio.h"

#include "pipeline/inject.h"
#include "base/log.h"
#include "safety/rootpath.h"
#include "base/util.h"

#include <errno.h>
#include <getopt.h>
#include <string.h>
#include <unistd.h>

int hookio_stage(int argc, char **argv, struct oerr *err)
{
	const char *stage = optind < argc ? argv[optind] : "prestart";

	if (optind + 1 < argc)
		return oerr_usage(err, "one STAGE at most");
	if (strcmp(stage, "prestart") == 0 || strcmp(stage, "createRuntime") == 0 ||
	    strcmp(stage, "createContainer") == 0)
		return 1;
	if (strcmp(stage, "poststart") == 0 || strcmp(stage, "poststop") == 0 || strcmp(stage, "startContainer") == 0)
		return 0;
	return oerr_usage(err, "unknown stage '%s'", stage);
}

int hookio_option(int o, const char *arg, bool *dry_run, struct oerr *err)
{
	switch (o) {
	case 'l':
		if (log_open_file(arg) < 0)
			log_warn("%s: cannot open the log file: %s", arg, strerror(errno));
		return 0;
	case 'n': *dry_run = true; return 0;
	case 't':
		if (deadline_arm(arg) < 0)
			return oerr_usage(err, "--timeout %s: not a number of seconds (0 to 3600)", arg);
		return 0;
	case 'R': rootpath_init(arg); return 0;
	case 'M': inject_mount_api(arg); return 0;
	case 'S': log_syslog(arg); return 0;
	default: return 1;
	}
}

int hookio_input(struct oci_state *st, char **buf, size_t *len, struct oerr *err)
{
	_cleanup_free_ char *text = NULL;

	*buf = NULL;
	if (read_fd_all(STDIN_FILENO, OCI_STATE_MAX, &text, len, err) < 0)
		return oerr_prefix(err, "container state on stdin");
	if (*len == strspn(text, " \t\r\n"))
		return oerr_usage(err, "no container state on stdin: the engine gives a hook the OCI state "
				  "({\"bundle\": DIR, \"pid\": N, ...}); to try one by hand: ocidec hook --dry-run "
				  "<<<'{\"bundle\": \"/path/to/bundle\"}'");
	if (oci_state_parse(text, *len, st, err) < 0)
		return -1;
	if (oci_bundle_read(st, buf, len, err) < 0) {
		oci_state_free(st);
		return -1;
	}
	return 0;
}
