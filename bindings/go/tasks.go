package outlive

// #include "shim.h"
import "C"

import (
	"math"
	"runtime"
	"time"
	"unsafe"
)

// Tasks is the store's durable background queue: each task is a handler run
// later, in order, by whichever process resolves it, retried until it succeeds.
type Tasks struct{ s *Store }

// TaskOptions are a task's groups: GroupStart, the group it starts (""
// none); GroupMembers, the groups it is a member of (a member never runs
// while a task starting one of its groups is stored).
type TaskOptions struct {
	GroupStart   string
	GroupMembers []string
}

// Add stores a task that calls work (copied: the caller keeps and frees
// work); opts may be nil. Returns the task's id.
func (t Tasks) Add(work *Handler, opts *TaskOptions) (string, error) {
	const op = "outlive_task_add"
	store, err := t.s.handle(op)
	if err != nil {
		return "", err
	}
	if err := work.valid(op); err != nil {
		return "", err
	}
	var strs cStrings
	defer strs.free()
	var groupStart *C.char
	var members **C.char
	var count int
	if opts != nil {
		var ok bool
		if groupStart, ok = strs.optional(opts.GroupStart); !ok {
			return "", invalid(op, "a NUL byte in the group start")
		}
		if count = len(opts.GroupMembers); count > 0 {
			// A C array: it holds pointers, so it cannot be Go memory.
			array := C.malloc(C.size_t(count) * C.size_t(unsafe.Sizeof((*C.char)(nil))))
			defer C.free(array)
			slice := unsafe.Slice((**C.char)(array), count)
			for i, member := range opts.GroupMembers {
				if slice[i], ok = strs.of(member); !ok {
					return "", invalid(op, "a NUL byte in group member %d", i)
				}
			}
			members = (**C.char)(array)
		}
	}
	var id [C.OUTLIVE_ID_SIZE]C.char
	err = check(op, func() C.outlive_status {
		return C.outlive_task_add(store, work.ptr, groupStart, members, C.size_t(count), &id[0])
	})
	runtime.KeepAlive(work) // its finalizer must not free it during the call
	if err != nil {
		return "", err
	}
	return idString(&id), nil
}

// RunNow asks for a run at the loop's next dispatch (or when another
// process's run ends).
func (t Tasks) RunNow() error {
	const op = "outlive_tasks_run_now"
	store, err := t.s.handle(op)
	if err != nil {
		return err
	}
	return check(op, func() C.outlive_status { return C.outlive_tasks_run_now(store) })
}

// SetTriggers: a run starts when this handle sees pendingCount tasks (0:
// never by count) and delay after it sees a task added by any process.
func (t Tasks) SetTriggers(pendingCount int, delay time.Duration) error {
	const op = "outlive_tasks_set_triggers"
	store, err := t.s.handle(op)
	if err != nil {
		return err
	}
	if pendingCount < 0 {
		return invalid(op, "a negative pending count")
	}
	return check(op, func() C.outlive_status {
		return C.outlive_tasks_set_triggers(store, C.size_t(pendingCount), C.double(delay.Seconds()))
	})
}

// Policy is how this handle's runs retry (outlive_task_policy). DefaultPolicy
// holds the library's defaults.
type Policy struct {
	InitialBackoff time.Duration
	MaxBackoff     time.Duration
	MaxAttempts    uint32
	Timeout        time.Duration
	MaxAge         time.Duration
}

// DefaultPolicy is OUTLIVE_TASK_POLICY_INIT.
var DefaultPolicy = Policy{time.Second, time.Hour, 20, time.Minute, 72 * time.Hour}

// SetPolicy sets the policy this handle's runs apply.
func (t Tasks) SetPolicy(p Policy) error {
	const op = "outlive_tasks_set_policy"
	store, err := t.s.handle(op)
	if err != nil {
		return err
	}
	policy := C.outlive_task_policy{version: C.OUTLIVE_TASK_POLICY_VERSION,
		initial_backoff: C.double(p.InitialBackoff.Seconds()), max_backoff: C.double(p.MaxBackoff.Seconds()),
		max_attempts: C.uint32_t(p.MaxAttempts), timeout: C.double(p.Timeout.Seconds()), max_age: C.double(p.MaxAge.Seconds())}
	return check(op, func() C.outlive_status { return C.outlive_tasks_set_policy(store, &policy) })
}

// SetConcurrency is how many attempts this handle keeps in flight (1 to 1024).
func (t Tasks) SetConcurrency(maxInFlight int) error {
	const op = "outlive_tasks_set_concurrency"
	store, err := t.s.handle(op)
	if err != nil {
		return err
	}
	if maxInFlight < 0 {
		return invalid(op, "a negative concurrency")
	}
	return check(op, func() C.outlive_status { return C.outlive_tasks_set_concurrency(store, C.size_t(maxInFlight)) })
}

// SetCompletionBatch is at most how many tasks a run claims and ends in one
// transaction (1 to 1024, default 32); a crash reruns at most that batch.
func (t Tasks) SetCompletionBatch(maxTasks int) error {
	const op = "outlive_tasks_set_completion_batch"
	store, err := t.s.handle(op)
	if err != nil {
		return err
	}
	if maxTasks < 0 {
		return invalid(op, "a negative batch")
	}
	return check(op, func() C.outlive_status { return C.outlive_tasks_set_completion_batch(store, C.size_t(maxTasks)) })
}

// Count is the number of tasks not yet done, dead ones excluded.
func (t Tasks) Count() (int, error) {
	const op = "outlive_tasks_count"
	store, err := t.s.handle(op)
	if err != nil {
		return 0, err
	}
	var count C.size_t
	err = check(op, func() C.outlive_status { return C.outlive_tasks_count(store, &count) })
	return int(count), err
}

// CountDead is the number of dead tasks.
func (t Tasks) CountDead() (int, error) {
	const op = "outlive_tasks_count_dead"
	store, err := t.s.handle(op)
	if err != nil {
		return 0, err
	}
	var count C.size_t
	err = check(op, func() C.outlive_status { return C.outlive_tasks_count_dead(store, &count) })
	return int(count), err
}

// TaskState is a listed task's state.
type TaskState int

const (
	TaskPending TaskState = C.OUTLIVE_TASK_PENDING
	TaskRunning TaskState = C.OUTLIVE_TASK_RUNNING
	TaskDead    TaskState = C.OUTLIVE_TASK_DEAD
)

// TaskInfo is one listed task.
type TaskInfo struct {
	ID           string
	HandlerName  string
	State        TaskState
	Attempts     uint32
	LastError    string    // "" when no attempt failed
	NextAttempt  time.Time // zero when due now, running or dead
	Created      time.Time
	GroupStart   string
	GroupMembers []string
}

func epoch(seconds C.double) time.Time {
	if seconds == 0 {
		return time.Time{}
	}
	whole, fraction := math.Modf(float64(seconds))
	return time.Unix(int64(whole), int64(fraction*1e9))
}

// List lists tasks in queue order after the task `after` ("": from the
// first), at most limit (0: no limit).
func (t Tasks) List(after string, limit int) ([]TaskInfo, error) {
	const op = "outlive_task_list_new"
	store, err := t.s.handle(op)
	if err != nil {
		return nil, err
	}
	if limit < 0 {
		return nil, invalid(op, "a negative limit")
	}
	var strs cStrings
	defer strs.free()
	cAfter, ok := strs.optional(after)
	if !ok {
		return nil, invalid(op, "a NUL byte in after")
	}
	var list *C.outlive_task_list
	if err := check(op, func() C.outlive_status { return C.outlive_task_list_new(store, cAfter, C.size_t(limit), &list) }); err != nil {
		return nil, err
	}
	defer C.outlive_task_list_free(list)
	tasks := make([]TaskInfo, int(C.outlive_task_list_count(list)))
	for i := range tasks {
		index := C.size_t(i)
		info := &tasks[i]
		info.ID = C.GoString(C.outlive_task_list_id(list, index))
		info.HandlerName = C.GoString(C.outlive_task_list_handler_name(list, index))
		info.State = TaskState(C.outlive_task_list_state(list, index))
		info.Attempts = uint32(C.outlive_task_list_attempts(list, index))
		info.LastError, _ = goString(C.outlive_task_list_last_error(list, index))
		info.NextAttempt = epoch(C.outlive_task_list_next_attempt(list, index))
		info.Created = epoch(C.outlive_task_list_created(list, index))
		info.GroupStart, _ = goString(C.outlive_task_list_group_start(list, index))
		for m := C.size_t(0); m < C.outlive_task_list_group_member_count(list, index); m++ {
			info.GroupMembers = append(info.GroupMembers, C.GoString(C.outlive_task_list_group_member(list, index, m)))
		}
	}
	return tasks, nil
}

// Retry makes a dead or waiting task due now, its attempts reset.
func (t Tasks) Retry(taskID string) error { return t.byID("outlive_task_retry", taskID) }

// Delete deletes a task that is not running.
func (t Tasks) Delete(taskID string) error { return t.byID("outlive_task_delete", taskID) }

func (t Tasks) byID(op, taskID string) error {
	store, err := t.s.handle(op)
	if err != nil {
		return err
	}
	var strs cStrings
	defer strs.free()
	cID, ok := strs.of(taskID)
	if !ok {
		return invalid(op, "a NUL byte in the task id")
	}
	return check(op, func() C.outlive_status {
		if op == "outlive_task_retry" {
			return C.outlive_task_retry(store, cID)
		}
		return C.outlive_task_delete(store, cID)
	})
}
