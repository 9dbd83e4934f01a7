/* SPDX-License-Identifier: Apache-2.0 */
/* The file and module objects of scan and check JSON (docs/json-probe.md): both
 * commands list the same keys in the same order, so the shared part of
 * each object is written here once; each command adds its own keys
 * (check: "link_stub", "verdicts") before closing the module object. */
#include "image.h"
#include "probe.h"

void probe_json_file_begin(struct kimg_json *j, const struct probe_file *pf)
{
	kimg_json_begin_object(j);
	kimg_json_kv_string(j, "path", pf->path);
	kimg_json_kv_string(j, "kind", kimg_input_kind_name(pf->kind));
	kimg_json_kv_uint(j, "size", pf->bytes.size);
	kimg_json_kv_string(j, "error", pf->error[0] ? pf->error : NULL);
	probe_image_json_origin(j, pf->path); /* files inside a container image only */
	kimg_json_key(j, "modules");
	kimg_json_begin_array(j);
}

void probe_json_file_end(struct kimg_json *j)
{
	kimg_json_end_array(j);
	kimg_json_end_object(j);
}

void probe_json_unreadable_file(struct kimg_json *j, const char *path, const char *problem)
{
	/* No "size": nothing was read. "kind" null: not classified. */
	kimg_json_begin_object(j);
	kimg_json_kv_string(j, "path", path);
	kimg_json_kv_string(j, "kind", NULL);
	kimg_json_kv_string(j, "error", problem);
	kimg_json_key(j, "modules");
	kimg_json_begin_array(j);
	probe_json_file_end(j);
}

/* Keys as literals (KIMG_JSON_LIT): a large library has thousands of modules. */
void probe_json_module_begin(struct kimg_json *j, const struct probe_module *m)
{
	kimg_json_begin_object(j);
	kimg_json_kvl_uint(j, KIMG_JSON_LIT("offset"), m->offset);
	kimg_json_kvl_uint(j, KIMG_JSON_LIT("size"), m->size);
	kimg_json_kvl_string(j, KIMG_JSON_LIT("kind"), kimg_input_kind_name(m->kind));
	kimg_json_kvl_string(j, KIMG_JSON_LIT("origin"), kimg_module_origin_name(m->origin));
	kimg_json_kvl_string(j, KIMG_JSON_LIT("section"), m->section);
	kimg_json_kvl_string(j, KIMG_JSON_LIT("member"), m->member);
	kimg_json_kvl_string(j, KIMG_JSON_LIT("error"), m->error);
}
