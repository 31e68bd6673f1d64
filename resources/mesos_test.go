package resources

import (
	"math"
	"sort"
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

func scalarRes(name string, v float64) mesos.Resource {
	t := mesos.SCALAR
	return mesos.Resource{Name: name, Type: &t, Scalar: &mesos.Value_Scalar{Value: v}}
}

func rangesRes(name string, bounds ...uint64) mesos.Resource {
	t := mesos.RANGES
	var vr []mesos.Value_Range
	for i := 0; i+1 < len(bounds); i += 2 {
		vr = append(vr, mesos.Value_Range{Begin: bounds[i], End: bounds[i+1]})
	}
	return mesos.Resource{Name: name, Type: &t, Ranges: &mesos.Value_Ranges{Range: vr}}
}

func reserved(res mesos.Resource, roles ...string) mesos.Resource {
	for _, r := range roles {
		rl := r
		t := mesos.Resource_ReservationInfo_DYNAMIC
		res.Reservations = append(res.Reservations, mesos.Resource_ReservationInfo{Type: &t, Role: &rl})
	}
	return res
}

func withDeprecatedRole(res mesos.Resource, role string) mesos.Resource {
	res.Role = &role
	return res
}

func TestReservationRole(t *testing.T) {
	tests := []struct {
		name string
		res  mesos.Resource
		want string
	}{
		{"unreserved", scalarRes("cpus", 1), Unreserved},
		{"deprecated star", withDeprecatedRole(scalarRes("cpus", 1), "*"), Unreserved},
		{"deprecated role", withDeprecatedRole(scalarRes("cpus", 1), "web"), "web"},
		{"reservation", reserved(scalarRes("cpus", 1), "web"), "web"},
		{"refined stack uses last", reserved(scalarRes("cpus", 1), "eng", "eng/web"), "eng/web"},
		{"reservations beat deprecated role", withDeprecatedRole(reserved(scalarRes("cpus", 1), "web"), "old"), "web"},
		{"empty reservation role falls back", withDeprecatedRole(reserved(scalarRes("cpus", 1), ""), "old"), "old"},
	}
	for _, tt := range tests {
		if got := ReservationRole(&tt.res); got != tt.want {
			t.Errorf("%s: ReservationRole = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestFromMesos(t *testing.T) {
	alloc := func(res mesos.Resource) mesos.Resource {
		r := "someone"
		res.AllocationInfo = &mesos.Resource_AllocationInfo{Role: &r}
		return res
	}
	tests := []struct {
		name string
		in   []mesos.Resource
		want map[string]string
	}{
		{"nil", nil, map[string]string{}},
		{"unreserved", []mesos.Resource{
			scalarRes("cpus", 24), scalarRes("mem", 4096), scalarRes("disk", 4096), rangesRes("ports", 31000, 32000),
		}, map[string]string{"*": "cpus:24;mem:4096;disk:4096;ports:[31000-32000]"}},
		{"roles", []mesos.Resource{
			scalarRes("cpus", 4),
			reserved(scalarRes("cpus", 2), "web"),
			withDeprecatedRole(scalarRes("mem", 512), "batch"),
			reserved(rangesRes("ports", 80, 80), "web"),
		}, map[string]string{"*": "cpus:4", "web": "cpus:2;ports:[80-80]", "batch": "mem:512"}},
		{"repeated entries add up", []mesos.Resource{
			scalarRes("cpus", 0.1), scalarRes("cpus", 0.2), scalarRes("foo", 1), scalarRes("foo", 2),
			rangesRes("ports", 1, 2), rangesRes("ports", 3, 4, 10, 10),
		}, map[string]string{"*": "cpus:0.3;foo:3;ports:[1-4,10-10]"}},
		{"unnormalized ranges", []mesos.Resource{rangesRes("ports", 5, 6, 1, 3, 2, 4)},
			map[string]string{"*": "ports:[1-6]"}},
		{"rounding", []mesos.Resource{scalarRes("cpus", 0.0015)}, map[string]string{"*": "cpus:0.002"}},
		{"allocation info ignored", []mesos.Resource{alloc(scalarRes("cpus", 1)), alloc(reserved(scalarRes("mem", 1), "r"))},
			map[string]string{"*": "cpus:1", "r": "mem:1"}},
		{"advisory and extra", []mesos.Resource{scalarRes("disk_bw", 100), scalarRes("net_bw", 10), scalarRes("gpus", 1), scalarRes("fpgas", 2)},
			map[string]string{"*": "gpus:1;disk_bw:100;net_bw:10;fpgas:2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FromMesos(tt.in)
			if err != nil {
				t.Fatalf("FromMesos: %v", err)
			}
			if len(got) != len(tt.want) {
				t.Errorf("FromMesos roles = %v, want %v", keys(got), tt.want)
			}
			for role, s := range tt.want {
				if want := MustParse(s); !got[role].Equal(want) {
					t.Errorf("FromMesos[%q] = %v, want %v", role, got[role], want)
				}
				checkResources(t, "FromMesos["+role+"]", got[role])
			}
		})
	}
}

func keys(m map[string]Resources) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestFromMesosErrors(t *testing.T) {
	set := func(name string) mesos.Resource {
		t := mesos.SET
		return mesos.Resource{Name: name, Type: &t, Set: &mesos.Value_Set{Item: []string{"a"}}}
	}
	text := mesos.TEXT
	tests := []struct {
		name     string
		in       []mesos.Resource
		contains []string
	}{
		{"set", []mesos.Resource{scalarRes("cpus", 1), set("disks")}, []string{`"disks"`, "SET"}},
		{"text", []mesos.Resource{{Name: "notes", Type: &text}}, []string{`"notes"`, "not supported"}},
		{"non-ports ranges", []mesos.Resource{rangesRes("cpus", 1, 2)}, []string{`"cpus"`, `only "ports"`}},
		{"other ranges", []mesos.Resource{rangesRes("ephemeral_ports", 1, 2)}, []string{`"ephemeral_ports"`}},
		{"bad range", []mesos.Resource{rangesRes("ports", 5, 1)}, []string{`"ports"`, "[5-1]"}},
		{"scalar ports", []mesos.Resource{scalarRes("ports", 3)}, []string{`"ports"`, "RANGES"}},
		{"NaN", []mesos.Resource{scalarRes("cpus", math.NaN())}, []string{`"cpus"`, "NaN"}},
		{"+Inf", []mesos.Resource{scalarRes("mem", math.Inf(1))}, []string{`"mem"`}},
		{"-Inf", []mesos.Resource{scalarRes("mem", math.Inf(-1))}, []string{`"mem"`}},
		{"negative", []mesos.Resource{scalarRes("disk", -1)}, []string{`"disk"`, "-1"}},
		{"negative extra", []mesos.Resource{scalarRes("foo", -0.5)}, []string{`"foo"`, "-0.5"}},
		{"too large", []mesos.Resource{scalarRes("mem", 1e300)}, []string{`"mem"`, "too large"}},
		{"too large sum", []mesos.Resource{scalarRes("mem", 9e9), scalarRes("mem", 9e9)}, []string{`"mem"`, "too large"}},
		{"unnamed", []mesos.Resource{scalarRes("cpus", 1), scalarRes("", 1)}, []string{"#1", "no name"}},
		{"unnamed ranges", []mesos.Resource{rangesRes("", 1, 2)}, []string{"#0", "no name"}},
	}
	for _, tt := range tests {
		got, err := FromMesos(tt.in)
		if err == nil {
			t.Errorf("%s: FromMesos = %v, want error", tt.name, got)
			continue
		}
		if got != nil {
			t.Errorf("%s: FromMesos returned %v with its error", tt.name, got)
		}
		for _, c := range tt.contains {
			if !strings.Contains(err.Error(), c) {
				t.Errorf("%s: error %q does not mention %q", tt.name, err, c)
			}
		}
	}
}

func TestToMesos(t *testing.T) {
	r := MustParse("cpus:2.5;mem:1024;foo:1;ports:[31000-31001,31005-31005]")
	list := ToMesos(r, "", "")
	var names []string
	for _, res := range list {
		names = append(names, res.Name)
		if len(res.Reservations) != 0 || res.AllocationInfo != nil || res.Role != nil {
			t.Errorf("unreserved %q carries role data: %+v", res.Name, res)
		}
	}
	if got, want := strings.Join(names, ","), "cpus,mem,foo,ports"; got != want {
		t.Errorf("ToMesos names = %s, want %s (zero scalars omitted)", got, want)
	}
	if len(list) != 4 {
		t.Fatalf("ToMesos returned %d resources", len(list))
	}
	if list[0].GetType() != mesos.SCALAR || list[0].GetScalar().GetValue() != 2.5 {
		t.Errorf("cpus = %+v", list[0])
	}
	ports := list[3]
	if ports.GetType() != mesos.RANGES {
		t.Errorf("ports type = %v", ports.GetType())
	}
	if got := ports.GetRanges().GetRange(); len(got) != 2 || got[0].Begin != 31000 || got[0].End != 31001 || got[1].Begin != 31005 || got[1].End != 31005 {
		t.Errorf("ports ranges = %+v", got)
	}

	if got := ToMesos(Resources{}, "web", "web"); len(got) != 0 {
		t.Errorf("ToMesos(empty) = %v, want nothing", got)
	}
	if got := ToMesos(MustParse("foo:0;cpus:0"), "", ""); len(got) != 0 {
		t.Errorf("ToMesos(zeros) = %v, want nothing", got)
	}
}

func TestToMesosRolesAndAllocation(t *testing.T) {
	r := MustParse("cpus:1;mem:10;gpus:0;bar:0.5;ports:[80-80]")
	tests := []struct {
		role, alloc string
		wantRole    string
	}{
		{"", "", Unreserved},
		{"*", "", Unreserved},
		{"", "fw-role", Unreserved},
		{"*", "fw-role", Unreserved},
		{"web", "", "web"},
		{"web", "web", "web"},
		{"eng/web", "eng", "eng/web"},
	}
	for _, tt := range tests {
		list := ToMesos(r, tt.role, tt.alloc)
		if len(list) != 4 {
			t.Errorf("ToMesos(%q, %q) returned %d resources, want 4", tt.role, tt.alloc, len(list))
		}
		for i := range list {
			res := &list[i]
			if got := ReservationRole(res); got != tt.wantRole {
				t.Errorf("ToMesos(%q, %q): %q reserved for %q, want %q", tt.role, tt.alloc, res.Name, got, tt.wantRole)
			}
			if tt.wantRole == Unreserved && len(res.Reservations) != 0 {
				t.Errorf("ToMesos(%q, %q): unreserved %q has reservations %+v", tt.role, tt.alloc, res.Name, res.Reservations)
			}
			if tt.wantRole != Unreserved && len(res.Reservations) != 1 {
				t.Errorf("ToMesos(%q, %q): %q has %d reservations, want 1", tt.role, tt.alloc, res.Name, len(res.Reservations))
			}
			if (res.AllocationInfo != nil) != (tt.alloc != "") {
				t.Errorf("ToMesos(%q, %q): %q AllocationInfo = %+v, want present iff allocation role set", tt.role, tt.alloc, res.Name, res.AllocationInfo)
			}
			if tt.alloc != "" && res.GetAllocationInfo().GetRole() != tt.alloc {
				t.Errorf("ToMesos(%q, %q): %q allocated to %q", tt.role, tt.alloc, res.Name, res.GetAllocationInfo().GetRole())
			}
		}
		// Each resource owns its reservation and allocation info.
		if len(list) >= 2 && tt.alloc != "" && list[0].AllocationInfo == list[1].AllocationInfo {
			t.Errorf("ToMesos(%q, %q): resources share one AllocationInfo", tt.role, tt.alloc)
		}
	}
}

func TestMesosRoundTrip(t *testing.T) {
	inputs := []string{
		"",
		"cpus:24;mem:4096;disk:4096;ports:[31000-32000]",
		"cpus:0.001;mem:0.1;gpus:8;disk_bw:100.5;net_bw:1000;foo:2;bar:0.333;ports:[1-2,4-5,65535-65535]",
		"cpus:0.1;mem:0.2;disk:0.3",
		"cpus:9223372036;mem:1234567.891",
		"ports:[0-18446744073709551615]",
	}
	for _, in := range inputs {
		r := MustParse(in)
		for _, role := range []string{"", Unreserved, "web"} {
			for _, alloc := range []string{"", "fw"} {
				got, err := FromMesos(ToMesos(r, role, alloc))
				if err != nil {
					t.Errorf("FromMesos(ToMesos(%v, %q, %q)): %v", r, role, alloc, err)
					continue
				}
				wantRole := role
				if role == "" {
					wantRole = Unreserved
				}
				if r.IsEmpty() {
					if len(got) != 0 {
						t.Errorf("round trip of empty set = %v", got)
					}
					continue
				}
				if len(got) != 1 || !got[wantRole].Equal(r) {
					t.Errorf("FromMesos(ToMesos(%v, %q, %q)) = %v, want {%q: %v}", r, role, alloc, got, wantRole, r)
				}
			}
		}
	}
}

// Unreserved and reserved resources of one agent come back grouped by role.
func TestMesosRoundTripMixedRoles(t *testing.T) {
	unres := MustParse("cpus:8;mem:2048;ports:[31000-31999]")
	web := MustParse("cpus:2;mem:512;foo:1;ports:[32000-32010]")
	list := append(ToMesos(unres, Unreserved, ""), ToMesos(web, "web", "")...)
	got, err := FromMesos(list)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !got[Unreserved].Equal(unres) || !got["web"].Equal(web) {
		t.Errorf("FromMesos = %v, want {*: %v, web: %v}", got, unres, web)
	}
}
