/* ere.h: matching POSIX extended regular expressions, as SELinux
 * file_contexts entries are written.
 *
 * selinux-check asks one question of an entry: does this path match it
 * (libselinux's "^ENTRY$", regexec's question)? libc's regcomp answers it too, at 40 KB of the
 * static binary (its wide-character tables included); this answers it in
 * linear time (a Thompson NFA run over the string: no backtracking, no
 * pattern makes it slow) with the ERE syntax file_contexts use: literals,
 * '\' escapes (a punctuation character, literally; "\d", "\w", "\s" and
 * their complements as musl's regcomp and PCRE read them; any other letter
 * or digit, and "\<", "\>", is refused), '.', bracket expressions
 * ("[^/]", ranges, "[:digit:]" and the other classes of the C locale; a
 * '\' inside one is itself, as POSIX has it), groups, '|', '*', '+', '?',
 * "{N}", "{N,}", "{N,M}" (at most 255), '^' and '$'. Bytes are matched as
 * bytes (the C locale).
 */
#ifndef OCIDEC_ERE_H
#define OCIDEC_ERE_H

/* Does PATTERN match somewhere in S, as regexec(REG_EXTENDED | REG_NOSUB)
 * answers ('^' and '$' the ends of S)? 1 yes, 0 no, -1 PATTERN is not an
 * expression this reads (unbalanced, a repetition of nothing, a bound over
 * 255, an unknown class), as regcomp refuses it. */
int ere_search(const char *pattern, const char *s);

#endif
