import ArgumentParser
import COutliveSystem
import OutliveCore

struct WorkerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "worker",
        abstract: "Run a store's durable work whose handlers live in the given libraries.",
        discussion: """
            Loads each handler library, opens the store as a run of --process, and dispatches until
            SIGTERM or SIGINT: it runs the tasks it can resolve (one runner across all processes),
            delivers any_process signal consumers, answers messages through their durable
            response handlers, and presents durable interaction queues (every queue, including
            those that appear later, or only those named with --queue; none with --no-interactions).
            Work whose handler no loaded library declares is left for a process that can. This is
            the way to run durable work as a service (see Examples/systemd/).
            """
    )

    @ArgumentParser.Argument(help: "The store: a directory, or a postgresql:// URI.")
    var directory: String

    @Option(name: .customLong("load"), help: "A handler library to load (by path; repeat for more).")
    var libraries: [String] = []

    @Option(help: "The process name to run as.")
    var process = "worker"

    @Option(name: .customLong("queue"), help: "A durable interaction queue to present (repeat for more; default: every queue).")
    var queues: [String] = []

    @Flag(help: "Present no durable interaction queue.")
    var noInteractions = false

    @Flag(help: "Exit once no task is pending and nothing happened for --idle-seconds.")
    var untilIdle = false

    @Option(help: "With --until-idle: how long nothing must happen before exiting.")
    var idleSeconds: Double = 1.0

    @Flag(help: "Print what the library reports (task runs, cleanups) on stderr.")
    var verbose = false

    func validate() throws {
        if noInteractions && !queues.isEmpty {
            throw ValidationError("--queue and --no-interactions exclude each other")
        }
        do { try Store.validate(processName: process) } catch let error as OutliveError {
            throw ValidationError("--process: \(error.message)")
        }
        for name in queues {
            do { try DurableInteractions.validate(queueName: name) } catch { throw ValidationError("--queue: \(error)") }
        }
    }

    func run() throws {
        try reporting {
            if verbose {
                Log.install({ level, message in printError("outlive worker: \(message)") }, level: .info)
            }
            for library in libraries {
                let path = library.contains("/") ? library : "./" + library
                try HandlerRegistry.shared.loadLibrary(path: path)
            }
            let store = try OutliveStore(path: directory, processName: process, loop: nil)
            defer { store.close() }
            let stop = try StopSignals()
            try store.loop.addSource(stop.fd) { stop.received = true }
            let presenter = noInteractions ? nil : try DurableQueuesPresenter(store, queues: queues)
            defer { presenter?.close() }
            try store.tasks.runNow()
            var lastActivity = Clock.monotonic()
            while !stop.received {
                let ran = try store.loop.dispatch(timeoutMilliseconds: untilIdle ? 100 : -1)
                if ran > 0 { lastActivity = Clock.monotonic() }
                if untilIdle, Clock.monotonic() - lastActivity >= idleSeconds, try store.tasks.pendingCount() == 0 {
                    break
                }
            }
            store.loop.removeSource(stop.fd)
        }
    }
}

/// SIGTERM and SIGINT as a readable fd for the loop (signalfd), so that a stop
/// request ends the dispatch loop between callbacks, never inside one.
final class StopSignals {
    let fd: Int32
    var received = false

    init() throws {
        var mask = sigset_t()
        sigemptyset(&mask)
        sigaddset(&mask, SIGTERM)
        sigaddset(&mask, SIGINT)
        sigprocmask(SIG_BLOCK, &mask, nil)
        fd = signalfd(-1, &mask, Int32(SFD_CLOEXEC | SFD_NONBLOCK))
        guard fd >= 0 else { throw OutliveError.system("signalfd") }
    }

    deinit { close(fd) }
}
