/* libFuzzer target: the API client's answer path (engines/kubeapi.c): the
 * bytes a server sends after TLS, fed to nghttp2's client session that
 * sent one request, through the callbacks that collect the status and a
 * body bounded to 4 MiB (kube_fuzz_answer); and the refusal text made of
 * a Status object (kube_status_text). Any bytes: no crash, leak or
 * undefined behaviour; the refusal text one printable line. */
#include "engines/kubeapi.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct oerr err;
	char *s;

	kube_fuzz_answer(data, size, &err);
	s = kube_status_text(404, (const char *)data, size);
	for (const char *c = s; *c; c++)
		if (*c < ' ' || *c > '~')
			abort();
	free(s);
	return 0;
}
