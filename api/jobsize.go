package api

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// Job size on the wire. Mesos has no call for a job's size, so a framework
// declares its head job to the size-based sorters (fsp, fspy) in one of
// two ways that unmodified mesos-go frameworks can use:
//
//   - FrameworkInfo labels (JobSizeLabels builds them), read at SUBSCRIBE
//     and UPDATE_FRAMEWORK. They travel with the FrameworkInfo the
//     registry already replicates.
//   - A REQUEST call whose first request carries the pseudo-resource
//     JobSizeResourceName, a SET of "key=value" items with the same keys
//     (JobSizeResource builds it), beside api.AppDemandResourceName.
//
// Both use one vocabulary and one parser, so an error names the same key
// either way. The keys:
//
//	allot.job_id         the head job's name (default: the framework id);
//	                     a new name starts a new job, the same name updates
//	                     the job's size (the paper's eq. 10)
//	allot.job_size       the size in MB x s, a finite number; > 0 for a
//	                     known or predicted size, >= 0 for an unknown one
//	                     (its initial size, 0 meaning infinite); required
//	                     unless the kind is unknown
//	allot.job_size_kind  known (default), predicted or unknown
//	allot.job_apb_mb     the average parallelism bound in MB, finite > 0;
//	                     required
//	allot.job_am_mb      the application master's memory in MB, finite,
//	                     >= 0 and below the APB (default 0)
//
// A FrameworkInfo declares a job when it carries any of these keys (a
// repeated label counts once, its last value, as allot.job_type does).
// allot.job_type, the bandit's label, is not one of them.
const (
	JobIDLabel       = "allot.job_id"
	JobSizeLabel     = "allot.job_size"
	JobSizeKindLabel = "allot.job_size_kind"
	JobAPBLabel      = "allot.job_apb_mb"
	JobAMLabel       = "allot.job_am_mb"
	JobAPBCPUsLabel  = "allot.job_apb_cpus"
	// JobSizeResourceName names the REQUEST pseudo-resource.
	JobSizeResourceName = "allot.job"
)

// The values of JobSizeKindLabel. Known and predicted sizes are served
// alike (the size-based queue); an unknown one is served fairly until a
// size arrives; a probe is a probing job (FSPY's probing queue, FIFO
// within the probing share), outside the virtual cluster, its APB the
// memory of its one container.
const (
	JobSizeKnown     = "known"
	JobSizePredicted = "predicted"
	JobSizeUnknown   = "unknown"
	JobSizeProbe     = "probe"
)

var jobSizeKeys = []string{JobIDLabel, JobSizeLabel, JobSizeKindLabel, JobAPBLabel, JobAMLabel, JobAPBCPUsLabel}

func isJobSizeKey(k string) bool {
	for _, j := range jobSizeKeys {
		if k == j {
			return true
		}
	}
	return false
}

// JobSizeError is what is wrong with a declaration, naming the key.
type JobSizeError struct {
	Key, Problem string
}

func (e *JobSizeError) Error() string { return e.Key + ": " + e.Problem }

// IsKnown reports whether the size is known or predicted (not an initial
// guess).
func (m *JobSize) IsKnown() bool {
	return m.GetKind() != JobSizeUnknown && m.GetKind() != JobSizeProbe
}

// IsProbe reports whether the declaration is a probing job's.
func (m *JobSize) IsProbe() bool { return m.GetKind() == JobSizeProbe }

// JobSizeFromLabels reads a declaration from FrameworkInfo labels: nil
// when none of the keys is there. The result is validated; Job is "" when
// allot.job_id is absent or empty.
func JobSizeFromLabels(ls *mesos.Labels) (*JobSize, error) {
	vals := map[string]string{}
	for _, l := range ls.GetLabels() {
		if isJobSizeKey(l.GetKey()) {
			vals[l.GetKey()] = l.GetValue()
		}
	}
	if len(vals) == 0 {
		return nil, nil
	}
	return parseJobSize(vals)
}

// parseJobSize validates the keys' values (vals holds only job-size keys).
func parseJobSize(vals map[string]string) (*JobSize, error) {
	m := &JobSize{Job: vals[JobIDLabel], Kind: JobSizeKnown}
	if k, ok := vals[JobSizeKindLabel]; ok {
		switch k {
		case JobSizeKnown, JobSizePredicted, JobSizeUnknown, JobSizeProbe:
			m.Kind = k
		default:
			return nil, &JobSizeError{JobSizeKindLabel, fmt.Sprintf("%q is not one of known, predicted, unknown, probe", k)}
		}
	}
	num := func(key string, required bool) (float64, bool, error) {
		s, ok := vals[key]
		if !ok {
			if required {
				return 0, false, &JobSizeError{key, "missing"}
			}
			return 0, false, nil
		}
		x, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return 0, false, &JobSizeError{key, fmt.Sprintf("%q is not a number", s)}
		}
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return 0, false, &JobSizeError{key, fmt.Sprintf("%q is not a finite number", s)}
		}
		return x, true, nil
	}
	var err error
	if m.SizeMbS, _, err = num(JobSizeLabel, m.IsKnown()); err != nil {
		return nil, err
	}
	switch {
	case m.SizeMbS < 0:
		return nil, &JobSizeError{JobSizeLabel, fmt.Sprintf("%v MB x s is negative", m.SizeMbS)}
	case m.SizeMbS == 0 && m.IsKnown():
		return nil, &JobSizeError{JobSizeLabel, fmt.Sprintf("a %s size must be > 0 MB x s", m.Kind)}
	}
	if m.ApbMb, _, err = num(JobAPBLabel, true); err != nil {
		return nil, err
	}
	if m.ApbMb <= 0 {
		return nil, &JobSizeError{JobAPBLabel, fmt.Sprintf("%v MB, want > 0", m.ApbMb)}
	}
	if m.AmMb, _, err = num(JobAMLabel, false); err != nil {
		return nil, err
	}
	switch {
	case m.AmMb < 0:
		return nil, &JobSizeError{JobAMLabel, fmt.Sprintf("%v MB is negative", m.AmMb)}
	case m.AmMb >= m.ApbMb:
		return nil, &JobSizeError{JobAMLabel, fmt.Sprintf("%v MB is not below %s (%v MB)", m.AmMb, JobAPBLabel, m.ApbMb)}
	}
	if m.ApbCpus, _, err = num(JobAPBCPUsLabel, false); err != nil {
		return nil, err
	}
	if m.ApbCpus < 0 {
		return nil, &JobSizeError{JobAPBCPUsLabel, fmt.Sprintf("%v cpus is negative", m.ApbCpus)}
	}
	return m, nil
}

// pairs is m as key/value pairs, in jobSizeKeys order (no job id when
// empty, no am when 0).
func (m *JobSize) pairs() [][2]string {
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	var out [][2]string
	if m.GetJob() != "" {
		out = append(out, [2]string{JobIDLabel, m.GetJob()})
	}
	kind := m.GetKind()
	if kind == "" {
		kind = JobSizeKnown
	}
	out = append(out, [2]string{JobSizeLabel, f(m.GetSizeMbS())}, [2]string{JobSizeKindLabel, kind},
		[2]string{JobAPBLabel, f(m.GetApbMb())})
	if m.GetAmMb() != 0 {
		out = append(out, [2]string{JobAMLabel, f(m.GetAmMb())})
	}
	if m.GetApbCpus() != 0 {
		out = append(out, [2]string{JobAPBCPUsLabel, f(m.GetApbCpus())})
	}
	return out
}

// JobSizeLabels is m as FrameworkInfo labels.
func JobSizeLabels(m *JobSize) []mesos.Label {
	var out []mesos.Label
	for _, p := range m.pairs() {
		v := p[1]
		out = append(out, mesos.Label{Key: p[0], Value: &v})
	}
	return out
}

// WithJobSize returns labels with every job-size key replaced by m's
// (removed when m is nil), other labels kept in order: what a framework
// sends with UPDATE_FRAMEWORK when its head job changes.
func WithJobSize(ls *mesos.Labels, m *JobSize) *mesos.Labels {
	out := &mesos.Labels{}
	for _, l := range ls.GetLabels() {
		if !isJobSizeKey(l.GetKey()) {
			out.Labels = append(out.Labels, l)
		}
	}
	if m != nil {
		out.Labels = append(out.Labels, JobSizeLabels(m)...)
	}
	return out
}

// JobSizeResource is m as the REQUEST pseudo-resource.
func JobSizeResource(m *JobSize) mesos.Resource {
	var items []string
	for _, p := range m.pairs() {
		items = append(items, p[0]+"="+p[1])
	}
	return mesos.Resource{Name: JobSizeResourceName, Type: mesos.SET.Enum(), Set: &mesos.Value_Set{Item: items}}
}

// SplitJobSize takes the JobSizeResourceName pseudo-resource out of a
// REQUEST's resources: the validated declaration (nil when there is none)
// and the other resources, in order. Errors name the resource and the key.
func SplitJobSize(list []mesos.Resource) (*JobSize, []mesos.Resource, error) {
	return splitPseudo(list, JobSizeResourceName, func(res *mesos.Resource) (*JobSize, error) {
		m, err := decodeJobSize(res)
		if err != nil {
			return nil, fmt.Errorf("resource %s: %w", JobSizeResourceName, err)
		}
		return m, nil
	})
}

func decodeJobSize(res *mesos.Resource) (*JobSize, error) {
	items, err := setItems(res)
	if err != nil {
		return nil, err
	}
	vals := map[string]string{}
	for _, it := range items {
		k, v, ok := strings.Cut(it, "=")
		if !ok {
			return nil, fmt.Errorf("item %q is not key=value", it)
		}
		if !isJobSizeKey(k) {
			return nil, fmt.Errorf("item %q: unknown key, want one of %s", it, strings.Join(jobSizeKeys, ", "))
		}
		if _, dup := vals[k]; dup {
			return nil, &JobSizeError{k, "given more than once"}
		}
		vals[k] = v
	}
	if len(vals) == 0 {
		return nil, fmt.Errorf("holds no items")
	}
	return parseJobSize(vals)
}
