/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target for the record parsers of issue 13: core/packages.c
 * (RECORD, dpkg .list and status, conda-meta JSON, dist-info names),
 * core/inventory.c (device documents of --sm @FILE) and core/cuda_libs.c
 * (file names and the ELF sources: DT_SONAME, version definitions, the
 * release string), and core/source_names.c against the plain reading of
 * its rule. The first byte picks the parser; the rest is its input.
 * Besides ASan's "nothing read outside the input" it checks each parser's
 * promises: outputs are NUL-terminated within their buffers, positions
 * only move forward and stay inside the input. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_libs.h"
#include "inventory.h"
#include "packages.h"
#include "source_names.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* source_names.h's rule read plainly: the last component ends in one of
 * the suffixes, with at least one byte before it. */
static bool source_by_the_rule(const char *name, size_t len)
{
	static const char *const suffixes[] = { ".py", ".pyc", ".pyi", ".pyx", ".pxd", ".pxi", ".h",   ".hh",
						".hpp", ".hxx", ".cuh", ".inl", ".c", ".cc", ".cpp", ".cxx",
						".rst", ".md",  ".cmake" };
	size_t base = len;
	while (base > 0 && name[base - 1] != '/')
		base--;
	for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
		size_t sl = strlen(suffixes[i]);
		if (len - base > sl && memcmp(name + len - sl, suffixes[i], sl) == 0)
			return true;
	}
	return false;
}

static unsigned char arena[1 << 20];

static int any_path(void *ctx, const char *p)
{
	(void)ctx;
	if (strlen(p) > (1u << 20))
		abort();
	return 0;
}

static int any_pkg(void *ctx, const char *p, const char *v)
{
	(void)ctx;
	if (!p[0] || !v[0])
		abort(); /* stanzas are reported only with both fields */
	return 0;
}

static int any_gpu(void *ctx, const char *host, const struct kimg_inventory_gpu *g)
{
	(void)ctx;
	(void)host;
	if (g->sm < 10 || memchr(g->name, '\0', sizeof g->name) == NULL)
		abort();
	return 0;
}

static void lines(struct kimg_span in, int which)
{
	char out[64];
	uint64_t pos = 0, last = 0;
	for (int guard = 0; guard < 100000; guard++) {
		int rc = which ? kimg_list_next(in, &pos, out, sizeof out) : kimg_record_next(in, &pos, out, sizeof out);
		if (pos < last || pos > in.size)
			abort();
		last = pos;
		if (rc == 1 && strlen(out) >= sizeof out)
			abort();
		if (rc == 0 || rc == -KIMG_EFORMAT)
			return;
	}
	abort(); /* every call consumes a line: the input runs out first */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	struct kimg_span in = kimg_span_make(data + 1, size - 1);
	struct kimg_error err = { 0, 0, "" };
	char name[128], version[64];
	switch (data[0] % 7) {
	case 0:
		lines(in, 0);
		break;
	case 1:
		lines(in, 1);
		break;
	case 2:
		kimg_dpkg_status_each(in, any_pkg, NULL);
		break;
	case 3:
		if (kimg_conda_meta_parse(in, arena, sizeof arena, name, sizeof name, version, sizeof version, any_path,
					  NULL, &err) >= 0 &&
		    (!memchr(name, '\0', sizeof name) || !memchr(version, '\0', sizeof version)))
			abort();
		break;
	case 4:
		kimg_inventory_parse(in, arena, sizeof arena, any_gpu, NULL, &err);
		break;
	case 6:
		if (kimg_name_is_source((const char *)in.data, (size_t)in.size) !=
		    source_by_the_rule((const char *)in.data, (size_t)in.size))
			abort();
		break;
	default: {
		/* a NUL-terminated name prefix (up to 64 bytes), then ELF bytes */
		char base[65];
		size_t n = in.size < 64 ? (size_t)in.size : 64;
		memcpy(base, in.data, n);
		base[n] = '\0';
		struct kimg_cuda_lib lib;
		kimg_dist_info_parse_dirname(base, name, sizeof name, version, sizeof version);
		kimg_cuda_lib_identify(base, in, &lib);
		kimg_cuda_lib_identify("libcudart.so", in, &lib);
		if (!memchr(lib.soname, '\0', sizeof lib.soname))
			abort();
		break;
	}
	}
	return 0;
}
