#!/usr/bin/env bash
# load.sh: measure `hotpath load` against wrk on one pinned core, as the
# load generator issue asks: the same server (hotpath serve, native API,
# GOMAXPROCS=1) alone on one CPU, then wrk -t1 -c50 and hotpath load -c 50
# (GOMAXPROCS=1) in turn alone on the other CPU, same URL, same duration.
# It prints req/s of both per run, the medians and hotpath/wrk; optionally
# it checks the open loop's rate accuracy (--rate-check).
#
# Usage:
#   bash bench/load.sh                       # 3 runs of 10 s each
#   bash bench/load.sh --runs 5 --duration 10
#   bash bench/load.sh --rate-check          # also: --rate 10000 for 30 s, achieved vs asked
#
# Run bash bench/load.sh --help for every flag. See bench/README.md.
set -euo pipefail

usage() {
	cat <<'EOF2'
Usage: bash bench/load.sh [flags]

Flags:
  --duration S     seconds per measured run (default 10)
  --warmup S       unmeasured wrk seconds before the runs (default 2)
  --conns C        connections for both generators (default 50)
  --runs R         runs, wrk and hotpath load alternating; medians reported (default 3)
  --server-cpu N   CPU the server is pinned to (default 1)
  --load-cpu N     CPU the load generators are pinned to (default 0)
  --port P         server port on 127.0.0.1 (default 18180)
  --path P         URL path (default /)
  --targets FILE   hotpath load sends this target file's mix (--targets, vegeta's
                   formats; its URLs must name 127.0.0.1:PORT) while wrk keeps the
                   single URL, unless --wrk-script gives wrk the same mix
  --wrk-script F   wrk runs with -s F (e.g. bench/mix/mix.lua, the mix of
                   bench/mix/mix.jsonl), for both generators on the same requests
  --rate-check     also run hotpath load --rate RATE for RATE_S seconds (open loop)
                   and report the achieved rate against the target
  --rate R         target rate of --rate-check (default 10000)
  --rate-duration S  seconds of --rate-check (default 30)
  -h, --help       this text

Environment:
  HOTPATH_BIN      use this hotpath binary instead of building ./cmd/hotpath
  SERVER_CMD       serve with this command instead ({addr} becomes 127.0.0.1:PORT),
                   e.g. SERVER_CMD='nginx -c /path/nginx.conf' (it must stay in the foreground)
EOF2
}

die() {
	echo "load.sh: $*" >&2
	exit 2
}

DURATION=10
WARMUP=2
CONNS=50
RUNS=3
SERVER_CPU=1
LOAD_CPU=0
PORT=18180
URLPATH=/
TARGETS=
WRK_ARGS=()
RATE_CHECK=0
RATE=10000
RATE_DURATION=30

need_int() { [[ $2 =~ ^[0-9]+$ ]] || die "$1 wants a whole number, got '$2' (see --help)"; }

while (($# > 0)); do
	case $1 in
	--duration | --warmup | --conns | --runs | --server-cpu | --load-cpu | --port | --rate | --rate-duration)
		(($# >= 2)) || die "$1 needs a value (see --help)"
		need_int "$1" "$2"
		case $1 in
		--duration) DURATION=$2 ;;
		--warmup) WARMUP=$2 ;;
		--conns) CONNS=$2 ;;
		--runs) RUNS=$2 ;;
		--server-cpu) SERVER_CPU=$2 ;;
		--load-cpu) LOAD_CPU=$2 ;;
		--port) PORT=$2 ;;
		--rate) RATE=$2 ;;
		--rate-duration) RATE_DURATION=$2 ;;
		esac
		shift 2
		;;
	--path)
		(($# >= 2)) || die "--path needs a value"
		URLPATH=$2
		shift 2
		;;
	--wrk-script)
		(($# >= 2)) || die "--wrk-script needs a file"
		[[ -r $2 ]] || die "--wrk-script $2: no such file"
		WRK_ARGS=(-s "$2")
		shift 2
		;;
	--targets)
		(($# >= 2)) || die "--targets needs a file"
		[[ -r $2 ]] || die "--targets $2: no such file"
		TARGETS=$2
		shift 2
		;;
	--rate-check)
		RATE_CHECK=1
		shift
		;;
	-h | --help)
		usage
		exit 0
		;;
	*) die "unknown flag '$1' (see --help)" ;;
	esac
done
((DURATION >= 1 && RUNS >= 1 && CONNS >= 1)) || die "--duration, --runs and --conns must be at least 1"

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/hotpath-load-bench.XXXXXX")
URL=http://127.0.0.1:$PORT$URLPATH
# What hotpath load sends: the URL, or the --targets mix.
LOAD_WHAT=("$URL")
[[ -n $TARGETS ]] && LOAD_WHAT=(--targets "$TARGETS")

# The exit trap ends every process in PIDS and removes $TMP.
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"

command -v wrk >/dev/null || die "wrk not found: install it (apt-get install wrk) and run again"
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

SERVER=${SERVER_CMD:-"$HOTPATH serve --addr {addr}"}
read -ra argv <<<"${SERVER//\{addr\}/127.0.0.1:$PORT}"
GOMAXPROCS=1 taskset -c "$SERVER_CPU" "${argv[@]}" >"$TMP/server.log" 2>&1 &
PIDS+=($!)
for ((t = 0; t < 100; t++)); do
	port_open "$PORT" && break
	sleep 0.1
done
port_open "$PORT" || {
	sed 's/^/    /' "$TMP/server.log" >&2
	die "server not listening on $PORT after 10 s"
}

# run_cpu OUT CMD...: run CMD with its output in OUT; print the CPU ticks
# (utime+stime) it used, read from the waiting shell's cutime+cstime, so a
# noisy machine changes req/s but hardly CPU per request.
run_cpu() {
	bash -c '"$@" >"$0" 2>&1 || echo "exit $?" >>"$0"; read -r stat </proc/$$/stat; rest=${stat##*) }; read -ra f <<<"$rest"; echo $((f[13] + f[14]))' "$@"
}
CLK_TCK=$(getconf CLK_TCK)
# us_per_req TICKS REQUESTS
us_per_req() { awk -v t="$1" -v hz="$CLK_TCK" -v n="$2" 'BEGIN { printf "%.2f", (n > 0) ? t * 1e6 / hz / n : 0 }'; }


echo "server: ${argv[*]##*/} on CPU $SERVER_CPU (GOMAXPROCS=1); generators on CPU $LOAD_CPU, $CONNS connections, ${DURATION}s per run, $RUNS run(s), $URL${TARGETS:+ (hotpath load: --targets $TARGETS)}${WRK_ARGS[1]:+ (wrk: -s ${WRK_ARGS[1]})}" >&2
echo "note: on a shared machine other processes disturb these numbers; compare medians of several runs" >&2
taskset -c "$LOAD_CPU" wrk -t1 -c"$CONNS" -d"$WARMUP"s "${WRK_ARGS[@]}" "$URL" >/dev/null 2>&1 || true

WRK=()
HP=()
WCPU=()
HCPU=()
for ((run = 1; run <= RUNS; run++)); do
	wt=$(run_cpu "$TMP/wrk.txt" taskset -c "$LOAD_CPU" wrk -t1 -c"$CONNS" -d"$DURATION"s "${WRK_ARGS[@]}" "$URL")
	w=$(awk '/^Requests\/sec:/ { print $2 }' "$TMP/wrk.txt")
	wn=$(awk '/ requests in / { print $1 }' "$TMP/wrk.txt")
	[[ -n $w && -n $wn ]] || die "no numbers from wrk: $(cat "$TMP/wrk.txt")"
	ht=$(GOMAXPROCS=1 run_cpu "$TMP/hp.json" taskset -c "$LOAD_CPU" "$HOTPATH" load --quiet --json -c "$CONNS" -d "$DURATION"s "${LOAD_WHAT[@]}")
	h=$(json_num "$TMP/hp.json" req_per_s)
	hn=$(json_num "$TMP/hp.json" sent)
	errs=$(json_num "$TMP/hp.json" errors)
	[[ -n $h && -n $hn ]] || die "no numbers from hotpath load: $(cat "$TMP/hp.json")"
	wc=$(us_per_req "$wt" "$wn")
	hc=$(us_per_req "$ht" "$hn")
	printf '  run %d: wrk %8.0f req/s %6s CPU-us/req   hotpath load %8.0f req/s %6s CPU-us/req (%s errors)   req/s ratio %.3f\n' \
		"$run" "$w" "$wc" "$h" "$hc" "$errs" "$(awk -v a="$h" -v b="$w" 'BEGIN { print a / b }')" >&2
	WRK+=("$w")
	HP+=("$h")
	WCPU+=("$wc")
	HCPU+=("$hc")
done
mw=$(median "${WRK[@]}")
mh=$(median "${HP[@]}")
mwc=$(median "${WCPU[@]}")
mhc=$(median "${HCPU[@]}")
printf '\nmedian of %d: wrk %.0f req/s (%s CPU-us/req), hotpath load %.0f req/s (%s CPU-us/req)\n' "$RUNS" "$mw" "$mwc" "$mh" "$mhc"
printf 'hotpath/wrk: req/s %.3f, requests per CPU-second %.3f (target >= 0.8)\n' \
	"$(awk -v a="$mh" -v b="$mw" 'BEGIN { print a / b }')" "$(awk -v a="$mhc" -v b="$mwc" 'BEGIN { print (a > 0) ? b / a : 0 }')"
echo "req/s compares only while the server is not the limit; CPU per request compares either way." >&2

if ((RATE_CHECK)); then
	echo "rate check: hotpath load --rate $RATE -c $CONNS -d ${RATE_DURATION}s (GOMAXPROCS=1, CPU $LOAD_CPU) ..." >&2
	GOMAXPROCS=1 taskset -c "$LOAD_CPU" "$HOTPATH" load --quiet --json --rate "$RATE" -c "$CONNS" -d "$RATE_DURATION"s "$URL" >"$TMP/rate.json" 2>"$TMP/rate.err" ||
		die "hotpath load --rate failed: $(cat "$TMP/rate.err")"
	a=$(json_num "$TMP/rate.json" achieved_rate)
	d=$(json_num "$TMP/rate.json" dropped)
	lag=$(grep -A12 '"schedule_lag"' "$TMP/rate.json" | json_num /dev/stdin p99_us)
	printf 'rate check: asked %d req/s, achieved %.1f req/s = %.3f%% (target 99-101%%), %s dropped starts, schedule lag p99 %s us\n' \
		"$RATE" "$a" "$(awk -v a="$a" -v r="$RATE" 'BEGIN { print 100 * a / r }')" "$d" "$lag"
fi
