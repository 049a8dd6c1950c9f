package outlive

import (
	"bytes"
	"errors"
	"path/filepath"
	"strconv"
	"testing"
)

func TestKVSetGetDeleteCountAndKeys(t *testing.T) {
	store, _ := openStore(t, "go-test")
	for _, key := range []string{"a/1", "a/2", "b/1"} {
		if err := store.KV.Set(key, []byte("v-"+key)); err != nil {
			t.Fatal(err)
		}
	}
	value, err := store.KV.Get("a/2")
	if err != nil || string(value) != "v-a/2" {
		t.Fatalf("Get: %q %v", value, err)
	}
	if err := store.KV.Set("empty", nil); err != nil {
		t.Fatal(err)
	}
	if value, err := store.KV.Get("empty"); err != nil || len(value) != 0 {
		t.Fatalf("empty value: %q %v", value, err)
	}
	if n, err := store.KV.Count("a/"); err != nil || n != 2 {
		t.Fatalf("Count: %d %v", n, err)
	}
	keys, err := store.KV.Keys("a/", "a/1", 0)
	if err != nil || len(keys) != 1 || keys[0] != "a/2" {
		t.Fatalf("Keys after a/1: %v %v", keys, err)
	}
	if err := store.KV.Delete("a/1"); err != nil {
		t.Fatal(err)
	}
	_, err = store.KV.Get("a/1")
	wantStatus(t, err, StatusNotFound)
	wantStatus(t, store.KV.Delete("a/1"), StatusNotFound)
}

func TestKVKeyWithANulByteIsRefusedAndChangesNothing(t *testing.T) {
	store, _ := openStore(t, "go-test")
	wantStatus(t, store.KV.Set("a\x00b", []byte("x")), StatusInvalidArgument)
	if n, _ := store.KV.Count(""); n != 0 {
		t.Fatalf("%d keys stored", n)
	}
}

func TestObserverSeesChangesOfAnotherHandleAndDeletions(t *testing.T) {
	store, dir := openStore(t, "go-observer")
	other, err := Open(dir, "go-writer", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	type change struct {
		key, value string
		deleted    bool
	}
	var changes []change
	observation, err := store.KV.Observe("watched/", func(key string, value []byte, deleted bool) {
		changes = append(changes, change{key, string(value), deleted})
	})
	if err != nil {
		t.Fatal(err)
	}
	other.KV.Set("ignored", []byte("x"))
	other.KV.Set("watched/a", []byte("1"))
	dispatchUntil(t, store, "the set", func() bool { return len(changes) >= 1 })
	other.KV.Delete("watched/a")
	dispatchUntil(t, store, "the deletion", func() bool { return len(changes) >= 2 })
	if changes[0] != (change{"watched/a", "1", false}) || changes[1] != (change{"watched/a", "", true}) {
		t.Fatalf("changes %+v", changes)
	}
	if err := observation.Cancel(); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, observation.Cancel(), StatusNotFound)
}

func TestUpdateIsAReadModifyWriteAndAnErrorChangesNothing(t *testing.T) {
	store, _ := openStore(t, "go-test")
	increment := func(value []byte, exists bool) ([]byte, bool, error) {
		n := 0
		if exists {
			n, _ = strconv.Atoi(string(value))
		}
		return []byte(strconv.Itoa(n + 1)), false, nil
	}
	for i := 0; i < 3; i++ {
		if err := store.KV.Update("counter", increment); err != nil {
			t.Fatal(err)
		}
	}
	if value, _ := store.KV.Get("counter"); !bytes.Equal(value, []byte("3")) {
		t.Fatalf("counter %q", value)
	}
	refuse := errors.New("no")
	err := store.KV.Update("counter", func([]byte, bool) ([]byte, bool, error) { return []byte("9"), false, refuse })
	if err != refuse {
		t.Fatalf("Update returned %v", err)
	}
	if value, _ := store.KV.Get("counter"); !bytes.Equal(value, []byte("3")) {
		t.Fatalf("counter %q after a refused update", value)
	}
	if err := store.KV.Update("counter", func([]byte, bool) ([]byte, bool, error) { return nil, true, nil }); err != nil {
		t.Fatal(err)
	}
	_, err = store.KV.Get("counter")
	wantStatus(t, err, StatusNotFound)
}

func TestObserversAreReleasedWhenTheStoreCloses(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	store, err := Open(dir, "go-test", nil)
	if err != nil {
		t.Fatal(err)
	}
	before := liveHandles()
	for i := 0; i < 3; i++ {
		if _, err := store.KV.Observe("", func(string, []byte, bool) {}); err != nil {
			t.Fatal(err)
		}
	}
	if liveHandles() != before+3 {
		t.Fatalf("%d handles after observing, %d before", liveHandles(), before)
	}
	store.Close()
	if liveHandles() != before {
		t.Fatalf("%d handles after closing, %d before", liveHandles(), before)
	}
}

func TestAPanicInAnObserverComesOutOfDispatchAndTheStoreGoesOn(t *testing.T) {
	store, _ := openStore(t, "go-test")
	calls := 0
	store.KV.Observe("", func(key string, _ []byte, _ bool) {
		calls++
		if key == "bad" {
			panic("observer failed")
		}
	})
	store.KV.Set("bad", nil)
	recovered := func() (r any) {
		defer func() { r = recover() }()
		dispatchUntil(t, store, "the observer", func() bool { return calls >= 1 })
		return nil
	}()
	if recovered != "observer failed" {
		t.Fatalf("Dispatch raised %v", recovered)
	}
	store.KV.Set("good", nil)
	dispatchUntil(t, store, "the next change", func() bool { return calls >= 2 })
}

func TestAPanicInAnUpdateChangesNothingAndComesOutOfUpdate(t *testing.T) {
	store, _ := openStore(t, "go-test")
	store.KV.Set("k", []byte("1"))
	recovered := func() (r any) {
		defer func() { r = recover() }()
		store.KV.Update("k", func([]byte, bool) ([]byte, bool, error) { panic("modifier failed") })
		return nil
	}()
	if recovered != "modifier failed" {
		t.Fatalf("Update raised %v", recovered)
	}
	if v, _ := store.KV.Get("k"); string(v) != "1" {
		t.Fatalf("value %q", v)
	}
}
