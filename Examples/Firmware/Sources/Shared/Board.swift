import BluewireCore

/// The board as the firmware sees it: the millisecond clock, the HCI UART and the log UART
/// (Examples/Firmware/Startup/startup.c).
enum Board {
    /// Time since reset; starts at one second so that no deadline is ever at or before zero.
    static var now: MonotonicInstant {
        MonotonicInstant(microseconds: 1_000_000 + Int64(board_millis()) * 1000)
    }

    static var milliseconds: UInt32 { board_millis() }

    /// Sleeps until the next interrupt: a UART0 octet or the SysTick (at most a millisecond).
    static func waitForInterrupt() { board_wait_for_interrupt() }

    static func writeHCI(_ packet: HCIPacket) {
        var type = packet.type.rawValue
        board_hci_write(&type, 1)
        packet.payload.withUnsafeBufferPointer { board_hci_write($0.baseAddress, $0.count) }
    }

    static func readHCIOctet() -> UInt8? {
        let octet = board_hci_read()
        return octet < 0 ? nil : UInt8(truncatingIfNeeded: octet)
    }

    static func writeLog(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { board_log_write($0.baseAddress, $0.count) }
    }

    static var heapPeak: Int { Int(board_heap_peak()) }
    static var heapInUse: Int { Int(board_heap_in_use()) }
    static var heapAllocations: Int { Int(board_heap_allocations()) }
    static var stackHighWater: Int { Int(board_stack_high_water()) }
}
