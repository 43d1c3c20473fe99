/* The NRI driver: nothing registered with an engine. The plugin
 * (ocidec-nri(1)) runs beside containerd or CRI-O and answers their NRI
 * calls; install --wait runs it until SIGTERM. See engine.h */
#include "common/engine.h"

const struct engine_ops engine_nri = {
	.name = "nri",
	.rts = ENGINE_RT_NRI,
	.facts = -1,
	.note = "ocidec install: NRI: nothing to register; the plugin is `ocidec nri` (on the host: systemctl enable "
		"--now ocidec-nri.service), and containerd 1.7 needs NRI on (ocidec-nri(1))",
};
