/* libFuzzer target: install's daemon.json merge (docker_json_merge). Any
 * text: no crash, leak or undefined behaviour. A JSON object: after adding
 * the runtime, the document without runtimes.NAME is the input without it,
 * every other key and number's text kept; taking it out again gives the
 * same; a second add changes nothing. */
#include "engines/dockerjson.h"
#include "formats/json.h"

#include <cJSON.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* TEXT parsed, runtimes.ocidec taken out (and runtimes, when that empties
 * it and EMPTIED), printed exactly; NULL when not an object */
static char *without_ours(const char *text, int emptied)
{
	cJSON *j = json_parse_exact(text, strlen(text), NULL), *rt;
	char *out;

	if (!cJSON_IsObject(j)) {
		cJSON_Delete(j);
		return NULL;
	}
	rt = cJSON_GetObjectItemCaseSensitive(j, "runtimes");
	if (cJSON_IsObject(rt)) {
		while (cJSON_GetObjectItemCaseSensitive(rt, "ocidec"))  /* every one: a file may repeat it */
			cJSON_DeleteItemFromObjectCaseSensitive(rt, "ocidec");
		if (emptied && !rt->child)
			cJSON_DeleteItemFromObjectCaseSensitive(j, "runtimes");
	}
	out = json_print_exact(j, 0);
	cJSON_Delete(j);
	return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), *added, *again, *removed, *a, *b, *c;
	struct oerr err;

	memcpy(text, data, size);
	text[size] = '\0';
	if (strlen(text) != size) {  /* a NUL inside: not a file's text */
		free(text);
		return 0;
	}
	added = docker_json_merge(text, "ocidec", "/shim", &err);
	if (!added) {
		free(text);
		return 0;
	}
	again = docker_json_merge(added, "ocidec", "/shim", &err);
	removed = docker_json_merge(added, "ocidec", NULL, &err);
	if (!again || strcmp(again, added) != 0 || !removed)
		abort();
	/* the input's own runtimes object (even empty) stays after the add;
	 * one the add made goes with ours */
	{
		cJSON *j = *text ? json_parse_exact(text, size, NULL) : NULL;
		int had = cJSON_GetObjectItemCaseSensitive(j, "runtimes") != NULL;

		cJSON_Delete(j);
		a = *text ? without_ours(text, 0) : NULL;
		b = without_ours(added, !had);
		c = NULL;
	}
	if (a && b && strcmp(a, b) != 0)
		abort();
	free(a);
	a = *text ? without_ours(text, 1) : NULL;
	free(c);
	c = *removed ? without_ours(removed, 1) : NULL;
	if (a && c && strcmp(a, c) != 0)
		abort();
	free(a), free(b), free(c);
	/* --set-as-default --enable-cdi: set twice is set once; unset takes
	 * both out (docker_json_set, docker_json_unset) */
	{
		char *s1 = docker_json_set(added, "ocidec", true, &err), *s2 = s1 ? docker_json_set(s1, "ocidec", true, &err) : NULL;
		char *u = s1 ? docker_json_unset(s1, "ocidec", true, &err) : NULL;
		cJSON *j = u ? json_parse_exact(u, strlen(u), NULL) : NULL;
		const cJSON *d = cJSON_GetObjectItemCaseSensitive(j, "default-runtime");
		const cJSON *f = cJSON_GetObjectItemCaseSensitive(j, "features");

		if (s1 && (!s2 || strcmp(s1, s2) != 0 || !u || (cJSON_IsString(d) && strcmp(d->valuestring, "ocidec") == 0) ||
			   cJSON_GetObjectItemCaseSensitive(f, "cdi")))
			abort();
		cJSON_Delete(j);
		free(s1), free(s2), free(u);
	}
	free(text), free(added), free(again), free(removed);
	return 0;
}
