#!/usr/bin/env bash
# loadh2.sh: `hotpath load --proto h2c` against h2load, as issue 27 asks:
# the same server (hotpath serve --h2c, native API, GOMAXPROCS=1) alone
# on one CPU, then, alternating on the other CPU, h2load -c C -m M -n N
# and hotpath load --proto h2c -c C --streams M -n N (GOMAXPROCS=1) on each
# of its engines (fast: the wire/h2 engine; hotpath: client.Transport).
# For every run it prints req/s and the generator process's CPU seconds
# (user+sys, from the waiting shell's children times: what the process
# and its threads used, whatever the tool says of itself), requests per
# CPU-second and, for the engines, its ratio to the round's h2load; then
# the medians, and each engine's median ratio to h2load (of the medians,
# and of the rounds' ratios: the paired figure steadier on a busy machine).
#
# Usage:
#   bash bench/loadh2.sh                          # 3 rounds of 500,000 requests
#   bash bench/loadh2.sh --runs 5 --requests 1000000
#   bash bench/loadh2.sh --engines fast           # only the fast engine beside h2load
#
# Run bash bench/loadh2.sh --help for every flag. Needs h2load
# (apt-get install nghttp2-client), taskset, Go.
set -euo pipefail

usage() {
	cat <<'EOF2'
Usage: bash bench/loadh2.sh [flags]

Flags:
  --requests N     requests per run (default 500000)
  --runs R         rounds; each runs h2load then every engine (default 3)
  --conns C        connections for every generator (default 50)
  --streams M      requests in flight per connection: h2load's -m, hotpath's --streams (default 10)
  --engines LIST   hotpath load engines, comma-separated (default fast,hotpath)
  --server-cpu N   CPU the server is pinned to (default 0)
  --load-cpu N     CPU the generators are pinned to (default 1)
  --port P         server port on 127.0.0.1 (default 18390)
  --path P         URL path (default /)
  -h, --help       this text

Environment:
  HOTPATH_BIN      use this hotpath binary instead of building ./cmd/hotpath
EOF2
}

die() {
	echo "loadh2.sh: $*" >&2
	exit 2
}

REQUESTS=500000
RUNS=3
CONNS=50
STREAMS=10
ENGINES=fast,hotpath
SERVER_CPU=0
LOAD_CPU=1
PORT=18390
URLPATH=/

need_int() { [[ $2 =~ ^[0-9]+$ ]] || die "$1 wants a whole number, got '$2' (see --help)"; }

while (($# > 0)); do
	case $1 in
	--requests | --runs | --conns | --streams | --server-cpu | --load-cpu | --port)
		(($# >= 2)) || die "$1 needs a value (see --help)"
		need_int "$1" "$2"
		case $1 in
		--requests) REQUESTS=$2 ;;
		--runs) RUNS=$2 ;;
		--conns) CONNS=$2 ;;
		--streams) STREAMS=$2 ;;
		--server-cpu) SERVER_CPU=$2 ;;
		--load-cpu) LOAD_CPU=$2 ;;
		--port) PORT=$2 ;;
		esac
		shift 2
		;;
	--engines | --path)
		(($# >= 2)) || die "$1 needs a value (see --help)"
		case $1 in
		--engines) ENGINES=$2 ;;
		--path) URLPATH=$2 ;;
		esac
		shift 2
		;;
	-h | --help)
		usage
		exit 0
		;;
	*) die "unknown flag '$1' (see --help)" ;;
	esac
done
((REQUESTS >= 1 && RUNS >= 1 && CONNS >= 1 && STREAMS >= 1)) || die "--requests, --runs, --conns and --streams must be at least 1"
IFS=, read -ra engines <<<"$ENGINES"
for e in "${engines[@]}"; do
	case $e in fast | hotpath | nethttp) ;; *) die "--engines: unknown engine '$e' (fast, hotpath, nethttp)" ;; esac
done

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/hotpath-loadh2.XXXXXX")
URL=http://127.0.0.1:$PORT$URLPATH

# The exit trap ends every process in PIDS and removes $TMP.
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"

command -v h2load >/dev/null || die "h2load not found: install it (apt-get install nghttp2-client)"
command -v taskset >/dev/null || die "taskset not found: install util-linux"
CPUS=$(nproc)
((SERVER_CPU < CPUS && LOAD_CPU < CPUS)) || die "--server-cpu $SERVER_CPU / --load-cpu $LOAD_CPU: this machine has $CPUS CPUs"

if [[ -n ${HOTPATH_BIN:-} ]]; then
	HOTPATH=$HOTPATH_BIN
else
	command -v go >/dev/null || die "go not found: put Go on PATH or set HOTPATH_BIN"
	HOTPATH=$TMP/hotpath
	echo "building hotpath (./cmd/hotpath) ..." >&2
	(cd "$ROOT" && go build -o "$HOTPATH" ./cmd/hotpath) || die "building ./cmd/hotpath failed"
fi

port_open "$PORT" && die "port $PORT is already in use (try --port)"
GOMAXPROCS=1 taskset -c "$SERVER_CPU" "$HOTPATH" serve --addr "127.0.0.1:$PORT" --h2c >"$TMP/server.log" 2>&1 &
PIDS+=($!)
wait_port "$PORT" || {
	sed 's/^/    /' "$TMP/server.log" >&2
	die "server not listening on $PORT after 5 s"
}

# run_cpu OUT CMD...: run CMD with its output in OUT and print the CPU
# seconds (user+sys) it and its threads used: the children times of a
# shell that waited for it (bash's times, to the millisecond).
run_cpu() {
	bash -c '"$@" >"$0" 2>&1 || echo "exit $?" >>"$0"; times' "$@" | awk 'NR == 2 {
		n = split($0, f, " "); s = 0
		for (i = 1; i <= n; i++) { split(f[i], p, "m"); sub(/s$/, "", p[2]); s += p[1] * 60 + p[2] }
		printf "%.3f", s }'
}
div() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f", (b > 0) ? a / b : 0 }'; }

echo "server: hotpath serve --h2c on CPU $SERVER_CPU (GOMAXPROCS=1); generators on CPU $LOAD_CPU (hotpath load with GOMAXPROCS=1)" >&2
echo "load: -c $CONNS, $STREAMS streams per connection, $REQUESTS requests per run, $RUNS round(s), $URL" >&2
echo "note: on a shared machine other processes disturb these numbers; compare medians of several runs" >&2
taskset -c "$LOAD_CPU" h2load -c "$CONNS" -m "$STREAMS" -n "$((REQUESTS / 5))" "$URL" >/dev/null 2>&1 || true # warm-up

declare -A RPS CPUS_ PER RATIO
names=(h2load "${engines[@]}")
for ((run = 1; run <= RUNS; run++)); do
	base=
	for name in "${names[@]}"; do
		if [[ $name == h2load ]]; then
			cmd=(taskset -c "$LOAD_CPU" h2load -c "$CONNS" -m "$STREAMS" -n "$REQUESTS" "$URL")
			cpu=$(run_cpu "$TMP/out.txt" "${cmd[@]}")
			rps=$(awk '/^finished in/ { print $4 }' "$TMP/out.txt")
			done=$(awk '/^requests:/ { print $8 }' "$TMP/out.txt")
			errs=$(awk '/^requests:/ { print $10 + $12 }' "$TMP/out.txt")
		else
			cmd=(env GOMAXPROCS=1 taskset -c "$LOAD_CPU" "$HOTPATH" load --quiet --json --proto h2c --engine "$name" -c "$CONNS" --streams "$STREAMS" -n "$REQUESTS" "$URL")
			cpu=$(run_cpu "$TMP/out.txt" "${cmd[@]}")
			rps=$(json_num "$TMP/out.txt" req_per_s)
			done=$(json_num "$TMP/out.txt" requests)
			errs=$(json_num "$TMP/out.txt" errors)
		fi
		[[ -n $rps && -n $done ]] || die "no numbers from $name: $(cat "$TMP/out.txt")"
		per=$(div "$done" "$cpu")
		ratio=
		if [[ -z $base ]]; then
			base=$per
		else
			ratio=$(awk -v a="$per" -v b="$base" 'BEGIN { printf "%.3f", (b > 0) ? a / b : 0 }')
			RATIO[$name]+=" $ratio"
			ratio="  ${ratio}x h2load"
		fi
		printf '  run %d: %-8s %9.0f req/s  %7d responses  %6.3f CPU-s  %8d req/CPU-s  (%s errors)%s\n' "$run" "$name" "$rps" "$done" "$cpu" "$per" "$errs" "$ratio" >&2
		RPS[$name]+=" $rps"
		CPUS_[$name]+=" $cpu"
		PER[$name]+=" $per"
	done
done

echo
# shellcheck disable=SC2086
base=$(median ${PER[h2load]})
printf '%-8s %12s %12s %14s %12s %14s   (medians of %d)\n' generator "req/s" "CPU-s" "req/CPU-s" "vs h2load" "round ratios" "$RUNS"
for name in "${names[@]}"; do
	# shellcheck disable=SC2086
	m=$(median ${PER[$name]})
	rr=1
	if [[ $name != h2load ]]; then
		# shellcheck disable=SC2086
		rr=$(median ${RATIO[$name]})
	fi
	# shellcheck disable=SC2086
	printf '%-8s %12.0f %12.3f %14.0f %11.3fx %13.3fx\n' "$name" "$(median ${RPS[$name]})" "$(median ${CPUS_[$name]})" "$m" "$(awk -v a="$m" -v b="$base" 'BEGIN { print (b > 0) ? a / b : 0 }')" "$rr"
done
echo "requests per CPU-second of the generator process; the target for --engine fast is >= 0.9x h2load's." >&2
