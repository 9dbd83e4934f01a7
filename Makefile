# SPDX-License-Identifier: Apache-2.0
# kimg: find out why CUDA says "no kernel image is available".
#
# The targets (`make help` prints these lines):
#   make            build/kimg-probe, build/libkimg.so, build/libkimgapi.so
#   make demo       kimg-probe on the built-in example (fixtures built with nvcc)
#   make test       fixtures (nvcc), unit tests (Check), integration tests (tests/README.md), TEST_JOBS at once
#   make fixtures   the test inputs, built with nvcc (tests/fixtures/fixtures.mk)
#   make unit       the Check unit test programs, build/tests/test_* (not run)
#   make shim-tests the shim's test programs and the TSan libkimg (not run)
#   make test-programs  the other programs the test scripts run (not run)
#   make fuzz       libFuzzer targets, each for FUZZ_SECONDS
#   make fuzz-build the libFuzzer targets only, build/fuzz/fuzz_*
#   make bench      benchmarks (bench/README.md): judged against their goals
#   make asan       the tree built with ASan and UBSan, in build/asan (glibc pins off)
#   make asan-test  make test in that build (the shim stays under TSan: see below)
#   make mutation   plants each bug of tests/mutation/mutants.txt, checks the tests catch it
#   make mutants    generated mutants, sampled (MUTANTS_N, MUTANTS_SEED): the score
#   make mutants-map  refreshes tests/mutation/coverage.txt (gcov) that make mutants reads
#   make install    PREFIX=/usr/local DESTDIR=
#   make uninstall  removes what install put there (same PREFIX, DESTDIR)
#   make wheel      dist/kimg-*-manylinux_2_17_*.whl (pip install it)
#   make deb        dist/kimg_*.deb (dpkg -i it)
#   make sdist      dist/kimg-*.tar.gz (the tracked tree at HEAD)
#   make release    all packages, dist/SHA256SUMS, each checked
#   make ARCH=aarch64 [wheel|deb]   cross-built, in build/aarch64/
#   make test-aarch64  probe and shim tests of that build under qemu-user
#   make clean      removes build/
#   make help       this list
#
# Layout: core/ is the pure image model (parsers, rules, fixes); sys/ holds
# the few services that touch the process (lazy library loading, driver
# queries, files); report/ renders; probe/ and shim/ are the front ends.

# ARCH=aarch64: the cross build (packaging/arch.mk sets CC, BUILD, SHIM_MAP).
include packaging/arch.mk

# A build or make test without -j runs one job per core: the fixtures (nvcc),
# the three builds of the sources (plain, TSan, fuzz) and the tests are
# independent, and one at a time a cold make test took twice as long. A -j
# on the command line wins; goals outside this list (clean, install, a
# mutation run...) keep make's one job, as their order may matter.
PARALLEL_GOALS := all test unit fixtures shim-tests test-programs fuzz-build wheel deb asan asan-test
ifeq ($(filter-out $(PARALLEL_GOALS),$(or $(MAKECMDGOALS),all)),)
MAKEFLAGS += -j$(shell nproc 2>/dev/null || echo 1)
endif

CC ?= gcc
PREFIX ?= /usr/local
DESTDIR ?=
BUILD ?= build
FUZZ_SECONDS ?= 10
CLANG ?= clang

# The release, written in one place: the file VERSION. The C code gets it
# as KIMG_VERSION; the packages, kimg-run and the man pages as $(VERSION)
# (packaging/packaging.mk); tests/scripts/version.sh checks they all agree.
VERSION := $(shell cat VERSION)
# Reproducible builds: the build directory never reaches the binaries.
REPRO_FLAGS := -ffile-prefix-map=$(CURDIR)=.

WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-parameter
CPPFLAGS += -D_GNU_SOURCE -Icore -Isys -Ireport -DKIMG_VERSION='"$(VERSION)"'
CFLAGS ?= -O2 -g
# ISO C11. The coverage build of make mutants-map is gnu11: there GCC
# knows fork and exec* as builtins and has a child write its counts
# before exec, so what a child runs between the two (doctor_tools.c's
# --version, python_env.c's query) counts as run by the test.
C_STD ?= c11
CFLAGS += -std=$(C_STD) $(WARN) $(REPRO_FLAGS) -fPIC -fvisibility=hidden -fno-semantic-interposition
LDLIBS_SYS := -ldl -lpthread
# libkimg.so must load on glibc < 2.34 too, where dlopen/dladdr and pthread_once
# live in libdl / libpthread: name them explicitly (on 2.34+ they are empty stubs,
# so -ldl alone leaves no DT_NEEDED behind).
SHIM_LDLIBS := -Wl,--no-as-needed -l:libdl.so.2 -l:libpthread.so.0 -Wl,--as-needed

# make asan: the same tree with AddressSanitizer and UBSan, in $(BUILD)/asan
# (SANITIZE=asan), and make asan-test runs make test there. The glibc
# symbol pins (sys/glibc_pins.h, shim/shim_pins.h, sys/file.c's stat
# versions, probe/crt) are off in that build only: a pinned reference
# bypasses ASan's interceptor of the same function and the binary does not
# start ("unexpected PLT reloc type 0x00"). Executables carry the ASan
# runtime statically, so that a test may LD_PRELOAD into them.
# libkimg.so itself is built plain there (objects in $(BUILD)/plain, pins
# on): a preloaded library cannot bring ASan into a program built without
# it (the runtime must come first in the initial library list, before
# libc), and the shim tests preload it into plain programs. The shim's
# diagnosis layer runs under ASan through its unit tests, which link it;
# the whole shim stays under TSan (tests/shim/threads.sh) as in every build.
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
ifeq ($(SANITIZE),asan)
CPPFLAGS += -DKIMG_NO_GLIBC_PINS
CFLAGS += $(SAN_FLAGS)
SAN_EXE_LDFLAGS := -static-libasan -static-libubsan
# any report fails the test that met it; leaks of the stand-in driver are the host's (tests/lsan.supp)
# handle_sigbus=0: kimg's own SIGBUS guard is under test (tests/unit/test_file.c)
SAN_TEST_ENV := ASAN_OPTIONS=abort_on_error=0:detect_leaks=1:handle_sigbus=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp
endif
# What the shim's objects are compiled with (the plain flags in every build).
PLAIN_CFLAGS = $(filter-out $(SAN_FLAGS),$(CFLAGS))
PLAIN_CPPFLAGS = $(filter-out -DKIMG_NO_GLIBC_PINS,$(CPPFLAGS))

CORE_SRC := $(sort $(wildcard core/*.c))
SYS_SRC := $(sort $(wildcard sys/*.c))
REPORT_SRC := $(sort $(wildcard report/*.c))
PROBE_SRC := $(sort $(wildcard probe/*.c))
# libkimg.so in two layers: shim/hook/ (interposition, real symbols, the
# driver) and shim/diag/ (the diagnosis); shim/diag.h is the one header
# between them, and each folder sees only its own headers besides it.
SHIM_HOOK_SRC := $(sort $(wildcard shim/hook/*.c))
SHIM_DIAG_SRC := $(sort $(wildcard shim/diag/*.c))
SHIM_SRC := $(SHIM_HOOK_SRC) $(SHIM_DIAG_SRC)
# libkimgapi.so: the can-it-run API of api/kimg.h (docs/api.md).
API_SRC := $(sort $(wildcard api/*.c))
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
FUZZ_SRC := $(sort $(wildcard tests/fuzz/fuzz_*.c))

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))
CORE_OBJ := $(call obj,$(CORE_SRC))
SYS_OBJ := $(call obj,$(SYS_SRC))
REPORT_OBJ := $(call obj,$(REPORT_SRC))
PROBE_OBJ := $(call obj,$(PROBE_SRC))
SHIM_OBJ := $(call obj,$(SHIM_SRC))
SHIM_DIAG_OBJ := $(call obj,$(SHIM_DIAG_SRC))
API_OBJ := $(call obj,$(API_SRC))
UNIT_BIN := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRC))
FUZZ_BIN := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(FUZZ_SRC))

CORE_LIB := $(BUILD)/libkimgcore.a
SYS_LIB := $(BUILD)/libkimgsys.a
REPORT_LIB := $(BUILD)/libkimgreport.a
DIAG_LIB := $(BUILD)/libkimgdiag.a
PROBE := $(BUILD)/kimg-probe
SHIM := $(BUILD)/libkimg.so
API_LIB := $(BUILD)/libkimgapi.so
API_MAP := api/libkimgapi.map

CHECK_CFLAGS := $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null || echo -lcheck -lsubunit -lm -lrt -lpthread)

.PHONY: all demo test unit fixtures fuzz fuzz-build bench mutation mutants mutants-map install uninstall clean help
all: $(PROBE) $(if $(SHIM_SRC),$(SHIM) $(DIAG_LIB)) $(API_LIB) $(if $(filter asan,$(SANITIZE)),$(API_OBJ))

$(BUILD)/obj/%.o: %.c VERSION
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

# One static library per folder, compiled once; the probe, the shim and the
# tests link the same objects. Layers, lowest first: core; sys and report
# (each on the core only); the shim's diagnosis on all three.
# tests/scripts/layers.sh checks with nm that no library needs one above it.
$(CORE_LIB): $(CORE_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^
$(SYS_LIB): $(SYS_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^
$(REPORT_LIB): $(REPORT_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^
# The diagnosis layer alone: its unit tests link it, and
# tests/scripts/layers.sh reads its undefined symbols (nm -u).
$(DIAG_LIB): $(SHIM_DIAG_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# Each shim layer's include path: its own folder and shim/ (diag.h,
# glibc_pins.h), never the other layer's folder.
SHIM_HOOK_CPPFLAGS := -Ishim -Ishim/hook
SHIM_DIAG_CPPFLAGS := -Ishim -Ishim/diag
$(BUILD)/obj/shim/hook/%.o: CPPFLAGS += $(SHIM_HOOK_CPPFLAGS)
$(BUILD)/obj/shim/diag/%.o: CPPFLAGS += $(SHIM_DIAG_CPPFLAGS)

# kimg-probe must start on glibc 2.17 as well: probe/crt/libc_start.c replaces
# the 2.34-only start-up call, and libdl/libpthread are named as for the shim.
PROBE_CRT_OBJ := $(if $(filter asan,$(SANITIZE)),,$(call obj,probe/crt/libc_start.c))
$(PROBE): $(PROBE_OBJ) $(PROBE_CRT_OBJ) $(REPORT_LIB) $(SYS_LIB) $(CORE_LIB)
	$(CC) $(CFLAGS) $(SAN_EXE_LDFLAGS) -o $@ $(PROBE_OBJ) $(PROBE_CRT_OBJ) $(REPORT_LIB) $(SYS_LIB) $(CORE_LIB) $(SHIM_LDLIBS)

# kimg-probe whose tree walk lists at most 8 entries ahead of the visit
# (probe/tree.c TREE_AHEAD_MAX): tests/probe/jobs.sh takes the listers'
# back-pressure path with it in nearly every directory.
PROBE_AHEAD8 := $(BUILD)/tests/kimg-probe-ahead8
$(BUILD)/obj/probe/tree-ahead8.o: probe/tree.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -DTREE_AHEAD_MAX=8 -MMD -MP -c -o $@ $<
$(PROBE_AHEAD8): $(filter-out $(BUILD)/obj/probe/tree.o,$(PROBE_OBJ)) $(BUILD)/obj/probe/tree-ahead8.o $(PROBE_CRT_OBJ) \
		$(REPORT_LIB) $(SYS_LIB) $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SAN_EXE_LDFLAGS) -o $@ $^ $(SHIM_LDLIBS)

# The one link recipe of libkimg.so, for the product and the TSan build
# (tests/shim/shim.mk): $(1) extra flags, $(2) what goes in.
libkimg_link = $(CC) $(PLAIN_CFLAGS) $(1) -shared -Wl,--version-script=$(SHIM_MAP) -Wl,-z,now -Wl,-z,nodelete \
	-o $@ $(2) $(SHIM_LDLIBS)
ifeq ($(SANITIZE),asan)
SHIM_LINK_IN := $(patsubst %.c,$(BUILD)/plain/obj/%.o,$(SHIM_SRC) $(REPORT_SRC) $(SYS_SRC) $(CORE_SRC))
$(BUILD)/plain/obj/shim/hook/%.o: CPPFLAGS += $(SHIM_HOOK_CPPFLAGS)
$(BUILD)/plain/obj/shim/diag/%.o: CPPFLAGS += $(SHIM_DIAG_CPPFLAGS)
$(BUILD)/plain/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(PLAIN_CPPFLAGS) $(PLAIN_CFLAGS) -MMD -MP -c -o $@ $<
# The plain core and diagnosis libraries, for tests/shim/stack.sh, which
# links them into programs and a library that Python loads (no ASan there).
PLAIN_TEST_LIBS := $(BUILD)/plain/libkimgcore.a $(BUILD)/plain/libkimgdiag.a
$(BUILD)/plain/libkimgcore.a: $(patsubst %.c,$(BUILD)/plain/obj/%.o,$(CORE_SRC))
	rm -f $@ && ar rcs $@ $^
$(BUILD)/plain/libkimgdiag.a: $(patsubst %.c,$(BUILD)/plain/obj/%.o,$(SHIM_DIAG_SRC))
	rm -f $@ && ar rcs $@ $^
else
SHIM_LINK_IN := $(SHIM_OBJ) $(REPORT_LIB) $(SYS_LIB) $(CORE_LIB)
endif
$(SHIM): $(SHIM_LINK_IN) $(SHIM_MAP)
	$(call libkimg_link,,$(SHIM_LINK_IN))

# libkimgapi.so: the questions of api/kimg.h over the same core, sys and
# report libraries as the probe (no hooks, no constructor: loading it with
# dlopen or ctypes changes nothing in the process). Exports exactly
# api/libkimgapi.map; glibc 2.17 as the shim (libdl, libpthread named).
$(BUILD)/obj/api/%.o: CPPFLAGS += -Iapi -DKIMG_RELEASE='"$(VERSION)"'
# In the sanitizer build it is plain too, as libkimg.so: Python loads it.
ifeq ($(SANITIZE),asan)
API_LINK_IN := $(patsubst %.c,$(BUILD)/plain/obj/%.o,$(API_SRC) $(REPORT_SRC) $(SYS_SRC) $(CORE_SRC))
$(BUILD)/plain/obj/api/%.o: CPPFLAGS += -Iapi -DKIMG_RELEASE='"$(VERSION)"'
else
API_LINK_IN := $(API_OBJ) $(REPORT_LIB) $(SYS_LIB) $(CORE_LIB)
endif
$(API_LIB): $(API_LINK_IN) $(API_MAP)
	$(CC) $(PLAIN_CFLAGS) -shared -Wl,--version-script=$(API_MAP) -Wl,-soname,libkimgapi.so.1 -Wl,-z,now \
		-o $@ $(API_LINK_IN) $(SHIM_LDLIBS)
	ln -sf libkimgapi.so $(BUILD)/libkimgapi.so.1 # its soname, for programs linked with it here

# tests/api/api.sh's program: the API as a user links it (the header, -lkimgapi).
API_ASK := $(BUILD)/tests/api_ask
$(API_ASK): tests/api/ask.c api/kimg.h $(API_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SAN_EXE_LDFLAGS) -Iapi -o $@ $< -L$(BUILD) -l:libkimgapi.so -Wl,-rpath,$(abspath $(BUILD)) -ldl -lpthread

# tests/probe/jobs.sh's LD_PRELOAD that refuses threads (probe/thread.c's
# inline paths in the real program).
NO_THREADS := $(BUILD)/tests/no_threads.so
$(NO_THREADS): tests/probe/src/no_threads.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -shared -o $@ $< -ldl
# tests/probe/{hardening,jobs}.sh's LD_PRELOAD helpers that cut a file while
# the probe reads it, and alloc_fail.sh's that fails one allocation (test code: the plain test flags of tests/fake_cuda/fake.mk,
# in every build, as the scripts built them before).
PROBE_TEST_PRELOADS := $(BUILD)/tests/shrink_on_map.so $(BUILD)/tests/shrink_on_thread.so $(BUILD)/tests/fail_alloc.so $(BUILD)/tests/bad_hostname.so
$(PROBE_TEST_PRELOADS): $(BUILD)/tests/%.so: tests/probe/src/%.c
	@mkdir -p $(dir $@)
	$(CC) $(SHIM_TEST_CFLAGS) -fPIC -shared -o $@ $< -ldl
# tests/api/python.sh's extension module of a wheel: sm_80 code only, built
# with nvcc (as the fixtures) against python3's headers (python3-dev).
NVCC ?= $(shell command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)
API_PY_EXT := $(BUILD)/tests/py/kimgtest_ext.so
$(API_PY_EXT): tests/api/src/kimgtest_ext.cu
	@mkdir -p $(dir $@)
	$(NVCC) -shared -Xcompiler -fPIC -gencode arch=compute_80,code=sm_80 \
		-I"$$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["include"])')" -o $@ $<
# tests/scripts/{ci_recipes,kimg_run}.sh: a shared object that is not kimg,
# copied where a script needs a library of some name.
EMPTY_SO := $(BUILD)/tests/empty.so
$(EMPTY_SO):
	@mkdir -p $(dir $@)
	$(CC) -shared -fPIC -x c /dev/null -o $@
# tests/scripts/wheel.sh and tests/api/python.sh install the wheel into a
# venv of their own, each a copy of this one (tests/lib.bash fresh_venv):
# python3 -m venv installing pip takes some 4 s of CPU, once here.
TEST_VENV := $(BUILD)/tests/venv/pyvenv.cfg
$(TEST_VENV):
	rm -rf $(dir $@) && python3 -m venv $(dir $@)
# What the scripts run besides the product, the stand-ins and the shim
# test programs: each built here, never by a test (tests/README.md).
.PHONY: test-programs
test-programs: $(PROBE_AHEAD8) $(API_ASK) $(NO_THREADS) $(PROBE_TEST_PRELOADS) $(API_PY_EXT) $(EMPTY_SO) $(TEST_VENV)
test mutation mutants: test-programs

# The stand-in driver, runtime and NVML, built once for every test.
include tests/fake_cuda/fake.mk

# Unit tests: one Check program per module, linked with its layer and
# those below only, so a call upwards fails to link. Core tests by default;
# the lists name the others. The diagnosis layer's tests link it as a
# library, with tests/unit/hook_standin.c in place of the hooks layer's
# up-calls (shim/diag.h), or with tests/unit/driver_standin.c, which binds
# them to the stand-in driver (tests/fake_cuda/fake.mk) for the tests that
# need a device. fallback_plan and payload are core units whose tests
# decompress through sys/codecs.c.
unit_bin = $(addprefix $(BUILD)/tests/test_,$(1))
UNIT_SYS := $(call unit_bin,driver_query file zip fallback_plan payload lazylib owners digest tar_stream tar)
UNIT_REPORT := $(call unit_bin,json report text_escape)
UNIT_DIAG := $(call unit_bin,options registry)
UNIT_LAYER_LIBS = $(CORE_LIB)
$(UNIT_SYS): UNIT_LAYER_LIBS = $(SYS_LIB) $(CORE_LIB)
$(UNIT_REPORT): UNIT_LAYER_LIBS = $(REPORT_LIB) $(CORE_LIB)
$(UNIT_DIAG): CPPFLAGS += $(SHIM_DIAG_CPPFLAGS)
$(UNIT_DIAG): UNIT_LAYER_LIBS = tests/unit/hook_standin.c $(DIAG_LIB) $(REPORT_LIB) $(SYS_LIB) $(CORE_LIB)
$(UNIT_DIAG): tests/unit/hook_standin.c $(DIAG_LIB)
UNIT_DIAG_DRIVER := $(call unit_bin,audit fallback diagnose)
$(UNIT_DIAG_DRIVER): CPPFLAGS += $(SHIM_DIAG_CPPFLAGS)
$(UNIT_DIAG_DRIVER): UNIT_LAYER_LIBS = tests/unit/driver_standin.c $(DIAG_LIB) $(REPORT_LIB) $(SYS_LIB) $(CORE_LIB) \
	-L$(FAKE_DIR) -lcuda -Wl,-rpath,$(abspath $(FAKE_DIR))
$(UNIT_DIAG_DRIVER): tests/unit/driver_standin.c tests/unit/driver_standin.h $(DIAG_LIB) $(FAKE_CUDA)
# probe/ units (issue 23): each test links the one probe object it tests,
# with the layers below; the tree lister's is the 8-entry-window build
# (tree-ahead8.o), so its back-pressure path runs. Each starts its threads
# with probe/thread.c, which links too.
PROBE_THREAD_OBJ := $(BUILD)/obj/probe/thread.o
UNIT_PROBE_OBJ_pool := $(BUILD)/obj/probe/pool.o $(PROBE_THREAD_OBJ)
UNIT_PROBE_OBJ_tree := $(BUILD)/obj/probe/tree-ahead8.o $(PROBE_THREAD_OBJ)
UNIT_PROBE_OBJ_targets_async := $(BUILD)/obj/probe/targets_async.o $(PROBE_THREAD_OBJ)
UNIT_PROBE_OBJ_thread := $(PROBE_THREAD_OBJ)
# the walk's gate (issue 30) with the pool whose scheduling it does; check's
# judge with the whole probe but its main (it collects, owns and judges)
UNIT_PROBE_OBJ_gate := $(BUILD)/obj/probe/gate.o $(BUILD)/obj/probe/pool.o $(PROBE_THREAD_OBJ)
UNIT_PROBE_OBJ_check_judge := $(filter-out $(BUILD)/obj/probe/main.o,$(PROBE_OBJ))
# an image's owners (image_owners.c: pure), its container (image_source.c)
# and a venv read from its files (python_venv.c), each alone (issue 23:
# their error paths, which no run of the probe reaches)
UNIT_PROBE_OBJ_image_owners := $(BUILD)/obj/probe/image_owners.o
UNIT_PROBE_OBJ_image_source := $(BUILD)/obj/probe/image_source.o
UNIT_PROBE_OBJ_python_venv := $(BUILD)/obj/probe/python_venv.o
UNIT_PROBE := $(call unit_bin,pool tree targets_async thread gate check_judge image_owners image_source python_venv)
$(call unit_bin,gate): $(UNIT_PROBE_OBJ_gate)
$(call unit_bin,check_judge): $(UNIT_PROBE_OBJ_check_judge)
$(UNIT_PROBE): CPPFLAGS += -Iprobe
$(UNIT_PROBE): $(PROBE_THREAD_OBJ)
$(UNIT_PROBE): $(BUILD)/tests/test_%: $(BUILD)/obj/probe/%.o
$(call unit_bin,tree): $(UNIT_PROBE_OBJ_tree)
$(UNIT_PROBE): UNIT_LAYER_LIBS = $(UNIT_PROBE_OBJ_$(patsubst test_%,%,$(notdir $@))) $(REPORT_LIB) $(SYS_LIB) $(CORE_LIB)
$(BUILD)/tests/%: tests/unit/%.c tests/unit/testutil.h tests/unit/tarbuild.h tests/unit/fail_alloc.h $(REPORT_LIB) $(SYS_LIB) $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itests/unit $(CHECK_CFLAGS) $(CFLAGS) $(SAN_EXE_LDFLAGS) -o $@ $< $(UNIT_LAYER_LIBS) $(CHECK_LIBS) $(LDLIBS_SYS)

# The fixtures, then the test libraries made of them (tests/shim/shim.mk).
fixtures:
	$(MAKE) -f tests/fixtures/fixtures.mk FIXDIR=$(BUILD)/fixtures
	$(MAKE) --no-print-directory shim-disp-libs

# The README's first command: kimg-probe on the built-in example.
demo: all fixtures
	BUILD=$(BUILD) scripts/demo.sh

unit: $(UNIT_BIN)

# TEST_JOBS tests side by side (tests/run.sh -j): two per core by default,
# since many wait on their programs; TEST_JOBS=1 streams one after another.
TEST_JOBS ?= $(shell echo $$((2 * $$(nproc 2>/dev/null || echo 1))))
test: all fixtures unit shim-tests $(PROBE_AHEAD8) $(API_ASK) $(PLAIN_TEST_LIBS)
	BUILD=$(BUILD) KIMG_SANITIZE=$(SANITIZE) $(SAN_TEST_ENV) tests/run.sh -j $(TEST_JOBS)

# The sanitizer build (see SAN_FLAGS above) and make test in it.
.PHONY: asan asan-test
asan:
	$(MAKE) SANITIZE=asan BUILD=$(BUILD)/asan all
asan-test:
	$(MAKE) SANITIZE=asan BUILD=$(BUILD)/asan test

# The shim test programs and the TSan libkimg (shim-tests target).
include tests/shim/shim.mk

# libFuzzer targets: each target's own file, linked with one library of the
# core compiled once with the fuzz flags (FUZZ_LIB), plus sys/codecs.c,
# sys/zip.c and their loader sys/lazylib.c, so the payload decoders and zlib
# are reached as the product reaches them (dlopen of libzstd.so.1 /
# liblz4.so.1 / libz.so.1: no -dev package needed). The library's objects
# carry the sanitizers and libFuzzer's coverage (fuzzer-no-link); only the
# link of a target adds libFuzzer's main.
FUZZ_CFLAGS := -std=c11 -g -O1 -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
FUZZ_LDFLAGS := -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
fuzz_obj = $(patsubst %.c,$(BUILD)/fuzz/obj/%.o,$(1))
FUZZ_LIB := $(BUILD)/fuzz/libkimgfuzz.a
$(FUZZ_LIB): $(call fuzz_obj,$(CORE_SRC) sys/codecs.c sys/zip.c sys/lazylib.c)
	rm -f $@ && ar rcs $@ $^
$(BUILD)/fuzz/obj/%.o: %.c VERSION
	@mkdir -p $(dir $@)
	$(CLANG) $(CPPFLAGS) $(FUZZ_CFLAGS) -MMD -MP -c -o $@ $<
$(FUZZ_BIN): $(BUILD)/fuzz/%: $(BUILD)/fuzz/obj/tests/fuzz/%.o $(FUZZ_LIB)
	$(CLANG) $(FUZZ_LDFLAGS) -o $@ $< $(FUZZ_EXTRA_OBJ) $(FUZZ_LIB) -ldl -lpthread

# fuzz_options links the shim's option parser and the log it warns to
# (shim/diag/options.c, log.c, log_open.c), as tests/unit/test_options.c does.
FUZZ_OPTIONS_OBJ := $(call fuzz_obj,shim/diag/options.c shim/diag/log.c shim/diag/log_open.c)
$(BUILD)/fuzz/obj/shim/diag/%.o $(BUILD)/fuzz/obj/tests/fuzz/fuzz_options.o: CPPFLAGS += $(SHIM_DIAG_CPPFLAGS)
$(BUILD)/fuzz/fuzz_options: $(FUZZ_OPTIONS_OBJ)
$(BUILD)/fuzz/fuzz_options: FUZZ_EXTRA_OBJ = $(FUZZ_OPTIONS_OBJ)
# image layers without libarchive (sys/tar_stream.c; sys/tar.c for its fallback)
FUZZ_TAR_STREAM_OBJ := $(call fuzz_obj,sys/tar_stream.c sys/tar.c)
$(BUILD)/fuzz/fuzz_tar_stream: $(FUZZ_TAR_STREAM_OBJ)
$(BUILD)/fuzz/fuzz_tar_stream: FUZZ_EXTRA_OBJ = $(FUZZ_TAR_STREAM_OBJ)

fuzz-build: $(FUZZ_BIN)

fuzz: fuzz-build
	BUILD=$(BUILD) FUZZ_SECONDS=$(FUZZ_SECONDS) tests/fuzz/run.sh

bench: all fixtures
	BUILD=$(BUILD) bench/run.sh

# Each planted bug alone in a scratch copy (prebuilt objects and fixtures
# reused): "mutations: K caught, M missed"; fails on a miss or a stale pattern.
mutation: all fixtures unit shim-tests $(PROBE_AHEAD8) $(API_ASK)
	BUILD=$(BUILD) tests/mutation/run.sh

# Generated mutants (tests/mutation/README.md): MUTANTS_N (default 60) sites
# drawn by MUTANTS_SEED (default random, printed), each planted alone in a
# scratch copy and judged by the tests that executed its line (coverage.txt); closing line
# "mutants: K killed, S survived, E equivalent of N sampled (seed X): score P%".
mutants: all fixtures unit shim-tests $(PROBE_AHEAD8) $(API_ASK) wheel deb
	MUTANTS_N="$(MUTANTS_N)" MUTANTS_SEED="$(MUTANTS_SEED)" MUTANTS_MIN_SCORE="$(MUTANTS_MIN_SCORE)" \
		python3 tests/mutation/mutants.py run

# The file->tests map make mutants reads, from gcov: a coverage build in
# build-cov (fixtures shared), each test alone. Run it after tests or
# sources are added or moved, and commit tests/mutation/coverage.txt.
COV_BUILD := build-cov
mutants-map: fixtures wheel deb
	CFLAGS="-O0 -g --coverage" $(MAKE) BUILD=$(COV_BUILD) C_STD=gnu11 SHIM_DISP_FIX=$(abspath $(BUILD))/fixtures \
		all unit shim-tests test-programs shim-disp-libs
	KIMG_FIXTURES=$(abspath $(BUILD))/fixtures python3 tests/mutation/mutants.py map --build $(COV_BUILD)

# Installs the two tools, the library and the man pages (man1: kimg-run,
# kimg-probe; man7: libkimg), kimg-run and the pages with the version
# written in (packaging/packaging.mk). kimg-run finds the library as bin/../lib, so
# bin and lib must stay siblings under one PREFIX.
install: all
	install -d "$(DESTDIR)$(PREFIX)/bin" "$(DESTDIR)$(PREFIX)/lib" \
		"$(DESTDIR)$(PREFIX)/share/man/man1" "$(DESTDIR)$(PREFIX)/share/man/man7"
	install -m 0755 $(PROBE) "$(DESTDIR)$(PREFIX)/bin/kimg-probe"
	install -m 0755 $(BUILD)/kimg-run "$(DESTDIR)$(PREFIX)/bin/kimg-run"
	if [ -f $(SHIM) ]; then install -m 0755 $(SHIM) "$(DESTDIR)$(PREFIX)/lib/libkimg.so"; fi
	install -m 0644 $(BUILD)/man/kimg-run.1 $(BUILD)/man/kimg-probe.1 "$(DESTDIR)$(PREFIX)/share/man/man1/"
	install -m 0644 $(BUILD)/man/libkimg.7 "$(DESTDIR)$(PREFIX)/share/man/man7/"
	install -d "$(DESTDIR)$(PREFIX)/include"
	install -m 0644 api/kimg.h "$(DESTDIR)$(PREFIX)/include/kimg.h"
	install -m 0755 $(API_LIB) "$(DESTDIR)$(PREFIX)/lib/libkimgapi.so.1"
	ln -sf libkimgapi.so.1 "$(DESTDIR)$(PREFIX)/lib/libkimgapi.so"

uninstall:
	rm -f "$(DESTDIR)$(PREFIX)/bin/kimg-probe" "$(DESTDIR)$(PREFIX)/bin/kimg-run" \
		"$(DESTDIR)$(PREFIX)/lib/libkimg.so" \
		"$(DESTDIR)$(PREFIX)/share/man/man1/kimg-run.1" "$(DESTDIR)$(PREFIX)/share/man/man1/kimg-probe.1" \
		"$(DESTDIR)$(PREFIX)/share/man/man7/libkimg.7"
	rm -f "$(DESTDIR)$(PREFIX)/include/kimg.h" "$(DESTDIR)$(PREFIX)/lib/libkimgapi.so.1" \
		"$(DESTDIR)$(PREFIX)/lib/libkimgapi.so"

clean:
	rm -rf $(BUILD)

# The target list at the top of this file, its one source.
help:
	@sed -n 's/^#   \(make.*\)/\1/p' $(firstword $(MAKEFILE_LIST))

# make wheel, make deb, make test-aarch64 (packaging/packaging.mk).
include packaging/packaging.mk

-include $(shell find $(BUILD)/obj $(BUILD)/plain/obj $(BUILD)/fuzz/obj -name '*.d' 2>/dev/null)
