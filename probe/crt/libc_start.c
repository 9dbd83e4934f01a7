/* SPDX-License-Identifier: Apache-2.0 */
/* kimg-probe's start-up, made to run on glibc 2.17 and later.
 *
 * The crt1.o (Scrt1.o) of glibc >= 2.34 calls __libc_start_main@GLIBC_2.34
 * and passes no init function: that glibc runs the program's constructors
 * itself. Older glibc has only the first version (GLIBC_2.2.5 on x86-64,
 * GLIBC_2.17 on aarch64) and runs constructors only through the init
 * function it is given (formerly __libc_csu_init, in libc_nonshared.a).
 *
 * Linked into the executable, this definition of __libc_start_main wins
 * over libc's for the reference in crt1.o (hidden: it is not exported).
 * It forwards to the base version, passing an init function that runs
 * what __libc_csu_init ran in a dynamic executable: _init, then
 * DT_INIT_ARRAY (ld.so itself runs DT_PREINIT_ARRAY beforehand). Every
 * glibc since 2.2.5 calls a non-NULL init function (2.34 keeps that path
 * for old binaries), so the constructors run once on old and new alike.
 * Destructors need nothing: ld.so's _dl_fini runs the executable's
 * DT_FINI_ARRAY and DT_FINI. A crt1.o of glibc < 2.34 already passes its
 * own init function, which is then kept. */
#if defined(__x86_64__) || defined(__aarch64__)

typedef void (*init_fn)(int, char **, char **);
typedef int (*main_fn)(int, char **, char **);

#if defined(__x86_64__)
__asm__(".symver kimg_libc_start_main_base,__libc_start_main@GLIBC_2.2.5");
#else
__asm__(".symver kimg_libc_start_main_base,__libc_start_main@GLIBC_2.17");
#endif
extern int kimg_libc_start_main_base(main_fn main, int argc, char **argv, init_fn init, void (*fini)(void),
				     void (*rtld_fini)(void), void *stack_end);

/* Provided by the linker (PROVIDE_HIDDEN in the default script) and crti.o. */
extern init_fn __init_array_start[] __attribute__((visibility("hidden")));
extern init_fn __init_array_end[] __attribute__((visibility("hidden")));
extern void _init(void) __attribute__((visibility("hidden")));

static void run_constructors(int argc, char **argv, char **envp)
{
	_init();
	for (init_fn *f = __init_array_start; f < __init_array_end; f++)
		(*f)(argc, argv, envp);
}

int __libc_start_main(main_fn main, int argc, char **argv, init_fn init, void (*fini)(void),
		      void (*rtld_fini)(void), void *stack_end) __attribute__((visibility("hidden")));

int __libc_start_main(main_fn main, int argc, char **argv, init_fn init, void (*fini)(void),
		      void (*rtld_fini)(void), void *stack_end)
{
	return kimg_libc_start_main_base(main, argc, argv, init ? init : run_constructors, fini, rtld_fini,
					 stack_end);
}

#endif
