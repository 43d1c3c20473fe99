/* libFuzzer target: kfd_properties_parse (AMD KFD's topology node
 * properties, read from sysfs). Any input: no crash, and an accepted node's
 * fields are what the first line naming each says, so parsing the same
 * bytes with a line of another name before them changes nothing. */
#include "devices/devices.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char pre[] = "simd_count 304\n";
	char *buf = malloc(size + sizeof(pre));
	struct kfd_node a, b;
	bool ra, rb;

	if (!buf)
		return 0;
	memcpy(buf, pre, sizeof(pre) - 1);
	memcpy(buf + sizeof(pre) - 1, data, size);
	ra = kfd_properties_parse((const char *)data, size, &a);
	rb = kfd_properties_parse(buf, size + sizeof(pre) - 1, &b);
	if (ra != rb || (ra && (a.render_minor != b.render_minor || a.location_id != b.location_id ||
				a.domain != b.domain || a.has_unique_id != b.has_unique_id || a.unique_id != b.unique_id)))
		abort();
	free(buf);
	return 0;
}
