# lib.sh: what the bench scripts share. Source it after setting TMP (a
# scratch directory the exit trap removes).

# Every process a script starts goes in PIDS (PIDS+=("$!")); the exit
# trap ends them by id and removes $TMP.
PIDS=()
cleanup() {
	local pid
	for pid in "${PIDS[@]}"; do
		kill "$pid" 2>/dev/null || true
	done
	for pid in "${PIDS[@]}"; do
		wait "$pid" 2>/dev/null || true
	done
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# wait_port PORT: wait up to 5 s for 127.0.0.1:PORT to accept.
wait_port() {
	local _
	for _ in $(seq 50); do
		if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
		sleep 0.1
	done
	return 1
}
