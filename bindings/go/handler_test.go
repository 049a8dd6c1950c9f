package outlive

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"testing"
)

func TestHandlerValueSerializesAndDeserializesWithItsBoundArguments(t *testing.T) {
	inner, err := NewHandler("go.test.inner", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer inner.Free()
	bound := Args{{"text", "héllo"}, {"raw", ID{Tag: "go.blob", Bytes: []byte{0, 1, 2}}}, {"flag", true},
		{"small", int32(-7)}, {"ratio", 0.25}, {"big", int64(math.MinInt64)}, {"huge", uint64(math.MaxUint64)},
		{"next", inner}}
	h, err := NewHandlerWithInvalidation("go.test.outer", "go.test.cancel", bound)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Free()
	data, err := h.Serialize()
	if err != nil {
		t.Fatal(err)
	}
	back, err := DeserializeHandler(data)
	if err != nil {
		t.Fatal(err)
	}
	defer back.Free()
	if back.Name() != "go.test.outer" || back.InvalidationName() != "go.test.cancel" {
		t.Fatalf("names %q %q", back.Name(), back.InvalidationName())
	}
	args, err := back.Bound()
	if err != nil {
		t.Fatal(err)
	}
	if len(args) != len(bound) {
		t.Fatalf("%d bound arguments, want %d", len(args), len(bound))
	}
	if args.String("text") != "héllo" {
		t.Fatalf("text %q", args.String("text"))
	}
	raw, _ := args.Get("raw")
	if id := raw.(ID); id.Tag != "go.blob" || !bytes.Equal(id.Bytes, []byte{0, 1, 2}) {
		t.Fatalf("raw %+v", id)
	}
	for name, want := range map[string]any{"flag": true, "small": int32(-7), "ratio": 0.25,
		"big": int64(math.MinInt64), "huge": uint64(math.MaxUint64)} {
		if got, _ := args.Get(name); got != want {
			t.Fatalf("%s = %v (%T), want %v", name, got, got, want)
		}
	}
	next, _ := args.Get("next")
	if next.(*Handler).Name() != "go.test.inner" {
		t.Fatalf("nested handler %q", next.(*Handler).Name())
	}
}

func TestDeserializingGarbageIsCorrupt(t *testing.T) {
	_, err := DeserializeHandler([]byte("not a handler"))
	wantStatus(t, err, StatusCorrupt)
}

func TestAnArgumentOfAnUnsupportedGoTypeIsInvalidArgument(t *testing.T) {
	_, err := NewHandler("go.test.x", Args{{"f", float32(1)}})
	wantStatus(t, err, StatusInvalidArgument)
}

func TestGoHandlerReceivesEveryTypeInDeclaredOrder(t *testing.T) {
	// Integer-class and DOUBLE parameters interleaved: the trampoline must
	// pick each from its own register class.
	var got *Call
	var received Args
	err := RegisterHandler("go.test.every", "DOUBLE d1, ID<go.tag> id, BOOL b, DOUBLE d2, INT i, INTEGER n, UINTEGER u, DOUBLE d3",
		func(c *Call) error {
			got, received = c, c.Args()
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	h, err := NewHandler("go.test.every", Args{{"d1", 1.5}, {"id", ID{Tag: "go.tag", Bytes: []byte("x")}}, {"b", true}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Free()
	if err := h.Call(Args{{"d2", -2.25}, {"i", int32(-3)}, {"n", int64(-4_000_000_000)}, {"u", uint64(1 << 63)}, {"d3", 1e300}}); err != nil {
		t.Fatal(err)
	}
	if got == nil {
		t.Fatal("the Go handler was not called")
	}
	if got.Double("d1") != 1.5 || got.Double("d2") != -2.25 || got.Double("d3") != 1e300 {
		t.Fatalf("doubles %v", received)
	}
	if got.String("id") != "x" || !got.Bool("b") || got.Int32("i") != -3 || got.Int64("n") != -4_000_000_000 ||
		got.Uint64("u") != 1<<63 {
		t.Fatalf("values %v", received)
	}
	if id, _ := got.ID("id"); id.Tag != "go.tag" {
		t.Fatalf("tag %q", id.Tag)
	}
}

func TestGoHandlerCalledWithoutAMandatoryArgumentIsNotCalled(t *testing.T) {
	called := false
	if err := RegisterHandler("go.test.needs", "ID who, BOOL flag", func(*Call) error { called = true; return nil }); err != nil {
		t.Fatal(err)
	}
	h, _ := NewHandler("go.test.needs", Args{{"who", "me"}})
	defer h.Free()
	wantStatus(t, h.Call(nil), StatusMissingArgument)
	wantStatus(t, h.Call(Args{{"flag", int32(1)}}), StatusTypeMismatch)
	if called {
		t.Fatal("called despite a missing or mismatched argument")
	}
}

func TestOptionalAbsentArgumentsAreLeftOutOfTheCall(t *testing.T) {
	var call *Call
	if err := RegisterHandler("go.test.optional", "ID? who, HANDLER? then", func(c *Call) error { call = c; return nil }); err != nil {
		t.Fatal(err)
	}
	h, _ := NewHandler("go.test.optional", nil)
	defer h.Free()
	if err := h.Call(nil); err != nil {
		t.Fatal(err)
	}
	if call.Has("who") || call.Handler("then") != nil {
		t.Fatalf("absent optional arguments present: %v", call.Args())
	}
}

func TestABorrowedHandlerParameterCanBeCalledAndCopiedButNotKept(t *testing.T) {
	var kept, copied *Handler
	innerCalls := 0
	RegisterHandler("go.test.inner_called", "INT n", func(c *Call) error { innerCalls += int(c.Int32("n")); return nil })
	RegisterHandler("go.test.outer_calls", "HANDLER then", func(c *Call) error {
		kept = c.Handler("then")
		copied, _ = kept.Copy()
		return kept.Call(Args{{"n", int32(2)}})
	})
	inner, _ := NewHandler("go.test.inner_called", nil)
	defer inner.Free()
	outer, _ := NewHandler("go.test.outer_calls", Args{{"then", inner}})
	defer outer.Free()
	if err := outer.Call(nil); err != nil {
		t.Fatal(err)
	}
	if innerCalls != 2 {
		t.Fatalf("inner called with %d", innerCalls)
	}
	wantStatus(t, kept.Call(Args{{"n", int32(1)}}), StatusInvalidArgument) // the view ended with the call
	defer copied.Free()
	if err := copied.Call(Args{{"n", int32(5)}}); err != nil || innerCalls != 7 {
		t.Fatalf("copy: %v, %d", err, innerCalls)
	}
}

func TestAnErrorOrPanicOfADirectlyCalledGoHandlerGoesToOnHandlerError(t *testing.T) {
	var reported []string
	OnHandlerError(func(name string, err error) { reported = append(reported, fmt.Sprintf("%s: %v", name, err)) })
	defer OnHandlerError(nil)
	RegisterHandler("go.test.fails", "", func(*Call) error { return errors.New("boom") })
	RegisterHandler("go.test.panics", "", func(*Call) error { panic("oops") })
	for _, name := range []string{"go.test.fails", "go.test.panics"} {
		h, _ := NewHandler(name, nil)
		if err := h.Call(nil); err != nil {
			t.Fatal(err)
		}
		h.Free()
	}
	if len(reported) != 2 || reported[0] != "go.test.fails: boom" || reported[1] != "go.test.panics: panic: oops" {
		t.Fatalf("reported %q", reported)
	}
}

func TestRegistrationRefusesSignaturesTheTrampolineCannotRead(t *testing.T) {
	wantStatus(t, RegisterHandler("go.test.wide", "ID a, ID b, ID c, ID d, ID e, ID f", func(*Call) error { return nil }),
		StatusInvalidArgument) // six plus the added completion: seven integer registers
	wantStatus(t, RegisterHandler("go.test.bad", "STRING s", func(*Call) error { return nil }), StatusInvalidArgument)
	wantStatus(t, RegisterHandler("bad name!", "", func(*Call) error { return nil }), StatusInvalidArgument)
	if Resolves("bad name!") || Resolves("go.test.wide") {
		t.Fatal("a refused registration resolves")
	}
}

func TestReRegisteringReplacesAndUnregisteringUnresolves(t *testing.T) {
	which := ""
	RegisterHandler("go.test.replaced", "", func(*Call) error { which = "first"; return nil })
	RegisterHandler("go.test.replaced", "", func(*Call) error { which = "second"; return nil })
	h, _ := NewHandler("go.test.replaced", nil)
	defer h.Free()
	if err := h.Call(nil); err != nil || which != "second" {
		t.Fatalf("%v, %q", err, which)
	}
	if err := UnregisterHandler("go.test.replaced"); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, h.Call(nil), StatusUnresolved)
	wantStatus(t, UnregisterHandler("go.test.replaced"), StatusNotFound)
}

func TestInvalidationCallsTheInvalidationHandlerOnce(t *testing.T) {
	cancelled := 0
	RegisterHandler("go.test.cancel_it", "ID job", func(c *Call) error { cancelled++; return nil })
	h, _ := NewHandlerWithInvalidation("go.test.work", "go.test.cancel_it", Args{{"job", "j1"}})
	defer h.Free()
	if err := h.Invalidate(nil); err != nil {
		t.Fatal(err)
	}
	if !h.IsInvalidated() || cancelled != 1 {
		t.Fatalf("invalidated %v, cancelled %d", h.IsInvalidated(), cancelled)
	}
	wantStatus(t, h.Invalidate(nil), StatusInvalidated)
	wantStatus(t, h.Call(nil), StatusInvalidated)
}

func TestFalseAndZeroValuesReachAGoHandlerAsSuch(t *testing.T) {
	var call *Call
	RegisterHandler("go.test.zeroes", "BOOL b, INT i, DOUBLE d", func(c *Call) error { call = c; return nil })
	h, _ := NewHandler("go.test.zeroes", Args{{"b", false}, {"i", int32(0)}, {"d", 0.0}})
	defer h.Free()
	// A true call first leaves set bits in the registers the next call reuses.
	if err := h.Call(Args{{"b", true}, {"i", int32(-1)}}); err != nil || !call.Bool("b") || call.Int32("i") != -1 {
		t.Fatalf("%v %v", err, call.Args())
	}
	if err := h.Call(nil); err != nil || call.Bool("b") || call.Int32("i") != 0 || call.Double("d") != 0 {
		t.Fatalf("%v %v", err, call.Args())
	}
}
