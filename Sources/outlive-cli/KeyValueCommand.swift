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
                    print(printable(value))  // printable: no character a terminal acts on (tab aside)
                }
                return
            }
            // Keys as stored bytes: one that is not UTF-8 is listed (escaped), never
            // turned into a key that does not exist, nor a reason to fail the listing.
            let rows = try KeyValueListing.entries(of: store.store, prefix: Array(prefix.utf8))
            if options.json {
                print(JSON.array(rows.map { entry in
                    // JSON escapes control characters itself (\u001b): a UTF-8 key is given
                    // exactly; one that is not gets its escaped form and its bytes in hex.
                    var fields: [(String, JSON)]
                    if let text = String(validating: entry.key, as: UTF8.self) {
                        fields = [("key", .string(text))]
                    } else {
                        fields = [("key", .string(displayable(entry.key))), ("key_hex", .string(hex(entry.key)))]
                    }
                    return .object(fields + [("size", .integer(Int64(entry.value.count))), ("value", .string(printable(entry.value)))])
                }).text)
            } else {
                print(table(["KEY", "SIZE", "VALUE"], rows.map { [displayable($0.key), String($0.value.count), printable($0.value)] }))
            }
        }
    }
}
