/* libFuzzer target: the container state the hook reads on stdin
 * (oci_state_parse, cJSON). Any input must parse or be refused with one
 * message, without a crash, leak or undefined behaviour; a parsed state
 * always has an absolute bundle and a root that is not "/". */
#include "pipeline/oci.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct oci_state st;
	struct oerr err;

	if (oci_state_parse((const char *)data, size, &st, &err) == 0) {
		if (!st.bundle || st.bundle[0] != '/' || (st.root && strcmp(st.root, "/") == 0) ||
		    st.ann.n % 2)
			abort();
		oci_state_free(&st);
	} else if (!err.msg[0]) {
		abort();
	}
	return 0;
}
