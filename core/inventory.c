/* SPDX-License-Identifier: Apache-2.0 */
/* GPU inventory documents (inventory.h). */
#include "inventory.h"

#include <stdio.h>
#include <string.h>

#include "arch.h"
#include "gpus.h"
#include "cuda_versions.h"
#include "json_read.h"

bool kimg_inventory_is_document(const struct kimg_jval *root)
{
	const struct kimg_jval *devs = kimg_jval_get(root, "devices");
	const struct kimg_jval *drv = kimg_jval_get(root, "driver");
	return devs && devs->type == KIMG_JARRAY && drv && drv->type == KIMG_JOBJECT;
}

static void copy(char *dst, size_t size, const char *src)
{
	snprintf(dst, size, "%s", src ? src : "");
}

int kimg_inventory_parse(struct kimg_span line, void *arena, size_t arena_size,
			 int (*fn)(void *ctx, const char *host, const struct kimg_inventory_gpu *gpu), void *ctx,
			 struct kimg_error *err)
{
	struct kimg_jdoc doc;
	kimg_jdoc_init(&doc, arena, arena_size);
	int rc = kimg_jdoc_parse(&doc, line, err);
	if (rc < 0)
		return rc;
	if (!kimg_inventory_is_document(doc.root))
		return kimg_error_set(err, -KIMG_EFORMAT, 0, "not a 'kimg-probe device --json' document (no \"devices\")");
	const char *host = kimg_jval_string(kimg_jval_get(doc.root, "host"));
	const struct kimg_jval *drv = kimg_jval_get(doc.root, "driver");
	int count = 0;
	for (const struct kimg_jval *d = kimg_jval_get(doc.root, "devices")->child; d; d = d->next) {
		struct kimg_inventory_gpu g;
		struct kimg_arch cc;
		memset(&g, 0, sizeof g);
		/* as --sm takes them (probe/targets.c): a compute capability
		 * some NVIDIA GPU has; "860" would be 86.0, a typo of 8.6 */
		const struct kimg_jval *ccv = kimg_jval_get(d, "cc");
		const char *ccs = kimg_jval_string(ccv);
		if (!ccv || ccv->type == KIMG_JNULL)
			continue; /* a device the driver could not describe */
		if (!ccs || kimg_arch_parse(ccs, &cc, NULL) != 0 || cc.sm < 10 || !kimg_cc_is_known(cc.sm))
			return kimg_error_set(err, -KIMG_EFORMAT, d->offset,
					      "device %d: \"cc\" %.32s%s%s is not the compute capability of an NVIDIA GPU "
					      "(X.Y, as --sm takes it)",
					      count, ccs ? "\"" : "", ccs ? ccs : "(not a string)", ccs ? "\"" : "");
		g.sm = cc.sm;
		const struct kimg_jval *t = kimg_jval_get(d, "tegra");
		g.tegra = t && t->type == KIMG_JTRUE;
		copy(g.name, sizeof g.name, kimg_jval_string(kimg_jval_get(d, "name")));
		const char *field = "cuda_driver";
		const struct kimg_jval *cv = kimg_jval_get(d, field);
		if (!cv || cv->type == KIMG_JNULL) {
			field = "driver.cuda_version";
			cv = kimg_jval_get(drv, "cuda_version");
		}
		int v = 0;
		/* absent or null: unknown; anything else must read as --driver
		 * X.Y does, not become "CUDA ?" and lose the PTX limit */
		if (cv && cv->type != KIMG_JNULL &&
		    (v = kimg_cuda_version_parse(kimg_jval_string(cv))) < 0)
			return kimg_error_set(err, -KIMG_EFORMAT, cv->offset,
					      "device %d: \"%s\" %.32s is not a CUDA version X.Y (as --driver takes it)",
					      count, field, kimg_jval_string(cv) ? kimg_jval_string(cv) : "(not a string)");
		g.driver_version = v > 0 ? v : 0;
		const char *rel = kimg_jval_string(kimg_jval_get(d, "driver"));
		copy(g.release, sizeof g.release, rel ? rel : kimg_jval_string(kimg_jval_get(drv, "release")));
		copy(g.uuid, sizeof g.uuid, kimg_jval_string(kimg_jval_get(d, "uuid")));
		if ((rc = fn(ctx, host ? host : "", &g)) != 0)
			return rc;
		count++;
	}
	return count;
}
