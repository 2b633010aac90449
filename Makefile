# xgpu: top-level build.
#
#   make                 guest library, backend daemon (user space)
#   make test            unit + integration tests (+ GPU tests where a GPU is)
#   make test-asan       the unit and integration tests under ASan/UBSan
#   make fuzz            the libFuzzer targets of tests/fuzz, FUZZ_SECONDS each
#   make bench           benchmarks, native vs xgpu (needs a GPU)
#   make install         PREFIX=/usr/local DESTDIR=
#   make deb             Debian packages in $(O)/deb (debian/, README.md)
#   make deb-test        build them, lintian, install/remove (tests/deb)
#
# V=1 shows the commands.  O=dir builds elsewhere (default: build).
# The guest library exports exactly the names of its version script
# (libcuda.map); -fvisibility=hidden is not used because a hidden strong
# definition would hide the exported weak stub it overrides.

CUDA_HOME ?= /usr/local/cuda
# every toolkit header the build reads, checked before anything compiles
CUDA_HEADERS := $(addprefix $(CUDA_HOME)/include/,cuda.h cudaProfiler.h \
	cudaTypedefs.h cudaProfilerTypedefs.h)
CUDA_MISSING := $(filter-out $(wildcard $(CUDA_HEADERS)),$(CUDA_HEADERS))
ifneq ($(CUDA_MISSING),)
# (the guest module and cleaning need no toolkit)
ifneq ($(filter-out clean kmod,$(or $(MAKECMDGOALS),all)),)
$(error CUDA 13 headers missing: $(CUDA_MISSING). Install the CUDA 13 \
toolkit's headers (NVIDIA's CUDA apt repository for Debian 12: packages \
cuda-cudart-dev-13-0 and cuda-driver-dev-13-0), or set CUDA_HOME)
endif
endif
O ?= build
PREFIX ?= /usr/local
DESTDIR ?=
SANITIZE ?=

CC ?= cc
ifeq ($(V),1)
Q :=
else
Q := @
endif

WARN := -Wall -Wextra -Werror
CFLAGS_BASE := -std=c11 -D_GNU_SOURCE -O2 -g $(WARN) -fno-strict-aliasing \
	-I$(CUDA_HOME)/include -Ishared-ring
# a distribution's flags (dpkg-buildflags: hardening) come after ours;
# LDFLAGS go to the links of what is installed
CFLAGS_BASE += $(CPPFLAGS) $(CFLAGS)
ifeq ($(SANITIZE),1)
CFLAGS_BASE += -fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=undefined
LDSAN := -fsanitize=address,undefined
endif
# the fuzz build (make fuzz sets it, with CC=clang): everything
# instrumented for libFuzzer's coverage and ASan/UBSan; clang's sanitizer
# runtimes live in the executable, so the fake driver is linked without
# -z defs and takes them from the fuzz target that loads it
LDDEFS := -Wl,-z,defs
ifeq ($(FUZZ),1)
CFLAGS_BASE += -fsanitize=address,undefined,fuzzer-no-link \
	-fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDSAN := -fsanitize=address,undefined
LDDEFS :=
endif
# Xen's user-space libraries, linked statically: the daemon then also runs
# on GPU hosts without Xen installed (--local only).  None of their symbols
# may be exported: the daemon dlopens libxenstore.so.4 where Xen is
# installed (watches need its reader thread), whose own calls must not
# bind to the static copy (xen-backend/transport/xgpub_xs.h).
XEN_ARCHIVES := libxenstore.a:libxengnttab.a:libxenevtchn.a:libxentoolcore.a:libxentoollog.a
XEN_LIBS := -Wl,--exclude-libs,$(XEN_ARCHIVES) -Wl,-Bstatic -lxenstore \
	-lxengnttab -lxenevtchn -lxentoolcore -lxentoollog -Wl,-Bdynamic
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null || echo -lcheck)
# the network transport's code that both ends run: TLS 1.3 streams
# (shared-ring/xgpu_tls.c and xgpu_tls_conn.c, OpenSSL 3), the ring's
# mirror (xgpu_mirror.c and its halves xgpu_mirror_tx.c, xgpu_mirror_rx.c)
# and the parser of HOST:PORT addresses (xgpu_addr.c): in the guest
# library, its NVML library and the daemon; in the archives only in
# libxgpub.a (the unit suites link both whole)
TLS_OBJ := $(O)/obj/shared-ring/xgpu_tls.o $(O)/obj/shared-ring/xgpu_tls_conn.o \
	$(O)/obj/shared-ring/xgpu_mirror.o $(O)/obj/shared-ring/xgpu_mirror_tx.o \
	$(O)/obj/shared-ring/xgpu_mirror_rx.o \
	$(O)/obj/shared-ring/xgpu_addr.o
TLS_LIBS := -lssl -lcrypto

# Code generated from the protocol's table of calls (tools/gen/gen-calls.awk)
GEN := $(O)/gen
GEN_STAMP := $(GEN)/.calls
GEN_BACK_OBJ := $(O)/obj/gen/xgpub_calls.o
GEN_LIB_OBJ := $(O)/obj/gen/xgpulib_calls.o $(O)/obj/gen/xgpulib_entry.o
ENTRY_INPUTS := xen-frontend/lib/xgpulib_gpa_table.inc \
	$(CUDA_HOME)/include/cudaTypedefs.h \
	$(CUDA_HOME)/include/cudaProfilerTypedefs.h \
	xen-frontend/lib/xgpulib_entry.def

LIB_SRCS := $(sort $(wildcard xen-frontend/lib/*.c))
LIB_OBJS := $(LIB_SRCS:%.c=$(O)/obj/%.o) $(GEN_LIB_OBJ)
BACK_DIRS := common worker transport daemon
BACK_INC := $(BACK_DIRS:%=-Ixen-backend/%) -Ixen-backend/include
BACK_SRCS := $(sort $(foreach d,$(BACK_DIRS),$(wildcard xen-backend/$(d)/*.c))) \
	$(sort $(wildcard scheduler/*.c))
BACK_LIB_SRCS := $(filter-out xen-backend/daemon/xgpub_main.c,$(BACK_SRCS))
BACK_OBJS := $(BACK_SRCS:%.c=$(O)/obj/%.o) $(GEN_BACK_OBJ) $(TLS_OBJ)
BACK_LIB_OBJS := $(BACK_LIB_SRCS:%.c=$(O)/obj/%.o) $(GEN_BACK_OBJ) $(TLS_OBJ)

UNIT_SRCS := $(sort $(wildcard tests/unit/check_*.c))
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(O)/tests/%)
ITEST_SRCS := $(sort $(wildcard tests/integration/*.c))
ITEST_BINS := $(ITEST_SRCS:tests/integration/%.c=$(O)/tests/%)

GUEST_LIB := $(O)/lib/libcuda.so.1
# the guest's NVML library (xen-frontend/nvml): its own files and the
# guest library's channel and transports (no CUDA API)
NVML_LIB := $(O)/lib/libnvidia-ml.so.1
NVML_SRCS := $(sort $(wildcard xen-frontend/nvml/*.c))
NVML_OBJS := $(NVML_SRCS:%.c=$(O)/obj/%.o) \
	$(addprefix $(O)/obj/xen-frontend/lib/,xgpulib_chan.o xgpulib_local.o \
	xgpulib_xen.o xgpulib_net.o xgpulib_env.o) $(TLS_OBJ)
BACKEND := $(O)/bin/xen-gpubackd
CLI := $(O)/bin/xgpu
HEADERS := $(wildcard shared-ring/*.h shared-ring/*.def xen-frontend/lib/*.h \
	xen-frontend/nvml/*.h xen-frontend/nvml/*.def \
	xen-frontend/include/*.h scheduler/*.h \
	xen-frontend/lib/*.inc xen-backend/*/*.h xen-backend/*/*.def) \
	$(GEN_STAMP)

all: $(GUEST_LIB) $(NVML_LIB) $(BACKEND) $(CLI)

# the CLI: a table of subcommands, a file per subcommand or small group;
# it speaks the control protocol of xen-backend/include/xgpu_ctl.h
# (with what it shares with the daemon: xgpu.conf's parser, a device's
# xenstore nodes, the xenstore library's table)
CLI_SRCS := $(sort $(wildcard tools/xgpu/*.c)) \
	xen-backend/common/xgpu_rules.c xen-backend/common/xgpu_xsdev.c \
	xen-backend/transport/xgpub_xs.c xen-backend/transport/xgpub_xs_parse.c

$(CLI): $(CLI_SRCS) $(wildcard tools/xgpu/*.h) $(HEADERS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS_BASE) -Ixen-backend/include -Ixen-backend/common \
		-Ixen-backend/transport -Ischeduler -o $@ \
		$(CLI_SRCS) $(LDFLAGS) $(XEN_LIBS) $(LDSAN) -ldl -lpthread

CALLS_INPUTS := shared-ring/xgpuif-ops.h shared-ring/xgpuif-ops-vmm.h \
	shared-ring/xgpuif-ops-module.h shared-ring/xgpuif-ops-nvml.h \
	shared-ring/xgpuif-ops-graph.h shared-ring/xgpuif.h \
	shared-ring/xgpu_calls.def

$(GEN_STAMP): $(CALLS_INPUTS) tools/gen/gen-calls.awk
	@mkdir -p $(GEN)
	@$(if $(Q),echo "  GEN     $(GEN)/*calls*")
	$(Q)awk -v out=$(GEN) -f tools/gen/gen-calls.awk $(CALLS_INPUTS)
	$(Q)awk -v out=$(GEN) -f tools/gen/gen-entry.awk $(ENTRY_INPUTS)
	$(Q)touch $@

$(GEN_STAMP): tools/gen/gen-entry.awk $(ENTRY_INPUTS)

$(O)/obj/gen/xgpulib_%.o: $(GEN_STAMP) $(HEADERS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $(GEN)/xgpulib_$*.c")
	$(Q)$(CC) $(CFLAGS_BASE) -fPIC -Ixen-frontend/lib \
		-Ixen-frontend/include -I$(GEN) -c -o $@ $(GEN)/xgpulib_$*.c

$(GEN_BACK_OBJ): $(GEN_STAMP) $(HEADERS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $(GEN)/xgpub_calls.c")
	$(Q)$(CC) $(CFLAGS_BASE) $(BACK_INC) -I$(GEN) -Ischeduler -c -o $@ \
		$(GEN)/xgpub_calls.c

$(O)/obj/xen-frontend/lib/%.o: xen-frontend/lib/%.c $(HEADERS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_BASE) -fPIC -Ixen-frontend/lib \
		-Ixen-frontend/include -I$(GEN) -c -o $@ $<

$(O)/obj/xen-backend/%.o: xen-backend/%.c $(HEADERS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_BASE) $(BACK_INC) -I$(GEN) -Ischeduler -c -o $@ $<

$(O)/obj/shared-ring/%.o: shared-ring/%.c $(HEADERS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_BASE) -fPIC -c -o $@ $<

$(O)/obj/scheduler/%.o: scheduler/%.c $(HEADERS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_BASE) -Ischeduler -c -o $@ $<

$(GUEST_LIB): $(LIB_OBJS) $(TLS_OBJ) xen-frontend/lib/libcuda.map
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared -o $@ $(LIB_OBJS) $(TLS_OBJ) -Wl,-soname,libcuda.so.1 \
		-Wl,--version-script=xen-frontend/lib/libcuda.map \
		-Wl,-z,defs -Wl,-z,now $(LDFLAGS) $(LDSAN) $(TLS_LIBS) \
		-lpthread -ldl
	$(Q)ln -sf libcuda.so.1 $(O)/lib/libcuda.so

$(O)/obj/xen-frontend/nvml/%.o: xen-frontend/nvml/%.c $(HEADERS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_BASE) -fPIC -Ixen-frontend/nvml -Ixen-frontend/lib \
		-Ixen-frontend/include -c -o $@ $<

$(NVML_LIB): $(NVML_OBJS) xen-frontend/nvml/libnvidia-ml.map
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared -o $@ $(NVML_OBJS) -Wl,-soname,libnvidia-ml.so.1 \
		-Wl,--version-script=xen-frontend/nvml/libnvidia-ml.map \
		-Wl,-z,defs -Wl,-z,now $(LDFLAGS) $(LDSAN) $(TLS_LIBS) -lpthread
	$(Q)ln -sf libnvidia-ml.so.1 $(O)/lib/libnvidia-ml.so

$(O)/libxgpulib.a: $(LIB_OBJS)
	$(Q)rm -f $@ && ar rcs $@ $^

$(O)/libxgpub.a: $(BACK_LIB_OBJS)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BACKEND): $(BACK_OBJS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -o $@ $(BACK_OBJS) $(LDFLAGS) $(XEN_LIBS) $(LDSAN) \
		$(TLS_LIBS) -ldl -lpthread

# Unit suites link every object of both sides (whole archives, so that the
# strong cu* definitions win over the weak stubs).
$(O)/tests/check_%: tests/unit/check_%.c $(wildcard tests/unit/*.h) \
		$(O)/libxgpulib.a $(O)/libxgpub.a $(HEADERS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CHECK   $@")
	$(Q)$(CC) $(CFLAGS_BASE) -Ixen-frontend/lib -Ixen-frontend/include \
		$(BACK_INC) -I$(GEN) -Ischeduler $(shell pkg-config --cflags check 2>/dev/null) -o $@ $< \
		-Wl,--whole-archive $(O)/libxgpulib.a $(O)/libxgpub.a \
		-Wl,--no-whole-archive $(CHECK_LIBS) $(XEN_LIBS) $(LDSAN) \
		$(TLS_LIBS) -ldl -lpthread

# Integration clients are ordinary CUDA driver-API programs linked against
# the guest library.
$(O)/tests/%: tests/integration/%.c $(wildcard tests/integration/*.h) \
		$(GUEST_LIB) $(HEADERS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(CFLAGS_BASE) -o $@ $< -L$(O)/lib -l:libcuda.so.1 \
		-Wl,-rpath,'$$ORIGIN/../lib' $(LDSAN) -lpthread

# The fake CUDA driver of the tests (tests/fakecuda/fakecuda.h): a driver
# library of its own that the worker loads like the host's driver
# (--driver), so the daemon ships no test code.  It exports only cu*.
FAKECUDA_SRCS := $(sort $(wildcard tests/fakecuda/*.c))
FAKECUDA_OBJS := $(FAKECUDA_SRCS:%.c=$(O)/obj/%.o)
FAKECUDA := $(O)/tests/fakecuda/libcuda.so.1

$(O)/obj/tests/fakecuda/%.o: tests/fakecuda/%.c tests/fakecuda/fakecuda.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_BASE) -fPIC -c -o $@ $<

$(FAKECUDA): $(FAKECUDA_OBJS) tests/fakecuda/fakecuda.map
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared -o $@ $(FAKECUDA_OBJS) -Wl,-soname,libcuda.so.1 \
		-Wl,--version-script=tests/fakecuda/fakecuda.map \
		$(LDDEFS) -Wl,-z,now $(LDSAN) -lpthread

unit: $(UNIT_BINS) $(O)/bench/pair
	$(Q)set -e; for t in $(UNIT_BINS); do echo "== $$t"; $$t; done
	$(Q)echo "== tests/bench/pair-test.sh"; tests/bench/pair-test.sh $(O)/bench/pair

# the benchmarks' turn runner (bench/pair.c: plain C, no GPU), built here
# too so that unit checks it without the CUDA toolkit
$(O)/bench/pair: bench/pair.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(CFLAGS_BASE) -o $@ $< $(LDSAN)

integration: all $(ITEST_BINS) $(FAKECUDA)
	$(Q)O=$(O) tests/integration/run.sh
	$(Q)O=$(O) tests/integration/run-net.sh

# what the integration tests run, built (tests/fuzz/record.sh)
integration-bins: all $(ITEST_BINS) $(FAKECUDA)

# TLS throughput over loopback TCP, against plain TCP (no GPU needed)
tlsbw: $(O)/bench/tlsbw
	$(Q)$(O)/bench/tlsbw

$(O)/bench/tlsbw: bench/tlsbw.c $(TLS_OBJ) shared-ring/xgpu_tls.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(CFLAGS_BASE) -o $@ $< $(TLS_OBJ) $(LDSAN) $(TLS_LIBS) \
		-lpthread

gpu: all
	$(Q)tests/gpu/run-gpu-tests.sh --xgpu-lib $(O)/lib --backend $(BACKEND)
	$(Q)tests/gpu/run-nvml.sh --xgpu-lib $(O)/lib --backend $(BACKEND)

# the guest kernel module, against a kernel's headers (KDIR=...)
KDIR ?= /lib/modules/$(shell uname -r)/build
kmod:
	$(Q)$(MAKE) --no-print-directory -C xen-frontend/kmod KDIR=$(KDIR)

# boot Xen nested under QEMU: Dom0 + two DomUs, the module, the hotplug
# path and the daemon (tests/xen/README.md)
xen-test: all $(FAKECUDA)
	$(Q)O=$(O) tests/xen/run.sh

test: unit integration gpu deb-test xen-test

# libFuzzer targets (tests/fuzz/README.md): built with clang, ASan and
# UBSan in $(O)/fuzz, each run FUZZ_SECONDS from its seed corpus; fails
# if any target crashes
FUZZ_SECONDS ?= 60
FUZZ_CC ?= clang
FUZZ_TARGETS := worker image xs ctl mirror
FUZZ_BINS := $(FUZZ_TARGETS:%=$(O)/fuzz/fuzz_%)

fuzz:
	$(Q)$(MAKE) --no-print-directory O=$(O)/fuzz CC=$(FUZZ_CC) FUZZ=1 \
		SANITIZE= fuzz-build
	$(Q)tests/fuzz/run.sh $(O)/fuzz/fuzz $(FUZZ_SECONDS) $(FUZZ_TARGETS)

fuzz-build: $(FUZZ_BINS) $(FAKECUDA)

$(O)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(wildcard tests/fuzz/*.h) \
		$(O)/libxgpub.a $(HEADERS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FUZZ    $@")
	$(Q)$(CC) $(CFLAGS_BASE) $(BACK_INC) -I$(GEN) -Ischeduler -o $@ $< \
		-fsanitize=fuzzer $(O)/libxgpub.a $(XEN_LIBS) $(LDSAN) \
		$(TLS_LIBS) -ldl -lpthread

# the README's test command: dependencies, then everything, then the
# sanitizer pass, then each fuzz target for 10 s (about a minute in all)
check:
	$(Q)scripts/install-deps.sh
	$(Q)$(MAKE) --no-print-directory test
	$(Q)$(MAKE) --no-print-directory test-asan
	$(Q)$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=10

test-asan:
	$(Q)$(MAKE) --no-print-directory O=build-asan SANITIZE=1 unit integration

bench: all
	$(Q)bench/run-bench.sh --xgpu-lib $(O)/lib --backend $(BACKEND)
	$(Q)bench/run-sched.sh --xgpu-lib $(O)/lib --backend $(BACKEND) \
		--cli $(CLI) --bin $(O)/bench
	$(Q)bench/run-many.sh --xgpu-lib $(O)/lib --backend $(BACKEND) \
		--bin $(O)/bench

# the coverage table of the guest library's exports (tools/coverage)
coverage: all
	$(Q){ echo "# Coverage of the CUDA driver API"; echo; \
	      echo "Generated by \`make coverage\` (tools/coverage/coverage.sh) from"; \
	      echo "the built \`libcuda.so.1\`: every exported name, forwarded to the"; \
	      echo "worker, answered in the guest, or refused with"; \
	      echo "\`CUDA_ERROR_NOT_SUPPORTED\` and the reason."; echo; \
	      tools/coverage/coverage.sh $(GUEST_LIB); } >docs/COVERAGE.md.tmp
	$(Q)mv docs/COVERAGE.md.tmp docs/COVERAGE.md

# Where make install puts the guest library, the systemd unit and the udev
# rule; a distribution's package says where its own go (debian/rules).
XGPU_LIBDIR ?= $(PREFIX)/lib/xgpu
SYSTEMD_UNITDIR ?= /etc/systemd/system
UDEV_RULESDIR ?= /etc/udev/rules.d

install: all
	install -d $(DESTDIR)$(XGPU_LIBDIR) $(DESTDIR)$(PREFIX)/sbin
	install -m 0755 $(GUEST_LIB) $(DESTDIR)$(XGPU_LIBDIR)/libcuda.so.1
	ln -sf libcuda.so.1 $(DESTDIR)$(XGPU_LIBDIR)/libcuda.so
	install -m 0755 $(NVML_LIB) $(DESTDIR)$(XGPU_LIBDIR)/libnvidia-ml.so.1
	ln -sf libnvidia-ml.so.1 $(DESTDIR)$(XGPU_LIBDIR)/libnvidia-ml.so
	install -m 0755 $(BACKEND) $(DESTDIR)$(PREFIX)/sbin/xen-gpubackd
	install -m 0755 $(CLI) $(DESTDIR)$(PREFIX)/sbin/xgpu
	# the script and the unit name the daemon where PREFIX put it
	install -d $(DESTDIR)/etc/xen/scripts $(DESTDIR)$(SYSTEMD_UNITDIR)
	sed 's|/usr/local/sbin/|$(PREFIX)/sbin/|g' tools/hotplug/xgpu \
		> $(DESTDIR)/etc/xen/scripts/xgpu
	chmod 0755 $(DESTDIR)/etc/xen/scripts/xgpu
	install -D -m 0644 tools/hotplug/xgpu.rules \
		$(DESTDIR)$(UDEV_RULESDIR)/65-xgpu.rules
	sed 's|/usr/local/sbin/|$(PREFIX)/sbin/|g' \
		tools/hotplug/xen-gpubackd.service \
		> $(DESTDIR)$(SYSTEMD_UNITDIR)/xen-gpubackd.service
	[ -e $(DESTDIR)/etc/default/xen-gpubackd ] || install -D -m 0644 \
		tools/hotplug/xen-gpubackd.default \
		$(DESTDIR)/etc/default/xen-gpubackd
	# the per-domain rules: an example, all comments (xgpu.conf(5)); an
	# administrator's file is kept
	[ -e $(DESTDIR)/etc/xen/xgpu.conf ] || install -D -m 0644 \
		tools/xgpu.conf $(DESTDIR)/etc/xen/xgpu.conf
	install -D -m 0644 tools/xgpu.1 $(DESTDIR)$(PREFIX)/share/man/man1/xgpu.1
	install -D -m 0644 tools/xgpu.conf.5 \
		$(DESTDIR)$(PREFIX)/share/man/man5/xgpu.conf.5
	install -D -m 0644 tools/xen-gpubackd.8 \
		$(DESTDIR)$(PREFIX)/share/man/man8/xen-gpubackd.8
	install -D -m 0644 tools/completion/xgpu \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/xgpu
	# the workers' user (xen-gpubackd --worker-user): made on this system
	# only, as root, never in a DESTDIR tree, and only if missing
	$(Q)if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ]; then \
		scripts/worker-user.sh xgpu; fi

# Debian packages xgpu-backend, xgpu-guest and xen-gpufront-dkms, built by
# debhelper from a copy of the working tree, into $(O)/deb (README.md).
# Their version is the file VERSION (also the module's, xen-frontend/kmod).
deb:
	$(Q)scripts/build-deb.sh $(O)/deb

# build them, lintian, look inside, install and remove the guest package
deb-test:
	$(Q)O=$(O) tests/deb/run.sh

clean:
	rm -rf $(O) build-asan

.PHONY: all unit integration gpu test check test-asan bench install clean \
	coverage deb deb-test fuzz fuzz-build integration-bins \
	kmod xen-test tlsbw
.SECONDARY:
