/* The host's install lock: see instlock.h */
#include "engines/instlock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/random.h>
#include <signal.h>
#include <unistd.h>

#define LOCK_NAME "run/ocidec-install.lock"
int instlock_take(int root, const char *host, unsigned timeout, const sigset_t *sigs, int *sig, int *fd,
		  int (*say)(const char *fmt, ...), struct oerr *err)
{
	_cleanup_close_ int run = -1;
	struct timespec tick = { 0, 100 * 1000 * 1000 };
	struct stat st;

	*fd = -1;
	if (mkdirat(root, "run", 0755) < 0 && errno != EEXIST)
		return oerr_set(err, errno, "%s/run", host);
	run = openat(root, "run", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (run < 0)
		return oerr_set(err, errno, "%s/run", host);
	*fd = openat(run, "ocidec-install.lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0600);
	if (*fd < 0)
		return oerr_set(err, errno, "%s/" LOCK_NAME, host);
	if (fstat(*fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077))
		return oerr_set(err, 0, "%s/" LOCK_NAME ": not a regular file of root's that only root may open "
				"(remove it)", host);
	for (unsigned long waited = 0;; waited++) {
		if (flock(*fd, LOCK_EX | LOCK_NB) == 0)
			return 0;
		if (errno != EWOULDBLOCK && errno != EINTR)
			return oerr_set(err, errno, "%s/" LOCK_NAME ": lock", host);
		if (waited == 0) {  /* said at once: a pod's log shows why it waits */
			say("ocidec install: waiting for another install or uninstall (the lock %s/" LOCK_NAME
			    ", %u s at most)\n", host, timeout);
			fflush(stdout);
		}
		if (waited >= 10UL * timeout)
			return oerr_set(err, 0, "%s/" LOCK_NAME ": another ocidec install or uninstall held it for "
					"%u s (--lock-timeout)", host, timeout);
		if (sigs) {
			siginfo_t si;
			int s2 = sigtimedwait(sigs, &si, &tick);
			if (s2 > 0) {
				*sig = s2;
				return oerr_set(err, 0, "signal %d while waiting for the install lock: nothing done", s2);
			}
		} else
			nanosleep(&tick, NULL);
	}
}

static void on_signal(int sig)
{
	(void)sig;
}

/* --wait: SIGTERM and SIGINT blocked from the start (a SIGTERM while we
 * wait for the lock or plan, a containerd dump, waits for us), and this
 * install's own token in the record */
int instlock_wait_prepare(sigset_t *sigs, char owner[INSTLOCK_OWNER], struct oerr *err)
{
	unsigned char r[16];

	sigemptyset(sigs);
	sigaddset(sigs, SIGTERM);
	sigaddset(sigs, SIGINT);
	sigaddset(sigs, SIGCHLD);    /* the NRI plugin's child (--runtime nri) */
	signal(SIGTERM, on_signal);  /* PID 1 of a container drops signals it has no handler for */
	signal(SIGINT, on_signal);
	signal(SIGCHLD, on_signal);
	sigprocmask(SIG_BLOCK, sigs, NULL);
	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		return oerr_set(err, errno, "getrandom");
	for (int i = 0; i < 16; i++)
		snprintf(owner + 2 * i, 3, "%02x", r[i]);
	return 0;
}
