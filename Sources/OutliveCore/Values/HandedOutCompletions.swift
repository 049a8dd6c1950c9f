/// Task completions (`outlive.task_completion`, see `TaskCompletion`) that may
/// have left the code that received them, by their bound claim token.
///
/// A completion sent during its handler's own call, on its thread, ends the
/// attempt without a read of the task's row (`TaskQueue.completeInCall`): the
/// read is there only to refuse it when another completion of the attempt came
/// first, and another can exist only if the completion left that call. A
/// completion reaches another process only by its bytes (serialized: the
/// encoder notes it here), by its parts (its bound arguments or description
/// read through the C API: noted there) or by a fork (counted apart, in
/// `COutlive_parent_forks`); another thread of this process only calls it
/// through `TaskCompletion.complete`, which notes it before it writes.
/// Kept here, beside the encoder, so that the value layer needs nothing of the
/// tasks layer. Only the attempts running in this process are kept (from
/// `track` to `forget`, their begin and end): a process that passes other
/// processes' completions along keeps nothing of them.
public final class HandedOutCompletions: @unchecked Sendable {
    public static let shared = HandedOutCompletions()
    public static let handlerName = "outlive.task_completion"

    private let lock = Lock()
    // Guarded by `lock`: claim of an attempt running here → whether its completion left the call.
    private var claims: [String: Bool] = [:]

    /// An attempt of this process begins: its completion has not left yet.
    public func track(_ claim: String) {
        lock.withLock { claims[claim] = false }
    }

    /// Notes `handler` if it is the completion of an attempt running here.
    public func note(_ handler: Handler) {
        guard handler.name == HandedOutCompletions.handlerName,
              case .id(let id)? = handler.bound["claim"], let claim = id.string else { return }
        note(claim: claim)
    }

    public func note(claim: String) {
        lock.withLock { if claims[claim] != nil { claims[claim] = true } }
    }

    public func contains(_ claim: String) -> Bool {
        lock.withLock { claims[claim] == true }
    }

    public func forget(_ claim: String) {
        lock.withLock { _ = claims.removeValue(forKey: claim) }
    }
}
