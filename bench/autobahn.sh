#!/usr/bin/env bash
# Autobahn's WebSocket test cases, run by kosoku (PyPI: a runner of the
# Autobahn TestSuite's case files), against hotpath:
#   - fuzzingclient mode against `hotpath serve`'s /ws echo (the event API)
#     on the native API, the http.Handler API, and net/http's server;
#   - fuzzingserver mode driving the websocket package's client
#     (websocket/autobahn_test.go: Dial and a Read/Write echo per case).
#
#   bash bench/autobahn.sh [--quick] [--include GLOB]... [--exclude GLOB]... [--table FILE]
#
# Every case must end OK, NON-STRICT or INFORMATIONAL on all four, or the
# script exits 1 after listing the others. --table writes the per-case
# table (Markdown) to FILE (docs/websocket-autobahn.md is this script's
# output). Sections 12 and 13 (permessage-deflate) run with the servers'
# AcceptOptions.Compression and the client's DialOptions.Compression.
# --quick leaves out the large-message half of sections 12 and 13 (cases
# x.y.10 to x.y.18: 64 KiB to 4 MiB compressed messages, many per case),
# which take several minutes per target on a 2-core machine, and runs
# sections 12 and 13 on the native API's server and the client only (the
# http.Handler API's and net/http's servers run the same compression
# code behind a different accept: about 75 s a target saved): .ci/run
# runs --quick; the whole suite is this script without it.
#
# Needs python3 with venv (installed with apt-get when missing, as root);
# kosoku goes into a venv under $KOSOKU_VENV (default ~/.cache/hotpath-kosoku).
set -euo pipefail
cd "$(dirname "$0")/.."

EXCLUDE=()
INCLUDE=()
NOCOMPRESS="" # server targets that skip sections 12 and 13 (--quick)
TABLE=""
while [ $# -gt 0 ]; do
	case "$1" in
	--include) INCLUDE+=("$2"); shift 2 ;;
	--exclude) EXCLUDE+=("$2"); shift 2 ;;
	--table) TABLE=$2; shift 2 ;;
	--quick) EXCLUDE+=('12.*.1[0-8]' '13.*.1[0-8]'); NOCOMPRESS=handler,nethttp; shift ;;
	*) sed -n '2,23p' "$0"; exit 2 ;;
	esac
done

VENV=${KOSOKU_VENV:-$HOME/.cache/hotpath-kosoku}
if [ ! -x "$VENV/bin/kosoku" ]; then
	if ! python3 -m venv --help >/dev/null 2>&1 || ! python3 -c 'import ensurepip' 2>/dev/null; then
		apt-get update -qq && apt-get install -y -qq python3 python3-venv >/dev/null
	fi
	python3 -m venv "$VENV"
	"$VENV/bin/pip" install -q kosoku
fi
KOSOKU=$VENV/bin/kosoku
xs=()
for x in "${EXCLUDE[@]+"${EXCLUDE[@]}"}"; do xs+=(-x "$x"); done
for i in "${INCLUDE[@]+"${INCLUDE[@]}"}"; do xs+=(-i "$i"); done
# A server or client that fails cases can make kosoku wait out each
# case's timeout: each run is bounded, and what it did not report fails.
# Sections 12 and 13 send 1,000 messages a case: a run took about 4
# minutes on 2 busy cores, hence 600 s.
LIMIT=${AUTOBAHN_LIMIT:-600}

TMP=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$TMP"' EXIT
go build -o "$TMP/hotpath" ./cmd/hotpath

wait_port() { for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return; sleep 0.1; done; echo "nothing listens on $1" >&2; exit 1; }

PORT=19500
for target in native handler nethttp; do
	PORT=$((PORT + 1))
	case $target in
	nethttp) "$TMP/hotpath" serve --addr "127.0.0.1:$PORT" --engine nethttp >"$TMP/serve.log" 2>&1 & ;;
	*) "$TMP/hotpath" serve --addr "127.0.0.1:$PORT" --engine hotpath --api "$target" >"$TMP/serve.log" 2>&1 & ;;
	esac
	SP=$!
	wait_port "$PORT"
	txs=("${xs[@]+"${xs[@]}"}")
	case ",$NOCOMPRESS," in *",$target,"*) txs+=(-x '12.*' -x '13.*') ;; esac
	timeout "$LIMIT" "$KOSOKU" -m fuzzingclient -p 4 "${txs[@]+"${txs[@]}"}" -o "$TMP/$target" "ws://127.0.0.1:$PORT/ws" >"$TMP/$target.log" 2>&1 || true
	echo "server, $target: $(tail -1 "$TMP/$target.log")"
	kill "$SP"
	wait "$SP" 2>/dev/null || true
done

PORT=$((PORT + 1))
timeout "$LIMIT" "$KOSOKU" -m fuzzingserver "${xs[@]}" -o "$TMP/client" "127.0.0.1:$PORT" >"$TMP/client.log" 2>&1 &
KP=$!
wait_port "$PORT"
HOTPATH_AUTOBAHN_SERVER=127.0.0.1:$PORT go test -count=1 -timeout "${LIMIT}s" -run '^TestAutobahnClient$' ./websocket >"$TMP/client-test.log" 2>&1 || { cat "$TMP/client-test.log"; exit 1; }
for _ in $(seq 100); do grep -q 'cases passed\|failed' "$TMP/client.log" && break; sleep 0.1; done
kill "$KP" 2>/dev/null || true
wait "$KP" 2>/dev/null || true
echo "client: $(tail -1 "$TMP/client.log")"

python3 - "$TMP" "$TABLE" "$NOCOMPRESS" <<'EOF'
import glob, json, os, sys
tmp, table = sys.argv[1], sys.argv[2]
nocompress = set(filter(None, sys.argv[3].split(",")))
cols = ["native", "handler", "nethttp", "client"]
res, bad = {}, []
for col in cols:
    for f in glob.glob(os.path.join(tmp, col, "*case*.json")):
        d = json.load(open(f))
        cid, b = d["id"], d.get("behavior")
        res.setdefault(cid, {})[col] = b
        if b not in ("OK", "NON-STRICT", "INFORMATIONAL"):
            bad.append(f"{col} {cid}: {b} (close: {d.get('behaviorClose')}) {d.get('description', '')[:80]}")
key = lambda c: [int(p) for p in c.split(".")]
ids = sorted(res, key=key)
skipped = lambda c, cid: c in nocompress and cid.split(".")[0] in ("12", "13")
missing = [f"{c} {cid}: no result" for cid in ids for c in cols if c not in res[cid] and not skipped(c, cid)]
counts = {c: {} for c in cols}
for cid in ids:
    for c in cols:
        if skipped(c, cid):
            continue
        b = res[cid].get(c, "missing")
        counts[c][b] = counts[c].get(b, 0) + 1
for c in cols:
    print(f"{c}: {len([i for i in ids if c in res[i]])} cases, " + ", ".join(f"{n} {b}" for b, n in sorted(counts[c].items())))
if table:
    with open(table, "w") as out:
        out.write("# Autobahn TestSuite results\n\n")
        out.write("Written by `bash bench/autobahn.sh --table docs/websocket-autobahn.md` (kosoku, the Autobahn case files;\n")
        out.write("`.ci/run` runs the same cases and fails on any verdict but OK, NON-STRICT and INFORMATIONAL).\n")
        out.write("Columns: `hotpath serve`'s /ws echo (the event API) on the native API, on the http.Handler API,\n")
        out.write("and on net/http's server; the websocket package's client against Autobahn's fuzzing server.\n")
        out.write("Sections 12 and 13 (permessage-deflate) run with compression on at both ends.\n\n")
        out.write("| | " + " | ".join(cols) + " |\n|---|" + "---|" * len(cols) + "\n")
        out.write("| **total** | " + " | ".join(", ".join(f"{n} {b}" for b, n in sorted(counts[c].items())) for c in cols) + " |\n")
        for cid in ids:
            out.write(f"| {cid} | " + " | ".join(res[cid].get(c, "missing") for c in cols) + " |\n")
    print("wrote", table)
if bad or missing or not ids:
    print("\n".join(bad + missing) or "no results")
    sys.exit(1)
EOF
