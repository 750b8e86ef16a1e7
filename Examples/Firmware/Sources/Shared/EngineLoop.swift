import BluewireCore
import BluewireHostEngine

/// What an image does with the engine's outputs and the passing time.
protocol FirmwareApplication {
    /// Called once the engine exists: ask for bring-up and anything else to start with.
    mutating func start(_ engine: inout HostEngine)
    /// A request finished or something happened (HCI packets are already written to the UART).
    mutating func handle(_ output: HostEngineOutput, _ engine: inout HostEngine)
    /// Called on every loop turn, for periodic work.
    mutating func tick(_ engine: inout HostEngine)
}

/// The firmware main loop: H4 octets from UART0 into the engine, the engine's packets back out,
/// completions and events to the application, and WFI when there is nothing to do.
func runEngine<Application: FirmwareApplication>(
    _ application: inout Application, address: BluetoothAddress, prepare: (inout HostEngine) -> Void = { _ in }
) -> Never {
    var engine = HostEngine(configuration: HostEngineConfiguration(randomAddress: address))
    prepare(&engine)
    var reader = H4Reader()
    application.start(&engine)
    drain(&engine, &application)
    while true {
        var busy = false
        var octets = 0
        // Bounded so that timers and the application still run under a flood of controller traffic.
        while octets < 512, let octet = Board.readHCIOctet() {
            octets += 1
            busy = true
            if let packet = reader.append(octet) {
                engine.receive(packet, now: Board.now)
                drain(&engine, &application)
            }
        }
        engine.advanceTime(to: Board.now)
        application.tick(&engine)
        drain(&engine, &application)
        if !busy { Board.waitForInterrupt() }
    }
}

private func drain<Application: FirmwareApplication>(_ engine: inout HostEngine, _ application: inout Application) {
    while let output = engine.nextOutput() {
        if case .send(let packet) = output {
            Board.writeHCI(packet)
        } else {
            application.handle(output, &engine)
        }
    }
}

/// Request numbers, one after the other.
struct RequestNumbers {
    private var next: UInt32 = 1
    mutating func take() -> HostRequestID {
        defer { next += 1 }
        return HostRequestID(next)
    }
}
