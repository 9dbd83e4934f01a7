/* SPDX-License-Identifier: Apache-2.0 */
/* One image as JSON, shared by scan and check (docs/json-probe.md). */
#include "probe.h"

static int json_kernel(void *ctx, const char *name, size_t len)
{
	kimg_json_string_n(ctx, name, len);
	return 0;
}

void probe_json_image(struct kimg_json *j, const struct kimg_image *img, bool kernels)
{
	kimg_report_json_image_begin(j, img); /* kind, arch, ptx_isa */
	kimg_json_kvl_string(j, KIMG_JSON_LIT("compressed"), kimg_compression_name(img->compression));
	kimg_json_kvl_uint(j, KIMG_JSON_LIT("size"), img->size);
	kimg_json_kvl_uint(j, KIMG_JSON_LIT("stored_size"), img->stored_size);
	kimg_json_kvl_uint(j, KIMG_JSON_LIT("offset"), img->offset);
	kimg_json_kvl_uint(j, KIMG_JSON_LIT("flags"), img->flags);
	if (img->identifier.size) {
		/* NUL-padded in the entry tail: stop at the first NUL. */
		size_t n = 0;
		while (n < img->identifier.size && img->identifier.data[n])
			n++;
		kimg_json_key(j, "identifier");
		kimg_json_string_n(j, (const char *)img->identifier.data, n);
	} else {
		kimg_json_kvl_string(j, KIMG_JSON_LIT("identifier"), NULL);
	}
	if (kernels) {
		struct kimg_error err = { 0, 0, "" };
		kimg_json_key(j, "kernels");
		kimg_json_begin_array(j);
		int rc = probe_image_kernels(img, json_kernel, j, &err);
		kimg_json_end_array(j);
		if (rc < 0)
			kimg_json_kv_string(j, "kernels_error", err.what[0] ? err.what : kimg_strerror(rc));
	}
	kimg_json_end_object(j);
}
