import BluewireCore

/// The chat room's GATT service: centrals write messages to `message`; the peripheral relays each
/// one to every central subscribed to `room` and keeps the recent ones (readable from `room`).
public enum ChatRoomProfile {
    public static let service = BluetoothUUID(parsing: "8c6b0001-3a1b-4d2e-9f10-626c75657769")!
    /// Write / Write Without Response: one UTF-8 message, "nick: text".
    public static let message = BluetoothUUID(parsing: "8c6b0002-3a1b-4d2e-9f10-626c75657769")!
    /// Notify: every message, as written. Read: the last `historyLength` messages, one per line.
    public static let room = BluetoothUUID(parsing: "8c6b0003-3a1b-4d2e-9f10-626c75657769")!
    /// The longest message accepted (a notification carries ATT_MTU − 3 octets, so centrals that
    /// want whole messages exchange MTUs first).
    public static let maximumMessageLength = 180
    public static let historyLength = 10
}

/// The Magic 8-Ball's GATT service: a central writes a question to `question`; the peripheral
/// notifies that central (and only it) of the answer on `answer`, which also reads as its last one.
public enum Magic8BallProfile {
    public static let service = BluetoothUUID(parsing: "8c6b8b01-3a1b-4d2e-9f10-626c75657769")!
    public static let question = BluetoothUUID(parsing: "8c6b8b02-3a1b-4d2e-9f10-626c75657769")!
    public static let answer = BluetoothUUID(parsing: "8c6b8b03-3a1b-4d2e-9f10-626c75657769")!

    /// The twenty answers of the classic toy.
    public static let answers = [
        "It is certain.", "It is decidedly so.", "Without a doubt.", "Yes definitely.", "You may rely on it.",
        "As I see it, yes.", "Most likely.", "Outlook good.", "Yes.", "Signs point to yes.",
        "Reply hazy, try again.", "Ask again later.", "Better not tell you now.", "Cannot predict now.",
        "Concentrate and ask again.", "Don't count on it.", "My reply is no.", "My sources say no.",
        "Outlook not so good.", "Very doubtful.",
    ]

    /// The answer to `question`: the same question always gets the same answer (FNV-1a of its bytes).
    public static func answer(to question: [UInt8]) -> String {
        var hash: UInt32 = 0x811C_9DC5
        for byte in question {
            hash ^= UInt32(byte)
            hash = hash &* 0x0100_0193
        }
        return answers[Int(hash % UInt32(answers.count))]
    }
}
