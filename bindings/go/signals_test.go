package outlive

import "testing"

func TestASignalPostedByAnotherHandleIsDeliveredToAGoHandler(t *testing.T) {
	store, dir := openStore(t, "go-signals")
	poster, err := Open(dir, "go-poster", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer poster.Close()
	var results []string
	var versions []uint64
	RegisterHandler("go.test.on_result", "ID signal_id, ID result, UINTEGER version, BOOL terminated, ID context",
		func(c *Call) error {
			results = append(results, c.String("context")+":"+c.String("result"))
			versions = append(versions, c.Uint64("version"))
			return nil
		})
	signal := NewSignalID()
	consumer, _ := NewHandler("go.test.on_result", Args{{"context", "upload"}})
	defer consumer.Free()
	consumerID, err := store.Signals.Consume(signal, consumer, DeliveryUntilTerminated, LifetimeThisRun, "account-1")
	if err != nil || len(consumerID) != 36 {
		t.Fatalf("Consume: %q %v", consumerID, err)
	}
	if err := poster.Signals.Post(signal, Args{{"result", "half"}}, false); err != nil {
		t.Fatal(err)
	}
	dispatchUntil(t, store, "version 1", func() bool { return len(results) == 1 })
	if err := poster.Signals.Post(signal, Args{{"result", "done"}}, true); err != nil {
		t.Fatal(err)
	}
	dispatchUntil(t, store, "version 2", func() bool { return len(results) == 2 })
	if results[0] != "upload:half" || results[1] != "upload:done" || versions[0] != 1 || versions[1] != 2 {
		t.Fatalf("results %q versions %v", results, versions)
	}
	_, err = store.Signals.Lookup(signal)
	wantStatus(t, err, StatusNotFound) // the terminating post removed its last consumer
}

func TestSignalScopeRemovalAndBadIDs(t *testing.T) {
	store, _ := openStore(t, "go-signals")
	h, _ := NewHandler("go.test.nobody", nil)
	defer h.Free()
	signal := NewSignalID()
	for i := 0; i < 2; i++ {
		if _, err := store.Signals.Consume(signal, h, DeliveryOnce, LifetimeAnyProcess, "account-2"); err != nil {
			t.Fatal(err)
		}
	}
	info, err := store.Signals.Lookup(signal)
	if err != nil || info.ConsumerCount != 2 || info.Version != 0 {
		t.Fatalf("Lookup: %+v %v", info, err)
	}
	if n, err := store.Signals.RemoveScope("account-2"); err != nil || n != 2 {
		t.Fatalf("RemoveScope: %d %v", n, err)
	}
	_, err = store.Signals.Consume("not-a-uuid", h, DeliveryOnce, LifetimeThisRun, "")
	wantStatus(t, err, StatusInvalidArgument)
	wantStatus(t, store.Signals.Post(signal, Args{{"version", int64(1)}}, false), StatusInvalidArgument)
}
