package trace

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/allot-sched/allot/internal/hashrand"
	"github.com/allot-sched/allot/resources"
	"github.com/allot-sched/allot/sim"
)

// Format names a workload file format.
type Format string

const (
	FormatAllot       Format = "allot"       // the generic jobs/nodes CSV
	FormatSWIM        Format = "swim"        // SWIM's Facebook Hadoop samples (TSV)
	FormatAlibaba2017 Format = "alibaba2017" // Alibaba cluster trace v2017, batch task groups
)

// ParseFormat reads a --format value.
func ParseFormat(s string) (Format, error) {
	switch f := Format(strings.ToLower(strings.TrimSpace(s))); f {
	case FormatAllot, FormatSWIM, FormatAlibaba2017:
		return f, nil
	case "", "csv", "generic":
		return FormatAllot, nil
	case "alibaba", "alibaba-2017":
		return FormatAlibaba2017, nil
	}
	return "", fmt.Errorf("unknown format %q: choose allot, swim or alibaba2017", s)
}

// TraceOptions are the modelling choices a trace leaves open.
type TraceOptions struct {
	// MachineMemMB scales Alibaba's normalised memory (0..1 of a machine)
	// to MB. Default 65536 (64 GiB machines).
	MachineMemMB float64
	// MaxJobs, if > 0, keeps only the first MaxJobs jobs (quick looks).
	MaxJobs int
	// RateNoise, if > 0, is the sigma of a seeded per-job log-normal
	// factor on the SWIM model's processing times (see swimNoise); 0, the
	// default, keeps every duration an exact function of the job's bytes.
	RateNoise float64
	// NoiseSeed seeds RateNoise.
	NoiseSeed uint64
	// SWIMScale, if > 0, scales a SWIM job's bytes as SWIM's replay tool
	// (GenerateReplayScript) does when it synthesizes a trace for a
	// smaller cluster: input, shuffle and output times machines-here over
	// machines-sampled (truncated to whole bytes), then input at least one
	// 64 MiB block and shuffle and output at least 1 KiB (see
	// SWIMReplayScale). 0, the default, reads the bytes as they are.
	SWIMScale float64
	// AMMemMB, if > 0, gives every SWIM job an application master of 1
	// cpu and this many MB (Job.AM) that starts in swimStartup seconds,
	// as YARN runs a MapReduce job; 0, the default, runs none (Hadoop
	// 0.20's JobTracker, which the SWIM model otherwise follows, had no
	// per-job master). YARNAMMemMB is YARN's.
	AMMemMB float64
}

// SWIMReplayScale is the factor SWIM's replay tool scales a trace's bytes
// by to run it on machines machines: machines over the size of the
// cluster the trace was sampled from (SWIM's documentation: FB-2009 600
// machines, FB-2010 3,000). 0 for a trace it does not know.
func SWIMReplayScale(trace string, machines int) float64 {
	var sampled float64
	switch strings.ToUpper(trace) {
	case "FB-2009":
		sampled = 600
	case "FB-2010":
		sampled = 3000
	default:
		return 0
	}
	return float64(machines) / sampled
}

// swimScale applies TraceOptions.SWIMScale to a job's bytes.
func swimScale(opt TraceOptions, in, shuffle, out float64) (float64, float64, float64) {
	if !(opt.SWIMScale > 0) {
		return in, shuffle, out
	}
	s := opt.SWIMScale
	return math.Max(math.Floor(in*s), swimBlock), math.Max(math.Floor(shuffle*s), 1024), math.Max(math.Floor(out*s), 1024)
}

// DefaultMachineMemMB is the machine size Alibaba's memory is scaled by.
const DefaultMachineMemMB = 64 * 1024

// ReadJobs parses r in format f.
func ReadJobs(r io.Reader, file string, f Format, opt TraceOptions) ([]sim.Job, error) {
	var jobs []sim.Job
	var err error
	switch f {
	case FormatAllot:
		jobs, err = ReadJobsCSV(r, file)
	case FormatSWIM:
		jobs, err = ReadSWIM(r, file, opt)
	case FormatAlibaba2017:
		jobs, err = ReadAlibaba2017(r, file, opt)
	default:
		return nil, fmt.Errorf("unknown format %q", f)
	}
	if err == nil && opt.MaxJobs > 0 && len(jobs) > opt.MaxJobs {
		jobs = jobs[:opt.MaxJobs]
	}
	return jobs, err
}

// LoadJobs reads a jobs file in format f.
func LoadJobs(path string, f Format, opt TraceOptions) ([]sim.Job, error) {
	return readFile(path, func(r io.Reader, file string) ([]sim.Job, error) { return ReadJobs(r, file, f, opt) })
}

// The SWIM model. SWIM's samples give, per job, a submit time and the
// bytes of map input, shuffle and reduce output, but no tasks, durations or
// demands. We derive them as Hadoop 0.20 (the Facebook clusters sampled)
// would have run the job:
//
//   - map tasks = ceil(input / 64 MiB), at least 1 (one per HDFS block);
//     each reads input/maps bytes;
//   - reduce tasks = ceil(shuffle / 256 MiB), none when nothing is shuffled;
//     each fetches shuffle/reduces bytes and writes output/reduces bytes;
//   - a map takes 5 s (JVM start, scheduling) + its bytes at 20 MB/s, asks
//     1 cpu and 1024 MB, and reads from disk at its bytes/duration MB/s
//     (disk_bw);
//   - a reduce takes 5 s + its shuffle at 10 MB/s + its output at 20 MB/s,
//     asks 1 cpu and 2048 MB, and fetches over the network at its
//     shuffle/duration MB/s (net_bw);
//   - the reduces form a second stage that starts when every map is done;
//   - each job is its own framework (Hadoop's fair scheduler shares among
//     jobs), in role "*".
//
// A map-only job writes its output from the maps; we charge it nothing
// extra.
//
// Without TraceOptions.RateNoise, every duration above is an exact linear
// function of the job's bytes, so any regression on bytes predicts a job's
// size perfectly and a size predictor (FSPY's probe and regression) has
// nothing to learn. RateNoise = sigma > 0 multiplies, per job, the
// byte-proportional part of every map task's time by g_m and of every
// reduce task's time by g_r (the 5 s startup stays exact), where g_m and
// g_r are independent log-normal factors exp(sigma Z - sigma^2/2), Z
// standard normal. E[g] = 1, so a trace's expected work (and hence a
// window's offered load) does not change; only which job of a given size
// is slow does. All tasks of a phase share the factor: it stands for the
// job's map or reduce function being cheap or costly per byte (a grep
// against a join over the same input), which is what a probe measures and
// bytes cannot. We suggest sigma = 0.3 (95 % of jobs between 0.5x and 1.6x
// the nominal cost per byte): enough that a regression on bytes alone is
// visibly wrong, little enough that the byte columns keep meaning. On
// FB-2009 at sigma 0.3, jobsize.Regression over bytes alone predicts sizes
// with R^2 0.88 (0.72 at sigma 0.5), short of the paper's 0.97 with probes,
// while over a perfect probe's features (SWIMFeatures) it is exact. The
// factors are a hash of (NoiseSeed, job id, phase), so a job's draw does
// not depend on the order of the file, MaxJobs or the other jobs.
const (
	swimBlock        = 64 << 20
	swimReduceBytes  = 256 << 20
	swimStartup      = 5.0
	swimColumns      = 6
	alibabaColumns   = 9
	alibabaMinMemMB  = 1
	alibabaHeaderCol = "submit_time"
)

// maxSWIMTasks bounds the tasks one SWIM stage may derive (16.7 million:
// a petabyte of map input in 64 MiB blocks).
const maxSWIMTasks = 1 << 24

// swimNames are the columns of a SWIM row.
var swimNames = []string{"job_id", "submit_s", "gap_s", "map_input_bytes", "shuffle_bytes", "reduce_output_bytes"}

// ReadSWIM parses a SWIM workload (tab-separated, no header).
func ReadSWIM(r io.Reader, file string, opt TraceOptions) ([]sim.Job, error) {
	l := newLines(r, file, '\t', true, swimNames)
	var jobs []sim.Job
	for l.next() {
		j, err := swimJob(l, opt)
		if err != nil {
			return nil, err
		}
		jobs = append(jobs, j)
		if opt.MaxJobs > 0 && len(jobs) >= opt.MaxJobs {
			break
		}
	}
	if err := l.err(); err != nil {
		return nil, err
	}
	if len(jobs) == 0 {
		return nil, &InputError{File: file, Line: l.line, Msg: "no jobs"}
	}
	return jobs, nil
}

// swimJob derives the job of the current SWIM row.
func swimJob(l *lines, opt TraceOptions) (sim.Job, error) {
	f, names, line := l.row, swimNames, l.line
	if len(f) < swimColumns {
		return sim.Job{}, &InputError{File: l.file, Line: line, Msg: fmt.Sprintf("%d tab-separated fields; SWIM rows have %d (%s)", len(f), swimColumns, strings.Join(names, ", "))}
	}
	var v [swimColumns]float64
	for c := 1; c < swimColumns; c++ {
		x, err := l.num(c)
		if err != nil {
			return sim.Job{}, err
		}
		v[c] = x
	}
	id := strings.TrimSpace(f[0])
	if id == "" {
		return sim.Job{}, &InputError{File: l.file, Line: line, Column: names[0], Msg: "empty; want a job id"}
	}
	in, shuffle, out := swimScale(opt, v[3], v[4], v[5])
	gm, gr := swimNoise(opt, id)
	// A count past maxSWIMTasks would overflow int (1e30 bytes gives
	// MinInt64 tasks) or stall the engine; no sampled job comes close.
	if in/swimBlock > maxSWIMTasks || shuffle/swimReduceBytes > maxSWIMTasks {
		col, val := names[3], f[3]
		if !(in/swimBlock > maxSWIMTasks) {
			col, val = names[4], f[4]
		}
		return sim.Job{}, &InputError{File: l.file, Line: line, Column: col, Value: val,
			Msg: fmt.Sprintf("derives more than %d tasks for one stage", maxSWIMTasks)}
	}
	maps := int(math.Max(1, math.Ceil(in/swimBlock)))
	perMap := in / float64(maps)
	mapDur := swimStartup + perMap/sim.SWIMMapRate*gm
	j := sim.Job{ID: id, Framework: id, Submit: v[1], Line: line,
		MapReduce: &sim.MapReduce{InputBytes: in, ShuffleBytes: shuffle, OutputBytes: out, MapCost: gm, ReduceCost: gr}}
	if opt.AMMemMB > 0 {
		j.AM, j.AMStartup = sim.Shape(1, opt.AMMemMB, 0, 0, 0), swimStartup
	}
	j.Stages = append(j.Stages, sim.Stage{Groups: []sim.Group{{
		Tasks: maps, Duration: mapDur, Line: line,
		Demand: sim.Shape(1, sim.SWIMMapMemMB, 0, perMap/sim.BytesPerMB/mapDur, 0),
	}}})
	if reduces := int(math.Ceil(shuffle / swimReduceBytes)); reduces > 0 {
		perRed, perOut := shuffle/float64(reduces), out/float64(reduces)
		// same order of operations as without noise: bit-identical at gr = 1
		dur := swimStartup + perRed/sim.SWIMShuffleRate*gr + perOut/sim.SWIMOutputRate*gr
		j.Stages = append(j.Stages, sim.Stage{Groups: []sim.Group{{
			Tasks: reduces, Duration: dur, Line: line,
			Demand: sim.Shape(1, sim.SWIMReduceMemMB, 0, 0, perRed/sim.BytesPerMB/dur),
		}}})
	}
	return j, nil
}

// swimNoise returns the job's map and reduce cost factors: 1, 1 without
// RateNoise (multiplying by exactly 1 keeps every duration bit-identical to
// the noiseless model).
func swimNoise(opt TraceOptions, id string) (gm, gr float64) {
	if !(opt.RateNoise > 0) {
		return 1, 1
	}
	s := opt.RateNoise
	draw := func(phase string) float64 {
		return math.Exp(s*hashrand.Normal(opt.NoiseSeed, id+"\x00"+phase) - s*s/2)
	}
	return draw("map"), draw("reduce")
}

// The Alibaba 2017 model (CloudSimPy's export of cluster-trace-v2017 batch
// tasks): each row is a task group of instances_num identical instances
// with the group's mean instance duration, cpu cores per instance and
// memory as a fraction of a machine, scaled here by MachineMemMB and
// rounded to whole MB (at least 1). The groups of one job run
// concurrently, as CloudSimPy's Non_DAG replay runs them; the job arrives
// at the earliest submit_time of its groups (they differ by at most a few
// seconds in 181 of 5,216 jobs). Each job is its own framework in role "*".
//
// ReadAlibaba2017 parses jobs.csv (header ",submit_time,duration,cpu,
// memory,job_id,task_id,instances_num,disk").
func ReadAlibaba2017(r io.Reader, file string, opt TraceOptions) ([]sim.Job, error) {
	scale := opt.MachineMemMB
	if scale <= 0 {
		scale = DefaultMachineMemMB
	}
	l := newLines(r, file, ',', false, alibabaNames)
	var jobs []sim.Job
	byID := map[string]int{}
	for l.next() {
		f := l.row
		if l.line == 1 && len(f) > 1 && strings.TrimSpace(f[1]) == alibabaHeaderCol {
			continue
		}
		id, submit, g, err := alibabaGroup(l, scale)
		if err != nil {
			return nil, err
		}
		if i, ok := byID[id]; ok {
			j := &jobs[i]
			j.Stages[0].Groups = append(j.Stages[0].Groups, g)
			j.Submit = math.Min(j.Submit, submit)
			continue
		}
		if opt.MaxJobs > 0 && len(jobs) >= opt.MaxJobs {
			continue
		}
		byID[id] = len(jobs)
		jobs = append(jobs, sim.Job{ID: id, Framework: "job-" + id, Submit: submit, Line: l.line, Stages: []sim.Stage{{Groups: []sim.Group{g}}}})
	}
	if err := l.err(); err != nil {
		return nil, err
	}
	if len(jobs) == 0 {
		return nil, &InputError{File: file, Line: l.line, Msg: "no task groups"}
	}
	return jobs, nil
}

// alibabaNames are the columns of jobs.csv.
var alibabaNames = []string{"index", "submit_time", "duration", "cpu", "memory", "job_id", "task_id", "instances_num", "disk"}

// alibabaGroup reads the task group of the current row of jobs.csv, its
// job's id and its submit time.
func alibabaGroup(l *lines, scale float64) (string, float64, sim.Group, error) {
	f := l.row
	var none sim.Group
	if len(f) != alibabaColumns {
		return "", 0, none, &InputError{File: l.file, Line: l.line, Msg: fmt.Sprintf("%d fields; want %d (%s)", len(f), alibabaColumns, strings.Join(alibabaNames, ","))}
	}
	var v [alibabaColumns]float64
	for _, c := range []int{1, 2, 3, 4} {
		x, err := l.num(c)
		if err != nil {
			return "", 0, none, err
		}
		v[c] = x
	}
	n, err := strconv.Atoi(strings.TrimSpace(f[7]))
	if err != nil || n < 1 {
		return "", 0, none, l.errf(7, "want a whole number >= 1")
	}
	if v[2] <= 0 {
		return "", 0, none, l.errf(2, "want a duration > 0")
	}
	if v[3] <= 0 {
		return "", 0, none, l.errf(3, "want cpus > 0")
	}
	if v[4] > 1 {
		return "", 0, none, l.errf(4, "memory is a fraction of a machine: want 0..1")
	}
	id := strings.TrimSpace(f[5])
	if id == "" {
		return "", 0, none, &InputError{File: l.file, Line: l.line, Column: alibabaNames[5], Msg: "empty; want a job id"}
	}
	mem := math.Max(alibabaMinMemMB, math.Round(v[4]*scale))
	// Shape panics on quantities past fixed point's range (it is for
	// sane generated values); a trace's are checked here instead.
	if _, err := resources.QuantityFromFloat(v[3]); err != nil {
		return "", 0, none, l.errf(3, "cpus out of range: %s", err.Error())
	}
	if _, err := resources.QuantityFromFloat(mem); err != nil {
		return "", 0, none, l.errf(4, "memory out of range: %s", err.Error())
	}
	return id, v[1], sim.Group{Tasks: n, Duration: v[2], Demand: sim.Shape(v[3], mem), Line: l.line}, nil
}
