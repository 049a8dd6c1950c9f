import XCTest
@testable import OutliveCore

/// Next-fire computations of cron expressions at known dates (UTC): steps,
/// lists, ranges, names, month ends, leap years (2100 is not one), the two
/// day fields combined as Vixie cron does; and the calendar arithmetic under them.
final class CronExpressionTests: XCTestCase {
    /// "2024-02-29 13:05" or "2024-02-29 13:05:30.5" as seconds since the epoch.
    private func utc(_ text: String) -> Double {
        let parts = text.split(separator: " ")
        let date = parts[0].split(separator: "-").map { Int($0)! }
        let time = parts[1].split(separator: ":").map { Double($0)! }
        let days = CivilDate(year: Int64(date[0]), month: date[1], day: date[2]).days
        return Double(days) * 86_400 + time[0] * 3_600 + time[1] * 60 + (time.count > 2 ? time[2] : 0)
    }

    private func next(_ expression: String, after start: String, file: StaticString = #filePath, line: UInt = #line) -> Double? {
        do {
            return try CronExpression(expression).next(after: utc(start))
        } catch {
            XCTFail("\(expression): \(error)", file: file, line: line)
            return nil
        }
    }

    func testCivilDatesAgreeWithKnownDayCounts() {
        let known: [(Int64, Int, Int, Int64)] = [
            (1970, 1, 1, 0), (1969, 12, 31, -1), (2000, 1, 1, 10_957), (2000, 2, 29, 11_016), (2024, 2, 29, 19_782),
            (2100, 2, 28, 47_540), (2100, 3, 1, 47_541), (2400, 2, 29, 157_113), (9999, 12, 31, 2_932_896),
        ]
        for (year, month, day, days) in known {
            XCTAssertEqual(CivilDate(year: year, month: month, day: day).days, days, "\(year)-\(month)-\(day)")
            XCTAssertEqual(CivilDate(days: days), CivilDate(year: year, month: month, day: day))
        }
        XCTAssertEqual(CivilDate.weekday(days: 0), 4)  // Thursday
        XCTAssertEqual(CivilDate.weekday(days: 19_782), 4)  // 2024-02-29, a Thursday
        XCTAssertEqual(CivilDate.weekday(days: -1), 3)
    }

    func testEveryDayFollowsTheOneBeforeIt() {
        var previous = CivilDate(days: -400)
        let lengths = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        for days in Int64(-399)...Int64(160_000) {
            let date = CivilDate(days: days)
            XCTAssertEqual(date.days, days)
            let leap = previous.year % 4 == 0 && (previous.year % 100 != 0 || previous.year % 400 == 0)
            let length = previous.month == 2 && leap ? 29 : lengths[previous.month]
            if previous.day < length {
                XCTAssertEqual(date, CivilDate(year: previous.year, month: previous.month, day: previous.day + 1))
            } else {
                XCTAssertEqual(date, previous.firstOfNextMonth)
                XCTAssertEqual(date.day, 1)
            }
            previous = date
        }
    }

    func testNextFireTimesOfKnownExpressions() {
        let cases: [(String, String, String)] = [
            ("*/15 * * * *", "2024-01-01 00:00", "2024-01-01 00:15"),  // strictly after
            ("*/15 * * * *", "2024-01-01 00:07:30", "2024-01-01 00:15"),
            ("*/7 * * * *", "2024-01-01 00:56", "2024-01-01 01:00"),
            ("5-10/2 3 * * *", "2024-01-01 03:06", "2024-01-01 03:07"),
            ("5-10/2 3 * * *", "2024-01-01 03:09", "2024-01-02 03:05"),
            ("30 2 * * *", "2024-03-10 02:30:00.5", "2024-03-11 02:30"),
            ("0 0 29 2 *", "2024-03-01 00:00", "2028-02-29 00:00"),  // leap years
            ("0 0 29 2 *", "2096-03-01 00:00", "2104-02-29 00:00"),  // 2100 is not one
            ("0 0 28-31 2 *", "2100-02-28 00:00", "2101-02-28 00:00"),
            ("0 12 31 * *", "2024-04-01 00:00", "2024-05-31 12:00"),  // April has no 31st
            ("0 0 31 1,2,3 *", "2024-02-01 00:00", "2024-03-31 00:00"),
            ("59 23 31 12 *", "2024-12-31 23:59", "2025-12-31 23:59"),
            ("15 14 1 * *", "2024-12-01 14:15", "2025-01-01 14:15"),  // year end
            ("0 0 1 1 *", "2099-06-01 00:00", "2100-01-01 00:00"),
            ("@monthly", "2024-01-31 12:00", "2024-02-01 00:00"),
            ("@yearly", "2024-01-01 00:00", "2025-01-01 00:00"),
            ("@hourly", "2024-01-01 10:59:59", "2024-01-01 11:00"),
            ("@weekly", "2024-02-29 00:00", "2024-03-03 00:00"),  // Sunday
            ("0 0 * * 1", "2024-02-29 00:00", "2024-03-04 00:00"),  // Monday after a leap day
            ("0 0 * * 7", "2024-03-01 00:00", "2024-03-03 00:00"),  // 7 is Sunday
            ("0 9 * * MON-FRI", "2024-03-01 09:00", "2024-03-04 09:00"),  // Friday to Monday
            ("0 9 * * sat,sun", "2024-03-01 09:00", "2024-03-02 09:00"),
            ("0 0 1 jan-mar/2 *", "2024-01-01 00:00", "2024-03-01 00:00"),
            ("0 0 1,15 * 1", "2024-01-02 00:00", "2024-01-08 00:00"),  // both restricted: either matches
            ("0 0 */2 * 1", "2024-01-02 00:00", "2024-01-15 00:00"),  // `*`-led day: both must (odd days, Mondays)
            ("0 0 13 * 5", "2024-01-01 00:00", "2024-01-05 00:00"),  // a Friday, or the 13th
            ("0 0 13 * *", "2024-01-13 00:00", "2024-02-13 00:00"),
            ("0\t0  1 * *", "2024-01-01 00:00", "2024-02-01 00:00"),  // tabs and runs of spaces
        ]
        for (expression, start, expected) in cases {
            XCTAssertEqual(next(expression, after: start), utc(expected), "\(expression) after \(start)")
        }
    }

    func testAFiringTimeIsAlwaysAMatchingWholeMinuteAfterTheStart() throws {
        let expression = try CronExpression("*/10 8-17 * * 1-5")
        var time = utc("2024-01-01 00:00")
        for _ in 0..<500 {
            guard let fire = expression.next(after: time) else { return XCTFail("no next") }
            XCTAssertGreaterThan(fire, time)
            XCTAssertEqual(fire.truncatingRemainder(dividingBy: 600), 0)
            let days = Int64(fire / 86_400)
            let hour = Int(fire.truncatingRemainder(dividingBy: 86_400) / 3_600)
            XCTAssertTrue((8...17).contains(hour))
            XCTAssertTrue((1...5).contains(CivilDate.weekday(days: days)))
            time = fire
        }
    }

    func testMalformedExpressionsAreRefused() {
        let bad = [
            "", "* * * *", "* * * * * *", "60 * * * *", "* 24 * * *", "* * 0 * *", "* * 32 * *", "* * * 0 *", "* * * 13 *",
            "* * * * 8", "5-1 * * * *", "*/0 * * * *", "*/61 * * * *", "1/x * * * *", "a * * * *", "1,,2 * * * *",
            "-1 * * * *", "1-2-3 * * * *", "* * * FOO *", "* * * * MON-SUN", "@every", "0 0 30 2 *", "0 0 31 4,6,9,11 *",
            "1.5 * * * *", "* * * * 1/0", "+1 * * * *", "* * * jan *x", String(repeating: "*", count: 300),
        ]
        for text in bad {
            XCTAssertThrowsError(try CronExpression(text), text) { error in
                XCTAssertEqual((error as? OutliveError)?.code, .invalidArgument, text)
            }
        }
    }

    func testIntervalsStayOnTheGridCountedFromTheAnchor() throws {
        let period = try SchedulePeriod.interval(0.2)
        XCTAssertEqual(period.next(after: 100, anchor: 100)!, 100.2, accuracy: 1e-9)
        XCTAssertEqual(period.next(after: 100.2, anchor: 100)!, 100.4, accuracy: 1e-9)
        XCTAssertEqual(period.next(after: 137.05, anchor: 100)!, 137.2, accuracy: 1e-9)
        for now in stride(from: 100.0, to: 200.0, by: 0.037) {
            let next = period.next(after: now, anchor: 100)!
            XCTAssertGreaterThan(next, now)
            XCTAssertLessThanOrEqual(next - 0.2, now + 1e-9)
        }
        XCTAssertThrowsError(try SchedulePeriod.interval(0.009))
        XCTAssertThrowsError(try SchedulePeriod.interval(.nan))
        XCTAssertThrowsError(try SchedulePeriod.interval(-1))
        XCTAssertThrowsError(try SchedulePeriod.interval(.infinity))
    }
}
