/* libFuzzer target: systemd's replies (sdbus_parse) and our calls. Any
 * bytes: no crash, leak or undefined behaviour, a length within the input.
 * A call made for a unit name taken from the input parses back whole, as
 * a method call, with no reply serial. */
#include "pipeline/sdbus.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char text[128], unit[64];
	uint8_t msg[4096];
	struct devcg_rule rules[3] = { { 'c', 195, 255 }, { 'b', 7, 0 }, { 'c', 10, 237 } };
	uint32_t to;
	int type;
	long n = sdbus_parse(data, size, &type, &to, text, sizeof(text));
	size_t k = size < sizeof(unit) - 1 ? size : sizeof(unit) - 1, len;
	char *path;

	if (n > (long)size || strlen(text) >= sizeof(text))
		abort();
	memcpy(unit, data, k);
	unit[k] = '\0';
	for (size_t i = 0; i < k; i++)
		if (!unit[i])
			unit[i] = 'x';
	path = sdbus_unit_path(unit);
	for (int which = 0; which < 2; which++) {
		len = which ? sdbus_set_device_allow(msg, sizeof(msg), 7, unit, rules, (size_t)(size % 4))
			    : sdbus_get_property(msg, sizeof(msg), 7, path, "org.freedesktop.systemd1.Scope", "DevicePolicy");
		if (!len || sdbus_parse(msg, len, &type, &to, text, sizeof(text)) != (long)len || type != 1 || to)
			abort();
		/* every prefix is incomplete */
		if (sdbus_parse(msg, len - 1, &type, &to, text, sizeof(text)) != 0)
			abort();
	}
	free(path);
	free(sdbus_unit((const char *)unit));
	return 0;
}
