# Sourced by the scripts that start local servers (pg.sh, test-worker.sh, bench-worker.sh):
# free_port prints a 127.0.0.1 port nothing listens on, chosen below the kernel's ephemeral
# range. Outgoing connections take their local ports from that range, and a listener cannot
# bind a port such a connection holds although nothing listens on it: a port picked inside it
# failed once in `make test` ("Address already in use" from wrangler dev).
free_port() {
  local low port _
  low=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
  [ "$low" -gt 12000 ] 2>/dev/null || low=32768
  for _ in $(seq 1 200); do
    port=$(( 10000 + RANDOM % (low - 10000) ))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then echo "$port"; return 0; fi
  done
  echo "no free loopback port below $low" >&2
  return 1
}
