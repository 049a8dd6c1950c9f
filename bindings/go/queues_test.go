package outlive

import (
	"testing"
	"time"
)

func TestANamedQueueRunsHigherPrioritiesFirstAndAUniqueKeyAddsOnce(t *testing.T) {
	store, _ := openStore(t, "go-queues")
	var ran []string
	RegisterHandler("go.test.queued", "ID label", func(c *Call) error {
		ran = append(ran, c.String("label"))
		return nil
	})
	if err := store.Tasks.DeclareQueue("reports", QueueOrdered); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, store.Tasks.DeclareQueue("reports", QueueParallel), StatusState)
	wantStatus(t, store.Tasks.ServeQueue("never-declared", 1), StatusNotFound)
	ids := map[string]string{}
	for _, job := range []struct {
		label    string
		priority int32
	}{{"low", 1}, {"high", 5}, {"middle", 3}} {
		work, _ := NewHandler("go.test.queued", Args{{"label", job.label}})
		id, existing, err := store.Tasks.Enqueue(work, &EnqueueOptions{Queue: "reports", Priority: job.priority,
			UniqueKey: "report:" + job.label})
		ids[job.label] = id
		work.Free()
		if err != nil || existing {
			t.Fatalf("Enqueue %s: %v %v", job.label, existing, err)
		}
	}
	again, _ := NewHandler("go.test.queued", Args{{"label", "high again"}})
	defer again.Free()
	id, existing, err := store.Tasks.Enqueue(again, &EnqueueOptions{Queue: "reports", UniqueKey: "report:high"})
	if err != nil || !existing || id != ids["high"] {
		t.Fatalf("a held key: %q %v %v (holder %q)", id, existing, err, ids["high"])
	}
	if err := store.Tasks.ServeQueue("reports", 1); err != nil {
		t.Fatal(err)
	}
	dispatchUntil(t, store, "three tasks", func() bool { return len(ran) == 3 })
	if ran[0] != "high" || ran[1] != "middle" || ran[2] != "low" {
		t.Fatalf("ran %q", ran)
	}
}

func TestAPendingTaskCancelledNeverRuns(t *testing.T) {
	store, _ := openStore(t, "go-queues")
	RegisterHandler("go.test.never", "", func(*Call) error { t.Error("a cancelled task ran"); return nil })
	work, _ := NewHandler("go.test.never", nil)
	defer work.Free()
	id, _, err := store.Tasks.Enqueue(work, &EnqueueOptions{Delay: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if cancelled, err := store.Tasks.IsCancelled(id); err != nil || cancelled {
		t.Fatalf("IsCancelled: %v %v", cancelled, err)
	}
	if running, err := store.Tasks.Cancel(id); err != nil || running {
		t.Fatalf("Cancel: %v %v", running, err)
	}
	if n, _ := store.Tasks.Count(); n != 0 {
		t.Fatalf("%d tasks left", n)
	}
	_, err = store.Tasks.Cancel(id)
	wantStatus(t, err, StatusNotFound)
	_, _, err = store.Tasks.Enqueue(work, &EnqueueOptions{DueAt: time.Now(), Delay: time.Second})
	wantStatus(t, err, StatusInvalidArgument)
}
