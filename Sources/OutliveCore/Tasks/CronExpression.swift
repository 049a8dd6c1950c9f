/// A cron expression of five fields — minute hour day-of-month month
/// day-of-week — evaluated in UTC, as docs/tasks.md ("Periodic tasks") and
/// the header describe. Each field is `*` or a comma-separated list of
/// values, ranges `a-b` and steps (`*/s`, `a-b/s`, `a/s` meaning `a-max/s`);
/// months and weekdays also by their English three-letter names; weekday 0
/// and 7 are Sunday. `@yearly`, `@annually`, `@monthly`, `@weekly`, `@daily`,
/// `@midnight` and `@hourly` stand for their usual expressions.
///
/// The two day fields combine as in Vixie cron and cronie: when both are
/// restricted (neither begins with `*`), a day matches if either does;
/// otherwise both must (so `*/2` in one of them restricts nothing of the other).
public struct CronExpression: Equatable {
    public static let maxSize = 256

    public let text: String
    private let minutes: UInt64
    private let hours: UInt64
    private let days: UInt64
    private let months: UInt64
    private let weekdays: UInt64
    private let daysRestricted: Bool
    private let weekdaysRestricted: Bool

    private static let macros = [
        "@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *", "@weekly": "0 0 * * 0",
        "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *",
    ]
    private static let monthNames = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    private static let weekdayNames = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]

    private struct Field {
        let name: String
        let range: ClosedRange<Int>
        /// Names of the values from `range.lowerBound` on.
        let names: [String]
    }

    private static let fields = [
        Field(name: "minute", range: 0...59, names: []),
        Field(name: "hour", range: 0...23, names: []),
        Field(name: "day of month", range: 1...31, names: []),
        Field(name: "month", range: 1...12, names: monthNames),
        Field(name: "day of week", range: 0...7, names: weekdayNames),
    ]

    public init(_ text: String) throws {
        guard text.utf8.count <= CronExpression.maxSize else {
            throw OutliveError.invalidArgument("a cron expression is at most \(CronExpression.maxSize) bytes, got \(text.utf8.count)")
        }
        let trimmed = text.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ")
        let expanded = CronExpression.macros[trimmed.lowercased()] ?? trimmed
        if expanded.hasPrefix("@") {
            throw OutliveError.invalidArgument("unknown cron macro \"\(trimmed.prefix(32))\" (known: @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly)")
        }
        let parts = expanded.split(separator: " ").map(String.init)
        guard parts.count == 5 else {
            throw OutliveError.invalidArgument("a cron expression has 5 fields (minute hour day-of-month month day-of-week), got \(parts.count) in \"\(text.prefix(64))\"")
        }
        var sets: [UInt64] = []
        for (field, part) in zip(CronExpression.fields, parts) {
            sets.append(try CronExpression.parse(part, field))
        }
        self.text = trimmed
        minutes = sets[0]
        hours = sets[1]
        days = sets[2]
        months = sets[3]
        // Sunday is 0 and 7.
        weekdays = (sets[4] | (sets[4] >> 7)) & 0x7f
        daysRestricted = !parts[2].hasPrefix("*")
        weekdaysRestricted = !parts[4].hasPrefix("*")
        guard canMatch else {
            throw OutliveError.invalidArgument("the cron expression \"\(trimmed.prefix(64))\" names no day that exists (day of month \(parts[2]) in month \(parts[3]))")
        }
    }

    /// One field as a set of bits (bit n: value n).
    private static func parse(_ part: String, _ field: Field) throws -> UInt64 {
        var set: UInt64 = 0
        for item in part.split(separator: ",", omittingEmptySubsequences: false) {
            let pieces = item.split(separator: "/", omittingEmptySubsequences: false)
            guard pieces.count <= 2, !item.isEmpty else {
                throw OutliveError.invalidArgument("cron \(field.name) field \"\(part.prefix(64))\": \"\(item.prefix(32))\" is not a value, range or step")
            }
            let base = String(pieces[0])
            var low: Int, high: Int
            if base == "*" {
                (low, high) = (field.range.lowerBound, field.range.upperBound)
            } else if let dash = base.firstIndex(of: "-") {
                low = try value(String(base[..<dash]), field, in: part)
                high = try value(String(base[base.index(after: dash)...]), field, in: part)
                guard low <= high else {
                    throw OutliveError.invalidArgument("cron \(field.name) field \"\(part.prefix(64))\": the range \(base) runs backwards")
                }
            } else {
                low = try value(base, field, in: part)
                // `a/s` steps from a to the field's end.
                high = pieces.count == 2 ? field.range.upperBound : low
            }
            var step = 1
            if pieces.count == 2 {
                guard let parsed = Int(pieces[1]), pieces[1].allSatisfy({ $0.isASCII && $0.isNumber }), parsed >= 1,
                      parsed <= field.range.upperBound - field.range.lowerBound + 1 else {
                    throw OutliveError.invalidArgument("cron \(field.name) field \"\(part.prefix(64))\": the step \"\(pieces[1].prefix(16))\" is not 1 to \(field.range.upperBound - field.range.lowerBound + 1)")
                }
                step = parsed
            }
            for number in stride(from: low, through: high, by: step) { set |= 1 << UInt64(number) }
        }
        return set
    }

    private static func value(_ text: String, _ field: Field, in part: String) throws -> Int {
        if !text.isEmpty, text.allSatisfy({ $0.isASCII && $0.isNumber }), text.count <= 3, let number = Int(text) {
            guard field.range.contains(number) else {
                throw OutliveError.invalidArgument("cron \(field.name) field \"\(part.prefix(64))\": \(number) is out of range \(field.range.lowerBound)-\(field.range.upperBound)")
            }
            return number
        }
        if let index = field.names.firstIndex(of: text.lowercased()) { return field.range.lowerBound + index }
        throw OutliveError.invalidArgument("cron \(field.name) field \"\(part.prefix(64))\": \"\(text.prefix(16))\" is not a number\(field.names.isEmpty ? "" : " or name")")
    }

    private func has(_ set: UInt64, _ value: Int) -> Bool { set & (1 << UInt64(value)) != 0 }

    private func dayMatches(_ date: CivilDate, weekday: Int) -> Bool {
        let byDay = has(days, date.day), byWeekday = has(weekdays, weekday)
        if daysRestricted && weekdaysRestricted { return byDay || byWeekday }
        return byDay && byWeekday
    }

    /// Whether some day of some year matches: an expression such as
    /// `0 0 30 2 *` (February 30) never fires and is refused. Every month
    /// and weekday combination recurs within 28 years, leap days included.
    private var canMatch: Bool {
        if daysRestricted && weekdaysRestricted && weekdays != 0 { return true }
        let longest = [0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        for month in 1...12 where has(months, month) {
            for day in 1...longest[month] where has(days, day) { return true }
        }
        return false
    }

    /// Latest time `next` computes: the end of year 9999.
    static let latest: Double = 253_402_300_799

    /// The first whole minute strictly after `time` (seconds since the epoch,
    /// UTC) that the expression matches; nil when `time` is not finite, is
    /// before the epoch, or no match comes before the year 10000.
    public func next(after time: Double) -> Double? {
        guard time.isFinite, time >= 0, time < CronExpression.latest else { return nil }
        let start = (Int64(time) / 60 + 1) * 60
        var day = start / 86_400
        var minuteOfDay = Int((start % 86_400) / 60)
        let lastDay = Int64(CronExpression.latest) / 86_400
        while day <= lastDay {
            let date = CivilDate(days: day)
            if !has(months, date.month) {
                day = date.firstOfNextMonth.days
                minuteOfDay = 0
                continue
            }
            if dayMatches(date, weekday: CivilDate.weekday(days: day)), let minute = firstMinute(from: minuteOfDay) {
                return Double(day * 86_400 + Int64(minute) * 60)
            }
            day += 1
            minuteOfDay = 0
        }
        return nil
    }

    /// The first minute of the day at or after `from` whose hour and minute match.
    private func firstMinute(from: Int) -> Int? {
        var hour = from / 60
        var minute = from % 60
        while hour < 24 {
            if has(hours, hour) {
                while minute < 60 {
                    if has(minutes, minute) { return hour * 60 + minute }
                    minute += 1
                }
            }
            hour += 1
            minute = 0
        }
        return nil
    }
}
