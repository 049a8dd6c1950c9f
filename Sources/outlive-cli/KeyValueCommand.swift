import ArgumentParser
import OutliveCore

struct KeyValueCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kv",
        abstract: "List the keys of a store, or print one value."
    )

    @OptionGroup var options: StoreOptionsGroup

    @ArgumentParser.Argument(help: "A key to print; without it, the keys are listed.")
    var key: String?

    @Option(help: "List only keys with this prefix.")
    var prefix = ""

    func run() throws {
        try reporting {
            let store = try options.open()
            defer { store.close() }
            if let key {
                let value = try store.kv.get(key)
                if options.json {
                    print(JSON.object([("key", .string(key)), ("size", .integer(Int64(value.count))), ("value", .string(printable(value)))]).text)
                } else {
                    print(printable(value))
                }
                return
            }
            var rows: [(String, [UInt8])] = []
            var after: String?
            while true {
                let keys = try store.kv.keys(prefix: prefix, after: after, limit: 1_000)
                for name in keys { rows.append((name, try store.kv.get(name))) }
                guard keys.count == 1_000, let last = keys.last else { break }
                after = last
            }
            if options.json {
                print(JSON.array(rows.map { .object([("key", .string($0.0)), ("size", .integer(Int64($0.1.count))), ("value", .string(printable($0.1)))]) }).text)
            } else {
                print(table(["KEY", "SIZE", "VALUE"], rows.map { [$0.0, String($0.1.count), printable($0.1)] }))
            }
        }
    }
}
