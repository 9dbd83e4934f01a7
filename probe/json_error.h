/* SPDX-License-Identifier: Apache-2.0 */
/* The error document of `kimg-probe COMMAND --json` (docs/json-probe.md, "When a
 * command fails"; docs/schema/error.schema.json): a command that fails
 * before it has written anything to stdout still gives its consumer one
 * JSON document to parse, holding the lines it wrote on stderr. main.c
 * watches stdout and stderr from the start (json_error.c), so no failure
 * path of any command can forget it. */
#ifndef KIMG_PROBE_JSON_ERROR_H
#define KIMG_PROBE_JSON_ERROR_H

#include <stdbool.h>

/* Replace stdout and stderr by streams that pass every byte on to file
 * descriptors 1 and 2 and remember what was written: stdout's byte count,
 * stderr's first lines. Call once, first thing in main. Falls back to the
 * plain streams (and no error document) when that cannot be done. */
void probe_stdio_watch(void);

/* Does argv (the command's arguments, argv[0] the command) ask for JSON:
 * "--json" before any "--"? */
bool probe_wants_json(int argc, char **argv);

/* After a command returned status: when it asked for JSON, failed and
 * wrote nothing on stdout, write the error document for `command` there. */
void probe_json_error_finish(const char *command, bool json, int status);

#endif
