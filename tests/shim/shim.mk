# SPDX-License-Identifier: Apache-2.0
# Shim integration tests (included by the Makefile): test programs built
# with gcc against the stand-in driver and runtime of tests/fake_cuda/fake.mk
# (no nvcc, no GPU), and a ThreadSanitizer build of libkimg for the threads
# test. tests/shim/*.sh run them under LD_PRELOAD and check kimg's JSON report.
#
#   $(BUILD)/shim-tests/*               tests/shim/progs/*.c, tests/shim/diagnose_prog.c
#   $(BUILD)/tsan/libkimg.so            every libkimg source with -fsanitize=thread

SHIM_TEST_DIR := $(BUILD)/shim-tests
TSAN_SHIM := $(BUILD)/tsan/libkimg.so

SHIM_TEST_PROGS := $(addprefix $(SHIM_TEST_DIR)/,drv_direct drv_dl link_direct link_dl disp_main rt no_cuda \
	hello libwrap_puts.so threads fork secure diagnose_prog)
SHIM_TEST_PROGS += $(SHIM_TEST_DIR)/next_cu
# symbol lookups and the driver's error log (tests/shim/symbols.sh, driver_log.sh)
SHIM_TEST_PROGS += $(addprefix $(SHIM_TEST_DIR)/,sym_direct sym_dl rtsym libfailalloc.so)

.PHONY: shim-tests
shim-tests: $(SHIM) $(FAKE_STANDINS) $(SHIM_TEST_PROGS) $(TSAN_SHIM)

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

# libkimg with ThreadSanitizer: the same sources and flags plus -fsanitize=thread.
TSAN_OBJ := $(patsubst %.c,$(BUILD)/tsan/obj/%.o,$(SHIM_SRC) $(REPORT_SRC) $(SYS_SRC) $(CORE_SRC))
$(BUILD)/tsan/obj/shim/hook/%.o: CPPFLAGS += $(SHIM_HOOK_CPPFLAGS)
$(BUILD)/tsan/obj/shim/diag/%.o: CPPFLAGS += $(SHIM_DIAG_CPPFLAGS)
$(BUILD)/tsan/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(PLAIN_CPPFLAGS) $(PLAIN_CFLAGS) -fsanitize=thread -MMD -MP -c -o $@ $<
$(TSAN_SHIM): $(TSAN_OBJ) shim/libkimg.map
	$(call libkimg_link,-fsanitize=thread,$(TSAN_OBJ))
