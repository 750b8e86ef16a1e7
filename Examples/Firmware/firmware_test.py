#!/usr/bin/env python3
"""End-to-end test of the Bluewire firmware images under QEMU against bumble.

One bumble LocalLink, two controllers with random static addresses: one waits on a TCP port for the
firmware (QEMU's UART0, `-serial tcp:127.0.0.1:PORT`), the other carries a bumble Device.

  peripheral: the bumble central finds "Bluewire-MCU", connects, discovers the whole database,
              reads Body Sensor Location, receives 5 Heart Rate Measurement notifications, writes the
              echo characteristic and gets the value back by notification, disconnects; then a second
              connection (the firmware advertises again) reads Body Sensor Location once more.
              Security: the central is refused a read of the encrypted characteristic (Insufficient
              Encryption), pairs (LE SC Just Works), reads "secret"; pairs again with LE SC Passkey Entry,
              typing the passkey the firmware logs; QEMU is stopped and started again on the same key store
              file; the central reconnects and encrypts with the bond, and no SMP PDU crosses the link.
  central:    a bumble peripheral "Bluewire-Sensor" serves a readable and a notifying characteristic, the
              readable one only on an encrypted link; the firmware finds it, connects, discovers, is refused
              the read, pairs (LE SC Just Works), reads, subscribes, prints 3 notifications and disconnects;
              the test checks the firmware's log.

Both sides' controllers do the firmware's crypto (LE Encrypt, LE Read Local P-256 Public Key, LE Generate
DHKey, added to bumble's controller by Tests/Peers/bumble_controller_crypto.py).

Usage: firmware_test.py peripheral|central  (run by scripts/firmware-test.sh). Exits non-zero with a
message on the first failure; QEMU is killed at the end either way.
"""

import asyncio
import os
import re
import signal
import socket
import sys
import tempfile

from bumble import att, hci, smp
from bumble.controller import Controller
from bumble.core import AdvertisingData, UUID
from bumble.device import Device, Peer
from bumble.gatt import Characteristic, Service
from bumble.host import Host
from bumble.keys import MemoryKeyStore
from bumble.link import LocalLink
from bumble.pairing import PairingConfig, PairingDelegate
from bumble.transport.common import AsyncPipeSink
from bumble.transport.tcp_server import open_tcp_server_transport_with_socket

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, 'Tests', 'Peers'))
import bumble_controller_crypto  # noqa: E402

HEART_RATE = UUID.from_16_bits(0x180D)
MEASUREMENT = UUID.from_16_bits(0x2A37)
BODY_SENSOR_LOCATION = UUID.from_16_bits(0x2A38)
ECHO_SERVICE = UUID('B1E00001-0000-4000-8000-B1E700000001')
ECHO = UUID('B1E00002-0000-4000-8000-B1E700000001')
SECRET = UUID('B1E00003-0000-4000-8000-B1E700000001')
SMP_CID = 0x0006
STEP_TIMEOUT = 30.0


class Failure(Exception):
    pass


def random_static_address():
    raw = bytearray(os.urandom(6))
    raw[0] |= 0xC0  # random static: two top bits set (Core Vol 6 Part B §1.3.2.1)
    return hci.Address(':'.join(f'{b:02X}' for b in raw), hci.Address.RANDOM_DEVICE_ADDRESS)


RUNTIME = {'heap': 0, 'stack': 0}


def record_runtime(line):
    """The largest peak heap and stack high-water mark any `heap:` line reported (firmware.sh prints them)."""
    heap = re.search(r'heap: peak (\d+) bytes', line)
    stack = re.search(r'stack high-water (\d+) bytes', line)
    if heap:
        RUNTIME['heap'] = max(RUNTIME['heap'], int(heap.group(1)))
    if stack:
        RUNTIME['stack'] = max(RUNTIME['stack'], int(stack.group(1)))


def save_runtime(role):
    directory = os.environ.get('FIRMWARE_BUILD_DIR', os.path.join(ROOT, '.build', 'firmware'))
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, f'runtime-{role}.txt'), 'w') as f:
        f.write(f"{RUNTIME['heap']} {RUNTIME['stack']}\n")


class FirmwareLog:
    """The firmware's log UART (QEMU's stdout), line by line, echoed with a prefix."""

    def __init__(self):
        self.lines = []
        self.changed = asyncio.Condition()

    async def follow(self, stream):
        while True:
            raw = await stream.readline()
            if not raw:
                return
            line = raw.decode(errors='replace').rstrip('\r\n')
            print(f'  firmware| {line}', flush=True)
            record_runtime(line)
            async with self.changed:
                self.lines.append(line)
                self.changed.notify_all()

    def count(self, pattern):
        return sum(1 for line in self.lines if re.search(pattern, line))

    async def wait(self, pattern, occurrences=1, timeout=STEP_TIMEOUT):
        async def satisfied():
            async with self.changed:
                await self.changed.wait_for(lambda: self.count(pattern) >= occurrences)
        try:
            await asyncio.wait_for(satisfied(), timeout)
        except asyncio.TimeoutError:
            raise Failure(f'the firmware did not log /{pattern}/ (x{occurrences}) within {timeout:.0f} s')
        return [line for line in self.lines if re.search(pattern, line)]


async def step(what, awaitable, timeout=STEP_TIMEOUT):
    try:
        return await asyncio.wait_for(awaitable, timeout)
    except asyncio.TimeoutError:
        raise Failure(f'{what}: no result within {timeout:.0f} s')


def check(condition, message):
    if not condition:
        raise Failure(message)


async def find(device, name):
    found = asyncio.get_running_loop().create_future()

    def on_advertisement(advertisement):
        if advertisement.data.get(AdvertisingData.COMPLETE_LOCAL_NAME) == name and not found.done():
            found.set_result(advertisement.address)
    device.on('advertisement', on_advertisement)
    await device.start_scanning(own_address_type=hci.OwnAddressType.RANDOM)
    try:
        return await step(f'scanning for {name}', found)
    finally:
        device.remove_listener('advertisement', on_advertisement)
        await device.stop_scanning()


async def connect(device, address):
    return await step('connecting', device.connect(address, own_address_type=hci.OwnAddressType.RANDOM))


def characteristic(peer, service_uuid, uuid):
    for service in peer.services:
        if service.uuid == service_uuid:
            for item in service.characteristics:
                if item.uuid == uuid:
                    return item
    raise Failure(f'characteristic {uuid} of service {service_uuid} not discovered')


async def peripheral_scenario(device, log):
    await log.wait(r'advertising as Bluewire-MCU')
    address = await find(device, 'Bluewire-MCU')
    print(f'test: found Bluewire-MCU at {address}', flush=True)
    connection = await connect(device, address)
    peer = Peer(connection)
    mtu = await step('exchanging MTU', peer.request_mtu(100))
    check(mtu == 100, f'ATT_MTU {mtu}, expected 100 (ours) as the firmware offers 247')
    await step('discovering services', peer.discover_services())
    for service in peer.services:
        await step('discovering characteristics', service.discover_characteristics())
        for item in service.characteristics:
            await step('discovering descriptors', item.discover_descriptors())
    uuids = {str(s.uuid): [str(c.uuid) for c in s.characteristics] for s in peer.services}
    print(f'test: database {uuids}', flush=True)
    check(any(s.uuid == HEART_RATE for s in peer.services), 'no Heart Rate service')
    check(any(s.uuid == ECHO_SERVICE for s in peer.services), 'no echo service')

    location = characteristic(peer, HEART_RATE, BODY_SENSOR_LOCATION)
    value = await step('reading Body Sensor Location', location.read_value())
    check(bytes(value) == b'\x01', f'Body Sensor Location is {bytes(value).hex()}, expected 01 (chest)')

    beats = asyncio.Queue()
    measurement = characteristic(peer, HEART_RATE, MEASUREMENT)
    await step('subscribing to Heart Rate Measurement', measurement.subscribe(lambda v: beats.put_nowait(bytes(v))))
    for index in range(5):
        beat = await step(f'heart rate notification {index + 1}', beats.get(), timeout=10)
        check(len(beat) == 2 and beat[0] == 0x00 and 60 <= beat[1] < 80, f'bad measurement {beat.hex()}')
        print(f'test: heart rate {beat[1]} bpm', flush=True)
    await step('unsubscribing', measurement.unsubscribe())

    echoes = asyncio.Queue()
    echo = characteristic(peer, ECHO_SERVICE, ECHO)
    await step('subscribing to echo', echo.subscribe(lambda v: echoes.put_nowait(bytes(v))))
    sent = b'hello, microcontroller: longer than 20 octets'  # fits ATT_MTU 100 - 3
    await step('writing echo', echo.write_value(sent, with_response=True))
    got = await step('echo notification', echoes.get(), timeout=10)
    check(got == sent, f'echo returned {got!r}, wrote {sent!r}')
    print('test: echo came back', flush=True)

    await step('disconnecting', connection.disconnect())
    await log.wait(r'disconnected: handle')

    # The firmware advertises again: a second central connection works.
    await log.wait(r'advertising as Bluewire-MCU', occurrences=2)
    address = await find(device, 'Bluewire-MCU')
    connection = await connect(device, address)
    peer = Peer(connection)
    await step('discovering again', peer.discover_service(HEART_RATE))
    service = peer.get_services_by_uuid(HEART_RATE)[0]
    await step('discovering characteristics again', service.discover_characteristics())
    location = [c for c in service.characteristics if c.uuid == BODY_SENSOR_LOCATION][0]
    value = await step('reading again', location.read_value())
    check(bytes(value) == b'\x01', 'second connection: wrong Body Sensor Location')
    await step('disconnecting again', connection.disconnect())
    await log.wait(r'disconnected: handle', occurrences=2)
    heap = await log.wait(r'heap: peak')
    print(f'test: {heap[-1]}', flush=True)


class SMPCounter:
    """Counts SMP PDUs (L2CAP CID 0x0006) crossing the bumble device's HCI, either way: a bumble Snooper."""

    def __init__(self):
        self.count = 0

    def snoop(self, packet, _direction):
        # H4 ACL: type 0x02, handle+flags (2), length (2), then L2CAP length (2) and CID (2).
        if len(packet) >= 9 and packet[0] == 0x02 and int.from_bytes(packet[7:9], 'little') == SMP_CID:
            self.count += 1


class LoggedPasskeyDelegate(PairingDelegate):
    """A central with a keyboard: it types the passkey the firmware shows on its log (`passkey NNNNNN`)."""

    def __init__(self, log, io_capability=PairingDelegate.KEYBOARD_INPUT_ONLY):
        super().__init__(io_capability=io_capability)
        self.log = log
        # The firmware may log its passkey before bumble asks for it: count from when this pairing began.
        self.seen = log.count(r'passkey \d{6}')

    async def accept(self):
        return True

    async def confirm(self, auto=False):
        return True

    async def get_number(self):
        lines = await self.log.wait(r'passkey \d{6}', occurrences=self.seen + 1)
        passkey = int(re.search(r'passkey (\d{6})', lines[-1]).group(1))
        print(f'test: typing passkey {passkey:06d} from the firmware log', flush=True)
        return passkey


async def read_secret(peer):
    await step('discovering the secret service', peer.discover_service(ECHO_SERVICE))
    service = peer.get_services_by_uuid(ECHO_SERVICE)[0]
    await step('discovering its characteristics', service.discover_characteristics())
    secret = [c for c in service.characteristics if c.uuid == SECRET]
    check(len(secret) == 1, 'the encrypted characteristic B1E00003-... was not discovered')
    return secret[0]


async def security_scenario(device, log, restart):
    """Pairing, encrypted reads and a bond that survives a restart of the board (see the module note)."""
    device.keystore = MemoryKeyStore()
    device.pairing_config_factory = lambda _connection: PairingConfig(
        sc=True, mitm=False, bonding=True, delegate=LoggedPasskeyDelegate(log, PairingDelegate.NO_OUTPUT_NO_INPUT))
    address = await find(device, 'Bluewire-MCU')
    connection = await connect(device, address)
    peer = Peer(connection)
    secret = await read_secret(peer)
    try:
        await step('reading the secret unencrypted', secret.read_value())
        raise Failure('the encrypted characteristic was read on an unencrypted link')
    except att.ATT_Error as error:
        check(error.error_code == att.ATT_INSUFFICIENT_ENCRYPTION_ERROR,
              f'unencrypted read refused with 0x{error.error_code:02X}, expected Insufficient Encryption (0x0F)')
    print('test: unencrypted read refused with Insufficient Encryption', flush=True)

    paired = log.count(r'paired: ')
    await step('pairing (LE SC Just Works)', connection.pair(), timeout=60)
    await log.wait(r'paired: .*LE Secure Connections, bonded', occurrences=paired + 1)
    await log.wait(r'encrypted: handle')
    value = await step('reading the secret encrypted', secret.read_value())
    check(bytes(value) == b'secret', f'the secret is {bytes(value)!r}, expected b"secret"')
    print('test: Just Works pairing done, secret read', flush=True)
    await step('disconnecting', connection.disconnect())

    # LE SC Passkey Entry: the firmware displays, the central types what the log shows.
    address = await find(device, 'Bluewire-MCU')
    connection = await connect(device, address)
    delegate = LoggedPasskeyDelegate(log)
    device.pairing_config_factory = lambda _connection: PairingConfig(sc=True, mitm=True, bonding=True, delegate=delegate)
    await step('pairing (LE SC Passkey Entry)', connection.pair(), timeout=90)
    await log.wait(r'paired: .*LE Secure Connections, bonded', occurrences=paired + 2)
    check(connection.authenticated, 'Passkey Entry gave an unauthenticated link')
    peer = Peer(connection)
    secret = await read_secret(peer)
    value = await step('reading the secret after Passkey Entry', secret.read_value())
    check(bytes(value) == b'secret', 'wrong secret after Passkey Entry')
    print('test: Passkey Entry pairing done, secret read', flush=True)
    await step('disconnecting', connection.disconnect())
    await log.wait(r'disconnected: handle', occurrences=log.count(r'disconnected: handle'))

    # The board restarts on the same key store: the bond encrypts the next connection, no SMP.
    log = await restart()
    await log.wait(r'key store: 1 bonds')
    await log.wait(r'advertising as Bluewire-MCU')
    counter = SMPCounter()
    device.host.snooper = counter
    address = await find(device, 'Bluewire-MCU')
    connection = await connect(device, address)
    await step('encrypting with the bond', connection.encrypt(), timeout=30)
    await log.wait(r'encrypted: handle')
    peer = Peer(connection)
    secret = await read_secret(peer)
    value = await step('reading the secret after the restart', secret.read_value())
    check(bytes(value) == b'secret', 'wrong secret after the restart')
    check(counter.count == 0, f'{counter.count} SMP PDUs crossed the link on the bonded reconnection')
    check(log.count(r'paired: ') == 0, 'the firmware paired again after the restart')
    device.host.snooper = None
    print('test: bond survived the restart: encrypted with no SMP PDU', flush=True)
    await step('disconnecting', connection.disconnect())
    heap = await log.wait(r'heap: peak')
    print(f'test: {heap[-1]}', flush=True)


async def central_scenario(device, log):
    device.keystore = MemoryKeyStore()
    device.pairing_config_factory = lambda _connection: PairingConfig(
        sc=True, mitm=False, bonding=True, delegate=PairingDelegate(io_capability=PairingDelegate.NO_OUTPUT_NO_INPUT))
    readable = Characteristic(UUID('B1E00011-0000-4000-8000-B1E700000001'), Characteristic.Properties.READ,
                              Characteristic.READ_REQUIRES_ENCRYPTION, b'sensor-v1')
    counter = Characteristic(UUID('B1E00012-0000-4000-8000-B1E700000001'),
                             Characteristic.Properties.READ | Characteristic.Properties.NOTIFY,
                             Characteristic.READABLE, bytes([0]))
    device.add_service(Service(UUID('B1E00010-0000-4000-8000-B1E700000001'), [readable, counter]))
    subscribed = asyncio.get_running_loop().create_future()

    def on_subscription(connection, item, notify, indicate):
        if item is counter and notify and not subscribed.done():
            subscribed.set_result(connection)
    device.on('characteristic_subscription', on_subscription)
    await device.start_advertising(
        advertising_data=bytes([2, 1, 6, 16, 9]) + b'Bluewire-Sensor', auto_restart=False,
        own_address_type=hci.OwnAddressType.RANDOM)
    await log.wait(r'found Bluewire-Sensor')
    connection = await step('the firmware subscribing', subscribed)
    # One notification at a time, each sent once the firmware printed the one before.
    for sequence in range(1, 4):
        await device.notify_subscriber(connection, counter, bytes([sequence]))
        await log.wait(r'notification from handle', occurrences=sequence)
    await log.wait(r'central: done')
    check(log.count(r'paired: .*LE Secure Connections') == 1, 'the firmware did not pair')
    check(log.count(r'encrypted: handle') >= 1, 'the firmware did not encrypt')
    check(log.count(r'read handle \d+: ' + b'sensor-v1'.hex()) == 1, 'the firmware did not read the encrypted value')
    check(log.count(r'subscribed to handle') >= 1, 'the firmware did not subscribe')
    check(log.count(r'notification from handle \d+: 0[123]') >= 3, 'the firmware did not print 3 notifications')
    check(log.count(r'service b1e00010') + log.count(r'service B1E00010') >= 1, 'the firmware did not discover the service')
    heap = await log.wait(r'heap: peak')
    print(f'test: {heap[-1]}', flush=True)


async def main():
    role = sys.argv[1] if len(sys.argv) > 1 else ''
    if role not in ('peripheral', 'central'):
        raise SystemExit('usage: firmware_test.py peripheral|central')
    bumble_controller_crypto.install()
    link = LocalLink()
    listener = socket.socket(socket.AF_INET)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    listener.bind(('127.0.0.1', 0))
    transport = await open_tcp_server_transport_with_socket(listener)
    port = listener.getsockname()[1]
    firmware_controller = Controller('firmware', host_source=transport.source, host_sink=transport.sink, link=link,
                                     public_address=random_static_address().to_string(False))
    firmware_controller.random_address = random_static_address()
    controller = Controller('bumble', link=link)
    device = Device(name='bumble-test', address=random_static_address(), host=Host(controller, AsyncPipeSink(controller)))
    await device.power_on()

    store = os.path.join(tempfile.mkdtemp(prefix='bluewire-fw-'), 'store.bin')
    board = {}

    async def launch():
        qemu = await asyncio.create_subprocess_exec(
            'bash', os.path.join(ROOT, 'scripts', 'firmware.sh'), 'run', role, '--uart', f'tcp:127.0.0.1:{port}',
            '--store', store, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, start_new_session=True)
        log = FirmwareLog()
        board.update(qemu=qemu, log=log, follower=asyncio.ensure_future(log.follow(qemu.stdout)))
        await log.wait(r'Bluewire firmware', timeout=20)
        await log.wait(r'controller up')
        return log

    async def stop():
        qemu = board.get('qemu')
        if qemu is None:
            return
        try:
            os.killpg(qemu.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        await qemu.wait()
        board['follower'].cancel()
        board.clear()

    async def restart():
        print('test: stopping QEMU and starting it again on the same key store', flush=True)
        await stop()
        # The controller still holds the old connection state of a board that vanished: start it afresh.
        return await launch()

    try:
        log = await launch()
        if role == 'peripheral':
            await asyncio.wait_for(peripheral_scenario(device, log), 180)
            await asyncio.wait_for(security_scenario(device, log, restart), 300)
        else:
            await asyncio.wait_for(central_scenario(device, log), 120)
        save_runtime(role)
        print(f'firmware-test: {role} PASSED (peak heap {RUNTIME["heap"]} bytes, stack high-water {RUNTIME["stack"]} bytes)',
              flush=True)
        return 0
    except (Failure, asyncio.TimeoutError) as error:
        print(f'firmware-test: {role} FAILED: {error or "timed out"}', flush=True)
        return 1
    finally:
        await stop()
        await transport.close()


if __name__ == '__main__':
    sys.exit(asyncio.run(main()))
