/// A started interaction of an `InteractionQueue`. It is finished exactly once,
/// from any thread, through its token.
///
/// The token is a number, never reused in the process, that names the
/// interaction while it runs: `Interaction.finish(token:)` looks it up in the
/// table of running interactions and removes it in one step, so a second finish
/// (or a finish of a number that was never a token) finds nothing and fails with
/// `.state`, without touching freed memory. That is what lets the C API hand
/// out the token as an opaque pointer that stays safe to finish forever.
public final class Interaction {
    public let token: UInt64
    let queue: InteractionQueue
    // Guarded by `queue`'s lock: the work (and the caller's context it holds)
    // lives until the interaction is finished.
    var work: InteractionQueue.Work?
    var stallTimer: UInt64?

    init(token: UInt64, queue: InteractionQueue, work: @escaping InteractionQueue.Work) {
        self.token = token
        self.queue = queue
        self.work = work
    }

    /// Marks the interaction finished, so the queue starts the next one on its
    /// loop. Any thread. Throws `.state` when it was finished already.
    public func finish() throws {
        try Interaction.finish(token: token)
    }

    /// True until the interaction is finished.
    public var isRunning: Bool {
        RunningInteractions.shared.contains(token)
    }

    /// Finishes the running interaction named by `token`. Any thread.
    public static func finish(token: UInt64) throws {
        if let interaction = RunningInteractions.shared.value(for: token) { try interaction.queue.loop.checkUsable() }
        guard let interaction = RunningInteractions.shared.remove(token) else {
            throw OutliveError.state("interaction \(token) is not running: it was finished already (or is no interaction token)")
        }
        interaction.queue.finished(interaction)
    }
}

/// The process-wide table of running interactions, by token.
enum RunningInteractions {
    static let shared = TokenTable<UInt64, Interaction>()
}
