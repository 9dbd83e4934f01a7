/* SPDX-License-Identifier: Apache-2.0 */
/* File names that say a file is source or documentation (source_names.h). */
#include "source_names.h"

#include <string.h>

/* Each has one '.', its first byte: a name ends in one exactly when what
 * follows its last '.' is one. */
static const char *const source_suffixes[] = {
	".py", ".pyc", ".pyi", ".pyx", ".pxd", ".pxi",                           /* Python */
	".h", ".hh", ".hpp", ".hxx", ".cuh", ".inl", ".c", ".cc", ".cpp", ".cxx", /* C, C++ */
	".rst", ".md", ".cmake",                                                   /* docs, build */
};

bool kimg_name_is_source(const char *name, size_t len)
{
	/* Every suffix ends in a lower-case letter: one byte rejects most
	 * other names ("libfoo.so.12", "RECORD"). */
	if (len < 2 || name[len - 1] < 'a' || name[len - 1] > 'z')
		return false;
	const char *slash = memrchr(name, '/', len);
	const char *base = slash ? slash + 1 : name;
	const char *dot = memrchr(base, '.', len - (size_t)(base - name));
	if (!dot || dot == base) /* no suffix, or a name that is all suffix (".py") */
		return false;
	size_t sl = len - (size_t)(dot - name);
	for (size_t i = 0; i < sizeof source_suffixes / sizeof source_suffixes[0]; i++)
		if (strlen(source_suffixes[i]) == sl && memcmp(dot, source_suffixes[i], sl) == 0)
			return true;
	return false;
}
