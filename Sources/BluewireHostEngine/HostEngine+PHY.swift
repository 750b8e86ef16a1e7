import BluewireCore
import BluewireHCI

extension HostEngine {
    /// `.readPHY`: LE Read PHY (Core Vol 4 Part E §7.8.47) in the procedure queue.
    mutating func readPHY(_ id: HostRequestID, _ connection: UInt16) {
        guard links.index(forKey: connection) != nil else { return complete(id, .failure(.unknownConnection(connection))) }
        enqueue(id, .readPHY, [.leReadPHY(ConnectionHandleParameter(connectionHandle: connection))])
    }

    /// LE Read PHY's Command Complete: the PHYs, or why there are none.
    mutating func phyRead(_ id: HostRequestID?, _ result: Result<CommandResponse, CommandError>) {
        switch result {
        case .failure(let error):
            complete(id, .failure(.command(error)))
        case .success(let response):
            do throws(CommandError) {
                let phys = try response.returnParameters(LEReadPHYReturn.self, opcode: .leReadPHY)
                guard phys.status.isSuccess else { return complete(id, .failure(.command(.failed(.leReadPHY, phys.status)))) }
                complete(id, .success(.phy(tx: phys.txPHY, rx: phys.rxPHY)))
            } catch {
                complete(id, .failure(.command(error)))
            }
        }
    }

    /// `.setPHY`: LE Set PHY (§7.8.49) with both directions given (All_PHYs 0); done on its Command
    /// Status. LE PHY Update Complete, if the link layer changes anything, comes as `.phyUpdated`.
    mutating func setPHY(_ id: HostRequestID, _ connection: UInt16, tx: LEPHYSet, rx: LEPHYSet) {
        guard links.index(forKey: connection) != nil else { return complete(id, .failure(.unknownConnection(connection))) }
        enqueue(id, .bestEffort, [.leSetPHY(LESetPHY(connectionHandle: connection, txPHYs: tx, rxPHYs: rx))])
    }
}
