package main

// Builds the example worker, starts it on a real store, adds tasks for it
// from this process (another process of the store) and stops it with SIGTERM.

import (
	"bufio"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"outlive.dev/outlive"
)

func TestTheWorkerRunsTasksAddedByAnotherProcessAndStopsOnSIGTERM(t *testing.T) {
	binary := filepath.Join(t.TempDir(), "worker")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	dir := filepath.Join(t.TempDir(), "store")
	worker := exec.Command(binary, dir)
	stdout, _ := worker.StdoutPipe()
	var stderr strings.Builder
	worker.Stderr = &stderr
	if err := worker.Start(); err != nil {
		t.Fatal(err)
	}
	defer worker.Process.Kill()
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() || !strings.HasPrefix(lines.Text(), "ready ") {
		t.Fatalf("worker said %q; stderr %s", lines.Text(), stderr.String())
	}

	producer, err := outlive.Open(dir, "go-producer", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer producer.Close()
	for _, work := range []struct {
		name string
		args outlive.Args
	}{
		{"example.thumbnail", outlive.Args{{Name: "image", Value: "cat.png"}, {Name: "size", Value: int64(128)}}},
		{"example.notify", outlive.Args{{Name: "user", Value: "dana"}, {Name: "text", Value: "done"}}},
	} {
		h, err := outlive.NewHandler(work.name, work.args)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := producer.Tasks.Add(h, nil); err != nil {
			t.Fatal(err)
		}
		h.Free()
	}
	// Waiting for another process: the producer's loop wakes on each change.
	deadline := time.Now().Add(30 * time.Second)
	for n, _ := producer.Tasks.Count(); n != 0; n, _ = producer.Tasks.Count() {
		if time.Now().After(deadline) {
			t.Fatalf("%d tasks left; worker stderr: %s", n, stderr.String())
		}
		producer.Loop().Dispatch(100 * time.Millisecond)
	}
	if v, err := producer.KV.Get("thumbnails/cat.png"); err != nil || string(v) != "128" {
		t.Fatalf("thumbnail: %q %v", v, err)
	}
	if v, err := producer.KV.Get("notified/dana"); err != nil || string(v) != "done" {
		t.Fatalf("notify: %q %v", v, err)
	}

	if err := worker.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var said []string
	for lines.Scan() {
		said = append(said, lines.Text())
	}
	if err := worker.Wait(); err != nil {
		t.Fatalf("worker exited with %v; stderr: %s", err, stderr.String())
	}
	if len(said) == 0 || said[len(said)-1] != "stopped" {
		t.Fatalf("worker said %q", said)
	}
}
