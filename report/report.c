/* SPDX-License-Identifier: Apache-2.0 */
/* Pieces shared by the text and JSON renderers of struct kimg_report. */
#include <stdio.h>

#include "report.h"

void kimg_report_format_driver(int driver_version, char *buf, size_t size)
{
	if (driver_version <= 0)
		snprintf(buf, size, "?");
	else
		snprintf(buf, size, "%d.%d", driver_version / 1000, driver_version % 1000 / 10);
}

void kimg_report_format_isa(uint16_t isa, char *buf, size_t size)
{
	if (isa == 0)
		snprintf(buf, size, "%s", "");
	else
		snprintf(buf, size, "%u.%u", (unsigned)KIMG_ISA_MAJOR(isa), (unsigned)KIMG_ISA_MINOR(isa));
}

size_t kimg_report_summary_line(unsigned kernels, unsigned modules, char *buf, size_t size)
{
	int n;
	if (size == 0)
		return 0;
	buf[0] = '\0';
	if (kernels > 0)
		n = snprintf(buf, size, "kimg: %u kernel%s in %u module%s failed to load (see above)\n", kernels,
			     kernels == 1 ? "" : "s", modules, modules == 1 ? "" : "s");
	else if (modules > 0) /* loads that failed before any kernel was named */
		n = snprintf(buf, size, "kimg: %u module%s failed to load (see above)\n", modules,
			     modules == 1 ? "" : "s");
	else
		return 0;
	if (n < 0)
		return 0;
	return (size_t)n < size ? (size_t)n : size - 1;
}

static const struct {
	const char *id, *text;
} escalations[KIMG_ESCALATION_COUNT] = {
	[KIMG_ESCALATION_NONE] = { NULL, NULL },
	[KIMG_ESCALATION_LAUNCH] = { "launch", "a launch of a kernel of this module failed afterwards" },
	[KIMG_ESCALATION_PROGRAM_CALL] = { "program_call", "the failing call came from the program itself" },
	[KIMG_ESCALATION_EXIT_STATUS] = { "exit_status", "the process exited with a failure status afterwards" },
};

const char *kimg_escalation_text(enum kimg_escalation e)
{
	return (unsigned)e < KIMG_ESCALATION_COUNT ? escalations[e].text : NULL;
}

const char *kimg_escalation_id(enum kimg_escalation e)
{
	return (unsigned)e < KIMG_ESCALATION_COUNT ? escalations[e].id : NULL;
}
