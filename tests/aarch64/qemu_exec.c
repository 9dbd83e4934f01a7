/* SPDX-License-Identifier: Apache-2.0 */
/* Stands in for an aarch64 program where the kernel cannot run it (no
 * binfmt_misc entry for qemu): a static x86-64 executable named like the
 * program, which runs NAME.aarch64 (beside it) under qemu-user with the
 * same argv[0], arguments and environment. Static, so an aarch64
 * LD_PRELOAD in the environment is left for the emulated program's ld.so
 * (a dynamic wrapper's own ld.so would complain about it). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef QEMU_DEFAULT
#define QEMU_DEFAULT "qemu-aarch64-static"
#endif

int main(int argc, char **argv)
{
	char self[PATH_MAX - 16], real[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0) {
		perror("qemu_exec: /proc/self/exe");
		return 127;
	}
	self[n] = '\0';
	snprintf(real, sizeof real, "%s.aarch64", self);
	const char *qemu = getenv("KIMG_QEMU");
	if (!qemu || !*qemu)
		qemu = QEMU_DEFAULT;
	char **args = calloc((size_t)argc + 4, sizeof *args);
	if (!args)
		return 127;
	args[0] = (char *)qemu;
	args[1] = "-0";
	args[2] = argv[0];
	args[3] = real;
	for (int i = 1; i < argc; i++)
		args[3 + i] = argv[i];
	execvp(qemu, args);
	fprintf(stderr, "qemu_exec: %s: ", qemu);
	perror("exec");
	return 127;
}
