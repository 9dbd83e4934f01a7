/* SPDX-License-Identifier: Apache-2.0 */
/* Architecture names (core/arch.h): the spellings users type and tools print.
 *
 * Accepted: "sm_90", "sm_90a", "compute_90", "compute_100f" (prefix is
 * case-insensitive), the bare SM number "90", "100f", and the compute
 * capability "9.0", "9.0a", "10.0f". Everything else, including
 * surrounding whitespace, is rejected: a token that parses loosely would
 * let a typo decide a verdict. */
#include "arch.h"
#include "error.h"

#include <stdio.h>

/* Largest SM number accepted: major 99, minor 9. Real ones are < 200; the
 * cap only keeps the arithmetic far from uint16_t overflow. */
#define ARCH_SM_MAX 999u

static const char *const variant_suffixes[KIMG_VARIANT_COUNT] = {
	[KIMG_VARIANT_PLAIN] = "",
	[KIMG_VARIANT_A] = "a",
	[KIMG_VARIANT_F] = "f",
};

static char lower(char c) { return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c; }
static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* Case-insensitive prefix match; returns the rest of text or NULL. */
static const char *skip_prefix(const char *text, const char *prefix)
{
	for (; *prefix; prefix++, text++)
		if (lower(*text) != *prefix)
			return NULL;
	return text;
}

/* Decimal digits at *p (at least one, no more than ARCH_SM_MAX). */
static int parse_uint(const char **p, unsigned *out)
{
	unsigned v = 0;
	const char *s = *p;
	if (!is_digit(*s))
		return -1;
	for (; is_digit(*s); s++) {
		v = v * 10 + (unsigned)(*s - '0');
		if (v > ARCH_SM_MAX)
			return -1;
	}
	*p = s;
	*out = v;
	return 0;
}

/* Optional "a"/"f" then the end of the string. */
static int parse_suffix(const char *s, uint8_t *variant)
{
	*variant = KIMG_VARIANT_PLAIN;
	if (lower(*s) == 'a') {
		*variant = KIMG_VARIANT_A;
		s++;
	} else if (lower(*s) == 'f') {
		*variant = KIMG_VARIANT_F;
		s++;
	}
	return *s == '\0' ? 0 : -1;
}

int kimg_arch_parse(const char *text, struct kimg_arch *out, bool *is_virtual)
{
	const char *s;
	bool virt = false, prefixed = true;
	unsigned sm, minor;
	struct kimg_arch a = { 0, KIMG_VARIANT_PLAIN };

	if (!text || !out)
		return -KIMG_EFORMAT;
	if ((s = skip_prefix(text, "sm_")) == NULL) {
		if ((s = skip_prefix(text, "compute_")) != NULL)
			virt = true;
		else
			s = text, prefixed = false;
	}
	if (parse_uint(&s, &sm) < 0)
		return -KIMG_EFORMAT;
	if (*s == '.') {
		/* "9.0": only without a prefix, one minor digit ("12.10" is no CC). */
		if (prefixed)
			return -KIMG_EFORMAT;
		s++;
		if (!is_digit(*s))
			return -KIMG_EFORMAT;
		minor = (unsigned)(*s++ - '0');
		if (sm > ARCH_SM_MAX / 10)
			return -KIMG_EFORMAT;
		sm = sm * 10 + minor;
	} else if (sm < 10) {
		/* "9" or "sm_9": an SM number always has a major and a minor digit. */
		return -KIMG_EFORMAT;
	}
	/* "0.2" would be SM 2, which no spelling can name again: every CC has
	 * a major of at least 1 (fuzz_tokens found the round-trip break). */
	if (sm < 10 || parse_suffix(s, &a.variant) < 0)
		return -KIMG_EFORMAT;
	a.sm = (uint16_t)sm;
	*out = a;
	if (is_virtual)
		*is_virtual = virt;
	return 0;
}

int kimg_arch_format(struct kimg_arch arch, bool is_virtual, char *buf, size_t size)
{
	const char *suffix = arch.variant < KIMG_VARIANT_COUNT ? variant_suffixes[arch.variant] : "?";
	return snprintf(buf, size, "%s%u%s", is_virtual ? "compute_" : "sm_", (unsigned)arch.sm, suffix);
}

int kimg_arch_format_cc(struct kimg_arch arch, char *buf, size_t size)
{
	const char *suffix = arch.variant < KIMG_VARIANT_COUNT ? variant_suffixes[arch.variant] : "?";
	return snprintf(buf, size, "%u.%u%s", kimg_arch_major(arch), kimg_arch_minor(arch), suffix);
}
