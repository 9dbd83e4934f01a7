# SPDX-License-Identifier: Apache-2.0
# Shim integration tests (included by the Makefile): test programs built
# with gcc against the stand-in driver and runtime of tests/fake_cuda/fake.mk
# (no nvcc, no GPU), and a ThreadSanitizer build of libkimg for the threads
# test. tests/shim/*.sh run them under LD_PRELOAD and check kimg's JSON report.
#
#   $(BUILD)/shim-tests/*               tests/shim/progs/*.c, tests/shim/diagnose_prog.c
#   $(BUILD)/shim-tests/stack/*         tests/shim/stack.sh's programs, linked with kimg's
#                                       core and diagnosis libraries (x86-64 only)
#   $(BUILD)/shim-tests/disp/*          tests/shim/progs/disp.c around fixtures (make fixtures)
#   $(BUILD)/tsan/libkimg.so            every libkimg source with -fsanitize=thread
#
# Every program is built with the test flags of tests/fake_cuda/fake.mk
# (SHIM_TEST_CFLAGS), in every build: test code is not the product.

SHIM_TEST_DIR := $(BUILD)/shim-tests
TSAN_SHIM := $(BUILD)/tsan/libkimg.so

SHIM_TEST_PROGS := $(addprefix $(SHIM_TEST_DIR)/,drv_direct drv_dl link_direct link_dl disp_main rt no_cuda \
	hello libwrap_puts.so threads fork secure diagnose_prog)
SHIM_TEST_PROGS += $(SHIM_TEST_DIR)/next_cu
# symbol lookups and the driver's error log (tests/shim/symbols.sh, driver_log.sh)
SHIM_TEST_PROGS += $(addprefix $(SHIM_TEST_DIR)/,sym_direct sym_dl rtsym libfailalloc.so rings weak_cuda)
# an extension loaded with RTLD_LOCAL and its loader (tests/shim/runtime.sh)
SHIM_TEST_PROGS += $(addprefix $(SHIM_TEST_DIR)/,rt_ext.so rt_loader)
# tests/shim/stack.sh: not under qemu (tests/aarch64/run.sh), so not in
# shim-test-programs; make mutation rebuilds them with a planted bug
# (shim-stack-programs).
SHIM_STACK_DIR := $(SHIM_TEST_DIR)/stack
SHIM_STACK_PROGS := $(addprefix $(SHIM_STACK_DIR)/,stack_probe libstack_probe.so fake_python_3.15 fake_python_3.9 \
	nounwind/libunwind.so.8 static_pie static_nopie static_stripped)

# tests/shim/{dispatch,audit}.sh: libraries that are tests/shim/progs/disp.c
# around two fixture containers (.incbin), as NCCL or cuDNN ship theirs.
# They are made of fixtures, so the fixtures target builds them once the
# fixtures exist (make shim-disp-libs; packaging/aarch64.mk's
# fixtures-aarch64 too), not shim-tests, which needs no fixture.
#   libdisp.so        sm_90 + sm_100f only: a module for other GPUs (F1)
#   libcudnn_disp.so  plain sm_80 under a cuDNN name (F2)
#   libplain.so       plain sm_80 in any other library (F3)
#   libtwo80.so       two sm_80-only modules of one file (audit's grouping)
SHIM_DISP_DIR := $(SHIM_TEST_DIR)/disp
# where the fixtures are (make mutants-map builds these in its own tree from the main build's)
SHIM_DISP_FIX ?= $(BUILD)/fixtures
SHIM_DISP_LIBS := $(addprefix $(SHIM_DISP_DIR)/,libdisp.so libcudnn_disp.so libplain.so libtwo80.so)
# disp_lib CONTAINER_A CONTAINER_B (fixture names)
disp_lib = $(CC) $(SHIM_TEST_CFLAGS) -fPIC -shared -DCONT_A='"$(SHIM_DISP_FIX)/$(1)"' -DCONT_B='"$(SHIM_DISP_FIX)/$(2)"' \
	-o $@ tests/shim/progs/disp.c -ldl
$(SHIM_DISP_LIBS): tests/shim/progs/disp.c | $(SHIM_DISP_DIR)
$(SHIM_DISP_DIR):
	mkdir -p $@
$(SHIM_DISP_DIR)/libdisp.so: $(SHIM_DISP_FIX)/lineinfo.fatbin $(SHIM_DISP_FIX)/sm100f.fatbin
	$(call disp_lib,lineinfo.fatbin,sm100f.fatbin)
$(SHIM_DISP_DIR)/libcudnn_disp.so $(SHIM_DISP_DIR)/libplain.so: $(SHIM_DISP_FIX)/lineinfo.fatbin $(SHIM_DISP_FIX)/sm80.fatbin
	$(call disp_lib,lineinfo.fatbin,sm80.fatbin)
$(SHIM_DISP_DIR)/libtwo80.so: $(SHIM_DISP_FIX)/sm80.fatbin
	$(call disp_lib,sm80.fatbin,sm80.fatbin)

.PHONY: shim-tests shim-stack-programs shim-disp-libs
shim-disp-libs: $(SHIM_DISP_LIBS)
shim-tests: $(SHIM) $(FAKE_STANDINS) $(SHIM_TEST_PROGS) $(SHIM_STACK_PROGS) $(TSAN_SHIM)
shim-stack-programs: $(SHIM_STACK_PROGS)

SHIM_PROG_DEPS := tests/shim/progs/progutil.h

# Linked against libcuda: its cu* references bind to libkimg's exports.
$(SHIM_TEST_DIR)/drv_direct: tests/shim/progs/drv.c $(SHIM_PROG_DEPS) $(FAKE_CUDA)
	@mkdir -p $(dir $@)
	$(CC) $(SHIM_TEST_CFLAGS) -DDIRECT -o $@ $< -L$(FAKE_DIR) -lcuda -ldl
# Not linked against libcuda: reaches it only through dlopen, like static cudart.
$(SHIM_TEST_DIR)/drv_dl: tests/shim/progs/drv.c $(SHIM_PROG_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(SHIM_TEST_CFLAGS) -o $@ $< -ldl
# The JIT linker (cuLink*), both ways, as drv_direct / drv_dl.
$(SHIM_TEST_DIR)/link_direct: tests/shim/progs/link.c $(SHIM_PROG_DEPS) $(FAKE_CUDA)
	@mkdir -p $(dir $@)
	$(CC) $(SHIM_TEST_CFLAGS) -DDIRECT -o $@ $< -L$(FAKE_DIR) -lcuda -ldl
$(SHIM_TEST_DIR)/link_dl: tests/shim/progs/link.c $(SHIM_PROG_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(SHIM_TEST_CFLAGS) -o $@ $< -ldl
# Dispatch tests: the program; its libraries (disp.c) are built by
# tests/shim/dispatch.sh from fixtures.
$(SHIM_TEST_DIR)/disp_main: tests/shim/progs/disp_main.c
	@mkdir -p $(dir $@)
	$(CC) $(SHIM_TEST_CFLAGS) -o $@ $< -ldl
# tests/shim/passthrough.sh: weak references to the driver and runtime, linked against neither.
$(SHIM_TEST_DIR)/weak_cuda: tests/shim/progs/weak_cuda.c
	@mkdir -p $(dir $@)
	$(CC) $(SHIM_TEST_CFLAGS) -o $@ $<
# tests/shim/driver_log.sh: more live threads than driver-log rings.
$(SHIM_TEST_DIR)/rings: tests/shim/progs/rings.c $(SHIM_PROG_DEPS) $(FAKE_CUDA)
	@mkdir -p $(dir $@)
	$(CC) $(SHIM_TEST_CFLAGS) -o $@ $< -L$(FAKE_DIR) -lcuda -ldl -lpthread
$(SHIM_TEST_DIR)/sym_direct: tests/shim/progs/sym.c $(SHIM_PROG_DEPS) $(FAKE_CUDA)
	@mkdir -p $(dir $@)
	$(CC) $(SHIM_TEST_CFLAGS) -DDIRECT -o $@ $< -L$(FAKE_DIR) -lcuda -ldl -lpthread
$(SHIM_TEST_DIR)/sym_dl: tests/shim/progs/sym.c $(SHIM_PROG_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(SHIM_TEST_CFLAGS) -o $@ $< -ldl -lpthread
$(SHIM_TEST_DIR)/rtsym: tests/shim/progs/rtsym.c $(SHIM_PROG_DEPS) $(FAKE_CUDART)
	@mkdir -p $(dir $@)
	$(CC) $(SHIM_TEST_CFLAGS) -o $@ $< -L$(FAKE_DIR) -lcudart -ldl
$(SHIM_TEST_DIR)/libfailalloc.so: tests/shim/progs/failalloc.c
	@mkdir -p $(dir $@)
	$(CC) $(SHIM_TEST_CFLAGS) -fPIC -shared -o $@ $<
$(SHIM_TEST_DIR)/rt: tests/shim/progs/rt.c $(SHIM_PROG_DEPS) $(FAKE_CUDART)
	@mkdir -p $(dir $@)
	$(CC) $(SHIM_TEST_CFLAGS) -o $@ $< -L$(FAKE_DIR) -lcudart -ldl
$(SHIM_TEST_DIR)/no_cuda: tests/shim/progs/no_cuda.c
	@mkdir -p $(dir $@)
	$(CC) $(SHIM_TEST_CFLAGS) -o $@ $< -ldl
# tests/shim/diagnose.sh: its text-report checks name this program's main.
$(SHIM_TEST_DIR)/diagnose_prog: tests/shim/diagnose_prog.c
	@mkdir -p $(dir $@)
	$(CC) $(SHIM_TEST_CFLAGS) -o $@ $< -ldl
$(SHIM_TEST_DIR)/hello: tests/shim/progs/hello.c
	@mkdir -p $(dir $@)
	$(CC) $(SHIM_TEST_CFLAGS) -o $@ $<
$(SHIM_TEST_DIR)/libwrap_puts.so: tests/shim/progs/wrap_puts.c
	@mkdir -p $(dir $@)
	$(CC) $(SHIM_TEST_CFLAGS) -fPIC -shared -o $@ $< -ldl
$(SHIM_TEST_DIR)/fork: tests/shim/progs/fork.c $(SHIM_PROG_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(SHIM_TEST_CFLAGS) -o $@ $< -ldl -lpthread
$(SHIM_TEST_DIR)/secure: tests/shim/progs/secure.c $(SHIM_PROG_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(SHIM_TEST_CFLAGS) -o $@ $< -ldl
# A second interposer between the program and libcuda (RTLD_NEXT for a cu* name).
$(SHIM_TEST_DIR)/libwrap_cu.so: tests/shim/progs/wrap_cu.c
	@mkdir -p $(dir $@)
	$(CC) $(SHIM_TEST_CFLAGS) -fPIC -shared -o $@ $< -ldl
$(SHIM_TEST_DIR)/next_cu: tests/shim/progs/next_cu.c $(SHIM_PROG_DEPS) $(SHIM_TEST_DIR)/libwrap_cu.so $(FAKE_CUDA)
	@mkdir -p $(dir $@)
	$(CC) $(SHIM_TEST_CFLAGS) -o $@ $< -L$(SHIM_TEST_DIR) -Wl,--no-as-needed -lwrap_cu -L$(FAKE_DIR) -lcuda -Wl,--as-needed -ldl -Wl,-rpath,'$$ORIGIN'
$(SHIM_TEST_DIR)/threads: tests/shim/progs/threads.c $(SHIM_PROG_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(SHIM_TEST_CFLAGS) -fsanitize=thread -o $@ $< -ldl -lpthread
# The extension (rt.c with its main renamed) finds the versioned runtime
# through its run path, after LD_LIBRARY_PATH (DT_RUNPATH).
$(SHIM_TEST_DIR)/rt_ext.so: tests/shim/progs/rt.c $(SHIM_PROG_DEPS) $(FAKE_DIR)/v13/libcudart.so.13
	@mkdir -p $(dir $@)
	$(CC) $(SHIM_TEST_CFLAGS) -fPIC -shared -Dmain=rt_main -o $@ $< -L$(FAKE_DIR)/v13 -lcudart -ldl \
		-Wl,--enable-new-dtags,-rpath,$(abspath $(FAKE_DIR)/v13)
$(SHIM_TEST_DIR)/rt_loader: tests/shim/progs/rt_loader.c
	@mkdir -p $(dir $@)
	$(CC) $(SHIM_TEST_CFLAGS) -o $@ $< -ldl

# tests/shim/stack.sh: the stack probe (a program, and a library for
# Python's ctypes) and a fake CPython of a version kimg does not know, each
# linked with the diagnosis layer and the core (the plain ones in the
# sanitizer build: Python loads the library) and the stand-in for the hooks'
# up-calls; programs failing through the fake driver, PIE and not, built
# without -rdynamic, and stripped; a libunwind.so.8 without its symbols.
ifeq ($(SANITIZE),asan)
SHIM_STACK_LIBS = $(BUILD)/plain/libkimgdiag.a $(BUILD)/plain/libkimgcore.a
else
SHIM_STACK_LIBS = $(DIAG_LIB) $(CORE_LIB)
endif
# --coverage when the libraries linked carry it (make mutants-map's build):
# gcov's runtime is then needed at the link
SHIM_STACK_CFLAGS = $(PLAIN_CPPFLAGS) $(SHIM_DIAG_CPPFLAGS) $(SHIM_TEST_CFLAGS) $(filter --coverage,$(CFLAGS))
SHIM_STACK_IN = tests/unit/hook_standin.c $(SHIM_STACK_LIBS) -ldl -lpthread
$(SHIM_STACK_DIR)/stack_probe: tests/shim/stack_probe.c tests/unit/hook_standin.c $(SHIM_STACK_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(SHIM_STACK_CFLAGS) -o $@ $< $(SHIM_STACK_IN)
$(SHIM_STACK_DIR)/libstack_probe.so: tests/shim/stack_probe.c tests/unit/hook_standin.c $(SHIM_STACK_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(SHIM_STACK_CFLAGS) -shared -fPIC -DSTACK_PROBE_LIB -o $@ $< $(SHIM_STACK_IN)
# fake_python_X.Y claims CPython X.Y (its Py_Version, hex as sys.hexversion)
fake_py_hex = $(if $(filter 3.15,$(1)),0x030f00f0,$(if $(filter 3.9,$(1)),0x030900f0,$(error no version for $(1))))
$(SHIM_STACK_DIR)/fake_python_%: tests/shim/fake_python.c tests/unit/hook_standin.c $(SHIM_STACK_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(SHIM_STACK_CFLAGS) -rdynamic -DFAKE_PY_VERSION=$(call fake_py_hex,$*) -o $@ $< $(SHIM_STACK_IN)
$(SHIM_STACK_DIR)/nounwind/libunwind.so.8: tests/shim/progs/nounwind.c
	@mkdir -p $(dir $@)
	$(CC) $(SHIM_TEST_CFLAGS) -shared -fPIC -Wl,-soname,libunwind.so.8 -o $@ $<
$(SHIM_STACK_DIR)/static_pie: tests/shim/stack_static_prog.c
	@mkdir -p $(dir $@)
	$(CC) $(SHIM_TEST_CFLAGS) -pie -fPIE -o $@ $< -ldl
$(SHIM_STACK_DIR)/static_nopie: tests/shim/stack_static_prog.c
	@mkdir -p $(dir $@)
	$(CC) $(SHIM_TEST_CFLAGS) -no-pie -o $@ $< -ldl
$(SHIM_STACK_DIR)/static_stripped: $(SHIM_STACK_DIR)/static_pie
	strip -o $@ $<

# libkimg with ThreadSanitizer: the same sources and flags plus -fsanitize=thread.
TSAN_OBJ := $(patsubst %.c,$(BUILD)/tsan/obj/%.o,$(SHIM_SRC) $(REPORT_SRC) $(SYS_SRC) $(CORE_SRC))
$(BUILD)/tsan/obj/shim/hook/%.o: CPPFLAGS += $(SHIM_HOOK_CPPFLAGS)
$(BUILD)/tsan/obj/shim/diag/%.o: CPPFLAGS += $(SHIM_DIAG_CPPFLAGS)
$(BUILD)/tsan/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(PLAIN_CPPFLAGS) $(PLAIN_CFLAGS) -fsanitize=thread -MMD -MP -c -o $@ $<
$(TSAN_SHIM): $(TSAN_OBJ) shim/libkimg.map
	$(call libkimg_link,-fsanitize=thread,$(TSAN_OBJ))
