#!/usr/bin/env bash
# sse.sh: long-lived streams from one client address are never refused by
# the server's protective defaults. Holds 15,000 server-sent event
# streams (GET /events/{s}, one event a second) for 60 s, all from
# 127.0.0.1, over HTTP/1.1 (15,000 connections) and h2c (60 connections
# of 250 streams), against `hotpath serve` with its defaults on both APIs
# (and net/http with --nethttp). Prints per run: streams answered 200,
# held to the end with events every second, failures by kind, the
# server's peak RSS and goroutines (sampled from 127.0.0.2).
#
# Usage:
#   bash bench/sse.sh                      # 15,000 streams, 60 s, h1 and h2c, both APIs
#   bash bench/sse.sh --streams 2000 --hold 10 --protos h2c
# Flags: --streams N (15000); --hold SECONDS (60); --protos LIST (h1,h2c);
# --apis LIST (handler,native); --nethttp (net/http too).
# Needs: Linux, Go, a descriptor limit above the stream count (it raises
# its own soft limit to the hard one).
set -euo pipefail

STREAMS=15000
HOLD=60
PROTOS=h1,h2c
APIS=handler,native
NETHTTP=
PORT=18400
while (($#)); do
	case $1 in
	--streams) STREAMS=$2; shift 2 ;;
	--hold) HOLD=$2; shift 2 ;;
	--protos) PROTOS=$2; shift 2 ;;
	--apis) APIS=$2; shift 2 ;;
	--nethttp) NETHTTP=1; shift ;;
	-h | --help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "sse.sh: unknown flag $1 (see --help)" >&2; exit 2 ;;
	esac
done
ulimit -n "$(ulimit -Hn)"
if (($(ulimit -n) < STREAMS + 100)); then
	echo "sse.sh: the descriptor limit ($(ulimit -n)) is below --streams $STREAMS" >&2
	exit 2
fi

cd "$(dirname "$0")/.."
TMP=$(mktemp -d)
# shellcheck source=bench/lib.sh
source bench/lib.sh
go build -o "$TMP/hotpath" ./cmd/hotpath
go build -o "$TMP/sse" ./bench/sse

IFS=',' read -r -a protos <<<"$PROTOS"
IFS=',' read -r -a apis <<<"$APIS"
servers=()
for a in "${apis[@]}"; do servers+=("hotpath $a|--engine hotpath --api $a"); done
if [[ -n $NETHTTP ]]; then servers+=("net/http|--engine nethttp"); fi

status=0
for proto in "${protos[@]}"; do
	for s in "${servers[@]}"; do
		name=${s%%|*} args=${s#*|}
		flags=()
		if [[ $proto == h2c ]]; then flags=(--h2c); fi
		# shellcheck disable=SC2086
		"$TMP/hotpath" serve --addr "127.0.0.1:$PORT" "${flags[@]}" --grace 1s $args >/dev/null 2>&1 &
		pid=$!
		PIDS+=("$pid")
		wait_port "$PORT" || { echo "sse.sh: server did not start" >&2; exit 1; }
		printf '%-16s ' "$name"
		"$TMP/sse" -addr "127.0.0.1:$PORT" -proto "$proto" -streams "$STREAMS" -hold "${HOLD}s" -pid "$pid" || status=1
		kill -INT "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
done
exit $status
