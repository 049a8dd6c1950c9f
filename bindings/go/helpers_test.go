package outlive

import (
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// openStore opens a store in a fresh directory of the test, closed at its end.
func openStore(t *testing.T, process string) (*Store, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "store")
	store, err := Open(dir, process, nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { store.Close() })
	return store, dir
}

// dispatchUntil dispatches the store's loop until done() holds; it fails the
// test after a generous bound (a hang, not a timing assertion).
func dispatchUntil(t *testing.T, store *Store, what string, done func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !done() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		if err := store.Loop().Dispatch(50 * time.Millisecond); err != nil {
			t.Fatalf("Dispatch: %v", err)
		}
	}
}

// wantStatus fails unless err is a library error with that status and a message.
func wantStatus(t *testing.T, err error, status Status) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Status != status || e.Message == "" || e.Message == "no error" {
		t.Fatalf("want %v with a message, got %v", status, err)
	}
	if !errors.Is(err, status) {
		t.Fatalf("errors.Is(%v, %v) is false", err, status)
	}
}
