/* report.h: what the two checkers find, in one shape (the check and
 * selinux-check applets).
 *
 * Each finding: the check it belongs to, its status (ok, info, problem),
 * what was found, and how to set it right: FIX a command to paste (it works
 * as printed), or TODO in words where no command does it. As text, a line
 * each as it is found, then a summary:
 *
 *   PROBLEM  CHECK: DETAIL
 *            fix: COMMAND
 *   info     CHECK: DETAIL
 *   N problems: WORDS
 *
 * every value escaped (a name from a config, a spec or a driver root can
 * forge no line and no terminal escape). With --json, one object at the
 * end, valid JSON whatever the names hold (report_json_str): the checker's own fields, then "ok", "problems" (how many) and
 * "checks" ([{"check", "status", "detail", "fix" or "do"}]). The exit
 * status: 0 in order, 1 with a problem, 3 when a check could not be made
 * (neither ready nor a problem found).
 */
#ifndef OCIDEC_REPORT_H
#define OCIDEC_REPORT_H

#include <stdarg.h>
#include <stdbool.h>

#include <cJSON.h>

enum report_status { REPORT_OK, REPORT_INFO, REPORT_PROBLEM };

struct report {
	cJSON *root;    /* the --json object: a checker adds its own fields */
	cJSON *checks;
	int problems;
	bool json;
};

void report_init(struct report *r, bool json);
/* VALUE as KEY of the JSON object O: as it is when it is UTF-8, else
 * escaped as the text shows it (the output stays JSON) */
void report_json_str(cJSON *o, const char *key, const char *value);
void report_add(struct report *r, enum report_status st, const char *check, const char *fix, const char *todo,
		const char *fmt, ...) __attribute__((format(printf, 6, 7)));
void report_vadd(struct report *r, enum report_status st, const char *check, const char *fix, const char *todo,
		 const char *fmt, va_list ap) __attribute__((format(printf, 6, 0)));
/* The end: the summary ("0 problems: OK_WORDS", "N problems: NOT_OK_WORDS")
 * or the JSON object, R freed. The exit status: STATUS when it is not 0
 * (EXIT_UNKNOWN: a check could not be made), else 1 with a problem, 0. */
int report_finish(struct report *r, int status, const char *ok_words, const char *not_ok_words);
void report_free(struct report *r);

#endif
