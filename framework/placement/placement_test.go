package placement

import (
	"strings"
	"testing"
	"time"

	"github.com/allot-sched/allot/profile"
)

var t0 = time.Unix(1_700_000_000, 0)

// tl is an agent of 100 MB/s disk and net running one executor that uses
// disk MB/s of disk for the first 60 s (0: idle).
func tl(t *testing.T, disk float64) *profile.Timeline {
	t.Helper()
	x, err := profile.NewTimeline(100, 100)
	if err != nil {
		t.Fatal(err)
	}
	if disk > 0 {
		p := profile.Profile{Stages: []profile.Stage{{Start: 0, End: time.Minute, DiskBW: disk}}}
		if err := x.Add("other", t0, &p); err != nil {
			t.Fatal(err)
		}
	}
	return x
}

func TestChoose(t *testing.T) {
	// the executor to place reads 40 MB/s of disk for 60 s
	heavy := &profile.Profile{Stages: []profile.Stage{{Start: 0, End: time.Minute, DiskBW: 40}}}
	empty := &profile.Profile{}
	for _, c := range []struct {
		name  string
		p     *profile.Profile
		cands func(t *testing.T) []Candidate
		n     int
		want  string // chosen agents, best first
	}{
		{"exact fit beats idle beats overload", heavy, func(t *testing.T) []Candidate {
			return []Candidate{{"idle", tl(t, 0)}, {"over", tl(t, 90)}, {"fit", tl(t, 60)}}
		}, 3, "fit,idle,over"},
		{"n cuts the list", heavy, func(t *testing.T) []Candidate {
			return []Candidate{{"idle", tl(t, 0)}, {"over", tl(t, 90)}, {"fit", tl(t, 60)}}
		}, 1, "fit"},
		{"distinct agents only", heavy, func(t *testing.T) []Candidate {
			return []Candidate{{"fit", tl(t, 60)}, {"fit", tl(t, 60)}, {"idle", tl(t, 0)}}
		}, 3, "fit,idle"},
		{"unknown timelines last, in order", heavy, func(t *testing.T) []Candidate {
			return []Candidate{{"u1", nil}, {"over", tl(t, 90)}, {"u2", nil}}
		}, 3, "over,u1,u2"},
		{"equal scores keep the offers' order (first)", empty, func(t *testing.T) []Candidate {
			return []Candidate{{"c", tl(t, 0)}, {"a", tl(t, 90)}, {"b", tl(t, 60)}}
		}, 2, "c,a"},
		{"nothing wanted", heavy, func(t *testing.T) []Candidate { return []Candidate{{"a", tl(t, 0)}} }, 0, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := Choose(t0, c.p, c.cands(t), c.n, profile.PaperOptions)
			var names []string
			for i, ch := range got {
				names = append(names, ch.Agent)
				if i > 0 && got[i-1].Score > ch.Score && c.name != "unknown timelines last, in order" {
					t.Errorf("scores not ascending: %+v", got)
				}
			}
			if s := strings.Join(names, ","); s != c.want {
				t.Errorf("chose %q, want %q (%+v)", s, c.want, got)
			}
		})
	}
}

func TestParseMode(t *testing.T) {
	for in, want := range map[string]Mode{"": First, "first": First, "prophet": Prophet} {
		if got, err := ParseMode(in); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseMode("best"); err == nil {
		t.Error("ParseMode(best) accepted")
	}
}
