/// A small map from keys to values, kept as two parallel arrays in insertion order and searched front to
/// back.
///
/// A host's tables are small: a handful of links, each with a few channels and pending requests. At those
/// sizes a linear scan over a few `UInt16`s is as fast as hashing, and the map costs much less code than a
/// `Dictionary` (no hash table, no `Hasher`, no per-type specialisations of the hashed storage), which is
/// what matters on a microcontroller's flash. Use a `Dictionary` where a table can grow large.
///
/// The operations the host uses read as a `Dictionary`'s do: `map[key]` (read, write, `nil` removes, in-place
/// mutation), `map[key, default:]`, `removeValue(forKey:)`, `index(forKey:)` with `values[index]`, `keys`,
/// and iteration as `(key:value:)` pairs. Iteration and `keys` follow insertion order; removing a key keeps
/// the order of the rest.
///
/// The operations are `@inlinable` so that callers in other modules get them specialised for their key
/// and value types. Called unspecialised, every access went through generic value witnesses, and
/// `_modify`'s move out and back in boxed the value: the engine's GATT write path cost 28 allocations
/// per write against 17 inlined (`Benchmarks/NotificationPath`, WritePath). `map[key]`'s inout accessor
/// then still took its frame from malloc on every access (see there); with the access slot the same
/// path costs 14.
public struct LinearMap<Key: Equatable, Value> {
    /// The keys, in insertion order; `keys[i]` is the key of `values[i]`.
    public var keys: [Key] {
        @inlinable get { storedKeys }
    }
    @usableFromInline var storedKeys: [Key]
    @usableFromInline var storedValues: Values
    /// Where `map[key]`'s inout access puts the value while the caller mutates it (see there); empty
    /// between accesses.
    @usableFromInline var accessSlot: Value?

    /// The values, in the order of `keys`; mutable in place by index (`map.values[index].field = x`).
    public var values: Values {
        @inlinable get { storedValues }
        @inlinable _modify { yield &storedValues }
    }

    /// An empty map.
    @inlinable
    public init() {
        storedKeys = []
        storedValues = Values(elements: [])
        accessSlot = nil
    }

    /// The number of entries.
    @inlinable public var count: Int { storedKeys.count }
    @inlinable public var isEmpty: Bool { storedKeys.isEmpty }
    /// The positions of the entries, for `keys[index]` and `values[index]`.
    @inlinable public var indices: Range<Int> { 0..<storedKeys.count }

    /// The position of `key`'s entry, or nil if it has none.
    @inlinable
    public func index(forKey key: Key) -> Int? {
        Self.position(of: key, in: storedKeys)
    }

    /// The position of `key` in `keys`, or nil.
    @inlinable
    static func position(of key: Key, in keys: [Key]) -> Int? {
        var i = 0
        while i < keys.count {
            if keys[i] == key { return i }
            i += 1
        }
        return nil
    }

    /// `key`'s value, or nil. Setting nil removes the entry; setting a value adds or replaces it.
    public subscript(key: Key) -> Value? {
        @inlinable get {
            guard let i = index(forKey: key) else { return nil }
            return storedValues.elements[i]
        }
        @inlinable _modify {
            // The value is moved into the map's access slot, not into this accessor's frame, and the
            // caller mutates it there. A coroutine's frame beyond the caller's fixed buffer (four
            // words) comes from malloc on every access, and a value held in the frame made it as large
            // as the value (a link's state, a peer's state machine): this frame holds the position
            // and the key. The keys alone are searched: a borrow of the whole map would copy it, slot
            // and all, into the frame.
            let i = Self.position(of: key, in: storedKeys) ?? -1
            if i >= 0 { moveIntoAccessSlot(from: i) }
            defer { restoreAccessSlot(at: i, key: key) }
            yield &accessSlot
        }
    }

    /// Moves the value at `i` out of the entries into the access slot (its key stays). Not inlined
    /// into the accessor, so that the moved value is never a temporary in its frame.
    @inlinable @inline(never)
    mutating func moveIntoAccessSlot(from i: Int) {
        accessSlot = storedValues.elements.remove(at: i)
    }

    /// Puts the access slot's value back at `i`, or drops the entry at `i` if the slot was emptied;
    /// for a key the map lacked (`i` < 0), adds the slot's value last, if it holds one. Leaves the
    /// slot empty.
    @inlinable @inline(never)
    mutating func restoreAccessSlot(at i: Int, key: Key) {
        let value = accessSlot.take()
        if i >= 0 {
            if let value {
                storedValues.elements.insert(value, at: i)
            } else {
                storedKeys.remove(at: i)
            }
        } else if let value {
            storedKeys.append(key)
            storedValues.elements.append(value)
        }
    }

    /// `key`'s value; an entry holding `defaultValue` is added first when mutating a key the map lacks.
    public subscript(key: Key, default defaultValue: @autoclosure () -> Value) -> Value {
        @inlinable get { self[key] ?? defaultValue() }
        @inlinable _modify {
            let i: Int
            if let found = index(forKey: key) {
                i = found
            } else {
                storedKeys.append(key)
                storedValues.elements.append(defaultValue())
                i = storedKeys.count - 1
            }
            yield &storedValues.elements[i]
        }
    }

    /// Removes `key`'s entry and returns its value, or nil if it had none.
    @inlinable @discardableResult
    public mutating func removeValue(forKey key: Key) -> Value? {
        guard let i = index(forKey: key) else { return nil }
        storedKeys.remove(at: i)
        return storedValues.elements.remove(at: i)
    }

    /// Removes every entry.
    @inlinable
    public mutating func removeAll() {
        storedKeys.removeAll()
        storedValues.elements.removeAll()
    }

    /// A map's values, in the order of its keys: readable and mutable in place by position.
    public struct Values: RandomAccessCollection {
        @usableFromInline var elements: [Value]

        @inlinable init(elements: [Value]) { self.elements = elements }

        @inlinable public var startIndex: Int { 0 }
        @inlinable public var endIndex: Int { elements.count }

        public subscript(position: Int) -> Value {
            @inlinable get { elements[position] }
            @inlinable _modify { yield &elements[position] }
        }
    }
}

extension LinearMap: Sequence {
    public struct Iterator: IteratorProtocol {
        @usableFromInline let map: LinearMap
        @usableFromInline var position = 0

        @inlinable init(map: LinearMap) { self.map = map }

        @inlinable
        public mutating func next() -> (key: Key, value: Value)? {
            guard position < map.storedKeys.count else { return nil }
            defer { position += 1 }
            return (map.storedKeys[position], map.storedValues.elements[position])
        }
    }

    @inlinable public func makeIterator() -> Iterator { Iterator(map: self) }
    @inlinable public var underestimatedCount: Int { storedKeys.count }
}

extension LinearMap: ExpressibleByDictionaryLiteral {
    /// A map holding `elements`; a key given twice keeps its last value.
    public init(dictionaryLiteral elements: (Key, Value)...) {
        self.init()
        for (key, value) in elements { self[key] = value }
    }
}

extension LinearMap: Equatable where Value: Equatable {
    /// Equal when both hold the same keys with equal values, in any order (as two `Dictionary`s).
    public static func == (lhs: LinearMap, rhs: LinearMap) -> Bool {
        guard lhs.count == rhs.count else { return false }
        for (key, value) in lhs {
            guard let other = rhs[key], other == value else { return false }
        }
        return true
    }
}

extension LinearMap: Sendable where Key: Sendable, Value: Sendable {}
extension LinearMap.Values: Sendable where Value: Sendable {}
extension LinearMap.Iterator: Sendable where Key: Sendable, Value: Sendable {}

extension LinearMap where Key: Comparable {
    /// The keys in ascending order, as `keys.sorted()` gives them: an insertion sort, which for a
    /// handful of keys is as quick and costs a firmware image far less code than the standard
    /// library's sort (about 1.4 KB for `[UInt16]`).
    public var sortedKeys: [Key] {
        var sorted = keys
        var i = 1
        while i < sorted.count {
            let key = sorted[i]
            var j = i
            while j > 0, key < sorted[j - 1] {
                sorted[j] = sorted[j - 1]
                j -= 1
            }
            sorted[j] = key
            i += 1
        }
        return sorted
    }
}
