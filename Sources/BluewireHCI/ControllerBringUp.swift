import BluewireCore

/// Controller initialisation as a sans-I/O state machine: it says which command to send next and
/// consumes each command's result (from `CommandFlow`), one command at a time.
///
/// Order: Reset; Read Local Version Information; Read Local Supported Commands; Read Local
/// Supported Features; Read BD_ADDR; LE Read Local Supported Features; LE Read Buffer Size [v2] when
/// the Supported_Commands bitmap lists it, else [v1], then Read Buffer Size if the LE ACL length is 0
/// (Core Vol 4 Part E §7.8.2: LE then shares the BR/EDR buffers); with extended advertising, LE Read
/// Maximum Advertising Data Length and LE Read Number of Supported Advertising Sets; Set Event Mask;
/// LE Set Event Mask; LE Set Random Address with the caller's random static address.
/// Optional reads that fail (BD_ADDR, v2 buffer size, advertising limits) fall back; any other
/// failure ends bring-up with an error naming the step.
public struct ControllerBringUp: Sendable {
    /// What the caller should do next.
    public enum Step: Hashable, Sendable {
        case send(HCICommand)
        case finished(ControllerInfo)
        case failed(BringUpError)
    }

    /// The Set Event Mask used: Disconnection Complete, Encryption Change, Read Remote Version
    /// Information Complete, Command Complete/Status, Hardware Error, Number Of Completed Packets,
    /// Data Buffer Overflow, Encryption Key Refresh Complete and LE Meta (the LE-only set BlueZ uses).
    public static let eventMask = EventMask.events([0x05, 0x08, 0x0C, 0x0E, 0x0F, 0x10, 0x13, 0x1A, 0x30, 0x3E])
    /// The LE Set Event Mask used: every LE subevent this module decodes except the v2 Enhanced
    /// Connection Complete (v1 is enough and older controllers reject unknown bits).
    public static let leEventMask = EventMask.events([0x01, 0x02, 0x03, 0x04, 0x05, 0x07, 0x0A, 0x0B, 0x0C, 0x0D, 0x12, 0x14])
    /// `leEventMask` with LE Read Local P-256 Public Key Complete and LE Generate DHKey Complete (0x08,
    /// 0x09): the answers of the controller's crypto, for a host whose Security Manager uses it (masked,
    /// they would never arrive).
    public static let leEventMaskWithCrypto = EventMask(rawValue: leEventMask.rawValue | EventMask.events([0x08, 0x09]).rawValue)

    /// The LE Set Event Mask this bring-up sends.
    public var leEventMaskSent = Self.leEventMask

    public let randomAddress: BluetoothAddress
    /// The command whose result `handle(_:)` expects next; nil before `start()` and after the end.
    public private(set) var current: HCICommand?

    var version: LocalVersionInformation?
    var commands = LocalSupportedCommands()
    var lmpFeatures: UInt64 = 0
    var publicAddress: BluetoothAddress?
    var leFeatures: LEFeatures = []
    var buffers: LEBufferSize?
    var sharedBuffers: BufferSize?
    var maxAdvertisingDataLength: UInt16 = 31
    var numberOfAdvertisingSets: UInt8 = 1

    /// `randomAddress` should be a random static address (`BluetoothAddress.randomStatic(_:)`):
    /// peers such as bumble route traffic by it.
    public init(randomAddress: BluetoothAddress) {
        self.randomAddress = BluetoothAddress(value: randomAddress.value, type: .random)
    }

    /// The first step: Reset.
    public mutating func start() -> Step { send(.reset) }

    private mutating func send(_ command: HCICommand) -> Step {
        current = command
        return .send(command)
    }

    private mutating func fail(_ error: CommandError) -> Step {
        let opcode = current?.opcode ?? error.opcode
        current = nil
        return .failed(BringUpError(opcode: opcode, error: error))
    }

    /// Consumes the result of the command last returned in `.send`.
    public mutating func handle(_ result: Result<CommandResponse, CommandError>) -> Step {
        guard let command = current else {
            return .failed(BringUpError(opcode: HCIOpcode(rawValue: 0), error: .cancelled(HCIOpcode(rawValue: 0))))
        }
        let opcode = command.opcode
        let response: CommandResponse
        switch result {
        case .success(let r): response = r
        case .failure(let error):
            switch command {
            case .readBDADDR: return send(.leReadLocalSupportedFeatures)
            case .leReadBufferSizeV2: return send(.leReadBufferSize)
            case .leReadMaximumAdvertisingDataLength: return afterMaxAdvertisingDataLength()
            case .leReadNumberOfSupportedAdvertisingSets: return send(.setEventMask(Self.eventMask))
            default: return fail(error)
            }
        }
        do throws(CommandError) {
            switch command {
            case .reset:
                return send(.readLocalVersionInformation)
            case .readLocalVersionInformation:
                version = try response.returnParameters(LocalVersionInformation.self, opcode: opcode)
                return send(.readLocalSupportedCommands)
            case .readLocalSupportedCommands:
                commands = try response.returnParameters(LocalSupportedCommands.self, opcode: opcode)
                return send(.readLocalSupportedFeatures)
            case .readLocalSupportedFeatures:
                lmpFeatures = try response.returnParameters(LocalSupportedFeatures.self, opcode: opcode).lmpFeatures
                return send(.readBDADDR)
            case .readBDADDR:
                let address = try? response.returnParameters(ReadBDADDRReturn.self, opcode: opcode).address
                publicAddress = address?.value == 0 ? nil : address
                return send(.leReadLocalSupportedFeatures)
            case .leReadLocalSupportedFeatures:
                leFeatures = try response.returnParameters(LELocalSupportedFeatures.self, opcode: opcode).leFeatures
                return send(commands.supports(.leReadBufferSizeV2) == true ? .leReadBufferSizeV2 : .leReadBufferSize)
            case .leReadBufferSizeV2, .leReadBufferSize:
                let sizes = try response.returnParameters(LEBufferSize.self, opcode: opcode)
                buffers = sizes
                if sizes.leACLDataPacketLength == 0 || sizes.totalNumLEACLDataPackets == 0 { return send(.readBufferSize) }
                return afterBufferSizes()
            case .readBufferSize:
                sharedBuffers = try response.returnParameters(BufferSize.self, opcode: opcode)
                return afterBufferSizes()
            case .leReadMaximumAdvertisingDataLength:
                maxAdvertisingDataLength = try response.returnParameters(LEMaximumAdvertisingDataLength.self, opcode: opcode).maxAdvertisingDataLength
                return afterMaxAdvertisingDataLength()
            case .leReadNumberOfSupportedAdvertisingSets:
                numberOfAdvertisingSets = try response.returnParameters(LENumberOfSupportedAdvertisingSets.self, opcode: opcode).numSupportedAdvertisingSets
                return send(.setEventMask(Self.eventMask))
            case .setEventMask:
                return send(.leSetEventMask(leEventMaskSent))
            case .leSetEventMask:
                return send(.leSetRandomAddress(LESetRandomAddress(randomAddress: randomAddress)))
            case .leSetRandomAddress:
                return finish()
            default:
                return fail(.cancelled(opcode))
            }
        } catch {
            return fail(error)
        }
    }

    private var extendedAdvertising: Bool {
        leFeatures.contains(.leExtendedAdvertising) && commands.supports(.leSetExtendedAdvertisingParameters) == true
    }

    private mutating func afterBufferSizes() -> Step {
        if extendedAdvertising && commands.supports(.leReadMaximumAdvertisingDataLength) == true {
            return send(.leReadMaximumAdvertisingDataLength)
        }
        return afterMaxAdvertisingDataLength()
    }

    private mutating func afterMaxAdvertisingDataLength() -> Step {
        if extendedAdvertising && commands.supports(.leReadNumberOfSupportedAdvertisingSets) == true {
            return send(.leReadNumberOfSupportedAdvertisingSets)
        }
        return send(.setEventMask(Self.eventMask))
    }

    private mutating func finish() -> Step {
        current = nil
        guard let version, let buffers else {
            return .failed(BringUpError(opcode: .reset, error: .cancelled(.reset)))
        }
        var length = buffers.leACLDataPacketLength
        var count = UInt16(buffers.totalNumLEACLDataPackets)
        if let shared = sharedBuffers, length == 0 || count == 0 {
            length = shared.aclDataPacketLength
            count = shared.totalNumACLDataPackets
        }
        guard length > 0 && count > 0 else {
            // A controller with no ACL buffers cannot carry any LE data.
            let zero = DecodeError(.invalidValue(0), layer: "hci", field: "ACL_Data_Packet_Length", offset: 6)
            return .failed(BringUpError(opcode: .readBufferSize, error: .malformedResponse(.readBufferSize, zero)))
        }
        return .finished(ControllerInfo(
            version: version, lmpFeatures: lmpFeatures, supportedCommands: commands, leFeatures: leFeatures,
            leACLDataPacketLength: length, totalNumLEACLDataPackets: count,
            isoDataPacketLength: buffers.isoDataPacketLength, totalNumISODataPackets: buffers.totalNumISODataPackets,
            publicAddress: publicAddress, randomAddress: randomAddress,
            maxAdvertisingDataLength: maxAdvertisingDataLength, numberOfAdvertisingSets: numberOfAdvertisingSets))
    }
}

/// Bring-up stopped: which command failed and how.
public struct BringUpError: Error, Hashable, Sendable, CustomStringConvertible {
    public var opcode: HCIOpcode
    public var error: CommandError

    public init(opcode: HCIOpcode, error: CommandError) {
        self.opcode = opcode
        self.error = error
    }

    public var description: String { "controller bring-up failed at \(opcode): \(error)" }
}
