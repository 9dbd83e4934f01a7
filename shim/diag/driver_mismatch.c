/* SPDX-License-Identifier: Apache-2.0 */
/* Reports for a driver that refuses the program's runtime
 * (shim/diag.h). Facts and fixes: core/cuda_versions.h. The report
 * is one write() in the format of KIMG_FORMAT (text lines "kimg: ..." or
 * one JSON object, "report": "driver_mismatch"), on the KIMG_LOG target. */
#include "diag.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cuda_errors.h"
#include "cuda_versions.h"
#include "diag_internal.h"
#include "shim_pins.h" /* glibc symbol-version pins for dlopen, dlclose */

static _Atomic int compared_version; /* highest requested version already compared */
static _Atomic int reported;

static void format_version(int v, char *buf, size_t size)
{
	if (v <= 0)
		snprintf(buf, size, "?");
	else
		snprintf(buf, size, "%d.%d", v / 1000, v % 1000 / 10);
}

/* The program name may hold anything; JSON needs \" and \\ escaped and
 * control bytes dropped. */
static void json_escape(const char *s, char *out, size_t size)
{
	size_t n = 0;
	for (; *s && n + 3 < size; s++) {
		unsigned char c = (unsigned char)*s;
		if (c < 0x20)
			continue;
		if (c == '"' || c == '\\')
			out[n++] = '\\';
		out[n++] = (char)c;
	}
	out[n] = '\0';
}

static void emit(const char *call, int error, int requested, int driver)
{
	int expected = 0;
	if (!atomic_compare_exchange_strong(&reported, &expected, 1))
		return;
	char req[16], drv[16], compat[32], fix[640], name[128];
	struct kimg_runtime_verdict v;
	int major = requested > 0 ? requested / 1000 : -1, minor = requested > 0 ? requested % 1000 / 10 : -1;
	kimg_runtime_judge(major, minor, driver, &v);
	format_version(requested, req, sizeof req);
	format_version(driver, drv, sizeof drv);
	kimg_cuda_compat_package(major, minor, compat, sizeof compat);
	const char *ename = error == 35 ? "cudaErrorInsufficientDriver" : kimg_cuda_error_name(error);
	const char *what;
	if (error == 803) {
		what = "the user-mode driver (libcuda.so, often a cuda-compat package on the library path) does not "
		       "match the kernel module";
		snprintf(fix, sizeof fix,
			 "use the libcuda.so that came with the installed kernel driver (drop the compat directory from "
			 "LD_LIBRARY_PATH / ldconfig), or install the kernel driver of the same release; a cuda-compat "
			 "package works only on top of a supported older kernel-mode driver branch");
	} else if (error == 804) {
		what = "forward compatibility (cuda-compat) is not supported on this GPU: it is for data-center and "
		       "select professional GPUs";
		snprintf(fix, sizeof fix,
			 "remove the cuda-compat libraries from the library path and upgrade the driver itself%s%s%s, "
			 "or use a build of the program for CUDA %s or older",
			 v.min_driver ? " to >= " : "", v.min_driver ? v.min_driver : "", v.min_driver ? "" : "", drv);
	} else if (major <= 0) {
		/* cuInit's 35 before any runtime asked for a version: which CUDA
		 * the program needs is not known here, so no package is named
		 * (it once read "cuda-compat--1-0" and "cuda-0.0") */
		what = "the program's CUDA runtime is newer than the driver supports";
		snprintf(fix, sizeof fix,
			 "upgrade the driver to one of the program's CUDA version or newer; or, on data-center GPUs, "
			 "install the cuda-compat package of that version and put its compat directory on "
			 "LD_LIBRARY_PATH (forward compatibility); or use a build of the program for CUDA %s or older",
			 drv);
	} else {
		what = "the program's CUDA runtime is newer than the driver supports";
		snprintf(fix, sizeof fix,
			 "upgrade the driver to >= %s (%s or newer); or, on data-center GPUs, install %s and put "
			 "/usr/local/cuda-%d.%d/compat on LD_LIBRARY_PATH (forward compatibility); or use a build "
			 "of the program for CUDA %s or older",
			 v.min_driver ? v.min_driver : "?", v.branch ? v.branch : "a newer branch", compat, major,
			 minor > 0 ? minor : 0, drv);
	}
	char buf[2048], host[300] = "null", rank[24] = "null";
	int n;
	json_escape(kimg_env.program, name, sizeof name);
	/* host and rank as in the image reports, so summarize groups the ranks */
	if (kimg_env.host[0]) {
		host[0] = '"';
		json_escape(kimg_env.host, host + 1, sizeof host - 2);
		strcat(host, "\"");
	}
	if (kimg_env.rank >= 0)
		snprintf(rank, sizeof rank, "%ld", kimg_env.rank);
	if (kimg_opts.format == KIMG_FORMAT_JSON) {
		n = snprintf(buf, sizeof buf,
			     "{\"kimg_version\":\"" KIMG_VERSION "\",\"report\":\"driver_mismatch\",\"error\":{\"code\":%d,\"name\":%s%s%s},\"call\":\"%s\","
			     "\"runtime_cuda_version\":%s%s%s,\"driver_cuda_version\":%s%s%s,\"min_driver\":%s%s%s,"
			     "\"why\":\"%s\",\"fix\":\"%s\",\"process\":{\"program\":\"%s\",\"pid\":%ld,\"host\":%s,"
			     "\"rank\":%s}}\n",
			     error, ename ? "\"" : "", ename ? ename : "null", ename ? "\"" : "", call,
			     requested > 0 ? "\"" : "", requested > 0 ? req : "null", requested > 0 ? "\"" : "",
			     driver > 0 ? "\"" : "", driver > 0 ? drv : "null", driver > 0 ? "\"" : "",
			     v.min_driver ? "\"" : "", v.min_driver ? v.min_driver : "null", v.min_driver ? "\"" : "",
			     what, fix, name, (long)getpid(), host, rank);
	} else {
		n = snprintf(buf, sizeof buf,
			     "kimg: %s: CUDA %s runtime, driver supports CUDA %s -> error %d%s%s%s\n"
			     "kimg:   why:  %s\n"
			     "kimg:   runtime asks for CUDA %s; driver (cuDriverGetVersion) CUDA %s; minimum driver for the runtime: %s\n"
			     "kimg:   fix:  %s\n"
			     "kimg:   process: %s pid %ld\n",
			     call, req, drv, error, ename ? " (" : "", ename ? ename : "", ename ? ")" : "", what, req, drv,
			     v.min_driver ? v.min_driver : "?", fix, kimg_env.program, (long)getpid());
	}
	if (n > 0)
		kimg_log_write(buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

/* Only once the driver is loaded: kimg_driver_real() resolves its table
 * once, so asking before (a shared runtime answers cudaRuntimeGetVersion
 * before it loads libcuda) would leave the diagnosis without a driver. */
static bool driver_loaded(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		return false;
	dlclose(h); /* drops only the reference NOLOAD took */
	return true;
}

static int driver_version(void)
{
	const struct kimg_driver_api *api = kimg_driver_real();
	int v = 0;
	if (!api->cuDriverGetVersion || api->cuDriverGetVersion(&v) != 0)
		return 0;
	return v;
}

void kimg_driver_mismatch_note_request(int version, const char *call)
{
	int seen = atomic_load_explicit(&compared_version, memory_order_relaxed);
	if (KIMG_LIKELY(version <= seen) || atomic_load_explicit(&reported, memory_order_relaxed))
		return;
	/* Versions of 100000 and more are no CUDA version (some callers pass
	 * flags there by mistake): ignored. */
	if (version >= 100000 || !driver_loaded() ||
	    !atomic_compare_exchange_strong(&compared_version, &seen, version))
		return;
	int saved = errno;
	kimg_in_diagnosis++;
	int drv = driver_version();
	/* the runtime then fails with 35: it is of a newer major, or pre-11 */
	struct kimg_runtime_verdict v;
	kimg_runtime_judge(version / 1000, version % 1000 / 10, drv, &v);
	if (v.outcome == KIMG_RUNTIME_NEEDS_DRIVER)
		emit(call, 35, version, drv);
	kimg_in_diagnosis--;
	errno = saved;
}

void kimg_driver_mismatch_init_failed(int rc)
{
	if (rc != 35 && rc != 803 && rc != 804)
		return;
	int saved = errno;
	kimg_in_diagnosis++;
	emit("cuInit", rc, atomic_load_explicit(&compared_version, memory_order_relaxed), driver_version());
	kimg_in_diagnosis--;
	errno = saved;
}
