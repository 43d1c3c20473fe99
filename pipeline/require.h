/* require.h: an image's requirements on the driver (NVIDIA_REQUIRE_*,
 * ocidec(1), VENDOR CONFIGS, requirements_env), checked before anything
 * is given to the container.
 *
 * An expression is NVIDIA's: terms separated by spaces, any of which may
 * hold ("cuda>=12.0 brand=tesla,driver>=535"); a term's factors separated
 * by commas, all of which must; a factor PROPERTY OP VERSION, OP one of
 * == != < <= > >= and = (==). The properties known here are cuda (the
 * driver's CUDA version) and driver (its version); others (arch, brand:
 * NVML's, which the hook does not run) are left out of their term: looser
 * than NVIDIA's toolkit, which asks NVML, never stricter. */
#ifndef OCIDEC_REQUIRE_H
#define OCIDEC_REQUIRE_H

#include <stdbool.h>
#include <stddef.h>

struct require_props {
	const char *cuda;     /* "12.2"; NULL: unknown */
	const char *driver;   /* "535.261.03"; NULL: unknown */
};

/* Does EXPR hold for PROPS? 1 yes, 0 no, -1 it cannot be told (a property
 * it needs is unknown: *WHY names it) or EXPR is malformed (*WHY says
 * where). *WHY (free it) is set for 0 and -1. */
int require_eval(const char *expr, const struct require_props *props, char **why);

/* Compare dotted decimal versions ("12.2" < "12.10", "535.261.03" >
 * "535.98"; a missing component is 0): <0, 0, >0. */
int version_cmp(const char *a, const char *b);

/* The CUDA version libcuda's embedded PTX compiler says it is ("Cuda
 * compilation tools, release 12.2," in 535's libcuda.so.1: the version
 * cuDriverGetVersion answers), read from the LEN bytes at BUF, never run:
 * the last such text; NULL when there is none. */
char *require_cuda_version(const char *buf, size_t len);

#endif
