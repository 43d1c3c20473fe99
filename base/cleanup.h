/* cleanup.h: __attribute__((cleanup)) helpers for the types that util.h's
 * (memory, fds, string lists) do not cover: a parsed cJSON tree, an open
 * directory, a stdio stream. One per owned type, as in crun; hand a value
 * on by setting the local to NULL. */
#ifndef OCIDEC_CLEANUP_H
#define OCIDEC_CLEANUP_H

#include <dirent.h>
#include <stdio.h>
#include <cJSON.h>

static inline void cleanup_jsonp(cJSON **j)
{
	cJSON_Delete(*j);  /* NULL: nothing */
}

static inline void cleanup_dirp(DIR **d)
{
	if (*d)
		closedir(*d);
}

static inline void cleanup_filep(FILE **f)
{
	if (*f)
		fclose(*f);
}

#define _cleanup_json_ __attribute__((cleanup(cleanup_jsonp)))
#define _cleanup_dir_ __attribute__((cleanup(cleanup_dirp)))
#define _cleanup_file_ __attribute__((cleanup(cleanup_filep)))

#endif
