"""Controller crypto for bumble's controller: LE Encrypt, LE Read Local P-256 Public Key, LE Generate DHKey.

bumble 0.0.236 lists LE Encrypt in its Supported Commands but never answers it, answers LE Read Local P-256
Public Key with nothing, and has no LE Generate DHKey. A host that does its Security Manager crypto in the
controller (as Zephyr's does, and Bluewire's firmware images) needs all three, so a test link installs them
here with the `cryptography` package bumble itself depends on:

- LE Encrypt (Core Vol 4 Part E §7.8.22): AES-128 of one block, answered with Command Complete (Status,
  Encrypted_Data). Key, plaintext and result are least significant octet first on HCI.
- LE Read Local P-256 Public Key (§7.8.36): Command Status, then LE Read Local P-256 Public Key Complete
  (LE Meta subevent 0x08: Status, X and Y, each 32 octets least significant first). The private key stays
  in the controller.
- LE Generate DHKey (§7.8.37): Command Status, then LE Generate DHKey Complete (subevent 0x09: Status,
  DHKey 32 octets least significant first). A remote key not on the curve ends with Invalid HCI Command
  Parameters (0x12) and an all-0xFF DHKey, as the spec's error handling for an invalid key says.

`install()` patches the Controller class (every controller of the process) and adds the three to its
Supported Commands.
"""

from bumble import hci
from bumble.controller import Controller
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

LE_ENCRYPT = 0x2017
LE_READ_LOCAL_P256_PUBLIC_KEY = 0x2025
LE_GENERATE_DHKEY = 0x2026
INVALID_PARAMETERS = 0x12


def _meta_event(subevent, parameters):
    body = bytes([subevent]) + parameters
    return hci.HCI_Packet.from_bytes(bytes([hci.HCI_EVENT_PACKET, hci.HCI_LE_META_EVENT, len(body)]) + body)


def _after_status(controller, opcode, event):
    """Command Status now, the completion event after it (both go through the loop in order)."""
    controller._send_hci_command_status(hci.HCI_SUCCESS, opcode)
    controller.send_hci_packet(event)


def on_le_encrypt(self, command):
    parameters = bytes(command.parameters)
    if len(parameters) != 32:
        return hci.HCI_StatusReturnParameters(INVALID_PARAMETERS)  # never reached on a well-formed packet
    key, plaintext = parameters[:16][::-1], parameters[16:32][::-1]
    encryptor = Cipher(algorithms.AES(key), modes.ECB()).encryptor()
    encrypted = (encryptor.update(plaintext) + encryptor.finalize())[::-1]
    complete = bytes([1]) + LE_ENCRYPT.to_bytes(2, 'little') + bytes([hci.HCI_SUCCESS]) + encrypted
    self.send_hci_packet(hci.HCI_Packet.from_bytes(
        bytes([hci.HCI_EVENT_PACKET, hci.HCI_COMMAND_COMPLETE_EVENT, len(complete)]) + complete))


def on_le_read_local_p256_public_key(self, _command):
    self.p256_private_key = ec.generate_private_key(ec.SECP256R1())
    numbers = self.p256_private_key.public_key().public_numbers()
    key = numbers.x.to_bytes(32, 'little') + numbers.y.to_bytes(32, 'little')
    _after_status(self, LE_READ_LOCAL_P256_PUBLIC_KEY, _meta_event(0x08, bytes([hci.HCI_SUCCESS]) + key))


def on_le_generate_dhkey(self, command):
    parameters = bytes(command.parameters)
    private = getattr(self, 'p256_private_key', None)
    try:
        if private is None or len(parameters) != 64:
            raise ValueError('no local key pair, or a malformed remote key')
        x = int.from_bytes(parameters[:32], 'little')
        y = int.from_bytes(parameters[32:64], 'little')
        # Raises ValueError for a point not on P-256 (the invalid-curve check, CVE-2018-5383).
        peer = ec.EllipticCurvePublicNumbers(x, y, ec.SECP256R1()).public_key()
        shared = private.exchange(ec.ECDH(), peer)
        result = bytes([hci.HCI_SUCCESS]) + shared[::-1]
    except ValueError:
        result = bytes([INVALID_PARAMETERS]) + bytes([0xFF]) * 32
    _after_status(self, LE_GENERATE_DHKEY, _meta_event(0x09, result))


def install():
    Controller.on_hci_le_encrypt_command = on_le_encrypt
    Controller.on_hci_le_read_local_p_256_public_key_command = on_le_read_local_p256_public_key
    Controller.on_hci_le_generate_dhkey_command = on_le_generate_dhkey
    Controller.supported_commands = set(Controller.supported_commands) | {
        LE_ENCRYPT, LE_READ_LOCAL_P256_PUBLIC_KEY, LE_GENERATE_DHKEY}
