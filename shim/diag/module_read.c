/* SPDX-License-Identifier: Apache-2.0 */
/* The facts of a module in this process (module_read.h): its images,
 * read from the memory the program handed the driver or from the file it
 * named, for a failure's report (with a failed JIT link's inputs and log)
 * and for the load-time checks (audit.c, fallback.c).
 *
 * Never faults: memory images are bounded first (bound.h: readable
 * mappings, or the program headers of the object they lie in), and every
 * read after that goes through the core's bounded parsers. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bound.h"
#include "diag_internal.h"
#include "input.h"
#include "locate.h"
#include "module_images.h"
#include "module_read.h"

/* Trust an in-memory image's own headers no further than this. */
#define IMAGE_LIMIT ((uint64_t)4 << 30)

/* ---- a failure's module: its images, for the report ---- */

struct report_walk {
	struct kimg_report *r;
	int modules;
};

static void add_image(struct kimg_report *r, const struct kimg_image *img)
{
	if (r->image_count < KIMG_REPORT_MAX_IMAGES)
		r->images[r->image_count++] = *img;
	r->image_total++;
}

static int on_report_image(void *ctx, const struct kimg_image *img)
{
	add_image(ctx, img);
	return 0;
}

/* The first module of the input is the one loaded: an image passed to the
 * driver is one container, cubin or PTX text. */
static int on_report_module(void *ctx, const struct kimg_module_ref *m)
{
	struct report_walk *w = ctx;
	struct kimg_report *r = w->r;
	if (w->modules++ > 0)
		return 0;
	r->module_offset += m->offset;
	enum kimg_module_step step;
	struct kimg_error err = { 0 };
	static const char *const what[] = { [KIMG_MODULE_CONTAINER] = "fatbin: ", [KIMG_MODULE_ENTRY] = "",
					    [KIMG_MODULE_CUBIN] = "cubin: ", [KIMG_MODULE_PTX] = "PTX: " };
	if (kimg_module_images(m, on_report_image, r, &step, &err) < 0)
		snprintf(r->module_note, sizeof r->module_note, "%s%s", what[step], err.what);
	return 0;
}

static void read_images(struct kimg_report *r, struct kimg_span bytes)
{
	struct report_walk w = { r, 0 };
	struct kimg_error err = { 0 };
	int rc = kimg_input_for_each_module(bytes, on_report_module, &w, &err);
	if (rc < 0 || (w.modules == 0 && !r->module_note[0]))
		snprintf(r->module_note, sizeof r->module_note, "no device code found: %s",
			 err.code ? err.what : "unrecognised image");
}

void kimg_report_read_module(struct kimg_report *r, const struct kimg_located *loc)
{
	r->module_origin = loc->how;
	if (loc->image && loc->size) {
		/* the caller said how long it is (a JIT link input): read exactly that */
		if (kimg_readable_run(loc->image, loc->size) < loc->size) {
			snprintf(r->module_note, sizeof r->module_note, "input at %p (%zu bytes) is not readable", loc->image,
				 loc->size);
			return;
		}
		bool off_known = false;
		if (kimg_locate_file(loc->image, r->module_file, sizeof r->module_file, &r->module_offset, &off_known))
			r->module_offset_known = off_known;
		read_images(r, kimg_span_make(loc->image, loc->size));
		return;
	}
	if (loc->image) {
		const void *target = NULL;
		uint64_t size = 0;
		struct kimg_error err = { 0 };
		if (kimg_image_bound(loc->image, IMAGE_LIMIT, &target, &size, &err) < 0) {
			snprintf(r->module_note, sizeof r->module_note, "image at %p: %s", loc->image, err.what);
			return;
		}
		bool off_known = false;
		if (kimg_locate_file(target, r->module_file, sizeof r->module_file, &r->module_offset, &off_known))
			r->module_offset_known = off_known;
		read_images(r, kimg_span_make(target, size));
		return;
	}
	snprintf(r->module_file, sizeof r->module_file, "%s", loc->path);
	struct kimg_mapped_file file;
	struct kimg_error err = { 0 };
	if (kimg_map_path(loc->path, &file, &err) < 0) {
		snprintf(r->module_note, sizeof r->module_note, "%s", err.what);
		return;
	}
	r->module_offset_known = true;
	r->module_offset = 0;
	read_images(r, file.bytes);
	/* the images' spans point into the mapping; the renderers use only
	 * their values, so it can go now */
	for (size_t i = 0; i < r->image_count; i++) {
		r->images[i].payload = kimg_span_make(NULL, 0);
		r->images[i].identifier = kimg_span_make(NULL, 0);
		r->images[i].options = kimg_span_make(NULL, 0);
	}
	kimg_unmap_path(&file);
}

/* ---- a failed JIT link: its inputs and the driver's log ---- */

static const char *const link_types[] = { "cubin", "ptx", "fatbin", "object", "library", "nvvm" };

static const char *link_type_name(int type)
{
	return type >= 0 && (size_t)type < sizeof link_types / sizeof link_types[0] ? link_types[type] : "?";
}

static void link_input(struct kimg_report_link_input *out, const struct kimg_link_input *in)
{
	snprintf(out->name, sizeof out->name, "%s", in->name);
	out->type = link_type_name(in->type);
}

/* The driver's JIT error log, read no further than the buffer's
 * capacity, its first NUL and the readable memory. */
static void copy_jit_log(struct kimg_report *r, const char *log, size_t cap)
{
	if (!log || cap == 0)
		return;
	if (cap > sizeof r->jit_log - 1)
		cap = sizeof r->jit_log - 1;
	uint64_t run = kimg_readable_run(log, cap);
	size_t n = strnlen(log, (size_t)run);
	while (n > 0 && (log[n - 1] == '\n' || log[n - 1] == ' '))
		n--;
	memcpy(r->jit_log, log, n);
	r->jit_log[n] = '\0';
}

void kimg_report_read_link(struct kimg_report *r, const struct kimg_link_facts *lf)
{
	copy_jit_log(r, lf->log, lf->log_size);
	if (!lf->inputs)
		return; /* cuModuleLoadDataEx: only the log */
	struct kimg_report_link *l = &r->link;
	l->present = true;
	l->at_complete = lf->refused >= lf->n_inputs;
	if (!l->at_complete)
		link_input(&l->input, &lf->inputs[lf->refused]);
	for (size_t i = 0; i < lf->n_inputs && l->input_count < KIMG_REPORT_MAX_LINK_INPUTS; i++)
		link_input(&l->inputs[l->input_count++], &lf->inputs[i]);
	l->inputs_dropped = lf->dropped;
}

/* ---- a module about to be loaded (audit.c, fallback.c) ---- */

struct walk {
	struct kimg_load_module *m;
	int modules;
	int rc;
	struct kimg_error *err;
};

/* Keep the image; a module with more than KIMG_LOAD_MAX_IMAGES is
 * refused once the table is full. */
static int on_image(void *ctx, const struct kimg_image *img)
{
	struct walk *w = ctx;
	w->m->imgs[w->m->n++] = *img;
	if (w->m->n == KIMG_LOAD_MAX_IMAGES)
		return kimg_error_set(w->err, -KIMG_ELIMIT, img->offset, "more than %d images", KIMG_LOAD_MAX_IMAGES);
	return 0;
}

/* The first module of the input is the one loaded (as for a report, above). */
static int on_module(void *ctx, const struct kimg_module_ref *ref)
{
	struct walk *w = ctx;
	if (w->modules++ > 0)
		return 1;
	int rc = kimg_module_images(ref, on_image, w, NULL, w->err);
	w->rc = rc < 0 ? rc : 0;
	return 1;
}

int kimg_load_module_read(struct kimg_load_module *m, const char *call, const void *image, const char *path)
{
	struct kimg_error err = { 0 };
	struct kimg_span bytes;
	m->call = call;
	m->image = image;
	m->path = path;
	m->n = 0;
	memset(&m->file, 0, sizeof m->file);
	if (image) {
		const void *target;
		uint64_t size;
		int rc = kimg_loaded_image_bound(image, IMAGE_LIMIT, &target, &size, &err);
		if (rc < 0)
			return rc;
		bytes = kimg_span_make(target, size);
	} else if (path) {
		int rc = kimg_map_path(path, &m->file, &err);
		if (rc < 0)
			return rc;
		bytes = m->file.bytes;
	} else {
		return -EINVAL;
	}
	struct walk w = { m, 0, 0, &err };
	int rc = kimg_input_for_each_module(bytes, on_module, &w, &err);
	if (rc < 0 && w.modules == 0)
		return rc;
	if (w.modules == 0)
		return -KIMG_EUNKNOWN;
	return w.rc;
}

void kimg_load_module_close(struct kimg_load_module *m)
{
	kimg_unmap_path(&m->file);
}
