/// The role the local device has on a connection (Core Vol 6 Part B §1.1).
public enum LinkRole: Sendable, Hashable {
    case central, peripheral
}
