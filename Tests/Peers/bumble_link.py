#!/usr/bin/env python3
"""Real BLE peers for Bluewire's tests: bumble controllers on one LocalLink.

Each positional argument is an H4 transport on which one bumble controller waits for a host
(Bluewire):
    tcp-server:127.0.0.1:0    TCP; port 0 picks a free port (reported in READY)
    unix-server:PATH          Unix stream socket
    pty:PATH                  a pty; PATH becomes a symlink to its replica (open it as serial:PATH)

Optionally a bumble Device runs on one more controller of the same link:
    --peripheral              advertise (--name, --uuid16, --uuid128, --manufacturer,
                              --advertising legacy|extended, --interval MS), serve --gatt FILE.json,
                              accept connections
    --central ADDRESS         connect to ADDRESS (a random address), discover, read, subscribe,
                              and print what it finds as EVENT lines
      --centrals N            N central Devices (each on its own controller); central 0 connects at
                              once unless --manual, the others when told on standard input
      --manual                central 0 waits for a "connect" command too

Once everything listens it prints one line:
    READY {"controllers": [{"transport": "tcp:127.0.0.1:40123", "address": "..."}], "device": {...}}
with the transports spelled as Bluewire's --transport option takes them. Later lines are
EVENT {json} (a central's carry "central": INDEX). It exits cleanly on SIGTERM, SIGINT or when its
standard input closes.

Centrals take commands on standard input, one JSON object per line, each with "central": INDEX:
    {"op": "connect", "discover": true, "mtu": 100}   connect (then exchange MTUs if "mtu"; then
                              discover, read and subscribe as above if "discover")
    {"op": "read", "handle": H}                       read (long read by Read Blob when the value
                              fills the PDU) -> {"read": H, "value": HEX} or {"read": H, "error": CODE}
    {"op": "write", "handle": H, "value": HEX, "response": true}
                              -> {"written": H} or {"written": H, "error": CODE}
    {"op": "att", "pdus": [HEX, ...]}                 send raw ATT PDUs back to back (a hostile
                              client); from then on every ATT PDU received is {"att": HEX} and
                              bypasses bumble's GATT client (no automatic confirmations)
    {"op": "disconnect"}                              -> {"disconnected": REASON}
    "connect" may name another "address" (random) and a "timeout" in seconds -> {"connect_timeout": ADDRESS}
    {"op": "scan", "name": NAME}                      active scan: {"advertisement": ADDRESS, "name",
                              "resolvable": BOOL, "identity": ADDRESS|null} once per advertiser address
                              ("identity": what the IRKs in the key store resolve it to)
    {"op": "stop_scan"}                               -> {"scanning": false}
    {"op": "connect_identity", "address": IDENTITY, "timeout": 2, "attempts": 5}
                              connect by identity address with bumble's host-side resolver (after
                              refresh_resolving_list): scans until a private address resolves to IDENTITY,
                              connects to it; a timeout ({"connect_timeout", "attempt"}) scans again ->
                              {"connected": IDENTITY, "rpa": PRIVATE ADDRESS, "attempt": N, "handle": H}

GATT file: {"services": [{"uuid": "180D", "characteristics": [
    {"uuid": "2A37", "properties": ["READ", "NOTIFY"], "value": "0001"}]}]}
A service may have "includes": [INDEX, ...], the indexes of services listed before it, which it
includes (Include declarations before its characteristics). A characteristic may also have "counter": N (and "size": S, default 4): when a client enables
notifications or indications, N values are sent that way, each the sequence number 0...N-1 as 4
little-endian bytes padded with zeros to S bytes, then EVENT {"counter_done": handle}. Writes to a
characteristic are reported as EVENT {"write": handle, "value": hex}. With --gatt, the first EVENT
after READY is the server's attribute table: {"database": [{"handle", "type" (little-endian hex), "value" (hex, null
when the server computes it)}]}.

The peripheral reports each connection update its host learns of (the central's LE Connection Update) as
EVENT {"parameters_updated": handle, "interval": N, "latency": N, "timeout": N} in HCI units.

--pairing IO:SC:MITM gives the Device bumble's Security Manager with these pairing features (see
bumble_pairing.py for the EVENT lines it adds); centrals then also take
    {"op": "pair"}  {"op": "encrypt"}  {"op": "passkey", "value": N}
and the peripheral takes {"op": "passkey", "value": N} (the passkey its user types).

--privacy makes the peripheral advertise with a resolvable private address (EVENT {"rpa": ADDRESS}; its
identity address is the READY address); {"op": "rotate"} on stdin gives it a new one. --irk HEX (16
octets, least significant first as SMP carries it) makes those addresses from a known IRK.

--disconnect-on OPCODE[:N] makes the peripheral disconnect (Remote User Terminated Connection)
instead of answering the N-th (default first) ATT PDU with that opcode (hex, e.g. 0C for Read Blob
Request), reporting EVENT {"disconnecting_on": opcode}: a peer that vanishes mid-procedure.
--silent-on OPCODE[:N] leaves that PDU unanswered instead, reporting EVENT {"silent_on": opcode}: a peer
whose ATT server stops answering, so the client's transaction times out (Core Vol 3 Part F §3.3.3).
"""

import argparse
import asyncio
import errno
import json
import os
import signal
import socket
import sys

from bumble import att, core, hci
from bumble.core import UUID, AdvertisingData
from bumble.controller import Controller
from bumble.device import AdvertisingEventProperties, AdvertisingParameters, Device, Peer
from bumble.gatt import Characteristic, Service
from bumble.host import Host
from bumble.link import LocalLink
from bumble.transport import open_transport
from bumble.transport.common import AsyncPipeSink, StreamPacketSource, Transport
from bumble_pairing import configure_pairing, watch_security


def conform_create_connection_cancel():
    """Makes bumble's controller cancel a pending LE Create Connection as the Core spec says.

    bumble 0.0.236 answers LE Create Connection Cancel with Success and keeps the attempt pending,
    so every later LE Create Connection on that controller is refused with Command Disallowed until
    the script restarts: a host whose connection attempt timed out could never connect again. Core
    Vol 4 Part E §7.8.13: with an attempt pending, the controller answers Success, then ends the
    attempt with an LE Connection Complete event of status Unknown Connection Identifier (0x02);
    with none pending it answers Command Disallowed (0x0C).
    """
    def on_cancel(self, _command):
        pending = self.pending_le_connection
        if not pending:
            return hci.HCI_StatusReturnParameters(hci.HCI_ErrorCode.COMMAND_DISALLOWED_ERROR)
        self.pending_le_connection = None
        ended = hci.HCI_LE_Connection_Complete_Event(
            status=hci.HCI_ErrorCode.UNKNOWN_CONNECTION_IDENTIFIER_ERROR, connection_handle=0,
            role=hci.Role.CENTRAL, peer_address_type=pending.peer_address_type,
            peer_address=pending.peer_address, connection_interval=0, peripheral_latency=0,
            supervision_timeout=0, central_clock_accuracy=0)
        # After the Command Complete that the caller sends once this returns (both go through
        # call_soon, in order).
        asyncio.get_running_loop().call_soon(self.send_hci_packet, ended)
        return hci.HCI_StatusReturnParameters(hci.HCI_ErrorCode.SUCCESS)
    Controller.on_hci_le_create_connection_cancel_command = on_cancel



def emit(kind, payload):
    print(kind, json.dumps(payload), flush=True)


def random_static_address():
    # Random static: the two most significant bits are 1 (Core Vol 6 Part B §1.3.2.1).
    raw = bytearray(os.urandom(6))
    raw[0] |= 0xC0
    return hci.Address(':'.join(f'{b:02X}' for b in raw), hci.Address.RANDOM_DEVICE_ADDRESS)


def ad_structure(ad_type, data):
    return bytes([len(data) + 1, ad_type]) + data


def advertising_data(args):
    data = ad_structure(0x01, bytes([0x06]))  # LE General Discoverable, BR/EDR not supported
    if args.uuid16:
        data += ad_structure(0x03, b''.join(int(u, 16).to_bytes(2, 'little') for u in args.uuid16))
    if args.uuid128:
        data += ad_structure(0x07, b''.join(UUID(u).to_bytes() for u in args.uuid128))
    if args.manufacturer:
        company, _, payload = args.manufacturer.partition(':')
        data += ad_structure(0xFF, int(company, 16).to_bytes(2, 'little') + bytes.fromhex(payload))
    data += ad_structure(0x09, args.name.encode())
    return data


def gatt_services(path):
    with open(path) as file:
        description = json.load(file)
    services = []
    for service in description['services']:
        characteristics = []
        for item in service['characteristics']:
            properties = Characteristic.Properties(0)
            for name in item['properties']:
                properties |= Characteristic.Properties[name.upper()]
            permissions = item.get('permissions', 'READABLE,WRITEABLE')
            characteristic = Characteristic(item['uuid'], properties, permissions, bytes.fromhex(item.get('value', '')))
            characteristic.counter = (item['counter'], item.get('size', 4)) if 'counter' in item else None
            characteristics.append(characteristic)
        # "includes": indexes of services listed before this one (Include declarations, Core Vol 3 Part G §3.2).
        included = [services[index] for index in service.get('includes', [])]
        services.append(Service(service['uuid'], characteristics, included_services=included))
    return services


def attribute_table(device):
    return [{'handle': a.handle, 'type': a.type.to_bytes().hex(),
             'value': bytes(a.value).hex() if isinstance(a.value, (bytes, bytearray)) else None}
            for a in device.gatt_server.attributes]


async def send_counter(device, connection, characteristic, indicate):
    count, size = characteristic.counter
    for sequence in range(count):
        value = sequence.to_bytes(4, 'little') + bytes(max(0, size - 4))
        if indicate:
            await device.indicate_subscriber(connection, characteristic, value)
        else:
            await device.notify_subscriber(connection, characteristic, value)
    emit('EVENT', {'counter_done': characteristic.handle, 'count': count})


def on_subscription(device, connection, characteristic, notify, indicate):
    emit('EVENT', {'subscribed': characteristic.handle, 'notify': bool(notify), 'indicate': bool(indicate)})
    if getattr(characteristic, 'counter', None) and (notify or indicate):
        asyncio.ensure_future(send_counter(device, connection, characteristic, bool(indicate)))


def disconnect_on(device, spec, silent=False):
    """Wraps the GATT server so that the chosen request is answered by dropping the link (or, with
    silent, not at all)."""
    opcode_text, _, nth_text = spec.partition(':')
    opcode, nth = int(opcode_text, 16), int(nth_text or 1)
    seen = 0
    answer = device.gatt_server.on_gatt_pdu

    def on_gatt_pdu(bearer, pdu):
        nonlocal seen
        if pdu.op_code == opcode:
            seen += 1
            if seen == nth and silent:
                emit('EVENT', {'silent_on': opcode, 'occurrence': nth})
                return
            if seen == nth:
                emit('EVENT', {'disconnecting_on': opcode, 'occurrence': nth})
                asyncio.ensure_future(bearer.disconnect(hci.HCI_REMOTE_USER_TERMINATED_CONNECTION_ERROR))
                return
        answer(bearer, pdu)
    device.gatt_server.on_gatt_pdu = on_gatt_pdu


async def open_host_transport(spec):
    """Opens one controller-side transport; returns it and its spelling for Bluewire."""
    scheme, _, rest = spec.partition(':')
    if scheme == 'tcp-server':
        host, _, port = rest.rpartition(':')
        listener = socket.socket(socket.AF_INET6 if ':' in host else socket.AF_INET)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # Inherited by the accepted socket: without it Nagle holds each small ATT response back
        # until the host's delayed ACK (~40 ms per request/response round trip).
        listener.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            listener.bind((host, int(port)))
        except OSError as error:
            # One line, not a traceback: the usual cause is another controller.sh on that port.
            what = 'is in use (another controller.sh or bumble_link.py?)' if error.errno == errno.EADDRINUSE else f'cannot be used: {error.strerror}'
            raise SystemExit(f'bumble_link: port {port} on {host} {what}')
        spelling = f'tcp:{host}:{listener.getsockname()[1]}'
        transport = await open_single_host_tcp_server(listener, spelling)
        return transport, spelling
    if scheme == 'unix-server':
        return await open_transport(spec), f'unix:{rest}'
    if scheme == 'pty':
        return await open_transport(spec), f'serial:{rest}'
    raise SystemExit(f'bumble_link: unsupported transport {spec}')


async def open_single_host_tcp_server(listener, spelling):
    """bumble's TCP server transport, for one host at a time.

    bumble's own accepts every connection and mixes their bytes into one controller, so two hosts on
    one port corrupt each other's HCI streams with no error. Here a second connection while a host
    is connected is closed at once (the host reads end of stream before any packet: its bring-up
    fails, naming the closed transport) and said on stderr; once the first host leaves, the next
    one is served.
    """
    def peer_has_left(transport):
        """Whether the connected host has closed its end although its end of stream is not read yet:
        a host that reconnects at once must not be refused by its own previous connection."""
        sock = transport.get_extra_info('socket')
        if sock is None:
            return True
        probe = socket.fromfd(sock.fileno(), sock.family, sock.type)
        try:
            return probe.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b''
        except (BlockingIOError, InterruptedError):
            return False
        except OSError:
            return True
        finally:
            probe.close()

    class SingleHostSink:
        def __init__(self):
            self.transport = None

        def on_packet(self, packet):
            if self.transport:
                self.transport.write(packet)

    class SingleHostProtocol(asyncio.Protocol):
        def __init__(self, source, sink):
            self.source, self.sink, self.refused, self.transport = source, sink, False, None

        def connection_made(self, transport):
            if self.sink.transport is not None and not peer_has_left(self.sink.transport):
                self.refused = True
                print(f'bumble_link: {spelling}: refused a second host (another one is connected)', file=sys.stderr, flush=True)
                # End of stream now, then read (and drop) what the host sends until it hangs up:
                # closing with its Reset unread would make TCP reset the connection, and the host
                # would see "connection reset" instead of the end of stream, depending on timing.
                transport.write_eof()
                asyncio.get_running_loop().call_later(10, transport.close)
                return
            if self.sink.transport is not None:
                self.sink.transport.close()   # the previous host left; its end of stream is still unread
            # A host that left mid-packet leaves nothing behind for the next one.
            self.source.parser.reset()
            self.transport = transport
            self.sink.transport = transport

        def connection_lost(self, error):
            # Only this connection's own host: a newer one may have taken the controller already.
            if not self.refused and self.sink.transport is self.transport:
                self.sink.transport = None

        def data_received(self, data):
            if not self.refused and self.sink.transport is self.transport:
                self.source.data_received(data)

    class SingleHostTransport(Transport):
        def __init__(self, source, sink, server):
            self.server = server
            super().__init__(source, sink)

        async def close(self):
            self.server.close()
            await super().close()

    source, sink = StreamPacketSource(), SingleHostSink()
    server = await asyncio.get_running_loop().create_server(lambda: SingleHostProtocol(source, sink), sock=listener)
    return SingleHostTransport(source, sink, server)


# The peripheral Device's pairing delegate (with --pairing), for the passkey command.
PERIPHERAL = {}


async def run_peripheral(device, args):
    if args.gatt:
        for service in gatt_services(args.gatt):
            device.add_service(service)
            for characteristic in service.characteristics:
                characteristic.on('write', lambda _, value, h=characteristic.handle: emit('EVENT', {'write': h, 'value': bytes(value).hex()}))
        device.on('characteristic_subscription', lambda *event: on_subscription(device, *event))
    if args.disconnect_on:
        disconnect_on(device, args.disconnect_on)
    if args.silent_on:
        disconnect_on(device, args.silent_on, silent=True)
    device.on('connection', lambda c: emit('EVENT', {'connected': str(c.peer_address), 'handle': c.handle}))
    device.on('connection', lambda c: c.on('connection_parameters_update', lambda: report_parameters(c)))
    if args.pairing:
        report = lambda payload: emit('EVENT', payload)
        PERIPHERAL['delegate'] = configure_pairing(device, args.pairing, report)
        device.on('connection', lambda c: watch_security(c, report))
    data = advertising_data(args)
    if args.advertising == 'extended':
        properties = AdvertisingEventProperties(is_connectable=True, is_legacy=False)
        await device.create_advertising_set(
            advertising_parameters=AdvertisingParameters(
                advertising_event_properties=properties,
                primary_advertising_interval_min=args.interval, primary_advertising_interval_max=args.interval),
            random_address=device.random_address, advertising_data=data, auto_restart=True)
    else:
        if len(data) > 31:
            raise SystemExit(f'bumble_link: {len(data)} bytes of advertising data do not fit legacy advertising (31)')
        async def advertise():
            await device.start_advertising(advertising_data=data, auto_restart=True, own_address_type=hci.OwnAddressType.RANDOM,
                                           advertising_interval_min=args.interval, advertising_interval_max=args.interval)
        PERIPHERAL['advertise'] = advertise
        await advertise()
    if args.privacy:
        emit('EVENT', {'rpa': device.random_address.to_string(False)})


def report_parameters(connection):
    """EVENT {"parameters_updated": HANDLE, "interval", "latency", "timeout"} in HCI units (1.25 ms, connection
    events, 10 ms) once the peripheral's host got LE Connection Update Complete (Core Vol 4 Part E §7.7.65.3)."""
    parameters = connection.parameters
    emit('EVENT', {'parameters_updated': connection.handle, 'interval': round(parameters.connection_interval / 1.25),
                   'latency': parameters.peripheral_latency, 'timeout': round(parameters.supervision_timeout / 10)})


async def rotate_private_address(device):
    """A new resolvable private address from the Device's IRK (advertising stopped while it changes, as
    Core Vol 4 Part E §7.8.4 requires); EVENT {"rpa": ADDRESS}. bumble's own periodic update skips any
    Device that is advertising, and sends the old address."""
    await device.stop_advertising()
    address = hci.Address.generate_private_address(device.irk)
    await device.send_sync_command(hci.HCI_LE_Set_Random_Address_Command(random_address=address))
    device.random_address = address
    await PERIPHERAL['advertise']()
    emit('EVENT', {'rpa': address.to_string(False)})


class Central:
    """One bumble central Device and its connection, driven by run_central and stdin commands."""

    def __init__(self, index, device, address):
        self.index, self.device, self.address = index, device, address
        self.connection, self.peer, self.raw = None, None, False
        self.delegate = None
        # The advertisement listener of a running "scan".
        self.scanner = None

    def emit(self, payload):
        emit('EVENT', {'central': self.index, **payload})

    async def connect(self, discover=True, mtu=None, address=None, timeout=None):
        target = address or self.address
        try:
            self.connection = await self.device.connect(hci.Address(target, hci.Address.RANDOM_DEVICE_ADDRESS),
                                                        own_address_type=hci.OwnAddressType.RANDOM, timeout=timeout)
        except core.TimeoutError:
            self.emit({'connect_timeout': target})
            return
        await self.connected(discover, mtu, target)

    async def connect_identity(self, identity, timeout, attempts):
        """Connects by identity address the way bumble's host does it (Core Vol 3 Part C §10.8.2.3): with the
        IRK bonding stored, Device.connect scans until an advertiser's resolvable private address resolves
        to the identity (find_peer_by_identity_address), then connects to that private address. The
        advertiser may replace its address between the scan and the connection (bumble resolves in the host,
        not in the controller's resolving list), so each attempt waits `timeout` seconds and scans again."""
        await self.device.refresh_resolving_list()
        target = hci.Address(identity, hci.Address.RANDOM_DEVICE_ADDRESS)
        if self.device.address_resolver is None or not self.device.address_resolver.can_resolve_to(target):
            self.emit({'error': f'no IRK for {identity}'})
            return
        for attempt in range(1, attempts + 1):
            try:
                self.connection = await self.device.connect(target, own_address_type=hci.OwnAddressType.RANDOM,
                                                            timeout=timeout)
            except core.TimeoutError:
                self.emit({'connect_timeout': identity, 'attempt': attempt})
                continue
            resolvable = self.connection.peer_resolvable_address
            await self.connected(False, None, self.connection.peer_address.to_string(False),
                                 rpa=resolvable.to_string(False) if resolvable else None, attempt=attempt)
            return

    async def connected(self, discover, mtu, address, **extra):
        self.connection.on('disconnection', lambda reason: self.emit({'disconnected': int(reason)}))
        self.emit({'connected': address, 'handle': self.connection.handle, **extra})
        if self.delegate:
            watch_security(self.connection, self.emit, pair_on_request=True)
        self.peer = Peer(self.connection)
        if mtu:
            self.emit({'mtu': await self.peer.request_mtu(mtu)})
        if discover:
            await self.discover()

    async def scan(self, name):
        """Active scanning: one EVENT {"advertisement": ADDRESS, "name": NAME, "identity": ADDRESS|null} per
        advertiser address (with `name`, only advertisers of that complete local name); "identity" is what
        the Device's resolver (the IRKs in its key store) resolves a resolvable private address to."""
        seen = set()

        def on_advertisement(advertisement):
            address = advertisement.address
            key = address.to_string(False)
            local_name = advertisement.data.get(AdvertisingData.COMPLETE_LOCAL_NAME)
            if (name is not None and local_name != name) or key in seen:
                return
            seen.add(key)
            resolved = None
            if address.is_resolvable and self.device.address_resolver is not None:
                resolved = self.device.address_resolver.resolve(address)
            self.emit({'advertisement': key, 'name': local_name,
                       'resolvable': bool(address.is_resolvable),
                       'identity': resolved.to_string(False) if resolved else None})
        self.scanner = on_advertisement
        self.device.on('advertisement', on_advertisement)
        await self.device.start_scanning()

    async def stop_scan(self):
        if self.scanner is not None:
            self.device.remove_listener('advertisement', self.scanner)
            self.scanner = None
        await self.device.stop_scanning()
        self.emit({'scanning': False})

    async def discover(self):
        peer = self.peer
        await peer.discover_services()
        for service in peer.services:
            await service.discover_characteristics()
            for characteristic in service.characteristics:
                entry = {'service': str(service.uuid), 'characteristic': str(characteristic.uuid),
                         'handle': characteristic.handle, 'properties': int(characteristic.properties)}
                if characteristic.properties & Characteristic.Properties.READ:
                    entry['value'] = (await characteristic.read_value()).hex()
                self.emit(entry)
                if characteristic.properties & (Characteristic.Properties.NOTIFY | Characteristic.Properties.INDICATE):
                    handle = characteristic.handle
                    # bumble subscribes to notifications when offered, indications otherwise.
                    kind = 'notify' if characteristic.properties & Characteristic.Properties.NOTIFY else 'indicate'
                    await characteristic.subscribe(
                        lambda value, h=handle, k=kind: self.emit({'notification': h, 'kind': k, 'value': bytes(value).hex()}))
        self.emit({'discovered': True})

    async def command(self, request):
        op = request['op']
        if op == 'connect':
            await self.connect(request.get('discover', True), request.get('mtu'), request.get('address'),
                               request.get('timeout'))
        elif op == 'connect_identity':
            await self.connect_identity(request['address'], request.get('timeout', 2), request.get('attempts', 5))
        elif op == 'scan':
            await self.scan(request.get('name'))
        elif op == 'stop_scan':
            await self.stop_scan()
        elif op == 'read':
            handle = request['handle']
            try:
                self.emit({'read': handle, 'value': bytes(await self.peer.gatt_client.read_value(handle)).hex()})
            except att.ATT_Error as error:
                self.emit({'read': handle, 'error': int(error.error_code)})
        elif op == 'write':
            handle = request['handle']
            try:
                await self.peer.gatt_client.write_value(handle, bytes.fromhex(request['value']),
                                                        with_response=request.get('response', True))
                self.emit({'written': handle})
            except att.ATT_Error as error:
                self.emit({'written': handle, 'error': int(error.error_code)})
        elif op == 'att':
            if not self.raw:
                # From now on this central's ATT PDUs bypass bumble's GATT client: a hostile client
                # answers nothing by itself (no Handle Value Confirmation unless sent raw).
                self.raw = True
                manager = self.device.l2cap_channel_manager
                deliver = manager.fixed_channels[att.ATT_CID]

                def tap(handle, pdu):
                    if self.connection and handle == self.connection.handle:
                        self.emit({'att': bytes(pdu).hex()})
                    else:
                        deliver(handle, pdu)
                manager.register_fixed_channel(att.ATT_CID, tap)
            for pdu in request['pdus']:
                self.device.send_l2cap_pdu(self.connection.handle, att.ATT_CID, bytes.fromhex(pdu))
        elif op == 'disconnect':
            await self.connection.disconnect()
        elif op == 'pair':
            await self.connection.pair()
        elif op == 'encrypt':
            await self.connection.encrypt()
        elif op == 'passkey':
            self.delegate.enter(int(request['value']))
        else:
            self.emit({'error': f'unknown op {op}'})


def run_task(central, coroutine):
    task = asyncio.create_task(coroutine)
    task.add_done_callback(lambda t: t.cancelled() or not t.exception() or central.emit({'error': repr(t.exception())}))
    return task


def read_commands(centrals, stop):
    """Standard input: JSON command lines for the centrals; end of input stops the script."""
    pending = bytearray()

    def on_readable():
        data = sys.stdin.buffer.read1(4096)
        if not data:
            stop.done() or stop.set_result(None)
            return
        pending.extend(data)
        while b'\n' in pending:
            line, _, rest = bytes(pending).partition(b'\n')
            pending[:] = rest
            if not line.strip():
                continue
            request = json.loads(line)
            if not centrals:
                # The peripheral's user typing a passkey: the one command a peripheral takes.
                if request.get('op') == 'passkey' and PERIPHERAL.get('delegate'):
                    PERIPHERAL['delegate'].enter(int(request['value']))
                elif request.get('op') == 'rotate' and PERIPHERAL.get('device'):
                    asyncio.create_task(rotate_private_address(PERIPHERAL['device']))
                continue
            central = centrals[request.get('central', 0)]
            run_task(central, central.command(request))
    return on_readable


async def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('transports', nargs='+', help='tcp-server:HOST:PORT | unix-server:PATH | pty:PATH')
    parser.add_argument('--legacy-reports', action='store_true',
                        help='host-facing controllers report LE Advertising Report (0x02) instead of 0x0D')
    role = parser.add_mutually_exclusive_group()
    role.add_argument('--peripheral', action='store_true', help='add an advertising bumble Device')
    role.add_argument('--central', metavar='ADDRESS', help='add a bumble Device that connects to ADDRESS (random)')
    parser.add_argument('--centrals', type=int, default=1, metavar='N', help='with --central: N central Devices')
    parser.add_argument('--manual', action='store_true', help='with --central: central 0 waits for a connect command')
    parser.add_argument('--name', default='Bumble')
    parser.add_argument('--uuid16', action='append', default=[], metavar='HEX')
    parser.add_argument('--uuid128', action='append', default=[], metavar='UUID')
    parser.add_argument('--manufacturer', metavar='COMPANY:HEX', help='manufacturer data, e.g. FFFF:0102')
    parser.add_argument('--advertising', choices=['legacy', 'extended'], default='legacy')
    parser.add_argument('--interval', type=float, default=1000, metavar='MS',
                        help='advertising interval in ms (bumble emits one advertising event per interval)')
    parser.add_argument('--gatt', metavar='FILE.json', help='GATT services for the peripheral')
    parser.add_argument('--privacy', action='store_true',
                        help='the peripheral advertises with a resolvable private address (EVENT {"rpa": ADDRESS}); '
                             'stdin {"op": "rotate"} makes a new one')
    parser.add_argument('--irk', metavar='HEX',
                        help='the IRK --privacy makes its addresses with (16 octets, least significant first)')
    parser.add_argument('--acl-buffer', type=int, metavar='OCTETS',
                        help='host-facing controllers report LE ACL buffers of this length (default 27 x 64)')
    parser.add_argument('--pairing', metavar='IO:SC:MITM',
                        help='the Device pairs (bumble_pairing.py): IO capability 0-4, SC 0|1, MITM 0|1')
    parser.add_argument('--disconnect-on', metavar='OPCODE[:N]',
                        help='peripheral: drop the link instead of answering the N-th ATT PDU with this opcode (hex)')
    parser.add_argument('--silent-on', metavar='OPCODE[:N]',
                        help='peripheral: leave the N-th ATT PDU with this opcode (hex) unanswered')
    args = parser.parse_args()

    loop = asyncio.get_running_loop()
    stop = loop.create_future()
    # A parent that spawned us from a thread with signals blocked (Swift's Foundation.Process does)
    # would otherwise leave SIGTERM blocked here.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, lambda: stop.done() or stop.set_result(None))
    centrals = []
    try:
        loop.add_reader(sys.stdin.fileno(), read_commands(centrals, stop))
    except (PermissionError, ValueError):
        pass  # stdin is a file or /dev/null: only signals stop us

    conform_create_connection_cancel()
    link = LocalLink()
    transports, controllers = [], []
    for index, spec in enumerate(args.transports):
        transport, spelling = await open_host_transport(spec)
        controller = Controller(f'C{index}', host_source=transport.source, host_sink=transport.sink, link=link,
                                public_address=random_static_address().to_string(False))
        controller.random_address = random_static_address()
        if args.legacy_reports:
            # The controller picks 0x0D or 0x02 reports from its own LE feature bits.
            controller.le_features &= ~hci.LeFeatureMask.LE_EXTENDED_ADVERTISING
        if args.acl_buffer:
            # What LE Read Buffer Size reports: longer buffers let a host send a 251-octet PDU whole.
            controller.le_acl_data_packet_length = args.acl_buffer
        transports.append(transport)
        controllers.append({'transport': spelling, 'address': controller.random_address.to_string(False)})

    ready = {'controllers': controllers}
    for index in range(max(1, args.centrals) if args.central else 1 if args.peripheral else 0):
        controller = Controller('device' if index == 0 else f'device{index}', link=link)
        if args.peripheral and args.advertising == 'legacy':
            # Makes bumble's host use the legacy advertising commands and ADV_IND PDUs.
            controller.le_features &= ~hci.LeFeatureMask.LE_EXTENDED_ADVERTISING
        address = random_static_address()
        device = Device(name=args.name, address=address, host=Host(controller, AsyncPipeSink(controller)))
        if args.privacy:
            # Advertise with a resolvable private address from the Device's IRK; its identity (the static
            # address above) and IRK are what pairing distributes.
            device.le_privacy_enabled = True
            device.le_rpa_timeout = 0
            if args.irk:
                device.irk = bytes.fromhex(args.irk)
        if args.peripheral:
            PERIPHERAL['device'] = device
        await device.power_on()
        if args.peripheral:
            await run_peripheral(device, args)
        else:
            centrals.append(Central(index, device, args.central))
            if args.pairing:
                centrals[-1].delegate = configure_pairing(device, args.pairing, centrals[-1].emit)
        if index == 0:
            ready['device'] = {'role': 'peripheral' if args.peripheral else 'central', 'address': address.to_string(False)}
        else:
            ready.setdefault('centrals', [ready['device']['address']]).append(address.to_string(False))
    emit('READY', ready)
    if args.peripheral and args.gatt:
        emit('EVENT', {'database': attribute_table(device)})
    if args.central and not args.manual:
        run_task(centrals[0], centrals[0].connect())

    await stop
    for transport in transports:
        await transport.close()


if __name__ == '__main__':
    asyncio.run(main())
