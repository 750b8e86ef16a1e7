/// UTC calendar time for the `--time absolute` column, without Foundation.
enum UTCTime {
    /// `2026-11-25 05:37:06.123456` for Unix microseconds `us`.
    static func text(_ us: Int64) -> String {
        let seconds = us >= 0 ? us / 1_000_000 : (us - 999_999) / 1_000_000
        let micro = us - seconds * 1_000_000
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        // Days to civil date (H. Hinnant's algorithm, proleptic Gregorian).
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        return pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) + " " + pad(secondOfDay / 3_600, 2) + ":"
            + pad(secondOfDay / 60 % 60, 2) + ":" + pad(secondOfDay % 60, 2) + "." + pad(micro, 6)
    }

    static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}
