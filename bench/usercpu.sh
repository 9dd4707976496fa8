#!/usr/bin/env bash
# usercpu.sh: the HTTP/1.1 server's user-space CPU per request under wrk
# (-c50, "Hello, World!", native API), this tree's cmd/hotpath against one
# built from a git revision, measured by sampling instead of by the
# kernel's tick accounting.
#
# server.sh reports the user/kernel split from /proc/PID/stat, which the
# kernel keeps by charging each clock tick to one side: over 5 s that is
# a few hundred ticks of user time, and a run moves by 5-10%. Here perf
# samples CPU 0, where the server runs alone (GOMAXPROCS=1; wrk on CPU 1),
# at 2000 Hz: the samples that land in the server outside the kernel,
# over the requests wrk counted, are its user CPU per request, from
# thousands of samples a round. Rounds interleave the two binaries; the
# summary is the median of each round's ratio, this tree over the
# revision's.
#
# Usage:
#   bash bench/usercpu.sh dc17a0e               # 8 rounds of 5 s each
#   bash bench/usercpu.sh --rounds 12 --duration 5 main
#
# Needs perf (Debian: linux-perf) and wrk; run as root or with
# kernel.perf_event_paranoid <= 0 (CPU-wide sampling).
set -euo pipefail

ROUNDS=8
DURATION=5
REV=
while (($# > 0)); do
	case $1 in
	--rounds) ROUNDS=$2; shift 2 ;;
	--duration) DURATION=$2; shift 2 ;;
	-h | --help) sed -n '2,22p' "$0"; exit 0 ;;
	-*) echo "usercpu.sh: unknown flag '$1' (see --help)" >&2; exit 2 ;;
	*) REV=$1; shift ;;
	esac
done
[[ -n $REV ]] || { echo "usercpu.sh: name the revision to compare with (see --help)" >&2; exit 2; }
[[ $ROUNDS =~ ^[0-9]+$ && $DURATION =~ ^[0-9]+$ ]] && ((ROUNDS > 0 && DURATION > 0)) ||
	{ echo "usercpu.sh: --rounds and --duration want positive whole numbers" >&2; exit 2; }
for tool in perf wrk taskset; do
	command -v $tool >/dev/null || { echo "usercpu.sh needs $tool" >&2; exit 2; }
done

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/hotpath-usercpu.XXXXXX")
cleanup() {
	git -C "$ROOT" worktree remove --force "$TMP/src" 2>/dev/null || true
	rm -rf "$TMP"
}
trap cleanup EXIT

echo "building this tree and $REV ..." >&2
(cd "$ROOT" && go build -o "$TMP/new" ./cmd/hotpath)
git -C "$ROOT" worktree add -q --detach "$TMP/src" "$REV"
(cd "$TMP/src" && go build -o "$TMP/old" ./cmd/hotpath)

PORT=19190
# round NAME: serve with $TMP/NAME on CPU 0, load it from CPU 1, sample CPU
# 0; prints the user CPU-µs per request and requests/s.
round() {
	local bin=$TMP/$1
	GOMAXPROCS=1 taskset -c 0 "$bin" serve --addr 127.0.0.1:$PORT --engine hotpath >/dev/null 2>&1 &
	local pid=$!
	for _ in $(seq 50); do
		bash -c ": </dev/tcp/127.0.0.1/$PORT" 2>/dev/null && break
		sleep 0.1
	done
	taskset -c 1 wrk -t1 -c50 -d$((DURATION + 3))s "http://127.0.0.1:$PORT/" >"$TMP/wrk.txt" &
	local wrk=$!
	sleep 2
	perf record -q -F 2000 -C 0 -o "$TMP/perf.data" -- sleep "$DURATION" 2>/dev/null
	wait $wrk
	kill $pid
	wait $pid 2>/dev/null || true
	local rps user
	rps=$(awk '/Requests\/sec/ {print $2}' "$TMP/wrk.txt")
	# The share of CPU 0's samples (idle ones included: CPU 0's whole
	# time) in the server outside the kernel: its own code, the vDSO.
	user=$(perf report -i "$TMP/perf.data" --comm "$1" --percentage absolute --stdio --sort dso -q 2>/dev/null |
		awk '$NF != "[kernel.kallsyms]" {gsub("%", "", $1); s += $1} END {print s + 0}')
	awk -v r="$rps" -v u="$user" 'BEGIN {printf "%.3f %d\n", u / 100 * 1e6 / r, r}'
}

ratios=()
printf '%-6s %22s %22s %7s\n' round "this tree µs/req (r/s)" "$REV µs/req (r/s)" ratio
for r in $(seq "$ROUNDS"); do
	read -r un rn < <(round new)
	read -r uo ro < <(round old)
	ratio=$(awk -v a="$un" -v b="$uo" 'BEGIN {printf "%.3f", a / b}')
	ratios+=("$ratio")
	printf '%-6s %13s (%6d) %13s (%6d) %7s\n' "$r" "$un" "$rn" "$uo" "$ro" "$ratio"
done
med=$(printf '%s\n' "${ratios[@]}" | sort -g | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else printf "%.3f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }')
echo "user CPU per request, this tree over $REV: median of $ROUNDS rounds $med"
