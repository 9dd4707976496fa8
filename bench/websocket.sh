#!/usr/bin/env bash
# WebSocket servers compared on one harness (bench/peers/cmd/wsbench):
# hotpath's websocket package (event API and blocking Read loop, on
# hotpath's server and on net/http's) against gorilla/websocket,
# coder/websocket, gws and nbio. The native API's (server.Ctx,
# AcceptNative) are there too, not in the default list:
# --impls hotpath-native-events,hotpath-native-blocking.
#
#   bash bench/websocket.sh idle [--conns N] [--settle S] [--impls a,b,...]
#   bash bench/websocket.sh echo [--conns N] [--duration S] [--size B] [--impls a,b,...] [--profile DIR] [--server-cpu PCT]
#   bash bench/websocket.sh idle --deflate --conns 1000
#   WSBENCH_BIN=/tmp/wsbench-old bash bench/websocket.sh echo --impls hotpath-events   # a prebuilt wsbench
#
# idle: each server (pinned to CPU 0, GOMAXPROCS=1) gets N connections
# (default 18000) from the client on CPU 1; each sends one 1 KiB message
# and reads its echo, then all stay silent. The server's resident memory
# is read before the connections and once they are idle (after --settle
# seconds, default 2): RSS growth per idle connection. Then every connection sends one
# more message at once: "answered" must equal N. Also reported, from the
# server itself (SIGUSR2): its live heap and goroutine stacks per
# connection after a collection, and its RSS after the free heap went back
# to the OS (what the growth is made of).
#
# echo: N connections (default 1000) send a message of --size bytes
# (default 1024) and wait for its echo, again and again, for --duration
# seconds (default 10): messages per second, and the server's CPU per
# message (user and system, from /proc/PID/stat) and messages per server
# CPU-second. With --profile DIR, each server also writes a CPU profile
# (DIR/IMPL.prof) and a last column gives the profile's samples outside
# system calls per message: user CPU from thousands of samples, where
# /proc's split comes from a few hundred clock ticks. The busy column is
# the server's CPU over the run's time: under 100% the client (one core)
# was the bottleneck, and the server paid for waking up between batches,
# which a saturated server does not (a faster server is more often idle
# on 2 cores). --server-cpu PCT caps the server at PCT% of its core (a
# cgroup's CPU quota; needs root and the cgroup cpu controller), which
# makes every server the bottleneck: messages per CPU-second compared at
# saturation (busy then reads a little over PCT: the server's CPU
# includes the connections' handshakes, the run's time does not).
#
# --deflate: the client offers permessage-deflate as a browser does
# (context takeover allowed both ways) and sends its messages compressed
# where the server accepts; the servers compared become
# hotpath-events-deflate (which answers no context takeover both ways),
# gorilla-deflate (gorilla supports no takeover only) and coder-deflate
# (coder's CompressionContextTakeover): the memory a compressing server
# keeps per idle connection.
#
# Needs ulimit -n above N + a few in both processes (the script raises the
# soft limit to the hard one).
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-}
shift || true
CONNS="" DUR=10 SIZE=1024 SETTLE=2 DEFLATE= PROFDIR= SERVERCPU=
IMPLS="hotpath-events,hotpath-blocking,nethttp-events,gorilla,coder,gws,nbio"
while [ $# -gt 0 ]; do
	case "$1" in
	--conns) CONNS=$2; shift 2 ;;
	--duration) DUR=$2; shift 2 ;;
	--size) SIZE=$2; shift 2 ;;
	--settle) SETTLE=$2; shift 2 ;;
	--impls) IMPLS=$2; shift 2 ;;
	--deflate) DEFLATE=-deflate; shift ;;
	--profile) PROFDIR=$(mkdir -p "$2" && cd "$2" && pwd); shift 2 ;;
	--server-cpu) SERVERCPU=$2; shift 2 ;;
	*) echo "unknown flag $1" >&2; exit 2 ;;
	esac
done
if [ -n "$DEFLATE" ] && [ "$IMPLS" = "hotpath-events,hotpath-blocking,nethttp-events,gorilla,coder,gws,nbio" ]; then
	IMPLS="hotpath-events-deflate,gorilla-deflate,coder-deflate"
fi
case "$mode" in
idle) CONNS=${CONNS:-18000} ;;
echo) CONNS=${CONNS:-1000} ;;
*) sed -n '2,25p' "$0"; exit 2 ;;
esac

ulimit -n "$(ulimit -Hn)"
TMP=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$TMP"' EXIT
# WSBENCH_BIN: a prebuilt bench/peers/cmd/wsbench (say, of another
# revision, for a before/after of the same harness); else built here.
if [ -n "${WSBENCH_BIN:-}" ]; then
	cp "$WSBENCH_BIN" "$TMP/wsbench"
else
	(cd bench/peers && go build -o "$TMP/wsbench" ./cmd/wsbench)
fi
PORT=19400

# capServer PID: with --server-cpu, moves the server into a cgroup whose
# CPU quota is SERVERCPU% of one CPU (cgroup v2, else v1's cpu
# controller), removed when the script ends.
CG=
if [ -n "$SERVERCPU" ]; then
	[[ $SERVERCPU =~ ^[0-9]+$ ]] && ((SERVERCPU > 0 && SERVERCPU <= 100)) || { echo "--server-cpu wants a percentage, 1-100" >&2; exit 2; }
	quota=$((SERVERCPU * 200)) # µs of a 20 ms period
	if [ -f /sys/fs/cgroup/cgroup.controllers ] && grep -qw cpu /sys/fs/cgroup/cgroup.controllers; then
		CG=/sys/fs/cgroup/hotpath-wsbench.$$
		mkdir "$CG" && echo "$quota 20000" >"$CG/cpu.max"
	elif [ -d /sys/fs/cgroup/cpu ]; then
		CG=/sys/fs/cgroup/cpu/hotpath-wsbench.$$
		mkdir "$CG" && echo 20000 >"$CG/cpu.cfs_period_us" && echo "$quota" >"$CG/cpu.cfs_quota_us"
	else
		echo "--server-cpu needs the cgroup cpu controller (and root)" >&2
		exit 2
	fi
	trap 'kill $(jobs -p) 2>/dev/null || true; sleep 0.2; rmdir "$CG" 2>/dev/null || true; rm -rf "$TMP"' EXIT
fi
capServer() {
	[ -z "$CG" ] || echo "$1" >"$CG/cgroup.procs"
}

rss() { awk '/VmRSS/{print $2}' "/proc/$1/status"; }
cpu() { awk '{print $14, $15}' "/proc/$1/stat"; } # utime stime, in ticks
TCK=$(getconf CLK_TCK)

start_server() {
	PORT=$((PORT + 1))
	WSBENCH_CPUPROFILE=${PROFDIR:+$PROFDIR/$1.prof} GOMAXPROCS=1 taskset -c 0 "$TMP/wsbench" serve -impl "$1" -addr "127.0.0.1:$PORT" >"$TMP/server.log" 2>&1 &
	SP=$!
	for _ in $(seq 100); do grep -q listening "$TMP/server.log" 2>/dev/null && { capServer "$SP"; return; }; sleep 0.05; done
	echo "server $1 did not start" >&2
	cat "$TMP/server.log" >&2
	exit 1
}

IFS=, read -ra impls <<<"$IMPLS"
if [ "$mode" = idle ]; then
	printf "%-18s %10s %12s %10s %10s %14s %10s\n" impl conns "rss/conn" "heap/conn" "stack/conn" "rss-free/conn" answered
	for impl in "${impls[@]}"; do
		start_server "$impl"
		sleep 0.3
		kill -USR2 "$SP"
		sleep 0.5
		r0=$(rss "$SP")
		m0=$(grep '^mem' "$TMP/server.log" | tail -1)
		taskset -c 1 "$TMP/wsbench" idle $DEFLATE -n "$CONNS" -addr "127.0.0.1:$PORT" >"$TMP/idle.log" 2>&1 &
		IP=$!
		for _ in $(seq 3000); do grep -q "^ready" "$TMP/idle.log" && break; sleep 0.1; done
		sleep "$SETTLE"
		r1=$(rss "$SP")
		kill -USR2 "$SP"
		sleep 1
		m1=$(grep '^mem' "$TMP/server.log" | tail -1)
		kill -USR1 "$IP"
		for _ in $(seq 1200); do grep -q "^woke" "$TMP/idle.log" && break; sleep 0.1; done
		open=$(sed -n 's/^ready open=\([0-9]*\).*/\1/p' "$TMP/idle.log")
		ans=$(sed -n 's/^woke answered=\([0-9]*\).*/\1/p' "$TMP/idle.log")
		field() { sed -n "s/.*$1=\([0-9]*\).*/\1/p" <<<"$2"; }
		per() { awk -v a="$1" -v b="$2" -v n="$open" 'BEGIN{printf "%.0f", (b-a)/n}'; }
		printf "%-18s %10s %12s %10s %10s %14s %10s\n" "$impl" "$open" \
			"$(per $((r0 * 1024)) $((r1 * 1024)))" \
			"$(per "$(field heap_alloc "$m0")" "$(field heap_alloc "$m1")")" \
			"$(per "$(field stack_inuse "$m0")" "$(field stack_inuse "$m1")")" \
			"$(per $(($(field rss_kb_after_free "$m0") * 1024)) $(($(field rss_kb_after_free "$m1") * 1024)))" \
			"$ans/$open"
		kill "$IP" "$SP" 2>/dev/null || true
		wait "$IP" "$SP" 2>/dev/null || true
	done
	exit 0
fi

printf "%-18s %8s %12s %12s %12s %14s %6s%s\n" impl conns "msgs/s" "user-µs/msg" "sys-µs/msg" "msgs/cpu-s" busy "${PROFDIR:+ prof-user-µs/msg}"
# profUser prints the CPU profile's seconds outside system calls
# (everything but the syscall entry's own samples).
profUser() {
	go tool pprof -top -nodecount 100000 "$TMP/wsbench" "$1" 2>/dev/null | awk '
		function sec(v) { return v ~ /ms$/ ? v / 1000 : v ~ /us$|µs$/ ? v / 1e6 : v + 0 }
		/Total samples/ { for (i = 1; i <= NF; i++) if ($i == "=") tot = sec($(i + 1)) }
		$NF ~ /runtime\/syscall\/linux\.Syscall6$|runtime\/internal\/syscall\.Syscall6$/ { sys += sec($1) }
		END { printf "%.6f", tot - sys }'
}
for impl in "${impls[@]}"; do
	start_server "$impl"
	read -r u0 s0 < <(cpu "$SP")
	taskset -c 1 "$TMP/wsbench" echo $DEFLATE -c "$CONNS" -d "${DUR}s" -size "$SIZE" -addr "127.0.0.1:$PORT" >"$TMP/echo.log" 2>&1
	read -r u1 s1 < <(cpu "$SP")
	line=$(grep '^echo' "$TMP/echo.log" || { cat "$TMP/echo.log" >&2; exit 1; })
	msgs=$(sed -n 's/.*msgs=\([0-9]*\).*/\1/p' <<<"$line")
	secs=$(sed -n 's/.*elapsed_s=\([0-9.]*\).*/\1/p' <<<"$line")
	pu=
	if [ -n "$PROFDIR" ]; then
		kill -USR2 "$SP" # ends the profile
		for _ in $(seq 100); do [ -s "$PROFDIR/$impl.prof" ] && break; sleep 0.05; done
		sleep 0.2
		pu=$(profUser "$PROFDIR/$impl.prof")
	fi
	awk -v impl="$impl" -v c="$CONNS" -v m="$msgs" -v t="$secs" -v u=$((u1 - u0)) -v s=$((s1 - s0)) -v hz="$TCK" -v pu="$pu" 'BEGIN{
		printf "%-18s %8d %12.0f %12.2f %12.2f %14.0f %5.0f%%", impl, c, m/t, u/hz*1e6/m, s/hz*1e6/m, m/((u+s)/hz), (u+s)/hz/t*100
		if (pu != "") printf " %16.2f", pu*1e6/m
		printf "\n"}'
	kill "$SP" 2>/dev/null || true
	wait "$SP" 2>/dev/null || true
done
