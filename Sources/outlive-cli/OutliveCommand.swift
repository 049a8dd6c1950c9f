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
        subcommands: [InspectCommand.self, KeyValueCommand.self, TasksCommand.self, MessagesCommand.self, SignalsCommand.self,
                      HandlersCommand.self, WorkerCommand.self]
    )
}

/// Options every command that opens a store shares.
struct StoreOptionsGroup: ParsableArguments {
    @ArgumentParser.Argument(help: "The store directory.")
    var directory: String

    @Flag(help: "Print JSON instead of a table.")
    var json = false

    @Option(help: "The process name this command registers as while it has the store open.")
    var process = "outlive-cli"

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
    print(text, to: &standardError)
}

struct StandardError: TextOutputStream {
    mutating func write(_ string: String) {
        _ = string.withCString { fputs($0, stderr) }
    }
}
