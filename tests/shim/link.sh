#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The driver's JIT linker under libkimg (shim/hook/hook_link.c), through the
# fake driver: a PTX input refused at cuLinkAddData / cuLinkAddFile (218:
# .target above the device, 222: .version above the driver's JIT) is
# reported like a module: the input's name and images, the device and its
# newest PTX ISA, the verdict, the link advice and the driver's JIT log;
# reached by symbol (the _v2 names cuda.h uses), dlsym (both names) and
# cuGetProcAddress. A link that works prints nothing. cuModuleLoadDataEx
# with JIT options brings its error log along.
. "$(dirname "$0")/../lib.bash" shim
sed 's/^\.version .*/.version 9.9/' "$FIX/compute80.ptx" >"$TMP/isa99.ptx"
grep -q '^\.version 9\.9$' "$TMP/isa99.ptx" || fail "make an ISA 9.9 PTX from compute80.ptx"

for access in direct dlsym dlsym2 gpa; do
	prog=$PROGS/link_dl
	[ $access = direct ] && prog=$PROGS/link_direct
	# which exported name each access reaches: cuda.h's _v2, or the plain one
	v2=_v2; [ $access = dlsym ] && v2=
	run "t$access" -- "$prog" $access data "$FIX/compute100.ptx" kern100.ptx
	check "$access: the wrappers are handed out" has "t$access" "cuLinkCreate owner: libkimg"
	check "$access: the program gets 218 from cuLinkAddData, unchanged" has "t$access" "cuLinkAddData: 218"
	check "$access: one report at cuLinkAddData$v2: input kern100.ptx, image compute_100 ISA 9.0, P3, device 9.0 / ISA 9.0" \
		report "t$access" "len(R) == 1 and R[0]['call'] == 'cuLinkAddData$v2' and R[0]['error']['code'] == 218
			and R[0]['link']['input'] == {'name': 'kern100.ptx', 'type': 'ptx'} and archs(R[0]) == ['compute_100']
			and R[0]['module']['images'][0]['ptx_isa'] == '9.0' and R[0]['verdict']['rule'] == 'P3'
			and R[0]['device']['sm'] == '9.0' and R[0]['device']['max_ptx_isa'] == '9.0'"
	check "$access: link advice: generate the PTX for compute_90; the driver's log is in the report" \
		report "t$access" "'generate it for compute_90 or lower' in R[0]['link']['advice']
			and 'kern100.ptx: SM version specified by .target' in R[0]['jit_log']"

	run "i$access" -- "$prog" $access data "$TMP/isa99.ptx" numba.ptx
	check "$access: ISA 9.9: the program gets 222" has "i$access" "cuLinkAddData: 222"
	check "$access: ISA 9.9: report 222, P4, the advice names the driver's ISA and forward compatibility" \
		report "i$access" "len(R) == 1 and R[0]['error']['code'] == 222 and R[0]['verdict']['rule'] == 'P4'
			and R[0]['link']['input']['name'] == 'numba.ptx' and R[0]['module']['images'][0]['ptx_isa'] == '9.9'
			and 'JIT-compiles ISA 9.0 at most' in R[0]['link']['advice']
			and 'forward-compatibility' in R[0]['link']['advice']"
done

run file -- "$PROGS/link_dl" gpa file "$TMP/isa99.ptx"
check "cuLinkAddFile: 222, the file is the module, the input named by its path" \
	eval 'has file "cuLinkAddFile: 222" && report file "len(R) == 1 and R[0][\"call\"] == \"cuLinkAddFile_v2\"
		and R[0][\"module\"][\"file\"] == \"$TMP/isa99.ptx\" and R[0][\"link\"][\"input\"][\"name\"] == \"$TMP/isa99.ptx\""'

run two -- "$PROGS/link_dl" dlsym2 two "$FIX/compute80.ptx" "$TMP/isa99.ptx"
check "two inputs, the second refused: both listed in order, the refused one named" \
	eval 'has two "cuLinkAddData: 0" && has two "cuLinkAddFile: 222" && report two "len(R) == 1
		and [i[\"name\"] for i in R[0][\"link\"][\"inputs\"]] == [\"good.ptx\", \"$TMP/isa99.ptx\"]
		and R[0][\"link\"][\"input\"][\"name\"] == \"$TMP/isa99.ptx\""'

# the same through cuLinkAddData twice (issue 23: the refused input must be
# looked up as the last one added, whichever call added it)
run twodata -- "$PROGS/link_dl" dlsym2 twodata "$FIX/compute80.ptx" "$TMP/isa99.ptx"
check "two cuLinkAddData inputs, the second refused: both listed in order, the refused one named" \
	eval 'has twodata "cuLinkAddData: 222" && report twodata "len(R) == 1 and R[0][\"call\"] == \"cuLinkAddData_v2\"
		and [i[\"name\"] for i in R[0][\"link\"][\"inputs\"]] == [\"good.ptx\", \"bad.ptx\"]
		and R[0][\"link\"][\"input\"][\"name\"] == \"bad.ptx\""'

# one buffer reused for two refused inputs of other names: two reports, each
# naming its input (the module key mixes in the input's name; diagnose.c)
run samebuf -- "$PROGS/link_dl" dlsym2 samebuf "$TMP/isa99.ptx" second.ptx
check "one buffer, two refused inputs (first.ptx, second.ptx): two reports, each its own input" \
	eval 'report samebuf "[r[\"link\"][\"input\"][\"name\"] for r in R] == [\"first.ptx\", \"second.ptx\"]"'

run good -- "$PROGS/link_dl" gpa data "$FIX/compute80.ptx" ok.ptx
check "a link that works: cuLinkComplete 0, no report, nothing on stderr" \
	eval 'has good "cuLinkComplete: 0" && report good "R == []" && [ ! -s "$TMP/good.err" ]'

run text KIMG_FORMAT=text KIMG_LOG= -- "$PROGS/link_dl" gpa data "$TMP/isa99.ptx" numba.ptx
check "text: the link line, the link advice and the JIT log" \
	eval 'grep -qxF "kimg:   link:   input \"numba.ptx\" (ptx) refused" "$TMP/text.err" &&
		grep -q "^kimg:   link fix: This PTX (.target compute_80) is ISA 9.9" "$TMP/text.err" &&
		grep -q "^kimg:   jit log: ptxas fatal   : numba.ptx: Unsupported .version" "$TMP/text.err"'

run modex -- "$PROGS/link_dl" dlsym modex "$TMP/isa99.ptx"
check "cuModuleLoadDataEx with an error log buffer: 222 reported with the driver's log" \
	eval 'has modex "cuModuleLoadDataEx: 222" && report modex "len(R) == 1 and R[0][\"verdict\"][\"rule\"] == \"P4\"
		and R[0][\"jit_log\"].startswith(\"ptxas fatal\") and \"link\" not in R[0]"'
finish
