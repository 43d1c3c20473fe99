/* selinux-check: not built yet; the applet exists so the table is complete.
 * See: SPEC sections 5 and 6. */
#include "common/applet.h"
#include "common/log.h"

#include <stdio.h>

const char selinux_check_usage[] = "usage: ocidec selinux-check [-c DIR] [--json] [VENDOR...]\\n\\nReport SELinux mode, the ocidec policy module, booleans and inventory labels.\\n";

APPLET_MAIN(selinux_check)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "%s: not implemented yet\n", log_prog);
	return EXIT_FAIL;
}
