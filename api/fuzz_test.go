package api

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/allot-sched/allot/profile"
	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"google.golang.org/protobuf/proto"
)

// Fuzz targets for the allot extensions a scheduler sends inside Mesos
// calls: the AppDemand and job-size pseudo-resources of a REQUEST and the
// job-size FrameworkInfo labels. Whatever a scheduler sends decodes or is an
// error (the master answers 400), and what decodes encodes back to itself.

// FuzzSplitAppDemand feeds arbitrary bytes as the base64 AppDemand item.
func FuzzSplitAppDemand(f *testing.F) {
	for _, d := range []profile.AppDemand{sampleDemand(), {Executors: 1, Cpus: 0.5, Mem: 128}} {
		b, err := proto.Marshal(AppDemandFromProfile(&d))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, false)
	}
	f.Add([]byte("not base64!"), true)
	f.Add([]byte{0xff, 0xff, 0xff}, false)
	f.Fuzz(func(t *testing.T, raw []byte, literal bool) {
		item := base64.StdEncoding.EncodeToString(raw)
		if literal {
			item = string(raw) // the base64 layer itself
		}
		res := mesos.Resource{Name: AppDemandResourceName, Type: mesos.SET.Enum(), Set: &mesos.Value_Set{Item: []string{item}}}
		other := mesos.Resource{Name: "cpus", Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: 1}}
		m, rest, err := SplitAppDemand([]mesos.Resource{other, res})
		if err != nil {
			return
		}
		if m == nil || len(rest) != 1 || rest[0].Name != "cpus" {
			t.Fatalf("split gave %v and %v", m, rest)
		}
		m.ToProfile() // validation: an error or a profile, never a panic
		back, err := AppDemandResource(m)
		if err != nil {
			t.Fatalf("decoded AppDemand does not encode: %v", err)
		}
		m2, _, err := SplitAppDemand([]mesos.Resource{back})
		if err != nil || !proto.Equal(m, m2) {
			t.Fatalf("AppDemand round trip: %v\n%v\n%v", err, m, m2)
		}
	})
}

// FuzzSplitJobSize feeds newline-separated key=value items as the job-size
// resource and the same pairs as FrameworkInfo labels.
func FuzzSplitJobSize(f *testing.F) {
	for _, s := range []string{
		"allot.job_size=1200\nallot.job_apb_mb=4096\nallot.job_am_mb=512",
		"allot.job_id=wordcount\nallot.job_size=1e6\nallot.job_size_kind=predicted\nallot.job_apb_mb=2048",
		"allot.job_size_kind=unknown\nallot.job_apb_mb=1024",
		"allot.job_size_kind=probe\nallot.job_apb_mb=8\nallot.job_apb_cpus=0.5",
		"allot.job_size=NaN\nallot.job_apb_mb=1",
		"allot.job_size=3\nallot.job_apb_mb=8\nallot.job_am_mb=8",
		"5", "", "allot.job_size=1\nallot.job_size=2",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		items := strings.Split(in, "\n")
		res := mesos.Resource{Name: JobSizeResourceName, Type: mesos.SET.Enum(), Set: &mesos.Value_Set{Item: items}}
		m, _, err := SplitJobSize([]mesos.Resource{res})
		if err == nil {
			back := JobSizeResource(m)
			m2, _, err := SplitJobSize([]mesos.Resource{back})
			if err != nil || !proto.Equal(m, m2) {
				t.Fatalf("job size round trip via resource: %v\n%v\n%v", err, m, m2)
			}
			m3, err := JobSizeFromLabels(&mesos.Labels{Labels: JobSizeLabels(m)})
			if err != nil || !proto.Equal(m, m3) {
				t.Fatalf("job size round trip via labels: %v\n%v\n%v", err, m, m3)
			}
		}
		var ls mesos.Labels
		for _, it := range items {
			k, v, _ := strings.Cut(it, "=")
			ls.Labels = append(ls.Labels, mesos.Label{Key: k, Value: &v})
		}
		JobSizeFromLabels(&ls)
	})
}
