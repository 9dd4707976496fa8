#!/usr/bin/env bash
# nginx-idle.sh ADDR: nginx for bench/server.sh --idle, in the foreground:
# one process (no master, one worker), no logs, "Hello, World!" from
# memory on ADDR (host:port), keep-alive connections kept 120 s (hotpath's
# and net/http's IdleTimeout in hotpath serve), room for NGINX_CONNS
# connections. Run by server.sh, which sets NGINX_BIN, NGINX_DIR and
# NGINX_CONNS (and NGINX_NOFILE, the descriptors its worker may open).
set -euo pipefail
addr=${1:?usage: nginx-idle.sh HOST:PORT}
dir=${NGINX_DIR:?}/${addr//[:.]/-}
conns=${NGINX_CONNS:-20000}
nofile=${NGINX_NOFILE:-$(ulimit -Hn)}
conns=$((conns < nofile - 50 ? conns : nofile - 50))
mkdir -p "$dir/logs"
cat >"$dir/nginx.conf" <<CONF
daemon off;
master_process off;
worker_processes 1;
worker_rlimit_nofile $nofile;
error_log stderr error;
pid $dir/nginx.pid;
events { worker_connections $conns; }
http {
	access_log off;
	keepalive_timeout 120s;
	keepalive_requests 10000000;
	server {
		listen $addr;
		location / { default_type "text/plain; charset=utf-8"; return 200 "Hello, World!"; }
	}
}
CONF
exec "${NGINX_BIN:-nginx}" -p "$dir" -c "$dir/nginx.conf"
