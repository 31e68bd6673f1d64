package trace_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/allot-sched/allot/resources"
	"github.com/allot-sched/allot/sim"
	"github.com/allot-sched/allot/sim/trace"
)

func TestJobsCSVErrorsNameLineAndColumn(t *testing.T) {
	const head = "job_id,submit_s,framework,tasks,duration_s,cpus,mem_mb\n"
	tests := []struct {
		name, in string
		line     int
		column   string
		msg      string
	}{
		{"not a number", head + "a,0,f,1,10,2,1024\nb,0,f,1,10,two,1024\n", 3, "cpus", "not a number"},
		{"negative", head + "a,-1,f,1,10,2,1024\n", 2, "submit_s", ">= 0"},
		{"zero tasks", head + "a,0,f,0,10,2,1024\n", 2, "tasks", "whole number >= 1"},
		{"fractional tasks", head + "a,0,f,1.5,10,2,1024\n", 2, "tasks", "whole number"},
		{"zero duration", head + "a,0,f,1,0,2,1024\n", 2, "duration_s", "> 0"},
		{"empty framework", head + "a,0,,1,10,2,1024\n", 2, "framework", "empty"},
		{"framework changes", head + "a,0,f,1,10,2,1024\n# comment\na,0,g,1,10,2,1024\n", 4, "framework", `framework "f" on line 2`},
		{"submit changes", head + "a,0,f,1,10,2,1024\na,5,f,1,10,2,1024\n", 3, "submit_s", "share submit_s"},
		{"nothing asked", head + "a,0,f,1,10,0,0\n", 2, "cpus", "cpus or mem"},
		{"NaN", head + "a,0,f,1,10,NaN,1024\n", 2, "cpus", "finite"},
		{"bad optional", "job_id,submit_s,framework,tasks,duration_s,cpus,mem_mb,disk_bw\na,0,f,1,10,1,1024,fast\n", 2, "disk_bw", "not a number"},
		{"missing column", "job_id,submit_s,framework,tasks,cpus,mem_mb\n", 1, "duration_s", "required column missing"},
		{"unknown column", head[:len(head)-1] + ",colour\n", 1, "colour", "unknown column"},
		{"short row", head + "a,0,f,1,10,2\n", 2, "", "6 fields, but the header has 7"},
		{"bad quoting", head + "a,0,\"f,1,10,2,1024\n", 2, "", ""},
		{"no rows", head, 1, "", "no jobs"},
		{"empty", "", 1, "", "empty file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := trace.ReadJobsCSV(strings.NewReader(tt.in), "jobs.csv")
			var ie *trace.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("want an InputError, got %v", err)
			}
			if ie.Line != tt.line || ie.Column != tt.column || !strings.Contains(ie.Error(), tt.msg) {
				t.Errorf("got line %d column %q: %v; want line %d column %q mentioning %q", ie.Line, ie.Column, err, tt.line, tt.column, tt.msg)
			}
			if !strings.HasPrefix(err.Error(), "jobs.csv:") {
				t.Errorf("error %q does not start with the file name", err)
			}
		})
	}
}

func TestJobsCSVStagesRunInFileOrder(t *testing.T) {
	in := "mem_mb,cpus,job_id,submit_s,framework,tasks,duration_s,net_bw\n" +
		"1024,1,a,3,f,2,10,\n" +
		"2048,2,b,0,g,1,5,40\n" +
		"512,0.5,a,3,f,4,1,\n"
	jobs, err := trace.ReadJobsCSV(strings.NewReader(in), "x.csv")
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 2 || jobs[0].ID != "a" || len(jobs[0].Stages) != 2 || jobs[0].Submit != 3 {
		t.Fatalf("got %+v", jobs)
	}
	if g := jobs[0].Stages[1].Groups[0]; g.Tasks != 4 || g.Demand != sim.Shape(0.5, 512) || g.Line != 4 {
		t.Errorf("second stage of a: %+v", g)
	}
	if g := jobs[1].Stages[0].Groups[0]; g.Demand[resources.NetBW] != 40*resources.Scale {
		t.Errorf("net_bw not read: %+v", g)
	}
}

func TestNodesCSV(t *testing.T) {
	nodes, err := trace.ReadNodesCSV(strings.NewReader("node_id,cpus,mem_mb,count,disk_bw\nbig,8,8192,3,100\nsmall,2,1024,,\n"), "n.csv")
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 4 || nodes[0].ID != "big-1" || nodes[2].ID != "big-3" || nodes[3].ID != "small" || nodes[0].Total[resources.DiskBW] != 100*resources.Scale {
		t.Fatalf("got %+v", nodes)
	}
	bad := []struct{ in, column, msg string }{
		{"node_id,cpus,mem_mb\nn,4,many\n", "mem_mb", "not a number"},
		{"node_id,cpus,mem_mb,count\nn,4,1024,0\n", "count", ">= 1"},
		{"node_id,cpus,mem_mb\nn,4,1024\nn,2,2048\n", "node_id", "already defined on line 2"},
		{"node_id,cpus,mem_mb\nn,0,0\n", "cpus", "cpus or mem"},
	}
	for _, b := range bad {
		_, err := trace.ReadNodesCSV(strings.NewReader(b.in), "n.csv")
		var ie *trace.InputError
		if !errors.As(err, &ie) || ie.Column != b.column || !strings.Contains(err.Error(), b.msg) {
			t.Errorf("%q: got %v; want column %q mentioning %q", b.in, err, b.column, b.msg)
		}
	}
}

func TestSWIMModel(t *testing.T) {
	in := "job0\t49\t49\t740773\t2339561\t627471\n" +
		"job1\t60\t11\t200000000\t0\t0\n"
	jobs, err := trace.ReadSWIM(strings.NewReader(in), "fb.tsv", trace.TraceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 2 || jobs[0].Submit != 49 || jobs[0].Framework != "job0" {
		t.Fatalf("got %+v", jobs)
	}
	// a small job: one map, one reduce
	if len(jobs[0].Stages) != 2 || jobs[0].Stages[0].Groups[0].Tasks != 1 || jobs[0].Stages[1].Groups[0].Tasks != 1 {
		t.Errorf("job0 stages %+v", jobs[0].Stages)
	}
	// 200 MB of input: ceil(200e6 / 64 MiB) = 3 maps of 66.7 MB, 5 s +
	// 66.7/20 s each; nothing shuffled, so no reduce stage
	j := jobs[1]
	if len(j.Stages) != 1 || j.Stages[0].Groups[0].Tasks != 3 {
		t.Fatalf("job1 stages %+v", j.Stages)
	}
	if g := j.Stages[0].Groups[0]; math.Abs(g.Duration-(5+200e6/3/20e6)) > 1e-9 || g.Demand[resources.DiskBW] == 0 {
		t.Errorf("job1 map group %+v", g)
	}
	_, err = trace.ReadSWIM(strings.NewReader("job0\t49\t49\tlots\t0\t0\n"), "fb.tsv", trace.TraceOptions{})
	var ie *trace.InputError
	if !errors.As(err, &ie) || ie.Line != 1 || ie.Column != "map_input_bytes" {
		t.Errorf("bad SWIM row: %v", err)
	}
}

func TestAlibabaModel(t *testing.T) {
	in := ",submit_time,duration,cpu,memory,job_id,task_id,instances_num,disk\n" +
		"0,539,116.5,1.0,0.0054,1,1,283,0\n" +
		"1,7448,73.5,0.5,0.0078,9,23,67,0\n" +
		"2,7447,87.3,0.5,0.0078,9,24,21,0\n"
	jobs, err := trace.ReadAlibaba2017(strings.NewReader(in), "jobs.csv", trace.TraceOptions{MachineMemMB: 65536})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 2 || jobs[1].ID != "9" || jobs[1].Submit != 7447 || len(jobs[1].Stages) != 1 || len(jobs[1].Stages[0].Groups) != 2 {
		t.Fatalf("got %+v", jobs)
	}
	// memory 0.0054 of a 64 GiB machine is 354 MB (rounded)
	if g := jobs[0].Stages[0].Groups[0]; g.Tasks != 283 || g.Demand != sim.Shape(1, 354) || g.Duration != 116.5 {
		t.Errorf("job 1: %+v", g)
	}
	_, err = trace.ReadAlibaba2017(strings.NewReader(in+"3,1,2,1,1.5,4,5,6,0\n"), "jobs.csv", trace.TraceOptions{})
	var ie *trace.InputError
	if !errors.As(err, &ie) || ie.Line != 5 || ie.Column != "memory" {
		t.Errorf("bad Alibaba row: %v", err)
	}
}

func TestParseCluster(t *testing.T) {
	nodes, err := trace.ParseCluster("2xcpus=4,mem=14G+cpus=8,mem=8192,net_bw=125")
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 3 || nodes[0].Total != sim.Shape(4, 14336) || nodes[2].Total != sim.Shape(8, 8192, 0, 0, 125) || nodes[2].ID != "t2-1" {
		t.Fatalf("got %+v", nodes)
	}
	for _, preset := range trace.ClusterPresets() {
		if _, err := trace.ParseCluster(preset); err != nil {
			t.Errorf("preset %s: %v", preset, err)
		}
	}
	for _, bad := range []string{"", "0xcpus=4", "cpus=four", "cpu=4", "2xmem", "cpus=0,mem=0"} {
		if _, err := trace.ParseCluster(bad); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
}
