/* json.c: see json.h. */
#include "formats/json.h"

#include "base/util.h"

#include <stdlib.h>
#include <string.h>

/* The next number token of the JSON text at *P (below END): strings are
 * skipped whole (escapes pairwise), true/false/null hold no digit. cJSON has
 * checked the text already; this only finds where each number is. */
static bool next_number(const char **p, const char *end, const char **tok, size_t *toklen)
{
	const char *s = *p;

	while (s < end) {
		if (*s == '"') {
			for (s++; s < end && *s != '"'; s++)
				if (*s == '\\')
					s++;
			s++;
		} else if (*s == '-' || (*s >= '0' && *s <= '9')) {
			*tok = s;
			while (s < end && *s && strchr("+-0123456789.eE", *s))
				s++;
			*toklen = (size_t)(s - *tok);
			*p = s;
			return true;
		} else {
			s++;
		}
	}
	*p = s;
	return false;
}

/* Give each number under ITEM, in document order, its token; false when the
 * tokens and the numbers do not pair up */
static bool attach(cJSON *item, const char **p, const char *end)
{
	for (; item; item = item->next) {
		if (cJSON_IsNumber(item)) {
			const char *tok;
			size_t n;

			if (!next_number(p, end, &tok, &n))
				return false;
			item->valuestring = xstrndup(tok, n);
		}
		if (item->child && !attach(item->child, p, end))
			return false;
	}
	return true;
}

static void detach(cJSON *item)
{
	for (; item; item = item->next) {
		if (cJSON_IsNumber(item)) {
			free(item->valuestring);
			item->valuestring = NULL;
		}
		detach(item->child);
	}
}

cJSON *json_parse_exact(const char *text, size_t len, const char **end)
{
	const char *stop = NULL, *p = text, *tok;
	size_t n;
	cJSON *root = cJSON_ParseWithLengthOpts(text, len, &stop, 0);

	if (end)
		*end = stop;
	if (!root)
		return NULL;
	/* every number paired with a token, and no token left over */
	if (!attach(root, &p, stop) || next_number(&p, stop, &tok, &n))
		detach(root);  /* cannot happen for a text cJSON took; cJSON's own numbers then */
	return root;
}

/* Numbers with their text become raw values for the printer, and back. */
static void as_raw(cJSON *item, bool raw)
{
	for (; item; item = item->next) {
		if (raw && cJSON_IsNumber(item) && item->valuestring)
			item->type = (item->type & ~0xff) | cJSON_Raw;
		else if (!raw && cJSON_IsRaw(item))
			item->type = (item->type & ~0xff) | cJSON_Number;
		as_raw(item->child, raw);
	}
}

char *json_print_exact(cJSON *root, int formatted)
{
	char *out;

	as_raw(root, true);
	out = formatted ? cJSON_Print(root) : cJSON_PrintUnformatted(root);
	as_raw(root, false);
	if (!out)
		oom();
	return out;
}

char *json_where(const char *text, const char *at)
{
	int line = 1, col = 1;

	for (const char *p = text; at && p < at && *p; p++, col++)
		if (*p == '\n')
			line++, col = 0;
	return xasprintf("line %d, column %d", line, col);
}
