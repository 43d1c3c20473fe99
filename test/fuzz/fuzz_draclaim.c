/* libFuzzer target: what ocidec dra takes from the API server's JSON: a
 * ResourceClaim (dra_claim_parse) and a ResourceSlice list
 * (dra_slices_parse). Any bytes: no crash, leak or undefined behaviour; a
 * claim taken names only devices of our vendors, in this node's pool, each
 * one a device name of its vendor gives back; a refusal is one line naming
 * the claim. */
#include "engines/draclaim.h"
#include "engines/draslice.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct vendor vs[2];
	struct config cfg = { .vendors = vs, .n = 2 };
	struct dra_claim_ref ref = { .ns = "ns", .name = "c", .uid = size & 1 ? "u1" : NULL, .node = "n1" };
	char *text = malloc(size + 1);
	struct dra_result r;
	struct oerr err = { 0 };
	struct dra_slice_seen *seen;
	cJSON *doc;
	size_t n;

	vs[0] = (struct vendor){ .name = (char *)"nvidia", .cdi_kind = (char *)"nvidia.com/gpu" };
	vs[1] = (struct vendor){ .name = (char *)"demo", .cdi_kind = (char *)"ocidec.io/demo" };
	memcpy(text, data, size);
	text[size] = '\0';
	if (dra_claim_parse(text, size, &cfg, &ref, &r, &err) == 0) {
		for (size_t i = 0; i < r.n; i++) {
			char *name = dra_device_name(r.v[i].v, r.v[i].index);

			if (strcmp(r.v[i].pool, "n1") != 0 || strcmp(name, r.v[i].device) != 0 ||
			    (r.v[i].v != &vs[0] && r.v[i].v != &vs[1]))
				abort();
			free(name);
		}
		dra_result_free(&r);
	} else if (strncmp(err.msg, "claim ns/c: ", 12) != 0 || strchr(err.msg, '\n') || err.code != EXIT_USAGE) {
		abort();
	}
	if (dra_slices_parse(text, size, "n1", &doc, &seen, &n, &err) == 0)
		for (size_t i = 0; i < n; i++)
			if (!seen[i].name || !seen[i].resource_version || seen[i].generation < 0 ||
			    !strstr(seen[i].driver, ".ocidec.io"))
				abort();
	free(seen);
	cJSON_Delete(doc);
	free(text);
	return 0;
}
