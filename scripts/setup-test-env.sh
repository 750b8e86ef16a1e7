#!/usr/bin/env bash
# Installs what the real-peer tests need (see Docs/Testing.md):
#   - Debian packages: libbluetooth-dev (HCI socket headers), tshark (capture oracle),
#     qemu-system-x86 + linux-image-amd64 + kmod (kernel VM), bluez-test-tools (btvirt, btmon),
#     time (GNU time: peak RSS for scripts/rss-check.sh), qemu-system-arm + picolibc-arm-none-eabi +
#     binutils/gcc-arm-none-eabi (firmware images, scripts/firmware.sh)
#   - .venv in the repository with bumble (virtual controllers) and virtme-ng (vng)
# Idempotent and quick when everything is already there.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/apt-wait.sh

BUMBLE_VERSION=0.0.236
APT_PACKAGES=(libbluetooth-dev tshark qemu-system-x86 linux-image-amd64 kmod bluez-test-tools time
  qemu-system-arm picolibc-arm-none-eabi binutils-arm-none-eabi gcc-arm-none-eabi)

missing=()
for package in "${APT_PACKAGES[@]}"; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup-test-env: installing ${missing[*]}"
  apt_get update -q
  # tshark asks whether non-root users may capture; the default answer is fine.
  apt_get install -y -q --no-install-recommends "${missing[@]}"
fi

# bluez-test-tools pulls in bluez, whose bluetooth.service (bluetoothd) starts at boot and takes
# every adapter: Bluewire's HCI user channel on hci0 then fails with "Device or resource busy".
# Masked rather than disabled: `systemctl disable` needs a running systemd, which a chroot or
# container lacks, while masking only writes a link to /dev/null.
if [ -e /lib/systemd/system/bluetooth.service ] || [ -e /usr/lib/systemd/system/bluetooth.service ]; then
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  if [ "$(readlink /etc/systemd/system/bluetooth.service 2>/dev/null)" != /dev/null ]; then
    echo "setup-test-env: masking bluetooth.service (bluetoothd would take the adapter from Bluewire)"
    "${sudo_cmd[@]}" systemctl mask bluetooth.service >/dev/null 2>&1 \
      || "${sudo_cmd[@]}" ln -sf /dev/null /etc/systemd/system/bluetooth.service
    "${sudo_cmd[@]}" rm -f /etc/systemd/system/bluetooth.target.wants/bluetooth.service \
      /etc/systemd/system/dbus-org.bluez.service
    # A bluetoothd already running keeps the adapter until stopped.
    "${sudo_cmd[@]}" systemctl stop bluetooth.service >/dev/null 2>&1 || true
  fi
fi

# virtme-ng builds an initramfs around a statically linked busybox. Installing Debian's busybox-static
# would remove the system's busybox, so the binary is taken out of the package into scripts/.cache.
busybox=scripts/.cache/busybox-static/bin/busybox
if [ ! -x "$busybox" ]; then
  echo "setup-test-env: fetching busybox-static for the kernel VM"
  download=$(mktemp -d)
  chmod 777 "$download"  # apt's download sandbox user must be able to write here
  if ! (cd "$download" && apt-get download -q busybox-static >/dev/null 2>&1); then
    apt_get update -q >/dev/null
    (cd "$download" && apt-get download -q busybox-static >/dev/null)
  fi
  mkdir -p scripts/.cache/busybox-static
  dpkg-deb -x "$download"/busybox-static_*.deb scripts/.cache/busybox-static
  rm -rf "$download"
fi

if [ ! -x .venv/bin/python ]; then
  echo "setup-test-env: creating .venv"
  python3 -m venv .venv
fi
if ! .venv/bin/python -c "import importlib.metadata as m; assert m.version('bumble') == '$BUMBLE_VERSION'; m.version('virtme-ng')" 2>/dev/null; then
  echo "setup-test-env: installing bumble==$BUMBLE_VERSION virtme-ng into .venv"
  .venv/bin/pip install -q --disable-pip-version-check "bumble==$BUMBLE_VERSION" virtme-ng
fi
echo "setup-test-env: ready (.venv/bin/python: bumble $BUMBLE_VERSION, vng)"
