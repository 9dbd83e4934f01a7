# SPDX-License-Identifier: Apache-2.0
# make test-aarch64 (included by packaging/packaging.mk): the aarch64 cross
# build's probe tests and stand-in-driver shim tests under qemu-user
# (tests/aarch64/run.sh) and its wheel, on aarch64 fixtures made from the x86-64 ones
# (tests/fixtures/aarch64.mk). Needs gcc-aarch64-linux-gnu,
# qemu-user-static and nvcc (for the x86-64 fixtures the device code comes
# from); scripts/setup-debian.sh installs the first two.
.PHONY: test-aarch64 fixtures-aarch64
ifeq ($(ARCH),aarch64)
# The native fixtures (nvcc), wherever the native build keeps them.
X86_FIXTURES ?= build/fixtures
HOST_CC ?= gcc

fixtures-aarch64:
	$(MAKE) -f tests/fixtures/fixtures.mk FIXDIR=$(X86_FIXTURES)
	$(MAKE) -f tests/fixtures/aarch64.mk X86DIR=$(X86_FIXTURES) FIXDIR=$(BUILD)/fixtures CROSS=$(CROSS)
	$(MAKE) --no-print-directory shim-disp-libs

$(BUILD)/qemu_exec: tests/aarch64/qemu_exec.c
	@mkdir -p $(dir $@)
	$(HOST_CC) -O2 -static -o $@ $<

test-aarch64: all wheel fixtures-aarch64 shim-test-programs $(PROBE_AHEAD8) $(PROBE_TEST_PRELOADS) $(BUILD)/qemu_exec
	BUILD=$(BUILD) tests/aarch64/run.sh
else
test-aarch64 fixtures-aarch64:
	$(MAKE) ARCH=aarch64 $@
endif
