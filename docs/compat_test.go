package docs

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	magent "github.com/mesos/mesos-go/api/v1/lib/agent"
	mmaster "github.com/mesos/mesos-go/api/v1/lib/master"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
)

// compatRow is a row of mesos-compat.md's tables.
type compatRow struct {
	section, name, status, tests string
	line                         int
}

// readCompat reads every table row of mesos-compat.md under the "## "
// and "### " headings above it ("Scheduler API / Calls").
func readCompat(t *testing.T) []compatRow {
	t.Helper()
	f, err := os.Open("mesos-compat.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []compatRow
	var h2, h3 string
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			h2, h3 = strings.TrimPrefix(line, "## "), ""
		case strings.HasPrefix(line, "### "):
			h3 = strings.TrimPrefix(line, "### ")
		case strings.HasPrefix(line, "|") && !strings.HasPrefix(line, "|---"):
			cells := strings.Split(strings.Trim(line, "|"), "|")
			if len(cells) < 3 || strings.TrimSpace(cells[1]) == "Status" {
				continue
			}
			rows = append(rows, compatRow{section: strings.TrimSuffix(h2+" / "+h3, " / "), name: strings.TrimSpace(cells[0]),
				status: strings.TrimSpace(cells[1]), tests: cells[2], line: n})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// testFuncs is every Test function declared in the module's test files.
func testFuncs(t *testing.T) map[string]bool {
	t.Helper()
	decl := regexp.MustCompile(`(?m)^func (Test\w+)\(`)
	out := map[string]bool{}
	err := filepath.WalkDir("..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && p != ".." {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range decl.FindAllStringSubmatch(string(b), -1) {
			out[m[1]] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

var testName = regexp.MustCompile("`(Test\\w+)`")

// TestCompatTableNamesRealTests: every "done" row of mesos-compat.md names
// at least one test, and each test it names is a Test function of the
// module; every row's status is one the page defines.
func TestCompatTableNamesRealTests(t *testing.T) {
	exists := testFuncs(t)
	rows := readCompat(t)
	if len(rows) < 100 {
		t.Fatalf("only %d rows read from mesos-compat.md: the tables lost their shape", len(rows))
	}
	statuses := []string{"done", "planned (in progress)", "planned", "deliberately not"}
	for _, r := range rows {
		known := false
		for _, s := range statuses {
			known = known || r.status == s
		}
		if !known {
			t.Errorf("mesos-compat.md:%d: %s %s: status %q is none of %q", r.line, r.section, r.name, r.status, statuses)
		}
		names := testName.FindAllStringSubmatch(r.tests, -1)
		if r.status == "done" && len(names) == 0 {
			t.Errorf("mesos-compat.md:%d: %s %s is done but names no test", r.line, r.section, r.name)
		}
		for _, m := range names {
			if !exists[m[1]] {
				t.Errorf("mesos-compat.md:%d: %s %s names %s, which no test file declares", r.line, r.section, r.name, m[1])
			}
		}
	}
}

// TestCompatTableCoversMesosGo: each table lists every value of its
// mesos-go enum (but UNKNOWN) and nothing else, so a call cannot go
// unmentioned.
func TestCompatTableCoversMesosGo(t *testing.T) {
	enums := map[string]map[int32]string{
		"Scheduler API (`POST /api/v1/scheduler`) / Calls":                                 scheduler.Call_Type_name,
		"Scheduler API (`POST /api/v1/scheduler`) / Events":                                scheduler.Event_Type_name,
		"Master operator API (`POST /api/v1` on the master) / Calls":                       mmaster.Call_Type_name,
		"Master operator API (`POST /api/v1` on the master) / Events (operator SUBSCRIBE)": mmaster.Event_Type_name,
		"Agent operator API (`POST /api/v1` on an agent) / Calls":                          magent.Call_Type_name,
		"Offer operations (ACCEPT)":                                                        mesos.Offer_Operation_Type_name,
	}
	listed := map[string]map[string]bool{}
	for _, r := range readCompat(t) {
		if listed[r.section] == nil {
			listed[r.section] = map[string]bool{}
		}
		listed[r.section][r.name] = true
	}
	for section, names := range enums {
		want := map[string]bool{}
		for _, n := range names {
			if n != "UNKNOWN" {
				want[n] = true
			}
		}
		var missing, extra []string
		for n := range want {
			if !listed[section][n] {
				missing = append(missing, n)
			}
		}
		for n := range listed[section] {
			if !want[n] {
				extra = append(extra, n)
			}
		}
		sort.Strings(missing)
		sort.Strings(extra)
		if len(missing) > 0 || len(extra) > 0 {
			t.Errorf("mesos-compat.md %q: missing rows %v, rows mesos-go does not know %v", section, missing, extra)
		}
	}
}
