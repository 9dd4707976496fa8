#!/usr/bin/env bash
# bigbody.sh: big bodies on hotpath's engine and on net/http, as issue 13
# measures them: a download from memory (/bytes, 32 KiB writes), one
# through io.Copy from a reader that is not a file (/stream: a generated
# or proxied body), a download of a file through http.FileServer, and an upload to a handler
# that reads and discards it, with a length and chunked (curl -T -).
# Both servers run on one CPU with GOMAXPROCS=1 (one transfer at a time, alternating engines so that both
# see the same machine); curl runs on the other CPU. It reports the
# median throughput (MB/s, from curl's own timing), the server's CPU time
# per GB over all transfers (utime+stime from /proc/PID/stat, and each
# apart: user is the server's own code, sys the kernel's copying and TCP),
# the busy time of both CPUs per GB (/proc/stat: the kernel may run a
# socket's transmit work outside the server's process, on softirq or on
# the receiver's CPU, which the server's own time does not count), and the
# ratios hotpath / net/http; then the spread of each round's ratios (the
# two engines' transfers of a round run back to back; server CPU per
# transfer is counted in clock ticks, 10 ms: use transfers of 256 MB or
# more), a sign test over those rounds, to tell a margin from noise, and
# the rounds' geometric mean ratio with its 95% confidence interval, to
# say how close two engines at parity are.
#
# Usage:
#   bash bench/bigbody.sh                  # 1 GB, 7 transfers per engine and kind
#   bash bench/bigbody.sh --size-mb 256 --runs 15
#   bash bench/bigbody.sh --only upload     # one transfer kind (memory, stream, file, upload or chunked)
#   bash bench/bigbody.sh --api native      # hotpath's native API (no file transfer: FileServer is an http.Handler)
#   HOTPATH_BIN=/tmp/hotpath-old bash bench/bigbody.sh   # another build of hotpath
#   bash bench/bigbody.sh --veth            # over a veth pair with MTU 1500 between two network
#                                           # namespaces (root), instead of loopback's 64 KiB MSS
set -euo pipefail

SIZE_MB=1024
RUNS=7
ONLY=
API=handler
SERVER_CPU=0
LOAD_CPU=1
PORT=18190
USE_VETH=0
while (($#)); do
	case $1 in
	--size-mb) SIZE_MB=$2; shift 2 ;;
	--runs) RUNS=$2; shift 2 ;;
	--only) ONLY=$2; shift 2 ;;
	--api) API=$2; shift 2 ;;
	--server-cpu) SERVER_CPU=$2; shift 2 ;;
	--load-cpu) LOAD_CPU=$2; shift 2 ;;
	--veth) USE_VETH=1; shift ;;
	-h | --help)
		sed -n '2,28p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*) echo "bigbody.sh: unknown flag $1 (see --help)" >&2; exit 2 ;;
	esac
done
case $API in
handler) KINDS="memory stream file upload chunked" ;;
native) KINDS="memory stream upload chunked" ;;
*) echo "bigbody.sh: --api is handler or native" >&2; exit 2 ;;
esac
command -v curl >/dev/null || { echo "bigbody.sh: needs curl (apt-get install curl)" >&2; exit 2; }

cd "$(dirname "$0")/.."
TMP=$(mktemp -d)
# shellcheck source=bench/lib.sh
source bench/lib.sh
if ((USE_VETH)); then
	veth_up || exit 2
fi
CLK_TCK=$(getconf CLK_TCK)
BYTES=$((SIZE_MB << 20))

if [[ -n ${HOTPATH_BIN:-} ]]; then # another build of hotpath, to compare two
	cp "$HOTPATH_BIN" "$TMP/hotpath"
else
	go build -o "$TMP/hotpath" ./cmd/hotpath
fi
mkdir -p "$TMP/files"
head -c "$BYTES" /dev/urandom >"$TMP/files/big"
sync "$TMP/files/big"            # written back now, not by the kernel during the transfers
cat "$TMP/files/big" >/dev/null # in the page cache before the first transfer

cpu_ticks() { # "utime stime" of PID in clock ticks
	local stat
	stat=$(<"/proc/$1/stat")
	stat=${stat##*) }
	read -r -a f <<<"$stat"
	echo "${f[11]} ${f[12]}"
}

# start ENGINE PORT: starts a server pinned to SERVER_CPU, prints its pid.
start() {
	local args=(serve --addr "$HOST:$2")
	case $1/$API in
	hotpath/handler) args+=(--engine hotpath --api handler --files "$TMP/files") ;;
	hotpath/native) args+=(--engine hotpath --api native --max-body -1) ;; # net/http has no cap
	net/http/*) args+=(--engine nethttp --files "$TMP/files") ;;
	esac
	GOMAXPROCS=1 "${NS_SRV[@]}" taskset -c "$SERVER_CPU" "$TMP/hotpath" "${args[@]}" >/dev/null 2>&1 &
	echo $!
}

# transfer KIND PORT: one transfer with curl, prints its bytes per second.
transfer() {
	local url=http://$HOST:$2
	case $1 in
	memory) "${NS_CLI[@]}" taskset -c "$LOAD_CPU" curl -sf -o /dev/null -w '%{speed_download}' "$url/bytes/$BYTES" ;;
	stream) "${NS_CLI[@]}" taskset -c "$LOAD_CPU" curl -sf -o /dev/null -w '%{speed_download}' "$url/stream/$BYTES" ;;
	file) "${NS_CLI[@]}" taskset -c "$LOAD_CPU" curl -sf -o /dev/null -w '%{speed_download}' "$url/files/big" ;;
	upload) "${NS_CLI[@]}" taskset -c "$LOAD_CPU" curl -sf -o /dev/null -w '%{speed_upload}' -H 'Expect:' -T "$TMP/files/big" "$url/discard" ;;
	chunked) "${NS_CLI[@]}" taskset -c "$LOAD_CPU" curl -sf -o /dev/null -w '%{speed_upload}' -H 'Expect:' -T - "$url/discard" <"$TMP/files/big" ;;
	esac
}

# cores_busy: busy clock ticks of the server's and the client's CPUs.
cores_busy() {
	awk -v a="cpu$SERVER_CPU" -v b="cpu$LOAD_CPU" \
		'$1 == a || $1 == b { t += $2 + $3 + $4 + $7 + $8 } END { print t }' /proc/stat
}

# spread: "median [min-max], above 1 in k of n" of the ratios on stdin
# ("n/a" stands for a round whose ticks were 0 and is left out).
spread() {
	tr ' ' '\n' | grep . | grep -v n/a | sort -n | awk '{ a[NR] = $1; if ($1 > 1) k++ }
		END {
			if (NR == 0) { printf "n/a"; exit }
			m = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
			printf "%.2fx [%.2f-%.2f], above 1 in %d of %d", m, a[1], a[NR], k, NR
		}'
}

# verdict HIGHER_IS_BETTER: a sign test over the ratios on stdin: "better"
# or "worse" when that many rounds going one way would happen by chance
# with probability under 0.05 (one-sided, exact binomial; ties left out),
# "no significant difference" otherwise.
verdict() {
	tr ' ' '\n' | grep . | grep -v n/a | awk -v up="$1" '
		{ if ($1 > 1) a++; else if ($1 < 1) b++ }
		function tail(k, n,   i, c, p) { # P(X >= k), X ~ Binomial(n, 1/2)
			p = 0; c = 1
			for (i = 0; i <= n; i++) { if (i >= k) p += c; c = c * (n - i) / (i + 1) }
			return p / 2 ^ n
		}
		END {
			n = a + b
			if (n == 0) { printf "n/a"; exit }
			good = up ? a : b; bad = up ? b : a
			if (tail(good, n) < 0.05) printf "better (%d of %d rounds, p=%.2g)", good, n, tail(good, n)
			else if (tail(bad, n) < 0.05) printf "worse (%d of %d rounds, p=%.2g)", bad, n, tail(bad, n)
			else printf "no significant difference (%d better, %d worse)", good, bad
		}'
}

# interval: "G [L-U]", the geometric mean of the ratios on stdin and its
# 95% confidence interval (Student's t on the logs): how far from 1 the
# engines can be told apart, where the sign test only says whether they
# can.
interval() {
	tr ' ' '\n' | grep . | grep -v n/a | awk '
		{ x[NR] = log($1); s += x[NR] }
		END {
			n = NR
			if (n < 2) { printf "n/a"; exit }
			m = s / n
			for (i = 1; i <= n; i++) v += (x[i] - m) ^ 2
			split("12.71 4.303 3.182 2.776 2.571 2.447 2.365 2.306 2.262 2.228 2.201 2.179 2.160 2.145 2.131 2.120 2.110 2.101 2.093 2.086 2.080 2.074 2.069 2.064 2.060 2.056 2.052 2.048 2.045 2.042", t, " ")
			q = n - 1 <= 30 ? t[n - 1] : 1.96
			h = q * sqrt(v / (n - 1) / n)
			printf "%.3fx [%.3f-%.3f]", exp(m), exp(m - h), exp(m + h)
		}'
}

# ratio H N: H/N, or n/a when N or H is 0.
ratio() { awk -v h="$1" -v n="$2" 'BEGIN { if (h > 0 && n > 0) printf "%.4f", h / n; else printf "n/a" }'; }

median() { tr ' ' '\n' | grep . | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

hp_pid=$(start hotpath "$PORT")
nh_pid=$(start net/http $((PORT + 1)))
PIDS+=("$hp_pid" "$nh_pid")
wait_port "$PORT" || { echo "bigbody.sh: hotpath did not start" >&2; exit 1; }
wait_port $((PORT + 1)) || { echo "bigbody.sh: net/http did not start" >&2; exit 1; }

if ((SIZE_MB < 256)); then
	echo "bigbody.sh: under 256 MB per transfer, CPU time (10 ms ticks) is mostly noise" >&2
fi
printf '%-8s %-9s %10s %12s %8s %8s %10s   (hotpath with the %s API; median of %d transfers of %d MB, engines alternating, each first in every other round)\n' \
	transfer engine "MB/s" "CPU-s/GB" user sys "both CPUs" "$API" "$RUNS" "$SIZE_MB"
for kind in ${ONLY:-$KINDS}; do
	declare -A speeds=() uticks=() sticks=() bticks=() round_speed=() round_cpu=() round_both=()
	tput_ratios='' cpu_ratios='' both_ratios=''
	for ((r = 0; r < RUNS; r++)); do
		order="hotpath net/http"
		((r % 2 == 0)) || order="net/http hotpath" # neither engine always goes first
		for engine in $order; do
			local_pid=$hp_pid port=$PORT
			if [[ $engine == net/http ]]; then local_pid=$nh_pid port=$((PORT + 1)); fi
			read -r u0 s0 <<<"$(cpu_ticks "$local_pid")"
			b0=$(cores_busy)
			speed=$(transfer "$kind" "$port") || { echo "bigbody.sh: $kind on $engine failed" >&2; exit 1; }
			b1=$(cores_busy)
			read -r u1 s1 <<<"$(cpu_ticks "$local_pid")"
			bticks[$engine]=$((${bticks[$engine]:-0} + b1 - b0))
			speeds[$engine]+="$speed "
			uticks[$engine]=$((${uticks[$engine]:-0} + u1 - u0))
			sticks[$engine]=$((${sticks[$engine]:-0} + s1 - s0))
			round_speed[$engine]=$speed
			round_cpu[$engine]=$((u1 - u0 + s1 - s0))
			round_both[$engine]=$((b1 - b0))
		done
		# This round's ratios: the two transfers ran back to back.
		tput_ratios+="$(ratio "${round_speed[hotpath]}" "${round_speed[net/http]}") "
		cpu_ratios+="$(ratio "${round_cpu[hotpath]}" "${round_cpu[net/http]}") "
		both_ratios+="$(ratio "${round_both[hotpath]}" "${round_both[net/http]}") "
	done
	declare -A mbs=() cpu=() both=()
	for engine in hotpath net/http; do
		mbs[$engine]=$(median <<<"${speeds[$engine]}" | awk '{ printf "%.0f", $1 / 1e6 }')
		per_gb="$CLK_TCK * $RUNS * $BYTES / 1e9"
		read -r cpu[$engine] user sys both[$engine] <<<"$(awk -v u="${uticks[$engine]}" -v s="${sticks[$engine]}" \
			-v b="${bticks[$engine]}" "BEGIN { d = $per_gb; printf \"%.3f %.3f %.3f %.3f\", (u + s) / d, u / d, s / d, b / d }")"
		printf '%-8s %-9s %10s %12s %8s %8s %10s\n' "$kind" "$engine" "${mbs[$engine]}" "${cpu[$engine]}" "$user" "$sys" "${both[$engine]}"
	done
	awk -v hs="${mbs[hotpath]}" -v ns="${mbs[net/http]}" -v hc="${cpu[hotpath]}" -v nc="${cpu[net/http]}" \
		-v hb="${both[hotpath]}" -v nb="${both[net/http]}" -v k="$kind" \
		'function r(h, n) { return h > 0 && n > 0 ? sprintf("%.2fx", h / n) : "n/a" }
		BEGIN { printf "%-8s hotpath/net/http: throughput %s, server CPU %s, both CPUs %s\n", k, r(hs, ns), r(hc, nc), r(hb, nb) }'
	printf '%-8s per round (hotpath/net/http, back to back): throughput %s; server CPU %s; both CPUs %s\n' "$kind" \
		"$(spread <<<"$tput_ratios")" "$(spread <<<"$cpu_ratios")" "$(spread <<<"$both_ratios")"
	printf '%-8s sign test: throughput %s; server CPU %s\n' "$kind" \
		"$(verdict 1 <<<"$tput_ratios")" "$(verdict 0 <<<"$cpu_ratios")"
	printf '%-8s mean of the rounds, 95%% CI: throughput %s; server CPU %s\n' "$kind" \
		"$(interval <<<"$tput_ratios")" "$(interval <<<"$cpu_ratios")"
	unset speeds uticks sticks bticks mbs cpu both round_speed round_cpu round_both
done
