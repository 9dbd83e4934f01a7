/* SPDX-License-Identifier: Apache-2.0 */
/* glibc symbol-version pins, for both layers of libkimg.so (shim/hook/ and
 * shim/diag/ each call dladdr, dlopen or dl_iterate_phdr). Not a call
 * boundary: only assembler directives, included by every file that calls
 * one of these functions (tests/scripts/glibc_baseline.sh checks the
 * result). */
#ifndef KIMG_SHIM_PINS_H
#define KIMG_SHIM_PINS_H

/* ---- glibc symbol versions ----
 * Linking against glibc >= 2.34 binds dl* references to their 2.34
 * versions, which would stop libkimg from loading on older glibc. Pin the
 * references made by the hooks layer to the architecture's base version,
 * which every glibc since then still provides (libdl or libc). */
#if defined(KIMG_NO_GLIBC_PINS)
/* the sanitizer build (Makefile SAN_FLAGS): no pins */
#elif defined(__x86_64__)
#define KIMG_GLIBC_BASE "GLIBC_2.2.5"
#elif defined(__aarch64__)
#define KIMG_GLIBC_BASE "GLIBC_2.17"
#endif
#ifdef KIMG_GLIBC_BASE
__asm__(".symver dlvsym,dlvsym@" KIMG_GLIBC_BASE);
__asm__(".symver dladdr,dladdr@" KIMG_GLIBC_BASE);
__asm__(".symver dlopen,dlopen@" KIMG_GLIBC_BASE);
__asm__(".symver dlclose,dlclose@" KIMG_GLIBC_BASE);
__asm__(".symver dl_iterate_phdr,dl_iterate_phdr@" KIMG_GLIBC_BASE);
#endif

#endif
