/* SPDX-License-Identifier: Apache-2.0 */
/* An image's own facts (image.h), from its config: the Env settings that
 * decide whether and how CUDA runs in it, and NVIDIA_REQUIRE_*, judged
 * against each target as the NVIDIA container toolkit judges them
 * (core/nvidia_require.h). Rendered as text and as the image's object in
 * the "files" array (docs/json-probe.md). */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "arch.h"
#include "cluster_groups.h"
#include "cuda_compat.h"
#include "image.h"
#include "nvidia_require.h"
#include "probe.h"

const char *probe_image_env(const struct probe_image_info *img, const char *name)
{
	size_t n = strlen(name);
	const char *found = NULL;
	for (unsigned i = 0; i < img->n_env; i++)
		if (strncmp(img->env[i], name, n) == 0 && img->env[i][n] == '=')
			found = img->env[i] + n + 1; /* the last one wins, as in execve's environment */
	return found;
}

/* The variables the driver and runtime read in a container, shown as
 * facts: CUDA_* (CUDA_MODULE_LOADING, CUDA_CACHE_DISABLE, CUDA_FORCE_PTX_JIT,
 * CUDA_DISABLE_PTX_JIT, CUDA_VISIBLE_DEVICES, CUDA_VERSION ...), the
 * toolkit's NVIDIA_* and the loader's LD_LIBRARY_PATH. */
bool probe_image_env_is_fact(const char *entry)
{
	return strncmp(entry, "CUDA_", 5) == 0 || strncmp(entry, "NVIDIA_", 7) == 0 ||
	       strncmp(entry, "LD_LIBRARY_PATH=", 16) == 0 || strncmp(entry, "_CUDA_COMPAT_PATH=", 18) == 0;
}

static bool is_true(const char *v)
{
	return v && (strcasecmp(v, "true") == 0 || strcmp(v, "1") == 0 || strcasecmp(v, "yes") == 0);
}

unsigned probe_image_requirements(const struct probe_image_info *img, const char **names, const char **exprs,
				  char legacy[32], unsigned max)
{
	unsigned n = 0;
	legacy[0] = '\0';
	if (is_true(probe_image_env(img, "NVIDIA_DISABLE_REQUIRE")))
		return 0;
	for (unsigned i = 0; i < img->n_env && n < max; i++) {
		const char *e = img->env[i];
		if (strncmp(e, "NVIDIA_REQUIRE_", 15) != 0 || strncmp(e, "NVIDIA_REQUIRE_JETPACK", 22) == 0)
			continue;
		const char *eq = strchr(e, '=');
		if (!eq || !eq[1])
			continue;
		/* a variable set twice: the later one (probe_image_env) only */
		char name[96];
		snprintf(name, sizeof name, "%.*s", (int)(eq - e), e);
		if (probe_image_env(img, name) != eq + 1)
			continue;
		names[n] = e;
		exprs[n++] = eq + 1;
	}
	const char *cv = probe_image_env(img, "CUDA_VERSION");
	unsigned major, minor;
	if (!probe_image_env(img, "NVIDIA_REQUIRE_CUDA") && cv && sscanf(cv, "%u.%u", &major, &minor) == 2 && n < max) {
		snprintf(legacy, 32, "cuda>=%u.%u", major, minor);
		names[n] = "CUDA_VERSION";
		exprs[n++] = legacy;
	}
	return n;
}

/* expr judged against what kimg knows of target t (kimg_require_judge). */
static int judge_on(const char *expr, const struct probe_target *t, struct kimg_require_verdict *v,
		    struct kimg_error *err)
{
	struct kimg_require_facts f;
	memset(&f, 0, sizeof f);
	f.cuda_version = t->dev.driver_version;
	kimg_arch_format_cc(t->dev.cc, f.arch, sizeof f.arch);
	return kimg_require_judge(expr, &f, v, err);
}

static const char *tri_name(enum kimg_tri t, bool no_driver)
{
	if (t == KIMG_TRI_YES)
		return "satisfied";
	if (t == KIMG_TRI_NO)
		return "refused";
	return no_driver ? "not_judged" : "unknown";
}

#define REQ_MAX 16

void probe_image_place(const struct probe_image_info *img, const struct probe_target *t, int n_targets,
		       struct probe_place_row *rows)
{
	const char *names[REQ_MAX], *exprs[REQ_MAX];
	char legacy[32];
	unsigned n = probe_image_requirements(img, names, exprs, legacy, REQ_MAX);
	for (unsigned r = 0; r < n; r++)
		for (int k = 0; k < n_targets; k++) {
			struct kimg_require_verdict v;
			struct kimg_error err = { 0, 0, "" };
			int rc = judge_on(exprs[r], &t[k], &v, &err);
			if (rc == 0 && v.satisfied != KIMG_TRI_NO)
				continue;
			/* the container never starts there: nothing in it runs */
			if (rows[k].fails++ == 0 && !rows[k].fix[0])
				snprintf(rows[k].fix, sizeof rows[k].fix,
					 "a driver that the image's requirement accepts, %s%s (the NVIDIA container toolkit refuses "
					 "to start it there: %s%s)",
					 exprs[r] == legacy ? "legacy image, " : "", exprs[r] == legacy ? legacy : names[r],
					 rc < 0 ? "the expression is invalid" : v.decided_by, rc < 0 ? "" : " is false");
		}
}

unsigned long probe_image_text_facts(FILE *out, const struct probe_image_info *img, const struct probe_target *t,
				     int n_targets)
{
	struct probe_esc e, e2;
	unsigned long refused = 0;
	unsigned read = 0;
	for (unsigned i = 0; i < img->n_layers; i++)
		read += img->layers[i].read;
	fprintf(out, "%s: container image (%s%s%s), %u layer%s", probe_esc(&e, img->name), img->format,
		img->platform[0] ? ", " : "", img->platform, img->n_layers, img->n_layers == 1 ? "" : "s");
	if (read != img->n_layers)
		fprintf(out, " (%u not read)", img->n_layers - read);
	fputc('\n', out);
	if (img->ref[0])
		fprintf(out, "  ref: %s\n", probe_esc(&e, img->ref));
	for (unsigned i = 0; i < img->n_env; i++)
		if (probe_image_env_is_fact(img->env[i]))
			fprintf(out, "  env: %s\n", probe_esc(&e, img->env[i]));
	/* the switches its files are judged with (core/jit_env.h) */
	static const char *const jit_effect[KIMG_JIT_SWITCH_COUNT] = {
		[KIMG_JIT_FORCE_PTX] = "cubins ignored, PTX compiled by the driver's JIT: the image's modules are judged so [P6]",
		[KIMG_JIT_DISABLE_PTX] = "no PTX JIT: only cubins load; the image's modules are judged so [P6]",
	};
	for (unsigned s = 0; s < KIMG_JIT_SWITCH_COUNT; s++)
		if (img->jit.on[s])
			fprintf(out, "  JIT: %s: %s\n", probe_esc(&e, img->jit.set_by[s]), jit_effect[s]);
	const char *names[REQ_MAX], *exprs[REQ_MAX];
	char legacy[32];
	unsigned n = probe_image_requirements(img, names, exprs, legacy, REQ_MAX);
	for (unsigned r = 0; r < n && t; r++) {
		fprintf(out, "  requirement (NVIDIA container toolkit): %s%s\n", exprs[r] == legacy ? "legacy image, " : "",
			probe_esc(&e, exprs[r] == legacy ? legacy : names[r]));
		for (int k = 0; k < n_targets; k++) {
			struct kimg_require_verdict v;
			struct kimg_error err = { 0, 0, "" };
			char cc[16], drv[16] = "";
			kimg_arch_format_cc(t[k].dev.cc, cc, sizeof cc);
			probe_format_cuda_version(t[k].dev.driver_version, drv, sizeof drv);
			int rc = judge_on(exprs[r], &t[k], &v, &err);
			bool no_driver = !t[k].dev.driver_version;
			fprintf(out, "    %s%s%s%s: ", cc, drv[0] ? " (driver CUDA " : "", drv, drv[0] ? ")" : "");
			if (rc < 0) {
				fprintf(out, "refused: the toolkit rejects the expression (%s)\n", probe_esc(&e, err.what));
				refused++;
			} else if (v.satisfied == KIMG_TRI_YES) {
				fprintf(out, "satisfied\n");
			} else if (v.satisfied == KIMG_TRI_NO) {
				fprintf(out, "refused: the container will not start (%s is false%s)\n", probe_esc(&e, v.decided_by),
					strchr(exprs[r], ' ') ? ", and so is every other alternative" : "");
				refused++;
			} else if (no_driver) {
				fprintf(out, "not judged: no driver known for this target (give --driver X.Y, or --sm native)\n");
			} else {
				fprintf(out, "unknown: depends on %s, which kimg does not know for this target\n",
					probe_esc(&e2, v.decided_by));
			}
		}
	}
	for (unsigned r = 0; r < n && !t; r++)
		fprintf(out, "  requirement (NVIDIA container toolkit): %s\n", probe_esc(&e, exprs[r] == legacy ? legacy : names[r]));
	for (unsigned c = 0; c < img->n_compat; c++) {
		const struct probe_image_compat *cl = &img->compat[c];
		char cv[16] = "";
		probe_format_cuda_version(cl->lib.cuda_version, cv, sizeof cv);
		fprintf(out, "  cuda-compat: %s (driver %s, CUDA %s)\n", probe_esc(&e, cl->path), cl->lib.driver, cv[0] ? cv : "?");
		for (int k = 0; t && k < n_targets; k++) {
			char cc[16], drv[16] = "";
			kimg_arch_format_cc(t[k].dev.cc, cc, sizeof cc);
			probe_format_cuda_version(t[k].dev.driver_version, drv, sizeof drv);
			fprintf(out, "    %s%s%s%s: ", cc, drv[0] ? " (driver CUDA " : "", drv, drv[0] ? ")" : "");
			switch (kimg_compat_judge(&cl->lib, t[k].dev.driver_version)) {
			case KIMG_COMPAT_FORWARD:
				fprintf(out, "forward compatibility: CUDA %s on data-center GPUs once loaded (LD_LIBRARY_PATH or the "
					"toolkit's compat mount); elsewhere cuInit fails with 804\n", cv);
				break;
			case KIMG_COMPAT_NOT_NEEDED:
				fprintf(out, "not needed: the driver has the same CUDA version\n");
				break;
			case KIMG_COMPAT_OLDER:
				fprintf(out, "older than the driver: the toolkit leaves it out; loaded through LD_LIBRARY_PATH, "
					"cuInit fails with 803\n");
				break;
			default:
				fprintf(out, "not judged: no driver known for this target\n");
			}
		}
	}
	return refused;
}

unsigned long probe_image_json_facts(struct kimg_json *j, const struct probe_image_info *img,
				     const struct probe_target *t, int n_targets)
{
	unsigned long refused = 0;
	kimg_json_begin_object(j);
	kimg_json_kv_string(j, "path", img->name);
	kimg_json_kv_string(j, "kind", "container_image");
	kimg_json_kv_string(j, "error", NULL);
	kimg_json_key(j, "modules");
	kimg_json_begin_array(j);
	kimg_json_end_array(j);
	kimg_json_key(j, "container_image");
	kimg_json_begin_object(j);
	kimg_json_kv_string(j, "input", img->input);
	kimg_json_kv_string(j, "format", img->format);
	kimg_json_kv_string(j, "platform", img->platform[0] ? img->platform : NULL);
	kimg_json_kv_string(j, "ref", img->ref[0] ? img->ref : NULL);
	kimg_json_kv_string(j, "config_digest", img->config_digest[0] ? img->config_digest : NULL);
	kimg_json_key(j, "layers");
	kimg_json_begin_array(j);
	for (unsigned i = 0; i < img->n_layers; i++) {
		const struct probe_image_layer_info *l = &img->layers[i];
		kimg_json_begin_object(j);
		kimg_json_kv_uint(j, "index", i + 1);
		kimg_json_kv_string(j, "digest", l->digest[0] ? l->digest : NULL);
		kimg_json_kv_string(j, "media_type", l->media_type[0] ? l->media_type : NULL);
		kimg_json_kv_uint(j, "size", l->size);
		kimg_json_kv_string(j, "created_by", l->created_by[0] ? l->created_by : NULL);
		kimg_json_kv_bool(j, "read", l->read);
		kimg_json_end_object(j);
	}
	kimg_json_end_array(j);
	kimg_json_key(j, "env");
	kimg_json_begin_object(j);
	for (unsigned i = 0; i < img->n_env; i++) {
		if (!probe_image_env_is_fact(img->env[i]))
			continue;
		const char *eq = strchr(img->env[i], '=');
		char name[128];
		snprintf(name, sizeof name, "%.*s", (int)(eq ? eq - img->env[i] : 0), img->env[i]);
		if (eq && probe_image_env(img, name) == eq + 1)
			kimg_json_kv_string(j, name, eq + 1);
	}
	kimg_json_end_object(j);
	const char *names[REQ_MAX], *exprs[REQ_MAX];
	char legacy[32];
	unsigned n = probe_image_requirements(img, names, exprs, legacy, REQ_MAX);
	kimg_json_key(j, "requirements");
	kimg_json_begin_array(j);
	for (unsigned r = 0; r < n; r++) {
		kimg_json_begin_object(j);
		char var[96];
		const char *eq = strchr(names[r], '=');
		snprintf(var, sizeof var, "%.*s", (int)(eq ? eq - names[r] : (long)strlen(names[r])), names[r]);
		kimg_json_kv_string(j, "variable", var);
		kimg_json_kv_string(j, "expression", exprs[r]);
		kimg_json_kv_bool(j, "legacy", exprs[r] == legacy);
		kimg_json_key(j, "verdicts");
		kimg_json_begin_array(j);
		for (int k = 0; t && k < n_targets; k++) {
			struct kimg_require_verdict v;
			struct kimg_error err = { 0, 0, "" };
			char cc[16];
			kimg_arch_format_cc(t[k].dev.cc, cc, sizeof cc);
			int rc = judge_on(exprs[r], &t[k], &v, &err);
			kimg_json_begin_object(j);
			kimg_json_kv_string(j, "sm", cc);
			kimg_json_kv_string(j, "verdict", rc < 0 ? "invalid" : tri_name(v.satisfied, !t[k].dev.driver_version));
			kimg_json_kv_string(j, "decided_by", rc < 0 ? err.what : v.decided_by[0] ? v.decided_by : NULL);
			kimg_json_end_object(j);
			refused += rc < 0 || v.satisfied == KIMG_TRI_NO;
		}
		kimg_json_end_array(j);
		kimg_json_end_object(j);
	}
	kimg_json_end_array(j);
	kimg_json_key(j, "cuda_compat");
	kimg_json_begin_array(j);
	for (unsigned c = 0; c < img->n_compat; c++) {
		const struct probe_image_compat *cl = &img->compat[c];
		char cv[16] = "";
		probe_format_cuda_version(cl->lib.cuda_version, cv, sizeof cv);
		kimg_json_begin_object(j);
		kimg_json_kv_string(j, "path", cl->path);
		kimg_json_kv_string(j, "driver", cl->lib.driver);
		kimg_json_kv_string(j, "cuda_version", cv[0] ? cv : NULL);
		kimg_json_key(j, "verdicts");
		kimg_json_begin_array(j);
		for (int k = 0; t && k < n_targets; k++) {
			char cc[16];
			kimg_arch_format_cc(t[k].dev.cc, cc, sizeof cc);
			kimg_json_begin_object(j);
			kimg_json_kv_string(j, "sm", cc);
			kimg_json_kv_string(j, "outcome", kimg_compat_outcome_name(kimg_compat_judge(&cl->lib, t[k].dev.driver_version)));
			kimg_json_end_object(j);
		}
		kimg_json_end_array(j);
		kimg_json_end_object(j);
	}
	kimg_json_end_array(j);
	kimg_json_end_object(j);
	kimg_json_end_object(j);
	return refused;
}
