package trace_test

import (
	"os"
	"strings"
	"testing"

	"github.com/allot-sched/allot/sim"
	"github.com/allot-sched/allot/sim/trace"
)

// Fuzz targets for the simulator's file readers: a trace or cluster file
// from anywhere yields jobs or an error naming the line, never a panic, and
// every job it yields is one the engine can run (positive counts, finite
// sizes).

func seedFile(f *testing.F, path string, lines int) {
	f.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	parts := strings.SplitAfter(string(b), "\n")
	if len(parts) > lines {
		parts = parts[:lines]
	}
	f.Add(strings.Join(parts, ""))
}

func checkJobs(t *testing.T, jobs []sim.Job) {
	t.Helper()
	for _, j := range jobs {
		if j.Submit < 0 || j.Submit != j.Submit {
			t.Fatalf("job %q: submit %v", j.ID, j.Submit)
		}
		for _, s := range j.Stages {
			for _, g := range s.Groups {
				if g.Tasks < 1 {
					t.Fatalf("job %q: a group of %d tasks", j.ID, g.Tasks)
				}
			}
		}
	}
}

const jobsHead = "job_id,submit_s,framework,tasks,duration_s,cpus,mem_mb\n"

// FuzzReadJobsCSV fuzzes allot's own jobs CSV.
func FuzzReadJobsCSV(f *testing.F) {
	seedFile(f, "testdata/small_jobs.csv", 50)
	for _, s := range []string{
		"", jobsHead, jobsHead + "a,0,f,1,10,2,1024\n", jobsHead + "a,0,\"f,1,10,2,1024\n",
		jobsHead + "a,0,f,1.5,10,2,1024\n", jobsHead + "a,0,f,1,10,NaN,1024\n",
		"job_id,submit_s,framework,tasks,duration_s,cpus,mem_mb,disk_bw\na,0,f,1,10,1,1024,fast\n",
		"mem_mb,cpus,job_id,submit_s,framework,tasks,duration_s,net_bw\n1024,1,a,3,f,2,10,\n2048,2,b,0,g,1,5,40\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		jobs, err := trace.ReadJobsCSV(strings.NewReader(in), "jobs.csv")
		if err == nil {
			checkJobs(t, jobs)
		}
	})
}

// FuzzReadNodesCSV fuzzes the cluster (nodes) CSV.
func FuzzReadNodesCSV(f *testing.F) {
	seedFile(f, "testdata/small_nodes.csv", 50)
	for _, s := range []string{"", "node_id,cpus,mem_mb,count,disk_bw\nbig,8,8192,3,100\nsmall,2,1024,,\n",
		"node_id,cpus,mem_mb,count\nx,0,0,0\n", "node_id,cpus,mem_mb,count\nx,1,1,99999999999\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		nodes, err := trace.ReadNodesCSV(strings.NewReader(in), "nodes.csv")
		if err != nil {
			return
		}
		if len(nodes) == 0 {
			t.Fatal("no nodes and no error")
		}
	})
}

// FuzzReadSWIM fuzzes the SWIM (Facebook 2009/2010) TSV reader.
func FuzzReadSWIM(f *testing.F) {
	seedFile(f, "testdata/fb2009_head400.tsv", 20)
	for _, s := range []string{"", "job0\t49\t49\tlots\t0\t0\n", "job0\t0\t0\t0\t0\t0\n",
		"job0\t1\t1\t1e30\t1e30\t1e30\n", "job0\t-1\t5\t1\t1\t1\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		jobs, err := trace.ReadSWIM(strings.NewReader(in), "fb.tsv", trace.TraceOptions{RateNoise: 0.1, NoiseSeed: 1})
		if err == nil {
			checkJobs(t, jobs)
		}
	})
}

// FuzzReadAlibaba2017 fuzzes the Alibaba 2017 batch_task CSV reader.
func FuzzReadAlibaba2017(f *testing.F) {
	in := ",submit_time,duration,cpu,memory,job_id,task_id,instances_num,disk\n" +
		"0,539,116.5,1.0,0.0054,1,1,283,0\n" +
		"1,7448,73.5,0.5,0.0078,9,23,67,0\n" +
		"2,7447,87.3,0.5,0.0078,9,24,21,0\n"
	f.Add(in)
	f.Add(in + "3,1,2,1,1.5,4,5,6,0\n")
	f.Add(",submit_time,duration,cpu,memory,job_id,task_id,instances_num,disk\n0,1,1,1,1,1,1,999999999999,0\n")
	f.Fuzz(func(t *testing.T, in string) {
		jobs, err := trace.ReadAlibaba2017(strings.NewReader(in), "jobs.csv", trace.TraceOptions{MachineMemMB: 65536})
		if err == nil {
			checkJobs(t, jobs)
		}
	})
}
