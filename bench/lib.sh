# lib.sh: what the bench scripts share. Source it after setting TMP (a
# scratch directory the exit trap removes).

# Every process a script starts goes in PIDS (PIDS+=("$!")); the exit
# trap ends them by id, removes $TMP and the network namespaces of
# veth_up, if any.
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
	veth_down
}

# The measurement path. By default the server and the client meet over
# loopback (HOST 127.0.0.1). veth_up moves them apart like two machines on
# one link: two network namespaces, hp-srv and hp-cli, joined by a veth
# pair with an MTU of 1500 (10.77.0.1 the server, 10.77.0.2 the client);
# traffic never leaves the machine. Start servers with "${NS_SRV[@]}" before
# the command and clients with "${NS_CLI[@]}"; both are empty on loopback.
HOST=127.0.0.1
NS_SRV=()
NS_CLI=()
VETH=0
veth_up() {
	command -v ip >/dev/null || { echo "the veth path needs ip (iproute2) and root" >&2; return 1; }
	veth_down
	ip netns add hp-srv && ip netns add hp-cli &&
		ip link add hp-veth-s type veth peer name hp-veth-c &&
		ip link set hp-veth-s netns hp-srv && ip link set hp-veth-c netns hp-cli &&
		ip -n hp-srv addr add 10.77.0.1/24 dev hp-veth-s && ip -n hp-cli addr add 10.77.0.2/24 dev hp-veth-c &&
		ip -n hp-srv link set hp-veth-s mtu 1500 up && ip -n hp-cli link set hp-veth-c mtu 1500 up &&
		ip -n hp-srv link set lo up && ip -n hp-cli link set lo up || return 1
	HOST=10.77.0.1
	NS_SRV=(ip netns exec hp-srv)
	NS_CLI=(ip netns exec hp-cli)
	VETH=1
}
veth_down() {
	ip netns del hp-srv 2>/dev/null || true
	ip netns del hp-cli 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# wait_port PORT: wait up to 5 s for HOST:PORT to accept, from the
# client's side.
wait_port() {
	local _
	for _ in $(seq 50); do
		if "${NS_CLI[@]}" bash -c "exec 3<>/dev/tcp/$HOST/$1" 2>/dev/null; then return 0; fi
		sleep 0.1
	done
	return 1
}

# port_open PORT: whether something accepts on HOST:PORT now, from the
# client's side.
port_open() { "${NS_CLI[@]}" bash -c ": </dev/tcp/$HOST/$1" 2>/dev/null; }

# median N...: the median of the numbers given.
median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

# json_num FILE KEY: the first number after "KEY": in FILE.
json_num() { grep -m1 "\"$2\":" "$1" | sed 's/.*: *\([-0-9.e+]*\).*/\1/'; }
