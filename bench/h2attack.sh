#!/usr/bin/env bash
# h2attack.sh: HTTP/2 under attack, hotpath's own engine against net/http's,
# with the attacks of internal/h2attack (driven by bench/h2attack; its -h
# lists them and what a robust server does about each):
#   - engines: hotpath's HTTP/2 engine with the http.Handler API
#     ("handler") and the native API ("native"), and net/http ("net/http"),
#     each a fresh `hotpath serve --h2c` per attack, pinned to CPU 0 with
#     GOMAXPROCS=1; the attacker and its probes on CPU 1;
#   - each attack runs for --duration, again each time it ends (a flood
#     the server cuts becomes a flood of connections); the attacks that
#     start handlers and reconnect (rapid-reset, made-you-reset-*,
#     reconnect) run 20 s on 4 connections, each dialed again when cut,
#     against /delay/30000, a handler that sleeps 30 s ignoring its
#     context (--reset-*);
#   - per engine and attack: the server's CPU (% of one core, utime+stime
#     from /proc/PID/stat over the attack), its peak RSS (VmHWM) and peak
#     thread count (/proc/PID/status), its peak goroutines, the latency
#     of a probe GET / on a fresh connection every 100 ms beside the
#     attack, from another client (127.0.0.2; the attacker is 127.0.0.1)
#     (p50, p99, failures), and what the attacker saw.
#
# Usage:
#   bash bench/h2attack.sh                          # every attack, 10 s each
#   bash bench/h2attack.sh --duration 5             # 5 s each, rapid reset too
#   bash bench/h2attack.sh --only rapid-reset --reset-conns 8
#   bash bench/h2attack.sh --only zero-window,slow-reader
#   bash bench/h2attack.sh --tls --only reconnect   # over TLS, not h2c
# Flags: --only ATTACK[,ATTACK...]; --duration SECONDS (every attack;
# default 10, rapid reset 20); --reset-duration SECONDS, --reset-conns N
# (4), --reset-path PATH (/delay/30000); --hold SECONDS (partial-frame
# attacks: how long each holds its cut frame, default 1); --tls (HTTP/2
# over TLS instead of h2c); --engines LIST (handler,native,net/http).
# Needs: Linux (/proc), taskset, Go, two CPUs.
set -euo pipefail

ONLY=
DURATION=
RESET_DURATION=
RESET_CONNS=4
RESET_PATH=/delay/30000
HOLD=1
TLS=
ENGINES=handler,native,net/http
SERVER_CPU=0
LOAD_CPU=1
PORT=18300
while (($#)); do
	case $1 in
	--only) ONLY=$2; shift 2 ;;
	--duration) DURATION=$2; shift 2 ;;
	--reset-duration) RESET_DURATION=$2; shift 2 ;;
	--reset-conns) RESET_CONNS=$2; shift 2 ;;
	--reset-path) RESET_PATH=$2; shift 2 ;;
	--hold) HOLD=$2; shift 2 ;;
	--tls) TLS=1; shift ;;
	--engines) ENGINES=$2; shift 2 ;;
	-h | --help)
		sed -n '2,34p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*) echo "h2attack.sh: unknown flag $1 (see --help)" >&2; exit 2 ;;
	esac
done
# seconds: "5" or "5s" -> "5s"
seconds() { [[ $1 =~ ^[0-9]+(\.[0-9]+)?s?$ ]] || { echo "h2attack.sh: want seconds, got $1" >&2; exit 2; }; echo "${1%s}s"; }
RESET_DURATION=$(seconds "${RESET_DURATION:-${DURATION:-20}}")
DURATION=$(seconds "${DURATION:-10}")
HOLD=$(seconds "$HOLD")
command -v taskset >/dev/null || { echo "h2attack.sh: needs taskset (apt-get install util-linux)" >&2; exit 2; }

cd "$(dirname "$0")/.."
TMP=$(mktemp -d)
# shellcheck source=bench/lib.sh
source bench/lib.sh
go build -o "$TMP/hotpath" ./cmd/hotpath
go build -o "$TMP/h2attack" ./bench/h2attack

mapfile -t attacks < <("$TMP/h2attack" -list)
if [[ -n $ONLY ]]; then
	IFS=',' read -r -a attacks <<<"$ONLY"
fi
engines=()
IFS=',' read -r -a wanted <<<"$ENGINES"
for e in "${wanted[@]}"; do
	case $e in
	handler) engines+=("handler|--engine hotpath --api handler") ;;
	native) engines+=("native|--engine hotpath --api native") ;;
	net/http) engines+=("net/http|--engine nethttp") ;;
	*) echo "h2attack.sh: unknown engine $e (handler, native, net/http)" >&2; exit 2 ;;
	esac
done
proto=(--h2c) attacker=()
if [[ -n $TLS ]]; then
	proto=(--tls) attacker=(-tls)
fi

# start ARGS...: a pinned server on PORT; sets pid.
start() {
	GOMAXPROCS=1 taskset -c "$SERVER_CPU" "$TMP/hotpath" serve --addr "127.0.0.1:$PORT" "${proto[@]}" --grace 1s "$@" >/dev/null 2>&1 &
	pid=$!
	PIDS+=("$pid")
	wait_port "$PORT" || { echo "h2attack.sh: server did not start" >&2; exit 1; }
}
stop() { kill -KILL "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; }

echo "${proto[0]#--}, server on CPU $SERVER_CPU (GOMAXPROCS=1), attacker (127.0.0.1) and probes (127.0.0.2) on CPU $LOAD_CPU; $DURATION per attack (rapid reset, MadeYouReset and reconnect $RESET_DURATION on $RESET_CONNS reconnecting connections, $RESET_PATH)"
"$TMP/h2attack" -header
for attack in "${attacks[@]}"; do
	flags=(-attack "$attack" -duration "$DURATION" -hold "$HOLD")
	if [[ $attack == rapid-reset || $attack == made-you-reset-* || $attack == reconnect ]]; then
		flags=(-attack "$attack" -duration "$RESET_DURATION" -conns "$RESET_CONNS" -path "$RESET_PATH")
	fi
	for e in "${engines[@]}"; do
		name=${e%%|*} args=${e#*|}
		# shellcheck disable=SC2086
		start $args
		taskset -c "$LOAD_CPU" "$TMP/h2attack" -addr "127.0.0.1:$PORT" -pid "$pid" -label "$name" "${attacker[@]}" "${flags[@]}" ||
			echo "h2attack.sh: $attack on $name failed" >&2
		stop
	done
done
