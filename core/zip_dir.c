/* SPDX-License-Identifier: Apache-2.0 */
/* Zip central directory (zip_dir.h). Offsets refer to APPNOTE.TXT 6.3. */
#include "zip_dir.h"

#include <string.h>

#define SIG_EOCD 0x06054b50u     /* 4.3.16 */
#define SIG_EOCD64 0x06064b50u   /* 4.3.14 */
#define SIG_LOC64 0x07064b50u    /* 4.3.15 */
#define SIG_CDH 0x02014b50u      /* 4.3.12 */
#define SIG_LOCAL 0x04034b50u    /* 4.3.7 */
#define EOCD_SIZE 22u
#define LOC64_SIZE 20u
#define EOCD64_MIN 56u
#define CDH_SIZE 46u
#define LOCAL_SIZE 30u
#define EOCD_SEARCH (EOCD_SIZE + 0xffffu) /* the record plus the longest comment */
#define EXTRA_ZIP64 0x0001u
#define FLAG_ENCRYPTED 0x0001u
#define UNIX_HOST 3u
#define S_IFMT_ 0170000u
#define S_IFLNK_ 0120000u

/* The last end record whose comment length fits the bytes after it. */
static bool find_eocd(struct kimg_span z, uint64_t *at)
{
	if (z.size < EOCD_SIZE)
		return false;
	uint64_t lo = z.size > EOCD_SEARCH ? z.size - EOCD_SEARCH : 0;
	for (uint64_t p = z.size - EOCD_SIZE + 1; p-- > lo;) {
		uint32_t sig;
		uint16_t clen;
		if (kimg_span_u32(&z, p, &sig) && sig == SIG_EOCD && kimg_span_u16(&z, p + 20, &clen) &&
		    p + EOCD_SIZE + clen <= z.size) {
			*at = p;
			return true;
		}
	}
	return false;
}

static int read_zip64_end(struct kimg_span z, uint64_t eocd, struct kimg_zip_dir *d, struct kimg_error *err)
{
	uint32_t sig, disk, cd_disk;
	uint64_t off;
	if (eocd < LOC64_SIZE || !kimg_span_u32(&z, eocd - LOC64_SIZE, &sig) || sig != SIG_LOC64)
		return kimg_error_set(err, -KIMG_EFORMAT, eocd, "zip: ZIP64 fields without a ZIP64 locator");
	kimg_span_u64(&z, eocd - LOC64_SIZE + 8, &off);
	if (!kimg_span_has(&z, off, EOCD64_MIN) || !kimg_span_u32(&z, off, &sig) || sig != SIG_EOCD64)
		return kimg_error_set(err, -KIMG_EFORMAT, eocd - LOC64_SIZE, "zip: ZIP64 end record outside the archive");
	kimg_span_u32(&z, off + 16, &disk);
	kimg_span_u32(&z, off + 20, &cd_disk);
	if (disk != 0 || cd_disk != 0)
		return kimg_error_set(err, -KIMG_ENOTSUP, off, "zip: multi-disk archive");
	kimg_span_u64(&z, off + 32, &d->entries);
	kimg_span_u64(&z, off + 40, &d->cd_size);
	kimg_span_u64(&z, off + 48, &d->cd_offset);
	return 0;
}

int kimg_zip_dir_open(struct kimg_span zip, struct kimg_zip_dir *d, struct kimg_error *err)
{
	uint64_t eocd;
	uint16_t disk, cd_disk, n_disk, n_total;
	uint32_t cd_size, cd_off;
	memset(d, 0, sizeof *d);
	d->zip = zip;
	if (!find_eocd(zip, &eocd))
		return kimg_error_set(err, -KIMG_EFORMAT, 0, "zip: no end of central directory record");
	kimg_span_u16(&zip, eocd + 4, &disk);
	kimg_span_u16(&zip, eocd + 6, &cd_disk);
	kimg_span_u16(&zip, eocd + 8, &n_disk);
	kimg_span_u16(&zip, eocd + 10, &n_total);
	kimg_span_u32(&zip, eocd + 12, &cd_size);
	kimg_span_u32(&zip, eocd + 16, &cd_off);
	if (n_total == 0xffff || cd_size == 0xffffffffu || cd_off == 0xffffffffu) {
		int rc = read_zip64_end(zip, eocd, d, err);
		if (rc < 0)
			return rc;
	} else {
		if ((disk != 0 && disk != 0xffff) || (cd_disk != 0 && cd_disk != 0xffff) || n_disk != n_total)
			return kimg_error_set(err, -KIMG_ENOTSUP, eocd, "zip: multi-disk archive");
		d->entries = n_total;
		d->cd_size = cd_size;
		d->cd_offset = cd_off;
	}
	if (!kimg_span_has(&zip, d->cd_offset, d->cd_size) || d->cd_offset + d->cd_size > eocd)
		return kimg_error_set(err, -KIMG_EFORMAT, eocd, "zip: central directory [%llu, +%llu) outside the archive",
				      (unsigned long long)d->cd_offset, (unsigned long long)d->cd_size);
	/* every entry takes CDH_SIZE bytes at least: a count beyond that lies */
	if (d->entries > d->cd_size / CDH_SIZE)
		return kimg_error_set(err, -KIMG_EFORMAT, eocd, "zip: %llu entries cannot fit a %llu-byte directory",
				      (unsigned long long)d->entries, (unsigned long long)d->cd_size);
	return 0;
}

/* 4.5.3: the ZIP64 extra field holds, in this order, those of size,
 * stored size and local offset whose classic field is 0xffffffff. */
static int read_zip64_extra(struct kimg_span extra, struct kimg_zip_entry *e, bool need_size, bool need_stored,
			    bool need_off, uint64_t at, struct kimg_error *err)
{
	uint64_t p = 0;
	while (p + 4 <= extra.size) {
		uint16_t id, len;
		kimg_span_u16(&extra, p, &id);
		kimg_span_u16(&extra, p + 2, &len);
		if (!kimg_span_has(&extra, p + 4, len))
			break;
		if (id == EXTRA_ZIP64) {
			struct kimg_span f = kimg_span_sub(&extra, p + 4, len);
			uint64_t *fields[3];
			size_t k = 0;
			if (need_size)
				fields[k++] = &e->size;
			if (need_stored)
				fields[k++] = &e->stored_size;
			if (need_off)
				fields[k++] = &e->local_offset;
			for (size_t i = 0; i < k; i++)
				if (!kimg_span_u64(&f, 8 * i, fields[i]))
					return kimg_error_set(err, -KIMG_EFORMAT, at, "zip: ZIP64 extra field too short");
			return 0;
		}
		p += 4 + (uint64_t)len;
	}
	if (need_size || need_stored || need_off)
		return kimg_error_set(err, -KIMG_EFORMAT, at, "zip: ZIP64 sizes without a ZIP64 extra field");
	return 0;
}

int kimg_zip_dir_next(const struct kimg_zip_dir *d, uint64_t *cursor, struct kimg_zip_entry *e,
		      struct kimg_error *err)
{
	struct kimg_span cd = kimg_span_sub(&d->zip, d->cd_offset, d->cd_size);
	uint64_t p = *cursor, at = d->cd_offset + p;
	uint32_t sig, crc, csize, usize, ext, loff;
	uint16_t made_by, flags, method, nlen, xlen, clen;

	if (p >= cd.size)
		return 0;
	if (!kimg_span_has(&cd, p, CDH_SIZE) || !kimg_span_u32(&cd, p, &sig) || sig != SIG_CDH) {
		/* a directory may end with padding or a digital signature (4.3.13) */
		if (kimg_span_u32(&cd, p, &sig) && sig == 0x05054b50u)
			return 0;
		return kimg_error_set(err, -KIMG_EFORMAT, at, "zip: bad central directory entry");
	}
	kimg_span_u16(&cd, p + 4, &made_by);
	kimg_span_u16(&cd, p + 8, &flags);
	kimg_span_u16(&cd, p + 10, &method);
	kimg_span_u32(&cd, p + 16, &crc);
	kimg_span_u32(&cd, p + 20, &csize);
	kimg_span_u32(&cd, p + 24, &usize);
	kimg_span_u16(&cd, p + 28, &nlen);
	kimg_span_u16(&cd, p + 30, &xlen);
	kimg_span_u16(&cd, p + 32, &clen);
	kimg_span_u32(&cd, p + 38, &ext);
	kimg_span_u32(&cd, p + 42, &loff);
	uint64_t total = CDH_SIZE + (uint64_t)nlen + xlen + clen;
	if (!kimg_span_has(&cd, p, total))
		return kimg_error_set(err, -KIMG_EFORMAT, at, "zip: central directory entry past the directory");
	memset(e, 0, sizeof *e);
	e->name = kimg_span_sub(&cd, p + CDH_SIZE, nlen);
	e->method = method;
	e->flags = flags;
	e->crc32 = crc;
	e->stored_size = csize;
	e->size = usize;
	e->local_offset = loff;
	int rc = read_zip64_extra(kimg_span_sub(&cd, p + CDH_SIZE + nlen, xlen), e, usize == 0xffffffffu,
				  csize == 0xffffffffu, loff == 0xffffffffu, at, err);
	if (rc < 0)
		return rc;
	e->is_dir = nlen > 0 && e->name.data[nlen - 1] == '/';
	e->is_symlink = (made_by >> 8) == UNIX_HOST && ((ext >> 16) & S_IFMT_) == S_IFLNK_;
	*cursor = p + total;
	return 1;
}

int kimg_zip_entry_data(const struct kimg_zip_dir *d, const struct kimg_zip_entry *e, struct kimg_span *data,
			struct kimg_error *err)
{
	uint32_t sig;
	uint16_t nlen, xlen;
	*data = kimg_span_make(NULL, 0);
	if (e->flags & FLAG_ENCRYPTED)
		return kimg_error_set(err, -KIMG_ENOTSUP, e->local_offset, "zip: encrypted member");
	if (!kimg_span_has(&d->zip, e->local_offset, LOCAL_SIZE) || !kimg_span_u32(&d->zip, e->local_offset, &sig) ||
	    sig != SIG_LOCAL)
		return kimg_error_set(err, -KIMG_EFORMAT, e->local_offset, "zip: bad local header");
	kimg_span_u16(&d->zip, e->local_offset + 26, &nlen);
	kimg_span_u16(&d->zip, e->local_offset + 28, &xlen);
	uint64_t start = e->local_offset + LOCAL_SIZE + nlen + xlen;
	if (!kimg_span_has(&d->zip, start, e->stored_size))
		return kimg_error_set(err, -KIMG_ETRUNC, e->local_offset, "zip: member data past the end of the archive");
	*data = kimg_span_sub(&d->zip, start, e->stored_size);
	return 0;
}
