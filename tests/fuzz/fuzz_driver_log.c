/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target for core/driver_log.c: the three readers over bytes
 * that are not NUL-terminated (the copy below ends exactly at size, so
 * AddressSanitizer sees any read past the length), and their promises: a
 * match gives a NUL-terminated identifier within the output buffer, a
 * kernel name within its buffer. The first byte picks the output size. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "driver_log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t out_size = data[0] % 70;
	data++;
	size--;
	char *msg = malloc(size ? size : 1);
	if (!msg)
		return 0;
	memcpy(msg, data, size);
	char fn[70];
	int code = -1;
	if (kimg_driver_log_parse_return(msg, size, &code, fn, out_size)) {
		size_t n = strnlen(fn, out_size);
		if (out_size == 0 || n >= out_size || n == 0 || code < 0 || code > 999999999)
			abort();
		for (size_t i = 0; i < n; i++)
			if (!((fn[i] >= 'A' && fn[i] <= 'Z') || (fn[i] >= 'a' && fn[i] <= 'z') || fn[i] == '_' ||
			      (i > 0 && fn[i] >= '0' && fn[i] <= '9')))
				abort();
	}
	(void)kimg_driver_log_names_image_problem(msg, size);
	char k[70];
	if (kimg_driver_log_kernel(msg, size, k, out_size) && (out_size == 0 || strnlen(k, out_size) >= out_size))
		abort();
	free(msg);
	return 0;
}
