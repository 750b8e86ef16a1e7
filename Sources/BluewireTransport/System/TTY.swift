import Glibc

extension FileDescriptor {
    /// open(2) a UART or pty for H4: read/write, not the controlling terminal, close-on-exec,
    /// non-blocking (so a modem-control line cannot make open hang).
    static func openTTY(path: String) throws(SystemCallError) -> FileDescriptor {
        let fd = try retryingOnInterrupt("open(\(path))") { open(path, O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK) }
        return FileDescriptor(rawValue: fd)
    }

    /// tcsetattr(3) raw mode, 8 data bits, no parity, 1 stop bit (what H4 over a UART requires,
    /// Core Vol 4 Part A §3.2), the given baud rate, and RTS/CTS flow control when asked.
    func configureTTY(baudRate: Int, hardwareFlowControl: Bool) throws(SystemCallError) {
        var options = termios()
        _ = try retryingOnInterrupt("tcgetattr") { tcgetattr(rawValue, &options) }
        cfmakeraw(&options)
        options.c_cflag &= ~tcflag_t(CSTOPB | PARENB | CSIZE)
        options.c_cflag |= tcflag_t(CS8 | CLOCAL | CREAD)
        if hardwareFlowControl {
            options.c_cflag |= tcflag_t(CRTSCTS)
        } else {
            options.c_cflag &= ~tcflag_t(CRTSCTS)
        }
        guard let speed = FileDescriptor.speed(forBaudRate: baudRate) else {
            throw SystemCallError("cfsetspeed(\(baudRate))", Errno(rawValue: EINVAL))
        }
        _ = try retryingOnInterrupt("cfsetspeed") { cfsetspeed(&options, speed) }
        _ = try retryingOnInterrupt("tcsetattr") { tcsetattr(rawValue, TCSANOW, &options) }
        _ = try retryingOnInterrupt("tcflush") { tcflush(rawValue, TCIOFLUSH) }
    }

    /// The termios speed constant for a baud rate (Linux takes only these fixed rates here).
    static func speed(forBaudRate rate: Int) -> speed_t? {
        switch rate {
        case 9600: speed_t(B9600)
        case 19200: speed_t(B19200)
        case 38400: speed_t(B38400)
        case 57600: speed_t(B57600)
        case 115_200: speed_t(B115200)
        case 230_400: speed_t(B230400)
        case 460_800: speed_t(B460800)
        case 921_600: speed_t(B921600)
        case 1_000_000: speed_t(B1000000)
        case 1_500_000: speed_t(B1500000)
        case 2_000_000: speed_t(B2000000)
        case 3_000_000: speed_t(B3000000)
        case 4_000_000: speed_t(B4000000)
        default: nil
        }
    }
}
