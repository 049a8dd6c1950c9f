import ArgumentParser
import Glibc
import OutliveCore

struct SchedulesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schedules",
        abstract: "List a store's schedules (periodic tasks), or remove one.",
        subcommands: [SchedulesListCommand.self, SchedulesRemoveCommand.self],
        defaultSubcommand: SchedulesListCommand.self
    )
}

struct SchedulesListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "Every schedule with its period, queue and next firing.")

    @OptionGroup var options: StoreOptionsGroup

    func run() throws {
        try reporting {
            let store = try options.open()
            defer { store.close() }
            var schedules: [ScheduleInfo] = []
            var after: String?
            while true {
                let page = try store.schedules.list(after: after, limit: 1_000)
                schedules += page
                guard page.count == 1_000, let last = page.last else { break }
                after = last.name
            }
            func period(_ schedule: ScheduleInfo) -> String {
                if let cron = schedule.cron { return "cron \(cron)" }
                return "every \(schedule.interval.map { formatSeconds($0) } ?? "?") s"
            }
            if options.json {
                print(JSON.array(schedules.map { schedule in
                    .object([
                        ("name", .string(schedule.name)), ("handler", .string(schedule.handlerName)),
                        ("interval", schedule.interval.map(JSON.number) ?? .null), ("cron", schedule.cron.map(JSON.string) ?? .null),
                        ("queue", .string(schedule.queue)), ("priority", .integer(Int64(schedule.priority))),
                        ("next_fire", .number(schedule.nextFire)), ("last_fired", schedule.lastFired.map(JSON.number) ?? .null),
                        ("created", .number(schedule.created)),
                    ])
                }).text)
            } else {
                print(table(["NAME", "HANDLER", "PERIOD", "QUEUE", "PRIORITY", "NEXT FIRE", "LAST FIRED"], schedules.map {
                    [$0.name, $0.handlerName, period($0), $0.queue, String($0.priority), utcTime($0.nextFire),
                     $0.lastFired.map(utcTime) ?? "-"]
                }))
            }
        }
    }
}

struct SchedulesRemoveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "remove", abstract: "Remove a schedule (the tasks it added stay).")

    @OptionGroup var options: StoreOptionsGroup

    @ArgumentParser.Argument(help: "The schedule's name.")
    var name: String

    func validate() throws {
        do {
            try Schedules.validate(name: name)
        } catch let error as OutliveError {
            throw ValidationError(error.message)
        }
    }

    func run() throws {
        try reporting {
            let store = try options.open()
            defer { store.close() }
            try store.schedules.remove(name: name)
            print(options.json ? JSON.object([("removed", .string(name))]).text : "schedule \(name) removed")
        }
    }
}

/// Seconds without a trailing ".0" (0.2, 30, 3600).
private func formatSeconds(_ seconds: Double) -> String {
    seconds == seconds.rounded() && abs(seconds) < 1e15 ? String(Int64(seconds)) : String(seconds)
}
