/* SPDX-License-Identifier: Apache-2.0 */
/* next_cu FILE: loads FILE through libwrap_cu's cuModuleLoadData, which
 * reaches the driver through dlsym(RTLD_NEXT). Prints which library the
 * RTLD_NEXT answer lives in and the code the load returned. */
#include "progutil.h"

void *wrap_cu_next(void);
int wrap_cu_load(void **mod, const void *image);

int main(int argc, char **argv)
{
	size_t size;
	void *mod = NULL, *bytes = argc > 1 ? read_all(argv[1], &size) : NULL;
	if (!bytes)
		return 2;
	printf("next cuModuleLoadData: %s\n", owner_of(wrap_cu_next()));
	printf("wrapped cuModuleLoadData: %d\n", wrap_cu_load(&mod, bytes));
	return 0;
}
