#!/usr/bin/env bash
# h2.sh: HTTP/2 on hotpath's engine and on net/http, as issue 16 measures
# it: hotpath's own HTTP/2 engine (the default), hotpath's hand-off to
# net/http's HTTP/2 server (Server.HTTP2HandOff, serve --h2-handoff: with
# hotpath's limits around it), net/http itself, and nginx where installed:
#   - conformance: h2spec --strict over TLS and over h2c, every engine
#     ("native" is the http.Handler API on the native engine,
#     "native-api" the native API, server.Ctx);
#   - speed: h2load small GETs over h2c, server pinned to one CPU with
#     GOMAXPROCS=1, h2load on the other: req/s and the server's CPU-µs
#     per request (from /proc);
#   - bulk: a 1 GB file through http.FileServer, downloaded with h2load
#     -n 1 (h2c prior knowledge, and hotpath's HTTP/1.1 with --h1 for
#     reference; h2load, not curl, whose one core tops out near 2.4 GB/s
#     here), the engines alternating transfer by transfer: median MB/s
#     and the server's CPU-s per GB;
#   - idle: --idle N h2c connections (bench/peers/cmd/idleconns -h2c), each
#     after one GET of / or of /bytes/65536, held idle past the engine's
#     idle trim: the server's RSS growth per connection, then all woken at
#     once with one more GET each (answered / sent, p50 and p99 latency),
#     a fresh server per measurement.
#
# Usage:
#   bash bench/h2.sh                  # h2spec and h2load, -c 50 with -m 10 and -m 100, -c 1 -m 1
#   bash bench/h2.sh --requests 200000
#   bash bench/h2.sh --only download --runs 9 --size-mb 1024   # one part: h2spec, h2load, download or idle
#   bash bench/h2.sh --only idle --idle 2000
#   HOTPATH_BIN=/tmp/hotpath-old bash bench/h2.sh --only h2load   # another build of hotpath
#   bash bench/h2.sh --only h2load --veth   # over a veth pair (MTU 1500) instead of loopback
# Needs: h2load (apt-get install nghttp2-client); h2spec (go install
# github.com/summerwind/h2spec/cmd/h2spec@latest; found in $(go env GOPATH)/bin).
set -euo pipefail

REQUESTS=100000
ONLY=
RUNS=5
SIZE_MB=1024
SERVER_CPU=0
LOAD_CPU=1
PORT=18290
IDLE=2000
USE_VETH=0
while (($#)); do
	case $1 in
	--requests) REQUESTS=$2; shift 2 ;;
	--only) ONLY=$2; shift 2 ;;
	--runs) RUNS=$2; shift 2 ;;
	--size-mb) SIZE_MB=$2; shift 2 ;;
	--idle) IDLE=$2; shift 2 ;;
	--veth) USE_VETH=1; shift ;;
	-h | --help)
		sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*) echo "h2.sh: unknown flag $1 (see --help)" >&2; exit 2 ;;
	esac
done
command -v h2load >/dev/null || { echo "h2.sh: needs h2load (apt-get install nghttp2-client)" >&2; exit 2; }
H2SPEC=$(command -v h2spec || echo "$(go env GOPATH)/bin/h2spec")
[[ -x $H2SPEC ]] || { echo "h2.sh: needs h2spec (go install github.com/summerwind/h2spec/cmd/h2spec@latest)" >&2; exit 2; }

cd "$(dirname "$0")/.."
TMP=$(mktemp -d)
# shellcheck source=bench/lib.sh
source bench/lib.sh
if ((USE_VETH)); then
	[[ $ONLY == h2load ]] || { echo "h2.sh: --veth measures the h2load part: add --only h2load" >&2; exit 2; }
	veth_up || exit 2
fi
CLK_TCK=$(getconf CLK_TCK)
if [[ -n ${HOTPATH_BIN:-} ]]; then # a given build, to compare two versions
	cp "$HOTPATH_BIN" "$TMP/hotpath"
else
	go build -o "$TMP/hotpath" ./cmd/hotpath
fi

engines=("native|--engine hotpath --api handler" "native-api|--engine hotpath --api native" "hand-off|--engine hotpath --api handler --h2-handoff" "net/http|--engine nethttp")
# nginx's HTTP/2 (one worker process, no logs, "Hello, World!" from
# memory), where it is installed (apt-get install nginx-light: its build
# has http_v2); h2c only (a plain listener with "http2" speaks h2c with
# prior knowledge).
if command -v nginx >/dev/null && nginx -V 2>&1 | grep -q http_v2_module; then
	engines+=("nginx|nginx")
	mkdir -p "$TMP/nginx/logs"
	cat >"$TMP/nginx/nginx.conf" <<EOF
daemon off;
master_process off;
worker_processes 1;
error_log stderr error;
pid $TMP/nginx/nginx.pid;
events { worker_connections 1024; }
http {
	access_log off;
	keepalive_requests 10000000;
	http2_max_requests 10000000;
	server {
		listen $HOST:$PORT http2;
		location / { default_type text/plain; return 200 "Hello, World!"; }
	}
}
EOF
fi

# start NAME ARGS...: a pinned server on PORT; sets pid.
start() {
	if [[ $1 == nginx ]]; then
		"${NS_SRV[@]}" taskset -c "$SERVER_CPU" nginx -p "$TMP/nginx" -c "$TMP/nginx/nginx.conf" >/dev/null 2>&1 &
	else
		GOMAXPROCS=1 "${NS_SRV[@]}" taskset -c "$SERVER_CPU" "$TMP/hotpath" serve --addr "$HOST:$PORT" "$@" >/dev/null 2>&1 &
	fi
	pid=$!
	PIDS+=("$pid")
	wait_port "$PORT" || { echo "h2.sh: server did not start" >&2; exit 1; }
}
stop() { kill "$pid"; wait "$pid" 2>/dev/null || true; }
ticks() {
	local stat
	stat=$(<"/proc/$1/stat")
	stat=${stat##*) }
	read -r -a f <<<"$stat"
	echo $((f[11] + f[12]))
}

part() { [[ -z $ONLY || $ONLY == "$1" ]]; }

if part h2spec; then
echo "h2spec --strict (146 tests)"
for e in "${engines[@]}"; do
	name=${e%%|*} args=${e#*|}
	for mode in tls h2c; do
		[[ $name == nginx && $mode == tls ]] && continue # h2c only
		# shellcheck disable=SC2086
		start $args --$mode
		extra=()
		[[ $mode == tls ]] && extra=(-t -k)
		passed=$("$H2SPEC" --strict -h 127.0.0.1 -p "$PORT" "${extra[@]}" -o 2 2>&1 | grep -o '[0-9]* passed' | tail -1 || true)
		printf '  %-9s %-4s %s\n' "$name" "$mode" "${passed:-no result}"
		stop
	done
done
echo
fi

if part h2load; then
printf '%-9s %-14s %12s %14s   (h2c, %d requests, server on CPU %d)\n' engine load "req/s" "CPU-us/req" "$REQUESTS" "$SERVER_CPU"
for load in "-c 50 -m 10" "-c 50 -m 100" "-c 1 -m 1"; do
	for e in "${engines[@]}"; do
		name=${e%%|*} args=${e#*|}
		# shellcheck disable=SC2086
		start $args --h2c
		n=$REQUESTS
		[[ $load == "-c 1 -m 1" ]] && n=$((REQUESTS / 5))
		before=$(ticks "$pid")
		# shellcheck disable=SC2086
		rps=$("${NS_CLI[@]}" taskset -c "$LOAD_CPU" h2load $load -n "$n" "http://$HOST:$PORT/" 2>&1 | awk '/finished in/ { for (i = 1; i <= NF; i++) if ($i ~ /req\/s/) print $(i-1) }')
		after=$(ticks "$pid")
		stop
		awk -v name="$name" -v load="$load" -v rps="$rps" -v t=$((after - before)) -v hz="$CLK_TCK" -v n="$n" \
			'BEGIN { printf "%-9s %-14s %12s %14.2f\n", name, load, rps, t / hz * 1e6 / n }'
	done
done
echo
fi

if part download; then
mkdir -p "$TMP/files"
head -c $((SIZE_MB << 20)) /dev/urandom >"$TMP/files/big"
sync "$TMP/files/big"            # written back now, not by the kernel during the transfers
cat "$TMP/files/big" >/dev/null # in the page cache before the first transfer
# name|serve flags|curl flags: both servers run at once (on the same
# CPU), transfers alternate between them.
dl=("native h2c|--engine hotpath --api handler --h2c|"
	"net/http h2c|--engine nethttp --h2c|"
	"hotpath h1|--engine hotpath --api handler|--h1")
dpids=()
for i in "${!dl[@]}"; do
	IFS='|' read -r _ args _ <<<"${dl[$i]}"
	# shellcheck disable=SC2086
	GOMAXPROCS=1 taskset -c "$SERVER_CPU" "$TMP/hotpath" serve --addr "127.0.0.1:$((PORT + 1 + i))" --files "$TMP/files" $args >/dev/null 2>&1 &
	dpids+=("$!")
	PIDS+=("$!")
	wait_port $((PORT + 1 + i)) || { echo "h2.sh: server did not start" >&2; exit 1; }
done
declare -A speeds ticks_sum
for ((r = 0; r < RUNS; r++)); do
	for i in "${!dl[@]}"; do
		IFS='|' read -r name _ curlflags <<<"${dl[$i]}"
		before=$(ticks "${dpids[$i]}")
		# shellcheck disable=SC2086
		sp=$(taskset -c "$LOAD_CPU" h2load $curlflags -n 1 -c 1 -m 1 "http://127.0.0.1:$((PORT + 1 + i))/files/big" 2>&1 |
			awk -v bytes=$((SIZE_MB << 20)) '/^finished in/ { t = $3; s = (t ~ /ms,$/) ? t / 1000 : t + 0; if (t ~ /us,$/) s = t / 1e6; print bytes / s } /succeeded/ { if ($8 != 1) { print "h2.sh: download failed: " $0 > "/dev/stderr"; exit 1 } }')
		after=$(ticks "${dpids[$i]}")
		speeds[$name]+="$sp "
		ticks_sum[$name]=$((${ticks_sum[$name]:-0} + after - before))
	done
done
printf '%-13s %10s %12s   (median of %d transfers of %d MB, engines alternating, server on CPU %d, curl on CPU %d)\n' engine "MB/s" "CPU-s/GB" "$RUNS" "$SIZE_MB" "$SERVER_CPU" "$LOAD_CPU"
median() { tr ' ' '\n' | grep . | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) / 1e6 }'; }
declare -A med
for i in "${!dl[@]}"; do
	IFS='|' read -r name _ _ <<<"${dl[$i]}"
	med[$name]=$(median <<<"${speeds[$name]}")
	awk -v n="$name" -v m="${med[$name]}" -v t="${ticks_sum[$name]}" -v hz="$CLK_TCK" -v runs="$RUNS" -v mb="$SIZE_MB" -v all="${speeds[$name]}" \
		'BEGIN { printf "%-13s %10.0f %12.3f   all MB/s:", n, m, t / hz / (runs * mb / 1024); k = split(all, v, " "); for (j = 1; j <= k; j++) printf " %.0f", v[j] / 1e6; printf "\n" }'
done
awk -v a="${med[native h2c]}" -v b="${med[net/http h2c]}" -v c="${med[hotpath h1]}" \
	'BEGIN { printf "native h2c / net/http h2c: %.2fx throughput; native h2c / hotpath HTTP/1.1: %.2fx\n", a / b, a / c }'
fi

if part idle; then
(cd bench/peers && go build -o "$TMP/idleconns" ./cmd/idleconns)
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }
printf '%-11s %-13s %12s %14s %9s %9s   (%d h2c connections, idle 3 s after one request each, then woken with one more each; fresh server each)\n' engine path "KB per conn" "woken" "p50 ms" "p99 ms" "$IDLE"
for e in "native|--engine hotpath --api handler" "native-api|--engine hotpath --api native" "net/http|--engine nethttp"; do
	name=${e%%|*} args=${e#*|}
	for path in / /bytes/65536; do
		# shellcheck disable=SC2086
		start $args --h2c
		taskset -c "$LOAD_CPU" "$TMP/idleconns" -h2c -n 1 -addr "127.0.0.1:$PORT" -path "$path" -hold 0s >/dev/null 2>&1 || true
		sleep 1
		before=$(rss_kb "$pid")
		out=$TMP/idle.txt
		taskset -c "$LOAD_CPU" "$TMP/idleconns" -h2c -wake -n "$IDLE" -addr "127.0.0.1:$PORT" -path "$path" -hold 600s >"$out" 2>&1 &
		ic=$!
		PIDS+=("$ic")
		for _ in $(seq 600); do
			grep -q '^ready' "$out" && break
			sleep 0.1
		done
		sleep 3 # past the engines' idle trims (hotpath: 100 ms)
		after=$(rss_kb "$pid")
		# The wake-up: every connection sends one more GET at once.
		kill -USR1 "$ic" 2>/dev/null || true
		for _ in $(seq 600); do
			grep -q '^woke' "$out" && break
			sleep 0.1
		done
		woke=$(sed -n 's/^woke sent=\([0-9]*\) answered=\([0-9]*\) p50_ms=\([0-9.]*\) p99_ms=\([0-9.]*\).*/\2\/\1 \3 \4/p' "$out")
		kill -TERM "$ic" 2>/dev/null || true
		wait "$ic" 2>/dev/null || true
		open=$(sed -n 's/^ready open=\([0-9]*\).*/\1/p' "$out")
		alive=$(sed -n 's/^done alive=\([0-9]*\).*/\1/p' "$out")
		stop
		read -r wk w50 w99 <<<"${woke:-none - -}"
		awk -v n="$name" -v p="$path" -v a="$after" -v b="$before" -v o="${open:-0}" -v al="${alive:-0}" -v wk="$wk" -v w50="$w50" -v w99="$w99" \
			'BEGIN { if (o == 0) { printf "%-11s %-13s %12s\n", n, p, "failed"; exit } printf "%-11s %-13s %12.1f %14s %9s %9s   (%d of %d alive)\n", n, p, (a - b) / o, wk, w50, w99, al, o }'
	done
done
fi
