#!/usr/bin/env bash
# instr.sh: the server's in-memory benchmarks (BenchmarkServerNative and
# friends: a fake connection replays requests, no system call) counted in
# user-space instructions per request with valgrind's callgrind, for one
# or more git revisions. Unlike time, an instruction count does not move
# with the machine's load or with where the linker put the hot code (see
# inmem.sh), so a change of 1% on the per-request path shows on a shared
# 2-core VM, in one run. It is not time: a cache miss or a locked
# instruction costs more than an add; read it beside inmem.sh and
# server.sh, as the first to look at.
#
# Each case runs twice under callgrind (N and 3N requests, GOMAXPROCS=1;
# GOGC=off, for the cases allocate nothing per request and a collection
# in one run and not the other would count as the requests' work;
# asynchronous preemption off, which callgrind's signal handling needs):
# the difference over 2N is the cost of one request, without the
# process's start and the benchmark's setup. With --functions, the
# functions whose share per request differs most between the first
# revision and each other one. With --cache, callgrind also simulates
# the caches and branch predictor, and each revision's column adds its
# first-level instruction-cache misses and mispredicted conditional
# branches per request ("Ir/I1mr/Bcm"): fewer instructions can still
# take as long when the hot code misses the instruction cache more
# (valgrind's model of this CPU's caches: a hint, not a measurement).
#
# Usage:
#   bash bench/instr.sh dc17a0e HEAD .                # "." is the working tree
#   bash bench/instr.sh --bench 'BenchmarkServerNative/(wrk-GET|POST-JSON)$' --functions main HEAD
#   bash bench/instr.sh --n 20000 --bench 'BenchmarkServerHandler' HEAD
#   bash bench/instr.sh --cache --bench 'BenchmarkServerNative/wrk-GET$' dc17a0e HEAD
set -euo pipefail

BENCH='BenchmarkServerNative/'
N=20000
FUNCS=0
CACHE=0
REVS=()
while (($# > 0)); do
	case $1 in
	--bench) BENCH=$2; shift 2 ;;
	--n) N=$2; shift 2 ;;
	--functions) FUNCS=1; shift ;;
	--cache) CACHE=1; shift ;;
	-h | --help) sed -n '2,22p' "$0"; exit 0 ;;
	-*) echo "instr.sh: unknown flag '$1' (see --help)" >&2; exit 2 ;;
	*) REVS+=("$1"); shift ;;
	esac
done
if ((${#REVS[@]} == 0)); then
	echo "instr.sh: name at least one revision (see --help)" >&2
	exit 2
fi
[[ $N =~ ^[0-9]+$ ]] && ((N > 0)) || { echo "instr.sh: --n wants a positive whole number" >&2; exit 2; }
if ! command -v valgrind >/dev/null; then
	if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
		echo "valgrind not found: installing it with apt-get" >&2
		apt-get update -qq >/dev/null && apt-get install -y -qq valgrind >/dev/null
	else
		echo "instr.sh needs valgrind (Debian: apt-get install valgrind)" >&2
		exit 2
	fi
fi

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/hotpath-instr.XXXXXX")
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"

for rev in "${REVS[@]}"; do
	if [[ $rev == . ]]; then # the working tree, uncommitted changes included
		(cd "$ROOT" && go test -c -o "$TMP/bin-$rev.test" ./server)
		continue
	fi
	src=$TMP/src-$rev
	git -C "$ROOT" worktree add --detach -q "$src" "$rev"
	(cd "$src" && go test -c -o "$TMP/bin-$rev.test" ./server)
	git -C "$ROOT" worktree remove --force "$src"
done
# The cases: the benchmark binary lists them without running them long.
mapfile -t CASES < <(cd "$ROOT/server" && "$TMP/bin-${REVS[0]}.test" -test.run '^$' -test.bench "$BENCH" -test.benchtime 1x |
	awk '/^Benchmark/ { sub(/-[0-9]+$/, "", $1); print $1 }')
((${#CASES[@]} > 0)) || { echo "instr.sh: -bench '$BENCH' matches no benchmark" >&2; exit 2; }

# count REV CASE REQUESTS: callgrind's totals for one run (instructions;
# with --cache, then I1 misses and mispredicted conditional branches);
# its profile is kept as $TMP/REV-CASE-REQUESTS.out.
SIM=()
((CACHE)) && SIM=(--cache-sim=yes --branch-sim=yes)
count() {
	local out=$TMP/$1-${2//\//_}-$3
	(cd "$ROOT/server" && GOGC=off GODEBUG=asyncpreemptoff=1 GOMAXPROCS=1 valgrind --tool=callgrind "${SIM[@]}" \
		--callgrind-out-file="$out.out" "$TMP/bin-$1.test" -test.run '^$' \
		-test.bench "^${2//\//\$/^}\$" -test.benchtime "$3x") >"$out.log" 2>&1 ||
		{ echo "instr.sh: $1 $2 failed under valgrind:" >&2; tail -n 20 "$out.log" >&2; exit 1; }
	# "Events : Ir Dr Dw I1mr ... Bc Bcm ..." names the columns of
	# "Collected : ...".
	awk '/Events/ { for (i = 4; i <= NF; i++) col[$i] = i }
		/Collected/ { gsub(/,/, ""); printf "%s", $col["Ir"]; if (col["I1mr"]) printf " %s %s", $col["I1mr"], $col["Bcm"]; print "" }' "$out.log"
}

what="user-space instructions per request"
((CACHE)) && what="user-space instructions/I1 misses/mispredicted branches per request"
echo "# $(go version), valgrind $(valgrind --version), $what ($N and $((3 * N)) requests)"
printf '%-40s' case
w=14
((CACHE)) && w=22
for rev in "${REVS[@]}"; do printf " %${w}s" "$rev"; done
((${#REVS[@]} < 2)) || printf ' %9s' "vs ${REVS[0]}"
echo
for c in "${CASES[@]}"; do
	printf '%-40s' "${c#Benchmark}"
	first=""
	for rev in "${REVS[@]}"; do
		read -ra a < <(count "$rev" "$c" "$N")
		read -ra b < <(count "$rev" "$c" $((3 * N)))
		per=$(((b[0] - a[0]) / (2 * N)))
		if ((CACHE)); then
			printf ' %22s' "$per/$(awk -v a="${a[1]}" -v b="${b[1]}" -v m="${a[2]}" -v n="${b[2]}" -v r=$((2 * N)) \
				'BEGIN { printf "%.1f/%.1f", (b - a) / r, (n - m) / r }')"
		else
			printf ' %14d' "$per"
		fi
		first=${first:-$per}
		last=$per
	done
	((${#REVS[@]} < 2)) || awk -v a="$first" -v b="$last" 'BEGIN { printf " %+8.1f%%", (b - a) * 100 / a }'
	echo
done
((${#REVS[@]} < 2)) || echo "(the last column compares the last revision with the first)"

if ((FUNCS)); then
	for c in "${CASES[@]}"; do
		for rev in "${REVS[@]:1}"; do
			echo
			echo "# ${c#Benchmark}: instructions per request by function, $rev against ${REVS[0]} (|difference| >= 3)"
			for r in "${REVS[0]}" "$rev"; do
				for n in "$N" $((3 * N)); do
					callgrind_annotate --threshold=100 --auto=no "$TMP/$r-${c//\//_}-$n.out" >"$TMP/$r-$n.ann" 2>/dev/null
				done
			done
			python3 - "$TMP/${REVS[0]}" "$TMP/$rev" "$N" <<'EOF'
import re, sys
def load(p):
    d = {}
    for line in open(p):
        m = re.match(r'\s*([\d,]+) \([^)]*\)\s+\S+?:(\S+)', line)
        if m and 'PROGRAM' not in line:
            d[m.group(2)] = d.get(m.group(2), 0) + int(m.group(1).replace(',', ''))
    return d
n = int(sys.argv[3])
def per(base):
    a, b = load(f"{base}-{n}.ann"), load(f"{base}-{3*n}.ann")
    return {k: (b.get(k, 0) - a.get(k, 0)) / (2 * n) for k in set(a) | set(b)}
x, y = per(sys.argv[1]), per(sys.argv[2])
rows = sorted((y.get(k, 0) - x.get(k, 0), x.get(k, 0), y.get(k, 0), k) for k in set(x) | set(y))
for d, a, b, k in rows:
    if abs(d) >= 3:
        print("%+8.1f %8.1f %8.1f  %s" % (d, a, b, k))
EOF
		done
	done
fi
