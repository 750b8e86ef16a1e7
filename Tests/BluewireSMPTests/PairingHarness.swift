import BluewireCore
import BluewireCrypto
import BluewireSMP

/// Runs an initiator and a responder `PairingSession` against each other in-process: PDUs go across as
/// bytes, `startEncryption` is answered the way a controller would (the peripheral's LTK request, and an
/// Encryption Change on both sides only when both used the same key), and user prompts are answered
/// from a policy once the PDU queue is empty.
struct PairingHarness {
    enum Side: Hashable { case central, peripheral }

    var central: PairingSession<SwiftCryptoSMP>
    var peripheral: PairingSession<SwiftCryptoSMP>
    var now = MonotonicInstant.zero
    var queue: [(from: Side, action: SMPAction)] = []
    var displayedPasskey: UInt32?
    var comparisons: [Side: UInt32] = [:]
    var passkeyRequests: [Side] = []
    var comparisonRequests: [Side] = []
    var results: [Side: PairingResult] = [:]
    var failures: [Side: PairingFailure] = [:]
    var encryptionKeys: [Side: [UInt8]] = [:]
    var sent: [(from: Side, opcode: SMPOpcode)] = []
    /// Keypress Notifications each side passed on (`SMPAction.keypress`).
    var keypresses: [(side: Side, type: KeypressNotificationType)] = []
    /// Policy: the passkey both sides type when neither displays (KeyboardOnly on both).
    var sharedPasskey: UInt32 = 123_456
    /// Policy: this side types a wrong passkey.
    var wrongPasskey: Side?
    /// Policy: this side answers "no" to Numeric Comparison.
    var rejectComparison: Side?
    /// Drop PDUs with this opcode (a peer that stops answering).
    var drop: SMPOpcode?

    static let centralAddress = SMPAddress(isRandom: false, octets: [0x11, 0x22, 0x33, 0x44, 0x55, 0x66])
    static let peripheralAddress = SMPAddress(isRandom: true, octets: [0xA1, 0xA2, 0xA3, 0xA4, 0xA5, 0xC6])

    init(central: PairingConfiguration, peripheral: PairingConfiguration) {
        self.central = PairingSession(
            role: .initiator, configuration: central, crypto: SwiftCryptoSMP(),
            initiatorAddress: Self.centralAddress, responderAddress: Self.peripheralAddress)
        self.peripheral = PairingSession(
            role: .responder, configuration: peripheral, crypto: SwiftCryptoSMP(),
            initiatorAddress: Self.centralAddress, responderAddress: Self.peripheralAddress)
    }

    mutating func enqueue(_ actions: [SMPAction], from side: Side) {
        queue += actions.map { (side, $0) }
    }

    /// Starts the pairing and runs until nothing is left to do.
    mutating func run() {
        enqueue(central.start(now: now), from: .central)
        drain()
    }

    mutating func drain() {
        while true {
            while !queue.isEmpty {
                let (side, action) = queue.removeFirst()
                handle(action, from: side)
            }
            if let side = passkeyRequests.first {
                passkeyRequests.removeFirst()
                var value = displayedPasskey ?? sharedPasskey
                if wrongPasskey == side { value = (value + 1) % 1_000_000 }
                let actions = side == .central
                    ? central.passkeyEntered(value, now: now) : peripheral.passkeyEntered(value, now: now)
                enqueue(actions, from: side)
                continue
            }
            if let side = comparisonRequests.first {
                comparisonRequests.removeFirst()
                let accepted = rejectComparison != side
                let actions = side == .central
                    ? central.numericComparison(accepted: accepted, now: now)
                    : peripheral.numericComparison(accepted: accepted, now: now)
                enqueue(actions, from: side)
                continue
            }
            return
        }
    }

    mutating func handle(_ action: SMPAction, from side: Side) {
        switch action {
        case .send(let pdu):
            sent.append((side, pdu.opcode))
            if pdu.opcode == drop { return }
            now = now + .milliseconds(7)
            let bytes = pdu.encoded()
            let answer = side == .central ? peripheral.receive(bytes, now: now) : central.receive(bytes, now: now)
            enqueue(answer, from: side == .central ? .peripheral : .central)
        case .startEncryption(let ltk, let ediv, let rand):
            encryptionKeys[.central] = ltk
            let reply = peripheral.longTermKeyRequested(ediv: ediv, rand: rand, now: now)
            guard case .longTermKeyReply(let key) = reply.first else { return }
            encryptionKeys[.peripheral] = key
            guard key == ltk else { return }  // the controllers' MIC check would fail: no Encryption Change
            enqueue(peripheral.encryptionChanged(enabled: true, now: now), from: .peripheral)
            enqueue(central.encryptionChanged(enabled: true, now: now), from: .central)
        case .longTermKeyReply, .longTermKeyNegativeReply, .securityRequested:
            break
        case .displayPasskey(let value):
            displayedPasskey = value
        case .requestPasskey:
            passkeyRequests.append(side)
        case .keypress(let type):
            keypresses.append((side, type))
        case .confirmNumericComparison(let value):
            comparisons[side] = value
            comparisonRequests.append(side)
        case .paired(let result):
            results[side] = result
        case .failed(let failure):
            failures[side] = failure
        }
    }
}

extension PairingConfiguration {
    /// A configuration with an IRK, identity address and CSRK to distribute.
    static func test(
        _ io: IOCapability, sc: Bool = true, mitm: Bool = false, scOnly: Bool = false,
        maximumKeySize: UInt8 = 16, minimumKeySize: UInt8 = 7, seed: UInt8
    ) -> PairingConfiguration {
        PairingConfiguration(
            ioCapability: io, bonding: true, mitmRequired: mitm, secureConnections: sc, secureConnectionsOnly: scOnly,
            maximumKeySize: maximumKeySize, minimumKeySize: minimumKeySize,
            identityResolvingKey: [UInt8](repeating: seed, count: 16),
            identityAddress: SMPAddress(isRandom: false, octets: [seed, 2, 3, 4, 5, 6]),
            signatureKey: [UInt8](repeating: seed &+ 1, count: 16))
    }
}
