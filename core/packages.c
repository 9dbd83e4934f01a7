/* SPDX-License-Identifier: Apache-2.0 */
/* Package records and advice by package (packages.h). */
#include "packages.h"

#include <stdio.h>
#include <string.h>

#include "json_read.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static int copy_part(const char *s, size_t n, char *out, size_t size)
{
	if (n == 0 || n >= size)
		return -KIMG_EFORMAT;
	memcpy(out, s, n);
	out[n] = '\0';
	return 0;
}

int kimg_dist_info_parse_dirname(const char *dirname, char *name, size_t name_size, char *version,
				 size_t version_size)
{
	static const char *const suffixes[] = { ".dist-info", ".egg-info" };
	size_t len = strlen(dirname);
	for (size_t i = 0; i < ARRAY_SIZE(suffixes); i++) {
		size_t sl = strlen(suffixes[i]);
		if (len <= sl || strcmp(dirname + len - sl, suffixes[i]) != 0)
			continue;
		/* The name part has its '-' escaped to '_' (wheel spec), so the
		 * first '-' ends it. egg-info may add "-py3.11": cut at the next '-'. */
		const char *dash = memchr(dirname, '-', len - sl);
		if (!dash)
			return -KIMG_EFORMAT;
		const char *v = dash + 1, *vend = dirname + len - sl;
		const char *dash2 = memchr(v, '-', (size_t)(vend - v));
		if (dash2)
			vend = dash2;
		if (copy_part(dirname, (size_t)(dash - dirname), name, name_size) < 0 ||
		    copy_part(v, (size_t)(vend - v), version, version_size) < 0)
			return -KIMG_EFORMAT;
		return 0;
	}
	return -KIMG_EFORMAT;
}

int kimg_record_next(struct kimg_span text, uint64_t *pos, char *out, size_t size)
{
	while (*pos < text.size) {
		const char *s = (const char *)text.data + *pos;
		size_t left = (size_t)(text.size - *pos);
		const char *nl = memchr(s, '\n', left);
		size_t line = nl ? (size_t)(nl - s) : left;
		*pos += line + (nl ? 1 : 0);
		if (line > 0 && s[line - 1] == '\r')
			line--;
		if (line == 0)
			continue;
		size_t n = 0;
		bool too_long = false;
		if (s[0] == '"') {
			/* CSV quoting: "" is one quote; the field ends at a lone quote */
			size_t i = 1;
			for (;; i++) {
				if (i >= line)
					return -KIMG_EFORMAT;
				if (s[i] == '"') {
					if (i + 1 < line && s[i + 1] == '"') {
						i++;
					} else {
						break;
					}
				}
				if (n + 1 < size)
					out[n++] = s[i];
				else
					too_long = true;
			}
		} else {
			const char *comma = memchr(s, ',', line);
			n = comma ? (size_t)(comma - s) : line;
			if (n >= size)
				too_long = true;
			else
				memcpy(out, s, n);
		}
		if (too_long)
			return -KIMG_ELIMIT;
		out[n] = '\0';
		if (n == 0)
			continue;
		return 1;
	}
	return 0;
}

int kimg_list_next(struct kimg_span text, uint64_t *pos, char *out, size_t size)
{
	while (*pos < text.size) {
		const char *s = (const char *)text.data + *pos;
		size_t left = (size_t)(text.size - *pos);
		const char *nl = memchr(s, '\n', left);
		size_t line = nl ? (size_t)(nl - s) : left;
		*pos += line + (nl ? 1 : 0);
		while (line > 0 && s[line - 1] == '\r')
			line--;
		if (line == 0)
			continue;
		if (line >= size)
			return -KIMG_ELIMIT;
		memcpy(out, s, line);
		out[line] = '\0';
		return 1;
	}
	return 0;
}

int kimg_dpkg_list_package(const char *filename, char *name, size_t size)
{
	size_t len = strlen(filename);
	if (len <= 5 || strcmp(filename + len - 5, ".list") != 0)
		return -KIMG_EFORMAT;
	const char *colon = memchr(filename, ':', len - 5);
	return copy_part(filename, colon ? (size_t)(colon - filename) : len - 5, name, size);
}

/* Whether a dpkg "Status: want flag status" line says the package's files
 * are on disk: its third word is one of the states after unpacking and
 * configuring (dpkg(1), "package states"). not-installed, config-files,
 * half-installed and unpacked-but-unconfigured states are not counted: a
 * substring test for "installed" took "not-installed" and "half-installed"
 * as installed. */
static bool dpkg_status_installed(const char *status)
{
	static const char *const states[] = { "installed", "triggers-pending", "triggers-awaited" };
	const char *word = strrchr(status, ' ');
	word = word ? word + 1 : status;
	for (size_t i = 0; i < ARRAY_SIZE(states); i++)
		if (strcmp(word, states[i]) == 0)
			return true;
	return false;
}

/* Value of "Field: value" when line starts with field; copies into out. */
static bool field(const char *line, size_t len, const char *fieldname, char *out, size_t size)
{
	size_t fl = strlen(fieldname);
	if (len <= fl + 1 || memcmp(line, fieldname, fl) != 0 || line[fl] != ':')
		return false;
	const char *v = line + fl + 1;
	size_t vl = len - fl - 1;
	while (vl > 0 && (*v == ' ' || *v == '\t')) {
		v++;
		vl--;
	}
	while (vl > 0 && (v[vl - 1] == ' ' || v[vl - 1] == '\r'))
		vl--;
	if (vl == 0 || vl >= size)
		return false;
	memcpy(out, v, vl);
	out[vl] = '\0';
	return true;
}

int kimg_dpkg_status_each(struct kimg_span text, int (*fn)(void *ctx, const char *package, const char *version),
			  void *ctx)
{
	char pkg[128] = "", ver[128] = "", status[128] = "";
	uint64_t pos = 0;
	int count = 0;
	for (;;) {
		bool end = pos >= text.size;
		const char *s = end ? "" : (const char *)text.data + pos;
		size_t left = end ? 0 : (size_t)(text.size - pos);
		const char *nl = end ? NULL : memchr(s, '\n', left);
		size_t line = end ? 0 : nl ? (size_t)(nl - s) : left;
		if (!end)
			pos += line + (nl ? 1 : 0);
		if (line == 0 || (line == 1 && s[0] == '\r')) {
			/* stanza ends */
			if (pkg[0] && ver[0] && (!status[0] || dpkg_status_installed(status))) {
				int rc = fn(ctx, pkg, ver);
				if (rc)
					return rc;
				count++;
			}
			pkg[0] = ver[0] = status[0] = '\0';
			if (end)
				return count;
			continue;
		}
		if (!field(s, line, "Package", pkg, sizeof pkg) && !field(s, line, "Version", ver, sizeof ver))
			(void)field(s, line, "Status", status, sizeof status);
	}
}

int kimg_conda_meta_parse(struct kimg_span doc, void *arena, size_t arena_size, char *name, size_t name_size,
			  char *version, size_t version_size, int (*fn)(void *ctx, const char *path), void *ctx,
			  struct kimg_error *err)
{
	struct kimg_jdoc jd;
	kimg_jdoc_init(&jd, arena, arena_size);
	int rc = kimg_jdoc_parse(&jd, doc, err);
	if (rc < 0)
		return rc;
	const char *n = kimg_jval_string(kimg_jval_get(jd.root, "name"));
	const char *v = kimg_jval_string(kimg_jval_get(jd.root, "version"));
	const struct kimg_jval *files = kimg_jval_get(jd.root, "files");
	if (!n || !v || (files && files->type != KIMG_JARRAY))
		return kimg_error_set(err, -KIMG_EFORMAT, 0, "conda-meta: no \"name\"/\"version\" strings");
	if (copy_part(n, strlen(n), name, name_size) < 0 || copy_part(v, strlen(v), version, version_size) < 0)
		return kimg_error_set(err, -KIMG_EFORMAT, 0, "conda-meta: name or version too long");
	int count = 0;
	for (const struct kimg_jval *f = files ? files->child : NULL; f; f = f->next) {
		const char *p = kimg_jval_string(f);
		if (!p || !p[0])
			continue;
		if ((rc = fn(ctx, p)) != 0)
			return rc;
		count++;
	}
	return count;
}

/* ---- advice by package ----
 * What each project documents as the way to get code for a given GPU:
 * PyTorch's "Get Started" selector (one wheel index per CUDA line, each
 * line with its own arch list), CuPy's installation guide (cupy-cuda12x /
 * cupy-cuda13x wheels, kernels compiled at run time for the GPU), JAX's
 * installation guide (jax[cuda12] / jax[cuda13] extras), TensorFlow's
 * "Build from source" (TF_CUDA_COMPUTE_CAPABILITIES), and the extensions'
 * own build notes (TORCH_CUDA_ARCH_LIST is read by
 * torch.utils.cpp_extension, which they all build with). */
static const struct kimg_pkg_advice advice[] = {
	{ "torch", KIMG_PKG_PYTORCH, "PyTorch",
	  "install the PyTorch wheel whose CUDA line is built for {sm}: pip install torch --index-url "
	  "https://download.pytorch.org/whl/cuXYZ (see the wheel line of the fix); a source build needs "
	  "TORCH_CUDA_ARCH_LIST=\"{arch_list}\"" },
	{ "torchvision", KIMG_PKG_PYTORCH, "PyTorch",
	  "install torchvision from the same wheel index (CUDA line) as a torch built for {sm}" },
	{ "torchaudio", KIMG_PKG_PYTORCH, "PyTorch",
	  "install torchaudio from the same wheel index (CUDA line) as a torch built for {sm}" },
	{ "cupy-cuda*", KIMG_PKG_CUPY, "CuPy",
	  "install the cupy-cudaNNx wheel of the CUDA major your driver runs (cupy-cuda12x, cupy-cuda13x) "
	  "in a release that supports {sm}; CuPy compiles its own kernels for the GPU at run time" },
	{ "cupy", KIMG_PKG_CUPY, "CuPy",
	  "install the cupy-cudaNNx wheel of the CUDA major your driver runs (cupy-cuda12x, cupy-cuda13x) "
	  "in a release that supports {sm}" },
	{ "jax", KIMG_PKG_JAX, "JAX", "pip install -U \"jax[cuda12]\" or \"jax[cuda13]\", a release built for {sm}" },
	{ "jaxlib", KIMG_PKG_JAX, "JAX", "pip install -U \"jax[cuda12]\" or \"jax[cuda13]\", a release built for {sm}" },
	{ "jax-cuda*", KIMG_PKG_JAX, "JAX",
	  "pip install -U \"jax[cuda12]\" or \"jax[cuda13]\", a release built for {sm}" },
	{ "tensorflow*", KIMG_PKG_TENSORFLOW, "TensorFlow",
	  "TensorFlow wheels carry a fixed set of compute capabilities: use a release that lists {cc}, or "
	  "build from source with TF_CUDA_COMPUTE_CAPABILITIES={cc}" },
	{ "tf-nightly*", KIMG_PKG_TENSORFLOW, "TensorFlow",
	  "build TensorFlow from source with TF_CUDA_COMPUTE_CAPABILITIES={cc}" },
	{ "flash-attn*", KIMG_PKG_TORCH_EXTENSION, "PyTorch extension",
	  "reinstall {pkg} built for {sm}: TORCH_CUDA_ARCH_LIST=\"{arch_list}\" pip install --no-build-isolation "
	  "--no-binary {pkg} {pkg}, or the project's wheel for that GPU" },
	{ "xformers", KIMG_PKG_TORCH_EXTENSION, "PyTorch extension",
	  "reinstall {pkg} built for {sm}: TORCH_CUDA_ARCH_LIST=\"{arch_list}\" pip install --no-build-isolation "
	  "--no-binary {pkg} {pkg}, or the wheel of the index matching your torch" },
	{ "bitsandbytes", KIMG_PKG_TORCH_EXTENSION, "PyTorch extension",
	  "install a bitsandbytes release built for {sm}, or build it with cmake -DCOMPUTE_BACKEND=cuda "
	  "-DCOMPUTE_CAPABILITY=\"{cmake}\"" },
	{ "vllm", KIMG_PKG_TORCH_EXTENSION, "PyTorch extension",
	  "install the vLLM wheel for your CUDA line that includes {sm}, or build it with "
	  "TORCH_CUDA_ARCH_LIST=\"{arch_list}\"" },
	/* extensions without advice of their own: the generic extension advice */
	{ "apex", KIMG_PKG_TORCH_EXTENSION, NULL, NULL },
	{ "deepspeed", KIMG_PKG_TORCH_EXTENSION, NULL, NULL },
	{ "mamba-ssm", KIMG_PKG_TORCH_EXTENSION, NULL, NULL },
	{ "causal-conv1d", KIMG_PKG_TORCH_EXTENSION, NULL, NULL },
	{ "flashinfer*", KIMG_PKG_TORCH_EXTENSION, NULL, NULL },
	{ "sglang*", KIMG_PKG_TORCH_EXTENSION, NULL, NULL },
	{ "sgl-kernel", KIMG_PKG_TORCH_EXTENSION, NULL, NULL },
	{ "auto-gptq", KIMG_PKG_TORCH_EXTENSION, NULL, NULL },
	{ "autoawq*", KIMG_PKG_TORCH_EXTENSION, NULL, NULL },
	{ "torch-scatter", KIMG_PKG_TORCH_EXTENSION, NULL, NULL },
	{ "torch-sparse", KIMG_PKG_TORCH_EXTENSION, NULL, NULL },
	{ "transformer-engine*", KIMG_PKG_TORCH_EXTENSION, NULL, NULL },
	{ "nvidia-*", KIMG_PKG_NVIDIA_LIBRARY, "NVIDIA CUDA library",
	  "install a release of {pkg} that supports {sm} (NVIDIA's library wheels add architectures in "
	  "newer releases; keep the -cuNN suffix of your CUDA line)" },
	{ NULL, KIMG_PKG_OTHER, "other",
	  "rebuild {pkg} for {sm} (CMAKE_CUDA_ARCHITECTURES=\"{cmake}\"; the nvcc -gencode flags of the fix)" },
};

#define GENERIC_EXTENSION_ADVICE                                                                                   \
	"rebuild {pkg} for {sm} with TORCH_CUDA_ARCH_LIST=\"{arch_list}\" (pip install --no-build-isolation "   \
	"--no-binary {pkg} {pkg}), or install the project's wheel built for that GPU"

void kimg_pkg_normalize(const char *name, char *out, size_t size)
{
	size_t n = 0;
	bool sep = false;
	if (size == 0)
		return;
	for (const char *p = name; *p && n + 1 < size; p++) {
		char c = *p;
		if (c == '-' || c == '_' || c == '.') {
			sep = true;
			continue;
		}
		if (sep && n > 0 && n + 2 < size)
			out[n++] = '-';
		sep = false;
		out[n++] = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
	}
	out[n] = '\0';
}

static bool pattern_match(const char *pattern, const char *name)
{
	size_t pl = strlen(pattern);
	if (pl > 0 && pattern[pl - 1] == '*')
		return strncmp(pattern, name, pl - 1) == 0;
	return strcmp(pattern, name) == 0;
}

static const struct kimg_pkg_advice generic_extension = { NULL, KIMG_PKG_TORCH_EXTENSION, "PyTorch extension",
							   GENERIC_EXTENSION_ADVICE };

const struct kimg_pkg_advice *kimg_pkg_advice_for(const char *name)
{
	char norm[128];
	kimg_pkg_normalize(name ? name : "", norm, sizeof norm);
	for (size_t i = 0; i + 1 < ARRAY_SIZE(advice); i++) {
		if (pattern_match(advice[i].pattern, norm))
			return advice[i].advice ? &advice[i] : &generic_extension;
	}
	return &advice[ARRAY_SIZE(advice) - 1];
}

const struct kimg_pkg_advice *kimg_pkg_advice_at(unsigned index)
{
	return index < ARRAY_SIZE(advice) ? &advice[index] : NULL;
}

size_t kimg_pkg_advice_format(const struct kimg_pkg_advice *a, const char *pkg, const char *sm, const char *cc,
			      const char *arch_list, char *out, size_t size)
{
	static const struct {
		const char *key;
		int which;
	} keys[] = { { "{pkg}", 0 }, { "{sm}", 1 }, { "{cc}", 2 }, { "{arch_list}", 3 }, { "{cmake}", 4 } };
	size_t n = 0;
	if (size == 0)
		return 0;
	char cmake[16] = "";
	if (cc) { /* "12.0" -> "120" */
		size_t k = 0;
		for (const char *p = cc; *p && k + 1 < sizeof cmake; p++)
			if (*p != '.')
				cmake[k++] = *p;
		cmake[k] = '\0';
	}
	/* an unknown value reads as words, never a literal "?" (a file with
	 * no package record: "rebuild the code for sm_90") */
	const char *vals[] = { pkg && *pkg ? pkg : "the code", sm && *sm ? sm : "this GPU",
			       cc && *cc ? cc : "this GPU's compute capability",
			       arch_list && *arch_list ? arch_list : cc && *cc ? cc : "this GPU's compute capability",
			       cmake[0] ? cmake : "this GPU's compute capability without the dot" };
	for (const char *p = a->advice ? a->advice : ""; *p && n + 1 < size;) {
		bool done = false;
		if (*p == '{')
			for (size_t k = 0; k < ARRAY_SIZE(keys); k++) {
				size_t kl = strlen(keys[k].key);
				if (strncmp(p, keys[k].key, kl) == 0) {
					const char *v = vals[keys[k].which];
					size_t vl = strlen(v);
					if (vl > size - 1 - n)
						vl = size - 1 - n;
					memcpy(out + n, v, vl);
					n += vl;
					p += kl;
					done = true;
					break;
				}
			}
		if (!done)
			out[n++] = *p++;
	}
	out[n] = '\0';
	return n;
}
