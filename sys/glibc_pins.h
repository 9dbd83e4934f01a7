/* SPDX-License-Identifier: Apache-2.0 */
/* glibc symbol versions for sys/ and probe/ code that kimg-probe links.
 *
 * Linking against glibc >= 2.34 binds dlopen/dlsym/dlclose to their 2.34
 * versions (glibc moved them from libdl into libc), and a binary that
 * needs GLIBC_2.34 does not start on Debian 11, Ubuntu 20.04, RHEL 8 or
 * Amazon Linux 2. Including this header in a file that calls them pins
 * the references to the architecture's base version, which every glibc
 * since provides (in libdl before 2.34, in libc after; the probe links
 * libdl.so.2 explicitly for the former). shim/shim_pins.h does the same for
 * the shim's own files; include only one of the two in a file. */
#ifndef KIMG_SYS_GLIBC_PINS_H
#define KIMG_SYS_GLIBC_PINS_H

#if defined(KIMG_NO_GLIBC_PINS)
/* the sanitizer build (Makefile SAN_FLAGS): no pins */
#elif defined(__x86_64__)
#define KIMG_SYS_GLIBC_BASE "GLIBC_2.2.5"
#elif defined(__aarch64__)
#define KIMG_SYS_GLIBC_BASE "GLIBC_2.17"
#endif

#ifdef KIMG_SYS_GLIBC_BASE
__asm__(".symver dlopen,dlopen@" KIMG_SYS_GLIBC_BASE);
__asm__(".symver dlsym,dlsym@" KIMG_SYS_GLIBC_BASE);
__asm__(".symver dlclose,dlclose@" KIMG_SYS_GLIBC_BASE);
/* libkimgapi.so's kimg_can_run_loaded (api/can_run.c) */
__asm__(".symver dladdr,dladdr@" KIMG_SYS_GLIBC_BASE);
/* The same move for the thread functions kimg-probe calls (its walk's
 * workers, per-thread decode buffers, libraries loaded once): in
 * libpthread.so.0 before 2.34, which the probe links explicitly. */
__asm__(".symver pthread_create,pthread_create@" KIMG_SYS_GLIBC_BASE);
__asm__(".symver pthread_join,pthread_join@" KIMG_SYS_GLIBC_BASE);
__asm__(".symver pthread_once,pthread_once@" KIMG_SYS_GLIBC_BASE);
__asm__(".symver pthread_key_create,pthread_key_create@" KIMG_SYS_GLIBC_BASE);
__asm__(".symver pthread_getspecific,pthread_getspecific@" KIMG_SYS_GLIBC_BASE);
__asm__(".symver pthread_setspecific,pthread_setspecific@" KIMG_SYS_GLIBC_BASE);
__asm__(".symver pthread_mutex_trylock,pthread_mutex_trylock@" KIMG_SYS_GLIBC_BASE);
#endif

#endif
