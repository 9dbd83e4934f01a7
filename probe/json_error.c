/* SPDX-License-Identifier: Apache-2.0 */
/* The error document of --json (json_error.h). stdout and stderr become
 * glibc cookie streams over descriptors 1 and 2: every byte still goes
 * where it went (same descriptors, same order, errors passed back to
 * stdio so a full disk is still caught), and the probe learns whether
 * anything reached stdout and what was said on stderr. Watching the
 * streams, rather than every failure path, is what makes "--json always
 * writes one document" hold for paths added later. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "json.h"
#include "json_error.h"
#include "probe.h"

#define KEPT_LINES 16    /* stderr lines the error document carries */
#define KEPT_LINE 1024   /* bytes kept of each */

static unsigned long long stdout_bytes;
static char err_lines[KEPT_LINES][KEPT_LINE];
static size_t err_n, err_len; /* lines complete; bytes of the one being written */
static bool watching;

static ssize_t write_all(int fd, const char *buf, size_t size)
{
	size_t done = 0;
	while (done < size) {
		ssize_t n = write(fd, buf + done, size - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return done ? (ssize_t)done : -1;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

static ssize_t out_write(void *cookie, const char *buf, size_t size)
{
	(void)cookie;
	ssize_t n = write_all(STDOUT_FILENO, buf, size);
	if (n > 0)
		stdout_bytes += (unsigned long long)n;
	return n;
}

/* Called under stderr's stream lock, so threads never interleave here. */
static ssize_t err_write(void *cookie, const char *buf, size_t size)
{
	(void)cookie;
	for (size_t i = 0; i < size && err_n < KEPT_LINES; i++) {
		if (buf[i] == '\n') {
			err_lines[err_n++][err_len] = '\0';
			err_len = 0;
		} else if (err_len + 1 < KEPT_LINE) {
			err_lines[err_n][err_len++] = buf[i];
		}
	}
	return write_all(STDERR_FILENO, buf, size);
}

void probe_stdio_watch(void)
{
	static const cookie_io_functions_t out_fns = { .write = out_write };
	static const cookie_io_functions_t err_fns = { .write = err_write };
	FILE *out = fopencookie(NULL, "w", out_fns);
	FILE *err = fopencookie(NULL, "w", err_fns);
	if (!out || !err) {
		if (out)
			fclose(out);
		if (err)
			fclose(err);
		return;
	}
	setvbuf(err, NULL, _IONBF, 0);
	stdout = out;
	stderr = err;
	watching = true;
}

bool probe_wants_json(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			return false;
		if (strcmp(argv[i], "--json") == 0)
			return true;
	}
	return false;
}

void probe_json_error_finish(const char *command, bool json, int status)
{
	if (!json || status == PROBE_EXIT_OK || !watching)
		return;
	fflush(stdout);
	if (stdout_bytes > 0 || ferror(stdout))
		return;
	struct kimg_json j;
	kimg_json_init(&j, stdout);
	kimg_json_begin_object(&j);
	kimg_json_key(&j, "error");
	kimg_json_begin_object(&j);
	kimg_json_kv_string(&j, "command", command);
	kimg_json_kv_int(&j, "exit_status", status);
	kimg_json_key(&j, "messages");
	kimg_json_begin_array(&j);
	for (size_t i = 0; i < err_n; i++)
		kimg_json_string(&j, err_lines[i]);
	if (err_n < KEPT_LINES && err_len > 0) {
		err_lines[err_n][err_len] = '\0';
		kimg_json_string(&j, err_lines[err_n]);
	}
	kimg_json_end_array(&j);
	kimg_json_end_object(&j);
	kimg_json_kv_bool(&j, "ok", false);
	kimg_json_end_object(&j);
	fputc('\n', stdout);
}
