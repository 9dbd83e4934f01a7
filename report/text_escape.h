/* SPDX-License-Identifier: Apache-2.0 */
/* Text that came from inputs (file and member names, section, kernel and
 * symbol names) as text output shows it: a name cannot move the cursor,
 * recolour the terminal or split "one line per problem". Control bytes,
 * ESC, DEL, C1 controls (U+0080-U+009F) and bytes that are not UTF-8
 * become \xNN; newline, tab, CR \n \t \r; a backslash \\; bidi and
 * invisible format characters (U+202A-202E, U+2066-2069 and the like)
 * \uXXXX; a NUL carried inside a name as C0 80 (sys/zip.c) \x00. Other
 * valid UTF-8 stays as it is. Shared by kimg-probe and libkimg.so: no allocation. */
#ifndef KIMG_REPORT_TEXT_ESCAPE_H
#define KIMG_REPORT_TEXT_ESCAPE_H

#include <stddef.h>
#include <stdio.h>

/* s escaped into buf (NUL-terminated; cut to fit, never inside an
 * escape); returns buf. s NULL is "". */
const char *kimg_text_escape(const char *s, char *buf, size_t size);

/* s escaped onto out, without a buffer. */
void kimg_text_fputs(const char *s, FILE *out);

#endif
