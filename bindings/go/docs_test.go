package outlive

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func normalized(text string) string {
	lines := strings.Split(strings.TrimSpace(text), "\n")
	for i, line := range lines {
		lines[i] = strings.TrimSpace(line)
	}
	return strings.Join(lines, "\n")
}

// TestGoCodeInTheDocsIsQuotedFromTestedGoFiles: every ```go block of the
// README and docs/go.md is in a Go file that go test builds and runs.
func TestGoCodeInTheDocsIsQuotedFromTestedGoFiles(t *testing.T) {
	root := repoRoot(t)
	sources := []string{"example_test.go", filepath.Join(root, "Examples", "go", "worker", "main.go")}
	var texts []string
	for _, path := range sources {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, normalized(string(data)))
	}
	blocks := 0
	for _, page := range []string{filepath.Join(root, "README.md"), filepath.Join(root, "docs", "go.md")} {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, match := range regexp.MustCompile("(?s)```go\n(.*?)```").FindAllStringSubmatch(string(data), -1) {
			blocks++
			quoted, found := normalized(match[1]), false
			for _, text := range texts {
				found = found || strings.Contains(text, quoted)
			}
			if !found {
				t.Errorf("%s quotes Go code that is in no tested Go file:\n%s", filepath.Base(page), match[1])
			}
		}
	}
	if blocks < 2 {
		t.Fatalf("%d Go blocks in the README and docs/go.md", blocks)
	}
}
