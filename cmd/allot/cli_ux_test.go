package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

func TestUnknownCommandSuggests(t *testing.T) {
	for _, tc := range []struct {
		verb, want string
	}{
		{"stauts", "allot: unknown command stauts; did you mean status?\n"},
		{"agnets", "allot: unknown command agnets; did you mean agents?\n"},
		{"taks", "allot: unknown command taks; did you mean tasks?\n"},
		{"framew", "allot: unknown command framew; did you mean frameworks?\n"},
		{"zzzzzzzz", "allot: unknown command zzzzzzzz (allot help lists the commands)\n"},
		{"x", "allot: unknown command x (allot help lists the commands)\n"},
	} {
		var out, errOut bytes.Buffer
		if code := run([]string{tc.verb}, &out, &errOut); code != 2 || errOut.String() != tc.want || out.Len() != 0 {
			t.Errorf("allot %s: exit %d, stderr %q, stdout %q; want exit 2 and stderr %q alone", tc.verb, code, errOut.String(), out.String(), tc.want)
		}
	}
}

func TestWithDefaultPort(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"127.0.0.1", "127.0.0.1:5050"},
		{"127.0.0.1:5051", "127.0.0.1:5051"},
		{"m1", "m1:5050"},
		{"https://m1", "https://m1:5050"},
		{"https://m1:443", "https://m1:443"},
		{"http://m1/", "http://m1:5050/"},
		{"::1", "[::1]:5050"},
		{"[::1]", "[::1]:5050"},
		{"[::1]:6060", "[::1]:6060"},
	} {
		if got := withDefaultPort(tc.in); got != tc.want {
			t.Errorf("withDefaultPort(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := splitMasters(" a, b:1 ,,"); strings.Join(got, ",") != "a:5050,b:1" {
		t.Errorf("splitMasters = %q", got)
	}
}

func TestHumanize(t *testing.T) {
	loc := time.Local
	time.Local = time.UTC
	defer func() { time.Local = loc }()
	for _, tc := range []struct{ in, want string }{
		{`refused until 2026-11-27T15:31:43.812345678Z (59m59.812345678s from now) or a revive`,
			`refused until 2026-11-27 15:31:43 UTC (1h0m0s from now) or a revive`},
		{"in 1.23456789s", "in 1.2s"},
		{"took 12.345678ms", "took 12ms"},
		{"its score 0.5 of 3 agents", "its score 0.5 of 3 agents"},
		{"agent S1s", "agent S1s"},
	} {
		if got := humanize(tc.in); got != tc.want {
			t.Errorf("humanize(%q) =\n %q, want\n %q", tc.in, got, tc.want)
		}
	}
}

func TestVCSRevision(t *testing.T) {
	for _, tc := range []struct {
		settings []debug.BuildSetting
		want     string
	}{
		{nil, ""},
		{[]debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "false"}}, "abc"},
		{[]debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "true"}}, "abc-dirty"},
	} {
		if got := vcsRevision(tc.settings); got != tc.want {
			t.Errorf("vcsRevision(%v) = %q, want %q", tc.settings, got, tc.want)
		}
	}
}

func TestVersionStampOverrides(t *testing.T) {
	defer func(v, c string) { version, commit = v, c }(version, commit)
	version, commit = "1.2.3", "deadbeef"
	var out bytes.Buffer
	if code := run([]string{"--version"}, &out, io.Discard); code != 0 || !strings.HasPrefix(out.String(), "allot 1.2.3 (commit deadbeef, go") {
		t.Errorf("allot --version: exit %d, %q", code, out.String())
	}
	out.Reset()
	var v map[string]string
	if code := run([]string{"version", "--json"}, &out, io.Discard); code != 0 || json.Unmarshal(out.Bytes(), &v) != nil || v["commit"] != "deadbeef" {
		t.Errorf("allot version --json: exit %d, %q", code, out.String())
	}
}

// testServerFlags is a server's flag set with --config, as master and
// agent make it.
func testServerFlags() (*flag.FlagSet, *string, *string, *string) {
	fs := flag.NewFlagSet("allot test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	listen := fs.String("listen", ":5050", "")
	sorter := fs.String("sorter", "drf", "")
	workDir := fs.String("work-dir", "", "")
	var cfg string
	addConfigFlag(fs, &cfg)
	_ = sorter
	return fs, &cfg, listen, workDir
}

func TestConfigFile(t *testing.T) {
	dir := t.TempDir()
	write := func(body string) string {
		p := filepath.Join(dir, "allot.conf")
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("# a comment\n\nlisten = 127.0.0.1:6060\nsorter=\"tsf\"\n--work-dir=/var/lib/allot\n")
	for _, tc := range []struct {
		name, env string
		args      []string
		want      map[string]string
	}{
		{"file alone", "", []string{"--config", good}, map[string]string{"listen": "127.0.0.1:6060", "sorter": "tsf", "work-dir": "/var/lib/allot"}},
		{"flag overrides", "", []string{"--config", good, "--sorter", "fifo"}, map[string]string{"sorter": "fifo", "listen": "127.0.0.1:6060"}},
		{"env overrides", "psdsf", []string{"--config", good}, map[string]string{"sorter": "psdsf"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.env != "" {
				t.Setenv("ALLOT_SORTER", tc.env)
			}
			fs, cfg, _, _ := testServerFlags()
			if err := parseServerFlags(fs, tc.args, cfg); err != nil {
				t.Fatal(err)
			}
			for k, v := range tc.want {
				if got := fs.Lookup(k).Value.String(); got != v {
					t.Errorf("--%s = %q, want %q", k, got, v)
				}
			}
		})
	}
	for _, tc := range []struct{ body, want string }{
		{"sorterr=drf\n", `allot.conf:1: no flag "sorterr"; did you mean sorter?`},
		{"\nlisten\n", `allot.conf:2: "listen": want flag=value`},
		{"config=/etc/x\n", "cannot name another"},
		{"sorter=\"drf\n", "bad quoted value"},
	} {
		fs, cfg, _, _ := testServerFlags()
		err := parseServerFlags(fs, []string{"--config", write(tc.body)}, cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("config %q: error %v, want one saying %q", tc.body, err, tc.want)
		}
	}
}

// A relative --work-dir is made absolute at start: the agent hands it to
// executors that run in their sandbox, where it would name another place.
func TestDirFlagsMadeAbsolute(t *testing.T) {
	wd, _ := os.Getwd()
	for _, tc := range []struct{ in, want string }{
		{"a", filepath.Join(wd, "a")},
		{"./x/../b", filepath.Join(wd, "b")},
		{"/abs/dir", "/abs/dir"},
		{"", ""},
	} {
		fs, cfg, _, workDir := testServerFlags()
		if err := parseServerFlags(fs, []string{"--work-dir", tc.in}, cfg); err != nil {
			t.Fatal(err)
		}
		if *workDir != tc.want {
			t.Errorf("--work-dir %q became %q, want %q", tc.in, *workDir, tc.want)
		}
	}
}

func TestCompletionScripts(t *testing.T) {
	for _, tc := range []struct {
		shell string
		want  []string
		check []string // a shell that checks the syntax, when installed
	}{
		{"bash", []string{"complete -o default -F _allot allot", "status", "--follow", "--work-dir"}, []string{"bash", "-n"}},
		{"zsh", []string{"#compdef allot", "'status:the cluster at a glance", "--follow"}, []string{"zsh", "-n"}},
		{"fish", []string{"complete -c allot -n __fish_use_subcommand -a status", "-l follow"}, []string{"fish", "--no-execute"}},
	} {
		var out bytes.Buffer
		if code := run([]string{"completion", tc.shell}, &out, io.Discard); code != 0 {
			t.Fatalf("allot completion %s: exit %d", tc.shell, code)
		}
		for _, w := range tc.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("allot completion %s lacks %q", tc.shell, w)
			}
		}
		if _, err := exec.LookPath(tc.check[0]); err != nil {
			continue
		}
		p := filepath.Join(t.TempDir(), "c")
		os.WriteFile(p, out.Bytes(), 0o600)
		if b, err := exec.Command(tc.check[0], append(tc.check[1:], p)...).CombinedOutput(); err != nil {
			t.Errorf("%s rejects allot completion %s: %v\n%s", tc.check[0], tc.shell, err, b)
		}
	}
	if code := run([]string{"completion", "tcsh"}, io.Discard, io.Discard); code != 2 {
		t.Errorf("allot completion tcsh: exit %d, want 2", code)
	}
}
