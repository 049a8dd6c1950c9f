import COutliveAPI
import OutliveCore

// An outlive_interaction * is the interaction's token (a number, never memory):
// see Interaction. Finishing a stale token is therefore safe.

private func token(_ interaction: Interaction) -> OpaquePointer? {
    OpaquePointer(bitPattern: UInt(truncatingIfNeeded: interaction.token))
}

@c @implementation
public func outlive_interactions_new(_ loop: OpaquePointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> outlive_status {
    guarded {
        let loop = try borrow(loop, Loop.self, "loop")
        let out = try required(out, "out")
        try loop.checkUsable()
        out.pointee = retain(InteractionQueue(loop: loop))
    }
}

@c @implementation
public func outlive_interactions_free(_ queue: OpaquePointer?) {
    guard let object = borrowIfPresent(queue, InteractionQueue.self) else { return }
    object.close()
    release(queue, InteractionQueue.self)
}

@c @implementation
public func outlive_interactions_add(_ queue: OpaquePointer?, _ run: outlive_interaction_fn?,
                                                  _ context: UnsafeMutableRawPointer?,
                                                  _ releaseContext: (@convention(c) (UnsafeMutableRawPointer?) -> Void)?) -> outlive_status {
    guarded {
        let queue = try borrow(queue, InteractionQueue.self, "queue")
        let run = try required(run, "run")
        // Created only once the arguments are valid: a failed add releases nothing.
        let caller = CallerContext(context, release: releaseContext)
        do {
            try queue.add { interaction in run(token(interaction), caller.pointer) }
        } catch {
            caller.disarm()
            throw error
        }
    }
}

@c @implementation
public func outlive_interactions_suspend(_ queue: OpaquePointer?) -> outlive_status {
    guarded { try borrow(queue, InteractionQueue.self, "queue").suspend() }
}

@c @implementation
public func outlive_interactions_resume(_ queue: OpaquePointer?) -> outlive_status {
    guarded { try borrow(queue, InteractionQueue.self, "queue").resume() }
}

@c @implementation
public func outlive_interaction_finish(_ interaction: OpaquePointer?) -> outlive_status {
    guarded {
        let interaction = try required(interaction, "interaction")
        try Interaction.finish(token: UInt64(UInt(bitPattern: interaction)))
    }
}

@c @implementation
public func outlive_interactions_unfinished(_ queue: OpaquePointer?) -> Int {
    borrowIfPresent(queue, InteractionQueue.self)?.unfinishedCount ?? 0
}

@c @implementation
public func outlive_interactions_set_stall_report(_ queue: OpaquePointer?, _ seconds: Double,
                                                  _ report: outlive_interaction_stall_fn?, _ context: UnsafeMutableRawPointer?,
                                                  _ releaseContext: (@convention(c) (UnsafeMutableRawPointer?) -> Void)?) -> outlive_status {
    guarded {
        let queue = try borrow(queue, InteractionQueue.self, "queue")
        let caller = CallerContext(context, release: releaseContext)
        do {
            try queue.setStallReport(after: seconds, report.map { report in
                { interaction, seconds in report(token(interaction), seconds, caller.pointer) }
            })
        } catch {
            caller.disarm()
            throw error
        }
    }
}
