/* json.h: cJSON documents whose numbers come back out as they went in.
 *
 * cJSON keeps a number as a double: 18446744073709551615 (Docker's
 * --ulimit memlock=-1, a uint64 in config.json) would be printed as
 * 1.8446744073709552e+19, which runc refuses, and every integer above 2^53
 * would be rounded. A document read with json_parse_exact keeps each
 * number's text, and json_print_exact prints that text again; numbers added
 * later print as cJSON prints them.
 */
#ifndef OCIDEC_JSON_H
#define OCIDEC_JSON_H

#include <stddef.h>

#include "cJSON.h"

/* TEXT (LEN bytes) parsed by cJSON, with each number's own text; NULL when
 * it is no JSON (END, if given, then points where cJSON stopped). Text
 * after the value is left alone, as cJSON_ParseWithLengthOpts does. */
cJSON *json_parse_exact(const char *text, size_t len, const char **end);

/* Where AT (a pointer into TEXT, as json_parse_exact's END gives it) is:
 * "line L, column C", malloc'd */
char *json_where(const char *text, const char *at);

/* ROOT printed (FORMATTED: cJSON_Print's layout, else unformatted), numbers
 * read by json_parse_exact in their own text; malloc'd. */
char *json_print_exact(cJSON *root, int formatted);

#endif
