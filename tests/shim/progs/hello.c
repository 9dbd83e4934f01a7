/* SPDX-License-Identifier: Apache-2.0 */
/* Calls puts; run under LD_PRELOAD="libkimg.so libwrap_puts.so" it must
 * print through libwrap_puts' wrapper exactly once per line. */
#include <stdio.h>

int main(void)
{
	puts("hello");
	puts("again");
	return 0;
}
