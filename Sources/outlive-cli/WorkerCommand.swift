import ArgumentParser
import COutliveSystem
import OutliveCore

struct WorkerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "worker",
        abstract: "Run a store's durable work whose handlers live in the given libraries.",
        discussion: """
            Loads each handler library, opens the store as a run of --process, and dispatches until
            SIGTERM or SIGINT: it runs the tasks it can resolve of the task queues named with
            --queue NAME[=LIMIT] (default: the default queue, one task at a time), each as soon as
            it is due; delivers any_process signal consumers, answers messages through their
            durable response handlers, and presents durable interaction queues (every queue,
            including those that appear later, or only those named with --interaction-queue; none
            with --no-interactions).
            Work whose handler no loaded library declares is left for a process that can. This is
            the way to run durable work as a service (see Examples/systemd/).
            With --python MODULE, the worker is Python's instead: this command becomes
            `python3 -m outlive worker --store DIRECTORY MODULE...` (the interpreter: $OUTLIVE_PYTHON,
            default python3), which runs the tasks of the modules' @outlive.task functions.
            """
    )

    @ArgumentParser.Argument(help: "The store: a directory, or a postgresql:// URI.")
    var directory: String

    @Option(name: .customLong("load"), help: "A handler library to load (by path; repeat for more).")
    var libraries: [String] = []

    @Option(help: "The process name to run as.")
    var process = "worker"

    @Option(name: .customLong("queue"), help: ArgumentHelp("A task queue to run: NAME, or NAME=LIMIT to run up to LIMIT of its tasks at once (1 to \(TaskQueue.maxConcurrency); default 1). Repeat for more; default: the default queue.", valueName: "name[=limit]"))
    var taskQueues: [String] = []

    @Option(name: .customLong("interaction-queue"), help: "A durable interaction queue to present (repeat for more; default: every queue).")
    var queues: [String] = []

    @Flag(help: "Present no durable interaction queue.")
    var noInteractions = false

    @Flag(help: "Exit once no task is pending and nothing happened for --idle-seconds.")
    var untilIdle = false

    @Option(help: "With --until-idle: how long nothing must happen before exiting.")
    var idleSeconds: Double = 1.0

    @Flag(help: "Print what the library reports (task runs, cleanups) on stderr.")
    var verbose = false

    @Option(name: .customLong("python"), help: "A Python module whose task functions to run (repeat for more): runs python3 -m outlive worker instead.")
    var pythonModules: [String] = []

    /// The task queues to serve, with their limits, from --queue.
    func servedTaskQueues() throws -> [(name: String, limit: Int)] {
        var served: [(name: String, limit: Int)] = []
        for given in taskQueues {
            let parts = given.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            let name = parts[0]
            var limit = 1
            if parts.count == 2 {
                guard let number = Int(parts[1]), number >= 1, number <= TaskQueue.maxConcurrency else {
                    throw ValidationError("--queue \(terminalSafe(given)): the limit must be a number from 1 to \(TaskQueue.maxConcurrency)")
                }
                limit = number
            }
            do { try TaskQueueName.validate(name) } catch let error as OutliveError {
                throw ValidationError("--queue: \(error.message)")
            }
            guard !served.contains(where: { $0.name == name }) else { throw ValidationError("--queue \(name) is given twice") }
            served.append((name, limit))
        }
        return served.isEmpty ? [(TaskQueueName.default, 1)] : served
    }

    func validate() throws {
        if !pythonModules.isEmpty && (!libraries.isEmpty || !queues.isEmpty || !taskQueues.isEmpty || noInteractions) {
            throw ValidationError("--python runs Python's worker, which takes neither --load, --queue, --interaction-queue nor --no-interactions")
        }
        if noInteractions && !queues.isEmpty {
            throw ValidationError("--interaction-queue and --no-interactions exclude each other")
        }
        _ = try servedTaskQueues()
        do { try Store.validate(processName: process) } catch let error as OutliveError {
            throw ValidationError("--process: \(error.message)")
        }
        for name in queues {
            do { try DurableInteractions.validate(queueName: name) } catch { throw ValidationError("--interaction-queue: \(error)") }
        }
    }

    func run() throws {
        try reporting {
            if !pythonModules.isEmpty { try runPython() }
            if verbose {
                Log.install({ level, message in printError("outlive worker: \(message)") }, level: .info)
            }
            for library in libraries {
                let path = library.contains("/") ? library : "./" + library
                try HandlerRegistry.shared.loadLibrary(path: path)
            }
            let store = try OutliveStore(path: directory, processName: process, loop: nil)
            defer { store.close() }
            // A worker runs what it serves at once: no trigger delay.
            let served = try servedTaskQueues()
            if !served.contains(where: { $0.name == TaskQueueName.default }) { try store.tasks.serve(queue: TaskQueueName.default, limit: 0) }
            for queue in served { try store.tasks.serve(queue: queue.name, limit: queue.limit) }
            let stop = try StopSignals()
            try store.loop.addSource(stop.fd) { stop.received = true }
            let presenter = noInteractions ? nil : try DurableQueuesPresenter(store, queues: queues)
            defer { presenter?.close() }
            try store.tasks.runNow()
            var lastActivity = Clock.monotonic()
            while !stop.received {
                let ran = try store.loop.dispatch(timeoutMilliseconds: untilIdle ? 100 : -1)
                // A run that ended under the worker (PostgreSQL: its liveness
                // connection was lost) can do nothing more: exit with the reason,
                // so that a supervisor starts a worker that is a live run again.
                try store.store.checkUsable()
                if ran > 0 { lastActivity = Clock.monotonic() }
                if untilIdle, Clock.monotonic() - lastActivity >= idleSeconds,
                   try store.tasks.queues().allSatisfy({ queue in !served.contains { $0.name == queue.name } || queue.pending + queue.running == 0 }) {
                    break
                }
            }
            store.loop.removeSource(stop.fd)
        }
    }
}

extension WorkerCommand {
    /// Replaces this process with Python's worker, so that signals, the exit
    /// status and the process id are its own (as under systemd). Returns only
    /// by throwing, when the interpreter cannot be run.
    func runPython() throws {
        let python = getenv("OUTLIVE_PYTHON").map { String(cString: $0) } ?? "python3"
        var arguments = [python, "-m", "outlive", "worker", "--store", directory, "--process", process]
        if verbose { arguments.append("--verbose") }
        if untilIdle { arguments += ["--until-idle", "--idle-seconds", String(idleSeconds)] }
        arguments += ["--"] + pythonModules
        let pointers = arguments.map { strdup($0) } + [nil]
        defer { for pointer in pointers { free(pointer) } }
        execvp(python, pointers)
        throw OutliveError.system("cannot run \(python) (set OUTLIVE_PYTHON to the Python that has the outlive package)")
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
