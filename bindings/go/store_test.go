package outlive

import (
	"context"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestOpenGivesARunIDAndTheProcessName(t *testing.T) {
	store, _ := openStore(t, "go-test")
	if len(store.RunID()) != 36 {
		t.Fatalf("run id %q", store.RunID())
	}
	if store.ProcessName() != "go-test" {
		t.Fatalf("process name %q", store.ProcessName())
	}
	if err := store.Check(); err != nil {
		t.Fatalf("an open handle of a live run: %v", err)
	}
	if Version() == "" || !strings.HasPrefix(Version(), "0.") {
		t.Fatalf("version %q", Version())
	}
}

func TestCheckOfAClosedStoreIsAStateError(t *testing.T) {
	store, _ := openStore(t, "go-test")
	store.Close()
	wantStatus(t, store.Check(), StatusState)
}

func TestOpenWithABadProcessNameIsInvalidArgumentWithTheLibrarysMessage(t *testing.T) {
	_, err := Open(filepath.Join(t.TempDir(), "s"), "bad/name", &Options{Durability: DurabilityNormal})
	wantStatus(t, err, StatusInvalidArgument)
}

func TestTheErrorMessageIsReadOnTheThreadOfTheFailingCall(t *testing.T) {
	// Many goroutines fail different calls at once; each must get its own message.
	store, _ := openStore(t, "go-test")
	done := make(chan error)
	for i := 0; i < 8; i++ {
		go func(i int) {
			for j := 0; j < 50; j++ {
				var err error
				if i%2 == 0 {
					_, err = store.KV.Get("missing")
					if StatusOf(err) != StatusNotFound || !strings.Contains(err.Error(), "missing") {
						done <- err
						return
					}
				} else {
					_, err = Open("", "x", nil)
					if StatusOf(err) != StatusInvalidArgument {
						done <- err
						return
					}
				}
				runtime.Gosched()
			}
			done <- nil
		}(i)
	}
	for i := 0; i < 8; i++ {
		if err := <-done; err != nil {
			t.Fatalf("wrong error: %v", err)
		}
	}
}

func TestCallsOnAClosedStoreAreStateErrors(t *testing.T) {
	store, _ := openStore(t, "go-test")
	store.Close()
	wantStatus(t, store.KV.Set("k", nil), StatusState)
	_, err := store.Tasks.Count()
	wantStatus(t, err, StatusState)
	if store.Close() != nil {
		t.Fatal("a second Close fails")
	}
}

func TestServeDispatchesUntilTheContextEnds(t *testing.T) {
	loop, err := NewLoop()
	if err != nil {
		t.Fatal(err)
	}
	defer loop.Free()
	store, err := Open(filepath.Join(t.TempDir(), "s"), "go-test", &Options{Loop: loop})
	if err != nil {
		t.Fatal(err)
	}
	seen := make(chan string, 1)
	if _, err := store.KV.Observe("", func(key string, _ []byte, _ bool) { seen <- key }); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error)
	go func() { served <- loop.Serve(ctx) }()
	if err := store.KV.Set("hello", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if key := <-seen; key != "hello" {
		t.Fatalf("observed %q", key)
	}
	cancel()
	if err := <-served; err != context.Canceled {
		t.Fatalf("Serve returned %v", err)
	}
	store.Close() // after Serve returned: the loop-thread rule
	_ = time.Second
}
