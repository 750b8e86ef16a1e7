import BluewireCore
import Glibc
import Testing

@testable import BluewireTransport

/// The controller the kernel VM test gives us (`BLUEWIRE_KERNEL_HCI=hci0`, set by
/// scripts/vm/run-kernel-test.sh inside the guest). These machines' own kernel has no Bluetooth,
/// so elsewhere the suite is skipped.
private let kernelController: TransportSpec? = {
    guard let value = getenv("BLUEWIRE_KERNEL_HCI") else { return nil }
    return try? TransportSpec(parsing: String(cString: value))
}()

/// Bluewire's HCI user channel against the real Linux kernel socket and BlueZ's btvirt controller.
@Suite("HCI user channel on a kernel controller", .serialized, .enabled(if: kernelController != nil))
struct KernelUserChannelTests {
    let spec = kernelController ?? .hciUserChannel(device: 0)

    @Test func resetOverTheUserChannelGetsCommandComplete() async throws {
        let transport = try await spec.open()
        try await transport.send(hciReset)
        #expect(await nextInbound(transport, within: .seconds(10)) == .packet(HCIPacket(type: .event, payload: resetComplete)))
        // A second command proves the channel keeps working: Read Local Version Information.
        try await transport.send(HCIPacket(type: .command, payload: [0x01, 0x10, 0x00]))
        guard case .packet(let version) = await nextInbound(transport, within: .seconds(10)) else {
            Issue.record("no answer to Read Local Version Information")
            return
        }
        #expect(Array(version.payload.prefix(6)) == [0x0E, 0x0C, 0x01, 0x01, 0x10, 0x00])
        await transport.close()
    }

    @Test func secondUserChannelOnTheSameDeviceIsBusy() async throws {
        let first = try await spec.open()
        let error = await #expect(throws: TransportError.self) { _ = try await spec.open() }
        #expect(error == .deviceBusy(spec.description))
        await first.close()
    }

    @Test func closeReleasesTheDeviceForTheNextOpen() async throws {
        for _ in 0..<3 {
            let transport = try await spec.open()
            try await transport.send(hciReset)
            #expect(await nextInbound(transport, within: .seconds(10)) == .packet(HCIPacket(type: .event, payload: resetComplete)))
            await transport.close()
        }
    }

    @Test func missingControllerIsNoSuchDevice() async {
        await #expect(throws: TransportError.noSuchDevice("hci9")) { _ = try await TransportSpec.hciUserChannel(device: 9).open() }
    }
}
