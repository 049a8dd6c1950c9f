package outlive

import "testing"

func TestAGoPresenterPresentsAndAResponseHandlerTakesTheAnswer(t *testing.T) {
	store, dir := openStore(t, "go-messages")
	other, err := Open(dir, "go-poster", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	var presented, answered []*Message
	err = store.Messages.AddPresenter("go-dialog", Presenter{
		Priority: func(m *Message) int32 { return PriorityHigh },
		Present: func(m *Message, p *Presentation) {
			presented = append(presented, m)
			if err := p.Finish(true, false, "retry"); err != nil {
				t.Error(err)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Messages.AddResponseHandler("go-answers", func(m *Message) bool {
		answered = append(answered, m)
		return true
	}); err != nil {
		t.Fatal(err)
	}
	id, err := other.Messages.Post(Draft{Category: "sync", Title: "Upload failed", Text: "notes.txt",
		Scope: "account-1", Choices: []Choice{{"retry", "Retry", ChoiceDefault}, {"cancel", "Cancel", ChoiceCancel}},
		Payload: Args{{"file", "notes.txt"}}})
	if err != nil {
		t.Fatal(err)
	}
	dispatchUntil(t, store, "the answer", func() bool { return len(answered) == 1 })
	m := presented[0]
	if m.ID != id || m.Title != "Upload failed" || m.Text != "notes.txt" || m.Scope != "account-1" ||
		len(m.Choices) != 2 || m.Choices[1] != (Choice{"cancel", "Cancel", ChoiceCancel}) || m.Payload.String("file") != "notes.txt" {
		t.Fatalf("presented %+v", m)
	}
	if answered[0].Choice != "retry" {
		t.Fatalf("answered with %q", answered[0].Choice)
	}
	dispatchUntil(t, store, "the removal", func() bool { n, _ := store.Messages.Count("sync"); return n == 0 })
}

func TestADurableResponseHandlerInGoRunsWhenAnotherHandleResponds(t *testing.T) {
	store, dir := openStore(t, "go-messages")
	var got []string
	RegisterHandler("go.test.on_answer", "ID message_id, ID choice, ID? scope", func(c *Call) error {
		got = append(got, c.String("choice")+"@"+c.String("scope"))
		return nil
	})
	response, _ := NewHandler("go.test.on_answer", nil)
	defer response.Free()
	id, err := store.Messages.Post(Draft{Category: "question", Title: "Keep both?", Scope: "s1",
		Choices: []Choice{{ID: "yes", Label: "Yes"}}, ResponseHandler: response})
	if err != nil {
		t.Fatal(err)
	}
	other, err := Open(dir, "go-responder", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	wantStatus(t, other.Messages.Respond(id, "no-such-choice"), StatusNotFound)
	if err := other.Messages.Respond(id, "yes"); err != nil {
		t.Fatal(err)
	}
	dispatchUntil(t, store, "the durable response handler", func() bool { return len(got) == 1 })
	if got[0] != "yes@s1" {
		t.Fatalf("got %q", got)
	}
	_, err = store.Messages.Get(id)
	dispatchUntil(t, store, "the message's deletion", func() bool { _, err := store.Messages.Get(id); return StatusOf(err) == StatusNotFound })
}

func TestAPresentedMessageWithAnEndNotificationGetsItsEndWhenRemoved(t *testing.T) {
	store, _ := openStore(t, "go-messages")
	var shown, ended []string
	err := store.Messages.AddPresenter("go-banner", Presenter{
		Present: func(m *Message, p *Presentation) { shown = append(shown, m.ID); p.Finish(true, true, "") },
		End:     func(m *Message) { ended = append(ended, m.ID) },
	})
	if err != nil {
		t.Fatal(err)
	}
	id, err := store.Messages.Post(Draft{Category: "notice", Title: "Sync paused", Scope: "acct"})
	if err != nil {
		t.Fatal(err)
	}
	dispatchUntil(t, store, "the presentation", func() bool { return len(shown) == 1 })
	if ids, err := store.Messages.IDs("acct", "notice", "", 0); err != nil || len(ids) != 1 || ids[0] != id {
		t.Fatalf("IDs: %v %v", ids, err)
	}
	if n, err := store.Messages.RemoveScope("acct"); err != nil || n != 1 {
		t.Fatalf("RemoveScope: %d %v", n, err)
	}
	dispatchUntil(t, store, "the end notification", func() bool { return len(ended) == 1 })
	if ended[0] != id {
		t.Fatalf("ended %q", ended)
	}
	wantStatus(t, store.Messages.AddPresenter("go-banner", Presenter{Present: func(*Message, *Presentation) {}}), StatusState)
}

func TestPostingPastTheCategoryLimitIsLimitAndStoresNothing(t *testing.T) {
	store, _ := openStore(t, "go-messages")
	if err := store.Messages.SetCategoryLimit(1); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Messages.Post(Draft{Category: "full", Title: "one"}); err != nil {
		t.Fatal(err)
	}
	_, err := store.Messages.Post(Draft{Category: "full", Title: "two"})
	wantStatus(t, err, StatusLimit)
	if n, _ := store.Messages.Count("full"); n != 1 {
		t.Fatalf("%d messages stored", n)
	}
}
