#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Python frames in libkimg's report when the extension released the GIL
# around the CUDA call, as PyTorch's bindings do (shim/diag/pyframes.c): a C
# extension built here against each interpreter (python3, and every pyenv
# CPython 3.10+ present) loads an sm_80 cubin on the 9.0 fake device with
# the GIL released; python_stack must name the script's file and line
# (fail_load.py:11 in step, then main, then <module>). Also with the GIL
# held (the C API path) and with another thread running Python meanwhile
# (no deadlock: kimg never takes the GIL). python3 needs its headers
# (python3-dev, installed by scripts/setup-debian.sh).
. "$(dirname "$0")/../lib.bash" shim
SCRIPT=$PWD/tests/shim/python/fail_load.py
tested=0
for py in python3 /usr/bin/python3 "$HOME"/.pyenv/versions/3.1[0-9]*/bin/python3; do
	command -v "$py" >/dev/null 2>&1 || continue
	v=$("$py" -c 'import platform; print(platform.python_version())' 2>/dev/null) || continue
	inc=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
	if [ ! -e "$inc/Python.h" ]; then
		if [ "$py" = python3 ] && [ "${CI:-}" = true ]; then
			fail "python3 $v: no Python.h in $inc (scripts/setup-debian.sh installs python3-dev)"
		else
			echo "   (python $v at $py: no headers in $inc, not built)"
		fi
		continue
	fi
	d=$TMP/ext-$v-$(echo "$py" | md5sum | cut -c1-6)
	mkdir -p "$d"
	suffix=$("$py" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
	# built here, not by make: one build per interpreter this machine has
	# (found above), against its own headers and with its own suffix
	gcc -shared -fPIC -O1 -I"$inc" -o "$d/kimgext$suffix" tests/shim/python/kimgext.c -ldl || {
		fail "python $v: build the extension"
		continue
	}
	tested=$((tested + 1))
	[ -n "${first_py:-}" ] || { first_py=$py first_d=$d; }
	for mode in released held busy; do
		name="py-$v-$mode-$tested"
		run "$name" PYTHONPATH="$d" -- timeout 60 "$py" "$SCRIPT" "$FIX/sm80.cubin" $mode
		check "python $v ($py), GIL $mode: the load fails 209, one report, python_stack fail_load.py:11 step, main, <module>" \
			eval 'has "$name" "load: 209" && report "$name" "len(R) == 1 and R[0][\"error\"][\"code\"] == 209
				and [(f[\"file\"], f[\"line\"], f[\"function\"]) for f in R[0][\"python_stack\"][:3]] ==
				[(\"$SCRIPT\", 11, \"step\"), (\"$SCRIPT\", 23, \"main\"), (\"$SCRIPT\", 28, \"<module>\")]"'
	done
done
check "at least one interpreter was tested" test "$tested" -gt 0
# A script path with 2-, 3- and 4-byte UTF-8 characters (é, €, U+1F600)
# and the code points at the edges of the encodings (RFC 3629 s. 3: U+07FF
# the last of 2 bytes, U+0800 the first of 3, U+FFFF the last of 3,
# U+10000 the first of 4): Python holds it as a 4-byte-wide string, which
# pyframes.c writes back as UTF-8 byte for byte.
if [ -n "${first_py:-}" ]; then
	wide=$TMP/dir-é€😀-$(printf '\xdf\xbf\xe0\xa0\x80\xef\xbf\xbf\xf0\x90\x80\x80')
	mkdir -p "$wide" && cp "$SCRIPT" "$wide/fail_load.py"
	run wide PYTHONPATH="$first_d" -- timeout 60 "$first_py" "$wide/fail_load.py" "$FIX/sm80.cubin" released
	check "a script under $wide: python_stack names its file, every byte of é € U+1F600 U+07FF U+0800 U+FFFF U+10000 kept" \
		eval 'report wide "len(R) == 1 and R[0][\"python_stack\"][0][\"file\"] == \"$wide/fail_load.py\"
			and R[0][\"python_stack\"][0][\"line\"] == 11"'
fi
finish
