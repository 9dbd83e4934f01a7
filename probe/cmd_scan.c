/* SPDX-License-Identifier: Apache-2.0 */
/* kimg-probe scan: every module and image in files, directories, wheels. */
#include <stdlib.h>
#include <string.h>

#include "image.h"
#include "probe.h"

static const char scan_help[] =
	"usage: kimg-probe scan [--json] [--kernels] [--deep] [--all] [--every-file] [--platform P] [-j N] PATH...\n"
	"\n"
	"List the device code in each PATH: every module (fatbin container, or a\n"
	"raw cubin / PTX file) with its images: kind (sass, ptx, ltoir), target\n"
	"(sm_90a, compute_100f, lto_90), PTX ISA version, compression and size.\n"
	"Reads host ELF files (executables, .so, .o), static archives, raw\n"
	"fatbin/cubin/PTX files; directories are searched recursively (symlinked\n"
	"directories are not followed; pipes and devices inside them are skipped);\n"
	"archives are read in place (members shown as wheel.whl!/torch/lib/libx.so):\n"
	"zips (.whl, .egg, .zip) with zlib, conda packages (.conda, .tar.bz2) and\n"
	"tarballs with libarchive, archives inside archives 4 levels deep. In\n"
	"directories, wheels and conda packages are opened, other zips only for\n"
	"members named like code (*.so*, *.a, *.o, *.cubin, *.fatbin, *.ptx,\n"
	"archives), numpy .npz files never. Inside directories and archives, files\n"
	"that hold no ELF, archive, fatbin, cubin or PTX are skipped silently, and\n"
	"so are 32-bit and big-endian ELF files; in directories, files named as\n"
	"source or docs are not opened at all (--every-file). GNU thin archives (ar rcT) are read\n"
	"from the files they name. Only headers are read: payloads stay untouched\n"
	"unless --kernels is given; holes of sparse files are skipped.\n"
	"Container images (docker/podman save tarballs, OCI image layouts as a\n"
	"directory or a tar; layers plain, gzip or zstd) are read as the final\n"
	"file system of their layers (whiteouts honoured, nothing extracted), files\n"
	"named IMAGE:/path/in/image with the layer that added them, after the\n"
	"image's CUDA settings (docs/deploy.md).\n"
	"\n"
	"  --json      one JSON document on stdout (docs/json-probe.md); every\n"
	"              entry as found, nothing merged\n"
	"  --kernels   add the kernel names of each image (decompresses payloads,\n"
	"              at most 1024x their stored size and $KIMG_PAYLOAD_LIMIT,\n"
	"              default 1G; names are mangled)\n"
	"  --deep      also search loaded data sections (.rodata, ...) for device\n"
	"              code stored as plain data and loaded at run time with\n"
	"              cuModuleLoadData (origin \"scan\"); reads those sections\n"
	"              whole. Without it, the modules are those that cuobjdump\n"
	"              --list-elf --list-ptx lists\n"
	"  --all       also list the relocatable device code (__nv_relfatbin) of\n"
	"              executables and shared objects linked with -rdc=true: the\n"
	"              inputs of their device link, which the driver never loads\n"
	"              on their own (cuobjdump -all). Static archives and .o files\n"
	"              always list it: there it is what you link\n"
	"  --platform P  of an image index, read only platform P (linux/arm64);\n"
	"              default: each platform on its own\n"
	"  --every-file  in directories, also open files named as Python, C/C++\n"
	"              source or docs (*.py, *.pyc, *.pyi, *.pyx, *.pxd, *.pxi, *.h,\n"
	"              *.hh, *.hpp, *.hxx, *.cuh, *.inl, *.c, *.cc, *.cpp, *.cxx,\n"
	"              *.rst, *.md, *.cmake), which are left unopened by default\n"
	"  -j N        read N files at a time (--jobs=N; default $KIMG_JOBS, else\n"
	"              the cores, at most 8); the output is the -j 1\n"
	"              output\n"
	"\n"
	"Text output folds identical images of one module into one line with a\n"
	"count (xN), and ends with a summary line.\n"
	"\n"
	"Exit status: 0 when every input was read; 2 when any input could not be\n"
	"read or parsed (missing, unreadable, truncated, not an ELF ...): each such\n"
	"problem is one line 'kimg-probe: PATH: problem' on stderr and the scan goes\n"
	"on with the next input (also for a file that changes while it is read);\n"
	"names from inputs are escaped (\\xNN for control bytes). Exit 2 as well\n"
	"when the output cannot be written. Archives a missing library kept from\n"
	"being read are named in one line per library. $KIMG_ZLIB and\n"
	"$KIMG_LIBARCHIVE name other libraries to load; $KIMG_ZIP_MAX_MEMBER\n"
	"(default 4G) and $KIMG_ZIP_MAX_RATIO (default 200, zip only) bound what an\n"
	"archive member may take.\n";

struct scan_state {
	struct probe_out out;            /* first: probe_input_unreadable's ctx */
	bool kernels;
	unsigned long files, modules, images, hidden_link_inputs;
	unsigned long by_kind[KIMG_IMAGE_KIND_COUNT];
};

struct text_kernels {
	FILE *f;
	unsigned count;
};

static int text_kernel(void *ctx, const char *name, size_t len)
{
	struct text_kernels *t = ctx;
	char raw[4096];
	struct probe_esc e;
	snprintf(raw, sizeof raw, "%.*s", (int)len, name);
	fprintf(t->f, "%s%s", t->count++ ? ", " : "        kernels: ", probe_esc(&e, raw));
	return 0;
}

static bool same_image(const struct kimg_image *a, const struct kimg_image *b)
{
	return a->kind == b->kind && a->arch.sm == b->arch.sm && a->arch.variant == b->arch.variant &&
	       a->ptx_isa == b->ptx_isa && a->compression == b->compression && a->size == b->size;
}

static void text_image(struct scan_state *s, const struct kimg_image *img, unsigned count)
{
	char arch[32], isa[16], times[16] = "";
	kimg_image_arch_name(img, arch, sizeof arch);
	kimg_report_format_isa(img->ptx_isa, isa, sizeof isa);
	const char *comp = kimg_compression_name(img->compression);
	if (count > 1)
		snprintf(times, sizeof times, "  x%u", count);
	fprintf(s->out.f, "    %-6s %-14s %-5s %-7s %10llu%s\n", kimg_image_kind_name(img->kind), arch,
	       img->kind == KIMG_IMAGE_PTX && isa[0] ? isa : "-", comp ? comp : "-",
	       (unsigned long long)img->size, times);
	if (s->kernels) {
		struct text_kernels t = { s->out.f, 0 };
		struct kimg_error err = { 0, 0, "" };
		struct probe_esc e;
		int rc = probe_image_kernels(img, text_kernel, &t, &err);
		if (rc < 0)
			fprintf(s->out.f, "%s(kernels unreadable: %s)", t.count ? " " : "        ",
			       probe_esc(&e, err.what[0] ? err.what : kimg_strerror(rc)));
		if (t.count || rc < 0)
			fputc('\n', s->out.f);
	}
}

static void text_module(struct scan_state *s, size_t index, const struct probe_module *m)
{
	char place[256];
	probe_format_module_place(m, place, sizeof place);
	struct probe_esc e;
	fprintf(s->out.f, "  module %zu %s: %s, %zu image%s\n", index + 1, probe_esc(&e, place), kimg_input_kind_name(m->kind), m->n_imgs,
	       m->n_imgs == 1 ? "" : "s");
	bool *shown = calloc(m->n_imgs ? m->n_imgs : 1, sizeof *shown);
	for (size_t i = 0; i < m->n_imgs; i++) {
		if (shown && shown[i])
			continue;
		unsigned count = 1;
		/* Fold later identical entries (a linked program can hold two
		 * cubins per gencode, docs/format.md section 8) unless kernel
		 * names were asked for: those are listed per entry. */
		for (size_t k = i + 1; shown && !s->kernels && k < m->n_imgs; k++)
			if (!shown[k] && same_image(&m->imgs[i], &m->imgs[k])) {
				shown[k] = true;
				count++;
			}
		text_image(s, &m->imgs[i], count);
	}
	free(shown);
	if (m->error)
		fprintf(s->out.f, "    error: %s\n", probe_esc(&e, m->error));
}

static void count_file(struct scan_state *s, const struct probe_file *pf)
{
	s->files++;
	s->modules += pf->n_mods;
	for (size_t i = 0; i < pf->n_mods; i++)
		for (size_t k = 0; k < pf->mods[i].n_imgs; k++) {
			s->images++;
			unsigned kind = pf->mods[i].imgs[k].kind;
			if (kind < KIMG_IMAGE_KIND_COUNT)
				s->by_kind[kind]++;
		}
}

static void scan_input(void *ctx, const char *path, struct kimg_span bytes, bool explicit_path)
{
	struct scan_state *s = ctx;
	struct probe_file pf = { .path = path, .walk_flags = s->out.walk_flags, .bytes = bytes };
	probe_collect(&pf);
	if (!s->out.all_modules) {
		s->hidden_link_inputs += pf.n_link_inputs;
		probe_drop_link_inputs(&pf);
	}
	s->out.errors += probe_report_problems(&pf);
	count_file(s, &pf);
	if (s->out.json) {
		struct kimg_json *j = &s->out.j;
		probe_json_file_begin(j, &pf);
		for (size_t i = 0; i < pf.n_mods; i++) {
			const struct probe_module *m = &pf.mods[i];
			probe_json_module_begin(j, m);
			kimg_json_key(j, "images");
			kimg_json_begin_array(j);
			for (size_t k = 0; k < m->n_imgs; k++)
				probe_json_image(j, &m->imgs[k], s->kernels);
			kimg_json_end_array(j);
			kimg_json_end_object(j);
		}
		probe_json_file_end(j);
	} else if (pf.n_mods > 0 || explicit_path) {
		struct probe_esc e;
		fprintf(s->out.f, "%s: %s, %zu module%s%s\n", probe_esc(&e, path), kimg_input_kind_name(pf.kind), pf.n_mods,
		       pf.n_mods == 1 ? "" : "s", pf.n_mods == 0 && !pf.error[0] ? " (no device code)" : "");
		probe_image_text_origin(s->out.f, path);
		/* One column header per file: the image rows of every module below line up with it. */
		if (pf.n_mods > 0)
			fprintf(s->out.f, "    %-6s %-14s %-5s %-7s %10s\n", "kind", "arch", "ptx", "packed", "bytes");
		for (size_t i = 0; i < pf.n_mods; i++)
			text_module(s, i, &pf.mods[i]);
		if (pf.error[0])
			fprintf(s->out.f, "  error: %s\n", probe_esc(&e, pf.error));
	}
	probe_file_free(&pf);
}

/* probe_walker.on_image: the image's block (docs/deploy.md). */
static void scan_image(void *ctx, const struct probe_image_info *img)
{
	struct scan_state *s = ctx;
	if (s->out.json)
		probe_image_json_facts(&s->out.j, img, NULL, 0);
	else
		probe_image_text_facts(s->out.f, img, NULL, 0);
}

/* A worker's copy of the state for one input (probe_walker.job_begin). */
static struct probe_out *scan_job_begin(void *ctx)
{
	const struct scan_state *s = ctx;
	struct scan_state *c = malloc(sizeof *c);
	if (!c)
		return NULL;
	*c = *s;
	c->files = c->modules = c->images = c->hidden_link_inputs = 0;
	memset(c->by_kind, 0, sizeof c->by_kind);
	return &c->out;
}

static void scan_job_end(void *ctx, struct probe_out *job)
{
	struct scan_state *s = ctx, *c = (struct scan_state *)job;
	s->files += c->files;
	s->modules += c->modules;
	s->images += c->images;
	s->hidden_link_inputs += c->hidden_link_inputs;
	for (int i = 0; i < KIMG_IMAGE_KIND_COUNT; i++)
		s->by_kind[i] += c->by_kind[i];
	free(c);
}

int probe_cmd_scan(int argc, char **argv)
{
	struct scan_state s;
	struct probe_args args;
	int status = PROBE_EXIT_ERROR;
	memset(&s, 0, sizeof s);
	if (probe_args_init(&args, "scan", argc, &s.out) < 0)
		return PROBE_EXIT_ERROR;
	for (int i = 1; i < argc; i++) {
		enum probe_arg taken = probe_args_take(&args, argv[i]);
		if (taken == PROBE_ARG_BAD) {
			goto out;
		} else if (taken == PROBE_ARG_HELP) {
			fputs(scan_help, stdout);
			status = PROBE_EXIT_OK;
			goto out;
		} else if (taken == PROBE_ARG_OTHER && strcmp(argv[i], "--kernels") == 0) {
			s.kernels = true;
			s.out.reads_payloads = true;
		} else if (taken == PROBE_ARG_OTHER) {
			probe_usage_error(&args, true, "unknown option '%s'", argv[i]);
			goto out;
		}
	}
	if (probe_args_done(&args) != 0)
		goto out;
	if (args.n_paths == 0) {
		probe_usage_error(&args, true, "no PATH given");
		goto out;
	}
	struct kimg_json *j = &s.out.j;
	struct probe_walker w = { .ctx = &s, .out = &s.out, .on_input = scan_input, .on_error = probe_input_unreadable,
				  .on_image = scan_image, .job_begin = scan_job_begin, .job_end = scan_job_end,
				  .unread_each = true };
	/* The document gathered 64 KiB at a time (kimg_json_set_buffer):
	 * a stdio call per token was a fifth of a large library's scan. */
	static char json_buf[1 << 16];
	if (s.out.json) {
		kimg_json_init(j, stdout);
		kimg_json_set_buffer(j, json_buf, sizeof json_buf);
		kimg_json_begin_document(j);
		kimg_json_key(j, "files");
		kimg_json_begin_array(j);
	}
	probe_walk(args.paths, args.n_paths, &w);
	if (s.out.json) {
		kimg_json_end_array(j);
		kimg_json_key(j, "summary");
		kimg_json_begin_object(j);
		kimg_json_kv_uint(j, "files", s.files);
		kimg_json_kv_uint(j, "modules", s.modules);
		kimg_json_kv_uint(j, "images", s.images);
		kimg_json_kv_uint(j, "sass", s.by_kind[KIMG_IMAGE_SASS]);
		kimg_json_kv_uint(j, "ptx", s.by_kind[KIMG_IMAGE_PTX]);
		kimg_json_kv_uint(j, "ltoir", s.by_kind[KIMG_IMAGE_LTOIR]);
		kimg_json_kv_uint(j, "unknown", s.by_kind[KIMG_IMAGE_UNKNOWN]);
		kimg_json_kv_uint(j, "link_inputs_not_listed", s.hidden_link_inputs);
		kimg_json_kv_uint(j, "errors", s.out.errors);
		kimg_json_end_object(j);
		kimg_json_end_object(j);
		kimg_json_set_buffer(j, NULL, 0);
		fputc('\n', stdout);
	} else {
		printf("%lu file%s, %lu module%s, %lu image%s: %lu sass, %lu ptx", s.files, s.files == 1 ? "" : "s",
		       s.modules, s.modules == 1 ? "" : "s", s.images, s.images == 1 ? "" : "s",
		       s.by_kind[KIMG_IMAGE_SASS], s.by_kind[KIMG_IMAGE_PTX]);
		if (s.by_kind[KIMG_IMAGE_LTOIR])
			printf(", %lu ltoir", s.by_kind[KIMG_IMAGE_LTOIR]);
		if (s.by_kind[KIMG_IMAGE_UNKNOWN])
			printf(", %lu unknown", s.by_kind[KIMG_IMAGE_UNKNOWN]);
		if (s.hidden_link_inputs)
			printf("; %lu -rdc device-link input%s not listed (--all lists them)", s.hidden_link_inputs,
			       s.hidden_link_inputs == 1 ? "" : "s");
		printf("; %lu error%s\n", s.out.errors, s.out.errors == 1 ? "" : "s");
	}
	/* stdout is flushed and checked by main (finish_stdout). */
	status = s.out.errors ? PROBE_EXIT_ERROR : PROBE_EXIT_OK;
out:
	probe_args_free(&args);
	return status;
}
