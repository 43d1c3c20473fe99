/* inject: not built yet; the applet exists so the table is complete.
 * See: SPEC sections 5 and 6. */
#include "common/applet.h"
#include "common/log.h"

#include <stdio.h>

const char inject_usage[] = "usage: ocidec inject [-c DIR] --pid PID [--rootfs DIR] [--devices SEL]\\n                     [--features LIST] [--dry-run] VENDOR...\\n\\nInject VENDORs into the mount namespace of process PID.\\n";

APPLET_MAIN(inject)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "%s: not implemented yet\n", log_prog);
	return EXIT_FAIL;
}
