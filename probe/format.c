/* SPDX-License-Identifier: Apache-2.0 */
/* Small renderings shared by the text and JSON outputs. */
#include <string.h>

#include "probe.h"
#include "text_escape.h"

void probe_format_cuda_version(int v, char *buf, size_t size)
{
	if (v <= 0)
		snprintf(buf, size, "%s", "");
	else
		snprintf(buf, size, "%d.%d", v / 1000, (v % 1000) / 10);
}

const char *probe_esc(struct probe_esc *e, const char *text)
{
	return kimg_text_escape(text, e->s, sizeof e->s);
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
