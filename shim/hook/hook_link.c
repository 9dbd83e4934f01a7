/* SPDX-License-Identifier: Apache-2.0 */
/* Wrappers for the driver's JIT linker: cuLinkCreate, cuLinkAddData,
 * cuLinkAddFile (each also as _v2, which cuda.h makes the default: same
 * ABI, different functions in the driver), cuLinkComplete, cuLinkDestroy.
 * numba-cuda, CuPy (-rdc, cudadevrt) and cuda.bindings users compile
 * through this path, and a refused input comes back as a bare 218 / 222.
 *
 * Each link state's inputs are remembered in a fixed table (type, bytes,
 * name), so a refusal at cuLinkAddData names the input and its images
 * and a refusal at cuLinkComplete lists what went in. The success path
 * is the real call plus a slot claim and a bounded name copy; nothing is
 * allocated. A state that does not fit the table is simply not
 * remembered: its failures are still reported, without the other inputs.
 *
 * The JIT error log: when the program passed CU_JIT_ERROR_LOG_BUFFER to
 * cuLinkCreate (or cuModuleLoadDataEx), the driver's own words ("ptxas
 * fatal: Unsupported .version 9.9") go into the report. The option
 * arrays of cuLinkCreate must outlive the state (CUDA documents this for
 * output options), so the buffer can be read at a later failure. */
#include <errno.h>
#include <stdatomic.h>

#include "cuda_errors.h"
#include "hook.h"

/* CUjit_option values (cuda.h) */
#define JIT_ERROR_LOG_BUFFER 5
#define JIT_ERROR_LOG_BUFFER_SIZE_BYTES 6

#define LINK_STATES 64u /* power of two; concurrent link states of one process */

struct link_state {
	_Atomic uintptr_t key; /* the CUlinkState; 0 free */
	const char *log;
	size_t log_size;
	size_t n;              /* inputs remembered */
	unsigned dropped;      /* inputs past KIMG_LINK_MAX_INPUTS */
	struct kimg_link_input in[KIMG_LINK_MAX_INPUTS];
};

/* A link state is used by one thread at a time (CUDA does not make it
 * thread safe), so only the claim is atomic. */
static struct link_state states[LINK_STATES];

static uint32_t slot_of(uintptr_t key)
{
	uint64_t h = (uint64_t)key * 0x9e3779b97f4a7c15ULL;
	return (uint32_t)(h >> 58) & (LINK_STATES - 1);
}

static struct link_state *state_find(const void *handle)
{
	uintptr_t key = (uintptr_t)handle;
	uint32_t i = slot_of(key);
	for (uint32_t n = 0; key && n < LINK_STATES; n++, i = (i + 1) & (LINK_STATES - 1))
		if (atomic_load_explicit(&states[i].key, memory_order_acquire) == key)
			return &states[i];
	return NULL;
}

static struct link_state *state_claim(const void *handle)
{
	uintptr_t key = (uintptr_t)handle;
	uint32_t i = slot_of(key);
	for (uint32_t n = 0; key && n < LINK_STATES; n++, i = (i + 1) & (LINK_STATES - 1)) {
		uintptr_t expected = 0;
		if (atomic_compare_exchange_strong_explicit(&states[i].key, &expected, key, memory_order_acq_rel,
							    memory_order_acquire) ||
		    expected == key)
			return &states[i];
	}
	return NULL;
}

void kimg_jit_log_option(unsigned n, const int *opts, void *const *vals, const char **log, size_t *size)
{
	*log = NULL;
	*size = 0;
	if (!opts || !vals)
		return;
	for (unsigned i = 0; i < n && i < 64; i++) {
		if (opts[i] == JIT_ERROR_LOG_BUFFER)
			*log = vals[i];
		else if (opts[i] == JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
			*size = (size_t)(uintptr_t)vals[i];
	}
	if (!*log)
		*size = 0;
}

/* Bounded copy without libc's memcpy (whose x86-64 version is newer than
 * the hooks layer may require: tests/shim/exports.sh). */
static void copy_name(char *dst, const char *src)
{
	size_t i = 0;
	for (; src && src[i] && i < KIMG_LINK_NAME - 1; i++)
		dst[i] = src[i];
	dst[i] = '\0';
}

static void remember(struct link_state *s, int type, const void *data, size_t size, const char *name)
{
	if (!s)
		return;
	if (s->n == KIMG_LINK_MAX_INPUTS) {
		s->dropped++;
		return;
	}
	struct kimg_link_input *in = &s->in[s->n++];
	in->type = type;
	in->data = data;
	in->size = size;
	copy_name(in->name, name);
}

/* ---- cold paths ---- */

static KIMG_COLD void link_fail(const char *call, CUresult r, const struct link_state *s,
				const struct kimg_link_input *refused, const void *image, size_t size, const char *path,
				const char *log, size_t log_size, const void *caller)
{
	int saved = errno;
	kimg_shim_ensure_init();
	if (kimg_hooks_active() && kimg_cuda_error_is_image_class(r)) {
		struct kimg_link_input one[1];
		struct kimg_link_facts lf = { .log = log, .log_size = log_size };
		if (s) {
			lf.inputs = s->in;
			lf.n_inputs = s->n;
			lf.dropped = s->dropped;
			lf.refused = refused ? (size_t)(refused - s->in) : s->n;
		} else if (refused) {
			one[0] = *refused;
			lf.inputs = one;
			lf.n_inputs = 1;
			lf.refused = 0;
		}
		struct kimg_failure f = {
			.call = call, .error = r, .handle_kind = KIMG_HANDLE_MODULE, .image = image,
			.image_size = size, .path = path, .link = &lf, .caller = caller,
		};
		kimg_report_failure(&f);
	}
	errno = saved;
}

/* ---- the wrappers ---- */

#define REAL(id, type)                                     \
	__typeof__(type) real = (__typeof__(type))kimg_hook_get(KIMG_HOOK_##id); \
	if (KIMG_UNLIKELY(!real))                          \
		return KIMG_CUDA_ERROR_NOT_INITIALIZED

#define EXPORT_AS(name, ...) KIMG_EXPORT CUresult name(__VA_ARGS__) __attribute__((alias("kimg_w_" #name)))

typedef CUresult (*link_create_fn)(unsigned, int *, void **, CUhandle *);
typedef CUresult (*link_add_data_fn)(KIMG_LINK_ADD_DATA_ARGS);
typedef CUresult (*link_add_file_fn)(KIMG_LINK_ADD_FILE_ARGS);

static CUresult link_create(link_create_fn real, unsigned n, int *opts, void **vals, CUhandle *state)
{
	CUresult r = real(n, opts, vals, state);
	kimg_shim_ensure_init();
	if (r == KIMG_CUDA_SUCCESS && state && *state && kimg_hooks_active()) {
		struct link_state *s = state_claim(*state);
		if (s) {
			s->n = 0;
			s->dropped = 0;
			kimg_jit_log_option(n, opts, vals, &s->log, &s->log_size);
		}
	}
	return r;
}

CUresult kimg_w_cuLinkCreate(unsigned n, int *opts, void **vals, CUhandle *state)
{
	REAL(cuLinkCreate, link_create_fn);
	return link_create(real, n, opts, vals, state);
}
EXPORT_AS(cuLinkCreate, unsigned n, int *opts, void **vals, CUhandle *state);

CUresult kimg_w_cuLinkCreate_v2(unsigned n, int *opts, void **vals, CUhandle *state)
{
	REAL(cuLinkCreate_v2, link_create_fn);
	return link_create(real, n, opts, vals, state);
}
EXPORT_AS(cuLinkCreate_v2, unsigned n, int *opts, void **vals, CUhandle *state);

/* The per-call options of an input may carry their own error log. */
static void log_for(const struct link_state *s, unsigned n, int *opts, void **vals, const char **log, size_t *size)
{
	kimg_jit_log_option(n, opts, vals, log, size);
	if (!*log && s) {
		*log = s->log;
		*size = s->log_size;
	}
}

static CUresult link_add_data(const char *call, link_add_data_fn real, KIMG_LINK_ADD_DATA_ARGS, const void *caller)
{
	CUresult r = real(state, type, data, size, name, n, opts, vals);
	kimg_shim_ensure_init();
	if (!kimg_hooks_active())
		return r;
	struct link_state *s = state_find(state);
	remember(s, type, data, size, name);
	if (KIMG_UNLIKELY(r != KIMG_CUDA_SUCCESS)) {
		const char *log;
		size_t log_size;
		struct kimg_link_input alone = { .type = type, .data = data, .size = size };
		copy_name(alone.name, name);
		const struct kimg_link_input *refused = s && s->n > 0 && s->in[s->n - 1].data == data ? &s->in[s->n - 1]
												: &alone;
		log_for(s, n, opts, vals, &log, &log_size);
		link_fail(call, r, refused == &alone ? NULL : s, refused, data, size, NULL, log, log_size, caller);
	}
	return r;
}

CUresult kimg_w_cuLinkAddData(KIMG_LINK_ADD_DATA_ARGS)
{
	REAL(cuLinkAddData, link_add_data_fn);
	return link_add_data("cuLinkAddData", real, state, type, data, size, name, n, opts, vals,
			     __builtin_return_address(0));
}
EXPORT_AS(cuLinkAddData, KIMG_LINK_ADD_DATA_ARGS);

CUresult kimg_w_cuLinkAddData_v2(KIMG_LINK_ADD_DATA_ARGS)
{
	REAL(cuLinkAddData_v2, link_add_data_fn);
	return link_add_data("cuLinkAddData_v2", real, state, type, data, size, name, n, opts, vals,
			     __builtin_return_address(0));
}
EXPORT_AS(cuLinkAddData_v2, KIMG_LINK_ADD_DATA_ARGS);

static CUresult link_add_file(const char *call, link_add_file_fn real, KIMG_LINK_ADD_FILE_ARGS, const void *caller)
{
	CUresult r = real(state, type, path, n, opts, vals);
	kimg_shim_ensure_init();
	if (!kimg_hooks_active())
		return r;
	struct link_state *s = state_find(state);
	remember(s, type, NULL, 0, path);
	if (KIMG_UNLIKELY(r != KIMG_CUDA_SUCCESS)) {
		const char *log;
		size_t log_size;
		struct kimg_link_input alone = { .type = type };
		copy_name(alone.name, path);
		const struct kimg_link_input *refused = s && s->n > 0 && !s->in[s->n - 1].data ? &s->in[s->n - 1] : &alone;
		log_for(s, n, opts, vals, &log, &log_size);
		link_fail(call, r, refused == &alone ? NULL : s, refused, NULL, 0, path, log, log_size, caller);
	}
	return r;
}

CUresult kimg_w_cuLinkAddFile(KIMG_LINK_ADD_FILE_ARGS)
{
	REAL(cuLinkAddFile, link_add_file_fn);
	return link_add_file("cuLinkAddFile", real, state, type, path, n, opts, vals, __builtin_return_address(0));
}
EXPORT_AS(cuLinkAddFile, KIMG_LINK_ADD_FILE_ARGS);

CUresult kimg_w_cuLinkAddFile_v2(KIMG_LINK_ADD_FILE_ARGS)
{
	REAL(cuLinkAddFile_v2, link_add_file_fn);
	return link_add_file("cuLinkAddFile_v2", real, state, type, path, n, opts, vals,
			     __builtin_return_address(0));
}
EXPORT_AS(cuLinkAddFile_v2, KIMG_LINK_ADD_FILE_ARGS);

/* A refusal here is about the inputs together (a cubin for another GPU
 * among them, unresolved code): the report lists them; the module shown
 * is the first input whose bytes are still known. */
CUresult kimg_w_cuLinkComplete(CUhandle state, void **cubin, size_t *size)
{
	REAL(cuLinkComplete, CUresult(*)(CUhandle, void **, size_t *));
	CUresult r = real(state, cubin, size);
	if (KIMG_UNLIKELY(r != KIMG_CUDA_SUCCESS)) {
		kimg_shim_ensure_init();
		const struct link_state *s = kimg_hooks_active() ? state_find(state) : NULL;
		const void *image = NULL;
		size_t image_size = 0;
		for (size_t i = 0; s && i < s->n && !image; i++)
			if (s->in[i].data) {
				image = s->in[i].data;
				image_size = s->in[i].size;
			}
		link_fail("cuLinkComplete", r, s, NULL, image, image_size, NULL, s ? s->log : NULL, s ? s->log_size : 0,
			  __builtin_return_address(0));
	}
	return r;
}
EXPORT_AS(cuLinkComplete, CUhandle state, void **cubin, size_t *size);

CUresult kimg_w_cuLinkDestroy(CUhandle state)
{
	REAL(cuLinkDestroy, CUresult(*)(CUhandle));
	struct link_state *s = state_find(state);
	if (s)
		atomic_store_explicit(&s->key, 0, memory_order_release);
	return real(state);
}
EXPORT_AS(cuLinkDestroy, CUhandle state);
