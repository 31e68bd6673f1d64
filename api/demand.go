package api

import (
	"encoding/base64"
	"fmt"
	"math"
	"time"

	"github.com/allot-sched/allot/profile"
	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"google.golang.org/protobuf/proto"
)

// The conversions between AppDemand and profile.AppDemand live here rather
// than in profile/: profile is a pure leaf that the allocator imports, and
// must not pull protobuf or mesos-go in with it; api importing a leaf of
// plain Go types points down the dependency table.

// AppDemandResourceName names the pseudo-resource that carries an
// AppDemand inside a Mesos REQUEST call, beside the "tasks" pseudo-scalar
// of the per-task demand.
const AppDemandResourceName = "allot.app_demand"

// AppDemandFromProfile converts a profile demand to its wire form. It does
// not validate; an E beyond int32 is sent as MaxInt32 so that the receiver's
// Validate still refuses it rather than seeing a wrapped value.
func AppDemandFromProfile(d *profile.AppDemand) *AppDemand {
	e := d.Executors
	if e > math.MaxInt32 {
		e = math.MaxInt32
	} else if e < math.MinInt32 {
		e = math.MinInt32
	}
	m := &AppDemand{Executors: int32(e), Cpus: d.Cpus, Mem: d.Mem}
	if len(d.Profile.Stages) > 0 {
		m.Stages = make([]*ProfileStage, len(d.Profile.Stages))
	}
	for k, s := range d.Profile.Stages {
		m.Stages[k] = &ProfileStage{
			StartNanos: int64(s.Start), EndNanos: int64(s.End),
			DiskBw: s.DiskBW, NetBw: s.NetBW,
		}
	}
	return m
}

// ToProfile converts m to a profile demand and validates it; the error is a
// *profile.FieldError naming the field ("stages[2].end: before start").
// It refuses more stages than profile.MaxStages before copying them, so a
// hostile message cannot make it allocate much.
func (m *AppDemand) ToProfile() (profile.AppDemand, error) {
	if n := len(m.GetStages()); n > profile.MaxStages {
		return profile.AppDemand{}, &profile.FieldError{Field: "stages",
			Problem: fmt.Sprintf("%d stages, more than the cap of %d", n, profile.MaxStages)}
	}
	d := profile.AppDemand{Executors: int(m.GetExecutors()), Cpus: m.GetCpus(), Mem: m.GetMem()}
	if len(m.GetStages()) > 0 {
		d.Profile.Stages = make([]profile.Stage, len(m.Stages))
	}
	for k, s := range m.GetStages() {
		d.Profile.Stages[k] = profile.Stage{
			Start: time.Duration(s.GetStartNanos()), End: time.Duration(s.GetEndNanos()),
			DiskBW: s.GetDiskBw(), NetBW: s.GetNetBw(),
		}
	}
	if err := d.Validate(); err != nil {
		return profile.AppDemand{}, err
	}
	return d, nil
}

// AppDemandResource wraps m as the pseudo-resource a framework adds to the
// resources of its REQUEST call (Call.Request.requests[0]).
func AppDemandResource(m *AppDemand) (mesos.Resource, error) {
	b, err := proto.Marshal(m)
	if err != nil {
		return mesos.Resource{}, err
	}
	return mesos.Resource{
		Name: AppDemandResourceName,
		Type: mesos.SET.Enum(),
		Set:  &mesos.Value_Set{Item: []string{base64.StdEncoding.EncodeToString(b)}},
	}, nil
}

// SplitAppDemand takes the AppDemand pseudo-resource out of a REQUEST's
// resources: it returns the decoded demand (nil when there is none) and the
// other resources, in order, for the per-task demand. It decodes but does
// not validate (use AppDemand.ToProfile). Errors say what is wrong, for a 400.
func SplitAppDemand(list []mesos.Resource) (*AppDemand, []mesos.Resource, error) {
	return splitPseudo(list, AppDemandResourceName, func(res *mesos.Resource) (*AppDemand, error) {
		m, err := decodeAppDemand(res)
		if err != nil {
			return nil, fmt.Errorf("resource %q: %v", AppDemandResourceName, err)
		}
		return m, nil
	})
}

func decodeAppDemand(res *mesos.Resource) (*AppDemand, error) {
	items, err := setItems(res)
	if err != nil {
		return nil, err
	}
	if len(items) != 1 {
		return nil, fmt.Errorf("must hold exactly one item (a base64 AppDemand), not %d", len(items))
	}
	b, err := base64.StdEncoding.DecodeString(items[0])
	if err != nil {
		return nil, fmt.Errorf("item is not standard base64: %v", err)
	}
	m := &AppDemand{}
	if err := proto.Unmarshal(b, m); err != nil {
		return nil, fmt.Errorf("item is not an allot.v1.AppDemand: %v", err)
	}
	return m, nil
}
