/// A map from attribute handles to positions (in `GATTDatabase.characteristics`), kept sorted by handle and
/// searched by bisection: a database may hold many characteristics, and this costs far less code than a
/// `Dictionary<UInt16, Int>` (no hash table or `Hasher`), which matters on a microcontroller's flash.
struct HandleIndex: Sendable {
    private var handles: [UInt16] = []
    private var positions: [Int] = []

    /// The position recorded for `handle`, or nil.
    subscript(handle: UInt16) -> Int? {
        let i = slot(of: handle)
        return i < handles.count && handles[i] == handle ? positions[i] : nil
    }

    /// Records `position` for `handle`, replacing what an earlier call recorded for it.
    mutating func set(_ position: Int, for handle: UInt16) {
        let i = slot(of: handle)
        if i < handles.count && handles[i] == handle {
            positions[i] = position
        } else {
            handles.insert(handle, at: i)
            positions.insert(position, at: i)
        }
    }

    /// The first slot whose handle is at least `handle`.
    private func slot(of handle: UInt16) -> Int {
        var low = 0
        var high = handles.count
        while low < high {
            let mid = (low + high) / 2
            if handles[mid] < handle { low = mid + 1 } else { high = mid }
        }
        return low
    }
}
