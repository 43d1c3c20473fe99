/* libFuzzer target: json_parse_exact and json_print_exact (the runtime
 * shim's config.json, Docker's daemon.json). Whatever cJSON takes is taken
 * with the same structure and values; printed and read again it is the same
 * document; and each number comes back in its own text: printing twice
 * gives the same bytes. */
#include "formats/json.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A and B the same document: cJSON's own prints (member order, duplicate
 * keys and each value as a double) alike */
static int same(cJSON *a, cJSON *b)
{
	char *x = cJSON_PrintUnformatted(a), *y = cJSON_PrintUnformatted(b);
	int r = x && y && strcmp(x, y) == 0;

	free(x);
	free(y);
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cJSON *plain = cJSON_ParseWithLengthOpts((const char *)data, size, NULL, 0);
	cJSON *exact = json_parse_exact((const char *)data, size, NULL), *again, *third;
	char *text, *text2;

	if (!plain != !exact)
		abort();
	if (!plain)
		return 0;
	text = json_print_exact(exact, size & 1);
	again = json_parse_exact(text, strlen(text), NULL);
	if (!again || !same(plain, again))
		abort();
	text2 = json_print_exact(again, size & 1);
	third = cJSON_Parse(text2);
	if (strcmp(text, text2) != 0 || !third || !same(plain, third))
		abort();
	free(text);
	free(text2);
	cJSON_Delete(plain);
	cJSON_Delete(exact);
	cJSON_Delete(again);
	cJSON_Delete(third);
	return 0;
}
