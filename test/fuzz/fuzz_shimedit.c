/* libFuzzer target: the runtime shim's rewrite of config.json
 * (edits_oci_apply, as runtime.c does it). Any text: no crash, leak or
 * undefined behaviour. A JSON object the edits apply to: with the shim's
 * additions taken out again (the last device, device rule, mount and
 * createContainer hook, and the members it had to make), the document is
 * the input exactly, but for the image's own entry at the device's path,
 * which the edits replace; numbers keep their text (rlimits of 2^64 - 1). */
#include "pipeline/edits.h"
#include "formats/json.h"

#include <cJSON.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static cJSON *get(cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

/* the last item of array A, which must have KEY = VALUE; gone */
static void drop_last(cJSON *a, const char *key, const char *value)
{
	int n = cJSON_GetArraySize(a);
	cJSON *last = n ? cJSON_GetArrayItem(a, n - 1) : NULL;

	if (!last || !cJSON_IsString(get(last, key)) || strcmp(get(last, key)->valuestring, value) != 0)
		abort();
	cJSON_DeleteItemFromArray(a, n - 1);
}

/* OBJ's member K gone when the input had none and it is empty now */
static void drop_made(cJSON *obj, const char *k, const cJSON *orig_obj)
{
	cJSON *m = get(obj, k);

	if (m && !cJSON_GetObjectItemCaseSensitive(orig_obj, k) && !m->child)
		cJSON_DeleteItemFromObjectCaseSensitive(obj, k);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vendor v = { .name = "demo", .cgroup_devices = true, .proc_view = "/proc/driver/demo",
			    .proc_view_set = "params ModifyDeviceFiles: 0" };
	struct plan_item dev = { .kind = KIND_DEVICES, .vendor = &v }, lib = { .kind = KIND_LIBRARIES, .vendor = &v };
	struct plan_view view = { .vendor = &v };
	struct edit_mount mounts[2] = {
		{ &dev, "/dr/dev/demo1", "/dev/demo1", 0 },
		{ &lib, "/dr/lib/libdemo.so.1.0", "/usr/lib/libdemo.so.1.0", 0 },
	};
	struct edit_link link = { 1, "/usr/lib/libdemo.so.1", "libdemo.so.1.0" };
	struct edit_device d = { "/dev/demo1", "/dr/dev/demo1", 'c', 1, 5, 0666, 44, true };
	struct edits e = { .mounts = mounts, .nmounts = 2, .links = &link, .nlinks = 1, .devices = &d,
			   .ndevices = 1, .views = &view, .nviews = 1 };
	cJSON *orig = json_parse_exact((const char *)data, size, NULL), *work, *lx, *olx, *res, *ores, *devs;
	struct oerr err;
	char *a, *b;

	dev.st.st_mode = S_IFCHR | 0666;
	lib.st.st_mode = S_IFREG | 0644;
	strv_push(&view.entries, "gpus/0000:01:00.0");
	strv_push(&e.libdirs, "/usr/lib");
	if (!cJSON_IsObject(orig))
		goto out;
	work = cJSON_Duplicate(orig, 1);
	if (edits_oci_apply(&e, work, "/hook", &err) < 0) {
		cJSON_Delete(work);
		goto out;
	}
	lx = get(work, "linux");
	res = get(lx, "resources");
	drop_last(get(lx, "devices"), "path", "/dev/demo1");
	drop_last(get(res, "devices"), "type", "c");
	drop_last(get(work, "mounts"), "destination", "/usr/lib/libdemo.so.1.0");
	drop_last(get(get(work, "hooks"), "createContainer"), "path", "/hook");
	olx = get(orig, "linux");
	ores = get(olx, "resources");
	/* the node's group (as the user namespace maps it, or left out when it
	 * does not), added to the process's at the end unless it was there; a
	 * user made for it has uid and gid 0 */
	{
		cJSON *p = get(work, "process"), *u = get(p, "user"), *g = get(u, "additionalGids");
		cJSON *ou = get(get(orig, "process"), "user"), *og = get(ou, "additionalGids");
		int n = cJSON_GetArraySize(g), on = cJSON_IsArray(og) ? cJSON_GetArraySize(og) : 0;

		if (n < on || n > on + 1 || (n == on + 1 && !cJSON_IsNumber(cJSON_GetArrayItem(g, n - 1))))
			abort();
		if (n == on + 1)
			cJSON_DeleteItemFromArray(g, n - 1);
		if (cJSON_IsNull(og) && g && !g->child)  /* null is none: the same */
			cJSON_ReplaceItemInObjectCaseSensitive(u, "additionalGids", cJSON_CreateNull());
		else if (cJSON_IsNull(og) && !g)
			cJSON_AddNullToObject(u, "additionalGids");
		if (!ou && u) {
			cJSON_DeleteItemFromObjectCaseSensitive(u, "uid");
			cJSON_DeleteItemFromObjectCaseSensitive(u, "gid");
		}
		drop_made(u, "additionalGids", ou);
		drop_made(p, "user", get(orig, "process"));
		drop_made(work, "process", orig);
	}
	drop_made(res, "devices", ores);
	drop_made(lx, "resources", olx);
	drop_made(lx, "devices", olx);
	drop_made(work, "linux", orig);
	drop_made(get(work, "hooks"), "createContainer", get(orig, "hooks"));
	drop_made(work, "hooks", orig);
	drop_made(work, "mounts", orig);
	/* the image's entry at the device's path is replaced, not kept */
	devs = get(olx, "devices");
	for (int i = cJSON_GetArraySize(devs) - 1; i >= 0; i--) {
		cJSON *p = get(cJSON_GetArrayItem(devs, i), "path");
		if (cJSON_IsString(p) && strcmp(p->valuestring, "/dev/demo1") == 0)
			cJSON_DeleteItemFromArray(devs, i);
	}
	a = json_print_exact(orig, 0);
	b = json_print_exact(work, 0);
	if (strcmp(a, b) != 0)
		abort();
	free(a);
	free(b);
	cJSON_Delete(work);
out:
	cJSON_Delete(orig);
	strv_free(&view.entries);
	strv_free(&e.libdirs);
	return 0;
}
