#!/usr/bin/env bash
# client.sh: compare Go HTTP clients (seed 003) with the server out of the
# benchmark's process: `hotpath serve` (native API, GOMAXPROCS=1) alone on
# one CPU, the benchmarks of bench/peers/clientbench (GOMAXPROCS=1) alone on
# the other. Clients: net/http (MaxIdleConnsPerHost 512), hotpath's
# client.Transport through http.Client, fasthttp v1.62.0, resty v2, req v3.
# Cases: GET, POST JSON, GET with three headers, parallel GET (8 goroutines)
# and 16 GETs in flight (GetInFlight16);
# over TLS (hotpath serve --tls): HTTPS GET on HTTP/1.1 at 1 and 8 concurrent
# requests, and HTTP/2 GET at 1 and 100 concurrent streams, net/http's
# transport against client.New(). MemGet: the same GET against a server in
# memory (no system call), each client's own code's CPU alone.
# Reported per client: ns/op, client CPU-us/op (getrusage) and its system
# (kernel) part, B/op, allocs/op;
# then each client's CPU-us/op relative to net/http's (higher = cheaper).
#
# Usage:
#   bash bench/client.sh                  # 1 s per benchmark, 3 counts
#   bash bench/client.sh --benchtime 3s --count 5
#   bash bench/client.sh --bench 'GetParallel'
#   HOTPATH_BIN=... CLIENTBENCH_BIN=... bash bench/client.sh   # prebuilt
set -euo pipefail

BENCHTIME=1s
COUNT=3
BENCH=.
SERVER_CPU=1
CLIENT_CPU=0
PORT=18280
while (($# > 0)); do
	case $1 in
	--benchtime) BENCHTIME=$2; shift 2 ;;
	--count) COUNT=$2; shift 2 ;;
	--bench) BENCH=$2; shift 2 ;;
	--server-cpu) SERVER_CPU=$2; shift 2 ;;
	--client-cpu) CLIENT_CPU=$2; shift 2 ;;
	--port) PORT=$2; shift 2 ;;
	-h | --help) sed -n '2,20p' "$0"; exit 0 ;;
	*) echo "client.sh: unknown flag '$1' (see --help)" >&2; exit 2 ;;
	esac
done

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/hotpath-client.XXXXXX")
# The exit trap ends every process in PIDS and removes $TMP.
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"

# HOTPATH_BIN and CLIENTBENCH_BIN name prebuilt binaries (a machine
# without Go); else both are built here.
if [[ -n ${HOTPATH_BIN:-} ]]; then
	cp "$HOTPATH_BIN" "$TMP/hotpath"
else
	(cd "$ROOT" && go build -o "$TMP/hotpath" ./cmd/hotpath)
fi
if [[ -n ${CLIENTBENCH_BIN:-} ]]; then
	cp "$CLIENTBENCH_BIN" "$TMP/clientbench.test"
else
	(cd "$ROOT/bench/peers" && go test -c -o "$TMP/clientbench.test" ./clientbench)
fi

GOMAXPROCS=1 taskset -c "$SERVER_CPU" "$TMP/hotpath" serve --addr "127.0.0.1:$PORT" >"$TMP/server.log" 2>&1 &
PIDS+=("$!")
wait_port "$PORT" || { echo "client.sh: the server did not start" >&2; exit 1; }

# The same server over TLS (HTTP/2 and HTTP/1.1 by ALPN) for BenchmarkHTTPSGet
# and BenchmarkH2Get.
GOMAXPROCS=1 taskset -c "$SERVER_CPU" "$TMP/hotpath" serve --tls --addr "127.0.0.1:$((PORT + 1))" >"$TMP/server-tls.log" 2>&1 &
PIDS+=("$!")
wait_port "$((PORT + 1))" || { echo "client.sh: the TLS server did not start" >&2; exit 1; }

export HOTPATH_BENCH_URL="http://127.0.0.1:$PORT"
export HOTPATH_BENCH_TLS_URL="https://127.0.0.1:$((PORT + 1))"
echo "# $(go version 2>/dev/null || echo "prebuilt binaries"), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "# server: hotpath serve on CPU $SERVER_CPU; clients on CPU $CLIENT_CPU; GOMAXPROCS=1 both"
GOMAXPROCS=1 taskset -c "$CLIENT_CPU" "$TMP/clientbench.test" -test.run TestClientsAgree -test.v >/dev/null
GOMAXPROCS=1 taskset -c "$CLIENT_CPU" "$TMP/clientbench.test" -test.run '^$' -test.bench "$BENCH" \
	-test.benchtime "$BENCHTIME" -test.count "$COUNT" -test.cpu 1 | tee "$TMP/out.txt" | grep '^Benchmark'

# Medians per benchmark, and CPU per request relative to net/http.
echo
echo "# medians over $COUNT counts; \"of it sys\" = the kernel's part (sys-us/op); cpu ratio = net/http cpu-us/op / client cpu-us/op"
awk '
/^Benchmark/ {
	name = $1; sub(/-[0-9]+$/, "", name)
	for (i = 3; i < NF; i++) {
		if ($(i+1) == "ns/op") ns[name] = ns[name] " " $i
		if ($(i+1) == "cpu-us/op") cpu[name] = cpu[name] " " $i
		if ($(i+1) == "sys-us/op") sys[name] = sys[name] " " $i
		if ($(i+1) == "B/op") bytes[name] = $i
		if ($(i+1) == "allocs/op") allocs[name] = $i
	}
	if (!(name in seen)) { seen[name] = 1; order[++n] = name }
}
function median(s,   a, k, i, j, t) {
	k = split(s, a, " ")
	for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
	return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
}
END {
	printf "%-32s %12s %12s %12s %10s %10s %10s\n", "benchmark", "ns/op", "cpu-us/op", "of it sys", "B/op", "allocs/op", "cpu ratio"
	for (i = 1; i <= n; i++) {
		name = order[i]; group = name; sub(/\/[^\/]*$/, "", group)
		base = median(cpu[group "/net-http"])
		printf "%-32s %12.0f %12.2f %12.2f %10s %10s %9.2fx\n", name, median(ns[name]), median(cpu[name]), median(sys[name]), bytes[name], allocs[name], base / median(cpu[name])
	}
}' "$TMP/out.txt"
