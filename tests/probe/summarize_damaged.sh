#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# summarize and damaged reports (issue 22 item 12): a line shaped like a
# kimg report (an object with "error" and "module", keys every report has,
# docs/json-shim-report.md) whose error is null, not an object or has no
# numeric code is a damaged report, a failure that cannot be shown: exit
# 2, counted in unreadable_reports. Stray JSON and text stay skipped lines
# (exit 0). Oracle: the lines written here and docs/man/kimg-probe.1's
# exit statuses.
. "$(dirname "$0")/../lib.bash" probe

good='{"error":{"code":209,"name":"CUDA_ERROR_NO_BINARY_FOR_GPU"},"module":{"file":"/x/a.so","offset":0},"process":{"host":"n1","rank":0}}'
printf '%s\n' "$good" >"$TMP/good.log"
run "$PROBE" summarize --json "$TMP/good.log"
expect_rc 1 "a well-formed report: exit 1 (the check below is not vacuous)"
n=0
while IFS= read -r err; do
	n=$((n + 1))
	printf '%s\n{"error":%s,"module":{"file":"/x/b.so","offset":0},"process":{"host":"n1","rank":1}}\n' "$good" "$err" >"$TMP/d$n.log"
	run "$PROBE" summarize --json "$TMP/d$n.log"
	expect_rc 2 "a report with \"error\":$err: exit 2, not a skipped line"
	expect_json "... counted as an unreadable report" "d['unreadable_reports'] == 1 and d['reports'] == 1"
	run "$PROBE" summarize "$TMP/d$n.log"
	expect_grep "... text says it" "$TMP/out" "1 report could not be read"
done <<'ERR'
null
5
"CUDA_ERROR_NO_BINARY_FOR_GPU"
[209]
{}
{"code":"209"}
{"code":null,"name":"x"}
ERR
# lines that are not report-shaped stay skipped, exit 0
printf '%s\n' '{"foo":1}' '{"error":null}' '{"module":{}}' 'plain text' '[1,2]' >"$TMP/stray.log"
run "$PROBE" summarize --json "$TMP/stray.log"
expect_rc 0 "JSON and text that are not report-shaped: skipped, exit 0"
expect_json "... 5 skipped lines, no unreadable report" "d['skipped_lines'] == 5 and d['unreadable_reports'] == 0"
finish
