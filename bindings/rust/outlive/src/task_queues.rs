//! Named task queues: declared once in the store, served by the handles that
//! say so, fed by `enqueue` with a priority, a due time and a unique key.
use crate::error::{check, Error, Result};
use crate::handler::HandlerView;
use crate::store::Store;
use crate::text::{c_opt, c_string, id_from_buffer, opt_ptr};
use outlive_sys as sys;
use std::ffi::c_char;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How a queue runs its tasks (`outlive_queue_kind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueKind {
    /// One runner at a time across all processes, tasks started in order
    /// (priority, then order of addition), groups honoured.
    Ordered,
    /// Every serving handle runs up to its own limit at once.
    Parallel,
}

/// How `Store::enqueue` adds a task; `TaskOptions::new()` is every default
/// (the queue "default", priority 0, due now, no unique key).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TaskOptions {
    queue: Option<String>,
    priority: i32,
    due_at: Option<SystemTime>,
    delay: Option<Duration>,
    unique_key: Option<String>,
}

impl TaskOptions {
    pub fn new() -> TaskOptions {
        TaskOptions::default()
    }

    /// A declared queue (`Store::declare_queue`).
    pub fn queue(mut self, name: &str) -> Self {
        self.queue = Some(name.to_string());
        self
    }

    /// Higher starts first; ties in order of addition.
    pub fn priority(mut self, priority: i32) -> Self {
        self.priority = priority;
        self
    }

    /// Not started before `time` (not with `delay`).
    pub fn due_at(mut self, time: SystemTime) -> Self {
        self.due_at = Some(time);
        self
    }

    /// Not started before `delay` from the call (not with `due_at`).
    pub fn delay(mut self, delay: Duration) -> Self {
        self.delay = Some(delay);
        self
    }

    /// At most one pending or running task of the queue holds `key`: adding
    /// another adds nothing and returns the holder's id.
    pub fn unique_key(mut self, key: &str) -> Self {
        self.unique_key = Some(key.to_string());
        self
    }
}

/// One declared queue of a listing (a snapshot; counts from the store's counters).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueueInfo {
    pub name: String,
    pub kind: QueueKind,
    pub pending: usize,
    pub running: usize,
    pub dead: usize,
}

impl Store {
    /// Declares the queue `name` (1 to 128 bytes of `[A-Za-z0-9_.:-]`) for
    /// every process of the store. Declaring it again with the same kind does
    /// nothing; with the other kind it is `Status::State`.
    pub fn declare_queue(&self, name: &str, kind: QueueKind) -> Result<()> {
        let name = c_string(name)?;
        let kind = match kind {
            QueueKind::Ordered => sys::OUTLIVE_QUEUE_ORDERED,
            QueueKind::Parallel => sys::OUTLIVE_QUEUE_PARALLEL,
        };
        check(unsafe { sys::outlive_queue_declare(self.raw(), name.as_ptr(), kind) })
    }

    /// Runs the declared queue `name` on this handle, at most `limit` (1 to
    /// 1024) of its tasks at once, as soon as they are due; 0 stops serving
    /// it. Per handle, not stored. `serve_queue("default", 0)` makes a handle
    /// that only adds tasks.
    pub fn serve_queue(&self, name: &str, limit: usize) -> Result<()> {
        let name = c_string(name)?;
        check(unsafe { sys::outlive_queue_serve(self.raw(), name.as_ptr(), limit) })
    }

    /// Adds a task that calls (a copy of) `work` as `options` say. Returns its
    /// id and false; or, when the options' unique key is held by a pending or
    /// running task of the queue, that task's id and true (nothing added).
    pub fn enqueue(&self, work: &HandlerView, options: &TaskOptions) -> Result<(String, bool)> {
        let queue = c_opt(options.queue.as_deref())?;
        let unique_key = c_opt(options.unique_key.as_deref())?;
        let due_at = match options.due_at {
            None => 0.0,
            Some(time) => {
                time.duration_since(UNIX_EPOCH).map_err(|_| Error::invalid("due_at is before the epoch"))?.as_secs_f64()
            }
        };
        let raw = sys::outlive_task_options {
            queue: opt_ptr(&queue),
            priority: options.priority,
            due_at,
            delay_seconds: options.delay.map_or(0.0, |d| d.as_secs_f64()),
            unique_key: opt_ptr(&unique_key),
            ..sys::OUTLIVE_TASK_OPTIONS_INIT
        };
        let mut id = [0 as c_char; sys::OUTLIVE_ID_SIZE];
        let mut existing = false;
        check(unsafe { sys::outlive_task_enqueue(self.raw(), work.raw(), &raw, id.as_mut_ptr(), &mut existing) })?;
        Ok((id_from_buffer(&id), existing))
    }

    /// Cancels a task, from any process. A pending one is removed at once and
    /// never runs (returns false); a running one is marked cancelled (returns
    /// true): its handler learns it from `task_is_cancelled` and should stop,
    /// and however its attempt ends, the task is removed as cancelled.
    /// `Status::NotFound`: no such task (any more); `Status::State`: it is
    /// dead, or running and cancelled already.
    pub fn cancel_task(&self, task_id: &str) -> Result<bool> {
        let id = c_string(task_id)?;
        let mut running = false;
        check(unsafe { sys::outlive_task_cancel(self.raw(), id.as_ptr(), &mut running) })?;
        Ok(running)
    }

    /// Whether the running task `task_id` was cancelled: what its handler
    /// asks between steps of long work. `Status::NotFound` means the task is
    /// gone: stop as if cancelled.
    pub fn task_is_cancelled(&self, task_id: &str) -> Result<bool> {
        let id = c_string(task_id)?;
        let mut cancelled = false;
        check(unsafe { sys::outlive_task_is_cancelled(self.raw(), id.as_ptr(), &mut cancelled) })?;
        Ok(cancelled)
    }

    /// The declared queues in name order after `after` (None: from the
    /// first), at most `limit` (0: no limit).
    pub fn queues_list(&self, after: Option<&str>, limit: usize) -> Result<Vec<QueueInfo>> {
        let after = c_opt(after)?;
        let mut list = std::ptr::null_mut();
        check(unsafe { sys::outlive_queue_list_new(self.raw(), opt_ptr(&after), limit, &mut list) })?;
        let queues = (0..unsafe { sys::outlive_queue_list_count(list) })
            .map(|i| unsafe {
                QueueInfo {
                    name: crate::text::borrowed(sys::outlive_queue_list_name(list, i)).unwrap_or("").to_string(),
                    kind: match sys::outlive_queue_list_kind(list, i) {
                        sys::OUTLIVE_QUEUE_PARALLEL => QueueKind::Parallel,
                        _ => QueueKind::Ordered,
                    },
                    pending: sys::outlive_queue_list_pending(list, i),
                    running: sys::outlive_queue_list_running(list, i),
                    dead: sys::outlive_queue_list_dead(list, i),
                }
            })
            .collect();
        unsafe { sys::outlive_queue_list_free(list) };
        Ok(queues)
    }
}
