import BluewireCore
import Testing

/// `LinearMap` stands in for `Dictionary` in the host's small tables (links, CCCDs, ACL credits):
/// every operation the engine uses must behave as the `Dictionary` operation it replaced, checked
/// here against a `Dictionary` fed the same steps.
@Suite("LinearMap")
struct LinearMapTests {
    @Test("insert, replace, remove by nil and by removeValue: the same contents as a Dictionary, in insertion order")
    func matchesDictionary() {
        var map = LinearMap<UInt16, String>()
        var dictionary: [UInt16: String] = [:]
        let steps: [(UInt16, String?)] = [(0x40, "a"), (0x41, "b"), (0x42, "c"), (0x41, "B"), (0x40, nil), (0x43, "d"), (0x40, "e"), (0x99, nil)]
        for (key, value) in steps {
            map[key] = value
            dictionary[key] = value
            #expect(map.count == dictionary.count)
            for (k, v) in dictionary { #expect(map[k] == v) }
        }
        #expect(map.keys == [0x41, 0x42, 0x43, 0x40], "insertion order; a removed key re-added goes last")
        #expect(Array(map.values) == ["B", "c", "d", "e"])
        #expect(map.removeValue(forKey: 0x42) == "c")
        #expect(map.removeValue(forKey: 0x42) == nil)
        #expect(map.keys == [0x41, 0x43, 0x40], "removal keeps the others' order")
        #expect(map.index(forKey: 0x43) == 1 && map.index(forKey: 0x42) == nil)
        map.removeAll()
        #expect(map.isEmpty && map[0x41] == nil)
    }

    @Test("in-place mutation through map[key]?, map[key, default:] and values[index] changes the stored value")
    func mutatesInPlace() throws {
        var map: LinearMap<UInt16, [Int]> = [1: [1], 2: [2]]
        map[1]?.append(10)
        map[3]?.append(30)
        #expect(map[3] == nil, "optional chaining on a missing key adds nothing")
        map[3, default: []].append(30)
        map[2, default: [99]].append(20)
        let index = try #require(map.index(forKey: 2))
        map.values[index].append(21)
        #expect(map[1] == [1, 10] && map[2] == [2, 20, 21] && map[3] == [30])
        #expect(map.keys == [1, 2, 3])
        #expect(map.map(\.key) == [1, 2, 3], "iteration follows the keys")
    }

    @Test("equality ignores order, as a Dictionary's; a literal's repeated key keeps its last value")
    func equalityAndLiterals() {
        let one: LinearMap<UInt16, Int> = [1: 10, 2: 20]
        let other: LinearMap<UInt16, Int> = [2: 20, 1: 10]
        let repeated: LinearMap<UInt16, Int> = [1: 5, 2: 20, 1: 10]
        #expect(one == other)
        #expect(one == repeated && repeated.count == 2)
        #expect(one != [1: 10, 2: 21])
        #expect(one != [1: 10])
    }

    @Test("an inout access to map[key] mutates the stored slot: setting nil removes the entry, a new key is added, an untouched missing key leaves nothing")
    func inoutAccessThroughTheSlot() {
        func set(_ slot: inout [Int]?, _ value: [Int]?) { slot = value }
        func touch(_ slot: inout [Int]?) {}
        var map: LinearMap<UInt16, [Int]> = [1: [1], 2: [2], 3: [3]]
        set(&map[2], nil)
        #expect(map.keys == [1, 3] && map[2] == nil, "a slot left empty is removed, the others keep their order")
        touch(&map[9])
        #expect(map.keys == [1, 3], "a missing key touched but not set leaves no entry")
        set(&map[9], [9])
        #expect(map.keys == [1, 3, 9] && map[9] == [9], "a new key goes last")
        set(&map[1], [1, 1])
        #expect(map.keys == [1, 3, 9] && map[1] == [1, 1], "replacing keeps the position")
        #expect(Array(map.values) == [[1, 1], [3], [9]])
    }
}
