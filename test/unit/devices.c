/* Unit tests: the device layer's typed selection (common/devices.c) and
 * what activation makes of a container's value (vendor_select, for a
 * vendor whose devices are plain indices: no inventory is read). */
#include "common/activate.h"
#include "common/devices.h"
#include "test/unit/tap.h"

#include <stdlib.h>
#include <string.h>

static void test_parse(void)
{
	static const struct { const char *text, *want; } t[] = {
		{ "all", "all" }, { "none", "none" }, { "0", "0" }, { "2,0", "2,0" }, { "1 1,1", "1" },
		{ "0, 3\t7", "0,3,7" }, { ",", "none" }, { "x", NULL }, { "-1", NULL }, { "1234567890", NULL },
		{ "0,GPU-1", NULL }, { "0-3", NULL },
	};

	for (size_t i = 0; i < N_CASES(t); i++) {
		struct selection s;
		struct oerr err;
		int r = selection_parse(t[i].text, &s, &err);
		char *text = r == 0 ? selection_text(&s) : NULL;

		if (!t[i].want)
			CHECK(r < 0 && err.code == EXIT_USAGE && strstr(err.msg, "invalid device selection"),
			      "selection_parse(\"%s\") refused: %s", t[i].text, r < 0 ? err.msg : text);
		else
			CHECK(r == 0 && strcmp(text, t[i].want) == 0, "selection_parse(\"%s\") = %s", t[i].text,
			      text ? text : err.msg);
		free(text);
		if (r == 0)
			selection_free(&s);
	}
}

static void test_select(void)
{
	static const struct { const char *value, *want; } t[] = {
		{ "all", "all" }, { "none", "none" }, { "0,2", "0,2" }, { "2,0,2", "0,2" }, { "0-3", "0,1,2,3" },
		{ "3-3, 1", "1,3" }, { "4096", "4096" }, { "3-1", NULL }, { "0-4097", NULL }, { "4097", NULL },
		{ "GPU-8b6a2c1e-0000-0000-0000-000000000000", NULL },
	};
	struct vendor v = { .name = (char *)"unit" };

	for (size_t i = 0; i < N_CASES(t); i++) {
		struct selection s;
		struct oerr err;
		int r = vendor_select(&v, t[i].value, &s, &err);
		char *text = r == 0 ? selection_text(&s) : NULL;

		if (!t[i].want)
			CHECK(r < 0, "vendor_select(\"%s\") refused: %s", t[i].value, r < 0 ? err.msg : text);
		else
			CHECK(r == 0 && strcmp(text, t[i].want) == 0 && (s.kind != SEL_SOME || s.n > 0),
			      "vendor_select(\"%s\") = %s", t[i].value, text ? text : err.msg);
		free(text);
		if (r == 0)
			selection_free(&s);
	}
}

static void test_set(void)
{
	bool bits[8] = { false, true, false, false, false, false, true, false }, none[8] = { false };
	struct mig_instance m = { 1, 2, 0 };
	struct selection s = { 0 };
	char *text;

	CHECK(selection_has(&s, 5), "a zeroed selection is all of them");
	selection_set(&s, bits, 8);
	CHECK(s.kind == SEL_SOME && s.n == 2 && selection_has(&s, 1) && selection_has(&s, 6) && !selection_has(&s, 0),
	      "selection_set: the bits set, ascending");
	selection_add_mig(&s, &m);
	selection_add_mig(&s, &m);
	text = selection_text(&s);
	CHECK(s.nmig == 1 && strcmp(text, "1,6, MIG 1/2/0") == 0, "a MIG device once: %s", text);
	free(text);
	selection_set(&s, none, 8);
	CHECK(s.kind == SEL_NONE && s.nmig == 1 && !selection_has(&s, 1), "no bit: none, its MIG device kept");
	selection_free(&s);
}

int main(void)
{
	test_parse();
	test_select();
	test_set();
	return done();
}
