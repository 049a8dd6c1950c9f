import ArgumentParser
import OutliveCore

struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "The processes alive in a store and how much of everything it holds."
    )

    @OptionGroup var options: StoreOptionsGroup

    func run() throws {
        try reporting {
            let store = try options.open()
            defer { store.close() }
            let runs = try store.store.liveRuns().filter { $0.runID != store.store.runID }
            let counts: [(String, Int)] = [("keys", try store.kv.count(prefix: ""))] + (try store.inspectionCounts())
            if options.json {
                print(JSON.object([
                    ("directory", .string(store.store.label)),
                    ("runs", .array(runs.map { .object([("run_id", .string($0.runID)), ("process", .string($0.processName))]) })),
                    ("counts", .object(counts.map { ($0.0, JSON.integer(Int64($0.1))) })),
                ]).text)
            } else {
                print("store \(terminalSafe(store.store.label))")
                print("\nprocesses alive: \(runs.count)")
                if !runs.isEmpty { print(table(["RUN", "PROCESS"], runs.map { [$0.runID, $0.processName] })) }
                print("")
                print(table(["WHAT", "COUNT"], counts.map { [$0.0, String($0.1)] }))
            }
        }
    }
}
