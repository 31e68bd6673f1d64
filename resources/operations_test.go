package resources

import (
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	mres "github.com/mesos/mesos-go/api/v1/lib/resources"
)

func dyn(role, principal string) mesos.Resource_ReservationInfo {
	t := mesos.Resource_ReservationInfo_DYNAMIC
	ri := mesos.Resource_ReservationInfo{Type: &t, Role: &role}
	if principal != "" {
		ri.Principal = &principal
	}
	return ri
}

// res builds one scalar resource with the given reservation stack.
func res(name string, v float64, stack ...mesos.Resource_ReservationInfo) mesos.Resource {
	t := mesos.SCALAR
	return mesos.Resource{Name: name, Type: &t, Scalar: &mesos.Value_Scalar{Value: v}, Reservations: stack}
}

func vol(v float64, id, path string, stack ...mesos.Resource_ReservationInfo) mesos.Resource {
	r := res("disk", v, stack...)
	r.Disk = &mesos.Resource_DiskInfo{Persistence: &mesos.Resource_DiskInfo_Persistence{ID: id}, Volume: &mesos.Volume{ContainerPath: path}}
	return r
}

func op(t mesos.Offer_Operation_Type) *mesos.Offer_Operation { return &mesos.Offer_Operation{Type: t} }

func reserveOp(rs ...mesos.Resource) *mesos.Offer_Operation {
	o := op(mesos.Offer_Operation_RESERVE)
	o.Reserve = &mesos.Offer_Operation_Reserve{Resources: rs}
	return o
}

func unreserveOp(rs ...mesos.Resource) *mesos.Offer_Operation {
	o := op(mesos.Offer_Operation_UNRESERVE)
	o.Unreserve = &mesos.Offer_Operation_Unreserve{Resources: rs}
	return o
}

func createOp(rs ...mesos.Resource) *mesos.Offer_Operation {
	o := op(mesos.Offer_Operation_CREATE)
	o.Create = &mesos.Offer_Operation_Create{Volumes: rs}
	return o
}

func destroyOp(rs ...mesos.Resource) *mesos.Offer_Operation {
	o := op(mesos.Offer_Operation_DESTROY)
	o.Destroy = &mesos.Offer_Operation_Destroy{Volumes: rs}
	return o
}

func TestOperations(t *testing.T) {
	eng, ml := dyn("eng", "ops"), dyn("eng/ml", "ops")
	static := StaticMesos(map[string]Resources{Unreserved: MustParse("cpus:8;disk:1000"), "ads": MustParse("cpus:2")})
	grow := op(mesos.Offer_Operation_GROW_VOLUME)
	grow.GrowVolume = &mesos.Offer_Operation_GrowVolume{Volume: vol(100, "v1", "data", eng), Addition: res("disk", 50, eng)}
	shrink := op(mesos.Offer_Operation_SHRINK_VOLUME)
	shrink.ShrinkVolume = &mesos.Offer_Operation_ShrinkVolume{Volume: vol(100, "v1", "data", eng), Subtract: mesos.Value_Scalar{Value: 30}}
	tests := []struct {
		name string
		ops  []*mesos.Offer_Operation
		want map[string]string // quantities by role after the ops
		err  string            // the last op's error
	}{
		{"reserve", []*mesos.Offer_Operation{reserveOp(res("cpus", 4, eng))},
			map[string]string{"*": "cpus:4;disk:1000", "ads": "cpus:2", "eng": "cpus:4"}, ""},
		{"refine", []*mesos.Offer_Operation{reserveOp(res("cpus", 4, eng)), reserveOp(res("cpus", 1, eng, ml))},
			map[string]string{"*": "cpus:4;disk:1000", "ads": "cpus:2", "eng": "cpus:3", "eng/ml": "cpus:1"}, ""},
		{"refine not below", []*mesos.Offer_Operation{reserveOp(res("cpus", 4, eng)), reserveOp(res("cpus", 1, eng, dyn("ads", "")))},
			nil, `not a refinement of "eng"`},
		{"reserve too much", []*mesos.Offer_Operation{reserveOp(res("cpus", 9, eng))}, nil, "is not available"},
		{"reserve static", []*mesos.Offer_Operation{reserveOp(res("cpus", 1))}, nil, "has no reservations"},
		{"unreserve", []*mesos.Offer_Operation{reserveOp(res("cpus", 4, eng)), unreserveOp(res("cpus", 4, eng))},
			map[string]string{"*": "cpus:8;disk:1000", "ads": "cpus:2"}, ""},
		{"unreserve static", []*mesos.Offer_Operation{unreserveOp(StaticMesos(map[string]Resources{"ads": MustParse("cpus:2")})...)},
			nil, "is not dynamically reserved"},
		{"create, destroy", []*mesos.Offer_Operation{reserveOp(res("disk", 200, eng)), createOp(vol(100, "v1", "data", eng)), destroyOp(vol(100, "v1", "data", eng))},
			map[string]string{"*": "cpus:8;disk:800", "ads": "cpus:2", "eng": "disk:200"}, ""},
		{"create unreserved", []*mesos.Offer_Operation{createOp(vol(100, "v1", "data"))}, nil, "RESERVE the disk first"},
		{"create twice", []*mesos.Offer_Operation{reserveOp(res("disk", 200, eng)), createOp(vol(100, "v1", "data", eng)), createOp(vol(100, "v1", "data", eng))},
			nil, `persistence id "v1" is already in use`},
		{"create absolute", []*mesos.Offer_Operation{reserveOp(res("disk", 200, eng)), createOp(vol(100, "v1", "/data", eng))}, nil, "must be relative"},
		{"unreserve volume", []*mesos.Offer_Operation{reserveOp(res("disk", 200, eng)), createOp(vol(100, "v1", "data", eng)), unreserveOp(vol(100, "v1", "data", eng))},
			nil, "DESTROY it first"},
		{"grow", []*mesos.Offer_Operation{reserveOp(res("disk", 200, eng)), createOp(vol(100, "v1", "data", eng)), grow},
			map[string]string{"*": "cpus:8;disk:800", "ads": "cpus:2", "eng": "disk:200"}, ""},
		{"shrink", []*mesos.Offer_Operation{reserveOp(res("disk", 200, eng)), createOp(vol(100, "v1", "data", eng)), shrink},
			map[string]string{"*": "cpus:8;disk:800", "ads": "cpus:2", "eng": "disk:200"}, ""},
		{"launch", []*mesos.Offer_Operation{op(mesos.Offer_Operation_LAUNCH)}, nil, "not a reservation or volume operation"},
		{"reservation update", []*mesos.Offer_Operation{func() *mesos.Offer_Operation {
			o := reserveOp(res("cpus", 1, eng))
			o.Reserve.Source = []mesos.Resource{res("cpus", 1)}
			return o
		}()}, nil, "reserve.source"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			total := static.Clone()
			var err error
			for _, o := range tt.ops {
				var c Conversion
				if c, err = Convert(total, o); err == nil {
					total, err = c.Apply(total)
				}
				if err != nil {
					break
				}
			}
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			checkQuantities(t, total, tt.want)
			back, err := ApplyCheckpointed(static, Checkpointed(total))
			if err != nil {
				t.Fatal(err)
			}
			if !mres.Equivalent(back, total) {
				t.Errorf("ApplyCheckpointed(static, Checkpointed(total)) = %v, want %v", back, total)
			}
		})
	}
}

func checkQuantities(t *testing.T, total mesos.Resources, want map[string]string) {
	t.Helper()
	got, err := Quantities(total)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Errorf("quantities %v, want %v", got, want)
	}
	for role, w := range want {
		if !got[role].Equal(MustParse(w)) {
			t.Errorf("role %q: %v, want %s", role, got[role], w)
		}
	}
}

func TestShrinkVolumeKeepsID(t *testing.T) {
	eng := dyn("eng", "")
	total := mesos.Resources{vol(100, "v1", "data", eng)}
	o := op(mesos.Offer_Operation_SHRINK_VOLUME)
	o.ShrinkVolume = &mesos.Offer_Operation_ShrinkVolume{Volume: vol(100, "v1", "data", eng), Subtract: mesos.Value_Scalar{Value: 100}}
	if _, err := Convert(total, o); err == nil || !strings.Contains(err.Error(), "below the volume's size") {
		t.Fatalf("shrinking to nothing: %v", err)
	}
	o.ShrinkVolume.Subtract.Value = 40
	c, err := Convert(total, o)
	if err == nil {
		total, err = c.Apply(total)
	}
	if err != nil {
		t.Fatal(err)
	}
	vs := Volumes(total)
	if len(vs) != 1 || vs[0].GetScalar().GetValue() != 60 || vs[0].Disk.Persistence.ID != "v1" {
		t.Errorf("volumes after shrink: %v", vs)
	}
}

func TestParseByRole(t *testing.T) {
	tests := []struct {
		in, out, err string
	}{
		{"cpus(ads):4;mem(ads):8192;cpus:2", "cpus:2;cpus(ads):4;mem(ads):8192", ""},
		{"cpus(*):2;disk(eng/ml):10", "cpus:2;disk(eng/ml):10", ""},
		{"", "{}", ""},
		{"cpus(ads:4", "", "want name(role):value"},
		{"cpus", "", "want name:value"},
		{"cpus(a)(b):4", "", "want name(role):value"},
		{"cpus(a b):4", "", "contains a control character or whitespace"},
		{"cpus(a//b):4", "", "two adjacent slashes"},
		{"cpus(-a):4", "", "starts with a dash"},
		{"cpus(..):4", "", `cannot include ".."`},
		{"cpus():4", "", "empty role name is invalid"},
		{"cpus(ads):x", "", `resource "cpus(ads):x"`},
	}
	for _, tt := range tests {
		got, err := ParseByRole(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseByRole(%q) error %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseByRole(%q): %v", tt.in, err)
			continue
		}
		if s := FormatByRole(got); s != tt.out {
			t.Errorf("FormatByRole(ParseByRole(%q)) = %q, want %q", tt.in, s, tt.out)
		}
	}
}

func TestStaticMesosDecodes(t *testing.T) {
	list := StaticMesos(map[string]Resources{"ads": MustParse("cpus:4")})
	if len(list) != 1 || len(list[0].Reservations) != 1 || list[0].Reservations[0].GetType() != mesos.Resource_ReservationInfo_STATIC ||
		list[0].Reservations[0].GetRole() != "ads" {
		t.Fatalf("StaticMesos = %v", list)
	}
}

// Take never splits a volume and takes scalars and ports up to what is
// wanted.
func TestTake(t *testing.T) {
	eng := dyn("eng", "")
	pt := mesos.RANGES
	ports := mesos.Resource{Name: "ports", Type: &pt, Ranges: &mesos.Value_Ranges{Range: []mesos.Value_Range{{Begin: 100, End: 110}}}, Reservations: []mesos.Resource_ReservationInfo{eng}}
	pool := mesos.Resources{res("disk", 50, eng), vol(100, "v1", "data", eng), res("cpus", 4, eng), ports}
	tests := []struct {
		want string
		got  map[string]string
		vols int
	}{
		{"cpus:4;disk:150;ports:[100-110]", map[string]string{"eng": "cpus:4;disk:150;ports:[100-110]"}, 1},
		{"cpus:1;disk:60;ports:[105-120]", map[string]string{"eng": "cpus:1;disk:50;ports:[105-110]"}, 0},
		{"disk:100", map[string]string{"eng": "disk:100"}, 1},
	}
	for _, tt := range tests {
		got := Take(pool, MustParse(tt.want))
		checkQuantities(t, got, tt.got)
		if n := len(Volumes(got)); n != tt.vols {
			t.Errorf("Take(%s) holds %d volumes, want %d", tt.want, n, tt.vols)
		}
	}
}
