#!/usr/bin/env python3
"""bumble's SMP session (bumble.smp.Session) driven over stdin/stdout, for pairing tests of BluewireSMP.

Only the SMP session is bumble's own code; the connection and device around it are minimal stand-ins
(no controller: the test plays the link, comparing the key the central encrypts with to the key bumble
would give in its LTK Request Reply, and then reporting the Encryption Change).

Usage: bumble_smp_session.py IO_CAPABILITY SC(0|1) MITM(0|1) [initiator]
  IO_CAPABILITY: 0 DisplayOnly, 1 DisplayYesNo, 2 KeyboardOnly, 3 NoInputNoOutput, 4 KeyboardDisplay
  With 'initiator' bumble is the central and starts pairing on the command 'start'.
Commands (one a line):   start | pdu HEX | ltk EDIV RANDHEX | encrypted | passkey N
  | oob (prints 'oob C R': bumble's LE SC OOB data, little-endian hex) | peeroob C R (the other side's)
Output lines: pdu HEX | ltk HEX|none | encrypt LTKHEX EDIV RANDHEX (bumble as central starts encryption)
  | display N | compare N | paired LTKHEX|- IRKHEX|- CSRKHEX|- | failed CODE
Every command's output ends with a line 'end'.
"""
import asyncio
import sys

from bumble import smp, utils
from bumble.core import PhysicalTransport
from bumble.hci import Address, Role
from bumble.pairing import PairingConfig, PairingDelegate

out = sys.stdout


def emit(line: str) -> None:
    out.write(line + "\n")
    out.flush()


class Connection(utils.EventEmitter):
    EVENT_DISCONNECTION = "disconnection"
    EVENT_CONNECTION_ENCRYPTION_CHANGE = "connection_encryption_change"
    EVENT_CONNECTION_ENCRYPTION_KEY_REFRESH = "connection_encryption_key_refresh"
    EVENT_SECURITY_REQUEST = "security_request"

    def __init__(self, central: bool) -> None:
        super().__init__()
        self.handle = 0x0040
        self.role = Role.CENTRAL if central else Role.PERIPHERAL
        self.transport = PhysicalTransport.LE
        # Must match the addresses the Swift side uses: the central is public, the peripheral random.
        central_address = Address("66:55:44:33:22:11", Address.PUBLIC_DEVICE_ADDRESS)
        peripheral_address = Address("C6:A5:A4:A3:A2:A1", Address.RANDOM_DEVICE_ADDRESS)
        self.self_address = central_address if central else peripheral_address
        self.peer_address = peripheral_address if central else central_address
        self.self_resolvable_address = None
        self.peer_resolvable_address = None
        self.is_encrypted = False

    def send_l2cap_pdu(self, cid: int, pdu: bytes) -> None:
        emit("pdu " + pdu.hex())

    def cancel_on_disconnection(self, awaitable):
        return asyncio.ensure_future(awaitable)

    async def drain(self) -> None:
        pass


class Host:
    """Stands in for the HCI host: bumble as central asks it for LE Enable Encryption."""

    async def send_async_command(self, command) -> None:
        emit(f"encrypt {command.long_term_key.hex()} {command.encrypted_diversifier} {command.random_number.hex()}")


class Device:
    def __init__(self, connection: Connection) -> None:
        self.public_address = Address.ANY
        self.static_address = connection.self_address
        self.irk = bytes(range(16))
        self.keystore = None
        self.host = Host()


class Manager(smp.Manager):
    def on_session_start(self, session) -> None:
        pass

    async def on_pairing(self, session, identity_address, keys) -> None:
        def h(v):
            return v.value.hex() if v is not None else "-"
        emit(f"paired {h(keys.ltk)} {h(keys.irk)} {h(keys.csrk)}")

    def on_pairing_failure(self, session, reason) -> None:
        emit(f"failed {int(reason)}")


class Delegate(PairingDelegate):
    def __init__(self, io: int) -> None:
        super().__init__(io_capability=io)
        self.passkey = asyncio.get_event_loop().create_future()

    async def compare_numbers(self, number: int, digits: int) -> bool:
        emit(f"compare {number}")
        return True

    async def get_number(self):
        return await self.passkey

    async def display_number(self, number: int, digits: int) -> None:
        emit(f"display {number}")


async def settle() -> None:
    for _ in range(50):
        await asyncio.sleep(0)


async def main() -> None:
    io, sc, mitm = int(sys.argv[1]), sys.argv[2] == "1", sys.argv[3] == "1"
    central = len(sys.argv) > 4 and sys.argv[4] == "initiator"
    delegate = Delegate(io)
    config = PairingConfig(sc=sc, mitm=mitm, bonding=True, delegate=delegate)
    connection = Connection(central)
    manager = Manager(Device(connection), lambda connection: config)
    reader = asyncio.StreamReader()
    await asyncio.get_event_loop().connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while line := (await reader.readline()).decode().strip():
        words = line.split()
        if words[0] == "start":
            asyncio.ensure_future(manager.pair(connection))
        elif words[0] == "pdu":
            manager.on_smp_pdu(connection, bytes.fromhex(words[1]))
        elif words[0] == "ltk":
            session = manager.sessions.get(connection.handle)
            key = session.get_long_term_key(bytes.fromhex(words[2]), int(words[1])) if session else None
            emit("ltk " + (key.hex() if key else "none"))
        elif words[0] == "encrypted":
            connection.is_encrypted = True
            connection.emit(Connection.EVENT_CONNECTION_ENCRYPTION_CHANGE)
        elif words[0] == "oob":
            context = smp.OobContext()
            config.oob = PairingConfig.OobConfig(our_context=context, peer_data=config.oob and config.oob.peer_data, legacy_context=None)
            shared = context.share()
            emit(f"oob {shared.c.hex()} {shared.r.hex()}")
        elif words[0] == "peeroob":
            peer = smp.OobSharedData(c=bytes.fromhex(words[1]), r=bytes.fromhex(words[2]))
            if config.oob is None:
                config.oob = PairingConfig.OobConfig(our_context=smp.OobContext(), peer_data=peer, legacy_context=None)
            else:
                config.oob.peer_data = peer
        elif words[0] == "passkey":
            delegate.passkey.set_result(int(words[1]))
        await settle()
        emit("end")


asyncio.run(main())
