# Packages (included at the end of the Makefile).
#
#   make wheel      $(DIST)/kimg-V-py3-none-manylinux_2_17_M.manylinux2014_M.whl
#                   (packaging/make_wheel.py: zipfile and hashlib only, no index)
#   make deb        $(DIST)/kimg_V-1_A.deb (packaging/make_deb.sh, dpkg-deb)
#   make ARCH=aarch64 wheel|deb      the same from the cross build
#   make test-aarch64                packaging/aarch64.mk
#
# V is KIMG_VERSION of shim/diag.h (kimg-run's KIMG_RUN_VERSION must agree);
# M the machine the compiler targets. Both packages carry the ELF files
# with their debug sections stripped (.symtab kept: the shim names its own
# frames from it).

VERSION := $(shell sed -n 's/^\#define KIMG_VERSION "\(.*\)"$$/\1/p' shim/diag.h)
MACHINE := $(firstword $(subst -, ,$(shell $(CC) -dumpmachine)))
DEB_ARCH := $(if $(filter aarch64,$(MACHINE)),arm64,$(if $(filter x86_64,$(MACHINE)),amd64,$(MACHINE)))
DIST ?= dist
OBJCOPY ?= $(CROSS)objcopy
PKG_DIR := $(BUILD)/pkg
WHEEL := $(DIST)/kimg-$(VERSION)-py3-none-manylinux_2_17_$(MACHINE).manylinux2014_$(MACHINE).whl
DEB := $(DIST)/kimg_$(VERSION)-1_$(DEB_ARCH).deb
# No licence is stated in the repository yet: a marked placeholder, which
# the owner must replace (file and name) before anything is published.
LICENCE_FILE := packaging/LICENSE.placeholder
LICENCE_NAME := UNDECIDED (placeholder: no licence has been chosen yet; see LICENSE)
PY_SRC := packaging/python/kimg/__init__.py packaging/python/kimg/__main__.py packaging/python/kimg/_api.py
MAN_PAGES := $(wildcard docs/man/*.1 docs/man/*.7)

.PHONY: wheel deb version-check
wheel: $(WHEEL)
deb: $(DEB)

version-check:
	@grep -qx 'KIMG_RUN_VERSION=$(VERSION)' scripts/kimg-run || \
		{ echo "scripts/kimg-run's KIMG_RUN_VERSION is not $(VERSION) (shim/diag.h)" >&2; exit 1; }

$(PKG_DIR)/kimg-probe: $(PROBE)
	@mkdir -p $(dir $@)
	$(OBJCOPY) --strip-debug $< $@
$(PKG_DIR)/libkimg.so: $(SHIM)
	@mkdir -p $(dir $@)
	$(OBJCOPY) --strip-debug $< $@
$(PKG_DIR)/libkimgapi.so: $(API_LIB)
	@mkdir -p $(dir $@)
	$(OBJCOPY) --strip-debug $< $@

$(WHEEL): $(PKG_DIR)/kimg-probe $(PKG_DIR)/libkimg.so $(PKG_DIR)/libkimgapi.so scripts/kimg-run $(PY_SRC) $(MAN_PAGES) \
		packaging/make_wheel.py packaging/README.pypi.md $(LICENCE_FILE) | version-check
	python3 packaging/make_wheel.py --version $(VERSION) --arch $(MACHINE) \
		--probe $(PKG_DIR)/kimg-probe --lib $(PKG_DIR)/libkimg.so --run scripts/kimg-run \
		--man docs/man --readme packaging/README.pypi.md --python packaging/python \
		--licence $(LICENCE_FILE) --licence-name "$(LICENCE_NAME)" --out $(DIST) \
		--api-lib $(PKG_DIR)/libkimgapi.so

$(DEB): $(PKG_DIR)/kimg-probe $(PKG_DIR)/libkimg.so $(PKG_DIR)/libkimgapi.so api/kimg.h scripts/kimg-run $(MAN_PAGES) \
		packaging/make_deb.sh $(LICENCE_FILE) | version-check
	packaging/make_deb.sh --version $(VERSION) --arch $(DEB_ARCH) --probe $(PKG_DIR)/kimg-probe \
		--lib $(PKG_DIR)/libkimg.so --run scripts/kimg-run --man docs/man --licence $(LICENCE_FILE) \
		--licence-name "$(LICENCE_NAME)" --stage $(PKG_DIR)/deb --out $@ \
		--api-lib $(PKG_DIR)/libkimgapi.so --header api/kimg.h

# The aarch64 build's version script: shim/libkimg.map with the pre-2.34
# dlsym node renamed to aarch64's base version.
$(BUILD)/libkimg.map: shim/libkimg.map
	@mkdir -p $(dir $@)
	sed 's/\bGLIBC_2\.2\.5\b/GLIBC_2.17/g' $< >$@

# The stand-in driver and runtime and every shim test program but the
# ThreadSanitizer one, without libkimg itself: what make test-aarch64 and
# scripts/ci/old-glibc.sh run the tests/shim scripts with.
.PHONY: shim-test-programs
shim-test-programs: $(FAKE_STANDINS) $(filter-out %/threads,$(SHIM_TEST_PROGS))

# make test builds both packages for tests/scripts/{wheel,deb}.sh; not the
# sanitizer build (make asan-test), whose binaries are not what ships (and
# would replace the packages in dist/).
test: $(if $(filter asan,$(SANITIZE)),,wheel deb)

include packaging/aarch64.mk
