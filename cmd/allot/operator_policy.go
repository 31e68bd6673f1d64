package main

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/allot-sched/allot/master"
)

// showPolicy prints the policy state the leader holds (GET
// master.PolicyPath): the replicated record's age and whether it is
// current, the co-location bandit's preference matrix as a table, and any
// other model's state as indented JSON.
func showPolicy(body []byte, w io.Writer) error {
	var v master.PolicyView
	if err := json.Unmarshal(body, &v); err != nil {
		return fmt.Errorf("policy show: bad answer %q: %v", body, err)
	}
	fmt.Fprintf(w, "sorter: %s\n", v.Sorter)
	if r := v.Replicated; r != nil {
		state := "behind the leader (replicated at the next --policy-sync-interval)"
		if r.Current {
			state = "current"
		}
		fmt.Fprintf(w, "replicated: %d bytes for --sorter %s at %s, %s\n", r.Bytes, r.Sorter,
			time.Unix(0, r.UpdatedUnixNano).UTC().Format(time.RFC3339), state)
	} else {
		fmt.Fprintln(w, "replicated: none yet")
	}
	if len(v.Models) == 0 {
		fmt.Fprintln(w, "this policy keeps no state")
	}
	for _, m := range v.Models {
		fmt.Fprintf(w, "\nmodel %s:\n", m.Name)
		if m.Name == "bandit" {
			if err := banditTable(m.State, w); err == nil {
				continue
			}
		}
		var out []byte
		var x any
		if json.Unmarshal(m.State, &x) == nil {
			out, _ = json.MarshalIndent(x, "  ", "  ")
		} else {
			out = m.State
		}
		fmt.Fprintf(w, "  %s\n", out)
	}
	return nil
}

// banditTable prints the bandit's preferences H(queued | running): one row
// per running job type, one column per queued type, and the job types the
// frameworks declared.
func banditTable(state json.RawMessage, w io.Writer) error {
	var s struct {
		Prefs struct {
			Types []string    `json:"types"`
			H     [][]float64 `json:"h"`
			RowN  []int64     `json:"row_n"`
		} `json:"prefs"`
		Types map[string]string `json:"types"`
	}
	if err := json.Unmarshal(state, &s); err != nil {
		return err
	}
	p := s.Prefs
	if len(p.H) != len(p.Types) {
		return fmt.Errorf("bandit: %d rows for %d types", len(p.H), len(p.Types))
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "  running \\ queued\t")
	for _, t := range p.Types {
		fmt.Fprintf(tw, "%s\t", t)
	}
	fmt.Fprint(tw, "updates\t\n")
	for i, r := range p.Types {
		fmt.Fprintf(tw, "  %s\t", r)
		for _, h := range p.H[i] {
			fmt.Fprintf(tw, "%.4f\t", h)
		}
		n := int64(0)
		if i < len(p.RowN) {
			n = p.RowN[i]
		}
		fmt.Fprintf(tw, "%d\t\n", n)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "  job types of %d frameworks: %v\n", len(s.Types), s.Types)
	return nil
}
