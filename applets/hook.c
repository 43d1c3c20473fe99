/* hook: not built yet; the applet exists so the table is complete.
 * See: SPEC sections 5 and 6. */
#include "common/applet.h"
#include "common/log.h"

#include <stdio.h>

const char hook_usage[] = "usage: ocidec hook [--dry-run] [STAGE] < STATE\\n\\nAn OCI runtime hook (prestart, createRuntime): reads the container state on\\nstdin and injects the active vendors into the container.\\n";

APPLET_MAIN(hook)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "%s: not implemented yet\n", log_prog);
	return EXIT_FAIL;
}
