package testcluster

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// Package is a binary a test suite builds once, in TestMain.
type Package struct {
	Name string // the binary's file name, and its key in Main's map
	Path string // an import path, or a directory relative to the test's package
	// Race builds it with -race when RaceEnv is set.
	Race bool
}

// RaceEnv names the environment variable that, when non-empty, builds the
// packages marked Race with the race detector.
const RaceEnv = "ALLOT_RACE"

// Allot is the allot binary: masters and agents. ALLOT_RACE=1 runs them
// under the race detector, and a race fails the test that saw it.
var Allot = Package{Name: "allot", Path: "github.com/allot-sched/allot/cmd/allot", Race: true}

// Main builds pkgs into a temporary directory, hands ready the path of
// each binary by name, runs the tests and removes the directory. It does
// not return. A build failure is printed and exits 1 before any test runs.
func Main(m *testing.M, pkgs []Package, ready func(bins map[string]string)) {
	if dir := os.Getenv(binDirEnv); dir != "" {
		// A test binary run again by one of its own tests (netns.go):
		// the binaries are its parent's, built already and removed by it.
		builtDir = dir
		bins := map[string]string{}
		for _, p := range pkgs {
			bins[p.Name] = filepath.Join(dir, p.Name)
		}
		ready(bins)
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "allot-test-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bins, err := Build(dir, pkgs)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	builtDir = dir
	ready(bins)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// Build runs `go build` for each package, in order, into dir and returns
// the binaries' paths by name. The compiler's messages go to stderr.
func Build(dir string, pkgs []Package) (map[string]string, error) {
	race := os.Getenv(RaceEnv) != ""
	bins := map[string]string{}
	for _, p := range pkgs {
		out := filepath.Join(dir, p.Name)
		args := []string{"build", "-o", out}
		if race && p.Race {
			args = append(args, "-race")
		}
		cmd := exec.Command(GoTool(), append(args, p.Path)...)
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("building %s: %v", p.Path, err)
		}
		bins[p.Name] = out
	}
	return bins, nil
}

// GoTool finds the go command: on PATH, else in the GOROOT this test was
// built with (a go test run by absolute path need not have go on PATH).
func GoTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}
