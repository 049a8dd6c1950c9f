import Glibc
import ArgumentParser
import OutliveCore

@main
struct OutliveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "outlive",
        abstract: "Inspect an Outlive store and run its durable work.",
        discussion: """
            Exit status: 0 success, 1 the store could not be used, 3 not found, 64 bad usage.
            """,
        version: "\(OutliveVersion.text)",
        subcommands: [InspectCommand.self, KeyValueCommand.self, TasksCommand.self, SchedulesCommand.self, MessagesCommand.self, SignalsCommand.self,
                      HandlersCommand.self, WorkerCommand.self]
    )

    /// Arguments reach Swift as Strings, where a byte that is not UTF-8 becomes
    /// U+FFFD: a directory named with one would silently be another directory.
    /// Every argument (paths, keys, names) must be UTF-8, as the library requires;
    /// the raw bytes are checked first and one that is not fails the command,
    /// naming it escaped (exit 64, bad usage).
    static func main() {
        for index in 1..<Int(CommandLine.argc) {
            guard let raw = CommandLine.unsafeArgv[index] else { continue }
            let bytes = Array(UnsafeBufferPointer(start: raw, count: strlen(raw))).map { UInt8(bitPattern: $0) }
            if String(validating: bytes, as: UTF8.self) == nil {
                printError("outlive: argument \(index) (\(displayable(bytes))) is not UTF-8; store directories, library paths and keys must be UTF-8")
                Glibc.exit(64)
            }
        }
        Self.main(nil)
    }
}

/// Options every command that opens a store shares.
struct StoreOptionsGroup: ParsableArguments {
    @ArgumentParser.Argument(help: "The store: a directory, or a postgresql:// URI.")
    var directory: String

    @Flag(help: "Print JSON instead of a table.")
    var json = false

    @Option(help: "The process name this command registers as while it has the store open.")
    var process = "outlive-cli"

    /// A bad process name is bad usage (exit 64), found before the store is opened.
    func validate() throws {
        do { try Store.validate(processName: process) } catch let error as OutliveError {
            throw ValidationError("--process: \(error.message)")
        }
    }

    func open() throws -> OutliveStore {
        do {
            return try OutliveStore(path: directory, processName: process, loop: nil)
        } catch let error as OutliveError {
            throw CommandFailure(error)
        }
    }
}

/// An OutliveError as a message on stderr and a meaningful exit status.
struct CommandFailure: Error, CustomStringConvertible {
    let error: OutliveError
    init(_ error: OutliveError) { self.error = error }
    var description: String { "outlive: \(error.message)" }
    var exitCode: ExitCode { error.code == .notFound ? ExitCode(3) : .failure }
}

extension ParsableCommand {
    /// Runs body, turning core errors into a message and an exit status.
    func reporting(_ body: () throws -> Void) throws {
        do {
            try body()
        } catch let failure as CommandFailure {
            printError(failure.description)
            throw failure.exitCode
        } catch let error as OutliveError {
            printError("outlive: \(error.message)")
            throw CommandFailure(error).exitCode
        }
    }
}

func printError(_ text: String) {
    var standardError = StandardError()
    print(terminalSafe(text), to: &standardError)
}

struct StandardError: TextOutputStream {
    mutating func write(_ string: String) {
        _ = string.withCString { fputs($0, stderr) }
    }
}
