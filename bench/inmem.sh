#!/usr/bin/env bash
# inmem.sh: compare the server's in-memory benchmarks (no socket: a fake
# connection replays requests, BenchmarkServerNative and friends) between
# git revisions, with the code layout randomized. Moving functions between
# files, or a test file importing one more package, shifts where the
# linker puts the hot code, and that alone moves these benchmarks by up to
# ±12% on this project's machines (bench/README.md, "In memory, across
# layouts"). So each revision is built in several layouts: variant 0 as it
# is, variant k with a pseudo-random (seeded by k) half of server/'s and
# wire/'s source files renamed with a "zz" prefix, which reorders the
# packages' functions and nothing else. Every binary runs interleaved with the others,
# GOMAXPROCS=1, pinned to one CPU; benchstat then compares the revisions
# with every variant's samples pooled, so a difference must stand out of
# the layout noise to show.
#
# Usage:
#   bash bench/inmem.sh REV [REV...]                  # e.g. dc17a0e HEAD
#   bash bench/inmem.sh --variants 4 --count 4 --bench 'BenchmarkServerNative$' dc17a0e HEAD
#   bash bench/inmem.sh --benchtime 300000x --cpu 1 dc17a0e HEAD
set -euo pipefail

VARIANTS=4
COUNT=4
BENCH='BenchmarkServerNative$'
BENCHTIME=200000x
CPU=1
REVS=()
while (($# > 0)); do
	case $1 in
	--variants) VARIANTS=$2; shift 2 ;;
	--count) COUNT=$2; shift 2 ;;
	--bench) BENCH=$2; shift 2 ;;
	--benchtime) BENCHTIME=$2; shift 2 ;;
	--cpu) CPU=$2; shift 2 ;;
	-h | --help) sed -n '2,19p' "$0"; exit 0 ;;
	-*) echo "inmem.sh: unknown flag '$1' (see --help)" >&2; exit 2 ;;
	*) REVS+=("$1"); shift ;;
	esac
done
if ((${#REVS[@]} == 0)); then
	echo "inmem.sh: name at least one revision (see --help)" >&2
	exit 2
fi

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/hotpath-inmem.XXXXXX")
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"
trap 'for r in "${REVS[@]}"; do git -C "$ROOT" worktree remove --force "$TMP/src-$r" 2>/dev/null || true; done; cleanup' EXIT

# build REV VARIANT: the server's test binary of REV in layout VARIANT.
build() {
	local rev=$1 v=$2 src="$TMP/src-$1" dir="$TMP/build-$1-$2"
	rm -rf "$dir"
	cp -r "$src" "$dir"
	if ((v > 0)); then
		local i=0 f pkg
		# A pseudo-random half of the files of the server and of the
		# codec it parses with, chosen by the variant.
		for pkg in server wire; do
			for f in $(cd "$dir/$pkg" && ls *.go | grep -v '_test\.go$'); do
				if (((i * 7 + v * 13) % 4 < 2)); then
					mv "$dir/$pkg/$f" "$dir/$pkg/zz$v$f"
				fi
				i=$((i + 1))
			done
		done
	fi
	(cd "$dir" && go test -c -o "$TMP/bin-$rev-$v.test" ./server)
	rm -rf "$dir"
}

for rev in "${REVS[@]}"; do
	git -C "$ROOT" worktree add --detach -q "$TMP/src-$rev" "$rev"
	for ((v = 0; v < VARIANTS; v++)); do
		build "$rev" "$v"
	done
done

echo "# $(go version), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "# revisions: ${REVS[*]}; $VARIANTS layouts each; $COUNT rounds; -bench '$BENCH' -benchtime $BENCHTIME; GOMAXPROCS=1 on CPU $CPU"
for ((round = 0; round < COUNT; round++)); do
	for ((v = 0; v < VARIANTS; v++)); do
		for rev in "${REVS[@]}"; do
			(cd "$ROOT/server" && GOMAXPROCS=1 taskset -c "$CPU" "$TMP/bin-$rev-$v.test" -test.run '^$' \
				-test.bench "$BENCH" -test.benchtime "$BENCHTIME" -test.benchmem) |
				grep '^Benchmark' | tee -a "$TMP/$rev.txt" >>"$TMP/$rev-v$v.txt"
		done
	done
done

echo
echo "# each layout apart (the spread is the layout noise)"
for rev in "${REVS[@]}"; do
	files=()
	for ((v = 0; v < VARIANTS; v++)); do files+=("$TMP/$rev-v$v.txt"); done
	echo "## $rev"
	(cd "$ROOT" && go run golang.org/x/perf/cmd/benchstat "${files[@]}") | grep -v '^\(goos\|goarch\|pkg\|cpu\):'
done
echo
echo "# the revisions, every layout pooled"
files=()
for rev in "${REVS[@]}"; do files+=("$TMP/$rev.txt"); done
(cd "$ROOT" && go run golang.org/x/perf/cmd/benchstat "${files[@]}") | grep -v '^\(goos\|goarch\|pkg\|cpu\):'
