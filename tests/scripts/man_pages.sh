#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# docs/man: each page renders with groff -man -ww without a warning, and says
# what the tools actually do: every option in kimg-run --help, every
# subcommand and option in kimg-probe --help, every variable shim/diag/options.c
# reads, and the JSON keys of the report.
. "$(dirname "$0")/../lib.bash"
MAN=$ROOT/docs/man
if ! command -v groff >/dev/null; then
	fail "groff not installed (apt-get install groff-base): cannot check the man pages"
	finish; exit
fi

declare -A text
for page in kimg-run.1 kimg-probe.1 libkimg.7; do
	f=$MAN/$page
	need "$f" "man page" || continue
	warn=$(groff -man -Tutf8 -ww "$f" 2>&1 >/dev/null); rc=$?
	expect_eq "$page: groff -man -Tutf8 -ww renders with status 0 and no warning" "0 " "$rc $warn"
	for w in 60 80 120; do
		warn=$(MANWIDTH=$w man -l "$f" 2>&1 >/dev/null)
		expect_eq "$page: man -l at width $w prints no warning" "" "$warn"
	done
	# Rendered text with hyphenation off and no overstrike, for the checks below.
	text[$page]=$(MANWIDTH=200 man -l "$f" 2>/dev/null | col -b)
	expect_match "$page: NAME section" "^NAME" "${text[$page]}"
done

has() { # page what fixed-string (a comma list may wrap after a comma)
	if grep -Fq -- "$3" <<<"${text[$1]}" || sed -z 's/,[[:space:]]*\n[[:space:]]*/,/g' <<<"${text[$1]}" | grep -Fq -- "$3"; then ok "$1 documents $2"; else fail "$1 documents $2" "missing: $3"; fi
}

# ---- kimg-run.1 against kimg-run --help ----
opts=$(bash "$LAUNCHER" --help | grep -oE '^  (-h, )?--[a-z-]+' | grep -oE -- '--[a-z-]+' | sort -u)
[ -n "$opts" ] || fail "kimg-run --help lists options"
for o in $opts; do has kimg-run.1 "option $o (from kimg-run --help)" "$o"; done
for v in KIMG_LIB LD_PRELOAD KIMG_LOG KIMG_FORMAT KIMG_VERBOSE KIMG_ON_ERROR KIMG_FALLBACK KIMG_AUDIT KIMG_SKIP KIMG_DISABLE \
	'KIMG_ON_ERROR=exit:n' 'force-ptx:glob' '%p' '%h' '%r' 'nvcc,cicc,ptxas,fatbinary,nvlink,gcc,g++,cc,c++,cc1,cc1plus,ld,ld.gold,ld.lld,as,ninja,make,cmake'; do
	has kimg-run.1 "$v" "$v"
done
for s in 126 127; do has kimg-run.1 "exit status $s" "$s"; done

# ---- kimg-probe.1 against kimg-probe --help ----
has kimg-probe.1 "exit status 0/1/2" "EXIT STATUS"
for word in device scan check --json --kernels '--sm list' '--driver X.Y' 9.0 90 sm_90 'GPU name' native; do
	has kimg-probe.1 "$word" "$word"
done
PROBE=$BUILD_DIR/kimg-probe
if need "$PROBE" "kimg-probe: make BUILD=$BUILD (to compare the page with --help)"; then
	cmds=$("$PROBE" --help | sed -n '/^Commands:/,/^$/p' | grep -oE '^  [a-z]+' | tr -d ' ')
	[ -n "$cmds" ] || fail "kimg-probe --help lists its commands"
	for c in $cmds; do
		has kimg-probe.1 "subcommand $c (from kimg-probe --help)" "kimg-probe $c"
		for o in $("$PROBE" "$c" --help | grep -oE -- '--[a-z][a-z-]*' | sort -u); do
			has kimg-probe.1 "$c option $o (from kimg-probe $c --help)" "$o"
		done
	done
	# And the other way: no subcommand in the page that the program lacks.
	for c in $(grep -oE '^\.B kimg-probe [a-z]+' "$MAN/kimg-probe.1" | awk '{print $3}' | sort -u); do
		if grep -qx "$c" <<<"$cmds"; then ok "kimg-probe.1: subcommand $c exists"; else
			fail "kimg-probe.1: subcommand $c exists" "kimg-probe --help does not list it"; fi
	done
	allhelp=$("$PROBE" --help; for c in $cmds; do "$PROBE" "$c" --help; done)
	for v in $(grep -oE '\$KIMG_[A-Z_]+' <<<"$allhelp" | tr -d '$' | sort -u); do
		has kimg-probe.1 "variable $v (from kimg-probe --help)" "$v"
	done
fi

# ---- libkimg.7: variables and report keys ----
for v in KIMG_LOG KIMG_FORMAT KIMG_VERBOSE KIMG_ON_ERROR KIMG_FALLBACK KIMG_AUDIT KIMG_SKIP KIMG_DISABLE \
	continue abort 'exit:n' 'force-ptx' '%p' '%h' '%r' RANK OMPI_COMM_WORLD_RANK PMI_RANK SLURM_PROCID \
	'nvcc,cicc,ptxas,fatbinary,nvlink,gcc,g++,cc,c++,cc1,cc1plus,ld,ld.gold,ld.lld,as,ninja,make,cmake' \
	CUDA_FORCE_PTX_JIT CUDA_DISABLE_PTX_JIT; do
	has libkimg.7 "$v" "$v"
done
if [ -f "$ROOT/shim/diag/options.c" ]; then
	for v in $(grep -oE '"KIMG_[A-Z_]+' "$ROOT/shim/diag/options.c" | tr -d '"' | sort -u); do
		has libkimg.7 "$v (read by shim/diag/options.c)" "$v"
	done
else
	fail "shim/diag/options.c missing: cannot cross-check libkimg.7 with the variables the library reads"
fi
for k in error.code error.name call kernel.name module.file 'module.images[]' kind arch device.sm verdict fix stack python_stack; do
	has libkimg.7 "JSON key $k" "$k"
done
# Each nested key named in the page is one the JSON renderer writes.
if [ -f "$ROOT/report/report_json.c" ]; then
	for k in code name call file images kind arch sm outcome reason rule selected expected_error advice nvcc cmake \
		torch_cuda_arch_list wheel min_toolkit min_driver stack python_stack line function; do
		if grep -q "\"$k\"" "$ROOT/report/report_json.c"; then ok "key $k documented in libkimg.7 is written by report/report_json.c"
		else fail "key $k documented in libkimg.7 is written by report/report_json.c"; fi
	done
fi
finish
