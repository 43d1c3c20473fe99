/* The NRI driver: nothing registered with an engine. The plugin
 * (ocidec-nri(1)) runs beside containerd or CRI-O and answers their NRI
 * calls; install --wait serves it until SIGTERM (engine_wait). See
 * engine.h */
#include "engines/engine.h"

#include "engines/cdispec.h"
#include "engines/ctrd.h"
#include "base/log.h"
#include "engines/nri.h"
#include "engines/nrictl.h"
#include "engines/nriplugin.h"
#include "base/out.h"

#include <errno.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NRI_TABLE "plugins.\"io.containerd.nri.v1.nri\""

/* check: containerd's NRI section as its dump prints it (NRI on or off,
 * the default validator and what it rejects) and the plugin of ocidec's
 * default name, as its control socket answers (registered, with which
 * runtime: CDI devices or the edits) */
/* containerd's facts, from its driver: the runtime whose NRI section
 * check reads (CRI-O's is not read) */
static const struct engine *containerd_engine(void)
{
	for (const struct engine_ops *const *d = engine_drivers; *d; d++)
		if (strcmp((*d)->name, "containerd") == 0)
			return (*d)->daemon;
	return NULL;
}

static void nri_check(struct engine_check *c)
{
	const struct engine *ctrd = containerd_engine();
	_cleanup_free_ char *conf = NULL, *dump = NULL, *disable = NULL, *validator = NULL, *hooks = NULL,
			    *required = NULL;
	char line[300] = "";
	struct oerr err;
	size_t len;
	int fd;
	ssize_t n;

	if (geteuid() != 0 || !ctrd || !ctrd_binary(c->root, ctrd))
		return;
	conf = engine_host_read(c->root, "/etc/containerd/config.toml");
	if (ctrd_dump_as(c->root, ctrd, conf, true, &dump, &len, &err) < 0 || !mem_find(dump, len, "io.containerd.nri.v1.nri", 24))
		return;   /* (containerd's own line says why; 1.6: no NRI) */
	disable = ctrd_get_key(dump, NRI_TABLE, "disable");
	validator = ctrd_get_key(dump, NRI_TABLE ".default_validator", "enable");
	hooks = ctrd_get_key(dump, NRI_TABLE ".default_validator", "reject_oci_hook_adjustment");
	required = ctrd_get_key(dump, NRI_TABLE ".default_validator", "required_plugins");
	fd = nrictl_ask("ocidec", NRICTL_STATUS, NULL, NULL);
	if (fd >= 0) {
		struct timeval tv = { .tv_sec = 2 };

		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		n = read(fd, line, sizeof(line) - 1);
		line[n > 0 ? n : 0] = '\0';
		line[strcspn(line, "\n")] = '\0';
		close(fd);
	}
	if (disable && strcmp(disable, "true") == 0) {
		if (*line)
			engine_advise(c, ENGINE_PROBLEM, "nri", "set disable = false in [" NRI_TABLE "] and restart "
				      "containerd (ocidec-nri(1), ENABLING)", "containerd's NRI is off: the ocidec nri "
				      "plugin that runs here gets no container");
		return;
	}
	if (strncmp(line, "registered with ", 16) == 0) {
		const char *rt = line + 16, *as = strstr(rt, " as ");
		_cleanup_free_ char *runtime = as ? xstrndup(rt, (size_t)(as - rt)) : xstrdup(rt);

		engine_say(c, ENGINE_OK, "nri", NULL, "NRI on, ocidec's plugin %s: a container's devices go as %s", line,
			   nri_takes_cdi(runtime) ? "CDI devices of ocidec's specs where current, else as edits with "
			   "the cache hook" : "edits with the cache hook (this runtime takes no CDI devices from a plugin)");
		c->registered = true;
		if (validator && strcmp(validator, "true") == 0 && hooks && strcmp(hooks, "true") == 0)
			engine_advise(c, nri_takes_cdi(runtime) ? ENGINE_INFO : ENGINE_PROBLEM, "nri",
				      nri_takes_cdi(runtime) ? "keep the specs current (ocidec-cdi-refresh.service, or "
				      "ocidec nri --cdi-dir /var/run/cdi)" : "turn reject_oci_hook_adjustment off, or "
				      "upgrade containerd to 2.1 or later",
				      "NRI's default validator rejects OCI hooks: %s", nri_takes_cdi(runtime) ?
				      "a container whose spec is not current (the plugin gives the edits then) is refused" :
				      "every container given devices by ocidec's plugin is refused");
	} else if (required && (strstr(required, "\"ocidec\"") || strstr(required, "'ocidec'"))) {
		engine_advise(c, ENGINE_PROBLEM, "nri", "start the plugin (systemctl enable --now ocidec-nri.service, "
			      "or the DaemonSet)", "NRI's default validator requires the plugin ocidec "
			      "(required_plugins), and none is registered: %s", *line ? line : "no ocidec nri runs here");
	} else if (*line) {
		engine_say(c, ENGINE_INFO, "nri", NULL, "NRI on; ocidec's plugin: %s", line);
	}
	if (validator && strcmp(validator, "true") == 0)
		engine_say(c, ENGINE_INFO, "nri", NULL, "NRI's default validator on (reject_oci_hook_adjustment %s, "
			   "required_plugins %s)", hooks ? hooks : "false", required ? required : "[]");
}

const struct engine_ops engine_nri = {
	.name = "nri",
	.usage = "  nri           nothing registered: with --wait, the NRI plugin (ocidec-nri(1)) runs\n"
		 "                until SIGTERM, no engine restarted; on the host, ocidec-nri.service\n",
	.words = (const struct engine_word[]){ { "nri", 1, NULL }, { NULL, 0, NULL } },
	.check = nri_check,
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
