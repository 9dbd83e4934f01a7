#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# scripts/kimg-run: library lookup, LD_PRELOAD handling, option -> variable
# mapping, untouched arguments, exit status, error messages and --help.
# Uses a stand-in libkimg.so (an empty shared object) in a copied tree, so it
# tests the launcher alone; the real library is exercised in install.sh.
. "$(dirname "$0")/../lib.bash"
# Start from a clean slate: the outer environment must not steer the launcher.
unset KIMG_LIB KIMG_FORMAT KIMG_LOG KIMG_FALLBACK KIMG_AUDIT KIMG_ON_ERROR KIMG_VERBOSE

# A fake checkout: $TMP/tree/scripts/kimg-run + $TMP/tree/<build>/libkimg.so
# (+ VERSION, which a checkout's kimg-run --version reads).
mkdir -p "$TMP/tree/scripts" "$TMP/tree/mybuild" "$TMP/tree/build"
cp "$LAUNCHER" "$TMP/tree/scripts/kimg-run"
cp "$ROOT/VERSION" "$TMP/tree/VERSION"
# a shared object that is not kimg, built by make (test-programs)
EMPTY_SO=$BUILD_DIR/tests/empty.so
require "$EMPTY_SO" "make BUILD=$BUILD test-programs"
cp "$EMPTY_SO" "$TMP/tree/mybuild/libkimg.so"
cp "$TMP/tree/mybuild/libkimg.so" "$TMP/tree/build/libkimg.so"
RUN=$TMP/tree/scripts/kimg-run
LIB=$TMP/tree/mybuild/libkimg.so

# Environment of a command run through kimg-run, one VAR=value per line.
run_env() { env -u KIMG_LIB BUILD=mybuild "$RUN" "$@" env; }
var() { grep -E "^$1=" <<<"$2" | head -n1 | cut -d= -f2-; }

# --- library lookup ---
expect_eq "build tree: \$BUILD/libkimg.so next to the script (BUILD=mybuild)" \
	"$LIB" "$(env -u KIMG_LIB BUILD=mybuild "$RUN" --print-lib)"
expect_eq "build tree: BUILD unset -> build/libkimg.so" \
	"$TMP/tree/build/libkimg.so" "$(env -u KIMG_LIB -u BUILD "$RUN" --print-lib)"
expect_eq "absolute BUILD is used as is" \
	"$LIB" "$(env -u KIMG_LIB BUILD="$TMP/tree/mybuild" "$RUN" --print-lib)"
expect_eq "KIMG_LIB wins over the build tree" \
	"$TMP/tree/build/libkimg.so" "$(KIMG_LIB=$TMP/tree/build/libkimg.so BUILD=mybuild "$RUN" --print-lib)"
expect_eq "relative KIMG_LIB is made absolute (the command may chdir)" \
	"$TMP/tree/build/libkimg.so" "$(cd "$TMP/tree" && KIMG_LIB=build/libkimg.so "$RUN" --print-lib)"
mkdir -p "$TMP/prefix/bin" "$TMP/prefix/lib"
cp "$LAUNCHER" "$TMP/prefix/bin/kimg-run"
cp "$LIB" "$TMP/prefix/lib/libkimg.so"
expect_eq "installed prefix: bin/../lib/libkimg.so" \
	"$TMP/prefix/lib/libkimg.so" "$(env -u KIMG_LIB -u BUILD "$TMP/prefix/bin/kimg-run" --print-lib)"
expect_eq "installed kimg-run ignores \$BUILD (it is not in a checkout)" \
	"$TMP/prefix/lib/libkimg.so" "$(env -u KIMG_LIB BUILD="$TMP/tree/mybuild" "$TMP/prefix/bin/kimg-run" --print-lib)"
mkdir -p "$TMP/elsewhere"
ln -s "$TMP/prefix/bin/kimg-run" "$TMP/elsewhere/kimg-run"
expect_eq "a symlink to the script resolves to the script's prefix" \
	"$TMP/prefix/lib/libkimg.so" "$(env -u KIMG_LIB -u BUILD "$TMP/elsewhere/kimg-run" --print-lib)"
expect_eq "found through PATH too" \
	"$TMP/prefix/lib/libkimg.so" "$(env -u KIMG_LIB -u BUILD PATH="$TMP/prefix/bin:$PATH" kimg-run --print-lib)"

# --- missing library: exit 2 + message ---
rm -f "$TMP/prefix/lib/libkimg.so"
out=$(env -u KIMG_LIB -u BUILD "$TMP/prefix/bin/kimg-run" true 2>&1); rc=$?
expect_eq "missing libkimg.so -> exit 2" 2 "$rc"
expect_match "missing libkimg.so -> says where it looked and how to fix" \
	"^kimg-run: libkimg.so not found \(looked in .*/prefix/lib/\); build it with 'make' or set KIMG_LIB=" "$out"
out=$(env -u KIMG_LIB BUILD=nonexistent "$RUN" true 2>&1); rc=$?
expect_eq "missing libkimg.so in a checkout -> exit 2" 2 "$rc"
expect_eq "missing libkimg.so in a checkout -> names both places" \
	"kimg-run: libkimg.so not found (looked in $TMP/tree/nonexistent/ and $TMP/tree/lib/); build it with 'make' or set KIMG_LIB=/path/to/libkimg.so" "$out"
out=$(KIMG_LIB=$TMP/nope.so "$RUN" true 2>&1); rc=$?
expect_eq "KIMG_LIB naming a missing file -> exit 2" 2 "$rc"
expect_eq "KIMG_LIB naming a missing file -> message" "kimg-run: KIMG_LIB=$TMP/nope.so: no such file" "$out"

# --- LD_PRELOAD ---
e=$(env -u LD_PRELOAD BUILD=mybuild "$RUN" env)
expect_eq "LD_PRELOAD unset -> just libkimg.so" "$LIB" "$(var LD_PRELOAD "$e")"
cp "$EMPTY_SO" "$TMP/other1.so"
cp "$EMPTY_SO" "$TMP/other2.so"
e=$(LD_PRELOAD="$TMP/other1.so $TMP/other2.so" BUILD=mybuild "$RUN" env)
expect_eq "existing space-separated LD_PRELOAD kept after libkimg.so" \
	"$LIB:$TMP/other1.so:$TMP/other2.so" "$(var LD_PRELOAD "$e")"
e=$(LD_PRELOAD="$TMP/other1.so:$TMP/other2.so" BUILD=mybuild "$RUN" env)
expect_eq "existing colon-separated LD_PRELOAD kept after libkimg.so" \
	"$LIB:$TMP/other1.so:$TMP/other2.so" "$(var LD_PRELOAD "$e")"
e=$(LD_PRELOAD="$TMP/other1.so" BUILD=mybuild "$RUN" "$RUN" env)
expect_eq "nested kimg-run does not preload libkimg.so twice" \
	"$LIB:$TMP/other1.so" "$(var LD_PRELOAD "$e")"
cp "$TMP/other1.so" "$TMP/star*.so"   # a real file whose name is a glob
e=$(LD_PRELOAD="$TMP/star*.so" BUILD=mybuild "$RUN" env)
expect_eq "a glob character in LD_PRELOAD is not expanded" "$LIB:$TMP/star*.so" "$(var LD_PRELOAD "$e")"

# --- option -> environment ---
base=$(run_env)
for v in KIMG_FORMAT KIMG_LOG KIMG_FALLBACK KIMG_AUDIT KIMG_ON_ERROR KIMG_VERBOSE; do
	expect_eq "no option -> $v not set by kimg-run" 0 "$(grep -c "^$v=" <<<"$base")"
done
expect_eq "--json -> KIMG_FORMAT=json" json "$(var KIMG_FORMAT "$(run_env --json)")"
expect_eq "--log PATH -> KIMG_LOG=PATH (templates untouched)" 'logs/kimg-%h-%p-%r.log' \
	"$(var KIMG_LOG "$(run_env --log 'logs/kimg-%h-%p-%r.log')")"
expect_eq "--log=PATH form" '/tmp/k %p.log' "$(var KIMG_LOG "$(run_env '--log=/tmp/k %p.log')")"
expect_eq "--fallback ptx -> KIMG_FALLBACK=ptx" ptx "$(var KIMG_FALLBACK "$(run_env --fallback ptx)")"
expect_eq "--fallback force-ptx -> KIMG_FALLBACK=force-ptx" force-ptx "$(var KIMG_FALLBACK "$(run_env --fallback force-ptx)")"
expect_eq "--fallback force-ptx:GLOB keeps the glob" 'force-ptx:*/_C*.so' \
	"$(var KIMG_FALLBACK "$(run_env --fallback 'force-ptx:*/_C*.so')")"
expect_eq "--audit -> KIMG_AUDIT=1" 1 "$(var KIMG_AUDIT "$(run_env --audit)")"
expect_eq "--exit-code 86 -> KIMG_ON_ERROR=exit:86" exit:86 "$(var KIMG_ON_ERROR "$(run_env --exit-code 86)")"
expect_eq "--exit-code=3 form" exit:3 "$(var KIMG_ON_ERROR "$(run_env --exit-code=3)")"
expect_eq "--verbose -> KIMG_VERBOSE=1" 1 "$(var KIMG_VERBOSE "$(run_env --verbose)")"
e=$(run_env --json --audit --verbose --exit-code 9 --log "$TMP/L" --fallback ptx --)
expect_eq "all options together, then --" "json 1 1 exit:9 $TMP/L ptx" \
	"$(var KIMG_FORMAT "$e") $(var KIMG_AUDIT "$e") $(var KIMG_VERBOSE "$e") $(var KIMG_ON_ERROR "$e") $(var KIMG_LOG "$e") $(var KIMG_FALLBACK "$e")"
expect_eq "a variable already in the environment is passed through" text \
	"$(var KIMG_FORMAT "$(KIMG_FORMAT=text BUILD=mybuild "$RUN" env)")"

# --- usage errors: exit 2 with a message ---
usage_case() { # what expected-message-regex args...
	local what=$1 re=$2; shift 2
	out=$(BUILD=mybuild "$RUN" "$@" 2>&1); rc=$?
	expect_eq "$what -> exit 2" 2 "$rc"
	expect_match "$what -> message" "$re" "$out"
}
usage_case "no command" "^kimg-run: no command given" --json
usage_case "unknown option" "^kimg-run: unknown option: --bogus" --bogus true
usage_case "--exit-code without value" "^kimg-run: option --exit-code needs a value" --exit-code
usage_case "--exit-code 256" "^kimg-run: --exit-code: expected a number from 0 to 255, got '256'" --exit-code 256 true
usage_case "--exit-code abc" "^kimg-run: --exit-code: expected a number from 0 to 255, got 'abc'" --exit-code abc true
usage_case "--fallback jit" "^kimg-run: --fallback: expected ptx, force-ptx or force-ptx:GLOB, got 'jit'" --fallback jit true
usage_case "--fallback force-ptx: (empty glob)" "got 'force-ptx:'" --fallback force-ptx: true

# --- --log PATH: created as libkimg.so creates it, or refused as it would refuse ---
(umask 022; BUILD=mybuild "$RUN" --log "$TMP/new.log" true)
expect_eq "--log a new PATH: created before the command, mode 0600 (umask 022)" 600 "$(stat -c %a "$TMP/new.log" 2>&1)"
echo kept >"$TMP/kept.log"
BUILD=mybuild "$RUN" --log "$TMP/kept.log" true
expect_eq "--log an existing file of this user: kept as it is" kept "$(cat "$TMP/kept.log")"
ln -s "$TMP/kept.log" "$TMP/link.log"
usage_case "--log a symbolic link" "^kimg-run: --log $TMP/link.log: is a symbolic link" --log "$TMP/link.log" true
usage_case "--log a directory" "^kimg-run: --log $TMP: is a directory" --log "$TMP" true
usage_case "--log in a missing directory" "^kimg-run: --log $TMP/none/k.log: directory $TMP/none does not exist" \
	--log "$TMP/none/k.log" true
if [ "$(id -u)" = 0 ]; then
	echo other >"$TMP/other.log"
	chown 65534 "$TMP/other.log"
	usage_case "--log a file of another user" "^kimg-run: --log $TMP/other.log: belongs to another user" \
		--log "$TMP/other.log" true
elif [ "${CI:-}" = true ]; then
	fail "--log a file of another user: needs root to chown, and CI runs as root"
else
	echo "skip --log a file of another user: needs root (chown); run as root to cover it"
fi
BUILD=mybuild "$RUN" --log "$TMP/t-%p.log" true
expect_eq "--log with a template: nothing created (one file per process, the library's)" 0 \
	"$(ls "$TMP" | grep -c '^t-')"

# --- the command: arguments untouched, exit status returned ---
cat >"$TMP/args" <<'EOF'
#!/bin/sh
for a in "$@"; do printf '[%s]\n' "$a"; done
EOF
chmod +x "$TMP/args"
got=$(cd "$TMP" && BUILD=mybuild "$RUN" ./args 'a b' '"q"' "it's" '*' '$HOME' '' '--json' '-- x')
want=$(printf '%s\n' '[a b]' '["q"]' "[it's]" '[*]' '[$HOME]' '[]' '[--json]' '[-- x]')
expect_eq "arguments with spaces, quotes, globs, \$, empty and option-like words pass untouched" "$want" "$got"
got=$(BUILD=mybuild "$RUN" -- "$TMP/args" --verbose)
expect_eq "after --, an option-like command argument is the command's" "[--verbose]" "$got"
BUILD=mybuild "$RUN" sh -c 'exit 7'; rc=$?
expect_eq "exit status of the command is returned (sh -c 'exit 7' -> 7)" 7 "$rc"
BUILD=mybuild "$RUN" true; rc=$?
expect_eq "exit status 0 is returned" 0 "$rc"
# The command's pid is kimg-run's own: kimg-run execs (no wrapper process
# to swallow signals or change the status).
got=$(BUILD=mybuild "$RUN" sh -c 'echo "cmd $$"' & echo "bg $!"; wait)
expect_eq "the command replaces kimg-run (exec: same pid)" \
	"$(sed -n 's/^bg //p' <<<"$got")" "$(sed -n 's/^cmd //p' <<<"$got")"
got=$(echo piped | BUILD=mybuild "$RUN" cat)
expect_eq "stdin reaches the command" piped "$got"

out=$(BUILD=mybuild "$RUN" no-such-command-kimg 2>&1); rc=$?
expect_eq "missing command -> exit 127" 127 "$rc"
expect_match "missing command -> message" "^kimg-run: no-such-command-kimg: command not found" "$out"
out=$(BUILD=mybuild "$RUN" ./no/such/path 2>&1); rc=$?
expect_eq "missing command path -> exit 127" 127 "$rc"
expect_eq "missing command path -> message" "kimg-run: ./no/such/path: command not found" "$out"
printf 'x\n' >"$TMP/notexec"
out=$(BUILD=mybuild "$RUN" "$TMP/notexec" 2>&1); rc=$?
expect_eq "non-executable command -> exit 126" 126 "$rc"
expect_eq "non-executable command -> message" "kimg-run: $TMP/notexec: not an executable file" "$out"
if ! PATH=$PATH type -P exit >/dev/null; then
	out=$(BUILD=mybuild "$RUN" exit 2>&1); rc=$?
	expect_eq "a shell builtin with no executable on PATH ('exit') counts as missing" "127 kimg-run: exit: command not found" "$rc ${out%% (PATH=*}"
else
	skip_allowed "builtin-as-missing check" "this PATH has an 'exit' executable"
fi

# --- --help and --version ---
help=$(BUILD=mybuild "$RUN" --help); rc=$?
expect_eq "--help exits 0" 0 "$rc"
for word in --json --log --fallback --audit --exit-code --verbose --print-lib --version \
	KIMG_LOG KIMG_FORMAT KIMG_VERBOSE KIMG_ON_ERROR KIMG_FALLBACK KIMG_AUDIT KIMG_SKIP KIMG_DISABLE KIMG_LIB \
	'%p' '%h' '%r' 'exit:N' 'force-ptx:GLOB'; do
	expect_match "--help documents $word" "(^|[^A-Za-z_-])$(sed 's/[%:]/[&]/g' <<<"$word")" "$help"
done
skip_default='nvcc,cicc,ptxas,fatbinary,nvlink,gcc,g++,cc,c++,cc1,cc1plus,ld,ld.gold,ld.lld,as,ninja,make,cmake'
flat=$(tr -d ' \n' <<<"$help")
if [[ $flat == *"Default:$skip_default"* ]]; then ok "--help gives the KIMG_SKIP default list exactly"; else
	fail "--help gives the KIMG_SKIP default list exactly" "want Default:$skip_default"; fi
# Every KIMG_* variable the library reads (as spelled in shim/diag/options.c) is documented.
if [ -f "$ROOT/shim/diag/options.c" ]; then
	for v in $(grep -oE '"KIMG_[A-Z_]+' "$ROOT/shim/diag/options.c" | tr -d '"=' | sort -u); do
		expect_match "--help documents $v (read by shim/diag/options.c)" "$v" "$help"
	done
else
	fail "shim/diag/options.c missing: cannot cross-check --help against the variables the library reads"
fi
expect_eq "--version prints 'kimg-run' and the checkout's VERSION" "kimg-run $(cat "$ROOT/VERSION")" "$(BUILD=mybuild "$RUN" --version)"

# POSIX sh: the launcher must run under dash (Debian/Ubuntu /bin/sh), not just bash.
if command -v dash >/dev/null; then
	got=$(BUILD=mybuild dash "$RUN" --json sh -c 'echo "$KIMG_FORMAT"; exit 5'); rc=$?
	expect_eq "runs under dash: option mapped and exit status kept" "json 5" "$got $rc"
else
	optional dash "Debian's /bin/sh (essential package): the POSIX-sh check not run"
fi
# --- a refused run leaves no log file (issue 22 item 18) ---
mkdir -p "$TMP/with space"
cp "$LIB" "$TMP/with space/libkimg.so"
KIMG_LIB="$TMP/with space/libkimg.so" "$RUN" --log "$TMP/r1.log" true >/dev/null 2>"$TMP/r1.err"
expect_eq "a library path with a space: refused, exit 2" 2 "$?"
check "... and --log PATH was not created" test ! -e "$TMP/r1.log"
check "... said why" grep -q "contains a space or colon, which LD_PRELOAD cannot express" "$TMP/r1.err"
BUILD=mybuild "$RUN" --log "$TMP/r2.log" /nonexistent/command >/dev/null 2>&1
expect_eq "a command that does not exist: exit 127" 127 "$?"
check "... and --log PATH was not created" test ! -e "$TMP/r2.log"
BUILD=mybuild "$RUN" --log "$TMP/r3.log" >/dev/null 2>&1
expect_eq "no command: exit 2" 2 "$?"
check "... and --log PATH was not created" test ! -e "$TMP/r3.log"
KIMG_LIB="$TMP/none/libkimg.so" "$RUN" --log "$TMP/r4.log" true >/dev/null 2>&1
check "a missing library: refused, --log PATH not created" test ! -e "$TMP/r4.log"
BUILD=mybuild "$RUN" --log "$TMP/r5.log" true
check "(the oracle: the same run with nothing wrong creates it)" test -e "$TMP/r5.log"
# python -m kimg --libpath from a package whose path has a space or colon
for dir in "with space" "with:colon"; do
	mkdir -p "$TMP/py/$dir/kimg"
	cp "$ROOT"/packaging/python/kimg/*.py "$TMP/py/$dir/kimg/"
	cp "$LIB" "$TMP/py/$dir/kimg/libkimg.so"
	out=$(cd "$TMP/py/$dir" && python3 -m kimg --libpath 2>"$TMP/py.err"); rc=$?
	expect_eq "python -m kimg --libpath under '$dir': exit 2, nothing on stdout (LD_PRELOAD=\$(...) stays empty)" "2 " "$rc $out"
	check "... said why" grep -q "which LD_PRELOAD cannot express" "$TMP/py.err"
done
mkdir -p "$TMP/py/plain/kimg"
cp "$ROOT"/packaging/python/kimg/*.py "$TMP/py/plain/kimg/"
cp "$LIB" "$TMP/py/plain/kimg/libkimg.so"
expect_eq "(the oracle: a plain path is printed)" "$TMP/py/plain/kimg/libkimg.so" "$(cd "$TMP/py/plain" && python3 -m kimg --libpath)"
finish
