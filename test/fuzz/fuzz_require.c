/* libFuzzer target: require_eval (an image's NVIDIA_REQUIRE_* expression)
 * and require_cuda_version (libcuda's text). Any input: an answer of 1, 0
 * or -1, a reason for 0 and -1 and none for 1; the verdict does not depend
 * on surrounding blanks; a version found is a dotted number that the
 * input holds after the compiler's mark. */
#include "pipeline/require.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct require_props props[] = { { "12.2", "535.261.03" }, { NULL, "550.1" }, { "13.0", NULL } };
	char *expr = malloc(size + 3), *why = NULL, *v;
	int r;

	if (!expr)
		return 0;
	memcpy(expr + 1, data, size);
	expr[size + 1] = '\0';
	for (size_t i = 0; i < sizeof(props) / sizeof(*props); i++) {
		int again;

		r = require_eval(expr + 1, &props[i], &why);
		if (r < -1 || r > 1 || (r == 1) != (why == NULL))
			abort();
		free(why);
		/* blanks around the whole change nothing */
		expr[0] = ' ';
		expr[size + 1] = ' ';
		expr[size + 2] = '\0';
		again = require_eval(expr, &props[i], &why);
		free(why);
		expr[size + 1] = '\0';
		if (again != r && strlen(expr + 1) == size)
			abort();
	}
	v = require_cuda_version((const char *)data, size);
	if (v) {
		if (!isdigit((unsigned char)v[0]) || strspn(v, "0123456789.") != strlen(v) ||
		    !memmem(data, size, v, strlen(v)))
			abort();
		free(v);
	}
	free(expr);
	return 0;
}
