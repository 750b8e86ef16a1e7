import Foundation
import Testing

/// What `scripts/setup-test-env.sh` leaves on the machine. bluez-test-tools pulls in bluez, whose
/// bluetooth.service (bluetoothd) would start at boot and take a real adapter from Bluewire's HCI
/// user channel: the script masks it.
@Suite("test environment")
struct TestEnvironmentTests {
    @Test("bluez's bluetooth.service, when installed, is masked")
    func bluetoothServiceIsMasked() throws {
        let units = ["/lib/systemd/system/bluetooth.service", "/usr/lib/systemd/system/bluetooth.service"]
        guard units.contains(where: { FileManager.default.fileExists(atPath: $0) }) else { return }
        let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/etc/systemd/system/bluetooth.service")
        #expect(target == "/dev/null", "bluetooth.service is installed but not masked: run scripts/setup-test-env.sh")
    }
}
