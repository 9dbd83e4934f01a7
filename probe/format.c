/* Small renderings shared by the text and JSON outputs. */
#include <string.h>

#include "probe.h"

void probe_format_cuda_version(int v, char *buf, size_t size)
{
	if (v <= 0)
		snprintf(buf, size, "%s", "");
	else
		snprintf(buf, size, "%d.%d", v / 1000, (v % 1000) / 10);
}

const char *probe_esc(struct probe_esc *e, const char *text)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)(text ? text : "");
	size_t n = strlen((const char *)s), o = 0;
	for (size_t i = 0; i < n && o + 5 < sizeof e->s;) {
		unsigned char c = s[i];
		size_t len = c < 0x80 ? 1 : kimg_utf8_seq_len(s + i, n - i);
		/* C1 controls (U+0080-U+009F) act like ESC sequences on some terminals. */
		bool c1 = len == 2 && c == 0xc2 && s[i + 1] < 0xa0;
		if (c == '\\') {
			e->s[o++] = '\\';
			e->s[o++] = '\\';
		} else if (c == '\n' || c == '\t' || c == '\r') {
			e->s[o++] = '\\';
			e->s[o++] = c == '\n' ? 'n' : c == '\t' ? 't' : 'r';
		} else if (c < 0x20 || c == 0x7f || len == 0 || c1) {
			/* control bytes, bytes that are not UTF-8: \xNN each */
			size_t k = c1 ? 2 : 1;
			for (size_t b = 0; b < k && o + 5 < sizeof e->s; b++) {
				e->s[o++] = '\\';
				e->s[o++] = 'x';
				e->s[o++] = hex[s[i + b] >> 4];
				e->s[o++] = hex[s[i + b] & 15];
			}
			i += k;
			continue;
		} else {
			if (o + len + 1 > sizeof e->s)
				break;
			memcpy(e->s + o, s + i, len);
			o += len;
			i += len;
			continue;
		}
		i++;
	}
	e->s[o] = '\0';
	return e->s;
}

void probe_format_module_place(const struct probe_module *m, char *buf, size_t size)
{
	int n = snprintf(buf, size, "at 0x%llx", (unsigned long long)m->offset);
	if (n < 0 || (size_t)n >= size)
		return;
	if (m->section)
		n += snprintf(buf + n, size - (size_t)n, " in %s", m->section);
	else if (m->origin == KIMG_ORIGIN_RAW)
		n += snprintf(buf + n, size - (size_t)n, " (whole file)");
	else if (m->origin == KIMG_ORIGIN_SCAN)
		n += snprintf(buf + n, size - (size_t)n, " (found by magic outside known sections)");
	if (n >= 0 && (size_t)n < size && m->member)
		snprintf(buf + n, size - (size_t)n, " of member %s", m->member);
}
