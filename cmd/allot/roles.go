package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	mmaster "github.com/mesos/mesos-go/api/v1/lib/master"
	mquota "github.com/mesos/mesos-go/api/v1/lib/quota"

	"github.com/allot-sched/allot/api/operator"
)

// `allot roles` and `allot quota get|set`: the roles the master knows with
// their weight, quota, allocation and reservations (GET /roles), and
// Mesos's GET_QUOTA and UPDATE_QUOTA on the operator API.

func init() {
	register(command{name: "roles", summary: "list roles: weight, quota guarantee and limit, allocated, reserved, frameworks", run: runRoles})
	register(command{name: "quota", summary: "quota get | quota set ROLE [--guarantee R] [--limit R] [--force]: a role's guarantee and limit", run: runQuota})
}

// runRoles prints GET /roles.
func runRoles(args []string, stdout, stderr io.Writer) error {
	fs, c := newCLIFlags("roles", "[flags]", "List every role with a weight, a quota, a reservation or a framework (and their\nancestors): weight, quota guarantee and limit, allocated and reserved resources\n(a role's own and its descendants'), and the frameworks subscribed to it.", stderr)
	if _, err := parseInterleaved(fs, args); err != nil {
		return err
	}
	b, err := call(c.client(), c.masters, http.MethodGet, "/roles", nil)
	if err != nil {
		return err
	}
	var doc operator.Roles
	if err := json.Unmarshal(b, &doc); err != nil {
		return fmt.Errorf("the master's /roles is not what this CLI reads: %v", err)
	}
	if c.json {
		return printJSON(stdout, doc.Roles)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ROLE\tWEIGHT\tGUARANTEE\tLIMIT\tALLOCATED\tRESERVED\tFRAMEWORKS")
	for _, r := range doc.Roles {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\n", r.Name, strconv.FormatFloat(r.Weight, 'g', -1, 64),
			fmtScalars(r.Quota.Guarantee), fmtScalars(r.Quota.Limit), fmtScalars(r.Allocated), fmtScalars(r.Reserved), len(r.Frameworks))
	}
	return tw.Flush()
}

// fmtScalars is name:amount pairs in name order, "-" for none.
func fmtScalars(m map[string]float64) string {
	if len(m) == 0 {
		return "-"
	}
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = k + ":" + strconv.FormatFloat(m[k], 'g', -1, 64)
	}
	return strings.Join(parts, ";")
}

// runQuota is `allot quota get` and `allot quota set ROLE`.
func runQuota(args []string, stdout, stderr io.Writer) error {
	if len(args) < 1 || (args[0] != "get" && args[0] != "set") {
		return usagef("usage: allot quota get | allot quota set ROLE [--guarantee 'cpus:4;mem:4096'] [--limit 'cpus:8'] [--force]")
	}
	verb := args[0]
	fs, c := newCLIFlags("quota "+verb, "[ROLE] [flags]", "get: every role's quota (Mesos's GET_QUOTA).\nset: replace ROLE's quota (Mesos's UPDATE_QUOTA): its guarantee and its limit, each\n'name:amount;...' of scalar resources. A resource absent from --limit has no limit;\nset with neither --guarantee nor --limit resets ROLE to no quota.", stderr)
	guarantee := fs.String("guarantee", "", "set: what ROLE is guaranteed, `'cpus:4;mem:4096'`")
	limit := fs.String("limit", "", "set: what ROLE (with its descendants) may not exceed, `'cpus:8'`")
	force := fs.Bool("force", false, "set: skip the check that all guarantees fit the cluster's capacity")
	pos, err := parseInterleaved(fs, args[1:])
	if err != nil {
		return err
	}
	if verb == "get" {
		if len(pos) != 0 {
			return usagef("quota get takes no arguments")
		}
		return quotaGet(c, stdout)
	}
	if len(pos) != 1 {
		return usagef("quota set takes one ROLE")
	}
	cfg := mquota.QuotaConfig{Role: pos[0]}
	if cfg.Guarantees, err = parseQuotaScalars(*guarantee); err != nil {
		return usagef("--guarantee: %v", err)
	}
	if cfg.Limits, err = parseQuotaScalars(*limit); err != nil {
		return usagef("--limit: %v", err)
	}
	f := *force
	body, _ := json.Marshal(mmaster.Call{Type: mmaster.Call_UPDATE_QUOTA,
		UpdateQuota: &mmaster.Call_UpdateQuota{Force: &f, QuotaConfigs: []mquota.QuotaConfig{cfg}}})
	if _, err := call(c.client(), c.masters, http.MethodPost, "/api/v1", body); err != nil {
		return err
	}
	if len(cfg.Guarantees) == 0 && len(cfg.Limits) == 0 {
		fmt.Fprintf(stdout, "quota of %s removed\n", cfg.Role)
		return nil
	}
	fmt.Fprintf(stdout, "quota of %s: guarantee %s, limit %s\n", cfg.Role, fmtScalars(scalarValues(cfg.Guarantees)), fmtScalars(scalarValues(cfg.Limits)))
	return nil
}

// quotaGet prints GET_QUOTA's configs.
func quotaGet(c *cliFlags, stdout io.Writer) error {
	body, _ := json.Marshal(mmaster.Call{Type: mmaster.Call_GET_QUOTA})
	b, err := call(c.client(), c.masters, http.MethodPost, "/api/v1", body)
	if err != nil {
		return err
	}
	var resp mmaster.Response
	if err := json.Unmarshal(b, &resp); err != nil {
		return fmt.Errorf("GET_QUOTA: bad answer %q: %v", b, err)
	}
	st := resp.GetGetQuota().GetStatus()
	if c.json {
		return printJSON(stdout, st)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ROLE\tGUARANTEE\tLIMIT")
	for _, cfg := range st.Configs {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", cfg.Role, fmtScalars(scalarValues(cfg.Guarantees)), fmtScalars(scalarValues(cfg.Limits)))
	}
	return tw.Flush()
}

func scalarValues(in map[string]mesos.Value_Scalar) map[string]float64 {
	out := make(map[string]float64, len(in))
	for k, v := range in {
		out[k] = v.Value
	}
	return out
}

// parseQuotaScalars reads 'cpus:4;mem:4096' (Mesos's resource text, scalars
// only); "" is none.
func parseQuotaScalars(s string) (map[string]mesos.Value_Scalar, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	out := map[string]mesos.Value_Scalar{}
	for _, part := range strings.Split(s, ";") {
		name, val, ok := strings.Cut(strings.TrimSpace(part), ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, fmt.Errorf("%q is not name:amount", part)
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%q: the amount is not a number", part)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("%s given twice", name)
		}
		out[name] = mesos.Value_Scalar{Value: v}
	}
	return out, nil
}
