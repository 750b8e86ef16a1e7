#!/usr/bin/env python3
"""A bumble peer for credit based L2CAP channels (LE CoC, ECFC) and EATT, on one LocalLink.

The positional arguments are controller transports as in bumble_link.py (Bluewire's host connects
to each). One more bumble Device runs on the same link:
    --peripheral --psm P      advertise (--name) and listen on SPSM P (--mtu, --mps, --credits);
                              every SDU received is echoed back on its channel
      --sink                  count instead of echoing: {"received": SDUS, "octets": TOTAL} after
                              every SDU, no {"sdu"} events
      --record PATH           keep instead of echoing: every SDU appended to PATH as a 4-octet
                              little-endian length and its octets; {"recorded": SDUS, "octets": TOTAL}
                              after every SDU, no {"sdu"} events (either role)
      --eatt                  also serve GATT on EATT bearers (SPSM 0x0027, bumble's register_eatt):
                              service FFF0 with FFF1 (read: cafe) and FFF2 (read, write: 100 octets
                              0..99); writes are reported as {"write": HANDLE, "value": HEX}
      --secure                the SPSM refuses a link that is not encrypted with Insufficient
                              Authentication (0x0005, Core Vol 3 Part A §4.23): {"refusing": RESULT}
    --central ADDRESS         a central that waits for commands on standard input
    --pairing IO:SC:MITM      the Device pairs as in bumble_link.py (bumble_pairing.py, its EVENT lines);
                              the central then also takes {"op": "pair"} and {"op": "encrypt"}
    --acl-length N            every controller's LE ACL data packet length (default bumble's 27;
                              251 as with LE Data Length Extension, for bulk transfers)
    --acl-buffers N           the host-facing controllers report N LE ACL buffers (default bumble's 64)
    --completion-delay MS     the host-facing controllers hold each Number Of Completed Packets event
                              MS milliseconds before the host sees it (btvirt under TCG: one 192-octet
                              buffer whose completions come late; bumble's come at once)

Central commands (one JSON object per line):
    {"op": "connect"}                                   -> {"connected": ADDRESS}
    {"op": "open", "psm": P, "mtu": M, "mps": S, "credits": C}      LE CoC
    {"op": "open_enhanced", "psm": P, "count": N, ...}               ECFC (same parameters)
        -> {"channel_open": INDEX, "cid": CID, "peer_mtu": M, "peer_mps": S, "peer_credits": C} per channel
           (a refused LE CoC: {"refused": RESULT, "result": NAME})
    {"op": "send", "channel": INDEX, "data": HEX}       write one SDU on a channel
    {"op": "close", "channel": INDEX}                   -> {"closed": INDEX}
    {"op": "stream", "channel": INDEX, "seed": S, "octets": N, "mtu": M}
        write the SDUs of mixed_sdus(S, N, M), each once the last went out (bumble would join queued
        writes into one SDU), both roles                  -> {"streamed": SDUS, "octets": N}
    {"op": "eatt", "count": N}                          open N EATT bearers to the peer's GATT server
        -> {"eatt": N, "mtu": [..]}
    {"op": "eatt_read", "bearer": I, "handles": [H, ...]}   read each handle, all at once
        -> {"eatt_read": H, "bearer": I, "value": HEX} (or "error": CODE) per handle
Both roles report {"sdu": HEX, "channel": INDEX} for each SDU received and {"closed": INDEX} when a
channel closes. Channel indexes count the channels as they open (either side's), from 0.
"""

import argparse
import asyncio
import json
import signal
import sys

from bumble import att, gatt_client, hci, l2cap
from bumble.controller import Controller
from bumble.device import Device
from bumble.gatt import Characteristic, Service
from bumble.host import Host
from bumble.link import LocalLink
from bumble.transport.common import AsyncPipeSink

from bumble_link import emit, open_host_transport, random_static_address
from bumble_pairing import configure_pairing, watch_security


def mixed_sdus(seed, octets, mtu):
    """SDUs of mixed sizes totalling `octets`: 1 octet, then `mtu`, then 1..mtu from an LCG
    (state = state * 1664525 + 1013904223 mod 2**32, size = 1 + (state >> 8) % mtu), the last cut to
    fit; SDU k holds the octets (13k + i) mod 256. Tests/BluewireHostTests mirrors it."""
    pattern = bytes(range(256)) * (mtu // 256 + 2)
    state, index, total = seed & 0xFFFFFFFF, 0, 0
    while total < octets:
        if index == 0:
            size = 1
        elif index == 1:
            size = mtu
        else:
            state = (state * 1664525 + 1013904223) & 0xFFFFFFFF
            size = 1 + (state >> 8) % mtu
        size = min(size, octets - total)
        offset = (index * 13) % 256
        yield pattern[offset:offset + size]
        total += size
        index += 1


class Peer:
    def __init__(self, device, args):
        self.device, self.args = device, args
        self.channels, self.connection, self.eatt = [], None, []
        self.received, self.octets = 0, 0

    def event(self, payload):
        emit('EVENT', payload)

    def spec(self, request):
        return l2cap.LeCreditBasedChannelSpec(
            psm=request.get('psm', self.args.psm), mtu=request.get('mtu', self.args.mtu),
            mps=request.get('mps', self.args.mps), max_credits=request.get('credits', self.args.credits))

    def adopt(self, channel, echo):
        index = len(self.channels)
        self.channels.append(channel)

        def on_sdu(sdu):
            if self.args.record:
                self.received += 1
                self.octets += len(sdu)
                with open(self.args.record, 'ab') as record:
                    record.write(len(sdu).to_bytes(4, 'little') + bytes(sdu))
                self.event({'recorded': self.received, 'octets': self.octets})
                return
            if self.args.sink:
                self.received += 1
                self.octets += len(sdu)
                self.event({'received': self.received, 'octets': self.octets})
                return
            self.event({'sdu': bytes(sdu).hex(), 'channel': index})
            if echo:
                channel.write(bytes(sdu))
        channel.sink = on_sdu
        channel.on('close', lambda: self.event({'closed': index}))
        self.event({'channel_open': index, 'cid': channel.source_cid, 'peer_mtu': channel.peer_mtu,
                    'peer_mps': channel.peer_mps, 'peer_credits': channel.credits})

    async def command(self, request):
        op = request['op']
        if op == 'connect':
            self.connection = await self.device.connect(
                hci.Address(self.args.central, hci.Address.RANDOM_DEVICE_ADDRESS), own_address_type=hci.OwnAddressType.RANDOM)
            self.connection.on('disconnection', lambda reason: self.event({'disconnected': int(reason)}))
            self.event({'connected': self.args.central})
        elif op == 'open':
            try:
                channel = await self.connection.create_l2cap_channel(spec=self.spec(request))
            except l2cap.L2capError as error:
                # The peer's refusal, with the result code and bumble's name for it.
                self.event({'refused': int(error.error_code), 'result': str(error.error_name)})
                return
            self.adopt(channel, echo=False)
        elif op == 'open_enhanced':
            channels = await self.device.l2cap_channel_manager.create_enhanced_credit_based_channels(
                self.connection, self.spec(request), request['count'])
            for channel in channels:
                self.adopt(channel, echo=False)
        elif op == 'send':
            self.channels[request['channel']].write(bytes.fromhex(request['data']))
        elif op == 'stream':
            channel, count = self.channels[request['channel']], 0
            for sdu in mixed_sdus(request['seed'], request['octets'], request['mtu']):
                # bumble joins what waits in its queue into SDUs of up to the peer's MTU: one at a time.
                channel.write(sdu)
                await channel.drain()
                count += 1
            self.event({'streamed': count, 'octets': request['octets']})
        elif op == 'pair':
            await self.connection.pair()
        elif op == 'encrypt':
            await self.connection.encrypt()
        elif op == 'close':
            await self.channels[request['channel']].disconnect()
        elif op == 'eatt':
            clients = await gatt_client.Client.connect_eatt(self.connection, count=request['count'])
            self.eatt = clients if isinstance(clients, list) else [clients]
            for client in self.eatt:
                # bumble leaves an EATT client at 23; the bearer's ATT_MTU is the smaller channel MTU.
                channel = client.bearer
                client.mtu = min(channel.mtu, channel.peer_mtu)
            self.event({'eatt': len(self.eatt), 'mtu': [client.mtu for client in self.eatt]})
        elif op == 'eatt_read':
            client = self.eatt[request['bearer']]

            async def read(handle):
                try:
                    value = await client.read_value(handle)
                    self.event({'eatt_read': handle, 'bearer': request['bearer'], 'value': bytes(value).hex()})
                except att.ATT_Error as error:
                    self.event({'eatt_read': handle, 'bearer': request['bearer'], 'error': int(error.error_code)})
            await asyncio.gather(*(read(handle) for handle in request['handles']))
        else:
            self.event({'error': f'unknown op {op}'})


def refuse_unencrypted(device, psm):
    """bumble's LE CoC servers take any link: this one refuses an unencrypted link on `psm` with
    Insufficient Authentication (0x0005, Core Vol 3 Part A §4.23), as a server whose SPSM requires
    security does."""
    manager = device.l2cap_channel_manager
    original = manager.on_l2cap_le_credit_based_connection_request
    result = l2cap.L2CAP_LE_Credit_Based_Connection_Response.Result.CONNECTION_REFUSED_INSUFFICIENT_AUTHENTICATION

    def on_request(connection, cid, request):
        if request.le_psm == psm and not connection.is_encrypted:
            emit('EVENT', {'refusing': int(result)})
            manager.send_control_frame(connection, cid, l2cap.L2CAP_LE_Credit_Based_Connection_Response(
                identifier=request.identifier, destination_cid=0, mtu=l2cap.L2CAP_LE_CREDIT_BASED_CONNECTION_DEFAULT_MTU,
                mps=l2cap.L2CAP_LE_CREDIT_BASED_CONNECTION_DEFAULT_MPS, initial_credits=0, result=result))
            return
        original(connection, cid, request)
    manager.on_l2cap_le_credit_based_connection_request = on_request


def delay_completions(controller, milliseconds):
    """Makes the host wait `milliseconds` for each Number Of Completed Packets event, as a slow
    controller's host does: a host that sends ACL data only as buffers come back then holds its
    K-frames queued for a while (what the kernel VM's btvirt shows, and bumble's instant completions hide)."""
    send = controller.send_hci_packet

    def delayed(packet):
        if isinstance(packet, hci.HCI_Number_Of_Completed_Packets_Event):
            asyncio.get_running_loop().call_later(milliseconds / 1000, send, packet)
        else:
            send(packet)
    controller.send_hci_packet = delayed


def read_commands(peer, stop):
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
            if line.strip():
                task = asyncio.create_task(peer.command(json.loads(line)))
                task.add_done_callback(
                    lambda t: t.cancelled() or not t.exception() or peer.event({'error': repr(t.exception())}))
    return on_readable


async def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('transports', nargs='+')
    role = parser.add_mutually_exclusive_group(required=True)
    role.add_argument('--peripheral', action='store_true')
    role.add_argument('--central', metavar='ADDRESS')
    parser.add_argument('--name', default='bumble-coc')
    parser.add_argument('--psm', type=lambda v: int(v, 0), default=0x80)
    parser.add_argument('--mtu', type=int, default=512)
    parser.add_argument('--mps', type=int, default=100)
    parser.add_argument('--credits', type=int, default=8)
    parser.add_argument('--eatt', action='store_true')
    parser.add_argument('--sink', action='store_true')
    parser.add_argument('--record', metavar='PATH')
    parser.add_argument('--acl-length', type=int)
    parser.add_argument('--acl-buffers', type=int)
    parser.add_argument('--completion-delay', type=float, metavar='MS')
    parser.add_argument('--secure', action='store_true')
    parser.add_argument('--pairing', metavar='IO:SC:MITM')
    args = parser.parse_args()

    loop = asyncio.get_running_loop()
    stop = loop.create_future()
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, lambda: stop.done() or stop.set_result(None))

    link = LocalLink()
    transports, controllers = [], []
    for index, spec in enumerate(args.transports):
        transport, spelling = await open_host_transport(spec)
        controller = Controller(f'C{index}', host_source=transport.source, host_sink=transport.sink, link=link,
                                public_address=random_static_address().to_string(False))
        controller.random_address = random_static_address()
        if args.acl_length:
            controller.le_acl_data_packet_length = args.acl_length
        if args.acl_buffers:
            controller.total_num_le_acl_data_packets = args.acl_buffers
        if args.completion_delay:
            delay_completions(controller, args.completion_delay)
        transports.append(transport)
        controllers.append({'transport': spelling, 'address': controller.random_address.to_string(False)})

    controller = Controller('device', link=link)
    controller.le_features &= ~hci.LeFeatureMask.LE_EXTENDED_ADVERTISING
    if args.acl_length:
        controller.le_acl_data_packet_length = args.acl_length
    address = random_static_address()
    device = Device(name=args.name, address=address, host=Host(controller, AsyncPipeSink(controller)))
    await device.power_on()
    peer = Peer(device, args)
    if args.pairing:
        report = lambda payload: emit('EVENT', payload)
        configure_pairing(device, args.pairing, report)
        device.on('connection', lambda connection: watch_security(connection, report))
    if args.secure:
        refuse_unencrypted(device, args.psm)
    try:
        loop.add_reader(sys.stdin.fileno(), read_commands(peer, stop))
    except (PermissionError, ValueError):
        pass
    if args.peripheral and args.eatt:
        properties = Characteristic.Properties
        short = Characteristic('FFF1', properties.READ, 'READABLE', bytes.fromhex('cafe'))
        long = Characteristic('FFF2', properties.READ | properties.WRITE, 'READABLE,WRITEABLE', bytes(range(100)))
        device.add_service(Service('FFF0', [short, long]))
        long.on('write', lambda _, value: emit('EVENT', {'write': long.handle, 'value': bytes(value).hex()}))
        device.gatt_server.register_eatt(l2cap.LeCreditBasedChannelSpec(psm=att.EATT_PSM, mtu=200, mps=100, max_credits=8))
    if args.peripheral:
        device.create_l2cap_server(spec=peer.spec({}), handler=lambda channel: peer.adopt(channel, echo=True))
        await device.start_advertising(auto_restart=True, own_address_type=hci.OwnAddressType.RANDOM,
                                       advertising_interval_min=50, advertising_interval_max=50)
    emit('READY', {'controllers': controllers,
                   'device': {'role': 'peripheral' if args.peripheral else 'central', 'address': address.to_string(False)}})
    await stop
    for transport in transports:
        await transport.close()


if __name__ == '__main__':
    asyncio.run(main())
