package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runOnline(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(append([]string{"experiment", "psdsf-online"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

// Small workloads keep these fast; the findings themselves are pinned in sim/.
var onlineSmall = []string{"--jobs", "3", "--trials", "2"}

func TestPSDSFOnlineExitCodes(t *testing.T) {
	tests := []struct {
		args    []string
		code    int
		errWant string
	}{
		{onlineSmall, 0, ""},
		{[]string{"--trials", "0"}, 2, "--trials must be"},
		{[]string{"--jitter", "1.5"}, 2, "--jitter"},
		{[]string{"--task-seconds", "-3"}, 2, "--task-seconds"},
		{[]string{"--queues", "x"}, 2, "invalid value"},
		{[]string{"extra"}, 2, "unexpected argument"},
	}
	for _, tt := range tests {
		code, _, stderr := runOnline(t, tt.args...)
		if code != tt.code || !strings.Contains(stderr, tt.errWant) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tt.args, code, stderr, tt.code, tt.errWant)
		}
	}
}

func TestPSDSFOnlineTableJSONAndFigures(t *testing.T) {
	code, out, stderr := runOnline(t, onlineSmall...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"heterogeneous", "homogeneous", "BF-DRF", "rPS-DSF", "The paper's findings", "PS-DSF packs better"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	code, js, _ := runOnline(t, append(onlineSmall, "--json")...)
	var rep struct {
		Cells  []map[string]any `json:"cells"`
		Claims []map[string]any `json:"claims"`
	}
	if code != 0 || json.Unmarshal([]byte(js), &rep) != nil || len(rep.Cells) != 20 || len(rep.Claims) == 0 {
		t.Fatalf("exit %d, JSON %q", code, js)
	}
	_, again, _ := runOnline(t, append(onlineSmall, "--json")...)
	if again != js {
		t.Error("same seed, different JSON")
	}
	dir := t.TempDir()
	if code, _, stderr := runOnline(t, append(onlineSmall, "--out", dir)...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "fig*.svg"))
	if len(files) != 6 {
		t.Errorf("%d figures, want 6", len(files))
	}
	for _, f := range append(files, filepath.Join(dir, "index.html"), filepath.Join(dir, "summary.csv")) {
		if st, err := os.Stat(f); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// A finding that cannot fail in this simulator says so in its JSON and
// under its verdict: on identical servers DRF and PS-DSF make the same
// decisions, so "nearly identical" holds by construction. The others
// could have come out either way and carry no such note.
func TestPSDSFOnlineMarksFindingsByConstruction(t *testing.T) {
	code, js, stderr := runOnline(t, append(onlineSmall, "--json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep struct {
		Claims []struct {
			Claim          string `json:"claim"`
			ByConstruction string `json:"by_construction"`
		} `json:"claims"`
	}
	if err := json.Unmarshal([]byte(js), &rep); err != nil {
		t.Fatal(err)
	}
	marked := 0
	for _, c := range rep.Claims {
		want := strings.HasPrefix(c.Claim, "homogeneous") && strings.Contains(c.Claim, "DRF and PS-DSF perform nearly identically")
		if got := strings.Contains(c.ByConstruction, "by construction"); got != want {
			t.Errorf("%q: by_construction %q, want marked %v", c.Claim, c.ByConstruction, want)
		}
		if want {
			marked++
		}
	}
	if marked != 2 {
		t.Errorf("%d claims marked, want the two homogeneous ones (oblivious, characterized)", marked)
	}
	_, out, _ := runOnline(t, onlineSmall...)
	if n := strings.Count(out, "(holds by construction: on identical servers"); n != 2 {
		t.Errorf("text marks %d findings as holding by construction, want 2:\n%s", n, out)
	}
}
