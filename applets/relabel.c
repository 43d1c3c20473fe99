/* relabel: not built yet; the applet exists so the table is complete.
 * See: SPEC sections 5 and 6. */
#include "common/applet.h"
#include "common/log.h"

#include <stdio.h>

const char relabel_usage[] = "usage: ocidec relabel [-c DIR] [-n] [-v] [VENDOR...]\\n\\nSet the SELinux contexts the vendor configs name on the paths `list` prints.\\n  -n  only say what would change\\n  -v  say each change\\n";

APPLET_MAIN(relabel)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "%s: not implemented yet\n", log_prog);
	return EXIT_FAIL;
}
