/// A day of the proleptic Gregorian calendar in UTC, and its count of days
/// since 1970-01-01: what cron schedules step through. No time zone and no
/// libc: the conversion is arithmetic on the 400-year cycle of the calendar
/// (146,097 days), exact for every date Outlive accepts.
struct CivilDate: Equatable {
    let year: Int64
    /// 1 to 12.
    let month: Int
    /// 1 to 31.
    let day: Int

    init(year: Int64, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    /// The date of day `days` since 1970-01-01.
    init(days: Int64) {
        // Years are counted from March, so that the leap day ends the year.
        let shifted = days + 719_468  // days from 0000-03-01
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097  // 0 ... 146096
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)  // from March 1
        let monthFromMarch = (5 * dayOfYear + 2) / 153  // 0 = March ... 11 = February
        day = Int(dayOfYear - (153 * monthFromMarch + 2) / 5 + 1)
        month = Int(monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9)
        year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    }

    /// Days since 1970-01-01.
    var days: Int64 {
        let marchYear = month <= 2 ? year - 1 : year
        let era = (marchYear >= 0 ? marchYear : marchYear - 399) / 400
        let yearOfEra = marchYear - era * 400
        let monthFromMarch = Int64(month > 2 ? month - 3 : month + 9)
        let dayOfYear = (153 * monthFromMarch + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// 0 Sunday ... 6 Saturday, of day `days` since 1970-01-01 (a Thursday).
    static func weekday(days: Int64) -> Int {
        Int(((days % 7) + 7 + 4) % 7)
    }

    /// The first day of the month after this date's.
    var firstOfNextMonth: CivilDate {
        month == 12 ? CivilDate(year: year + 1, month: 1, day: 1) : CivilDate(year: year, month: month + 1, day: 1)
    }
}
