# Sourced by the set-up scripts: `apt_get ARGS...` runs apt-get (through sudo when not root) and, while
# another package manager holds apt's or dpkg's lock (unattended-upgrades at boot, a second set-up
# run), waits for it instead of failing at once with "Could not get lock ... (exit 100)".
#
# The wait is bounded: BLUEWIRE_APT_LOCK_WAIT seconds in all (default 600), re-trying every
# BLUEWIRE_APT_LOCK_POLL seconds (default 5). One line says who holds the lock when the wait starts;
# if the lock is still held at the end, one line says so and the status is apt-get's.

apt_get() {
  local limit=${BLUEWIRE_APT_LOCK_WAIT:-600} poll=${BLUEWIRE_APT_LOCK_POLL:-5}
  local start=$SECONDS said= status errors holder
  local sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  errors=$(mktemp)
  while :; do
    status=0
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get "$@" 2>"$errors" || status=$?
    # "Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 1234 (apt-get)",
    # "Unable to lock directory /var/lib/apt/lists/", "Unable to acquire the dpkg frontend lock".
    if [ "$status" -eq 0 ] || ! grep -qE 'Could not get lock|Unable to lock|Unable to acquire the dpkg' "$errors"; then
      cat "$errors" >&2
      rm -f "$errors"
      return "$status"
    fi
    holder=$(grep -oE 'Could not get lock [^ ]+( It is held by process [0-9]+ \([^)]*\))?' "$errors" | head -n 1)
    if [ $((SECONDS - start)) -ge "$limit" ]; then
      echo "apt-get $1: the package manager's lock is still held after ${limit} s (${holder:-another apt or dpkg is running}); try again when it has finished, or set BLUEWIRE_APT_LOCK_WAIT" >&2
      rm -f "$errors"
      return "$status"
    fi
    if [ -z "$said" ]; then
      echo "apt-get $1: waiting up to ${limit} s for another package manager to finish (${holder:-lock held})" >&2
      said=1
    fi
    sleep "$poll"
  done
}
