extension Optional {
    /// Whether there is a value: `x.isSome` means `x != nil` without asking for `Equatable`.
    ///
    /// On an `Equatable` wrapped type `x != nil` can resolve to the `==` of two optionals, and
    /// under -Osize the optimiser does not always fold the comparison with `nil` away: the type's
    /// derived `==` (every field, every payload) stays in the code. Firmware images use this instead.
    @inlinable
    public var isSome: Bool {
        if case .some = self { return true }
        return false
    }
}
