/* SPDX-License-Identifier: Apache-2.0 */
/* kimg-probe: find out, before running anything, whether the CUDA device
 * code in files can run on given GPUs. Subcommand dispatch only. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_groups.h"
#include "doctor.h"
#include "json_error.h"
#include "digest.h"
#include "image.h"
#include "probe.h"
#include "tar.h"
#include "zip.h"

static const char main_help[] =
	"usage: kimg-probe COMMAND [OPTIONS] [PATH...]\n"
	"       kimg-probe --help | -h | help\n"
	"\n"
	"Commands:\n"
	"  device                  the GPUs of this machine: CC, Tegra, driver, PTX ISA\n"
	"  scan PATH...            list the device code (modules, images) in files,\n"
	"                          directories and wheels\n"
	"  check --sm LIST PATH... can that code run on those GPUs? If not: why, the\n"
	"                          error CUDA would give, and the build fix\n"
	"  summarize FILE...       merge libkimg.so JSON reports of many ranks and\n"
	"                          hosts into one table (module, error, ranks, GPUs)\n"
	"  doctor                  everything at once: the GPUs, the driver, the CUDA\n"
	"                          runtimes, and the Python environment checked\n"
	"                          against this machine's GPUs, by package\n"
	"  --version               print \"kimg-probe VERSION\"\n"
	"\n"
	"'kimg-probe COMMAND --help' (or -h) describes each. Every command takes\n"
	"--json: one JSON document on stdout, an error document when the command\n"
	"fails before its own (docs/json-probe.md; schemas in docs/schema/).\n"
	"\n"
	"Exit status: 0 success; 1 check or doctor found code that cannot run (or a\n"
	"CUDA runtime that needs a newer driver), or summarize found reports; 2 usage\n"
	"error, unreadable input, no driver, or output that could not be written\n"
	"(a full disk).\n";

/* Output that did not reach its file (a full disk, /dev/full, an I/O
 * error) must not pass for success: a cut JSON document with exit 0 is
 * worse than none. Returns 0, or -1 after saying what failed. */
static int finish_stdout(void)
{
	int e = 0;
	bool failed = ferror(stdout) != 0;
	errno = 0;
	if (fflush(stdout) != 0) {
		failed = true;
		e = errno;
	}
	if (fclose(stdout) != 0 && !failed) {
		failed = true;
		e = errno;
	}
	if (!failed)
		return 0;
	fprintf(stderr, "kimg-probe: cannot write to standard output: %s\n", e ? strerror(e) : "write error, output incomplete");
	return -1;
}

/* "1048576", "64K", "512M", "2G" -> bytes; -1 on anything else. */
static int parse_size(const char *text, uint64_t *bytes)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(text, &end, 10);
	if (errno || end == text || text[0] == '-')
		return -1;
	unsigned shift = 0;
	if (*end == 'K' || *end == 'k')
		shift = 10;
	else if (*end == 'M' || *end == 'm')
		shift = 20;
	else if (*end == 'G' || *end == 'g')
		shift = 30;
	if (shift)
		end++;
	if (*end != '\0' || v == 0 || v > (UINT64_MAX >> shift))
		return -1;
	*bytes = (uint64_t)v << shift;
	return 0;
}

static int run_command(int argc, char **argv);

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
};

static const struct command commands[] = {
	{ "device", probe_cmd_device },
	{ "scan", probe_cmd_scan },
	{ "check", probe_cmd_check },
	{ "summarize", probe_cmd_summarize },
	{ "doctor", probe_cmd_doctor },
};

/* "4G", "512M", "64K", "1000": 0 when unset; -1 when malformed or 0. */
static int env_size(const char *name, uint64_t *out)
{
	const char *v = getenv(name);
	char *end;
	*out = 0;
	if (!v || !*v)
		return 0;
	errno = 0;
	unsigned long long n = strtoull(v, &end, 10);
	unsigned shift = 0;
	if (*end == 'K' || *end == 'k')
		shift = 10, end++;
	else if (*end == 'M' || *end == 'm')
		shift = 20, end++;
	else if (*end == 'G' || *end == 'g')
		shift = 30, end++;
	if (errno || end == v || *end || n == 0 || n > (UINT64_MAX >> shift))
		return -1;
	*out = (uint64_t)n << shift;
	return 0;
}

int main(int argc, char **argv)
{
	probe_stdio_watch();
	/* --json failing before its document: the error document (json_error.h) */
	bool json = argc >= 2 && probe_wants_json(argc - 1, argv + 1);
	int status = run_command(argc, argv);
	probe_json_error_finish(argc >= 2 ? argv[1] : NULL, json, status);
	return finish_stdout() < 0 ? PROBE_EXIT_ERROR : status;
}

/* The command's status; main writes and checks stdout after it. */
static int run_command(int argc, char **argv)
{
	if (argc < 2) {
		fputs(main_help, stderr);
		return PROBE_EXIT_ERROR;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
		fputs(main_help, stdout);
		return PROBE_EXIT_OK;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("kimg-probe %s\n", KIMG_VERSION);
		return PROBE_EXIT_OK;
	}
	/* Scan output of a large library runs to megabytes: a large stdout buffer
	 * turns thousands of small writes into a few. */
	static char out_buf[1 << 16];
	setvbuf(stdout, out_buf, _IOFBF, sizeof out_buf);
	/* The environment knobs, read here so sys/ and the walkers stay free of getenv. */
	const char *la = getenv("KIMG_LIBARCHIVE");
	if (la && *la)
		kimg_tar_set_library(la);
	const char *zl = getenv("KIMG_ZLIB");
	if (zl && *zl)
		kimg_zip_set_library(zl);
	uint64_t max_member = 0, max_ratio = 0;
	if (env_size("KIMG_ZIP_MAX_MEMBER", &max_member) < 0 || env_size("KIMG_ZIP_MAX_RATIO", &max_ratio) < 0 ||
	    max_ratio > UINT32_MAX) {
		fprintf(stderr, "kimg-probe: KIMG_ZIP_MAX_MEMBER takes a byte count (4G, 512M, 100000) and "
				"KIMG_ZIP_MAX_RATIO a whole number\n");
		return PROBE_EXIT_ERROR;
	}
	kimg_zip_set_limits(max_member, (unsigned)max_ratio);
	kimg_tar_set_member_max(max_member);
	kimg_tar_set_ratio_max((unsigned)max_ratio);
	const char *native = getenv("KIMG_NATIVE");
	if (native && *native) {
		if (strcmp(native, "cuda") != 0 && strcmp(native, "auto") != 0) {
			fprintf(stderr, "kimg-probe: KIMG_NATIVE='%s': expected 'cuda' (ask the CUDA driver) or 'auto'\n",
				native);
			return PROBE_EXIT_ERROR;
		}
		probe_set_native_ask_driver(strcmp(native, "cuda") == 0);
	}
	probe_set_gres_map(getenv("KIMG_GRES_MAP")); /* --sm slurm: (probe/cluster_groups.h) */
	const char *jobs = getenv("KIMG_JOBS");
	if (jobs && *jobs) {
		char *end;
		unsigned long n = strtoul(jobs, &end, 10);
		if (*end || jobs[0] == '-' || n == 0 || n > PROBE_JOBS_MAX) {
			fprintf(stderr, "kimg-probe: KIMG_JOBS='%s': expected a number of threads from 1 to %d\n", jobs,
				PROBE_JOBS_MAX);
			return PROBE_EXIT_ERROR;
		}
		probe_set_default_jobs((unsigned)n);
	}
	const char *ra = getenv("KIMG_READAHEAD");
	if (ra && *ra) {
		uint64_t window = 0;
		if (strcmp(ra, "kernel") == 0) {
			probe_set_kernel_readahead(true);
			probe_set_header_window(0);
		} else if (strcmp(ra, "none") == 0) {
			probe_set_header_window(0);
		} else if (parse_size(ra, &window) == 0 && window <= ((uint64_t)1 << 30)) {
			probe_set_header_window(window);
		} else {
			fprintf(stderr, "kimg-probe: KIMG_READAHEAD='%s': expected a size read ahead of each header "
					"(default none), 'none' or 'kernel'\n", ra);
			return PROBE_EXIT_ERROR;
		}
	}
	const char *limit = getenv("KIMG_PAYLOAD_LIMIT");
	if (limit && *limit) {
		uint64_t bytes;
		if (parse_size(limit, &bytes) < 0) {
			fprintf(stderr, "kimg-probe: KIMG_PAYLOAD_LIMIT='%s': expected a size in bytes (K, M, G suffixes)\n",
				limit);
			return PROBE_EXIT_ERROR;
		}
		probe_set_payload_limit(bytes);
	}
	const char *crypto = getenv("KIMG_LIBCRYPTO");
	if (crypto)
		kimg_digest_set_library(crypto); /* "" turns libcrypto off: the portable SHA-256 */
	const char *sparse = getenv("KIMG_IMAGE_SPARSE_MIN");
	if (sparse && *sparse) {
		uint64_t bytes;
		if (parse_size(sparse, &bytes) < 0) {
			fprintf(stderr, "kimg-probe: KIMG_IMAGE_SPARSE_MIN='%s': expected a size in bytes (K, M, G suffixes)\n",
				sparse);
			return PROBE_EXIT_ERROR;
		}
		probe_image_set_sparse_min(bytes);
	}
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "kimg-probe: unknown command '%s' (commands: device, scan, check, summarize, doctor; see kimg-probe --help)\n",
		argv[1]);
	return PROBE_EXIT_ERROR;
}
