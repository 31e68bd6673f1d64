package api

import (
	"encoding/base64"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/allot-sched/allot/profile"
	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"google.golang.org/protobuf/proto"
)

func sampleDemand() profile.AppDemand {
	return profile.AppDemand{
		Executors: 4, Cpus: 3, Mem: 4096.5,
		Profile: profile.Profile{Stages: []profile.Stage{
			{Start: 0, End: 12*time.Second + 345*time.Nanosecond, DiskBW: 287.125, NetBW: 3},
			{Start: 12*time.Second + 345*time.Nanosecond, End: 40 * time.Second, DiskBW: 0, NetBW: 156.001},
			{Start: 45 * time.Second, End: 90 * time.Minute, DiskBW: 1e-3, NetBW: 0.1},
		}},
	}
}

func TestAppDemandRoundTrip(t *testing.T) {
	for _, d := range []profile.AppDemand{sampleDemand(), {Executors: 1, Cpus: 0.5, Mem: 128}} {
		b, err := proto.Marshal(AppDemandFromProfile(&d))
		if err != nil {
			t.Fatal(err)
		}
		var m AppDemand
		if err := proto.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		got, err := m.ToProfile()
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, d) {
			t.Errorf("round trip\n got %+v\nwant %+v", got, d)
		}
	}
}

// The demand survives a whole REQUEST call in both Mesos codecs, next to
// the per-task demand's resources, which come back untouched and in order.
func TestAppDemandInRequestCall(t *testing.T) {
	d := sampleDemand()
	res, err := AppDemandResource(AppDemandFromProfile(&d))
	if err != nil {
		t.Fatal(err)
	}
	cpus := mesos.Resource{Name: "cpus", Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: 1}}
	tasks := mesos.Resource{Name: "tasks", Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: 8}}
	call := &scheduler.Call{Type: scheduler.Call_REQUEST, Request: &scheduler.Call_Request{
		Requests: []mesos.Request{{Resources: []mesos.Resource{cpus, res, tasks}}},
	}}
	for _, c := range []Codec{Protobuf, JSON} {
		b, err := c.Marshal(call)
		if err != nil {
			t.Fatal(err)
		}
		var back scheduler.Call
		if err := c.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		m, rest, err := SplitAppDemand(back.GetRequest().Requests[0].Resources)
		if err != nil {
			t.Fatalf("%v: %v", c, err)
		}
		if len(rest) != 2 || rest[0].Name != "cpus" || rest[1].Name != "tasks" {
			t.Errorf("%v: other resources %v", c, rest)
		}
		got, err := m.ToProfile()
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, d) {
			t.Errorf("%v: got %+v, want %+v", c, got, d)
		}
	}
	m, rest, err := SplitAppDemand([]mesos.Resource{cpus})
	if m != nil || len(rest) != 1 || err != nil {
		t.Errorf("without a demand: %v %v %v", m, rest, err)
	}
}

func TestSplitAppDemandErrors(t *testing.T) {
	d := sampleDemand()
	good, _ := AppDemandResource(AppDemandFromProfile(&d))
	set := func(items ...string) mesos.Resource {
		return mesos.Resource{Name: AppDemandResourceName, Type: mesos.SET.Enum(), Set: &mesos.Value_Set{Item: items}}
	}
	tests := []struct {
		name string
		list []mesos.Resource
		want string
	}{
		{"twice", []mesos.Resource{good, good}, "more than once"},
		{"scalar", []mesos.Resource{{Name: AppDemandResourceName, Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: 1}}}, "type SET"},
		{"no item", []mesos.Resource{set()}, "exactly one item"},
		{"two items", []mesos.Resource{set("a", "b")}, "exactly one item"},
		{"not base64", []mesos.Resource{set("!!!")}, "base64"},
		{"not a message", []mesos.Resource{set(base64.StdEncoding.EncodeToString([]byte{0xff, 0xff, 0xff}))}, "not an allot.v1.AppDemand"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := SplitAppDemand(tc.list)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), AppDemandResourceName) {
				t.Errorf("error = %v, want one naming %s with %q", err, AppDemandResourceName, tc.want)
			}
		})
	}
}

func TestToProfileValidates(t *testing.T) {
	tests := []struct {
		name  string
		m     *AppDemand
		field string
	}{
		{"zero executors", &AppDemand{Cpus: 1, Mem: 1}, "executors"},
		{"NaN mem", &AppDemand{Executors: 1, Cpus: 1, Mem: math.NaN()}, "mem"},
		{"end before start", &AppDemand{Executors: 1, Cpus: 1, Mem: 1, Stages: []*ProfileStage{
			{StartNanos: 0, EndNanos: 10}, {StartNanos: 10, EndNanos: 20}, {StartNanos: 30, EndNanos: 25},
		}}, "stages[2].end"},
		{"negative net", &AppDemand{Executors: 1, Cpus: 1, Mem: 1, Stages: []*ProfileStage{{EndNanos: 1, NetBw: -1}}}, "stages[0].net_bw"},
		{"too many stages", &AppDemand{Executors: 1, Cpus: 1, Mem: 1, Stages: make([]*ProfileStage, profile.MaxStages+1)}, "stages"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.m.ToProfile()
			var fe *profile.FieldError
			if !errors.As(err, &fe) || fe.Field != tc.field {
				t.Errorf("error = %v, want a FieldError on %s", err, tc.field)
			}
		})
	}
	// E beyond int32 must not wrap into something valid.
	big := profile.AppDemand{Executors: math.MaxInt32 + 2, Cpus: 1, Mem: 1}
	if _, err := AppDemandFromProfile(&big).ToProfile(); err == nil {
		t.Error("an E beyond int32 came back valid")
	}
}

// Whatever bytes arrive, decoding and validating never panics, and a demand
// that validates survives the trip back to the wire unchanged.
func FuzzAppDemand(f *testing.F) {
	d := sampleDemand()
	b, _ := proto.Marshal(AppDemandFromProfile(&d))
	f.Add(b)
	f.Add([]byte{})
	f.Add([]byte{0x08, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		var m AppDemand
		if proto.Unmarshal(b, &m) != nil {
			return
		}
		got, err := m.ToProfile()
		if err != nil {
			return
		}
		again, err := AppDemandFromProfile(&got).ToProfile()
		if err != nil || !reflect.DeepEqual(again, got) {
			t.Fatalf("valid demand %+v did not round trip: %+v, %v", got, again, err)
		}
	})
}
