package profile

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

const sec = time.Second

// st builds a stage from whole seconds.
func st(start, end int, disk, net float64) Stage {
	return Stage{Start: time.Duration(start) * sec, End: time.Duration(end) * sec, DiskBW: disk, NetBW: net}
}

func prof(stages ...Stage) *Profile { return &Profile{Stages: stages} }

func TestValidate(t *testing.T) {
	good := Profile{Stages: []Stage{st(0, 10, 100, 0), st(10, 20, 0, 50), st(25, 30, 1, 1)}}
	many := make([]Stage, MaxStages+1)
	for k := range many {
		many[k] = st(k, k+1, 1, 1)
	}
	nan, inf := math.NaN(), math.Inf(1)
	tests := []struct {
		name  string
		d     AppDemand
		field string // "" = valid
		want  string
	}{
		{name: "valid", d: AppDemand{Executors: 3, Cpus: 1, Mem: 1024, Profile: good}},
		{name: "valid without stages", d: AppDemand{Executors: 1, Cpus: 0.5, Mem: 1}},
		{name: "valid at the stage cap", d: AppDemand{Executors: 1, Cpus: 1, Mem: 1, Profile: Profile{Stages: many[:MaxStages]}}},
		{name: "zero executors", d: AppDemand{Cpus: 1, Mem: 1}, field: "executors", want: "must be >= 1"},
		{name: "negative executors", d: AppDemand{Executors: -2, Cpus: 1, Mem: 1}, field: "executors", want: "must be >= 1"},
		{name: "too many executors", d: AppDemand{Executors: MaxExecutors + 1, Cpus: 1, Mem: 1}, field: "executors", want: "cap"},
		{name: "zero cpus", d: AppDemand{Executors: 1, Mem: 1}, field: "cpus", want: "must be > 0"},
		{name: "NaN cpus", d: AppDemand{Executors: 1, Cpus: nan, Mem: 1}, field: "cpus", want: "NaN"},
		{name: "infinite mem", d: AppDemand{Executors: 1, Cpus: 1, Mem: inf}, field: "mem", want: "infinite"},
		{name: "negative mem", d: AppDemand{Executors: 1, Cpus: 1, Mem: -1}, field: "mem", want: "negative"},
		{name: "too many stages", d: AppDemand{Executors: 1, Cpus: 1, Mem: 1, Profile: Profile{Stages: many}}, field: "stages", want: "more than the cap of 64"},
		{name: "end before start", d: demandWith(st(0, 10, 1, 1), st(10, 20, 1, 1), st(30, 25, 1, 1)), field: "stages[2].end", want: "before start"},
		{name: "empty stage", d: demandWith(st(5, 5, 1, 1)), field: "stages[0].end", want: "equals start"},
		{name: "negative start", d: demandWith(Stage{Start: -sec, End: sec}), field: "stages[0].start", want: "negative"},
		{name: "overlapping", d: demandWith(st(0, 10, 1, 1), st(9, 20, 1, 1)), field: "stages[1].start", want: "overlaps"},
		{name: "unordered", d: demandWith(st(10, 20, 1, 1), st(0, 5, 1, 1)), field: "stages[1].start", want: "ordered"},
		{name: "beyond max offset", d: demandWith(Stage{Start: 0, End: MaxOffset + 1}), field: "stages[0].end", want: "cap"},
		{name: "NaN disk", d: demandWith(st(0, 1, 1, 1), st(1, 2, nan, 1)), field: "stages[1].disk_bw", want: "NaN"},
		{name: "infinite net", d: demandWith(st(0, 1, 1, inf)), field: "stages[0].net_bw", want: "infinite"},
		{name: "negative net", d: demandWith(st(0, 1, 1, -3)), field: "stages[0].net_bw", want: "negative"},
		{name: "absurd disk", d: demandWith(st(0, 1, 2e6, 0)), field: "stages[0].disk_bw", want: "cap"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.d.Validate()
			if tc.field == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("Validate() = %v, want a *FieldError", err)
			}
			if fe.Field != tc.field || !strings.Contains(fe.Problem, tc.want) {
				t.Errorf("Validate() = %q, want field %s with %q", err, tc.field, tc.want)
			}
			if !strings.HasPrefix(err.Error(), tc.field+": ") {
				t.Errorf("message %q does not start with the field", err)
			}
		})
	}
}

func demandWith(stages ...Stage) AppDemand {
	return AppDemand{Executors: 1, Cpus: 1, Mem: 1, Profile: Profile{Stages: stages}}
}

func TestWeightsAndLife(t *testing.T) {
	p := prof(st(0, 10, 0, 0), st(10, 20, 0, 0), st(30, 40, 0, 0), st(40, 45, 0, 0))
	want := []float64{1, 0.75, 0.5, 0.25}
	for k, w := range want {
		if got := p.Weight(k); got != w {
			t.Errorf("Weight(%d) = %v, want %v", k, got, w)
		}
	}
	if got := p.Life(); got != 45*sec {
		t.Errorf("Life() = %v, want 45s", got)
	}
	if got := (&Profile{}).Life(); got != 0 {
		t.Errorf("empty Life() = %v", got)
	}
}

func TestOptionsValidate(t *testing.T) {
	for _, o := range []Options{PaperOptions, {Eta: 0}, {Eta: 1, Normalize: NormCapacity}} {
		if err := o.Validate(); err != nil {
			t.Errorf("%+v: %v", o, err)
		}
	}
	for _, o := range []Options{{Eta: -0.1}, {Eta: 1.5}, {Eta: math.NaN()}, {Eta: 0.3, Normalize: 7}} {
		if err := o.Validate(); err == nil {
			t.Errorf("%+v: valid, want an error", o)
		}
	}
}
