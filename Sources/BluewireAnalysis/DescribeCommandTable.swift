import BluewireCore

/// An HCI command as the describer knows it: its Core specification name, the layout of its
/// parameters (Core Vol 4 Part E §7.1–§7.8) and of the return parameters its Command Complete
/// event carries.
struct CommandLayout: Sendable {
    let opcode: UInt16
    let name: String
    let parameters: [Parameter]
    let returns: [Parameter]

    init(_ opcode: UInt16, _ name: String, _ parameters: [Parameter] = [], returns: [Parameter] = [.status]) {
        self.opcode = opcode
        self.name = name
        self.parameters = parameters
        self.returns = returns
    }
}

/// Every command of the Core specification, by opcode (OGF << 10 | OCF).
enum CommandTable {
    static let byOpcode: [UInt16: CommandLayout] = {
        var table: [UInt16: CommandLayout] = [:]
        for group in [linkControl, linkPolicy, controllerAndBaseband, informationalStatusTesting, le1, le2] {
            for layout in group { table[layout.opcode] = layout }
        }
        return table
    }()

    static func layout(_ opcode: UInt16) -> CommandLayout? { byOpcode[opcode] }

    /// `LE Set Scan Enable (0x200c)`; `Vendor OGF 0x3f OCF 0x0157 (0xfd57)` for vendor commands
    /// (OGF 0x3F, Core Vol 4 Part E §5.4.1); `OGF 0x08 OCF 0x00ff (0x20ff)` for an opcode the
    /// specification does not define.
    static func describe(opcode: UInt16) -> String {
        let code = " (0x" + hex(opcode, width: 4) + ")"
        if let layout = byOpcode[opcode] { return layout.name + code }
        if opcode == 0 { return "NOP" + code }
        let groups = "OGF 0x" + hex(opcode >> 10, width: 2) + " OCF 0x" + hex(opcode & 0x03FF, width: 4) + code
        return opcode >> 10 == 0x3F ? "Vendor " + groups : groups
    }
}
