import ArgumentParser
import OutliveCore

struct MessagesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "messages",
        abstract: "The messages of a store, with their state: who presents them, whether they were answered."
    )

    @OptionGroup var options: StoreOptionsGroup

    @Option(help: "Only messages of this category.")
    var category: String?

    @Option(help: "Only messages of this scope.")
    var scope: String?

    func run() throws {
        try reporting {
            let store = try options.open()
            defer { store.close() }
            let messages = try store.messages.list(scope: scope, category: category).compactMap { try? store.messages.message($0) }
            func state(_ message: Message) -> String {
                if message.removed { return "removed" }
                if message.handled { return "answered" }
                if message.lockingRun != nil { return "presenting" }
                if message.presented { return "presented" }
                return "waiting"
            }
            if options.json {
                print(JSON.array(messages.map { message in
                    .object([
                        ("id", .string(message.id)), ("category", .string(message.category)), ("title", .string(message.title)),
                        ("text", message.text.map(JSON.string) ?? .null), ("scope", message.scope.map(JSON.string) ?? .null),
                        ("state", .string(state(message))), ("choice", message.choice.map(JSON.string) ?? .null),
                        ("choices", .array(message.choices.map { .string($0.id) })),
                        ("presenting_process", message.lockingProcess.map(JSON.string) ?? .null),
                        ("presented_by", message.presenter.map(JSON.string) ?? .null), ("date", .number(message.date)),
                    ])
                }).text)
            } else {
                print(table(["ID", "CATEGORY", "STATE", "CHOICE", "TITLE"], messages.map {
                    [$0.id, $0.category, state($0), $0.choice ?? "-", $0.title]
                }))
            }
        }
    }
}
