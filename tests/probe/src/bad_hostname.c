/* SPDX-License-Identifier: Apache-2.0 */
/* LD_PRELOAD for tests/probe/device.sh and tests/shim/diagnose.sh:
 * gethostname fails as it does for a name longer than the buffer
 * (ENAMETOOLONG), having copied what fits of the name, unterminated
 * (POSIX leaves the termination of a truncated name unspecified; glibc
 * copies the truncated bytes). The name is $BAD_HOSTNAME's value (default
 * "truncated-host") repeated to fill the buffer, so every byte the caller
 * did not reset is that text: a caller that trusts the buffer after the
 * failure shows it; one that checks the result shows no host. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Default visibility: the build's CFLAGS hide symbols. */
__attribute__((visibility("default"))) int gethostname(char *name, size_t len);
int gethostname(char *name, size_t len)
{
	const char *fill = getenv("BAD_HOSTNAME");
	if (!fill || !*fill)
		fill = "truncated-host";
	size_t n = strlen(fill);
	for (size_t i = 0; i < len; i++)
		name[i] = fill[i % n];
	errno = ENAMETOOLONG;
	return -1;
}
