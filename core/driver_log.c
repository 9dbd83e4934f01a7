/* SPDX-License-Identifier: Apache-2.0 */
/* Reading the driver's error-log messages (driver_log.h). Every scan is
 * bounded by the length the driver gave: the bytes need not end in NUL. */
#include <string.h>

#include "driver_log.h"

/* Where the message's own text is `word` at position i. */
static bool at(const char *msg, size_t len, size_t i, const char *word)
{
	size_t n = strlen(word);
	return i <= len && len - i >= n && memcmp(msg + i, word, n) == 0;
}

static bool is_ident(char c, bool first)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || (!first && c >= '0' && c <= '9');
}

/* "Returning N (NAME) from FN" at position i */
static bool parse_at(const char *msg, size_t len, size_t i, int *code, char *fn, size_t fn_size)
{
	static const char head[] = "Returning ";
	i += sizeof head - 1;
	long v = 0;
	size_t digits = 0;
	while (i < len && msg[i] >= '0' && msg[i] <= '9' && digits < 10) {
		v = v * 10 + (msg[i++] - '0');
		digits++;
	}
	if (digits == 0 || digits > 9 || i >= len || msg[i] != ' ')
		return false;
	i++;
	if (i < len && msg[i] == '(') { /* the code's name, optional */
		while (i < len && msg[i] != ')')
			i++;
		if (i >= len)
			return false;
		i++;
		if (i >= len || msg[i] != ' ')
			return false;
		i++;
	}
	if (!at(msg, len, i, "from "))
		return false;
	i += 5;
	size_t start = i;
	while (i < len && is_ident(msg[i], i == start))
		i++;
	if (i == start)
		return false;
	size_t n = i - start;
	if (fn_size < 2)
		return false; /* no room for one character of the name (found by fuzz_driver_log) */
	if (n > fn_size - 1)
		n = fn_size - 1;
	memcpy(fn, msg + start, n);
	fn[n] = '\0';
	*code = (int)v;
	return true;
}

bool kimg_driver_log_parse_return(const char *msg, size_t len, int *code, char *fn, size_t fn_size)
{
	if (!msg)
		return false;
	for (size_t i = 0; i < len; i++)
		if (msg[i] == 'R' && at(msg, len, i, "Returning ") && parse_at(msg, len, i, code, fn, fn_size))
			return true;
	return false;
}

/* The driver's phrases for code that does not fit or does not compile,
 * each as measured on the H200 (driver 580.159.04, CUDA 13.0). */
static const struct {
	const char *phrase;
	const char *seen; /* the source of the row */
} image_phrases[] = {
	{ "No device code available", "sm_80-only kernel launched through the runtime [V]" },
	{ "cannot be found in library due to compilation error", "same run, cuLibraryGetKernel [V]" },
	{ "JIT compilation failed", "PTX with .version 9.9 and compute_100 PTX, cuModuleLoadData [V]" },
};

static bool contains(const char *msg, size_t len, const char *word)
{
	size_t n = strlen(word);
	for (size_t i = 0; n <= len && i <= len - n; i++)
		if (msg[i] == word[0] && memcmp(msg + i, word, n) == 0)
			return true;
	return false;
}

bool kimg_driver_log_names_image_problem(const char *msg, size_t len)
{
	if (!msg)
		return false;
	for (size_t i = 0; i < sizeof image_phrases / sizeof image_phrases[0]; i++)
		if (contains(msg, len, image_phrases[i].phrase))
			return true;
	return false;
}

bool kimg_driver_log_kernel(const char *msg, size_t len, char *out, size_t size)
{
	static const char head[] = "Kernel (";
	if (!msg || size == 0)
		return false;
	for (size_t i = 0; i < len; i++) {
		if (!at(msg, len, i, head))
			continue;
		size_t start = i + sizeof head - 1, end = start;
		while (end < len && msg[end] != ')')
			end++;
		if (end >= len || end == start || !at(msg, len, end, ") cannot be found"))
			return false;
		size_t n = end - start < size - 1 ? end - start : size - 1;
		memcpy(out, msg + start, n);
		out[n] = '\0';
		return true;
	}
	return false;
}
