package api

import (
	"errors"
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"google.golang.org/protobuf/proto"
)

func labelsOf(kv ...string) *mesos.Labels {
	ls := &mesos.Labels{}
	for i := 0; i+1 < len(kv); i += 2 {
		v := kv[i+1]
		ls.Labels = append(ls.Labels, mesos.Label{Key: kv[i], Value: &v})
	}
	return ls
}

// Every bad value is refused naming its key; good ones parse to the
// declaration they say.
func TestJobSizeFromLabels(t *testing.T) {
	for _, c := range []struct {
		name    string
		kv      []string
		want    *JobSize
		wantKey string // the key the error names ("" for no error)
	}{
		{"none", []string{"allot.job_type", "etl", "team", "x"}, nil, ""},
		{"known", []string{JobSizeLabel, "1200", JobAPBLabel, "4096", JobAMLabel, "512"},
			&JobSize{Kind: JobSizeKnown, SizeMbS: 1200, ApbMb: 4096, AmMb: 512}, ""},
		{"predicted with name", []string{JobIDLabel, "wordcount", JobSizeLabel, "1e6", JobSizeKindLabel, "predicted", JobAPBLabel, "2048"},
			&JobSize{Job: "wordcount", Kind: JobSizePredicted, SizeMbS: 1e6, ApbMb: 2048}, ""},
		{"unknown without size", []string{JobSizeKindLabel, "unknown", JobAPBLabel, "1024"},
			&JobSize{Kind: JobSizeUnknown, ApbMb: 1024}, ""},
		{"unknown with initial size", []string{JobSizeKindLabel, "unknown", JobSizeLabel, "0", JobAPBLabel, "1024"},
			&JobSize{Kind: JobSizeUnknown, ApbMb: 1024}, ""},
		{"last repeated label wins", []string{JobSizeLabel, "oops", JobAPBLabel, "8", JobSizeLabel, "3"},
			&JobSize{Kind: JobSizeKnown, SizeMbS: 3, ApbMb: 8}, ""},
		{"size not a number", []string{JobSizeLabel, "big", JobAPBLabel, "8"}, nil, JobSizeLabel},
		{"size NaN", []string{JobSizeLabel, "NaN", JobAPBLabel, "8"}, nil, JobSizeLabel},
		{"size Inf", []string{JobSizeLabel, "+Inf", JobAPBLabel, "8"}, nil, JobSizeLabel},
		{"size negative", []string{JobSizeLabel, "-1", JobAPBLabel, "8"}, nil, JobSizeLabel},
		{"known size zero", []string{JobSizeLabel, "0", JobAPBLabel, "8"}, nil, JobSizeLabel},
		{"known size missing", []string{JobAPBLabel, "8"}, nil, JobSizeLabel},
		{"only a job id", []string{JobIDLabel, "j"}, nil, JobSizeLabel},
		{"bad kind", []string{JobSizeLabel, "1", JobSizeKindLabel, "guessed", JobAPBLabel, "8"}, nil, JobSizeKindLabel},
		{"apb missing", []string{JobSizeLabel, "1"}, nil, JobAPBLabel},
		{"apb zero", []string{JobSizeLabel, "1", JobAPBLabel, "0"}, nil, JobAPBLabel},
		{"apb Inf", []string{JobSizeLabel, "1", JobAPBLabel, "Inf"}, nil, JobAPBLabel},
		{"am negative", []string{JobSizeLabel, "1", JobAPBLabel, "8", JobAMLabel, "-2"}, nil, JobAMLabel},
		{"am not a number", []string{JobSizeLabel, "1", JobAPBLabel, "8", JobAMLabel, "1GB"}, nil, JobAMLabel},
		{"apb below am", []string{JobSizeLabel, "1", JobAPBLabel, "8", JobAMLabel, "9"}, nil, JobAMLabel},
		{"apb equal to am", []string{JobSizeLabel, "1", JobAPBLabel, "8", JobAMLabel, "8"}, nil, JobAMLabel},
		{"probe", []string{JobSizeKindLabel, "probe", JobAPBLabel, "2048"},
			&JobSize{Kind: JobSizeProbe, ApbMb: 2048}, ""},
		{"apb cpus", []string{JobSizeLabel, "5", JobAPBLabel, "4096", JobAPBCPUsLabel, "4"},
			&JobSize{Kind: JobSizeKnown, SizeMbS: 5, ApbMb: 4096, ApbCpus: 4}, ""},
		{"apb cpus negative", []string{JobSizeLabel, "5", JobAPBLabel, "4096", JobAPBCPUsLabel, "-1"}, nil, JobAPBCPUsLabel},
		{"apb cpus NaN", []string{JobSizeLabel, "5", JobAPBLabel, "4096", JobAPBCPUsLabel, "NaN"}, nil, JobAPBCPUsLabel},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := JobSizeFromLabels(labelsOf(c.kv...))
			if c.wantKey != "" {
				var je *JobSizeError
				if !errors.As(err, &je) || je.Key != c.wantKey || !strings.HasPrefix(err.Error(), c.wantKey+": ") {
					t.Fatalf("error %v, want one naming %s", err, c.wantKey)
				}
				return
			}
			if err != nil || !proto.Equal(got, c.want) {
				t.Fatalf("got %v, %v; want %v", got, err, c.want)
			}
		})
	}
}

// Labels and the REQUEST pseudo-resource round-trip a declaration, and
// WithJobSize replaces only the job-size labels.
func TestJobSizeRoundTrips(t *testing.T) {
	js := &JobSize{Job: "j2", Kind: JobSizePredicted, SizeMbS: 1.5e7, ApbMb: 6144, AmMb: 1024}
	back, err := JobSizeFromLabels(&mesos.Labels{Labels: JobSizeLabels(js)})
	if err != nil || !proto.Equal(back, js) {
		t.Fatalf("labels round trip: %v, %v", back, err)
	}
	other := labelsOf("allot.job_type", "etl", JobSizeLabel, "1", JobAPBLabel, "2")
	ls := WithJobSize(other, js)
	if ls.Labels[0].GetKey() != "allot.job_type" || len(ls.Labels) != 1+len(JobSizeLabels(js)) {
		t.Fatalf("WithJobSize: %v", ls)
	}
	if back, _ := JobSizeFromLabels(ls); !proto.Equal(back, js) {
		t.Fatalf("WithJobSize declares %v", back)
	}
	if cleared := WithJobSize(ls, nil); len(cleared.Labels) != 1 {
		t.Fatalf("WithJobSize(nil) left %v", cleared)
	}
	if len(other.Labels) != 3 {
		t.Fatal("WithJobSize changed its argument")
	}
	cpus := mesos.Resource{Name: "cpus", Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: 1}}
	got, rest, err := SplitJobSize([]mesos.Resource{cpus, JobSizeResource(js)})
	if err != nil || !proto.Equal(got, js) || len(rest) != 1 || rest[0].Name != "cpus" {
		t.Fatalf("SplitJobSize: %v, %v, %v", got, rest, err)
	}
}

func TestSplitJobSizeErrors(t *testing.T) {
	set := func(items ...string) mesos.Resource {
		return mesos.Resource{Name: JobSizeResourceName, Type: mesos.SET.Enum(), Set: &mesos.Value_Set{Item: items}}
	}
	good := set(JobSizeLabel+"=5", JobAPBLabel+"=10")
	for _, c := range []struct {
		name string
		list []mesos.Resource
		want string
	}{
		{"scalar", []mesos.Resource{{Name: JobSizeResourceName, Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: 1}}}, "must be of type SET"},
		{"empty", []mesos.Resource{set()}, "holds no items"},
		{"not key=value", []mesos.Resource{set("5")}, `item "5" is not key=value`},
		{"unknown key", []mesos.Resource{set("allot.job_type=etl")}, "unknown key"},
		{"repeated key", []mesos.Resource{set(JobSizeLabel+"=5", JobSizeLabel+"=6")}, JobSizeLabel + ": given more than once"},
		{"twice", []mesos.Resource{good, good}, "appears more than once"},
		{"bad value names the key", []mesos.Resource{set(JobSizeLabel+"=5", JobAPBLabel+"=-1")}, "allot.job: allot.job_apb_mb: "},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := SplitJobSize(c.list)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}
