import BluewireATT
import BluewireGATT

extension ATTRequestPerformer {
    /// Runs a sans-I/O GATT client procedure to completion: sends each request it emits and feeds the
    /// answer back. Composite operations call this on their context for each step.
    /// - Throws: `.procedure` when the procedure fails (an Error Response, an unexpected answer),
    ///   and the request's own failure as `GATTError(_:)` maps it (`.disconnected`, `.bearer`...).
    public nonisolated(nonsending) func perform<Procedure: GATTClientProcedure>(_ procedure: Procedure) async throws(GATTError) -> Procedure.Output {
        var procedure = procedure
        var step: GATTProcedureStep<Procedure.Output>
        do throws(GATTClientError) {
            step = try procedure.start()
        } catch {
            throw .procedure(error)
        }
        while true {
            switch step {
            case .finished(let output):
                return output
            case .request(let pdu):
                let answer: ATTPDU
                do throws(ConnectionError) {
                    answer = try await request(pdu)
                } catch {
                    throw GATTError(error)
                }
                do throws(GATTClientError) {
                    step = try procedure.receive(answer)
                } catch {
                    throw .procedure(error)
                }
            }
        }
    }
}

/// A GATT operation that runs one client procedure, built for the bearer's current ATT_MTU.
public struct ProcedureOperation<Procedure: GATTClientProcedure & Sendable>: GATTOperation
where Procedure.Output: Sendable {
    public typealias Result = Procedure.Output

    public let requirements: OperationRequirements
    let makeProcedure: @Sendable (_ mtu: Int) -> Procedure

    /// - Parameters:
    ///   - requirements: what queue decorators must satisfy before the operation runs
    ///     (`.authorization`: a link secure enough for the attributes it touches).
    ///   - makeProcedure: builds the procedure for the ATT_MTU in force when it runs (long
    ///     reads and writes split values by it).
    public init(requirements: OperationRequirements = [], _ makeProcedure: @escaping @Sendable (_ mtu: Int) -> Procedure) {
        self.requirements = requirements
        self.makeProcedure = makeProcedure
    }

    public nonisolated(nonsending) func execute(on context: any ATTRequestPerformer) async throws(GATTError) -> Procedure.Output {
        try await context.perform(makeProcedure(await context.mtu))
    }
}

/// Write Without Response as an operation: a Write Command, which completes when it has been handed
/// to the bearer (the server never answers it, Core Vol 3 Part F §3.4.5.3).
public struct WriteWithoutResponseOperation: GATTOperation {
    public let handle: UInt16
    public let value: [UInt8]
    public let requirements: OperationRequirements

    public init(handle: UInt16, value: [UInt8], requirements: OperationRequirements = []) {
        self.handle = handle
        self.value = value
        self.requirements = requirements
    }

    public nonisolated(nonsending) func execute(on context: any ATTRequestPerformer) async throws(GATTError) {
        let command: ATTPDU
        do throws(GATTClientError) {
            command = try WriteWithoutResponse.command(handle: handle, value: value, mtu: await context.mtu)
        } catch {
            throw .procedure(error)
        }
        do throws(ConnectionError) {
            try await context.send(command)
        } catch {
            throw GATTError(error)
        }
    }
}
