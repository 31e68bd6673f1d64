package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The server config file (--config of allot master and allot agent) is
// the flags themselves, one `flag=value` a line, read with the standard
// library: every flag has the same name, meaning and --help text in the
// file as on the command line, there is nothing new to learn or to keep
// in step, and no dependency. Blank lines and lines starting with # are
// skipped; a value may be double-quoted (Go syntax) to keep leading or
// trailing spaces; a repeatable flag (--policy-opt) is repeated as lines.
// The command line, then ALLOT_* in the environment, override the file.

// addConfigFlag adds --config to a server's flag set.
func addConfigFlag(fs *flag.FlagSet, path *string) {
	fs.StringVar(path, "config", "", "read flags from this `file`, one flag=value a line (# comments; see deploy/allot-*.conf);\nflags on the command line and ALLOT_* in the environment override it")
}

// parseServerFlags parses a server's command line and environment
// (parseFlags), then fills the flags neither set from --config, then
// makes every directory flag absolute.
func parseServerFlags(fs *flag.FlagSet, args []string, configPath *string) error {
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *configPath != "" {
		if err := applyConfigFile(fs, *configPath); err != nil {
			return err
		}
	}
	return absDirFlags(fs)
}

// applyConfigFile sets the flags the file names that were not set on the
// command line or in the environment.
func applyConfigFile(fs *flag.FlagSet, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return usagef("--config: %v", err)
	}
	defer f.Close()
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		name, value, skip, err := parseConfigLine(sc.Text())
		if err == nil && !skip && fs.Lookup(name) == nil {
			err = unknownFlagErr(fs, name)
		}
		if err == nil && name == "config" {
			err = fmt.Errorf("a config file cannot name another")
		}
		if err == nil && !skip && !set[name] {
			if e := fs.Set(name, value); e != nil {
				err = fmt.Errorf("%s=%q: %v", name, value, e)
			}
		}
		if err != nil {
			return usagef("--config %s:%d: %v", path, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return usagef("--config %s: %v", path, err)
	}
	return nil
}

// parseConfigLine splits one line into a flag name and its value; skip is
// set for blank lines and comments.
func parseConfigLine(line string) (name, value string, skip bool, err error) {
	line = strings.TrimSpace(line)
	if line == "" || strings.HasPrefix(line, "#") {
		return "", "", true, nil
	}
	name, value, ok := strings.Cut(line, "=")
	name = strings.TrimLeft(strings.TrimSpace(name), "-")
	if !ok || name == "" {
		return "", "", false, fmt.Errorf("%q: want flag=value", line)
	}
	value = strings.TrimSpace(value)
	if strings.HasPrefix(value, `"`) {
		if value, err = strconv.Unquote(value); err != nil {
			return "", "", false, fmt.Errorf("%s: bad quoted value: %v", name, err)
		}
	}
	return name, value, false, nil
}

// unknownFlagErr names the flag a config file's unknown name is nearest.
func unknownFlagErr(fs *flag.FlagSet, name string) error {
	best, bestD := "", -1
	fs.VisitAll(func(fl *flag.Flag) {
		if d := editDistance(name, fl.Name); bestD < 0 || d < bestD {
			best, bestD = fl.Name, d
		}
	})
	if bestD >= 0 && bestD <= 3 {
		return fmt.Errorf("no flag %q; did you mean %s?", name, best)
	}
	return fmt.Errorf("no flag %q (%s --help lists them)", name, fs.Name())
}

// dirFlags are the flags that name directories a server hands on to
// processes that run elsewhere (executors start in their sandbox): a
// relative path would name another directory there.
var dirFlags = []string{"work-dir", "cgroups-root"}

// absDirFlags makes the directory flags absolute against the directory
// the server was started in.
func absDirFlags(fs *flag.FlagSet) error {
	for _, name := range dirFlags {
		fl := fs.Lookup(name)
		if fl == nil || fl.Value.String() == "" || filepath.IsAbs(fl.Value.String()) {
			continue
		}
		abs, err := filepath.Abs(fl.Value.String())
		if err != nil {
			return usagef("--%s %s: %v", name, fl.Value.String(), err)
		}
		if err := fs.Set(name, abs); err != nil {
			return err
		}
	}
	return nil
}
