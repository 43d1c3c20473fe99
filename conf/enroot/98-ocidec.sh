#!/bin/bash
# ocidec's Enroot hook (/etc/enroot/hooks.d/98-ocidec.sh): the devices of
# every vendor the container's environment asks for (NVIDIA_VISIBLE_DEVICES,
# AMD_VISIBLE_DEVICES, HABANA_VISIBLE_DEVICES, OCI_<VENDOR>, ...), decided
# and given as ocidec's OCI hook gives them, under the vendor files in
# /etc/ocidec/ocidec.d. Enroot runs it in the container's namespaces
# before pivot_root, with ENROOT_ROOTFS and ENROOT_ENVIRON set.
#
# The variables of the user's environment come first and win, then
# ENROOT_ENVIRON's from its last line up: Enroot writes the image's
# /etc/environment first, then environ.d and `enroot start --env`, and the
# later line wins (as in Enroot's own 98-nvidia.sh, which keeps working
# beside this one when nvidia-container-cli is ocidec's: a second run
# changes nothing). ocidec inject --environ takes the first of a name.
# Enroot gives no device cgroup: --no-cgroups, as 98-nvidia.sh. A container
# that names GPUs but no NVIDIA_DRIVER_CAPABILITIES gets nvidia.ini's
# driver_feature (compute and utility), as under Docker or podman; Enroot's
# 98-nvidia.sh gives utility alone then.
set -euo pipefail

if [ -z "${ENROOT_ROOTFS-}" ] || [ -z "${ENROOT_ENVIRON-}" ]; then
	echo "98-ocidec.sh: an Enroot hook: ENROOT_ROOTFS and ENROOT_ENVIRON are not set" >&2
	exit 1
fi
{ env; tac "${ENROOT_ENVIRON}"; } |
	exec /usr/bin/ocidec inject --environ - --rootfs "${ENROOT_ROOTFS}" --no-cgroups
