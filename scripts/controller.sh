#!/usr/bin/env bash
# Emulated controllers for the README's Examples and Throughput sections, with bumble alone (no
# Debian packages, no kernel VM): makes .venv with bumble if needed, then runs bumble controllers on
# one virtual link, one per TCP port, each with its own random static address, until Ctrl-C.
#
#   bash scripts/controller.sh                    # two controllers: tcp:127.0.0.1:9001 and :9002
#   bash scripts/controller.sh examples           # README's Examples: four, 9001 to 9004
#   bash scripts/controller.sh throughput         # README's Throughput: 9001 and 9002, 251-octet ACL buffers
#   bash scripts/controller.sh 9001 9002 9003     # one controller per port given
#   bash scripts/controller.sh 9001 9002 -- --acl-buffer 251   # options after -- go to bumble_link.py
#
# Each Bluewire process then takes one controller: --transport tcp:127.0.0.1:9001, and so on; a
# controller serves one host at a time (a second one connecting is refused). A port already in use
# ends the script with one line saying so.
# BLUEWIRE_CONTROLLER_HOST sets the address to listen on (default 127.0.0.1), and
# BLUEWIRE_CONTROLLER_BASE_PORT the first port of a named set (default 9001).
# The first line printed is bumble_link.py's READY line (transports and controller addresses, JSON).
set -euo pipefail
cd "$(dirname "$0")/.."

BUMBLE_VERSION=0.0.236   # the version scripts/setup-test-env.sh installs and the tests use
host=${BLUEWIRE_CONTROLLER_HOST:-127.0.0.1}
base=${BLUEWIRE_CONTROLLER_BASE_PORT:-9001}   # the first port of a named set

ports=()
extra=()
set_options=()
while [ $# -gt 0 ]; do
  case "$1" in
    --) shift; extra=("$@"); break ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    # The named sets: every README section that needs controllers starts them in one call.
    examples) ports+=("$base" $((base + 1)) $((base + 2)) $((base + 3))); shift ;;
    throughput) ports+=("$base" $((base + 1))); set_options=(--acl-buffer 251); shift ;;
    *[!0-9]*|'') echo "controller.sh: '$1' is not a port number or a set (examples, throughput; options for bumble_link.py go after --)" >&2; exit 64 ;;
    *) ports+=("$1"); shift ;;
  esac
done
[ ${#ports[@]} -gt 0 ] || ports=(9001 9002)
extra=(${set_options[@]+"${set_options[@]}"} ${extra[@]+"${extra[@]}"})

# A port something already listens on (often a controller.sh left running in another terminal):
# one line now, instead of bumble's traceback after the venv check.
for port in "${ports[@]}"; do
  if ! python3 -c 'import socket, sys
s = socket.socket(socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as bumble_link.py: a closed connection in TIME_WAIT does not count
s.bind((sys.argv[1], int(sys.argv[2])))' "$host" "$port" 2>/dev/null; then
    echo "controller.sh: port $port on $host is in use (another controller.sh still running? Ctrl-C it, or give other ports)" >&2
    exit 1
  fi
done

if [ ! -x .venv/bin/python ]; then
  echo "controller.sh: creating .venv" >&2
  python3 -m venv .venv || { echo "controller.sh: python3 -m venv failed (Debian: apt-get install python3-venv)" >&2; exit 1; }
fi
if ! .venv/bin/python -c "import importlib.metadata as m; assert m.version('bumble') == '$BUMBLE_VERSION'" 2>/dev/null; then
  echo "controller.sh: installing bumble==$BUMBLE_VERSION into .venv" >&2
  .venv/bin/pip install -q --disable-pip-version-check "bumble==$BUMBLE_VERSION"
fi

transports=()
for port in "${ports[@]}"; do transports+=("tcp-server:$host:$port"); done
for port in "${ports[@]}"; do echo "controller.sh: controller on --transport tcp:$host:$port" >&2; done
echo "controller.sh: Ctrl-C stops them" >&2
# exec: SIGINT/SIGTERM reach bumble_link.py directly, which closes the controllers cleanly.
exec .venv/bin/python Tests/Peers/bumble_link.py "${transports[@]}" ${extra[@]+"${extra[@]}"}
