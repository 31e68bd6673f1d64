package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/allot-sched/allot/internal/tlsconf"
	"github.com/allot-sched/allot/master"
)

func init() {
	register(command{name: "operator", summary: "operate a master cluster: raft list-peers|add-voter|remove-peer|transfer-leadership, snapshot save|restore, policy show, sorter get|set", run: runOperator})
}

const operatorUsage = `raft list-peers
       allot operator raft add-voter HTTP-ADDR RAFT-ADDR
       allot operator raft remove-peer HTTP-ADDR
       allot operator raft transfer-leadership [HTTP-ADDR]
       allot operator snapshot save FILE
       allot operator snapshot restore FILE
       allot operator policy show
       allot operator sorter get
       allot operator sorter set [--sorter S] [--agent-selection A] [--mode M]
   (flags go after the verb: allot operator raft list-peers --master a:5050,b:5050)`

// operatorFlags are the flags every operator verb takes, plus the sorter
// switch's own when the group is "sorter".
type operatorFlags struct {
	masters string
	timeout time.Duration
	tlsCA   string
	cred    credFlags
	sw      master.SorterConfig
	json    bool
}

// parseOperatorFlags parses the flags after "allot operator GROUP VERB" and
// returns the remaining positional arguments.
func parseOperatorFlags(group, verb string, args []string, stderr io.Writer) (*operatorFlags, []string, error) {
	var f operatorFlags
	fs := newFlagSet("operator "+group+" "+verb, "[flags] [args]", "Usage: allot operator "+operatorUsage+
		"\n\nHTTP-ADDR is a master's HTTP host:port (its raft server id); RAFT-ADDR its --raft-addr.", stderr)
	fs.StringVar(&f.masters, "master", "127.0.0.1:5050", "the masters' HTTP addresses, `host:port[,...]`; any one that answers will do")
	fs.DurationVar(&f.timeout, "timeout", 60*time.Second, "give up after this `duration`")
	addClientTLSFlag(fs, &f.tlsCA)
	addCredFlags(fs, &f.cred)
	fs.BoolVar(&f.json, "json", false, "print the master's answer as JSON instead of a table or a sentence")
	if group == "sorter" {
		fs.StringVar(&f.sw.Sorter, "sorter", "", "sorter set: the criterion to switch to (drf, tsf, psdsf, fifo, ...; empty keeps it)")
		fs.StringVar(&f.sw.AgentSelection, "agent-selection", "", "sorter set: rrr, bestfit or joint (empty keeps it)")
		fs.StringVar(&f.sw.Mode, "mode", "", "sorter set: oblivious or characterized (empty keeps it)")
	}
	if err := parseFlags(fs, args); err != nil {
		return nil, nil, err
	}
	return &f, fs.Args(), nil
}

// runOperator sends one operator call to the masters. Any master will do:
// followers answer membership changes and restores with 307 to the leader,
// which the HTTP client follows; a master that cannot be reached is skipped
// for the next in --master.
func runOperator(args []string, stdout, stderr io.Writer) error {
	if len(args) < 2 {
		return usagef("usage: allot operator %s", operatorUsage)
	}
	group, verb := args[0], args[1]
	f, rest, err := parseOperatorFlags(group, verb, args[2:], stderr)
	if err != nil {
		return err
	}
	cli := withCredential(newHTTPClient(f.timeout, f.tlsCA), &f.cred)
	if f.json {
		if handled, err := operatorJSON(cli, f, group+" "+verb, rest, stdout); handled {
			return err
		}
	}
	switch group + " " + verb {
	case "raft list-peers":
		return operatorListPeers(cli, f.masters, stdout)
	case "raft add-voter", "raft remove-peer", "raft transfer-leadership":
		return operatorRaftChange(cli, f.masters, verb, rest, stdout)
	case "snapshot save":
		return operatorSnapshotSave(cli, f.masters, rest, stdout)
	case "snapshot restore":
		return operatorSnapshotRestore(cli, f.masters, rest, stdout)
	case "sorter get", "sorter set":
		return runSorterSwitch(cli, f.masters, verb, f.sw, stdout)
	case "policy show":
		b, err := call(cli, f.masters, http.MethodGet, master.PolicyPath, nil)
		if err != nil {
			return err
		}
		return showPolicy(b, stdout)
	}
	return usagef("unknown operator verb %q: usage: allot operator %s", group+" "+verb, operatorUsage)
}

// operatorListPeers prints the raft configuration as a table.
func operatorListPeers(cli *http.Client, masters string, stdout io.Writer) error {
	resp, err := call(cli, masters, http.MethodGet, master.RaftPath, nil)
	if err != nil {
		return err
	}
	var peers []master.RaftPeer
	if err := json.Unmarshal(resp, &peers); err != nil {
		return fmt.Errorf("list-peers: bad answer %q: %v", resp, err)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID (HTTP)\tRAFT ADDRESS\tSUFFRAGE\tLEADER")
	for _, p := range peers {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%v\n", p.ID, p.Address, p.Suffrage, p.Leader)
	}
	return tw.Flush()
}

// operatorRaftChange asks for one membership change: add-voter, remove-peer
// or transfer-leadership, with the positional arguments that verb takes.
func operatorRaftChange(cli *http.Client, masters, verb string, rest []string, stdout io.Writer) error {
	req := master.RaftRequest{Op: verb}
	switch {
	case verb == "add-voter" && len(rest) == 2:
		req.ID, req.Address = rest[0], rest[1]
	case verb == "remove-peer" && len(rest) == 1:
		req.ID = rest[0]
	case verb == "transfer-leadership" && len(rest) <= 1:
		if len(rest) == 1 {
			req.ID = rest[0]
		}
	default:
		return usagef("usage: allot operator %s", operatorUsage)
	}
	body, _ := json.Marshal(req)
	if _, err := call(cli, masters, http.MethodPost, master.RaftPath, body); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s %s: done\n", verb, strings.Join(rest, " "))
	return nil
}

// operatorSnapshotSave writes the leader's registry snapshot to FILE.
func operatorSnapshotSave(cli *http.Client, masters string, rest []string, stdout io.Writer) error {
	if len(rest) != 1 {
		return usagef("usage: allot operator snapshot save FILE")
	}
	b, err := call(cli, masters, http.MethodGet, master.SnapshotPath+"?leader=1", nil)
	if err != nil {
		return err
	}
	if err := os.WriteFile(rest[0], b, 0o600); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "saved the registry (%d bytes) to %s\n", len(b), rest[0])
	return nil
}

// operatorSnapshotRestore sends FILE to the leader as the registry to restore.
func operatorSnapshotRestore(cli *http.Client, masters string, rest []string, stdout io.Writer) error {
	if len(rest) != 1 {
		return usagef("usage: allot operator snapshot restore FILE")
	}
	b, err := os.ReadFile(rest[0])
	if err != nil {
		return err
	}
	out, err := call(cli, masters, http.MethodPost, master.SnapshotPath, b)
	if err != nil {
		return err
	}
	fmt.Fprint(stdout, string(out))
	return nil
}

// call tries each master in turn until one answers; a 4xx or 5xx answer
// from a reachable master is final (it says what is wrong).
func call(cli *http.Client, masters, method, path string, body []byte) ([]byte, error) {
	var errs []error
	for _, m := range strings.Split(masters, ",") {
		m = strings.TrimSpace(m)
		if m == "" {
			continue
		}
		req, err := http.NewRequest(method, masterURL(cli, m, path), bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := cli.Do(req)
		if err != nil {
			errs = append(errs, tlsconf.Explain(err, "master at "+m))
			continue
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if tlsconf.IsPlaintextRefusal(resp.StatusCode, b) {
			errs = append(errs, tlsconf.Refused("master at "+m))
			continue
		}
		if resp.StatusCode == http.StatusUnauthorized {
			b = append(b, unauthorizedHint...)
		}
		if resp.StatusCode >= 300 {
			return nil, fmt.Errorf("%s %s on %s: %s: %s", method, path, m, resp.Status, strings.TrimSpace(string(b)))
		}
		return b, nil
	}
	return nil, fmt.Errorf("no master answered: %w", errors.Join(errs...))
}

// runSorterSwitch reads or switches the allocator's policy at runtime
// (master.SorterPath); the leader replicates a switch before answering.
func runSorterSwitch(cli *http.Client, masters, verb string, sw master.SorterConfig, stdout io.Writer) error {
	var b []byte
	var err error
	if verb == "get" {
		b, err = call(cli, masters, http.MethodGet, master.SorterPath, nil)
	} else {
		if sw.Sorter == "" && sw.AgentSelection == "" && sw.Mode == "" {
			return usagef("sorter set: give at least one of --sorter, --agent-selection, --mode")
		}
		body, _ := json.Marshal(sw)
		b, err = call(cli, masters, http.MethodPost, master.SorterPath, body)
	}
	if err != nil {
		return err
	}
	var c master.SorterConfig
	if err := json.Unmarshal(b, &c); err != nil {
		return fmt.Errorf("sorter %s: bad answer %q: %v", verb, b, err)
	}
	prefix := "in force"
	if verb == "set" {
		prefix = "switched to"
	}
	fmt.Fprintf(stdout, "%s: sorter %s, agent selection %s, mode %s\n", prefix, c.Sorter, c.AgentSelection, c.Mode)
	for _, d := range c.Dropped {
		fmt.Fprintf(stdout, "  not carried over: %s\n", d)
	}
	return nil
}
