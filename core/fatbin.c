/* SPDX-License-Identifier: Apache-2.0 */
/* Fatbin container and entry parser.
 * Layout: docs/format.md §4 (container), §5 (entry),
 * §6 (compression), §7 (flags), §9 (walking rules). Every read goes through
 * core/span.h; nothing is allocated, so the shim may call this on its cold
 * path inside a failing CUDA call. */
#include "fatbin.h"

#define FATBIN_OLD_MAGIC 0x1EE55A01u /* pre-CUDA-4.0 format, §4 */
#define FATBIN_VERSION 1u
#define ENTRY_FORMAT_VERSION 0x0101u

/* Entry header fields, offsets from the entry start (§5). */
enum {
	EH_KIND = 0x00,
	EH_FORMAT = 0x02,
	EH_HEADER_SIZE = 0x04,
	EH_SIZE = 0x08,
	EH_COMPRESSED_SIZE = 0x10,
	EH_OPTIONS_OFFSET = 0x14,
	EH_MINOR = 0x18,
	EH_MAJOR = 0x1A,
	EH_ARCH = 0x1C,
	EH_IDENT_OFFSET = 0x20,
	EH_IDENT_LEN = 0x24,
	EH_FLAGS = 0x28,
	EH_UNCOMPRESSED_SIZE = 0x38,
};

/* Entry kinds (§5, NVIDIA fatbinary.h). Kind 4 (pre-ELF cubin) and the
 * unverified 0x10/0x40 map to KIMG_IMAGE_UNKNOWN. */
static enum kimg_image_kind entry_kind(uint16_t kind)
{
	switch (kind) {
	case 1: return KIMG_IMAGE_PTX;
	case 2: return KIMG_IMAGE_SASS;
	case 8: return KIMG_IMAGE_LTOIR;
	default: return KIMG_IMAGE_UNKNOWN;
	}
}

/* §6: one container can mix encodings; each entry names its own. */
static enum kimg_compression entry_compression(uint64_t flags)
{
	if (flags & KIMG_FATBIN_FLAG_COMPRESS_ZSTD)
		return KIMG_COMPRESS_ZSTD;
	if (flags & KIMG_FATBIN_FLAG_COMPRESS_LZ4)
		return KIMG_COMPRESS_LZ4;
	if (flags & KIMG_FATBIN_FLAG_COMPRESS_LEGACY)
		return KIMG_COMPRESS_LEGACY;
	return KIMG_COMPRESS_NONE;
}

/* §7: the a/f suffix lives only in the entry flags (cubin e_flags lose it
 * under CUDA 13, §8). Both bits together have never been seen; "a" is the
 * narrower claim, so it wins. */
static uint8_t entry_variant(uint64_t flags)
{
	if (flags & KIMG_FATBIN_FLAG_ARCH_SPECIFIC)
		return KIMG_VARIANT_A;
	if (flags & KIMG_FATBIN_FLAG_FAMILY_SPECIFIC)
		return KIMG_VARIANT_F;
	return KIMG_VARIANT_PLAIN;
}

int kimg_fatbin_open(struct kimg_span in, uint64_t off, struct kimg_fatbin *fb, struct kimg_error *err)
{
	uint32_t magic;
	uint16_t version, header_size;
	uint64_t fat_size;

	if (!kimg_span_u32(&in, off, &magic))
		return kimg_error_set(err, -KIMG_ETRUNC, off, "fatbin header: input ends before the magic");
	if (magic == FATBIN_OLD_MAGIC)
		return kimg_error_set(err, -KIMG_ENOTSUP, off, "pre-CUDA-4.0 fatbin (magic 0x%08x)", magic);
	if (magic != KIMG_FATBIN_MAGIC)
		return kimg_error_set(err, -KIMG_EFORMAT, off, "fatbin header: bad magic 0x%08x", magic);
	if (!kimg_span_has(&in, off, KIMG_FATBIN_HEADER_SIZE))
		return kimg_error_set(err, -KIMG_ETRUNC, off, "fatbin header: input ends inside the 16-byte header");
	kimg_span_u16(&in, off + 4, &version);
	kimg_span_u16(&in, off + 6, &header_size);
	kimg_span_u64(&in, off + 8, &fat_size);
	if (version != FATBIN_VERSION)
		return kimg_error_set(err, -KIMG_EFORMAT, off, "fatbin header: version %u, expected 1", version);
	if (header_size < KIMG_FATBIN_HEADER_SIZE || header_size % 8 != 0)
		return kimg_error_set(err, -KIMG_EFORMAT, off, "fatbin header: headerSize %u", header_size);
	/* Sums in 64 bits through span_has: a hostile fatSize cannot wrap. */
	if (!kimg_span_has(&in, off, header_size) || !kimg_span_has(&in, off + header_size, fat_size))
		return kimg_error_set(err, -KIMG_ETRUNC, off,
				      "fatbin container: fatSize %llu passes the end (%llu bytes left)",
				      (unsigned long long)fat_size, (unsigned long long)(in.size - off));
	fb->bytes = kimg_span_sub(&in, off, header_size + fat_size);
	fb->offset = off;
	fb->version = version;
	fb->header_size = header_size;
	return 0;
}

/* A (offset, length) field pair of the entry tail must lie inside the entry
 * header (§5.1: strings are bounded by header_size). */
static bool tail_range_ok(uint32_t off, uint32_t len, uint32_t header_size)
{
	return off <= header_size && len <= header_size - off;
}

/* Identifier text without the NUL padding that follows it. */
static struct kimg_span trim_nuls(struct kimg_span s)
{
	const uint8_t *nul = s.size ? memchr(s.data, 0, s.size) : NULL;
	if (nul)
		s.size = (uint64_t)(nul - s.data);
	return s;
}

int kimg_fatbin_next(const struct kimg_fatbin *fb, uint64_t *cursor, struct kimg_image *img, struct kimg_error *err)
{
	const struct kimg_span *c = &fb->bytes;
	uint64_t pos = *cursor ? *cursor : fb->header_size;
	uint64_t at, size, flags, uncompressed;
	uint32_t header_size, compressed, opt_off, arch, id_off, id_len;
	uint16_t kind, format, minor, major;
	struct kimg_span entry;

	/* §9: no terminator entry; fewer than 64 bytes left is the end. */
	if (!kimg_span_has(c, pos, KIMG_FATBIN_ENTRY_HEADER_SIZE))
		return 0;
	at = fb->offset + pos;
	kimg_span_u16(c, pos + EH_KIND, &kind);
	kimg_span_u16(c, pos + EH_FORMAT, &format);
	kimg_span_u32(c, pos + EH_HEADER_SIZE, &header_size);
	kimg_span_u64(c, pos + EH_SIZE, &size);
	if (kind == 0 || format != ENTRY_FORMAT_VERSION)
		return kimg_error_set(err, -KIMG_EFORMAT, at, "fatbin entry: kind %u, format 0x%04x", kind, format);
	if (header_size < KIMG_FATBIN_ENTRY_HEADER_SIZE)
		return kimg_error_set(err, -KIMG_EFORMAT, at, "fatbin entry: header_size %u < 64", header_size);
	if (!kimg_span_has(c, pos, header_size) || !kimg_span_has(c, pos + header_size, size))
		return kimg_error_set(err, -KIMG_EFORMAT, at,
				      "fatbin entry: header %u + size %llu pass the container end",
				      header_size, (unsigned long long)size);
	entry = kimg_span_sub(c, pos, header_size);
	kimg_span_u32(&entry, EH_COMPRESSED_SIZE, &compressed);
	kimg_span_u32(&entry, EH_OPTIONS_OFFSET, &opt_off);
	kimg_span_u16(&entry, EH_MINOR, &minor);
	kimg_span_u16(&entry, EH_MAJOR, &major);
	kimg_span_u32(&entry, EH_ARCH, &arch);
	kimg_span_u32(&entry, EH_IDENT_OFFSET, &id_off);
	kimg_span_u32(&entry, EH_IDENT_LEN, &id_len);
	kimg_span_u64(&entry, EH_FLAGS, &flags);
	kimg_span_u64(&entry, EH_UNCOMPRESSED_SIZE, &uncompressed);

	memset(img, 0, sizeof *img);
	img->kind = entry_kind(kind);
	img->arch.sm = arch <= UINT16_MAX ? (uint16_t)arch : 0;
	img->arch.variant = entry_variant(flags);
	/* §11: the PTX ISA is the entry's code version, not the .version line
	 * (nvFatbin strips that line). Other kinds carry an ELF code version. */
	if (img->kind == KIMG_IMAGE_PTX && major < 100 && minor < 100)
		img->ptx_isa = KIMG_ISA(major, minor);
	img->compression = entry_compression(flags);
	img->offset = at;
	img->flags = flags;
	if (img->compression != KIMG_COMPRESS_NONE) {
		/* size is compressed_size rounded up to 8 (§5). */
		if (compressed > size)
			return kimg_error_set(err, -KIMG_EFORMAT, at,
					      "fatbin entry: compressed_size %u > size %llu",
					      compressed, (unsigned long long)size);
		img->stored_size = compressed;
		img->size = uncompressed;
	} else {
		/* Raw PTX keeps the NUL padding to 8 in size; the text ends earlier. */
		img->stored_size = size;
		img->size = size;
	}
	img->payload = kimg_span_sub(c, pos + header_size, img->stored_size);

	if (id_off != 0 && id_len != 0) {
		if (!tail_range_ok(id_off, id_len, header_size))
			return kimg_error_set(err, -KIMG_EFORMAT, at,
					      "fatbin entry: identifier [%u, +%u) outside the %u-byte header",
					      id_off, id_len, header_size);
		img->identifier = trim_nuls(kimg_span_sub(&entry, id_off, id_len));
	}
	if (opt_off != 0) {
		uint32_t o_off = 0, o_len = 0;
		if (!tail_range_ok(opt_off, 8, header_size))
			return kimg_error_set(err, -KIMG_EFORMAT, at,
					      "fatbin entry: options descriptor at %u outside the %u-byte header",
					      opt_off, header_size);
		kimg_span_u32(&entry, opt_off, &o_off);
		kimg_span_u32(&entry, opt_off + 4, &o_len);
		if (o_len != 0) {
			if (!tail_range_ok(o_off, o_len, header_size))
				return kimg_error_set(err, -KIMG_EFORMAT, at,
						      "fatbin entry: options [%u, +%u) outside the %u-byte header",
						      o_off, o_len, header_size);
			img->options = kimg_span_sub(&entry, o_off, o_len);
		}
	}
	*cursor = pos + header_size + size;
	return 1;
}
