/* Lazy loading of libzstd / liblz4 (sys/codecs.h). */
#include "codecs.h"

#include <dlfcn.h>
#include <pthread.h>

/* libkimg.so uses these too (the PTX fallback decompresses PTX entries)
 * and must load on glibc 2.17: the base-version pins of glibc_pins.h.
 * dlsym@base is also glibc's own, never libkimg's exported dlsym hook. */
#include "glibc_pins.h"

static struct kimg_codecs codecs;
static pthread_once_t codecs_once = PTHREAD_ONCE_INIT;

/* dlsym returns void *; going through memcpy keeps ISO C's object/function
 * pointer separation explicit instead of a cast the compiler may warn on. */
static void sym(void *lib, const char *name, void *fnptr, size_t size)
{
	void *p = lib ? dlsym(lib, name) : NULL;
	memcpy(fnptr, &p, size);
}

static void codecs_load(void)
{
	/* RTLD_LOCAL: the host process may carry its own zstd/lz4; ours must
	 * not interpose on theirs. The handles are kept for the process life. */
	void *zstd = dlopen("libzstd.so.1", RTLD_LAZY | RTLD_LOCAL);
	void *lz4 = dlopen("liblz4.so.1", RTLD_LAZY | RTLD_LOCAL);

	sym(zstd, "ZSTD_decompress", &codecs.zstd_decompress, sizeof codecs.zstd_decompress);
	sym(zstd, "ZSTD_isError", &codecs.zstd_is_error, sizeof codecs.zstd_is_error);
	if (!codecs.zstd_decompress || !codecs.zstd_is_error)
		codecs.zstd_decompress = NULL, codecs.zstd_is_error = NULL;
	sym(lz4, "LZ4_decompress_safe", &codecs.lz4_decompress_safe, sizeof codecs.lz4_decompress_safe);
}

const struct kimg_codecs *kimg_codecs_get(void)
{
	pthread_once(&codecs_once, codecs_load);
	return &codecs;
}
