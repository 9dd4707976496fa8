#!/usr/bin/env bash
# server.sh: compare HTTP/1.1 servers on a "Hello, World!" endpoint the way
# /work/shared/GUIDE.md ("How we measure") says: each server alone on one
# CPU with GOMAXPROCS=1, wrk alone on another CPU, 50 keep-alive connections.
# It reports requests/s and the server's CPU time per request (utime+stime
# from /proc/PID/stat), which stays fair when wrk saturates first.
#
# Usage:
#   bash bench/server.sh                      # throughput, 10 s per server
#   bash bench/server.sh --duration 5 --runs 3
#   bash bench/server.sh --pipeline 16        # 16 pipelined requests per write
#   bash bench/server.sh --idle 18000         # RSS per idle keep-alive connection, then wake them all
#   bash bench/server.sh --only hotpath,fasthttp --json out.json
#
# Run bash bench/server.sh --help for every flag. See bench/README.md.
set -euo pipefail

usage() {
	cat <<'EOF'
Usage: bash bench/server.sh [flags]

Modes (default: throughput, plain keep-alive requests):
  --pipeline D     throughput with D requests pipelined per write (wrk + bench/pipeline.lua)
  --idle N         no load: open N idle keep-alive connections per server (bench/peers
                   idleconns, from several 127.x source addresses, in as many client
                   processes as the descriptor limit needs) and report the server's RSS
                   per connection; then wake them all with one request each and report
                   how many were answered and the wake-up latency (p50, p99). Rows:
                   hotpath with idle parking and without (HOTPATH_IDLEPARK=off), both
                   APIs, net/http, fasthttp, nginx (where installed)
  --no-wake        with --idle: skip the wake-up
  --tls            with --idle: the connections use TLS (rows served by hotpath serve --tls)
  --park-ab        throughput and --pipeline: add hotpath rows with idle parking off
                   (HOTPATH_IDLEPARK=off), to show that busy connections do not pay for it
  --veth           servers and wrk meet over a veth pair with MTU 1500 between two network
                   namespaces (root, iproute2; created and removed by the script) instead of
                   loopback (throughput and --pipeline; not --idle)

Flags:
  --duration S     measured seconds per server and run (default 10)
  --warmup S       unmeasured wrk seconds before each measured run (default 2)
  --conns C        wrk connections (default 50)
  --runs R         repeat R times, servers interleaved, report medians (default 1)
  --only A,B       run only these rows (names as in the table, comma-separated)
  --rev REV        add a row "hotpath@REV": ./cmd/hotpath built from git revision REV (a
                   temporary worktree), native API, served beside this tree's; repeatable.
                   With --runs, rounds interleave the revisions, for a before/after of the
                   hot path (e.g. --rev dc17a0e --only hotpath,hotpath@dc17a0e --runs 3)
  --json FILE      also write the results as JSON to FILE
  --server-cpu N   CPU the servers are pinned to (default 0)
  --load-cpu N     CPU wrk / idleconns is pinned to (default 1)
  --port-base P    row i listens on 127.0.0.1:P+i (default 18080)
  --retries N      measure a run again, up to N times, when something else used more
                   than 5% of the server's CPU during it (default 2)
  --wait-quiet S   before each row, wait up to S seconds for both CPUs to be idle
                   (default 0: only check once at the start and warn)
  -h, --help       this text

Environment:
  HOTPATH_BIN      use this hotpath binary instead of building ./cmd/hotpath

Example:
  bash bench/server.sh --duration 5 --runs 3 --json /tmp/bench.json
EOF
}

die() {
	echo "server.sh: $*" >&2
	exit 2
}

DURATION=10
WARMUP=2
CONNS=50
PIPELINE=0
IDLE=0
RUNS=1
ONLY=""
JSON=""
SERVER_CPU=0
LOAD_CPU=1
PORT_BASE=18080
WAIT_QUIET=0
RETRIES=2
TLS=0
WAKE=1
PARK_AB=0
VETH_PATH=0
REVS=()
OTHER_MAX=5 # percent of the server's CPU used by others that marks a run disturbed

need_int() { [[ $2 =~ ^[0-9]+$ ]] || die "$1 wants a whole number, got '$2' (see --help)"; }

while (($# > 0)); do
	case $1 in
	--duration | --warmup | --conns | --pipeline | --idle | --runs | --server-cpu | --load-cpu | --port-base | --wait-quiet | --retries)
		(($# >= 2)) || die "$1 needs a value (see --help)"
		need_int "$1" "$2"
		case $1 in
		--duration) DURATION=$2 ;;
		--warmup) WARMUP=$2 ;;
		--conns) CONNS=$2 ;;
		--pipeline) PIPELINE=$2 ;;
		--idle) IDLE=$2 ;;
		--runs) RUNS=$2 ;;
		--server-cpu) SERVER_CPU=$2 ;;
		--load-cpu) LOAD_CPU=$2 ;;
		--port-base) PORT_BASE=$2 ;;
		--wait-quiet) WAIT_QUIET=$2 ;;
		--retries) RETRIES=$2 ;;
		esac
		shift 2
		;;
	--only | --json | --rev)
		(($# >= 2)) || die "$1 needs a value (see --help)"
		case $1 in
		--only) ONLY=$2 ;;
		--json) JSON=$2 ;;
		--rev) REVS+=("$2") ;;
		esac
		shift 2
		;;
	--tls)
		TLS=1
		shift
		;;
	--no-wake)
		WAKE=0
		shift
		;;
	--park-ab)
		PARK_AB=1
		shift
		;;
	--veth)
		VETH_PATH=1
		shift
		;;
	-h | --help)
		usage
		exit 0
		;;
	*) die "unknown flag '$1' (see --help)" ;;
	esac
done
((DURATION >= 1)) || die "--duration must be at least 1"
((TLS == 0 || ${#REVS[@]} == 0)) || die "--rev rows serve plain HTTP/1.1: not with --tls"
((RUNS >= 1)) || die "--runs must be at least 1"
((CONNS >= 1)) || die "--conns must be at least 1"
((PIPELINE == 0 || IDLE == 0)) || die "--pipeline and --idle are separate modes: pick one"
((TLS == 0 || IDLE > 0)) || die "--tls goes with --idle (idle TLS connections)"

if ((IDLE > 0)); then
	MODE=idle
elif ((PIPELINE > 0)); then
	MODE=pipeline
else
	MODE=throughput
fi

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH=$ROOT/bench
TMP=$(mktemp -d "${TMPDIR:-/tmp}/hotpath-bench.XXXXXX")
CLK_TCK=$(getconf CLK_TCK)

# The exit trap ends every process in PIDS and removes $TMP.
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"
if ((VETH_PATH)); then
	[[ $MODE != idle ]] || die "--veth measures throughput and --pipeline, not --idle"
	veth_up || die "--veth: cannot create the network namespaces (root and iproute2 needed)"
	# The veth's packet processing runs as softirq on the server's CPU:
	# "other" there is the path's own cost, not a disturbance.
	OTHER_MAX=100
fi

# ---------------------------------------------------------------- tools

if ! command -v wrk >/dev/null; then
	if [[ $MODE != idle ]]; then
		if ((EUID == 0)) && command -v apt-get >/dev/null; then
			echo "wrk not found: installing it with apt-get" >&2
			apt-get update -qq >/dev/null && apt-get install -y -qq wrk >/dev/null
		fi
		command -v wrk >/dev/null || die "wrk not found: install it (apt-get install wrk) and run again"
	fi
fi
command -v taskset >/dev/null || die "taskset not found: install util-linux"
command -v go >/dev/null || die "go not found: put Go 1.24+ on PATH"
CPUS=$(nproc)
((SERVER_CPU < CPUS && LOAD_CPU < CPUS)) || die "--server-cpu $SERVER_CPU / --load-cpu $LOAD_CPU: this machine has $CPUS CPUs"
[[ $SERVER_CPU != "$LOAD_CPU" ]] || echo "warning: server and load generator share CPU $SERVER_CPU: numbers will not compare with the guide's" >&2

echo "building peers (bench/peers) ..." >&2
(cd "$BENCH/peers" && go build -o "$TMP/" ./cmd/fasthttp-hello ./cmd/nethttp-hello ./cmd/idleconns) ||
	die "building bench/peers failed (try: cd bench/peers && GOFLAGS=-mod=mod go mod tidy)"

if [[ -n ${HOTPATH_BIN:-} ]]; then
	HOTPATH=$HOTPATH_BIN
	echo "using HOTPATH_BIN=$HOTPATH" >&2
else
	HOTPATH=$TMP/hotpath
	echo "building hotpath (./cmd/hotpath) ..." >&2
	if ! (cd "$ROOT" && go build -o "$HOTPATH" ./cmd/hotpath) >"$TMP/hotpath-build.log" 2>&1; then
		echo "warning: ./cmd/hotpath does not build; its rows will be skipped:" >&2
		sed 's/^/    /' "$TMP/hotpath-build.log" | head -20 >&2
	fi
fi

# --rev: each revision's ./cmd/hotpath, built in a worktree of its own
# (removed on exit with $TMP).
REV_BINS=()
for rev in ${REVS[@]+"${REVS[@]}"}; do
	echo "building hotpath at $rev ..." >&2
	src=$TMP/src-$rev
	git -C "$ROOT" worktree add -q --detach "$src" "$rev" || die "--rev $rev: not a revision of this repository"
	if ! (cd "$src" && go build -o "$TMP/hotpath-$rev" ./cmd/hotpath) >"$TMP/hotpath-$rev-build.log" 2>&1; then
		sed 's/^/    /' "$TMP/hotpath-$rev-build.log" | head -20 >&2
		git -C "$ROOT" worktree remove --force "$src"
		die "--rev $rev: ./cmd/hotpath does not build there"
	fi
	git -C "$ROOT" worktree remove --force "$src"
	REV_BINS+=("hotpath@$rev|$TMP/hotpath-$rev serve --addr {addr} --engine hotpath")
done

# ---------------------------------------------------------------- servers

# The rows, one per server: "name|command". {addr} becomes HOST:PORT (127.0.0.1, or 10.77.0.1 with --veth).
# Each command must serve "/" with 200 "Hello, World!" and the headers Date,
# Content-Type and Content-Length, and nothing else. Add a row to compare
# another server; a row whose binary is missing or that does not start is
# skipped with a message. Ratios are against the rows named "net/http"
# (falling back to "net/http plain") and "fasthttp".
# "nopark" rows run hotpath with idle parking off (HOTPATH_IDLEPARK=off, read
# by the server package): in --idle mode always, with --park-ab otherwise.
NOPARK="/usr/bin/env HOTPATH_IDLEPARK=off $HOTPATH"
SERVERS=(
	"hotpath|$HOTPATH serve --addr {addr} --engine hotpath"
	"hotpath handler|$HOTPATH serve --addr {addr} --engine hotpath --api handler"
	"net/http|$HOTPATH serve --addr {addr} --engine nethttp"
	"net/http plain|$TMP/nethttp-hello -addr {addr}"
	"fasthttp|$TMP/fasthttp-hello -addr {addr}"
)
if ((PARK_AB)) || [[ $MODE == idle ]]; then
	SERVERS=(
		"${SERVERS[0]}"
		"hotpath nopark|$NOPARK serve --addr {addr} --engine hotpath"
		"${SERVERS[1]}"
		"hotpath handler nopark|$NOPARK serve --addr {addr} --engine hotpath --api handler"
		"${SERVERS[@]:2}"
	)
fi
SERVERS+=(${REV_BINS[@]+"${REV_BINS[@]}"})

# nginx for --idle (one process, no master, "Hello, World!" from memory):
# bench/nginx-idle.sh writes its configuration for the row's address.
NGINX_BIN=$(command -v nginx || true)
if [[ $MODE == idle && -n $NGINX_BIN ]] && ((!TLS)); then
	SERVERS+=("nginx|$BENCH/nginx-idle.sh {addr}")
	# Room to spare: nginx closes idle keep-alive connections when its free
	# ones run low. Its descriptors: the hard limit, which a worker as root
	# may take.
	export NGINX_BIN NGINX_DIR=$TMP/nginx NGINX_CONNS=$((IDLE + 1500)) NGINX_NOFILE=$(ulimit -Hn)
fi

NAMES=()
CMDS=()
if ((TLS)); then # only hotpath serve speaks TLS here
	SERVERS=(
		"hotpath|$HOTPATH serve --tls --addr {addr} --engine hotpath"
		"hotpath nopark|$NOPARK serve --tls --addr {addr} --engine hotpath"
		"hotpath handler|$HOTPATH serve --tls --addr {addr} --engine hotpath --api handler"
		"hotpath handler nopark|$NOPARK serve --tls --addr {addr} --engine hotpath --api handler"
		"net/http|$HOTPATH serve --tls --addr {addr} --engine nethttp"
	)
	IDLE_FLAGS=(-tls)
else
	IDLE_FLAGS=()
fi
for row in "${SERVERS[@]}"; do
	name=${row%%|*}
	if [[ -n $ONLY && ",$ONLY," != *",$name,"* ]]; then
		continue
	fi
	NAMES+=("$name")
	CMDS+=("${row#*|}")
done
((${#NAMES[@]} > 0)) || die "--only '$ONLY' matches no row; rows: $(IFS=,; echo "${SERVERS[*]%%|*}")"


# start_server I: start row I on its port, pinned, and wait until it accepts.
# Sets SERVER_PID. Returns 1 when it cannot start, with the reason in
# WHY_NOT and on stderr.
SERVER_PID=""
WHY_NOT=""
skip() { # skip I REASON...
	local i=$1
	shift
	WHY_NOT="$*"
	echo "skip ${NAMES[$i]}: $*" >&2
}
start_server() {
	local i=$1 port=$((PORT_BASE + $1)) log=$TMP/server-$1.log
	local -a argv
	read -ra argv <<<"${CMDS[$i]//\{addr\}/$HOST:$port}"
	if [[ ! -x ${argv[0]} ]]; then
		skip "$i" "${argv[0]##*/} is not built"
		return 1
	fi
	if port_open "$port"; then
		skip "$i" "port $port is already in use (try --port-base)"
		return 1
	fi
	GOMAXPROCS=1 "${NS_SRV[@]}" taskset -c "$SERVER_CPU" "${argv[@]}" >"$log" 2>&1 &
	SERVER_PID=$!
	PIDS+=("$SERVER_PID")
	local t
	for ((t = 0; t < 100; t++)); do
		if ! kill -0 "$SERVER_PID" 2>/dev/null; then
			skip "$i" "'${argv[*]##*/}' exited at start"
			sed 's/^/    /' "$log" | tail -10 >&2
			wait "$SERVER_PID" 2>/dev/null || true
			return 1
		fi
		if port_open "$port"; then
			return 0
		fi
		sleep 0.1
	done
	skip "$i" "not listening on $port after 10 s"
	stop_server
	return 1
}

stop_server() {
	[[ -n $SERVER_PID ]] || return 0
	kill "$SERVER_PID" 2>/dev/null || true
	wait "$SERVER_PID" 2>/dev/null || true
	SERVER_PID=""
}

# check_response PORT: one GET /, and a warning unless the response is 200
# "Hello, World!" with exactly Date, Content-Type and Content-Length, so the
# rows compare the same bytes on the wire. Prints the header names.
check_response() {
	local port=$1 line status="" names=() len=0 body=""
	if ((TLS)); then
		echo "(TLS: idleconns checks each response)"
		return
	fi
	if ((VETH)); then
		echo "(veth: not checked; loopback runs check the same servers)"
		return
	fi
	if ! exec 3<>"/dev/tcp/127.0.0.1/$port"; then
		echo "(no connection)"
		return
	fi
	printf 'GET / HTTP/1.1\r\nHost: 127.0.0.1:%s\r\n\r\n' "$port" >&3
	IFS= read -r -t 3 status <&3 || true
	while IFS= read -r -t 3 line <&3; do
		line=${line%$'\r'}
		[[ -z $line ]] && break
		names+=("${line%%:*}")
		if [[ ${line,,} == content-length:* ]]; then
			len=${line#*:}
			len=${len// /}
		fi
	done
	if [[ $len =~ ^[0-9]+$ ]] && ((len > 0)); then
		IFS= read -r -N "$len" -t 3 body <&3 || true
	fi
	exec 3>&-
	local got want="Content-Length,Content-Type,Date"
	got=$(printf '%s\n' "${names[@]}" | sort -f | paste -sd, -)
	echo "${status%$'\r'} [${names[*]}] body ${#body} B"
	if [[ $MODE == idle ]]; then
		got=$want # idle rows compare memory, not bytes: nginx adds Server and Connection
	fi
	if [[ ${status%$'\r'} != "HTTP/1.1 200 OK" || ${got,,} != "${want,,}" || $body != "Hello, World!" ]]; then
		echo "warning: response differs from 200 'Hello, World!' with Date, Content-Type, Content-Length: rows may not compare the same work" >&2
	fi
}

# cpu_ticks PID: utime+stime of the whole process, in clock ticks (fields 14
# and 15 of /proc/PID/stat; counted after the ")" ending field 2, which may
# hold spaces).
cpu_ticks() {
	local ut st
	read -r ut st <<<"$(cpu_ticks_split "$1")"
	echo $((ut + st))
}

# cpu_ticks_split PID: "utime stime" of the whole process, in clock ticks.
# The split shows where a server's time goes: on loopback most of it is the
# kernel's TCP work (stime), which no user-space engine can remove.
cpu_ticks_split() {
	local stat rest f
	stat=$(<"/proc/$1/stat")
	rest=${stat##*) }
	read -ra f <<<"$rest"
	echo "${f[11]} ${f[12]}"
}

# cpu_busy_idle N: "busy idle" jiffies of CPU N from /proc/stat.
cpu_busy_idle() {
	awk -v c="cpu$1" '$1 == c { idle = $5 + $6; t = 0; for (i = 2; i <= 9; i++) t += $i; print t - idle, idle }' /proc/stat
}

rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }


# ---------------------------------------------------------------- measuring

WRK_ARGS=()
if [[ $MODE == pipeline ]]; then
	WRK_ARGS=(-s "$BENCH/pipeline.lua")
fi
wrk_run() { # wrk_run PORT SECONDS
	local url=http://$HOST:$1/
	if [[ $MODE == pipeline ]]; then
		"${NS_CLI[@]}" taskset -c "$LOAD_CPU" wrk -t1 -c"$CONNS" -d"$2"s "${WRK_ARGS[@]}" "$url" -- "$PIPELINE"
	else
		"${NS_CLI[@]}" taskset -c "$LOAD_CPU" wrk -t1 -c"$CONNS" -d"$2"s "$url"
	fi
}

declare -A RPS=() CPU=() SRV=() GEN=() OTH=() ERR=() DISTURBED=() KBC=() RSS0=() RSS1=() ALIVE=() SKIP=() RESP=()
declare -A WOKE=() WP50=() WP99=() KBW=()

# measure_load I: warm-up, then one measured wrk run against the running row
# I. Leaves the results in L: req/s, CPU-µs/req, server CPU %, load CPU %,
# other CPU %, wrk errors; L stays empty when wrk measured nothing.
L=()
measure_load() {
	local i=$1 port=$((PORT_BASE + $1)) out=$TMP/wrk-$1.txt
	wrk_run "$port" "$WARMUP" >/dev/null 2>&1 || true
	local t0 t1 w0 w1 c0 c1 s0 s1
	read -ra c0 <<<"$(cpu_busy_idle "$LOAD_CPU")"
	read -ra s0 <<<"$(cpu_busy_idle "$SERVER_CPU")"
	local u0 u1
	read -ra u0 <<<"$(cpu_ticks_split "$SERVER_PID")"
	t0=$((u0[0] + u0[1]))
	w0=$(date +%s%N)
	if ! wrk_run "$port" "$DURATION" >"$out" 2>&1; then
		echo "warning: wrk failed against ${NAMES[$i]}:" >&2
		sed 's/^/    /' "$out" >&2
	fi
	w1=$(date +%s%N)
	read -ra u1 <<<"$(cpu_ticks_split "$SERVER_PID")"
	t1=$((u1[0] + u1[1]))
	read -ra s1 <<<"$(cpu_busy_idle "$SERVER_CPU")"
	read -ra c1 <<<"$(cpu_busy_idle "$LOAD_CPU")"

	local reqs rps errs
	reqs=$(awk '/ requests in / { print $1 }' "$out")
	rps=$(awk '/^Requests\/sec:/ { print $2 }' "$out")
	errs=$(awk '/Socket errors:/ { gsub(/,/, ""); s += $4 + $6 + $8 + $10 } /Non-2xx/ { s += $NF } END { print s + 0 }' "$out")
	if [[ -z $reqs || -z $rps || $reqs == 0 ]]; then
		echo "warning: no requests measured for ${NAMES[$i]}; wrk said:" >&2
		sed 's/^/    /' "$out" >&2
		return
	fi
	((errs == 0)) || echo "warning: ${NAMES[$i]}: $errs wrk errors (socket errors or non-2xx)" >&2
	local cpu srv gen
	cpu=$(awk -v t=$((t1 - t0)) -v hz="$CLK_TCK" -v n="$reqs" 'BEGIN { printf "%.3f", t * 1e6 / hz / n }')
	srv=$(awk -v t=$((t1 - t0)) -v hz="$CLK_TCK" -v ns=$((w1 - w0)) 'BEGIN { printf "%.0f", 100 * t / hz / (ns / 1e9) }')
	gen=$(awk -v b=$((c1[0] - c0[0])) -v i=$((c1[1] - c0[1])) 'BEGIN { printf "%.0f", (b + i) ? 100 * b / (b + i) : 0 }')
	# Busy time on the server's CPU that the server was not charged for:
	# other processes (another benchmark, a build) or interrupts. A few
	# percent is normal; more means the run was disturbed.
	local other
	other=$(awk -v b=$((s1[0] - s0[0])) -v i=$((s1[1] - s0[1])) -v t=$((t1 - t0)) 'BEGIN { o = (b + i) ? 100 * (b - t) / (b + i) : 0; printf "%.0f", ((o < 0) ? 0 : o) }')
	local usr sys
	usr=$(awk -v t=$((u1[0] - u0[0])) -v hz="$CLK_TCK" -v n="$reqs" 'BEGIN { printf "%.2f", t * 1e6 / hz / n }')
	sys=$(awk -v t=$((u1[1] - u0[1])) -v hz="$CLK_TCK" -v n="$reqs" 'BEGIN { printf "%.2f", t * 1e6 / hz / n }')
	printf '  %-16s run %d: %10.0f req/s  %7.3f CPU-us/req (user %s, kernel %s)  server CPU %s%%  wrk CPU %s%%  other on CPU %s %s%%\n' \
		"${NAMES[$i]}" "$run" "$rps" "$cpu" "$usr" "$sys" "$srv" "$gen" "$SERVER_CPU" "$other" >&2
	L=("$rps" "$cpu" "$srv" "$gen" "$other" "$errs")
}

# measure_row I: measure_load, again up to RETRIES times while something
# else disturbs the run, and record the least disturbed attempt.
measure_row() {
	local i=$1 attempt best=()
	for ((attempt = 0; attempt <= RETRIES; attempt++)); do
		if ((attempt > 0)); then
			echo "  ${NAMES[$i]}: something else used ${best[4]}% of CPU $SERVER_CPU during the run: measuring again ($attempt of --retries $RETRIES)" >&2
			if ((WAIT_QUIET > 0)); then wait_quiet; else sleep 2; fi
		fi
		L=()
		measure_load "$i"
		((${#L[@]} > 0)) || continue
		if ((${#best[@]} == 0 || L[4] < best[4])); then
			best=("${L[@]}")
		fi
		((best[4] > OTHER_MAX)) || break
	done
	((${#best[@]} > 0)) || return 0
	if ((best[4] > OTHER_MAX)); then
		echo "warning: ${NAMES[$i]}: something else used ${best[4]}% of CPU $SERVER_CPU even in the least disturbed of $((RETRIES + 1)) attempts (another benchmark? a build?): this row is disturbed" >&2
		DISTURBED[$i]=1
	fi
	RPS[$i]+="${best[0]} "
	CPU[$i]+="${best[1]} "
	SRV[$i]+="${best[2]} "
	GEN[$i]+="${best[3]} "
	OTH[$i]+="${best[4]} "
	ERR[$i]=$((${ERR[$i]:-0} + best[5]))
}

# The idle clients: as many idleconns processes as the descriptor limit
# needs (each may hold the hard RLIMIT_NOFILE less some), each with its own
# 127.x source addresses (one per 5,000 connections) so that no address
# runs out of ephemeral ports.
IDLE_PROCS=1
IDLE_N=()
IDLE_SRC=()
if ((IDLE > 0)); then
	per_proc=$(($(ulimit -Hn) - 300))
	((per_proc > 0)) || die "--idle: the descriptor limit ($(ulimit -Hn)) is too low"
	IDLE_PROCS=$(((IDLE + per_proc - 1) / per_proc))
	for ((p = 0; p < IDLE_PROCS; p++)); do
		n=$((IDLE / IDLE_PROCS + (p < IDLE % IDLE_PROCS ? 1 : 0)))
		src=""
		for ((a = 0; a < (n + 4999) / 5000; a++)); do
			src+="${src:+,}127.0.$((p + 1)).$((a + 2))"
		done
		IDLE_N+=("$n")
		IDLE_SRC+=("$src")
	done
fi

# measure_idle I: RSS of the running row I before and after IDLE idle
# keep-alive connections, and (unless --no-wake) after waking them all
# with one request each, with the wake-up's latencies.
measure_idle() {
	local i=$1 port=$((PORT_BASE + $1)) out=$TMP/idle-$1
	# Warm the server with one request (one connection, closed again).
	taskset -c "$LOAD_CPU" "$TMP/idleconns" "${IDLE_FLAGS[@]}" -n 1 -addr "127.0.0.1:$port" -hold 0s >/dev/null 2>&1 || true
	sleep 1
	local before after woken=""
	before=$(rss_kb "$SERVER_PID")
	local -a ics=()
	local p t
	for ((p = 0; p < IDLE_PROCS; p++)); do
		: >"$out-$p.txt"
		rm -f "$out-$p.lat"
		taskset -c "$LOAD_CPU" "$TMP/idleconns" "${IDLE_FLAGS[@]}" -n "${IDLE_N[$p]}" -src "${IDLE_SRC[$p]}" \
			-addr "127.0.0.1:$port" -hold 600s -timeout 60s -wake -wake-out "$out-$p.lat" >"$out-$p.txt" 2>&1 &
		ics+=("$!")
		PIDS+=("$!")
	done
	# all_have PATTERN: every client's output has a line matching PATTERN
	# (or its client exited).
	all_have() {
		local p
		for ((p = 0; p < IDLE_PROCS; p++)); do
			grep -q "$1" "$out-$p.txt" || ! kill -0 "${ics[$p]}" 2>/dev/null || return 1
		done
	}
	for ((t = 0; t < 1200; t++)); do
		all_have '^ready' && break
		sleep 0.1
	done
	local open=0 failed_ready=0
	for ((p = 0; p < IDLE_PROCS; p++)); do
		if ! grep -q '^ready' "$out-$p.txt"; then
			echo "warning: idleconns $p did not get ready against ${NAMES[$i]}:" >&2
			sed 's/^/    /' "$out-$p.txt" | head -5 >&2
			failed_ready=1
		fi
		open=$((open + $(sed -n 's/^ready open=\([0-9]*\).*/\1/p' "$out-$p.txt" | head -1) + 0))
	done
	if ((failed_ready)); then
		kill "${ics[@]}" 2>/dev/null || true
		wait "${ics[@]}" 2>/dev/null || true
		return
	fi
	sleep 2 # let the server settle (goroutines parked, buffers released)
	after=$(rss_kb "$SERVER_PID")
	local sent=0 answered=0 p50="" p99="" wmax=""
	if ((WAKE)); then
		kill -USR1 "${ics[@]}" 2>/dev/null || true
		for ((t = 0; t < 1200; t++)); do
			all_have '^woke' && break
			sleep 0.1
		done
		for ((p = 0; p < IDLE_PROCS; p++)); do
			sent=$((sent + $(sed -n 's/^woke sent=\([0-9]*\).*/\1/p' "$out-$p.txt" | head -1) + 0))
		done
		answered=$(cat "$out"-*.lat 2>/dev/null | wc -l)
		if ((answered > 0)); then
			read -r p50 p99 wmax <<<"$(cat "$out"-*.lat | sort -n | awk '{ a[NR] = $1 } END {
				i50 = int(0.50 * NR) + 1; i99 = int(0.99 * NR) + 1; if (i50 > NR) i50 = NR; if (i99 > NR) i99 = NR
				printf "%.2f %.2f %.2f\n", a[i50] / 1000, a[i99] / 1000, a[NR] / 1000 }')"
		fi
		sleep 2 # settle again: parked again, or waiting on their goroutines
		woken=$(rss_kb "$SERVER_PID")
	fi
	kill -TERM "${ics[@]}" 2>/dev/null || true
	wait "${ics[@]}" 2>/dev/null || true
	local alive=0
	for ((p = 0; p < IDLE_PROCS; p++)); do
		alive=$((alive + $(sed -n 's/^done alive=\([0-9]*\).*/\1/p' "$out-$p.txt" | head -1) + 0))
	done
	if ((open < IDLE)); then
		echo "warning: ${NAMES[$i]}: only $open of $IDLE connections opened:" >&2
		cat "$out"-*.txt | grep -v '^ready\|^done\|^woke' | sed 's/^/    /' | head -5 >&2
	fi
	if ((alive < open)); then
		echo "warning: ${NAMES[$i]}: the server closed $((open - alive)) of $open idle connections during the hold" >&2
	fi
	((open > 0)) || return 0
	local kbc
	kbc=$(awk -v a="$after" -v b="$before" -v n="$open" 'BEGIN { printf "%.2f", (a - b) / n }')
	KBC[$i]+="$kbc "
	RSS0[$i]+="$before "
	RSS1[$i]+="$after "
	ALIVE[$i]="$alive/$open"
	local wake_txt=""
	if ((WAKE)); then
		WOKE[$i]="$answered/$sent"
		if [[ -n $p50 ]]; then
			WP50[$i]+="$p50 "
			WP99[$i]+="$p99 "
		fi
		KBW[$i]+="$(awk -v a="$woken" -v b="$before" -v n="$open" 'BEGIN { printf "%.2f", (a - b) / n }') "
		wake_txt=$(printf '; woken %s answered, p50 %s ms, p99 %s ms, max %s ms, then RSS %d KB' "$answered/$sent" "${p50:--}" "${p99:--}" "${wmax:--}" "$woken")
		((answered == sent && sent == open)) || echo "warning: ${NAMES[$i]}: $answered of $open woken connections answered" >&2
	fi
	printf '  %-22s run %d: RSS %d -> %d KB, %s KB per connection (%s alive)%s\n' \
		"${NAMES[$i]}" "$run" "$before" "$after" "$kbc" "$alive/$open" "$wake_txt" >&2
}

# busy_pct: "S L", the percent busy of the server's and the load CPU over
# the next second.
busy_pct() {
	local a b c d
	read -ra a <<<"$(cpu_busy_idle "$SERVER_CPU")"
	read -ra b <<<"$(cpu_busy_idle "$LOAD_CPU")"
	sleep 1
	read -ra c <<<"$(cpu_busy_idle "$SERVER_CPU")"
	read -ra d <<<"$(cpu_busy_idle "$LOAD_CPU")"
	awk -v sb=$((c[0] - a[0])) -v si=$((c[1] - a[1])) -v lb=$((d[0] - b[0])) -v li=$((d[1] - b[1])) \
		'BEGIN { printf "%d %d\n", (sb + si) ? 100 * sb / (sb + si) : 0, (lb + li) ? 100 * lb / (lb + li) : 0 }'
}

# wait_quiet: a benchmark wants the machine to itself. Wait up to
# --wait-quiet seconds for both CPUs to be at most 10% busy; warn if they
# are not.
wait_quiet() {
	local s l waited=0
	while :; do
		read -r s l <<<"$(busy_pct)"
		((s > 10 || l > 10)) || return 0
		if ((waited >= WAIT_QUIET)); then
			echo "warning: CPU $SERVER_CPU is ${s}% and CPU $LOAD_CPU ${l}% busy with something else: results will be disturbed (--wait-quiet S waits for quiet)" >&2
			return 0
		fi
		((waited > 0)) || echo "waiting up to ${WAIT_QUIET}s for CPUs $SERVER_CPU and $LOAD_CPU to be quiet (now ${s}% and ${l}% busy) ..." >&2
		sleep 1
		waited=$((waited + 2))
	done
}
((WAIT_QUIET > 0)) || wait_quiet

case $MODE in
throughput) echo "throughput: ${DURATION}s per server, ${CONNS} connections, ${RUNS} run(s), server on CPU $SERVER_CPU (GOMAXPROCS=1), wrk on CPU $LOAD_CPU" >&2 ;;
pipeline) echo "pipelined x${PIPELINE}: ${DURATION}s per server, ${CONNS} connections, ${RUNS} run(s), server on CPU $SERVER_CPU (GOMAXPROCS=1), wrk on CPU $LOAD_CPU" >&2 ;;
idle) echo "idle: ${IDLE} keep-alive connections per server, ${RUNS} run(s), server on CPU $SERVER_CPU (GOMAXPROCS=1)" >&2 ;;
esac

for ((run = 1; run <= RUNS; run++)); do
	for i in "${!NAMES[@]}"; do
		[[ -z ${SKIP[$i]:-} ]] || continue
		((WAIT_QUIET == 0)) || wait_quiet
		if ! start_server "$i"; then
			SKIP[$i]=$WHY_NOT
			continue
		fi
		if [[ -z ${RESP[$i]:-} ]]; then
			RESP[$i]=$(check_response $((PORT_BASE + i)))
			echo "  ${NAMES[$i]}: ${RESP[$i]}" >&2
		fi
		if [[ $MODE == idle ]]; then
			measure_idle "$i"
		else
			measure_row "$i"
		fi
		stop_server
	done
done

# ---------------------------------------------------------------- report

# Medians per row.
declare -A M_RPS=() M_CPU=() M_SRV=() M_GEN=() M_SPREAD=() M_KBC=() M_RSS0=() M_RSS1=() M_WP50=() M_WP99=() M_KBW=()
# spread V...: (max - min) / median in percent; "-" for a single value.
spread() {
	(($# > 1)) || {
		echo "-"
		return
	}
	printf '%s\n' "$@" | sort -g | awk -v m="$(median "$@")" '{ a[NR] = $1 } END { printf "%.0f%%", ((m > 0) ? 100 * (a[NR] - a[1]) / m : 0) }'
}
for i in "${!NAMES[@]}"; do
	if [[ -n ${RPS[$i]:-} ]]; then
		# shellcheck disable=SC2086 # word splitting of the run lists is intended
		{
			M_RPS[$i]=$(median ${RPS[$i]})
			M_CPU[$i]=$(median ${CPU[$i]})
			M_SRV[$i]=$(median ${SRV[$i]})
			M_GEN[$i]=$(median ${GEN[$i]})
			M_SPREAD[$i]=$(spread ${CPU[$i]})
		}
	fi
	if [[ -n ${KBC[$i]:-} ]]; then
		# shellcheck disable=SC2086
		{
			M_KBC[$i]=$(median ${KBC[$i]})
			M_RSS0[$i]=$(median ${RSS0[$i]})
			M_RSS1[$i]=$(median ${RSS1[$i]})
			[[ -z ${WP50[$i]:-} ]] || M_WP50[$i]=$(median ${WP50[$i]})
			[[ -z ${WP99[$i]:-} ]] || M_WP99[$i]=$(median ${WP99[$i]})
			[[ -z ${KBW[$i]:-} ]] || M_KBW[$i]=$(median ${KBW[$i]})
		}
	fi
done

row_index() { # row_index NAME...: index of the first named row that has results
	local n i
	for n in "$@"; do
		for i in "${!NAMES[@]}"; do
			if [[ ${NAMES[$i]} == "$n" && -n ${M_RPS[$i]:-}${M_KBC[$i]:-} ]]; then
				echo "$i"
				return
			fi
		done
	done
}
NH=$(row_index "net/http" "net/http plain")
FH=$(row_index "fasthttp")
NH=${NH:-none} # "none" is a key no row has: its lookups come back empty
FH=${FH:-none}

# ratio HIGHER_IS_BETTER ROW_VALUE BASE_VALUE: a factor where > 1 means the
# row does better than the base.
ratio() {
	[[ -n $2 && -n $3 ]] || {
		echo "-"
		return
	}
	awk -v up="$1" -v r="$2" -v b="$3" 'BEGIN { if (r <= 0 || b <= 0) { print "-"; exit } printf "%.2fx", up ? r / b : b / r }'
}

echo
if [[ $MODE == idle ]]; then
	printf '%-22s %9s %9s %8s %9s %9s %13s %13s %8s %8s %9s\n' server "RSS0 KB" "RSS KB" "KB/conn" "vs net/h" "vs fasth" alive woken \
		"p50 ms" "p99 ms" "KB woken"
	for i in "${!NAMES[@]}"; do
		if [[ -z ${M_KBC[$i]:-} ]]; then
			printf '%-22s %s\n' "${NAMES[$i]}" "skipped (${SKIP[$i]:-no result})"
			continue
		fi
		printf '%-22s %9.0f %9.0f %8.2f %9s %9s %13s %13s %8s %8s %9s\n' "${NAMES[$i]}" "${M_RSS0[$i]}" "${M_RSS1[$i]}" "${M_KBC[$i]}" \
			"$(ratio 0 "${M_KBC[$i]}" "${M_KBC[$NH]:-}")" "$(ratio 0 "${M_KBC[$i]}" "${M_KBC[$FH]:-}")" "${ALIVE[$i]}" \
			"${WOKE[$i]:--}" "${M_WP50[$i]:--}" "${M_WP99[$i]:--}" "${M_KBW[$i]:--}"
	done
	echo
	echo "KB/conn = (RSS with $IDLE idle connections - RSS warmed, no connections) / connections opened (KiB)."
	if ((WAKE)); then
		echo "woken: connections answered / sent when all $IDLE sent one more request at once; p50, p99 ms: their"
		echo "latencies, each from its own write to the end of its response (the clients' scheduling included:"
		echo "compare rows of one run). KB woken: KB/conn again 2 s after the wake-up."
	fi
else
	printf '%-16s %10s  %s %9s %9s %9s %9s %6s %6s %7s\n' server "req/s" "CPU-µs/req" "rps/nh" "rps/fh" "cpu/nh" "cpu/fh" "srv%" "wrk%" "spread"
	for i in "${!NAMES[@]}"; do
		if [[ -z ${M_RPS[$i]:-} ]]; then
			printf '%-16s %s\n' "${NAMES[$i]}" "skipped (${SKIP[$i]:-no result})"
			continue
		fi
		printf '%-16s %10.0f %11.2f %9s %9s %9s %9s %6.0f %6.0f %7s\n' "${NAMES[$i]}${DISTURBED[$i]:+ *}" "${M_RPS[$i]}" "${M_CPU[$i]}" \
			"$(ratio 1 "${M_RPS[$i]}" "${M_RPS[$NH]:-}")" "$(ratio 1 "${M_RPS[$i]}" "${M_RPS[$FH]:-}")" \
			"$(ratio 0 "${M_CPU[$i]}" "${M_CPU[$NH]:-}")" "$(ratio 0 "${M_CPU[$i]}" "${M_CPU[$FH]:-}")" \
			"${M_SRV[$i]}" "${M_GEN[$i]}" "${M_SPREAD[$i]}"
	done
	echo
	echo "rps/nh, rps/fh: req/s over the net/http, fasthttp row's. cpu/nh, cpu/fh: their CPU-µs/req over this row's."
	echo "Ratios above 1.00x mean better than the baseline. srv%, wrk%: CPU use of the server and of wrk's CPU"
	echo "during the measured run; wrk% near 100 with srv% below it means the load generator was the limit."
	echo "spread: (max - min) / median of CPU-µs/req over the runs; rerun with more --runs when it is large."
	((${#DISTURBED[@]} == 0)) || echo "* disturbed: something else used more than ${OTHER_MAX}% of CPU $SERVER_CPU during a run of this row, after --retries $RETRIES; rerun on a quiet machine."
fi
[[ $NH == none ]] || echo "net/http baseline: row '${NAMES[$NH]}'."
((RUNS == 1)) || echo "Medians of $RUNS runs."

# ---------------------------------------------------------------- JSON

if [[ -n $JSON ]]; then
	jnum_list() { # "1 2 3 " -> [1,2,3]
		local s
		s=$(echo "$1" | xargs | tr ' ' ',')
		echo "[$s]"
	}
	{
		printf '{\n  "mode": "%s",\n  "duration_s": %d,\n  "warmup_s": %d,\n  "conns": %d,\n  "pipeline": %d,\n  "idle_conns": %d,\n  "runs": %d,\n  "retries": %d,\n' \
			"$MODE" "$DURATION" "$WARMUP" "$CONNS" "$PIPELINE" "$IDLE" "$RUNS" "$RETRIES"
		printf '  "server_cpu": %d,\n  "load_cpu": %d,\n  "clk_tck": %d,\n  "kernel": "%s",\n  "go": "%s",\n' \
			"$SERVER_CPU" "$LOAD_CPU" "$CLK_TCK" "$(uname -r)" "$(go env GOVERSION)"
		base=""
		[[ $NH == none ]] || base=${NAMES[$NH]}
		printf '  "baseline_nethttp": "%s",\n  "rows": [' "$base"
		sep=""
		for i in "${!NAMES[@]}"; do
			printf '%s\n    {"server": "%s"' "$sep" "${NAMES[$i]}"
			sep=","
			if [[ -n ${M_RPS[$i]:-} ]]; then
				printf ', "req_per_s": %s, "cpu_us_per_req": %s, "server_cpu_pct": %s, "load_cpu_pct": %s, "errors": %d' \
					"${M_RPS[$i]}" "${M_CPU[$i]}" "${M_SRV[$i]}" "${M_GEN[$i]}" "${ERR[$i]:-0}"
				printf ', "req_per_s_runs": %s, "cpu_us_per_req_runs": %s' "$(jnum_list "${RPS[$i]}")" "$(jnum_list "${CPU[$i]}")"
				printf ', "other_cpu_pct_runs": %s, "disturbed": %s' "$(jnum_list "${OTH[$i]}")" "$([[ -n ${DISTURBED[$i]:-} ]] && echo true || echo false)"
			elif [[ -n ${M_KBC[$i]:-} ]]; then
				printf ', "kb_per_conn": %s, "rss_before_kb": %s, "rss_after_kb": %s, "alive": "%s", "kb_per_conn_runs": %s' \
					"${M_KBC[$i]}" "${M_RSS0[$i]}" "${M_RSS1[$i]}" "${ALIVE[$i]}" "$(jnum_list "${KBC[$i]}")"
				if [[ -n ${WOKE[$i]:-} ]]; then
					printf ', "woken": "%s", "wake_p50_ms": %s, "wake_p99_ms": %s, "kb_per_conn_woken": %s' \
						"${WOKE[$i]}" "${M_WP50[$i]:-null}" "${M_WP99[$i]:-null}" "${M_KBW[$i]:-null}"
					printf ', "wake_p50_ms_runs": %s, "wake_p99_ms_runs": %s' "$(jnum_list "${WP50[$i]:-}")" "$(jnum_list "${WP99[$i]:-}")"
				fi
			else
				printf ', "skipped": "%s"' "${SKIP[$i]:-no result}"
			fi
			printf '}'
		done
		printf '\n  ]\n}\n'
	} >"$JSON"
	echo "wrote $JSON"
fi
