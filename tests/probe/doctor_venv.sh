#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# doctor reads the sys.path of a virtual environment from its files, without
# starting the interpreter (issue 27, probe/python_venv.c), and asks Python
# whenever the files do not say it all. Oracles: an "interpreter" that is an
# ELF file but not Python (/bin/false: any run of it fails, so an answer
# proves it was not started), the paths written here by hand, and the real
# python3's own answer for a venv made by `python3 -m venv`
# (KIMG_DOCTOR_PYTHON=run against =read, the whole --json page equal).
. "$(dirname "$0")/../lib.bash" probe
case $PROBE in /*) ;; *) PROBE=$ROOT/$PROBE ;; esac
false_elf=$(type -P false)
# a base installation and a venv on it, of files only
base=$TMP/base v=$TMP/fv
mkdir -p "$base/bin" "$base/lib/python3.12/lib-dynload" "$v/bin" "$v/lib/python3.12/site-packages/foo" "$TMP/extra/pkg" \
	"$v/lib/python3.12/site-packages/rel"
: >"$base/lib/python3.12/os.py"
sp=$v/lib/python3.12/site-packages
cp "$false_elf" "$v/bin/python"
cp "$FX/sm80_exe" "$sp/foo/_C.so"
cp "$FX/sm80_exe" "$TMP/extra/pkg/_D.so"
cfg() { printf 'home = %s/bin\ninclude-system-site-packages = %s\nversion = %s\n' "$base" "${1:-false}" "${2:-3.12.4}" >"$v/pyvenv.cfg"; }
cfg
printf '# a comment\n%s/extra\n\nrel\n/nonexistent/dir\n   \n' "$TMP" >"$sp/a.pth"
# doctor: the run of each case, PYTHONPATH and PYTHONHOME unset, the
# assignments of doctor_env made
doctor_env=()
doctor() {
	env -C "$TMP" -u PYTHONPATH -u PYTHONHOME "${doctor_env[@]}" timeout -k 2 60 "$PROBE" doctor --sm 9.0 --json --python "$v/bin/python" \
		>"$TMP/out" 2>"$TMP/err"
	rc=$?
}

doctor
expect_rc 1 "a venv whose interpreter is not Python (/bin/false): doctor answers (it did not start it), foo fails on 9.0"
expect_json "... sys.path read from the files: the site-packages, then the .pth directory (rel, inside it, walked with it; absent ones dropped)" \
	'd["python"]["paths"] == ["'"$sp"'", "'"$TMP/extra"'"]'
expect_json "... sys.executable as named, the version from pyvenv.cfg, the cwd" \
	'd["python"]["executable"] == "'"$v/bin/python"'" and d["python"]["version"] == "3.12.4" and d["python"]["cwd"] == "'"$TMP"'"'
expect_json "... both libraries found and judged" 'd["summary"]["cannot_run"] >= 2'
doctor_env=(KIMG_DOCTOR_PYTHON=run)
doctor
doctor_env=()
expect_rc 2 "KIMG_DOCTOR_PYTHON=run: the interpreter is asked (and /bin/false fails)"

# each thing the files cannot say sends doctor to Python (here: /bin/false, exit 2)
fallback() { # WHAT REASON: with the change made, the default asks Python; =read says why
	doctor
	expect_rc 2 "$1: Python is asked (the files do not say it all)"
	local saved=("${doctor_env[@]}")
	doctor_env+=(KIMG_DOCTOR_PYTHON=read)
	doctor
	doctor_env=("${saved[@]}")
	expect_rc 2 "... KIMG_DOCTOR_PYTHON=read: an error"
	expect_grep "... naming why: $2" "$TMP/err" "$2"
}
: >"$sp/sitecustomize.py"
fallback "a sitecustomize.py in site-packages" "a sitecustomize module is in $sp"
rm "$sp/sitecustomize.py"
printf 'import sys; sys.path.append("/x")\n' >"$sp/b.pth"
fallback "a .pth line that runs code" "$sp/b.pth runs code"
rm "$sp/b.pth"
cfg true
fallback "include-system-site-packages = true" "includes the system site-packages"
cfg false 3.13.0rc1
fallback "a pre-release version (sys.version would say 3.13.0rc1)" "names no release version X.Y.Z"
cfg
doctor_env=(PYTHONPATH=/tmp)
fallback "PYTHONPATH set" "PYTHONPATH is set"
doctor_env=(PYTHONUNBUFFERED=1)
doctor
expect_rc 1 "PYTHONUNBUFFERED=1 (common in images) leaves sys.path alone: still read from the files"
rm "$v/pyvenv.cfg"
doctor
expect_rc 2 "no pyvenv.cfg: not a venv, Python is asked"

# the real python3: its venv read from the files equals its own answer
# (made by the interpreter's real file: python3 on PATH may be a link in
# another directory, tests/lib.bash's $TMP/.python; a venv made through
# such a link is the case below)
py_file=$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))' 2>/dev/null)
if [ -n "$py_file" ] && "$py_file" -c 'import venv' 2>/dev/null && "$py_file" -m venv --without-pip "$TMP/rv" 2>/dev/null; then
	rsp=$(echo "$TMP"/rv/lib/python3.*/site-packages)
	mkdir -p "$rsp/inner" "$TMP/rextra"
	cp "$FX/sm80_exe" "$TMP/rextra/_E.so"
	printf '%s/rextra\ninner\n# c\n../site-packages/inner\n/nonexistent\n' "$TMP" >"$rsp/z.pth"
	page() { env -u PYTHONPATH -u PYTHONHOME -C "$TMP" KIMG_DOCTOR_PYTHON=$1 timeout -k 2 60 "$PROBE" doctor --sm 9.0 --json \
		--python "$TMP/rv/bin/python" >"$TMP/page.$1" 2>"$TMP/page.$1.err"; echo $?; }
	rc_run=$(page run) rc_read=$(page read)
	if [ "$rc_read" = 2 ] && grep -q "sitecustomize\|lib64\|not an ELF" "$TMP/page.read.err"; then
		skip_allowed "the real python3's venv read from its files" "$(cat "$TMP/page.read.err")"
	else
		check "real python3 venv: KIMG_DOCTOR_PYTHON=read and =run both exit 1 (rc $rc_read, $rc_run)" test "$rc_read" = 1 -a "$rc_run" = 1
		check "... the same --json page (seconds aside), sys.path read from the files as Python gives it" python3 -c '
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
a["summary"].pop("seconds"); b["summary"].pop("seconds")
sys.exit(0 if a == b and len(a["python"]["paths"]) == 2 else 1)' "$TMP/page.run" "$TMP/page.read"
	fi
	# a venv made through a link to the interpreter in a directory of its
	# own (a version manager's, as pyenv's): home names that directory,
	# which holds no library; Python follows the link, and so must the read
	real_py=$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))')
	mkdir -p "$TMP/lnk" && ln -sf "$real_py" "$TMP/lnk/python3"
	if "$TMP/lnk/python3" -m venv --without-pip "$TMP/lv" 2>/dev/null; then
		lpage() { env -u PYTHONPATH -u PYTHONHOME -C "$TMP" KIMG_DOCTOR_PYTHON=$1 timeout -k 2 60 "$PROBE" doctor --sm 9.0 --json \
			--python "$TMP/lv/bin/python" >"$TMP/lpage.$1" 2>"$TMP/lpage.$1.err"; echo $?; }
		lrun=$(lpage run) lread=$(lpage read)
		check "venv whose home is a link's directory: read and run give the same exit status (rc $lread, $lrun) and the same page" python3 -c '
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
a["summary"].pop("seconds"); b["summary"].pop("seconds")
sys.exit(0 if sys.argv[3] == sys.argv[4] and sys.argv[3] in ("0", "1") and a == b else 1)' "$TMP/lpage.run" "$TMP/lpage.read" "$lread" "$lrun"
	else
		missing "python3 -m venv through a link" "a venv whose home holds only a link" 1
	fi
else
	missing "python3 -m venv" "the real interpreter's answer for a venv, to compare" 3
fi
finish
