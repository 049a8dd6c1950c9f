import ArgumentParser
import Glibc
import OutliveCore

struct HandlersCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "handlers",
        abstract: "The handlers a library declares, with their signatures.",
        discussion: "The library is loaded (its constructors run), as a worker would load it."
    )

    @ArgumentParser.Argument(help: "A handler library (a .so built with OUTLIVE_HANDLER declarations).")
    var library: String

    @Flag(help: "Print JSON instead of a table.")
    var json = false

    func run() throws {
        try reporting {
            // A missing library is "not found" (exit 3, docs/cli.md), not an I/O failure.
            if access(library, F_OK) != 0 {
                throw OutliveError.notFound("handler library \(library) does not exist")
            }
            let declared = try HandlerRegistry.shared.declaredHandlers(inLibrary: library)
            if json {
                print(JSON.array(declared.map {
                    .object([("name", .string($0.name)), ("signature", .string($0.signature)), ("instance", .bool($0.isInstance))])
                }).text)
            } else {
                print(table(["HANDLER", "KIND", "SIGNATURE"], declared.map { [$0.name, $0.isInstance ? "instance" : "plain", $0.signature] }))
            }
        }
    }
}
