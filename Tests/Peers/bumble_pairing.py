"""Pairing for bumble_link.py's Devices (--pairing IO:SC:MITM[:TK]): bumble's Security Manager with a delegate
that reports to the test instead of asking a user.

IO is the SMP IO capability value (Core Vol 3 Part H §3.5.1 table 3.4): 0 DisplayOnly, 1 DisplayYesNo,
2 KeyboardOnly, 3 NoInputNoOutput, 4 KeyboardDisplay. Bonding is always asked for; keys go to the Device's
in-memory key store, so a later connection can be encrypted with them. TK, 32 hex digits in bumble's
order (least significant octet first), is a legacy OOB temporary key (§2.3.5.4): with SC 0 bumble sets
the OOB data flag and uses it.

A last part pN (p123456) makes the Device display passkey N instead of a random one.

EVENT lines: {"passkey": N} (shown), {"passkey_wanted": true} (answer with {"op": "passkey", "value": N}),
{"compare": N} (accepted at once), {"paired": {"ltk": HEX|null, "ltk_central": ..., "ltk_peripheral": ...,
"irk": ...}}, {"pairing_failed": REASON}, {"encryption": 0|1, "key_size": N}, {"encryption_failed": CODE}.
"""

import asyncio

from bumble.pairing import PairingConfig, PairingDelegate
from bumble.smp import OobLegacyContext

IO_CAPABILITIES = [
    PairingDelegate.DISPLAY_OUTPUT_ONLY,
    PairingDelegate.DISPLAY_OUTPUT_AND_YES_NO_INPUT,
    PairingDelegate.KEYBOARD_INPUT_ONLY,
    PairingDelegate.NO_OUTPUT_NO_INPUT,
    PairingDelegate.DISPLAY_OUTPUT_AND_KEYBOARD_INPUT,
]


class ReportingDelegate(PairingDelegate):
    def __init__(self, io_capability, emit, fixed_passkey=None):
        super().__init__(io_capability=io_capability)
        self.emit = emit
        self.passkey = None
        self.fixed_passkey = fixed_passkey

    async def generate_passkey(self):
        if self.fixed_passkey is not None:
            return self.fixed_passkey
        return await super().generate_passkey()

    async def accept(self):
        return True

    async def confirm(self, auto=False):
        return True

    async def compare_numbers(self, number, digits):
        self.emit({'compare': number})
        return True

    async def get_number(self):
        self.passkey = asyncio.get_running_loop().create_future()
        self.emit({'passkey_wanted': True})
        return await self.passkey

    async def display_number(self, number, digits):
        self.emit({'passkey': number})

    def enter(self, value):
        if self.passkey is not None and not self.passkey.done():
            self.passkey.set_result(value)


def conform_long_term_key_lookup(device):
    """bumble 0.0.236 picks a stored legacy LTK by the connection's role, so as peripheral it answers the
    LTK Request with the key the central distributed and the link fails with MIC Failure (google/bumble
    pull request #890). Core Vol 3 Part H §2.4.2: the peripheral answers with the LTK it distributed,
    found by the EDIV and Rand the central sends. bumble distributes its legacy LTK with EDIV 0 and Rand 0,
    so the match is exact, zeros included; a running pairing's key (STK, SC LTK) still comes first."""
    original = device.get_long_term_key

    async def get_long_term_key(connection_handle, rand, ediv):
        connection = device.lookup_connection(connection_handle)
        if connection is not None and device.keystore is not None \
                and device.smp_manager.get_long_term_key(connection, rand, ediv) is None:
            keys = await device.keystore.get(str(connection.peer_address))
            if keys is not None and keys.ltk is None:
                for key in (keys.ltk_central, keys.ltk_peripheral):
                    if key is not None and key.ediv == ediv and key.rand == rand:
                        return key.value
        return await original(connection_handle, rand, ediv)
    device.host.long_term_key_provider = get_long_term_key


def configure_pairing(device, spec, emit):
    """Sets the Device's pairing configuration from IO:SC:MITM[:TK][:pPASSKEY]; returns the delegate.
    pPASSKEY (e.g. p123456): the passkey this Device displays, instead of a random one."""
    conform_long_term_key_lookup(device)
    parts = spec.split(':')
    io, sc, mitm = (int(part) for part in parts[:3])
    fixed_passkey = None
    if parts[-1].startswith('p'):
        fixed_passkey = int(parts.pop()[1:])
    oob = None
    if len(parts) > 3:
        oob = PairingConfig.OobConfig(
            our_context=None, peer_data=None, legacy_context=OobLegacyContext(tk=bytes.fromhex(parts[3])))
    delegate = ReportingDelegate(IO_CAPABILITIES[io], emit, fixed_passkey)
    device.pairing_config_factory = lambda _connection: PairingConfig(
        sc=bool(sc), mitm=bool(mitm), bonding=True, delegate=delegate, oob=oob)
    return delegate


def hex_key(key):
    return key.value.hex() if key is not None else None


def watch_security(connection, emit, pair_on_request=False):
    """Reports the connection's pairing and encryption outcomes as EVENT lines. A central with
    pair_on_request answers a Security Request (Core Vol 3 Part H §3.6.7), which bumble leaves to the
    application, by pairing: EVENT {"security_request": AUTHREQ}."""
    if pair_on_request:
        def on_security_request(auth_req):
            emit({'security_request': int(auth_req)})
            asyncio.ensure_future(connection.pair())
        connection.on('security_request', on_security_request)
    connection.on('pairing', lambda keys: emit({'paired': {
        'ltk': hex_key(keys.ltk), 'ltk_central': hex_key(keys.ltk_central),
        'ltk_peripheral': hex_key(keys.ltk_peripheral), 'irk': hex_key(keys.irk)}}))
    connection.on('pairing_failure', lambda reason: emit({'pairing_failed': int(reason)}))
    connection.on('connection_encryption_change', lambda: emit(
        {'encryption': int(connection.encryption), 'key_size': int(connection.encryption_key_size)}))
    connection.on('connection_encryption_failure', lambda error: emit({'encryption_failed': str(error)}))
