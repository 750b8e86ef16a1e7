#!/usr/bin/env bash
# Emulated controllers for the README's Examples and Throughput sections, with bumble alone (no
# Debian packages, no kernel VM): makes .venv with bumble if needed, then runs bumble controllers on
# one virtual link, one per TCP port, each with its own random static address, until Ctrl-C.
#
#   bash scripts/controller.sh                    # two controllers: tcp:127.0.0.1:9001 and :9002
#   bash scripts/controller.sh 9001 9002 9003     # one controller per port given
#   bash scripts/controller.sh 9001 9002 -- --acl-buffer 251   # options after -- go to bumble_link.py
#
# Each Bluewire process then takes one controller: --transport tcp:127.0.0.1:9001, and so on.
# BLUEWIRE_CONTROLLER_HOST sets the address to listen on (default 127.0.0.1).
# The first line printed is bumble_link.py's READY line (transports and controller addresses, JSON).
set -euo pipefail
cd "$(dirname "$0")/.."

BUMBLE_VERSION=0.0.236   # the version scripts/setup-test-env.sh installs and the tests use
host=${BLUEWIRE_CONTROLLER_HOST:-127.0.0.1}

ports=()
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --) shift; extra=("$@"); break ;;
    *[!0-9]*|'') echo "controller.sh: '$1' is not a port number (options for bumble_link.py go after --)" >&2; exit 64 ;;
    *) ports+=("$1"); shift ;;
  esac
done
[ ${#ports[@]} -gt 0 ] || ports=(9001 9002)

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
