/* The NRI driver: nothing registered with an engine. The plugin
 * (ocidec-nri(1)) runs beside containerd or CRI-O and answers their NRI
 * calls; install --wait serves it until SIGTERM (engine_wait). See
 * engine.h */
#include "engines/engine.h"

#include "engines/cdispec.h"
#include "base/log.h"
#include "engines/nrictl.h"
#include "engines/nriplugin.h"
#include "base/out.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

const struct engine_ops engine_nri = {
	.name = "nri",
	.words = (const struct engine_word[]){ { "nri", 1, NULL }, { NULL, 0, NULL } },
	.note = "ocidec install: NRI: nothing to register; the plugin is `ocidec nri` (on the host: systemctl enable "
		"--now ocidec-nri.service), and containerd 1.7 needs NRI on (ocidec-nri(1))",
};

/* The NRI plugin, in a child entered into the host root S->host
 * (everything it reads and names is the node's): its pid, or -1 (said) */
static pid_t nri_child(const struct engine_serve *s)
{
	pid_t pid;

	out_flush();   /* (not twice) */
	pid = fork();
	if (pid == 0) {
		struct oerr e = { 0 };
		char *dir = xasprintf("%s/etc/ocidec.d", s->prefix), *hook = xasprintf("%s/ocidec", s->bin);
		struct nri_opts o = { .dir = dir, .socket = NRI_SOCKET, .hook = hook, .name = s->name,
				      .index = "50", .cdi_dir = "/var/run/cdi" };
		int r;

		if (chroot(s->host) < 0 || chdir("/") < 0) {
			log_warn("chroot %s: %s", s->host, strerror(errno));
			_exit(EXIT_FAIL);
		}
		r = nri_plugin(&o, &e);
		if (r < 0)
			log_oerr(&e);
		_exit(r < 0 ? EXIT_USAGE : r == 1 ? NRI_HANDED_OVER : EXIT_OK);
	}
	if (pid < 0)
		log_warn("fork: %s: no NRI plugin", strerror(errno));
	return pid;
}

/* A child entered into the host root of S runs FN(S); its exit status
 * (-1: none) */
static int in_host(const struct engine_serve *s, int (*fn)(const struct engine_serve *s))
{
	pid_t pid;
	int st;

	out_flush();
	pid = fork();
	if (pid == 0)
		_exit(chroot(s->host) == 0 && chdir("/") == 0 ? fn(s) : EXIT_FAIL);
	while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	out_flush();
	return pid > 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* No plugin of the name answers (1): no socket, or no one listening on it;
 * a plugin slow to answer is one */
static int none_answers(const struct engine_serve *s)
{
	int c = nrictl_ask(s->name, NRICTL_STATUS, NULL, NULL);

	return c < 0 && (errno == ENOENT || errno == ECONNREFUSED) ? 1 : 0;
}

/* The CDI specs the plugin wrote, removed (the node's /var/run is a link) */
static int specs_off(const struct engine_serve *s)
{
	_cleanup_free_ char *dir = xasprintf("%s/etc/ocidec.d", s->prefix);

	return cdi_unrefresh(dir, "/var/run/cdi");
}

int engine_wait(const sigset_t *sigs, const struct engine_serve *s)
{
	pid_t child = s ? nri_child(s) : -1;
	int sig, st;

	for (;;) {
		struct timespec tick = { .tv_sec = NRI_CDI_TICK };
		siginfo_t si;

		sig = sigtimedwait(sigs, &si, s && child < 0 ? &tick : NULL);
		if (sig < 0 && errno == EAGAIN && s && in_host(s, none_answers) == 1) {
			/* handed over, and the newer plugin is gone (its pod
			 * deleted before it was ready): this one serves again */
			out("ocidec install: no NRI plugin serves any more: started again\n");
			child = nri_child(s);
		}
		if (sig < 0)
			continue;
		if (sig != SIGCHLD)
			break;
		if (child <= 0 || waitpid(child, &st, WNOHANG) != child)
			continue;
		if (WIFEXITED(st) && WEXITSTATUS(st) == NRI_HANDED_OVER) {
			out("ocidec install: the NRI plugin handed its connection over to a newer one\n");
			child = -1;
		} else {
			out("ocidec install: the NRI plugin ended (%s %d): started again\n",
			    WIFEXITED(st) ? "exit" : "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
			sleep(1);
			child = nri_child(s);
		}
		out_flush();
	}
	if (child > 0) {
		kill(child, SIGTERM);
		while (waitpid(child, &st, 0) < 0 && errno == EINTR)
			;
	}
	return sig;
}

void engine_nri_specs_off(const struct engine_serve *s)
{
	in_host(s, specs_off);
}
