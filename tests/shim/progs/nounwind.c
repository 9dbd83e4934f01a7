/* SPDX-License-Identifier: Apache-2.0 */
/* tests/shim/stack.sh: a libunwind.so.8 without libunwind's symbols, found
 * first on LD_LIBRARY_PATH, hides the real one (as on a machine without
 * libunwind): libkimg.so must then name frames from .symtab itself. */
void kimg_stub(void);
void kimg_stub(void)
{
}
