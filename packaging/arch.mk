# SPDX-License-Identifier: Apache-2.0
# Target architecture (included by the Makefile before anything is defined).
#
#   make ARCH=aarch64     cross-build with Debian's gcc-aarch64-linux-gnu
#                         (apt-get install gcc-aarch64-linux-gnu) into
#                         build/aarch64/
#
# Without ARCH (or ARCH=x86_64 on x86-64), the native build in build/.
ARCH ?=
ifeq ($(ARCH),aarch64)
CROSS ?= aarch64-linux-gnu-
ifeq ($(origin CC),default)
CC := $(CROSS)gcc
endif
BUILD ?= build/aarch64
# Its version node for the pre-2.34 dlsym is the architecture's base
# version, GLIBC_2.17 (shim/libkimg.map names x86-64's GLIBC_2.2.5).
SHIM_MAP := $(BUILD)/libkimg.map
else ifneq ($(filter-out x86_64,$(ARCH)),)
$(error ARCH=$(ARCH): known are aarch64 (cross-built) and x86_64)
endif
SHIM_MAP ?= shim/libkimg.map
