package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/allot-sched/allot/master"
)

func init() {
	register(command{name: "version", summary: "print allot's version and the commit it was built from (also --version)", run: runVersion})
}

// version and commit are stamped by the build when it wants to
// (go build -ldflags "-X main.version=1.2.3 -X main.commit=abc123"); left
// empty, they come from what `go build` records in the binary.
var version, commit string

// buildStamp is the version and commit this binary reports: -ldflags -X
// first, else the module's tagged version and the VCS revision `go build`
// and `go install` record in a git checkout (a dirty tree's revision gets
// "-dirty"), else master.Version and "unknown" (-buildvcs=false records no
// revision).
func buildStamp() (v, c string) {
	v, c = version, commit
	info, ok := debug.ReadBuildInfo()
	if v == "" {
		v = master.Version
		// A tag's version; an untagged commit's pseudo-version
		// (v0.0.0-date-hash) says no more than the commit below.
		if ok && info.Main.Version != "" && info.Main.Version != "(devel)" && !strings.HasPrefix(info.Main.Version, "v0.0.0-") {
			v = info.Main.Version
		}
	}
	if c == "" && ok {
		c = vcsRevision(info.Settings)
	}
	if c == "" {
		c = "unknown"
	}
	return v, c
}

// vcsRevision is the vcs.revision setting, with "-dirty" when vcs.modified.
func vcsRevision(settings []debug.BuildSetting) string {
	var rev string
	var dirty bool
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev != "" && dirty {
		rev += "-dirty"
	}
	return rev
}

func runVersion(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("version", "[--json]", "Print allot's version and the commit it was built from.", stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	v, c := buildStamp()
	if *asJSON {
		return printJSON(stdout, map[string]string{"version": v, "commit": c, "go": runtime.Version()})
	}
	fmt.Fprintf(stdout, "allot %s (commit %s, %s)\n", v, c, runtime.Version())
	return nil
}
