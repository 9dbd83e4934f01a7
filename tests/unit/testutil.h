/* Shared helpers for the Check unit tests: fixture loading. */
#ifndef KIMG_TESTUTIL_H
#define KIMG_TESTUTIL_H

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

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
