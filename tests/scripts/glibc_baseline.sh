#!/usr/bin/env bash
# libkimg.so is preloaded into programs on old distributions (CentOS 7 era
# containers: glibc 2.17). A reference to a newer symbol version makes ld.so
# refuse the preload ("GLIBC_2.32 not found", grgalex/nvshare#26;
# user-cases.md section 7). So: every glibc version the library *requires*
# is <= 2.17, except an optional dlsym@GLIBC_2.34 (glibc 2.34 moved dlsym
# into libc; a shim may reference it beside the 2.2.5 one).
# kimg-probe is only described (not checked): an executable linked on glibc
# >= 2.34 always needs __libc_start_main@GLIBC_2.34 from crt1.o, so a
# portable kimg-probe has to be built in an old-glibc container.
. "$(dirname "$0")/testlib.bash"
command -v objdump >/dev/null || { fail "objdump missing (binutils): cannot check symbol versions"; finish; exit; }

# newer_than_217 VERSION: true when GLIBC_x.y[.z] is newer than 2.17.
newer_than_217() {
	local v=${1#GLIBC_} major minor
	major=${v%%.*}; v=${v#*.}; minor=${v%%.*}
	[ "$major" -gt 2 ] || { [ "$major" -eq 2 ] && [ "$minor" -gt 17 ]; }
}

# check_object FILE ALLOW: ALLOW is a list of "symbol@GLIBC_x.y" exceptions.
check_object() {
	local f=$1 allow=$2 name=${1##*/}
	# Undefined dynamic symbols with their version: "*UND* ... GLIBC_2.34 dlsym"
	# (binutils prints hidden versions in parentheses; strip them).
	local refs bad=()
	refs=$(objdump -T "$f" | awk '$0 ~ /\*UND\*/ && $0 ~ /GLIBC_/ {v=""; for (i = 1; i <= NF; i++) if ($i ~ /GLIBC_/) v = $i; gsub(/[()]/, "", v); print $NF "@" v}' | sort -u)
	[ -n "$refs" ] || { fail "$name: objdump -T lists no versioned glibc reference (unexpected; is it dynamic?)"; return; }
	ok "$name: $(wc -l <<<"$refs") versioned glibc references read"
	while read -r r; do
		local v=${r#*@}
		[[ $v == GLIBC_[0-9]* ]] || continue
		newer_than_217 "$v" || continue
		[[ " $allow " == *" $r "* ]] && { ok "$name: $r is the allowed exception"; continue; }
		bad+=("$r")
	done <<<"$refs"
	if [ ${#bad[@]} -eq 0 ]; then ok "$name: no glibc symbol version newer than 2.17 required"; else
		fail "$name: no glibc symbol version newer than 2.17 required" "newer: ${bad[*]}"; fi
	# The loader's view: the version needs recorded in the file (objdump -p).
	local needs
	needs=$(objdump -p "$f" | awk '/required from libc\.so|required from libdl|required from libpthread|required from ld-linux/ {on=1; next} /required from/ {on=0} on && $NF ~ /^GLIBC_/ {print $NF}' | sort -u)
	local newest=""
	for v in $needs; do newer_than_217 "$v" && newest="$newest $v"; done
	local expect_extra=""
	for a in $allow; do [[ $refs == *"$a"* ]] && expect_extra="$expect_extra ${a#*@}"; done
	expect_eq "$name: version needs above 2.17 (objdump -p) are only those of the exceptions" \
		"$(tr ' ' '\n' <<<"$expect_extra" | sed '/^$/d' | sort -u | tr '\n' ' ')" \
		"$(tr ' ' '\n' <<<"$newest" | sed '/^$/d' | sort -u | tr '\n' ' ')"
}

if need "$BUILD_DIR/libkimg.so" "libkimg.so: make BUILD=$BUILD"; then
	check_object "$BUILD_DIR/libkimg.so" "dlsym@GLIBC_2.34"
fi
if [ -f "$BUILD_DIR/kimg-probe" ]; then
	newest=$(objdump -p "$BUILD_DIR/kimg-probe" | grep -oE 'GLIBC_[0-9]+\.[0-9]+(\.[0-9]+)?' | sort -uV | tail -n1)
	echo "note kimg-probe (informational): needs glibc ${newest#GLIBC_} as built here"
fi

# The checker itself must be able to fail: a throwaway object that calls a
# 2.34-only function (or, on an older host glibc, one newer than 2.17).
cat >"$TMP/new.c" <<'EOF'
#define _GNU_SOURCE
#include <sys/random.h>
#include <stddef.h>
int use_new(void *b, size_t n) { return (int)getrandom(b, n, 0); } /* getrandom: GLIBC_2.25 */
EOF
if gcc -shared -fPIC -o "$TMP/libnew.so" "$TMP/new.c" 2>/dev/null; then
	saved_fail=$T_FAIL saved_pass=$T_PASS
	check_object "$TMP/libnew.so" "" >"$TMP/selftest.out"
	caught=$((T_FAIL - saved_fail))
	T_FAIL=$saved_fail T_PASS=$saved_pass
	if [ "$caught" -gt 0 ] && grep -q 'getrandom@GLIBC_2.25' "$TMP/selftest.out"; then
		ok "self-test: a getrandom@GLIBC_2.25 reference is caught"
	else
		fail "self-test: a getrandom@GLIBC_2.25 reference is caught" "$(cat "$TMP/selftest.out")"
	fi
fi
# ... and must accept the one exception: a plain dlsym call, which binds to
# dlsym@GLIBC_2.34 on a glibc >= 2.34 host.
printf '#include <dlfcn.h>\nvoid *f(void) { return dlsym(RTLD_DEFAULT, "x"); }\n' >"$TMP/dl.c"
if gcc -shared -fPIC -o "$TMP/libdl_only.so" "$TMP/dl.c" -ldl 2>/dev/null &&
	objdump -T "$TMP/libdl_only.so" | grep -q 'GLIBC_2.34.*dlsym'; then
	saved_fail=$T_FAIL saved_pass=$T_PASS
	check_object "$TMP/libdl_only.so" "dlsym@GLIBC_2.34" >"$TMP/selftest2.out"
	caught=$((T_FAIL - saved_fail))
	T_FAIL=$saved_fail T_PASS=$saved_pass
	expect_eq "self-test: dlsym@GLIBC_2.34 alone passes as the allowed exception" 0 "$caught"
	[ "$caught" -eq 0 ] || cat "$TMP/selftest2.out"
fi
finish
