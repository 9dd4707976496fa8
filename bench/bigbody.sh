#!/usr/bin/env bash
# bigbody.sh: big bodies on hotpath's engine and on net/http, as issue 13
# measures them: a download from memory (/bytes, 32 KiB writes), a
# download of a file through http.FileServer, and an upload to a handler
# that reads and discards it. Each server runs alone on one CPU with
# GOMAXPROCS=1; curl runs on the other. It reports throughput (MB/s, from
# curl's own timing) and the server's CPU time per GB (utime+stime from
# /proc/PID/stat), and the ratios hotpath / net/http.
#
# Usage:
#   bash bench/bigbody.sh                  # 1 GB each, best of 3
#   bash bench/bigbody.sh --size-mb 256 --runs 5
#   bash bench/bigbody.sh --repeat 4        # 4 transfers per measurement: finer CPU figures
set -euo pipefail

SIZE_MB=1024
RUNS=3
REPEAT=1
SERVER_CPU=0
LOAD_CPU=1
PORT=18190
while (($#)); do
	case $1 in
	--size-mb) SIZE_MB=$2; shift 2 ;;
	--runs) RUNS=$2; shift 2 ;;
	--repeat) REPEAT=$2; shift 2 ;;
	--server-cpu) SERVER_CPU=$2; shift 2 ;;
	--load-cpu) LOAD_CPU=$2; shift 2 ;;
	-h | --help)
		sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*) echo "bigbody.sh: unknown flag $1 (see --help)" >&2; exit 2 ;;
	esac
done
command -v curl >/dev/null || { echo "bigbody.sh: needs curl (apt-get install curl)" >&2; exit 2; }

cd "$(dirname "$0")/.."
TMP=$(mktemp -d)
# shellcheck source=bench/lib.sh
source bench/lib.sh
CLK_TCK=$(getconf CLK_TCK)
BYTES=$((SIZE_MB << 20))

go build -o "$TMP/hotpath" ./cmd/hotpath
mkdir -p "$TMP/files"
head -c "$BYTES" /dev/urandom >"$TMP/files/big"

cpu_ticks() { # utime+stime of PID in clock ticks
	local stat
	stat=$(<"/proc/$1/stat")
	stat=${stat##*) }
	read -r -a f <<<"$stat"
	echo $((f[11] + f[12]))
}

# run ENGINE TRANSFER: one transfer, prints "MB/s cpu-seconds-per-GB".
run() {
	local engine=$1 transfer=$2 port=$((PORT))
	local args=(serve --addr "127.0.0.1:$port" --files "$TMP/files")
	case $engine in
	hotpath) args+=(--engine hotpath --api handler) ;;
	net/http) args+=(--engine nethttp) ;;
	esac
	GOMAXPROCS=1 taskset -c "$SERVER_CPU" "$TMP/hotpath" "${args[@]}" >/dev/null 2>&1 &
	local pid=$!
	PIDS+=("$pid")
	wait_port "$port" || { echo "bigbody.sh: $engine did not start" >&2; exit 1; }
	local before after speed total=0 i
	before=$(cpu_ticks "$pid")
	for ((i = 0; i < REPEAT; i++)); do
		case $transfer in
		memory) speed=$(taskset -c "$LOAD_CPU" curl -s -o /dev/null -w '%{speed_download}' "http://127.0.0.1:$port/bytes/$BYTES") ;;
		file) speed=$(taskset -c "$LOAD_CPU" curl -s -o /dev/null -w '%{speed_download}' "http://127.0.0.1:$port/files/big") ;;
		upload) speed=$(taskset -c "$LOAD_CPU" curl -s -o /dev/null -w '%{speed_upload}' -H 'Expect:' -T "$TMP/files/big" "http://127.0.0.1:$port/discard") ;;
		esac
		total=$(awk -v a="$total" -v b="$speed" 'BEGIN { printf "%.0f", a + b }')
	done
	after=$(cpu_ticks "$pid")
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	awk -v s="$total" -v n="$REPEAT" -v t=$((after - before)) -v hz="$CLK_TCK" -v b="$BYTES" \
		'BEGIN { printf "%.0f %.3f\n", s / n / 1e6, t / hz / (n * b / 1e9) }'
}

printf '%-8s %-9s %10s %12s   (best of %d, %d MB)\n' transfer engine "MB/s" "CPU-s/GB" "$RUNS" "$SIZE_MB"
for transfer in memory file upload; do
	declare -A best_speed=() best_cpu=()
	for ((r = 0; r < RUNS; r++)); do
		for engine in hotpath net/http; do
			read -r speed cpu <<<"$(run "$engine" "$transfer")"
			if [[ -z ${best_speed[$engine]:-} ]] || ((speed > best_speed[$engine])); then
				best_speed[$engine]=$speed
				best_cpu[$engine]=$cpu
			fi
		done
	done
	for engine in hotpath net/http; do
		printf '%-8s %-9s %10s %12s\n' "$transfer" "$engine" "${best_speed[$engine]}" "${best_cpu[$engine]}"
	done
	awk -v hs="${best_speed[hotpath]}" -v ns="${best_speed[net/http]}" -v hc="${best_cpu[hotpath]}" -v nc="${best_cpu[net/http]}" \
		-v t="$transfer" 'BEGIN { printf "%-8s hotpath/net/http: throughput %.2fx, server CPU %.2fx\n", t, hs / ns, (nc > 0 ? hc / nc : 0) }'
	unset best_speed best_cpu
done
