/* libFuzzer target: the bundle's config.json as the hook reads it
 * (oci_config_parse: root, env, annotations, mounts, namespaces,
 * capabilities), then the activation decision on what was read, against
 * a fixed vendor config with every selection source, aliases, features and
 * the unprivileged limits. No crash, leak or undefined behaviour; a parsed
 * root is never "/"; the idle path (activation_possible, which decodes
 * escapes and parses nothing) never calls idle a config that activates. */
#include "pipeline/activate.h"
#include "base/log.h"
#include "pipeline/oci.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char ini[] =
	"[vendor]\nname = v\nactivation_flag = OCI_V\nactivation_aliases = V_DEVICES OTHER\n"
	"feature_env = V_CAPS\nselection = env annotation mounts\n"
	"unprivileged_selection = annotation mounts\nunprivileged_features = a\n"
	"device_list_dir = /var/run/v-devices\nper_device_nodes = v%u\n"
	"[feature.a]\ndevices = /dev/x\n[feature.b]\ninclude = a\n";

static struct config cfg;
static struct strv keys;
static char dir[64], path[96];

static void cleanup(void)
{
	unlink(path);
	rmdir(dir);
}

static void setup(void)
{
	struct oerr err;
	int fd;

	snprintf(dir, sizeof(dir), "/tmp/ocidec-fuzz-oci-%d", (int)getpid());
	snprintf(path, sizeof(path), "%s/v.ini", dir);
	if (mkdir(dir, 0755) < 0 || (fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644)) < 0 ||
	    write(fd, ini, sizeof(ini) - 1) != sizeof(ini) - 1 || close(fd) < 0 ||
	    config_load(&cfg, dir, &err) < 0 || config_activation_keys(dir, &keys) < 0)
		abort();
	atexit(cleanup);
	log_threshold = LOG_ERROR;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct oci_config c;
	struct activation act[1];
	struct strv none = { 0 };
	struct oerr err;
	int n;

	if (!cfg.n)
		setup();
	if (oci_config_parse((const char *)data, size, "/bundle", &c, &err) < 0) {
		if (!err.msg[0])
			abort();
		return 0;
	}
	if (!c.root || strcmp(c.root, "/") == 0 || c.root[0] != '/')
		abort();
	n = activate(&cfg, &c, &none, act, &err);
	if (n > 0)
		activation_free(act, (size_t)n);
	if (n != 0 && !activation_possible(&keys, NULL, &none, (const char *)data, size))
		abort();
	oci_config_free(&c);
	return 0;
}
