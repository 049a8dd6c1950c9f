package outlive

import (
	"errors"
	"path/filepath"
	"testing"
	"time"
)

func TestATaskWithAGoHandlerRunsAndIsDeleted(t *testing.T) {
	store, _ := openStore(t, "go-tasks")
	var ran []string
	RegisterHandler("go.test.upload", "ID file, ID task_id, INTEGER attempt", func(c *Call) error {
		ran = append(ran, c.String("file"))
		if len(c.String("task_id")) != 36 || c.Int64("attempt") != 1 {
			t.Errorf("task_id %q attempt %d", c.String("task_id"), c.Int64("attempt"))
		}
		return nil
	})
	work, _ := NewHandler("go.test.upload", Args{{"file", "notes.txt"}})
	defer work.Free()
	id, err := store.Tasks.Add(work, nil)
	if err != nil || len(id) != 36 {
		t.Fatalf("Add: %q %v", id, err)
	}
	tasks, err := store.Tasks.List("", 0)
	if err != nil || len(tasks) != 1 || tasks[0].ID != id || tasks[0].HandlerName != "go.test.upload" ||
		tasks[0].State != TaskPending || tasks[0].Created.IsZero() {
		t.Fatalf("List: %+v %v", tasks, err)
	}
	store.Tasks.RunNow()
	dispatchUntil(t, store, "the task", func() bool { n, _ := store.Tasks.Count(); return n == 0 })
	if len(ran) != 1 || ran[0] != "notes.txt" {
		t.Fatalf("ran %q", ran)
	}
}

func TestAGoHandlersErrorFailsTheAttemptWithItsText(t *testing.T) {
	store, _ := openStore(t, "go-tasks")
	store.Tasks.SetPolicy(Policy{InitialBackoff: 10 * time.Millisecond, MaxBackoff: 20 * time.Millisecond,
		MaxAttempts: 2, Timeout: time.Minute, MaxAge: time.Hour})
	RegisterHandler("go.test.unavailable", "", func(*Call) error { return errors.New("server unavailable") })
	work, _ := NewHandler("go.test.unavailable", nil)
	defer work.Free()
	if _, err := store.Tasks.Add(work, &TaskOptions{GroupStart: "profile:A"}); err != nil {
		t.Fatal(err)
	}
	store.Tasks.RunNow()
	dispatchUntil(t, store, "the task to die", func() bool { n, _ := store.Tasks.CountDead(); return n == 1 })
	tasks, _ := store.Tasks.List("", 0)
	if len(tasks) != 1 || tasks[0].State != TaskDead || tasks[0].Attempts != 2 ||
		tasks[0].LastError != "server unavailable" || tasks[0].GroupStart != "profile:A" {
		t.Fatalf("%+v", tasks)
	}
	if err := store.Tasks.Delete(tasks[0].ID); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, store.Tasks.Delete(tasks[0].ID), StatusNotFound)
}

func TestAGoHandlerThatDeclaresCompletionEndsTheAttemptLater(t *testing.T) {
	store, _ := openStore(t, "go-tasks")
	completions := make(chan *Handler, 1)
	RegisterHandler("go.test.later", "HANDLER completion", func(c *Call) error {
		kept, err := c.Handler("completion").Copy()
		if err != nil {
			return err
		}
		completions <- kept
		return nil
	})
	work, _ := NewHandler("go.test.later", nil)
	defer work.Free()
	store.Tasks.Add(work, nil)
	store.Tasks.RunNow()
	var completion *Handler
	dispatchUntil(t, store, "the attempt to start", func() bool {
		select {
		case completion = <-completions:
			return true
		default:
			return false
		}
	})
	if n, _ := store.Tasks.Count(); n != 1 {
		t.Fatalf("%d tasks before completion", n)
	}
	done := make(chan error)
	go func() { done <- completion.Call(Args{{"success", true}}) }() // another goroutine, another thread
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	completion.Free()
	dispatchUntil(t, store, "the completion", func() bool { n, _ := store.Tasks.Count(); return n == 0 })
}

func TestGroupMembersWaitForTheirGroupStart(t *testing.T) {
	store, _ := openStore(t, "go-tasks")
	var order []string
	RegisterHandler("go.test.step", "ID name", func(c *Call) error { order = append(order, c.String("name")); return nil })
	member, _ := NewHandler("go.test.step", Args{{"name", "track"}})
	start, _ := NewHandler("go.test.step", Args{{"name", "identify"}})
	defer member.Free()
	defer start.Free()
	unresolved, _ := NewHandler("go.test.nobody_resolves_this", nil)
	defer unresolved.Free()
	// The group start comes after its member in the queue, held behind an
	// unresolved task of its own group: the member must not run first.
	if _, err := store.Tasks.Add(unresolved, &TaskOptions{GroupStart: "g"}); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Tasks.Add(member, &TaskOptions{GroupMembers: []string{"g", "h"}}); err != nil {
		t.Fatal(err)
	}
	tasks, _ := store.Tasks.List("", 0)
	if len(tasks) != 2 || len(tasks[1].GroupMembers) != 2 || tasks[1].GroupMembers[1] != "h" {
		t.Fatalf("%+v", tasks)
	}
	store.Tasks.RunNow()
	for i := 0; i < 5; i++ {
		store.Loop().Dispatch(20 * time.Millisecond)
	}
	if len(order) != 0 {
		t.Fatalf("a member ran while its group start is stored: %q", order)
	}
	store.Tasks.Delete(tasks[0].ID)
	store.Tasks.RunNow()
	dispatchUntil(t, store, "the member", func() bool { return len(order) == 1 })
}

func TestAGoTaskHandlerRunsOnTheLibrarysOwnLoopThread(t *testing.T) {
	// RunThread: callbacks run on a thread the library made, not a Go one;
	// cgo carries the Go handler over to it.
	loop, err := NewLoop()
	if err != nil {
		t.Fatal(err)
	}
	store, err := Open(filepath.Join(t.TempDir(), "s"), "go-threaded", &Options{Loop: loop})
	if err != nil {
		t.Fatal(err)
	}
	ran := make(chan string, 1)
	RegisterHandler("go.test.threaded", "ID file", func(c *Call) error { ran <- c.String("file"); return nil })
	if err := loop.RunThread(); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, loop.Dispatch(0), StatusState)
	work, _ := NewHandler("go.test.threaded", Args{{"file", "a.txt"}})
	defer work.Free()
	store.Tasks.Add(work, nil)
	store.Tasks.RunNow()
	select {
	case file := <-ran:
		if file != "a.txt" {
			t.Fatalf("ran with %q", file)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the task did not run on the loop's thread")
	}
	loop.Free() // stops the loop's thread first: the store is then closed while nothing dispatches
	store.Close()
}
