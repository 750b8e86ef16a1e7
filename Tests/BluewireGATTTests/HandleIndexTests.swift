import Testing

@testable import BluewireGATT

/// `HandleIndex` replaced a `[UInt16: Int]` for the database's characteristic lookups: whatever order
/// handles are recorded in, each lookup answers as the dictionary would.
@Suite("HandleIndex")
struct HandleIndexTests {
    @Test("handles recorded out of order, one replaced: every lookup matches a Dictionary fed the same steps")
    func matchesDictionary() {
        var index = HandleIndex()
        var dictionary: [UInt16: Int] = [:]
        let steps: [(UInt16, Int)] = [(0x0010, 0), (0x0003, 1), (0xFFFF, 2), (0x0001, 3), (0x0010, 4), (0x0008, 5)]
        for (handle, position) in steps {
            index.set(position, for: handle)
            dictionary[handle] = position
        }
        for handle in [UInt16(0x0000), 0x0001, 0x0002, 0x0003, 0x0008, 0x0009, 0x0010, 0x0011, 0xFFFE, 0xFFFF] {
            #expect(index[handle] == dictionary[handle], "handle \(handle)")
        }
        #expect(HandleIndex()[0x0001] == nil)
    }
}
