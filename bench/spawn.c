/* bench/spawn.c: the wall time of exec-ing two commands, alternating.
 *
 *   spawn N STDIN REF [ARGS...] -- OURS [ARGS...]
 *
 * Runs REF, then OURS, N times over (posix_spawn, stdin from the file STDIN,
 * stdout and stderr to /dev/null, waited for), and prints the median of each
 * in microseconds and their ratio: "REF_US OURS_US RATIO". Alternating one
 * run each, drift on a busy machine hits both alike; the medians leave out
 * the runs a preemption spoiled. What a shell loop would add (a fork of the
 * shell per run) is left out of both. Exit 1 when a run fails.
 */
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* One run of ARGV: its wall time, or -1 when it did not exit 0 */
static double run(char **argv, const char *in)
{
	posix_spawn_file_actions_t fa;
	double t0, t;
	pid_t pid;
	int status;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, in, O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	t0 = now_us();
	if (posix_spawn(&pid, argv[0], &fa, NULL, argv, environ) != 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	t = now_us() - t0;
	posix_spawn_file_actions_destroy(&fa);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? t : -1;
}

int main(int argc, char **argv)
{
	int n = argc > 4 ? atoi(argv[1]) : 0, sep = 0;
	double *a, *b;

	for (int i = 3; i < argc; i++)
		if (strcmp(argv[i], "--") == 0)
			sep = i;
	if (n <= 0 || sep <= 3 || sep + 1 >= argc) {
		fprintf(stderr, "usage: spawn N STDIN REF [ARGS...] -- OURS [ARGS...]\n");
		return 2;
	}
	argv[sep] = NULL;
	a = calloc((size_t)n, sizeof(*a));
	b = calloc((size_t)n, sizeof(*b));
	if (!a || !b)
		return 1;
	for (int i = 0; i < n; i++) {
		a[i] = run(argv + 3, argv[2]);
		b[i] = run(argv + sep + 1, argv[2]);
		if (a[i] < 0 || b[i] < 0) {
			fprintf(stderr, "spawn: %s failed\n", a[i] < 0 ? argv[3] : argv[sep + 1]);
			return 1;
		}
	}
	qsort(a, (size_t)n, sizeof(*a), cmp);
	qsort(b, (size_t)n, sizeof(*b), cmp);
	printf("%.1f %.1f %.3f\n", a[n / 2], b[n / 2], b[n / 2] / a[n / 2]);
	return 0;
}
