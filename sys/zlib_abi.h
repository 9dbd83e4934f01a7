/* SPDX-License-Identifier: Apache-2.0 */
/* zlib's ABI as far as kimg uses it (zlib.h of zlib 1.x; the soname has
 * been libz.so.1 since 1.1), shared by the zip reader (zip.c) and the
 * gzip layer stream (codecs.c). No header needed: the struct is zlib's
 * z_stream, field for field. Private to sys/. */
#ifndef KIMG_SYS_ZLIB_ABI_H
#define KIMG_SYS_ZLIB_ABI_H

#define Z_OK 0
#define Z_STREAM_END 1
#define Z_NO_FLUSH 0
#define Z_BUF_ERROR (-5)

struct z_stream_abi {
	const unsigned char *next_in;
	unsigned avail_in;
	unsigned long total_in;
	unsigned char *next_out;
	unsigned avail_out;
	unsigned long total_out;
	const char *msg;
	void *state;
	void *zalloc, *zfree, *opaque;
	int data_type;
	unsigned long adler, reserved;
};

#endif
