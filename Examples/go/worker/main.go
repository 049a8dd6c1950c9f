// A worker service in Go: it serves the store's background tasks whose
// handlers are declared here, in Go, whichever process or language added
// them, and stops gracefully on SIGTERM (systemd's stop) or Ctrl-C.
//
//	go run . /var/lib/myapp/store
//
// Any process adds work, e.g. from Python:
//
//	store.tasks.add(outlive.Handler("example.thumbnail", image="cat.png", size=128))
//
// On SIGTERM the loop stops between two callbacks: a task that is running
// finishes first; one whose completion is still pending when the process
// exits runs again later in a live worker (at-least-once: task_id is the
// idempotency key).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"outlive.dev/outlive"
)

var store *outlive.Store

// thumbnail succeeds when it returns nil; an error fails the attempt, which
// is retried with backoff.
func thumbnail(call *outlive.Call) error {
	image, size := call.String("image"), call.Int64("size")
	if image == "" {
		return fmt.Errorf("no image")
	}
	fmt.Printf("thumbnail %s at %dpx (task %s)\n", image, size, call.String("task_id"))
	return store.KV.Set("thumbnails/"+image, []byte(fmt.Sprint(size)))
}

// notify declares completion: the attempt ends when it is called, here from
// another goroutine, as a handler waiting for a network reply would.
func notify(call *outlive.Call) error {
	completion, err := call.Handler("completion").Copy() // the parameter is borrowed: keep a copy
	if err != nil {
		return err
	}
	user, text := call.String("user"), call.String("text")
	go func() {
		defer completion.Free()
		err := store.KV.Set("notified/"+user, []byte(text))
		outcome := outlive.Args{{Name: "success", Value: err == nil}}
		if err != nil {
			outcome = append(outcome, outlive.Arg{Name: "error", Value: err.Error()})
		}
		completion.Call(outcome)
	}()
	return nil
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: worker STORE_DIRECTORY")
		os.Exit(2)
	}
	// Handlers first: a task naming them may be due at the first dispatch.
	must(outlive.RegisterHandler("example.thumbnail", "ID image, INTEGER size, ID task_id", thumbnail))
	must(outlive.RegisterHandler("example.notify", "ID user, ID text, HANDLER completion", notify))
	outlive.OnHandlerError(func(name string, err error) { fmt.Fprintf(os.Stderr, "%s: %v\n", name, err) })

	var err error
	store, err = outlive.Open(os.Args[1], "go-worker", nil)
	must(err)
	must(store.Tasks.SetTriggers(1, 0)) // run as soon as a task is seen
	must(store.Tasks.RunNow())          // and what is pending already

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	fmt.Println("ready", store.RunID())
	// Serve dispatches on this goroutine, locked to its thread, until SIGTERM;
	// the store is closed here, on the same goroutine, after it returns.
	if err := store.Loop().Serve(ctx); err != nil && err != context.Canceled {
		fmt.Fprintln(os.Stderr, "serve:", err)
	}
	store.Close()
	fmt.Println("stopped")
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
