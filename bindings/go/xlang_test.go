package outlive

// Cross-language: the serialized handler format and the handler registry are
// language-neutral. Real processes share a real store: a Python worker and the
// `outlive` worker with a C handler library run tasks added from Go, and a Go
// process (this test) runs tasks and signal consumers added by a Python and a
// C program.

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// repoRoot is the source tree this package lives in (bindings/go).
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// run runs a command to its end, failing the test with its output if it fails.
func run(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
	}
}

func python(t *testing.T, script string, args ...string) *exec.Cmd {
	root := repoRoot(t)
	cmd := exec.Command("python3", append([]string{filepath.Join("testdata", script)}, args...)...)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+filepath.Join(root, "bindings", "python"),
		"OUTLIVE_LIBRARY="+filepath.Join(root, "build", "liboutlive.so"))
	return cmd
}

func TestATaskAddedFromGoIsRunByAPythonWorker(t *testing.T) {
	store, dir := openStore(t, "go-producer")
	for i, text := range []string{"from go", "ünïcode"} {
		work, err := NewHandler("xlang.py_record", Args{{"text", text}, {"count", int64(i)}, {"ratio", 0.5}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := store.Tasks.Add(work, nil); err != nil {
			t.Fatal(err)
		}
		work.Free()
	}
	if Resolves("xlang.py_record") {
		t.Fatal("the Python handler resolves in the Go process")
	}
	run(t, python(t, "py_worker.py", dir))
	for i, want := range []string{"from go|0|0.5|36", "ünïcode|1|0.5|36"} {
		value, err := store.KV.Get("xlang/py/" + string(rune('0'+i)))
		if err != nil || string(value) != want {
			t.Fatalf("task %d recorded %q (%v), want %q", i, value, err, want)
		}
	}
	if n, _ := store.Tasks.Count(); n != 0 {
		t.Fatalf("%d tasks left", n)
	}
}

// goSide registers the Go handlers that tasks and signals of other languages name.
func goSide(t *testing.T) (records, signals *[]string) {
	records, signals = new([]string), new([]string)
	if err := RegisterHandler("xlang.go_record", "ID origin, INTEGER n, INTEGER attempt", func(c *Call) error {
		*records = append(*records, c.String("origin")+":"+string(rune('0'+c.Int64("n")%10)))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := RegisterHandler("xlang.go_on_signal", "ID origin, ID result, UINTEGER version, BOOL terminated", func(c *Call) error {
		if c.Uint64("version") != 1 || !c.Bool("terminated") {
			t.Errorf("version %d terminated %v", c.Uint64("version"), c.Bool("terminated"))
		}
		*signals = append(*signals, c.String("origin")+":"+c.String("result"))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return records, signals
}

func TestATaskAndASignalFromPythonAreRunByGoHandlers(t *testing.T) {
	records, signals := goSide(t)
	dir := filepath.Join(t.TempDir(), "store")
	signal := NewSignalID()
	os.MkdirAll(filepath.Dir(dir), 0o700)
	run(t, python(t, "py_producer.py", dir, signal)) // the producer has exited: no Python process is left
	store, err := Open(dir, "go-worker", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	store.Tasks.RunNow()
	dispatchUntil(t, store, "the task and the signal", func() bool { return len(*records) == 1 && len(*signals) == 1 })
	if (*records)[0] != "python:1" || (*signals)[0] != "python:posted by python" {
		t.Fatalf("records %q signals %q", *records, *signals)
	}
}

func TestATaskAndASignalFromCAreRunByGoHandlers(t *testing.T) {
	records, signals := goSide(t)
	root := repoRoot(t)
	binary := filepath.Join(t.TempDir(), "c_producer")
	run(t, exec.Command("cc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-I"+filepath.Join(root, "include"),
		filepath.Join("testdata", "c_producer.c"), "-o", binary, "-L"+filepath.Join(root, "build"),
		"-Wl,-rpath,"+filepath.Join(root, "build"), "-loutlive"))
	dir := filepath.Join(t.TempDir(), "store")
	signal := NewSignalID()
	run(t, exec.Command(binary, dir, signal))
	store, err := Open(dir, "go-worker", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	store.Tasks.RunNow()
	dispatchUntil(t, store, "the task and the signal", func() bool { return len(*records) == 1 && len(*signals) == 1 })
	sort.Strings(*records)
	if (*records)[0] != "c:2" || (*signals)[0] != "c:posted by c" {
		t.Fatalf("records %q signals %q", *records, *signals)
	}
}

func TestATaskAddedFromGoIsRunByTheOutliveWorkerFromACHandlerLibrary(t *testing.T) {
	// The other side is C: Examples/plugin/plugin.c declares plugin_resize
	// with OUTLIVE_HANDLER, and `outlive worker --load` runs it.
	root := repoRoot(t)
	library := filepath.Join(t.TempDir(), "libplugin.so")
	run(t, exec.Command("cc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-I"+filepath.Join(root, "include"),
		"-fPIC", "-shared", "-o", library, filepath.Join(root, "Examples", "plugin", "plugin.c")))
	store, dir := openStore(t, "go-producer")
	work, err := NewHandler("plugin_resize", Args{{"image", "cat.png"}, {"width", int32(64)}})
	if err != nil {
		t.Fatal(err)
	}
	defer work.Free()
	if _, err := store.Tasks.Add(work, nil); err != nil {
		t.Fatal(err)
	}
	worker := exec.Command(filepath.Join(root, "build", "outlive"), "worker", dir, "--load", library, "--until-idle")
	out, err := worker.CombinedOutput()
	if err != nil {
		t.Fatalf("outlive worker: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "plugin_resize: cat.png to 64 px") {
		t.Fatalf("the C handler did not run:\n%s", out)
	}
	if n, _ := store.Tasks.Count(); n != 0 {
		t.Fatalf("%d tasks left", n)
	}
}
