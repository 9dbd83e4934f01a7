# SPDX-License-Identifier: Apache-2.0
# Packages (included at the end of the Makefile).
#
#   make wheel      $(DIST)/kimg-V-py3-none-manylinux_2_17_M.manylinux2014_M.whl
#                   (packaging/make_wheel.py: zipfile and hashlib only, no index)
#   make deb        $(DIST)/kimg_V-1_A.deb (packaging/make_deb.sh, dpkg-deb)
#   make ARCH=aarch64 wheel|deb      the same from the cross build
#   make sdist      $(DIST)/kimg-V.tar.gz: the tracked tree at HEAD (git archive)
#   make release    all of them, $(DIST)/SHA256SUMS, each checked (scripts/release.sh)
#   make test-aarch64                packaging/aarch64.mk
#
# V is the file VERSION ($(VERSION), the Makefile); M the machine the
# compiler targets. Both packages carry the ELF files with their debug
# sections stripped (.symtab kept: the shim names its own frames from it).
# Reproducible: SOURCE_DATE_EPOCH is the last commit's time (git log), the
# compiler maps the build directory away (REPRO_FLAGS, the Makefile), and
# the builders fix order, owners, modes and times; scripts/dev/repro.sh
# builds everything twice and compares the bytes.
MACHINE := $(firstword $(subst -, ,$(shell $(CC) -dumpmachine)))
DEB_ARCH := $(if $(filter aarch64,$(MACHINE)),arm64,$(if $(filter x86_64,$(MACHINE)),amd64,$(MACHINE)))
DIST ?= dist
OBJCOPY ?= $(CROSS)objcopy
PKG_DIR := $(BUILD)/pkg
WHEEL := $(DIST)/kimg-$(VERSION)-py3-none-manylinux_2_17_$(MACHINE).manylinux2014_$(MACHINE).whl
DEB := $(DIST)/kimg_$(VERSION)-1_$(DEB_ARCH).deb
SDIST := $(DIST)/kimg-$(VERSION).tar.gz
LICENCE_FILE := LICENSE
LICENCE_NAME := Apache-2.0
PY_SRC := packaging/python/kimg/__init__.py packaging/python/kimg/__main__.py packaging/python/kimg/_api.py
# The last commit's time, for every time stamp in the artifacts (zip
# entries, tar members, the .deb's ar header); a caller's value wins.
# Outside a git checkout (an unpacked sdist) VERSION's time is the commit's.
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || stat -c %Y VERSION)
export SOURCE_DATE_EPOCH

.PHONY: wheel deb sdist release
wheel: $(WHEEL)
deb: $(DEB)

# The version written in: kimg-run's KIMG_RUN_VERSION line and the man
# pages' .TH (docs/man holds @KIMG_VERSION@), as make install and the
# packages ship them.
$(BUILD)/kimg-run: scripts/kimg-run VERSION
	@mkdir -p $(dir $@)
	sed 's/^KIMG_RUN_VERSION=@KIMG_VERSION@$$/KIMG_RUN_VERSION=$(VERSION)/' $< >$@.part && chmod 0755 $@.part && mv $@.part $@
$(BUILD)/man/%: docs/man/% VERSION
	@mkdir -p $(dir $@)
	sed 's/@KIMG_VERSION@/$(VERSION)/g' $< >$@
RUN_SCRIPT := $(BUILD)/kimg-run
MAN_PAGES := $(patsubst docs/man/%,$(BUILD)/man/%,$(wildcard docs/man/*.1 docs/man/*.7))
all: $(RUN_SCRIPT) $(MAN_PAGES)

# The tracked tree at HEAD, under kimg-V/ (git archive: sorted, owner
# root, modes 644/755, every time the commit's); gzip -n keeps no name or time.
sdist:
	@mkdir -p $(dir $(SDIST))
	git archive --format=tar --prefix=kimg-$(VERSION)/ HEAD | gzip -9n >$(SDIST).part && mv $(SDIST).part $(SDIST)
	@echo $(SDIST)

release:
	scripts/release.sh

$(PKG_DIR)/kimg-probe: $(PROBE)
	@mkdir -p $(dir $@)
	$(OBJCOPY) --strip-debug $< $@
$(PKG_DIR)/libkimg.so: $(SHIM)
	@mkdir -p $(dir $@)
	$(OBJCOPY) --strip-debug $< $@
$(PKG_DIR)/libkimgapi.so: $(API_LIB)
	@mkdir -p $(dir $@)
	$(OBJCOPY) --strip-debug $< $@

$(WHEEL): $(PKG_DIR)/kimg-probe $(PKG_DIR)/libkimg.so $(PKG_DIR)/libkimgapi.so $(RUN_SCRIPT) $(PY_SRC) $(MAN_PAGES) \
		packaging/make_wheel.py packaging/README.pypi.md $(LICENCE_FILE)
	python3 packaging/make_wheel.py --version $(VERSION) --arch $(MACHINE) \
		--probe $(PKG_DIR)/kimg-probe --lib $(PKG_DIR)/libkimg.so --run $(RUN_SCRIPT) \
		--man $(BUILD)/man --readme packaging/README.pypi.md --python packaging/python \
		--licence $(LICENCE_FILE) --licence-name "$(LICENCE_NAME)" --out $(DIST) \
		--api-lib $(PKG_DIR)/libkimgapi.so

$(DEB): $(PKG_DIR)/kimg-probe $(PKG_DIR)/libkimg.so $(PKG_DIR)/libkimgapi.so api/kimg.h $(RUN_SCRIPT) $(MAN_PAGES) \
		packaging/make_deb.sh $(LICENCE_FILE)
	packaging/make_deb.sh --version $(VERSION) --arch $(DEB_ARCH) --probe $(PKG_DIR)/kimg-probe \
		--lib $(PKG_DIR)/libkimg.so --run $(RUN_SCRIPT) --man $(BUILD)/man --licence $(LICENCE_FILE) \
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
