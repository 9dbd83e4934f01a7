/* SPDX-License-Identifier: Apache-2.0 */
/* Optional libraries opened on first use (sys/lazylib.h). */
#include "lazylib.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

/* kimg-probe and libkimg.so must load on glibc 2.17: the base-version pins
 * of glibc_pins.h. dlsym@base is also glibc's own, never libkimg's exported
 * dlsym hook. */
#include "glibc_pins.h"

/* dlsym returns void *; going through memcpy keeps ISO C's object/function
 * pointer separation explicit instead of a cast the compiler may warn on. */
static void store(const struct kimg_lazy_fn *fn, void *p)
{
	memcpy(fn->fnptr, &p, fn->size);
}

static bool found(const struct kimg_lazy_fn *fn)
{
	void *p = NULL;
	memcpy(&p, fn->fnptr, fn->size);
	return p != NULL;
}

static void clear_all(struct kimg_lazylib *lib)
{
	for (size_t i = 0; i < lib->n_fns; i++)
		store(&lib->fns[i], NULL);
}

static int load(struct kimg_lazylib *lib)
{
	/* RTLD_LOCAL: the host process may carry its own copy of the library;
	 * ours must not interpose on theirs. */
	const char *only[1] = { lib->override };
	const char *const *names = lib->override ? only : lib->sonames;
	size_t n_names = lib->override ? 1 : KIMG_LAZY_SONAMES;
	void *h = NULL;
	const char *name = names[0] ? names[0] : "?";
	for (size_t i = 0; i < n_names && names[i] && !h; i++)
		if ((h = dlopen(names[i], lib->flags | RTLD_LOCAL)) != NULL)
			name = names[i];
	if (!h) {
		snprintf(lib->why, sizeof lib->why, "%s not found", name);
		return -1;
	}
	const char *missing = NULL;
	for (size_t i = 0; i < lib->n_fns; i++) {
		/* rows naming the same variable are alternatives: the first found wins */
		if (found(&lib->fns[i]))
			continue;
		void *p = dlsym(h, lib->fns[i].name);
		store(&lib->fns[i], p);
		if (!p && !missing && !lib->fns[i].optional)
			missing = lib->fns[i].name;
	}
	if (missing) {
		snprintf(lib->why, sizeof lib->why, "%s lacks %s", name, lib->lacks ? lib->lacks : missing);
		clear_all(lib);
		return -2;
	}
	return 1;
}

/* pthread_once takes no argument: the library being loaded is handed over
 * in a thread-local (the once routine runs on the calling thread). */
static __thread struct kimg_lazylib *loading;

static void load_once(void)
{
	loading->state = load(loading);
}

bool kimg_lazylib_load(struct kimg_lazylib *lib)
{
	struct kimg_lazylib *outer = loading;
	loading = lib;
	pthread_once(&lib->once, load_once);
	loading = outer;
	return lib->state > 0;
}

void kimg_lazylib_set_soname(struct kimg_lazylib *lib, const char *soname)
{
	if (soname && *soname && lib->state == 0)
		lib->override = soname;
}

const char *kimg_lazylib_name(const struct kimg_lazylib *lib)
{
	return lib->override ? lib->override : lib->sonames[0];
}
