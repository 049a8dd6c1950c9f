package outlive_test

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"outlive.dev/outlive"
)

// The README's Go example (docs_test.go checks that the README quotes it).
func Example() {
	dir, _ := os.MkdirTemp("", "outlive-readme-go")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "store")

	// A handler declared in Go: any process, in any language, can add a task naming it.
	outlive.RegisterHandler("app.greet", "ID name", func(call *outlive.Call) error {
		fmt.Println("hello,", call.String("name"))
		return nil
	})
	store, err := outlive.Open(path, "app", nil)
	if err != nil {
		panic(err)
	}
	defer store.Close()
	store.KV.Observe("greeting", func(key string, value []byte, deleted bool) { fmt.Printf("%s is now %s\n", key, value) })
	store.KV.Set("greeting", []byte("hello"))
	greet, _ := outlive.NewHandler("app.greet", outlive.Args{{Name: "name", Value: "dana"}})
	defer greet.Free()
	store.Tasks.Add(greet, nil) // durable: runs now, or after a crash, in whichever process resolves it
	store.Tasks.RunNow()
	for n := 1; n > 0; n, _ = store.Tasks.Count() {
		store.Loop().Dispatch(100 * time.Millisecond) // callbacks run here, on this goroutine
	}
	// Output:
	// greeting is now hello
	// hello, dana
}
