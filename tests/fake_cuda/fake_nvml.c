/* SPDX-License-Identifier: Apache-2.0 */
/* A fake libnvidia-ml.so.1 for the device/doctor tests: the NVML calls
 * sys/gpu_readings.c makes, for devices described by the environment:
 *   FAKE_NVML_COUNT  GPUs NVML lists (default FAKE_CUDA_COUNT, else 1): more
 *                    than the fake driver shows stands for CUDA_VISIBLE_DEVICES
 *   FAKE_NVML_SM     its compute capability as an SM number (default
 *                    FAKE_CUDA_SM, else 90): another value makes the readings
 *                    disagree
 *   FAKE_CUDA_NAME   the name (default "Fake GPU")
 *   FAKE_NVML_FAIL   1: nvmlInit_v2 fails (NVML_ERROR_DRIVER_NOT_LOADED, 9);
 *                    2: nvmlDeviceGetCount_v2 fails (NVML_ERROR_UNKNOWN, 999)
 *   FAKE_NVML_MIG    1: every GPU is in MIG mode (current and pending)
 *   FAKE_NVML_INIT_MS  nvmlInit_v2 takes this long first (a real one takes
 *                    some 20 ms): the walk begins meanwhile
 *   FAKE_NVML_LOG    a file each nvmlInit_v2 appends one line to: how many
 *                    times a run started NVML
 * UUIDs are those of fake_cuda.c's cuDeviceGetUuid: a0a1a2a3-a4a5-a6a7-
 * a8a9-aaabacadae<index>. */
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define API __attribute__((visibility("default")))

static int env_int(const char *name, const char *fallback, int dflt)
{
	const char *v = getenv(name);
	if (!v || !*v)
		v = fallback ? getenv(fallback) : NULL;
	return v && *v ? atoi(v) : dflt;
}

API int nvmlInit_v2(void);
int nvmlInit_v2(void)
{
	int ms = env_int("FAKE_NVML_INIT_MS", NULL, 0);
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	while (ms > 0 && nanosleep(&ts, &ts) != 0)
		;
	const char *log = getenv("FAKE_NVML_LOG");
	FILE *f = log && *log ? fopen(log, "a") : NULL;
	if (f) {
		fputs("nvmlInit_v2\n", f);
		fclose(f);
	}
	return env_int("FAKE_NVML_FAIL", NULL, 0) == 1 ? 9 : 0;
}

API int nvmlShutdown(void);
int nvmlShutdown(void)
{
	return 0;
}

API int nvmlDeviceGetCount_v2(unsigned *n);
int nvmlDeviceGetCount_v2(unsigned *n)
{
	*n = (unsigned)env_int("FAKE_NVML_COUNT", "FAKE_CUDA_COUNT", 1);
	return env_int("FAKE_NVML_FAIL", NULL, 0) == 2 ? 999 : 0;
}

API int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **h);
int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **h)
{
	if (i >= (unsigned)env_int("FAKE_NVML_COUNT", "FAKE_CUDA_COUNT", 1))
		return 2; /* NVML_ERROR_INVALID_ARGUMENT */
	*h = (void *)(uintptr_t)(i + 1);
	return 0;
}

API int nvmlDeviceGetName(void *h, char *buf, unsigned len);
int nvmlDeviceGetName(void *h, char *buf, unsigned len)
{
	const char *n = getenv("FAKE_CUDA_NAME");
	snprintf(buf, len, "%s", n && *n ? n : "Fake GPU");
	return 0;
}

API int nvmlDeviceGetUUID(void *h, char *buf, unsigned len);
int nvmlDeviceGetUUID(void *h, char *buf, unsigned len)
{
	snprintf(buf, len, "GPU-a0a1a2a3-a4a5-a6a7-a8a9-aaabacadae%02x", (unsigned)((uintptr_t)h - 1));
	return 0;
}

API int nvmlDeviceGetCudaComputeCapability(void *h, int *major, int *minor);
int nvmlDeviceGetCudaComputeCapability(void *h, int *major, int *minor)
{
	int sm = env_int("FAKE_NVML_SM", "FAKE_CUDA_SM", 90);
	*major = sm / 10;
	*minor = sm % 10;
	return 0;
}

API int nvmlDeviceGetMigMode(void *h, unsigned *current, unsigned *pending);
int nvmlDeviceGetMigMode(void *h, unsigned *current, unsigned *pending)
{
	*current = *pending = (unsigned)env_int("FAKE_NVML_MIG", NULL, 0);
	return 0;
}

API int nvmlSystemGetDriverVersion(char *buf, unsigned len);
int nvmlSystemGetDriverVersion(char *buf, unsigned len)
{
	snprintf(buf, len, "580.00.00-fake");
	return 0;
}
