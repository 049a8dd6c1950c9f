//! The background task queue: durable work (a handler) run later, in order,
//! in whichever process resolves its handler, retried until it succeeds.
//! Named queues, priorities, due times and cancelling: task_queues.rs.
use crate::error::{check, Result};
use crate::handler::HandlerView;
use crate::store::Store;
use crate::text::{borrowed, c_opt, c_string, id_from_buffer, opt_ptr};
use outlive_sys as sys;
use std::ffi::{c_char, CString};
use std::time::Duration;

/// Where a task stands (`outlive_task_state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskState {
    Pending,
    Running,
    Dead,
}

/// One task of a listing (a snapshot).
#[derive(Clone, Debug, PartialEq)]
pub struct TaskInfo {
    pub id: String,
    pub handler_name: String,
    pub state: TaskState,
    pub attempts: u32,
    pub last_error: Option<String>,
    /// Seconds since the epoch when a pending task waits for its backoff; 0 otherwise.
    pub next_attempt: f64,
    pub created: f64,
    pub group_start: Option<String>,
    pub group_members: Vec<String>,
    /// The queue's name ("default" unless added to another by `enqueue`).
    pub queue: String,
    pub priority: i32,
    pub unique_key: Option<String>,
    /// A running task cancelled during its attempt.
    pub cancelled: bool,
}

/// How a handle's runs retry (`outlive_task_policy`); `Default` is the library's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TaskPolicy {
    pub initial_backoff: Duration,
    pub max_backoff: Duration,
    pub max_attempts: u32,
    pub timeout: Duration,
    pub max_age: Duration,
}

impl Default for TaskPolicy {
    fn default() -> Self {
        let init = sys::OUTLIVE_TASK_POLICY_INIT;
        TaskPolicy {
            initial_backoff: Duration::from_secs_f64(init.initial_backoff),
            max_backoff: Duration::from_secs_f64(init.max_backoff),
            max_attempts: init.max_attempts,
            timeout: Duration::from_secs_f64(init.timeout),
            max_age: Duration::from_secs_f64(init.max_age),
        }
    }
}

impl Store {
    /// Adds a task that calls (a copy of) `work`; returns its id.
    pub fn task_add(&self, work: &HandlerView) -> Result<String> {
        self.task_add_grouped(work, None, &[])
    }

    /// Adds a task that starts the group `group_start` (if any) and is a
    /// member of `group_members`: a member never runs while a task that starts
    /// one of its groups is stored.
    pub fn task_add_grouped(
        &self,
        work: &HandlerView,
        group_start: Option<&str>,
        group_members: &[&str],
    ) -> Result<String> {
        let group_start = c_opt(group_start)?;
        let members = group_members.iter().map(|m| c_string(m)).collect::<Result<Vec<CString>>>()?;
        let pointers: Vec<*const c_char> = members.iter().map(|m| m.as_ptr()).collect();
        let mut id = [0 as c_char; sys::OUTLIVE_ID_SIZE];
        check(unsafe {
            sys::outlive_task_add(
                self.raw(),
                work.raw(),
                opt_ptr(&group_start),
                if pointers.is_empty() { std::ptr::null() } else { pointers.as_ptr() },
                pointers.len(),
                id.as_mut_ptr(),
            )
        })?;
        Ok(id_from_buffer(&id))
    }

    /// Asks for a run at the next dispatch of the store's loop (or as soon as
    /// another process's run ends).
    pub fn tasks_run_now(&self) -> Result<()> {
        check(unsafe { sys::outlive_tasks_run_now(self.raw()) })
    }

    /// Tasks not yet done (dead ones excluded).
    pub fn tasks_count(&self) -> Result<usize> {
        let mut count = 0;
        check(unsafe { sys::outlive_tasks_count(self.raw(), &mut count) })?;
        Ok(count)
    }

    pub fn tasks_count_dead(&self) -> Result<usize> {
        let mut count = 0;
        check(unsafe { sys::outlive_tasks_count_dead(self.raw(), &mut count) })?;
        Ok(count)
    }

    /// Tasks in queue order after the task `after` (None: from the first), at
    /// most `limit` (0: no limit).
    pub fn tasks_list(&self, after: Option<&str>, limit: usize) -> Result<Vec<TaskInfo>> {
        let after = c_opt(after)?;
        let mut list = std::ptr::null_mut();
        check(unsafe { sys::outlive_task_list_new(self.raw(), opt_ptr(&after), limit, &mut list) })?;
        let text = |p: *const c_char| unsafe { borrowed(p) }.map(str::to_string);
        let tasks = (0..unsafe { sys::outlive_task_list_count(list) })
            .map(|i| unsafe {
                TaskInfo {
                    id: text(sys::outlive_task_list_id(list, i)).unwrap_or_default(),
                    handler_name: text(sys::outlive_task_list_handler_name(list, i)).unwrap_or_default(),
                    state: match sys::outlive_task_list_state(list, i) {
                        sys::OUTLIVE_TASK_RUNNING => TaskState::Running,
                        sys::OUTLIVE_TASK_DEAD => TaskState::Dead,
                        _ => TaskState::Pending,
                    },
                    attempts: sys::outlive_task_list_attempts(list, i),
                    last_error: text(sys::outlive_task_list_last_error(list, i)),
                    next_attempt: sys::outlive_task_list_next_attempt(list, i),
                    created: sys::outlive_task_list_created(list, i),
                    group_start: text(sys::outlive_task_list_group_start(list, i)),
                    group_members: (0..sys::outlive_task_list_group_member_count(list, i))
                        .filter_map(|m| text(sys::outlive_task_list_group_member(list, i, m)))
                        .collect(),
                    queue: text(sys::outlive_task_list_queue(list, i)).unwrap_or_default(),
                    priority: sys::outlive_task_list_priority(list, i),
                    unique_key: text(sys::outlive_task_list_unique_key(list, i)),
                    cancelled: sys::outlive_task_list_cancelled(list, i),
                }
            })
            .collect();
        unsafe { sys::outlive_task_list_free(list) };
        Ok(tasks)
    }

    /// Makes a dead or waiting task due now, its attempts reset.
    pub fn task_retry(&self, task_id: &str) -> Result<()> {
        let id = c_string(task_id)?;
        check(unsafe { sys::outlive_task_retry(self.raw(), id.as_ptr()) })
    }

    /// Deletes a task that is not running.
    pub fn task_delete(&self, task_id: &str) -> Result<()> {
        let id = c_string(task_id)?;
        check(unsafe { sys::outlive_task_delete(self.raw(), id.as_ptr()) })
    }

    /// This handle's triggers: a run starts when it sees `pending_count` tasks
    /// pending (0: never by count) and `delay` after it sees a task added.
    pub fn tasks_set_triggers(&self, pending_count: usize, delay: Duration) -> Result<()> {
        check(unsafe { sys::outlive_tasks_set_triggers(self.raw(), pending_count, delay.as_secs_f64()) })
    }

    pub fn tasks_set_policy(&self, policy: &TaskPolicy) -> Result<()> {
        let raw = sys::outlive_task_policy {
            version: sys::OUTLIVE_TASK_POLICY_VERSION,
            initial_backoff: policy.initial_backoff.as_secs_f64(),
            max_backoff: policy.max_backoff.as_secs_f64(),
            max_attempts: policy.max_attempts,
            timeout: policy.timeout.as_secs_f64(),
            max_age: policy.max_age.as_secs_f64(),
        };
        check(unsafe { sys::outlive_tasks_set_policy(self.raw(), &raw) })
    }

    /// How many attempts this handle's runs keep in flight (1 to 1024).
    pub fn tasks_set_concurrency(&self, max_in_flight: usize) -> Result<()> {
        check(unsafe { sys::outlive_tasks_set_concurrency(self.raw(), max_in_flight) })
    }

    /// At most how many tasks a run claims and ends in one transaction (1 to
    /// 1024, default 32); a crash reruns at most that batch.
    pub fn tasks_set_completion_batch(&self, max_tasks: usize) -> Result<()> {
        check(unsafe { sys::outlive_tasks_set_completion_batch(self.raw(), max_tasks) })
    }
}
