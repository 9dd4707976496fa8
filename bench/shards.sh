#!/usr/bin/env bash
# shards.sh: one open-loop load as N hotpath load processes (--shard i/N,
# one --start-at), merged, against hotpath serve --count: issue 15's
# acceptance run. It prints the merged achieved rate against the asked
# rate, the shards' start skew, the merged request count against the
# server's own count, and the merged latency percentiles.
#
# Usage:
#   bash bench/shards.sh                       # 4 shards, 10,000 req/s in all, 20 s
#   bash bench/shards.sh --shards 8 --rate 20000 --duration 30s --conns 80
set -euo pipefail

SHARDS=4
RATE=10000
DURATION=20s
CONNS=40
PORT=18270
while (($#)); do
	case $1 in
	--shards) SHARDS=$2; shift 2 ;;
	--rate) RATE=$2; shift 2 ;;
	--duration) DURATION=$2; shift 2 ;;
	--conns) CONNS=$2; shift 2 ;;
	-h | --help)
		sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*) echo "shards.sh: unknown flag $1 (see --help)" >&2; exit 2 ;;
	esac
done

cd "$(dirname "$0")/.."
TMP=$(mktemp -d)
# shellcheck source=bench/lib.sh
source bench/lib.sh

go build -o "$TMP/hotpath" ./cmd/hotpath
"$TMP/hotpath" serve --addr "127.0.0.1:$PORT" --count >"$TMP/serve.log" 2>&1 &
server=$!
PIDS+=("$server")
wait_port "$PORT" || { echo "shards.sh: the server did not start" >&2; exit 1; }

start=$(($(date +%s%3N) + 2000)) # unix ms, 2 s ahead: time for every process to start
run_id="bench-$start"
gens=()
for ((i = 0; i < SHARDS; i++)); do
	"$TMP/hotpath" load --shard "$i/$SHARDS" --start-at "$start" --run-id "$run_id" \
		--rate "$RATE" -c "$CONNS" -d "$DURATION" --quiet --json "http://127.0.0.1:$PORT/" >"$TMP/s$i.json" &
	gens+=("$!")
done
for pid in "${gens[@]}"; do wait "$pid" || { echo "shards.sh: a shard failed" >&2; exit 1; }; done
"$TMP/hotpath" load merge --json "$TMP"/s*.json >"$TMP/merged.json"
kill -INT "$server"
wait "$server" || true
served=$(sed -n 's/.*stopped after \([0-9]*\) requests.*/\1/p' "$TMP/serve.log")

python3 - "$TMP/merged.json" "$RATE" "$served" "$TMP"/s*.json <<'PY'
import json, sys
m = json.load(open(sys.argv[1])); rate = float(sys.argv[2]); served = int(sys.argv[3])
shards = [json.load(open(f)) for f in sys.argv[4:]]
sh = m["shard"]
print(f"shards          {len(sh['merged'])} of {sh['count']} merged (run {sh['run_id']}), missing {sh.get('missing', [])}")
print(f"achieved rate   {m['achieved_rate']:.1f} req/s of {rate:.0f} asked = {m['achieved_rate']/rate:.4f}x")
print(f"start skew      {sh['skew_us']} us between shards (latest shard {sh['late_us']} us after --start-at)")
print(f"requests        merged {m['requests']} = sum of shards {sum(s['requests'] for s in shards)}; server counted {served}; errors {m['errors']}")
lat = m["latency"]
print(f"latency         p50 {lat['p50_us']} us, p99 {lat['p99_us']} us, p99.9 {lat['p99_9_us']} us, max {lat['max_us']} us")
print(f"generators      {m['cpu']['user_s'] + m['cpu']['sys_s']:.2f} CPU-s in all, utilization {100*m['cpu']['utilization']:.0f}%")
for w in m.get("warnings") or []:
    print("warning        ", w)
PY
