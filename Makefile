# ocidec Makefile. ./build.sh fetches the dependency sources first; then:
#   make            build/ocidec: static musl, stripped (size printed), and
#                   build/ARCH/ocidec, the same for the other architecture
#                   (arm64 on amd64, amd64 on arm64: CROSS=ARCH, CROSS= none)
#   make ARCH=arm64 build/arm64/ocidec only (Debian's names: amd64, arm64)
#   make asan       build/ocidec-asan: glibc, -fsanitize=address,undefined
#   make test       the bats suites against build/ocidec
#   make test-asan  the bats suites against build/ocidec-asan
#   make check      both, with one "N passed, N failed" line
#   make unit       the C unit tests (test/unit, sanitizers on)
#   make fuzz       the libFuzzer targets, FUZZ_RUNS inputs each (test/fuzz/run.sh)
#   make demo       the demo (demo.sh)
#   make install    DESTDIR, PREFIX, SYSCONFDIR honoured; make uninstall
#   make dist       build/dist: the source tarball and the dependency sources
#   make rpm        build/rpm: ocidec and ocidec-selinux rpms (rpm/ocidec.spec)
#   make deb        build/deb: the ocidec .deb (deb/, dpkg-buildpackage)
#                   (ARCH=arm64 on amd64, ARCH=amd64 on arm64: that
#                   architecture's, with the cross gcc and its musl)
#   make image      the toolkit image for amd64 and arm64 (Containerfile,
#                   podman): one OCI index, IMAGE in podman's storage and
#                   build/image/ocidec-toolkit-VERSION (an OCI layout)
#   make clean
VERSION   := $(shell cat VERSION 2>/dev/null || echo 0.0.0)
PREFIX    ?= /usr
BINDIR    ?= $(PREFIX)/bin
LIBEXECDIR ?= $(PREFIX)/libexec
SYSCONFDIR ?= /etc
MANDIR    ?= $(PREFIX)/share/man
# systemd's units (ocidec-cdi-refresh.service and .path: the CDI specs kept
# true, see ocidec-cdi(1)); systemd reads /usr/local/lib/systemd/system too
UNITDIR   ?= $(PREFIX)/lib/systemd/system
# udev's rules (60-ocidec-cdi-refresh.rules: the refresh on a driver's
# module load and unload and its devices' coming and going); udev reads
# /usr/local/lib/udev/rules.d too
UDEVDIR   ?= $(PREFIX)/lib/udev/rules.d
# podman (4 and 5) and CRI-O read oci-hooks(5) files from
# /usr/share/containers/oci/hooks.d unless their configuration names other
# directories, whatever PREFIX is (/etc/containers/oci/hooks.d only then)
HOOKSDIR  ?= /usr/share/containers/oci/hooks.d
DESTDIR   ?=

# The architectures, by Debian's names. The native one builds into build/
# with musl-gcc; another into build/ARCH/ with Debian's cross gcc and
# Debian's musl for that architecture (build.sh unpacks it into
# build/deps/ARCH/sysroot). One static binary runs on any kernel of its
# architecture: the page size stays the linker's default (64 KiB on arm64,
# whose kernels have 4, 16 or 64 KiB pages).
uname_arch = $(patsubst x86_64,amd64,$(patsubst aarch64,arm64,$(1)))
NATIVE    := $(call uname_arch,$(shell uname -m))
ARCH      ?= $(NATIVE)
TRIPLET_amd64 := x86_64-linux-gnu
TRIPLET_arm64 := aarch64-linux-gnu
MUSL_amd64    := x86_64-linux-musl
MUSL_arm64    := aarch64-linux-musl
# (the other one where build.sh unpacked its musl: plain make works without)
CROSS     ?= $(foreach a,$(filter-out $(NATIVE),amd64 arm64),$(if $(wildcard build/deps/$(a)/sysroot/.ocidec-source),$(a)))
ifeq ($(ARCH),$(NATIVE))
B         := build
MUSLCC    ?= musl-gcc
DEPAR     ?= gcc-ar
else
B         := build/$(ARCH)
SYSROOT   := $(abspath build/deps/$(ARCH)/sysroot)
MUSLCC    := $(TRIPLET_$(ARCH))-gcc -specs=$(abspath $(B)/musl-gcc.specs)
DEPAR     := $(TRIPLET_$(ARCH))-gcc-ar
CROSS     :=
endif
DEPSRC    := build/deps/src
CC        ?= gcc

APPLETS   := $(shell awk -F'"' '/^APPLET/ { print $$2 }' applets/applets.def)

# inih is built with these, and config.c must see the same ones.
INIFLAGS  := -DINI_HANDLER_LINENO=1 -DINI_CALL_HANDLER_ON_NEW_SECTION=1 \
             -DINI_ALLOW_MULTILINE=1 -DINI_USE_STACK=0 -DINI_ALLOW_REALLOC=1 \
             -DINI_MAX_LINE=65536 -DINI_STOP_ON_FIRST_ERROR=1 \
             -DINI_ALLOW_NO_VALUE=0 -DINI_INLINE_COMMENT_PREFIXES='";\#"'

WARN      := -Wall -Wextra -Werror -Wshadow -Wformat=2 -Wvla
# nghttp2 and mbed TLS are built with these, and what includes their
# headers must see the same ones (nghttp2ver.h is generated into
# $(B)/gen/nghttp2; mbed TLS's configuration is formats/mbedtls_config.h)
NGHTTP2FLAGS := -DNGHTTP2_STATICLIB -DHAVE_ARPA_INET_H=1 -DHAVE_NETINET_IN_H=1 -DHAVE_TIME_H=1 \
             -DHAVE_CLOCK_GETTIME=1
MBEDTLSFLAGS := -DMBEDTLS_CONFIG_FILE='"formats/mbedtls_config.h"'
CPPFLAGS  := -D_GNU_SOURCE -DOCIDEC_VERSION='"$(VERSION)"' -I. -I$(B)/gen -I$(DEPSRC)/cjson -I$(DEPSRC)/inih \
             -I$(DEPSRC)/protobuf-c -I$(DEPSRC)/nghttp2/lib/includes -I$(DEPSRC)/mbedtls/include \
             $(INIFLAGS) $(NGHTTP2FLAGS) $(MBEDTLSFLAGS)
CFLAGS    ?= -Os
# (-Os, and two of its passes off that cost bytes in this code: loop
# invariants kept in registers, calls in tail position turned into jumps;
# 2.5 KB of code, bench/size.sh)
SIZEFLAGS := -fno-move-loop-invariants -fno-optimize-sibling-calls
# (no unwind tables: C without exceptions, stripped: nothing reads them;
# -fno-pie: the static binary is linked at a fixed address anyway, and
# code for one is smaller, its tables of pointers read-only data)
STDFLAGS  := -std=c11 -fno-pie -fno-strict-aliasing -ffunction-sections -fdata-sections \
             -fno-asynchronous-unwind-tables -fno-unwind-tables -fstack-protector-strong -D_FORTIFY_SOURCE=2
ASANFLAGS := -std=c11 -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined \
             -fno-sanitize-recover=undefined

# The library's wings, lowest first (docs/architecture.md: a wing includes
# its own and the ones before it; test/build.bats keeps that)
WINGS     := base safety formats devices pipeline engines
LIB_SRCS  := $(foreach w,$(WINGS),$(wildcard $(w)/*.c))
SRCS      := ocidec.c $(LIB_SRCS) $(wildcard applets/*.c)
DEPS_SRCS := $(DEPSRC)/cjson/cJSON.c $(DEPSRC)/inih/ini.c $(DEPSRC)/protobuf-c/protobuf-c/protobuf-c.c \
             $(DEPSRC)/nri/api.proto $(DEPSRC)/nghttp2/lib/nghttp2_session.c $(DEPSRC)/mbedtls/library/ssl_tls.c
# The NRI plugin's messages as C (protoc-c): NRI's api.proto (build.sh
# fetched it), and ttrpc's envelope (formats/ttrpc.proto).
# ocidec dra's: the kubelet's plugin registration and DRA services
# (formats/pluginregistration.proto, formats/dra.proto).
PB_SRCS   := $(B)/gen/api.pb-c.c $(B)/gen/ttrpc.pb-c.c $(B)/gen/pluginregistration.pb-c.c $(B)/gen/dra.pb-c.c
HDRS      := $(foreach w,$(WINGS),$(wildcard $(w)/*.h)) $(wildcard applets/*.h) applets/applets.def $(PB_SRCS:.c=.h)

MUSL_OBJS := $(SRCS:%.c=$(B)/musl/%.o)
ASAN_OBJS := $(SRCS:%.c=$(B)/asan/%.o)

all: $(B)/ocidec $(CROSS)

# the other architecture: the same Makefile, ARCH=...
$(filter-out $(NATIVE),amd64 arm64): FORCE
	@$(MAKE) --no-print-directory ARCH=$@ CROSS=
FORCE:

# musl-gcc.specs of the other architecture's musl-dev, its paths into the
# unpacked sysroot
$(B)/musl-gcc.specs: $(wildcard $(SYSROOT)/usr/lib/$(MUSL_$(ARCH))/musl-gcc.specs)
	@test -n "$<" || { echo "no musl for $(ARCH) under build/deps/$(ARCH)/sysroot: run ./build.sh first" >&2; exit 1; }
	@mkdir -p $(@D)
	sed 's|\([ L]\)/usr/|\1$(SYSROOT)/usr/|g' $< >$@

# Third-party code: built with the same compiler, without our -Werror.
# (-std=c99: GNU C's `linux` macro would break protoc-c's field names.
# PB_NOUB: protobuf-c 1.4's tag reader shifts a signed int into its sign bit
# on a 5-byte tag, which GCC defines (an extension) and UBSan reports: the
# sanitizer builds leave that one check out for protobuf-c.c.
# -Dsscanf=cjson_sscanf: cJSON's one sscanf, "%lg", is base/util.c's, on
# strtod: the C library's scanf, 4 KB, is not linked for it.)
PB_NOUB  := -fno-sanitize=shift-base
PB_CSRCS := $(DEPSRC)/protobuf-c/protobuf-c/protobuf-c.c $(PB_SRCS)
$(B)/deps/musl/libdeps.a: $(DEPS_SRCS) $(PB_SRCS) Makefile $(if $(SYSROOT),$(B)/musl-gcc.specs)
	@mkdir -p $(@D)
	@$(MUSLCC) $(CFLAGS) -std=c99 -fno-pie -ffunction-sections -fdata-sections -fno-asynchronous-unwind-tables -fno-unwind-tables $(INIFLAGS) \
		-Dsscanf=cjson_sscanf -c $(DEPSRC)/cjson/cJSON.c -o $(@D)/cJSON.o
	@$(MUSLCC) $(CFLAGS) -std=c99 -fno-pie -ffunction-sections -fdata-sections -fno-asynchronous-unwind-tables -fno-unwind-tables $(INIFLAGS) -c $(DEPSRC)/inih/ini.c -o $(@D)/ini.o
	@for f in $(PB_CSRCS); do $(MUSLCC) $(CFLAGS) -std=c99 -fno-pie -ffunction-sections -fdata-sections -fno-asynchronous-unwind-tables -fno-unwind-tables \
		-I$(DEPSRC)/protobuf-c -I$(B)/gen -c $$f -o $(@D)/$$(basename $$f .c).o || exit 1; done
	ar rcs $@ $(@D)/cJSON.o $(@D)/ini.o $(addprefix $(@D)/,$(notdir $(PB_CSRCS:.c=.o)))

$(B)/deps/asan/libdeps.a: $(DEPS_SRCS) $(PB_SRCS)
	@mkdir -p $(@D)
	@$(CC) -g -O1 -fsanitize=address,undefined $(INIFLAGS) -c $(DEPSRC)/cjson/cJSON.c -o $(@D)/cJSON.o
	@$(CC) -g -O1 -fsanitize=address,undefined $(INIFLAGS) -c $(DEPSRC)/inih/ini.c -o $(@D)/ini.o
	@for f in $(PB_CSRCS); do $(CC) -g -O1 -std=c99 -fsanitize=address,undefined $(PB_NOUB) \
		-I$(DEPSRC)/protobuf-c -I$(B)/gen -c $$f -o $(@D)/$$(basename $$f .c).o || exit 1; done
	ar rcs $@ $(@D)/cJSON.o $(@D)/ini.o $(addprefix $(@D)/,$(notdir $(PB_CSRCS:.c=.o)))

# nghttp2 (`ocidec dra`'s gRPC: HTTP/2 framing and HPACK) and mbed TLS (its
# HTTPS client), each an archive of its own: the linker takes only the
# members something calls, --gc-sections only the functions. nghttp2: its
# lib/*.c, no configure run (the few HAVE_ macros are NGHTTP2FLAGS'), its
# version header made from the .in; mbed TLS: its library/*.c with
# formats/mbedtls_config.h (a TLS client, see there: what it leaves out
# compiles to nothing). A section per function, as the others; and for
# the static binary -Oz and link-time optimisation (DEPLTO): their objects
# hold GCC's intermediate code (archived by gcc-ar, with the plugin's
# symbol index), compiled at the link as one unit with what ours call of
# them: functions inlined across their files, what no caller reaches
# dropped, their internal symbols local (12 KB less than -Os and
# --gc-sections alone, bench/size.sh). Ours are not: the hot/cold layout
# (hot.ld) places our functions by their sections' names, and none of
# theirs is on the idle path.
NGHTTP2_C   := $(notdir $(wildcard $(DEPSRC)/nghttp2/lib/*.c))
MBEDTLS_C   := $(notdir $(wildcard $(DEPSRC)/mbedtls/library/*.c))
DEPSECT     := -ffunction-sections -fdata-sections -fno-asynchronous-unwind-tables -fno-unwind-tables
DEPCFLAGS   := $(CFLAGS) -std=gnu99 -fno-pie $(DEPSECT)
DEPLTO      := -Oz -flto -flto-partition=one
NGHTTP2_VER := $(B)/gen/nghttp2/nghttp2ver.h
$(NGHTTP2_VER): $(DEPSRC)/nghttp2/lib/includes/nghttp2/nghttp2ver.h.in
	@mkdir -p $(@D)
	@v=$$(sed -n 's/^AC_INIT(\[nghttp2\], \[\([0-9.]*\)\].*/\1/p' $(DEPSRC)/nghttp2/configure.ac); \
	test -n "$$v" || { echo "$@: no version in nghttp2's configure.ac" >&2; exit 1; }; \
	n=$$(echo $$v | awk -F. '{ printf "0x%02x%02x%02x", $$1, $$2, $$3 }'); \
	sed "s/@PACKAGE_VERSION@/$$v/; s/@PACKAGE_VERSION_NUM@/$$n/" $< >$@
NGHTTP2_INC := -I$(DEPSRC)/nghttp2/lib/includes -I$(B)/gen $(NGHTTP2FLAGS)
# nghttp2's assert()s in the static binary: still checked, a failed one
# still aborts, without the C library's message (the expression, file and
# function as strings: 6 KB); a header before the C library's assert.h
# (the sanitizer and fuzzing builds keep the C library's own)
NGHTTP2_ASSERT := $(B)/gen/nghttp2-assert/assert.h
$(NGHTTP2_ASSERT): Makefile
	@mkdir -p $(@D)
	@printf '%s\n' '/* generated by the Makefile (NGHTTP2_ASSERT) */' '#include_next <assert.h>' '#include <stdlib.h>' \
		'#undef assert' '#define assert(e) ((e) ? (void)0 : abort())' >$@
MBEDTLS_INC := -I. -I$(DEPSRC)/mbedtls/include -I$(DEPSRC)/mbedtls/library $(MBEDTLSFLAGS)
$(B)/deps/musl/nghttp2/%.o: $(DEPSRC)/nghttp2/lib/%.c $(NGHTTP2_VER) $(NGHTTP2_ASSERT) Makefile $(if $(SYSROOT),$(B)/musl-gcc.specs)
	@mkdir -p $(@D)
	@$(MUSLCC) $(DEPCFLAGS) $(DEPLTO) -I$(dir $(NGHTTP2_ASSERT)) $(NGHTTP2_INC) -c $< -o $@
$(B)/deps/musl/mbedtls/%.o: $(DEPSRC)/mbedtls/library/%.c formats/mbedtls_config.h formats/mbedtls_psa_config.h Makefile $(if $(SYSROOT),$(B)/musl-gcc.specs)
	@mkdir -p $(@D)
	@$(MUSLCC) $(DEPCFLAGS) $(DEPLTO) $(MBEDTLS_INC) -c $< -o $@
$(B)/deps/asan/nghttp2/%.o: $(DEPSRC)/nghttp2/lib/%.c $(NGHTTP2_VER)
	@mkdir -p $(@D)
	@$(CC) -g -O1 -fsanitize=address,undefined $(NGHTTP2_INC) -c $< -o $@
$(B)/deps/asan/mbedtls/%.o: $(DEPSRC)/mbedtls/library/%.c formats/mbedtls_config.h formats/mbedtls_psa_config.h
	@mkdir -p $(@D)
	@$(CC) -g -O1 -fsanitize=address,undefined $(MBEDTLS_INC) -c $< -o $@
$(foreach v,musl asan,$(B)/deps/$(v)/libnghttp2.a): $(B)/deps/%/libnghttp2.a: \
		$(addprefix $(B)/deps/%/nghttp2/,$(NGHTTP2_C:.c=.o))
	@rm -f $@
	@$(DEPAR) rcs $@ $^
$(foreach v,musl asan,$(B)/deps/$(v)/libmbedtls.a): $(B)/deps/%/libmbedtls.a: \
		$(addprefix $(B)/deps/%/mbedtls/,$(MBEDTLS_C:.c=.o))
	@rm -f $@
	@$(DEPAR) rcs $@ $^
# (the objects are kept: make would delete them as intermediate files)
.SECONDARY: $(foreach v,musl asan,$(addprefix $(B)/deps/$(v)/nghttp2/,$(NGHTTP2_C:.c=.o)) \
		$(addprefix $(B)/deps/$(v)/mbedtls/,$(MBEDTLS_C:.c=.o)))
DEPLIBS_musl := $(B)/deps/musl/libdeps.a $(B)/deps/musl/libnghttp2.a $(B)/deps/musl/libmbedtls.a
DEPLIBS_asan := $(B)/deps/asan/libdeps.a $(B)/deps/asan/libnghttp2.a $(B)/deps/asan/libmbedtls.a

$(B)/gen/api.pb-c.h: $(B)/gen/api.pb-c.c
# (optimize_for = CODE_SIZE: the descriptors without the messages' and
# fields' names, which only reflection reads and the plugin never does:
# 8 KB less; a copy, the fetched file left as it is)
# NRI 0.11's container user (formats/nri-user.sed), only where the
# fetched file has neither its field nor its message
$(B)/gen/api.pb-c.c: $(DEPSRC)/nri/api.proto formats/nri-user.sed
	@mkdir -p $(@D)/proto
	sed '/^package /a option optimize_for = CODE_SIZE;' $< >$(@D)/proto/api.proto
	if ! grep -q '^message User ' $< && ! grep -q 'User user = 21;' $<; then \
		sed -i -f formats/nri-user.sed $(@D)/proto/api.proto; fi
	protoc-c --c_out=$(@D) -I$(@D)/proto $(@D)/proto/api.proto
$(B)/gen/ttrpc.pb-c.h: $(B)/gen/ttrpc.pb-c.c
$(B)/gen/pluginregistration.pb-c.h: $(B)/gen/pluginregistration.pb-c.c
$(B)/gen/dra.pb-c.h: $(B)/gen/dra.pb-c.c
$(B)/gen/ttrpc.pb-c.c $(B)/gen/pluginregistration.pb-c.c $(B)/gen/dra.pb-c.c: $(B)/gen/%.pb-c.c: formats/%.proto
	@mkdir -p $(@D)
	protoc-c --c_out=$(@D) -I$(<D) $<

# conf/hooks.d/ocidec.json is the one hooks.d file: make install writes it,
# and ocidec install writes it with its own path (a C string of it)
$(B)/gen/hooks_json.h: conf/hooks.d/ocidec.json
	@mkdir -p $(@D)
	@{ echo '/* generated from conf/hooks.d/ocidec.json */'; echo 'static const char hooks_json_template[] ='; \
	  sed 's/\\/\\\\/g; s/"/\\"/g; s/^/\t"/; s/$$/\\n"/' $<; echo ';'; } >$@
$(B)/musl/engines/engine_hooksdir.o $(B)/asan/engines/engine_hooksdir.o $(B)/fuzz/obj/engines/engine_hooksdir.o: $(B)/gen/hooks_json.h

$(B)/musl/%.o: %.c $(HDRS) $(DEPS_SRCS) $(NGHTTP2_VER) Makefile $(if $(SYSROOT),$(B)/musl-gcc.specs)
	@mkdir -p $(@D)
	@echo "  CC      $<"
	@$(MUSLCC) $(CPPFLAGS) -DOCIDEC_ARENA -DOCIDEC_USAGEZ $(STDFLAGS) $(CFLAGS) $(SIZEFLAGS) $(WARN) -c $< -o $@

# The static build's --help texts packed (tools/usagez.c): taken from the
# objects (every NAME_usage, as the compiler made it), linked in their
# place; --gc-sections drops the texts themselves. A tool of the build host.
USAGEZ_OBJS := $(B)/musl/ocidec.o $(patsubst %.c,$(B)/musl/%.o,$(wildcard applets/*.c))
$(B)/usagez: tools/usagez.c
	@mkdir -p $(@D)
	@$(CC) -O2 -Wall -Wextra -Werror -o $@ $<
$(B)/gen/usagez.c: $(B)/usagez $(USAGEZ_OBJS)
	@mkdir -p $(@D)
	@$(B)/usagez $(USAGEZ_OBJS) >$@.tmp && mv $@.tmp $@
$(B)/musl/gen/usagez.o: $(B)/gen/usagez.c $(if $(SYSROOT),$(B)/musl-gcc.specs)
	@mkdir -p $(@D)
	@$(MUSLCC) $(STDFLAGS) $(CFLAGS) $(WARN) -c $< -o $@

$(B)/asan/%.o: %.c $(HDRS) $(DEPS_SRCS) $(NGHTTP2_VER)
	@mkdir -p $(@D)
	@echo "  CC asan $<"
	@$(CC) $(CPPFLAGS) $(ASANFLAGS) $(WARN) -c $< -o $@

# The first small allocations come from an arena (base/arena.c): every
# malloc, calloc, realloc and free, ours and the C library's, goes through
# it; and strtod, for the idle path's one number (base/fastnum.c).
# (-z noseparate-code would save a loadable segment, some microseconds an
# exec, and make the read-only data executable: not taken.)
ARENA_WRAP := -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free,--wrap=strtod
# arm64: binutils' default there is -z noseparate-code (the read-only data
# in the executable segment): -z separate-code would pad each segment to
# 64 KiB (467 kB to 576 kB), so the toolchain's default is kept on arm64.
# No PT_GNU_RELRO: binutils ends it on a page boundary (4 KiB on amd64, 64
# KiB on arm64: the largest page an arm64 kernel has), which pads the file
# by up to a page of zeros; musl's static start-up never applies RELRO (the
# pages stay writable, checked with /proc/self/maps on both), so the header
# would protect nothing: left out.
LDFLAGS_amd64 := -Wl,-z,norelro
LDFLAGS_arm64 := -Wl,-z,norelro
# A hot/cold layout: the toolchain's own linker script, with the idle
# path's functions and variables (bench/idle-path.txt, bench/idle-path.sh
# writes it) first in .text (the C library's assembly with them), .rodata,
# .data.rel.ro, .data and .bss: a hook that decides a container asks for
# nothing faults in one run of text pages and one of data, not a page here
# and there over the whole binary (bench/hook.sh). The read-only data starts
# on a 64 KiB boundary (no byte more in the file: the address only), so the
# kernel's fault-around maps its first 64 KiB in one fault: the idle path's
# strings and tables, the C library's and cJSON's; .init_array and
# .fini_array (crtbegin's, read at every start) go after .data, in the page
# the exec already wrote.
$(B)/gen/hot.ld: bench/idle-path.txt Makefile $(if $(SYSROOT),$(B)/musl-gcc.specs)
	@mkdir -p $(@D)
	@$(MUSLCC) -static -Wl,--verbose -x c /dev/null -o /dev/null 2>/dev/null | awk -v list=$< ' \
		BEGIN { while ((getline l <list) > 0) { split(l, f, " "); \
			if (f[1] == "text") t = t " .text." f[2] " .text." f[2] ".*"; \
			if (f[1] == "data") { r = r " .data.rel.ro." f[2] " .data.rel.ro.local." f[2]; \
				d = d " .data." f[2] " .data.rel.local." f[2] " .data.rel." f[2]; b = b " .bss." f[2]; \
				o = o " .rodata." f[2] } \
			if (f[1] == "text") o = o " .rodata." f[2] ".str1.1 .rodata." f[2] ".str1.8 .rodata." f[2] ".cst*" } } \
		/^==========/ { on = !on; next } !on { next } \
		/\*\(\.text\.unlikely / { print "    *(" t ")"; print "    *libc.a:*(.text)" } \
		/SEGMENT_START\("rodata-segment"/ { sub(/ALIGN\(CONSTANT \(MAXPAGESIZE\)\)/, "ALIGN(0x10000)") } \
		/^ *\.rodata *: \{/ { sub(/\{/, "{ *(" o ") *libc.a:*(.rodata .rodata.*) *cJSON.o(.rodata .rodata.*)") } \
		/^ *\.data\.rel\.ro : \{/ { sub(/\{/, "{ *(" r ")") } \
		/\*\(\.data \.data\.\* / { print "    *(" d ")" } \
		/^ *\.(init|fini)_array *:/ { arr = 1 } arr { held = held $$0 "\n"; if ($$0 ~ /^ *}/) arr = 0; next } \
		{ print } \
		/^ *\.data *:/ { data = 1 } data && /^ *}/ { printf "%s", held; data = 0 } \
		/\*\(\.dynbss\)/ { print "   *(" b ")"; print "   *(COMMON)" }' >$@.tmp
	@test "$$(grep -c '\.text\.arena_take \|\.bss\.arena \|\.data\.optind ' $@.tmp)" -eq 3 || { echo "$@: the toolchain's linker script has another shape" >&2; exit 1; }
	@mv $@.tmp $@
$(B)/ocidec: $(MUSL_OBJS) $(B)/musl/gen/usagez.o $(DEPLIBS_musl) $(B)/gen/hot.ld Makefile
	$(MUSLCC) -static -s -Wl,--gc-sections -Wl,--build-id -Wl,-T,$(B)/gen/hot.ld $(ARENA_WRAP) $(LDFLAGS_$(ARCH)) $(DEPSECT) $(DEPLTO) -o $@ $(filter $(B)/%.o $(B)/%.a,$^)
	@printf 'ocidec: %s bytes, %s\n' "$$(stat -c %s $@)" "$$(file -b $@ | cut -d, -f1-5)"
	@# build/ARCH/ocidec for every architecture (the Containerfile's path)
	@if [ "$(ARCH)" = "$(NATIVE)" ]; then mkdir -p build/$(NATIVE) && ln -f $@ build/$(NATIVE)/ocidec; fi

$(B)/ocidec-asan: $(ASAN_OBJS) $(DEPLIBS_asan)
	$(CC) -fsanitize=address,undefined -o $@ $^

asan: $(B)/ocidec-asan

$(DEPS_SRCS):
	@echo "dependency sources missing: run ./build.sh first" >&2; exit 1

test: all
	test/run $(B)/ocidec

test-asan: $(B)/ocidec-asan
	test/run $(B)/ocidec-asan

# Every suite against both builds, one summary line.
check: all $(B)/ocidec-asan
	test/run $(B)/ocidec $(B)/ocidec-asan

# The C unit tests: build/unit/NAME from test/unit/NAME.c (tables of cases,
# TAP), linked with the sanitizer build's library objects; test/unit.bats
# builds and runs them (make unit: the same by hand).
UNIT_TESTS  := $(patsubst test/unit/%.c,%,$(wildcard test/unit/*.c))
ASAN_COMMON := $(LIB_SRCS:%.c=$(B)/asan/%.o)
$(B)/unit/libcommon.a: $(ASAN_COMMON)
	@mkdir -p $(@D)
	@rm -f $@
	@ar rcs $@ $^
$(addprefix $(B)/unit/,$(UNIT_TESTS)): $(B)/unit/%: test/unit/%.c test/unit/tap.h $(B)/unit/libcommon.a \
		$(DEPLIBS_asan) $(HDRS)
	@echo "  UNIT    $@"
	@$(CC) $(CPPFLAGS) $(ASANFLAGS) $(WARN) -o $@ $< $(B)/unit/libcommon.a $(DEPLIBS_asan)
unit-build: $(addprefix $(B)/unit/,$(UNIT_TESTS))
unit: unit-build
	@for t in $(UNIT_TESTS); do $(B)/unit/$$t || exit 1; done

FUZZ_RUNS    ?= 1000000
FUZZ_SECONDS ?= 1800
fuzz:
	test/fuzz/run.sh $(FUZZ_RUNS) $(FUZZ_SECONDS)

# The libFuzzer targets (clang), one per parser that sees outside input;
# test/fuzz/run.sh builds them through here and runs them.
FUZZCC      ?= clang
FUZZFLAGS   := -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
FUZZ_TARGETS := ldcache elf config state ociconfig json ctrd ctrdimport sdbus dockerjson shimedit ldconf require mig \
		hooksdir keycache ere globmatch nrimux ttrpc kfd hostfiles grpc
# One rule for every target: its test/fuzz/fuzz_NAME.c linked with an
# archive of all of the library and the dependencies, built once with the
# sanitizers; the linker takes from it only the objects the target needs.
FUZZ_OBJS   := $(patsubst %.c,$(B)/fuzz/obj/%.o,$(LIB_SRCS)) $(B)/fuzz/obj/cJSON.o $(B)/fuzz/obj/ini.o \
               $(addprefix $(B)/fuzz/obj/,$(notdir $(PB_CSRCS:.c=.o))) \
               $(addprefix $(B)/fuzz/obj/nghttp2/,$(NGHTTP2_C:.c=.o))
$(LIB_SRCS:%.c=$(B)/fuzz/obj/%.o): $(B)/fuzz/obj/%.o: %.c $(HDRS) $(NGHTTP2_VER)
	@mkdir -p $(@D)
	@$(FUZZCC) $(CPPFLAGS) $(subst fuzzer,fuzzer-no-link,$(FUZZFLAGS)) -c $< -o $@
$(B)/fuzz/obj/cJSON.o: $(DEPSRC)/cjson/cJSON.c
	@mkdir -p $(@D)
	@$(FUZZCC) $(CPPFLAGS) $(subst fuzzer,fuzzer-no-link,$(FUZZFLAGS)) -std=c99 -c $< -o $@
$(B)/fuzz/obj/ini.o: $(DEPSRC)/inih/ini.c
	@mkdir -p $(@D)
	@$(FUZZCC) $(CPPFLAGS) $(subst fuzzer,fuzzer-no-link,$(FUZZFLAGS)) -c $< -o $@
$(B)/fuzz/obj/%.pb-c.o: $(B)/gen/%.pb-c.c
	@mkdir -p $(@D)
	@$(FUZZCC) $(CPPFLAGS) $(subst fuzzer,fuzzer-no-link,$(FUZZFLAGS)) -std=c99 -c $< -o $@
$(B)/fuzz/obj/protobuf-c.o: $(DEPSRC)/protobuf-c/protobuf-c/protobuf-c.c
	@mkdir -p $(@D)
	@$(FUZZCC) $(CPPFLAGS) $(subst fuzzer,fuzzer-no-link,$(FUZZFLAGS)) $(PB_NOUB) -std=c99 -c $< -o $@
$(B)/fuzz/obj/nghttp2/%.o: $(DEPSRC)/nghttp2/lib/%.c $(NGHTTP2_VER)
	@mkdir -p $(@D)
	@$(FUZZCC) $(NGHTTP2_INC) $(subst fuzzer,fuzzer-no-link,$(FUZZFLAGS)) -std=gnu99 -c $< -o $@
$(B)/fuzz/libcommon.a: $(FUZZ_OBJS)
	@rm -f $@
	@ar rcs $@ $^
$(addprefix $(B)/fuzz/,$(FUZZ_TARGETS)): $(B)/fuzz/%: test/fuzz/fuzz_%.c $(B)/fuzz/libcommon.a $(HDRS)
	@echo "  FUZZ    $@"
	@$(FUZZCC) $(CPPFLAGS) $(FUZZFLAGS) -o $@ $< $(B)/fuzz/libcommon.a
# ocidec dra's API client (kubeapi: nghttp2's client session fed a
# server's bytes; draclaim: the claim and slice list JSON): linked with
# nghttp2 built as the library is (instrumented: its parser is what is
# fuzzed) and mbed TLS (linked for kubeapi.o's other calls, never reached)
FUZZ_DRA     := kubeapi draclaim
$(B)/fuzz/nghttp2/%.o: $(DEPSRC)/nghttp2/lib/%.c $(NGHTTP2_VER)
	@mkdir -p $(@D)
	@$(FUZZCC) $(subst fuzzer,fuzzer-no-link,$(FUZZFLAGS)) -std=gnu99 $(NGHTTP2_INC) -c $< -o $@
$(B)/fuzz/mbedtls/%.o: $(DEPSRC)/mbedtls/library/%.c formats/mbedtls_config.h
	@mkdir -p $(@D)
	@$(FUZZCC) -g -O1 -fsanitize=address -std=gnu99 $(MBEDTLS_INC) -c $< -o $@
$(B)/fuzz/libh2tls.a: $(addprefix $(B)/fuzz/nghttp2/,$(NGHTTP2_C:.c=.o)) $(addprefix $(B)/fuzz/mbedtls/,$(MBEDTLS_C:.c=.o))
	@rm -f $@
	@ar rcs $@ $^
$(addprefix $(B)/fuzz/,$(FUZZ_DRA)): $(B)/fuzz/%: test/fuzz/fuzz_%.c $(B)/fuzz/libcommon.a $(B)/fuzz/libh2tls.a $(HDRS)
	@echo "  FUZZ    $@"
	@$(FUZZCC) $(CPPFLAGS) $(FUZZFLAGS) -o $@ $< $(B)/fuzz/libcommon.a $(B)/fuzz/libh2tls.a
fuzz-targets: $(addprefix $(B)/fuzz/,$(FUZZ_TARGETS) $(FUZZ_DRA))
.SECONDARY: $(addprefix $(B)/fuzz/nghttp2/,$(NGHTTP2_C:.c=.o)) $(addprefix $(B)/fuzz/mbedtls/,$(MBEDTLS_C:.c=.o))

demo: $(B)/ocidec
	./demo.sh

# Configs: a shipped file is installed where none is; one the administrator
# changed is left alone (the shipped one goes beside it as FILE.ini.new, which
# ocidec does not read). The hooks.d file names the installed hook.
install: $(B)/ocidec
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SYSCONFDIR)/ocidec/ocidec.d
	install -m 0755 $(B)/ocidec $(DESTDIR)$(BINDIR)/ocidec
	for a in $(APPLETS); do ln -sf ocidec $(DESTDIR)$(BINDIR)/ocidec-$$a; done
	@for f in conf/*.ini; do \
		t=$(DESTDIR)$(SYSCONFDIR)/ocidec/ocidec.d/$${f#conf/}; \
		if [ -e "$$t" ] && ! cmp -s "$$f" "$$t"; then \
			install -m 0644 "$$f" "$$t.new"; \
			echo "$$t: changed here, kept; the shipped one is $$t.new"; \
		else install -m 0644 "$$f" "$$t"; fi; \
	done
	install -d $(DESTDIR)$(MANDIR)/man1
	install -m 0644 man/ocidec.1 $(foreach a,$(APPLETS),man/ocidec-$(a).1) $(DESTDIR)$(MANDIR)/man1/
	install -d $(DESTDIR)$(LIBEXECDIR)/oci/hooks.d $(DESTDIR)$(HOOKSDIR)
	ln -sf $$(realpath -m --relative-to=$(LIBEXECDIR)/oci/hooks.d $(BINDIR)/ocidec) $(DESTDIR)$(LIBEXECDIR)/oci/hooks.d/ocidec-hook
	sed 's|"/usr/libexec/oci/hooks.d/ocidec-hook"|"$(LIBEXECDIR)/oci/hooks.d/ocidec-hook"|' \
		conf/hooks.d/ocidec.json >$(DESTDIR)$(HOOKSDIR)/ocidec.json
	chmod 0644 $(DESTDIR)$(HOOKSDIR)/ocidec.json
	install -d $(DESTDIR)$(LIBEXECDIR)/ocidec
	ln -sf $$(realpath -m --relative-to=$(LIBEXECDIR)/ocidec $(BINDIR)/ocidec) $(DESTDIR)$(LIBEXECDIR)/ocidec/nvidia-cdi-hook
	ln -sf $$(realpath -m --relative-to=$(LIBEXECDIR)/ocidec $(BINDIR)/ocidec) $(DESTDIR)$(LIBEXECDIR)/ocidec/nvidia-container-cli
	sed 's|^bin=/usr/bin/ocidec$$|bin=$(BINDIR)/ocidec|' conf/package/remove.sh >$(DESTDIR)$(LIBEXECDIR)/ocidec/remove.sh
	chmod 0755 $(DESTDIR)$(LIBEXECDIR)/ocidec/remove.sh
	install -d $(DESTDIR)$(LIBEXECDIR)/ocidec/enroot
	sed 's|/usr/bin/ocidec |$(BINDIR)/ocidec |' conf/enroot/98-ocidec.sh >$(DESTDIR)$(LIBEXECDIR)/ocidec/enroot/98-ocidec.sh
	chmod 0755 $(DESTDIR)$(LIBEXECDIR)/ocidec/enroot/98-ocidec.sh
	install -d $(DESTDIR)$(UNITDIR)
	for u in conf/systemd/*; do \
		sed 's|/usr/bin/ocidec |$(BINDIR)/ocidec |; s|/etc/ocidec/|$(SYSCONFDIR)/ocidec/|' $$u >$(DESTDIR)$(UNITDIR)/$${u#conf/systemd/}; \
		chmod 0644 $(DESTDIR)$(UNITDIR)/$${u#conf/systemd/}; \
	done
	install -d $(DESTDIR)$(UDEVDIR)
	install -m 0644 conf/udev/*.rules $(DESTDIR)$(UDEVDIR)/

# What install made, with the same variables; a config changed since is kept.
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/ocidec $(DESTDIR)$(MANDIR)/man1/ocidec.1 \
		$(DESTDIR)$(LIBEXECDIR)/oci/hooks.d/ocidec-hook $(DESTDIR)$(HOOKSDIR)/ocidec.json \
		$(DESTDIR)$(LIBEXECDIR)/ocidec/nvidia-cdi-hook $(DESTDIR)$(LIBEXECDIR)/ocidec/nvidia-container-cli \
		$(DESTDIR)$(LIBEXECDIR)/ocidec/enroot/98-ocidec.sh $(DESTDIR)$(LIBEXECDIR)/ocidec/remove.sh
	for u in conf/systemd/*; do rm -f $(DESTDIR)$(UNITDIR)/$${u#conf/systemd/}; done
	for u in conf/udev/*.rules; do rm -f $(DESTDIR)$(UDEVDIR)/$${u#conf/udev/}; done
	for a in $(APPLETS); do rm -f $(DESTDIR)$(BINDIR)/ocidec-$$a $(DESTDIR)$(MANDIR)/man1/ocidec-$$a.1; done
	@for f in conf/*.ini; do \
		t=$(DESTDIR)$(SYSCONFDIR)/ocidec/ocidec.d/$${f#conf/}; \
		rm -f "$$t.new"; \
		if [ -e "$$t" ] && ! cmp -s "$$f" "$$t"; then echo "$$t: changed here, kept"; else rm -f "$$t"; fi; \
	done
	-rmdir $(DESTDIR)$(SYSCONFDIR)/ocidec/ocidec.d $(DESTDIR)$(SYSCONFDIR)/ocidec \
		$(DESTDIR)$(LIBEXECDIR)/oci/hooks.d $(DESTDIR)$(LIBEXECDIR)/oci $(DESTDIR)$(LIBEXECDIR)/ocidec/enroot \
		$(DESTDIR)$(LIBEXECDIR)/ocidec 2>/dev/null

# Packages. The source tarball is the tracked files as they are; the
# dependency sources are build/deps/src as build.sh fetched them (Debian's
# source packages, patched), in a tarball of their own: the spec's Source1,
# the deb's build tree. Neither is committed.
DIST      := $(B)/dist
DISTNAME  := ocidec-$(VERSION)
dist: $(DEPS_SRCS)
	@rm -rf $(DIST) && mkdir -p $(DIST)/$(DISTNAME)
	git ls-files -z | xargs -0 cp --parents -t $(DIST)/$(DISTNAME)
	tar -C $(DIST) --owner=0 --group=0 --sort=name -czf $(DIST)/$(DISTNAME).tar.gz $(DISTNAME)
	tar -C . --owner=0 --group=0 --sort=name --exclude=.git -czf $(DIST)/ocidec-deps-$(VERSION).tar.gz $(DEPSRC) \
		$(if $(SYSROOT),build/deps/$(ARCH))
	@rm -rf $(DIST)/$(DISTNAME)
	@ls -l $(DIST)

RPMTOP    := $(abspath $(B)/rpm)
RPMARCH_amd64 := x86_64
RPMARCH_arm64 := aarch64
# --nodeps: a Debian build host's rpm database is empty (the spec's
# BuildRequires are Fedora's names, musl-gcc and selinux-policy-devel)
rpm: dist
	rm -rf $(RPMTOP) && mkdir -p $(RPMTOP)/SOURCES $(RPMTOP)/SPECS
	cp $(DIST)/*.tar.gz $(RPMTOP)/SOURCES/
	sed 's/@VERSION@/$(VERSION)/' rpm/ocidec.spec >$(RPMTOP)/SPECS/ocidec.spec
	rpmbuild --define '_topdir $(RPMTOP)' --define 'packager ocidec developers' \
		$(if $(SYSROOT),--target $(RPMARCH_$(ARCH))) --nodeps -ba $(RPMTOP)/SPECS/ocidec.spec
	@find $(RPMTOP)/RPMS $(RPMTOP)/SRPMS -name '*.rpm' -printf '%s bytes  %p\n'
	rpmlint -r rpm/ocidec.rpmlintrc $(RPMTOP)/SPECS/ocidec.spec $(RPMTOP)/RPMS/*/*.rpm $(RPMTOP)/SRPMS/*.rpm

DEBTOP    := $(B)/deb
deb: dist
	rm -rf $(DEBTOP) && mkdir -p $(DEBTOP)
	tar -C $(DEBTOP) -xzf $(DIST)/$(DISTNAME).tar.gz
	tar -C $(DEBTOP)/$(DISTNAME) -xzf $(DIST)/ocidec-deps-$(VERSION).tar.gz
	cp -r deb $(DEBTOP)/$(DISTNAME)/debian
	sed -i '1s/@VERSION@/$(VERSION)/' $(DEBTOP)/$(DISTNAME)/debian/changelog
	@# (another architecture: its build dependencies are this machine's
	@# cross gcc and the musl build.sh unpacked, which dpkg cannot see: -d)
	cd $(DEBTOP)/$(DISTNAME) && dpkg-buildpackage -us -uc -b $(if $(SYSROOT),-a$(ARCH) -d)
	@find $(DEBTOP) -maxdepth 1 -name '*.deb' -printf '%s bytes  %p\n'

# The toolkit image, one per architecture built here, in one OCI index:
# FROM scratch, so no architecture's program runs to build it. Push it with
# podman manifest push --all IMAGE docker://REGISTRY/ocidec-toolkit:VERSION.
IMAGE     ?= localhost/ocidec-toolkit:$(VERSION)
PLATFORMS := $(foreach a,$(NATIVE) $(CROSS),linux/$(a))
# (the tests build it from a context of their own: IMAGE_CONTEXT,
# IMAGE_LAYOUT; an OCI layout directory, not an oci-archive: podman 4.3's
# oci-archive ignores --arch when pulled)
IMAGE_CONTEXT ?= .
IMAGE_LAYOUT  ?= $(B)/image/ocidec-toolkit-$(VERSION)
image: $(if $(filter .,$(IMAGE_CONTEXT)),all)
	$(if $(CROSS),,@echo "image: $(NATIVE) only: no musl for the other architecture under build/deps (./build.sh fetches it)" >&2)
	-@podman manifest rm $(IMAGE) >/dev/null 2>&1
	podman build --network none -q --platform $(subst $(eval) ,$(comma),$(PLATFORMS)) --manifest $(IMAGE) $(IMAGE_CONTEXT)
	@rm -rf $(IMAGE_LAYOUT) && mkdir -p $(dir $(IMAGE_LAYOUT))
	podman manifest push -q --all --format oci $(IMAGE) oci:$(IMAGE_LAYOUT)
	@printf 'image: %s (%s), %s\n' "$(IMAGE)" "$(PLATFORMS)" "$(IMAGE_LAYOUT)"
comma     := ,

clean:
	rm -rf $(B)/musl $(B)/asan $(B)/deps/musl $(B)/deps/asan $(B)/ocidec $(B)/ocidec-asan \
		$(foreach a,amd64 arm64,build/$(a)/musl build/$(a)/deps build/$(a)/gen build/$(a)/ocidec build/$(a)/musl-gcc.specs) \
		$(B)/image

distclean:
	rm -rf $(B)

.PHONY: all asan image FORCE test test-asan check unit unit-build fuzz fuzz-targets demo install uninstall dist rpm deb clean distclean
