#!/usr/bin/env bash
# scaling.sh: how servers scale with cores (issue 29's multi-core runs).
# Each server runs pinned to its first N CPUs with GOMAXPROCS=N, for each
# N in --cores; the load generator (hotpath load: its fast HTTP/1.1 engine,
# or with --proto h2c its HTTP/2 engine; h2load when --h2load is given)
# runs pinned to the --load-cpus, which must not overlap the servers'.
# Reported per server and N: requests/s, the server's CPU-µs per request
# (utime+stime from /proc/PID/stat), how many of its N cores it kept busy,
# and the speedup over N=1 (requests/s ratio) with its efficiency
# (speedup / N). A server that stays under N busy cores was not saturated:
# its requests/s then measure the load generator, and its CPU-µs per
# request is the figure to read (flat across N = no contention).
#
# Usage:
#   bash bench/scaling.sh                                  # 1 2 4 8 cores, load on 8-15
#   bash bench/scaling.sh --cores "1 2" --load-cpus 2-3 --duration 3
#   bash bench/scaling.sh --proto h2c --streams 10
#   HOTPATH_BIN=... FASTHTTP_BIN=... NGINX_BIN=... bash bench/scaling.sh   # prebuilt
set -euo pipefail

CORES="1 2 4 8"
LOAD_CPUS=8-15
DURATION=5
CONNS=256
PROTO=h1
STREAMS=10
ONLY=""
H2LOAD=""
PORT=18480
while (($# > 0)); do
	case $1 in
	--cores) CORES=$2; shift 2 ;;
	--load-cpus) LOAD_CPUS=$2; shift 2 ;;
	--duration) DURATION=$2; shift 2 ;;
	--conns) CONNS=$2; shift 2 ;;
	--proto) PROTO=$2; shift 2 ;;
	--streams) STREAMS=$2; shift 2 ;;
	--only) ONLY=$2; shift 2 ;;
	--h2load) H2LOAD=$2; shift 2 ;;
	--port) PORT=$2; shift 2 ;;
	-h | --help) sed -n '2,19p' "$0"; exit 0 ;;
	*) echo "scaling.sh: unknown flag '$1' (see --help)" >&2; exit 2 ;;
	esac
done
[[ $PROTO == h1 || $PROTO == h2c ]] || { echo "scaling.sh: --proto h1 or h2c" >&2; exit 2; }

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/hotpath-scaling.XXXXXX")
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"

# bin VAR DIR: a prebuilt binary named by $VAR, else built from DIR.
bin() {
	local var=$1 dir=$2 out
	out="$TMP/$(basename "$dir")"
	if [[ -n ${!var:-} ]]; then
		cp "${!var}" "$out"
	elif [[ $dir == ./cmd/hotpath ]]; then
		(cd "$ROOT" && go build -o "$out" "$dir")
	else
		(cd "$ROOT/bench/peers" && go build -o "$out" "$dir")
	fi
	echo "$out"
}
HOTPATH=$(bin HOTPATH_BIN ./cmd/hotpath)
FASTHTTP=""
if [[ $PROTO == h1 ]]; then
	FASTHTTP=$(bin FASTHTTP_BIN ./cmd/fasthttp-hello)
fi
NGINX=${NGINX_BIN:-$(command -v nginx || true)}

ncpus() { # ncpus LIST: how many CPUs a taskset list names
	local n=0 part a b
	IFS=, read -ra parts <<<"$1"
	for part in "${parts[@]}"; do
		if [[ $part == *-* ]]; then a=${part%-*} b=${part#*-}; n=$((n + b - a + 1)); else n=$((n + 1)); fi
	done
	echo "$n"
}
LOADN=$(ncpus "$LOAD_CPUS")
TICK=$(getconf CLK_TCK)
# ticks PID: utime+stime of PID and its children (nginx's workers), in
# clock ticks.
ticks() {
	local p sum=0
	for p in "$1" $(pgrep -P "$1" || true); do
		sum=$((sum + $(awk '{ print $14 + $15 }' "/proc/$p/stat" 2>/dev/null || echo 0)))
	done
	echo "$sum"
}

# start NAME N PORT: starts server NAME on CPUs 0..N-1; sets SPID.
start() {
	local name=$1 n=$2 port=$3 cpus="0-$(($2 - 1))" h2c=()
	[[ $PROTO == h2c ]] && h2c=(--h2c)
	case $name in
	hotpath-native) GOMAXPROCS=$n taskset -c "$cpus" "$HOTPATH" serve --addr "127.0.0.1:$port" "${h2c[@]}" >"$TMP/$name.log" 2>&1 & ;;
	hotpath-handler) GOMAXPROCS=$n taskset -c "$cpus" "$HOTPATH" serve --api handler --addr "127.0.0.1:$port" "${h2c[@]}" >"$TMP/$name.log" 2>&1 & ;;
	nethttp) GOMAXPROCS=$n taskset -c "$cpus" "$HOTPATH" serve --engine nethttp --addr "127.0.0.1:$port" "${h2c[@]}" >"$TMP/$name.log" 2>&1 & ;;
	fasthttp) GOMAXPROCS=$n taskset -c "$cpus" "$FASTHTTP" --addr "127.0.0.1:$port" >"$TMP/$name.log" 2>&1 & ;;
	nginx)
		mkdir -p "$TMP/nginx-$n/logs"
		cat >"$TMP/nginx-$n/nginx.conf" <<EOF
worker_processes $n;
worker_cpu_affinity auto;
daemon off;
pid $TMP/nginx-$n/nginx.pid;
error_log $TMP/nginx-$n/logs/error.log;
events { worker_connections 4096; }
http {
	access_log off;
	keepalive_requests 1000000;
	server {
		listen 127.0.0.1:$port;
		location / { default_type text/plain; return 200 "Hello, World!"; }
	}
}
EOF
		taskset -c "$cpus" "$NGINX" -p "$TMP/nginx-$n" -c "$TMP/nginx-$n/nginx.conf" >"$TMP/$name.log" 2>&1 & ;;
	esac
	SPID=$!
	PIDS+=("$SPID")
	wait_port "$port" || { echo "scaling.sh: $name did not start (see $TMP/$name.log)" >&2; cat "$TMP/$name.log" >&2; return 1; }
}

# load PORT SECONDS: requests/s of one run.
load() {
	local url="http://127.0.0.1:$1/"
	if [[ $PROTO == h2c && -n $H2LOAD ]]; then
		taskset -c "$LOAD_CPUS" "$H2LOAD" -c "$CONNS" -m "$STREAMS" -t "$LOADN" -D "$2" "$url" 2>/dev/null |
			awk '/^finished in/ { for (i = 1; i <= NF; i++) if ($i ~ /req\/s/) { v = $(i-1); sub(/,$/, "", v); print v } }'
		return
	fi
	local proto=()
	[[ $PROTO == h2c ]] && proto=(--proto h2c --streams "$STREAMS")
	GOMAXPROCS=$LOADN taskset -c "$LOAD_CPUS" "$HOTPATH" load -c "$CONNS" -d "${2}s" "${proto[@]}" --json "$url" 2>/dev/null |
		awk -F'"req_per_s":' 'NF > 1 { split($2, a, ","); print a[1]; exit }'
}

servers=(hotpath-native hotpath-handler nethttp)
[[ -n $FASTHTTP ]] && servers+=(fasthttp)
[[ -n $NGINX && $PROTO == h1 ]] && servers+=(nginx)
if [[ -n $ONLY ]]; then
	IFS=, read -ra servers <<<"$ONLY"
fi

echo "# $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); proto $PROTO; load: $( [[ $PROTO == h2c && -n $H2LOAD ]] && echo h2load || echo "hotpath load") on CPUs $LOAD_CPUS, -c $CONNS$( [[ $PROTO == h2c ]] && echo " x $STREAMS streams"), ${DURATION}s per row"
printf "%-16s %5s %12s %12s %10s %9s %11s\n" server cores "req/s" "cpu-us/req" "busy" speedup efficiency
for name in "${servers[@]}"; do
	base=""
	for n in $CORES; do
		port=$((PORT++))
		start "$name" "$n" "$port"
		load "$port" 1 >/dev/null # warm up: connections, pools, the JIT of nothing
		t0=$(ticks "$SPID")
		s0=$(date +%s.%N)
		rps=$(load "$port" "$DURATION")
		s1=$(date +%s.%N)
		t1=$(ticks "$SPID")
		kill "$SPID" 2>/dev/null || true
		wait "$SPID" 2>/dev/null || true
		[[ -n $rps ]] || { echo "scaling.sh: no result for $name at $n cores" >&2; continue; }
		awk -v name="$name" -v n="$n" -v rps="$rps" -v dt=$((t1 - t0)) -v tick="$TICK" -v s0="$s0" -v s1="$s1" -v base="${base:-$rps}" -v d="$DURATION" 'BEGIN {
			cpu = dt / tick; reqs = rps * d
			sp = rps / base
			printf "%-16s %5d %12.0f %12.2f %10.2f %8.2fx %10.0f%%\n", name, n, rps, 1e6 * cpu / reqs, cpu / (s1 - s0), sp, 100 * sp / n
		}'
		[[ -n $base ]] || base=$rps
	done
done
