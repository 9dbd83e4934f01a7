# SPDX-License-Identifier: Apache-2.0
# The stand-ins for NVIDIA's libraries (included by the Makefile), each
# built here once, with one flag set, and used from here by every test
# (tests/lib.bash finds them under $BUILD and fails when one is missing):
#
#   $(BUILD)/fake_cuda/libcuda.so.1      fake_cuda.c: the driver (its own image reader, no kimg code)
#     (-Bsymbolic-functions: its cuGetProcAddress hands out its own functions,
#     never libkimg's exports, as a driver with an internal table does)
#   $(BUILD)/fake_cuda/libcudart.so.13   fake_cudart.c: the shared runtime, unversioned symbols
#   $(BUILD)/fake_nvml/libnvidia-ml.so.1 fake_nvml.c: NVML, in a folder of its own so that
#     only the tests that ask for it (LD_LIBRARY_PATH) see a second reading
#
# Variant (make fake-cudart-versioned): the runtime with every symbol in a
# version node, as the real libcudart.so.N ships it, one per node of
# FAKE_CUDART_NODES, and tests/shim/progs/rt.c linked against each:
#   $(BUILD)/fake_cuda/v<node>/libcudart.so.<node>   $(BUILD)/shim-tests/rt_v<node>

FAKE_DIR := $(BUILD)/fake_cuda
FAKE_CUDA := $(FAKE_DIR)/libcuda.so.1
FAKE_CUDART := $(FAKE_DIR)/libcudart.so.13
FAKE_NVML := $(BUILD)/fake_nvml/libnvidia-ml.so.1
FAKE_CUDART_NODES := 13 12 11.0
FAKE_CUDART_VERSIONED := $(foreach n,$(FAKE_CUDART_NODES),$(FAKE_DIR)/v$(n)/libcudart.so.$(n))
FAKE_RT_VERSIONED := $(foreach n,$(FAKE_CUDART_NODES),$(BUILD)/shim-tests/rt_v$(n))
# Test code is not the product: default visibility, gnu11 for pthread_barrier.
SHIM_TEST_CFLAGS := -std=gnu11 -O1 -g -Wall -Wextra -Wno-unused-parameter -D_GNU_SOURCE
FAKE_SO = $(CC) $(SHIM_TEST_CFLAGS) -fPIC -shared

# Every stand-in the tests use (shim-tests and shim-test-programs build them).
FAKE_STANDINS := $(FAKE_CUDA) $(FAKE_CUDART) $(FAKE_NVML) $(FAKE_CUDART_VERSIONED) $(FAKE_RT_VERSIONED)

.PHONY: fake-standins fake-cudart-versioned
fake-standins: $(FAKE_STANDINS)
fake-cudart-versioned: $(FAKE_CUDART_VERSIONED) $(FAKE_RT_VERSIONED)

$(FAKE_CUDA): tests/fake_cuda/fake_cuda.c tests/fake_cuda/fake_image.h
	@mkdir -p $(dir $@)
	$(FAKE_SO) -Wl,-soname,libcuda.so.1 -Wl,-Bsymbolic-functions -o $@ $<
	ln -sf libcuda.so.1 $(FAKE_DIR)/libcuda.so

$(FAKE_CUDART): tests/fake_cuda/fake_cudart.c
	@mkdir -p $(dir $@)
	$(FAKE_SO) -Wl,-soname,libcudart.so.13 -o $@ $< -ldl -lpthread
	ln -sf libcudart.so.13 $(FAKE_DIR)/libcudart.so

$(FAKE_NVML): tests/fake_cuda/fake_nvml.c
	@mkdir -p $(dir $@)
	$(FAKE_SO) -Wl,-soname,libnvidia-ml.so.1 -o $@ $<

# $(1): the version node. References to cudaLaunchKernel@libcudart.so.N
# bind only to a definition of that version (as with the real runtime).
define fake_cudart_node
$(FAKE_DIR)/v$(1)/libcudart.so.$(1): tests/fake_cuda/fake_cudart.c
	@mkdir -p $$(dir $$@)
	echo 'libcudart.so.$(1) { global: *; };' >$$(dir $$@)cudart.map
	$$(FAKE_SO) -Wl,-soname,libcudart.so.$(1) -Wl,--version-script=$$(dir $$@)cudart.map -o $$@ $$< -ldl -lpthread
	ln -sf libcudart.so.$(1) $$(dir $$@)libcudart.so
$(BUILD)/shim-tests/rt_v$(1): tests/shim/progs/rt.c tests/shim/progs/progutil.h $(FAKE_DIR)/v$(1)/libcudart.so.$(1)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(SHIM_TEST_CFLAGS) -o $$@ $$< -L$(FAKE_DIR)/v$(1) -lcudart -ldl
endef
$(foreach n,$(FAKE_CUDART_NODES),$(eval $(call fake_cudart_node,$(n))))
