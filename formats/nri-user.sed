# nri-user.sed: NRI 0.11's container user into NRI's api.proto where the
# fetched file (Debian's, NRI 0.8) lacks it: Container's field 21 and the
# message User, as NRI 0.11's pkg/api/api.proto names and numbers them
# (what the runtime's OCI spec has in process.user: containerd 2.3 and
# CRI-O 1.36 fill it). Our own lines; the Makefile applies this only where
# the file has neither (a later api.proto that has them is taken as it is).
/^message Container {/,/^}/ s|^}|  User user = 21; // NRI 0.11 (formats/nri-user.sed)\n}|
$ a\
\
// NRI 0.11: the container process's user and groups (formats/nri-user.sed)\
message User {\
  uint32 uid = 1;\
  uint32 gid = 2;\
  repeated uint32 additional_gids = 3;\
}
