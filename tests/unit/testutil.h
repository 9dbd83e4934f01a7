/* SPDX-License-Identifier: Apache-2.0 */
/* Shared helpers for the Check unit tests: fixture loading, patching
 * copies of inputs, and the hypothetical devices and images the rules
 * tests describe. Only what several test files need lives here. */
#ifndef KIMG_TESTUTIL_H
#define KIMG_TESTUTIL_H

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "image.h"
#include "rules.h"
#include "span.h"

/* Whole file from $KIMG_FIXTURES (default build/fixtures); fails the test
 * when missing, since every fixture is built before the tests run. */
static inline struct kimg_span fixture_load(const char *name)
{
	const char *dir = getenv("KIMG_FIXTURES");
	char path[1024];
	snprintf(path, sizeof path, "%s/%s", dir ? dir : "build/fixtures", name);
	FILE *f = fopen(path, "rb");
	ck_assert_msg(f != NULL, "fixture %s missing (run make fixtures)", path);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
	ck_assert(buf != NULL);
	ck_assert_int_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	return kimg_span_make(buf, (uint64_t)n);
}

static inline void fixture_free(struct kimg_span s) { free((void *)s.data); }

/* A writable copy of an input, for corrupting one field. */
static inline uint8_t *copy_of(struct kimg_span s)
{
	uint8_t *p = malloc(s.size ? s.size : 1);
	ck_assert(p != NULL);
	memcpy(p, s.data, s.size);
	return p;
}

/* Little-endian stores, as ELF64 and fatbin headers are laid out. */
static inline void put_le16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static inline void put_le32(uint8_t *p, uint32_t v) { for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i)); }
static inline void put_le64(uint8_t *p, uint64_t v) { for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i)); }

/* A C string as an input (without its NUL). */
static inline struct kimg_span str_span(const char *s) { return kimg_span_make(s, strlen(s)); }

/* A GPU given by number, as `kimg-probe check --sm` makes one: no ordinal,
 * Tegra from the CC (docs/rules.md §2), driver_version as
 * cuDriverGetVersion() gives it (13000 = CUDA 13.0). */
static inline struct kimg_device device(unsigned sm, int driver)
{
	struct kimg_device d;
	memset(&d, 0, sizeof d);
	d.cc.sm = (uint16_t)sm;
	d.tegra = kimg_sm_is_tegra(sm);
	d.driver_version = driver;
	d.ordinal = -1;
	return d;
}

/* An image as a fatbin entry header would describe it (flags 0x11: an
 * entry from a CUDA 13 build, docs/format.md §12); no payload. */
static inline struct kimg_image test_image(enum kimg_image_kind kind, unsigned sm, enum kimg_arch_variant v,
					   unsigned isa)
{
	struct kimg_image i;
	memset(&i, 0, sizeof i);
	i.kind = kind;
	i.arch.sm = (uint16_t)sm;
	i.arch.variant = (uint8_t)v;
	i.ptx_isa = (uint16_t)isa;
	i.flags = 0x11;
	return i;
}

/* Run a suite and return the process exit status. */
static inline int run_suite(Suite *s)
{
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}

#endif
