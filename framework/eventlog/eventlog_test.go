package eventlog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// oneOfEach is an event of every kind, with every field set to something
// other than its zero value where the runtime can write one.
func oneOfEach() []Event {
	failed := &TaskEnd{Task: 9, Stage: 2, Partition: 1, Attempt: 1, Executor: "exec-2", Error: "executor unreachable: EOF", Time: 11}
	ok := &TaskEnd{Task: 8, Stage: 2, Partition: 0, Executor: "exec-1", Success: true, Time: 10.5}
	ok.SetMetrics(TaskMetrics{DurationS: 0.25, CPUTimeS: 0.2, BytesRead: 100, ShuffleWrite: 50, ShuffleFetch: 25, RecordsOut: 3})
	return []Event{
		&ApplicationStart{App: "wc", EventLog: "/tmp/wc.jsonl", Time: 1, Settings: Settings{BlockMemMB: 256, Cores: 2, Dynamic: true,
			Executors: 2, Local: false, Master: "127.0.0.1:5050", MaxExecutors: 4, MemMB: 512, MinExecutors: 1}},
		&ExecutorLaunched{Executor: "exec-1", Agent: "a-S0", Host: "n1", Time: 1.5},
		&OffersDeclined{Offers: 2, RefuseSeconds: 5, HeldS: 0.5, Time: 1.6},
		&ExecutorAdded{Executor: "exec-1", Host: "n1", URL: "http://n1:1", Cores: 2, PID: 42, Time: 2},
		&JobStart{Action: "count", ResultStage: 2, Partitions: 4, Time: 3},
		&StageSubmitted{Stage: 1, Name: "map", StageKind: "shuffle_map", Tasks: 4, Partitions: 4, Parents: []int{}, Time: 3},
		&StageSubmitted{Stage: 2, Name: "reduce", StageKind: "result", Tasks: 4, Partitions: 4, Parents: []int{1}, Time: 4},
		&ExecutorsRequested{Target: 3, Backlog: 7, Time: 4.5},
		&ExecutorSample{Executor: "exec-1", Time: 5, CPU: 1.5, MemBytes: 1 << 20, DiskBW: 10, FileBW: 20, NetBW: 30, Running: 2,
			Stages: []int{1, 2}, BlockMem: 4096, BlockSpill: 8192, CachedBlocks: 3},
		&ExecutorSample{Executor: "exec-2", Time: 5},
		ok, failed,
		&StageCompleted{Stage: 1, Name: "map", Start: 3, End: 6, DurationS: 3, Executors: 2, Time: 6},
		&ExecutorStage{Stage: 1, Executor: "exec-1", Start: 3, End: 6, Tasks: 2, Samples: 3, ConcurrentStages: 1, TaskCPUTimeS: 0.4,
			BytesRead: 1, ShuffleWriteBytes: 2, ShuffleFetchBytes: 3, CPUPeak: 2, CPUMean: 1, MemPeakBytes: 4, MemMeanBytes: 3,
			DiskBWPeak: 5, DiskBWMean: 4, FileBWPeak: 6, FileBWMean: 5, NetBWPeak: 7, NetBWMean: 6, Time: 7},
		&JobEnd{Success: true, DurationS: 4.5, Time: 8},
		&JobEnd{Error: "stage 2 failed", Time: 8.5},
		&ExecutorRemoved{Executor: "exec-2", Reason: "idle", LostCachedPartitions: 2, Time: 9},
		&ExecutorTaskEnded{Executor: "exec-2", State: "TASK_KILLED", Message: "released", Released: true, Time: 9.5},
		&ApplicationEnd{DurationS: 10, Success: false, Error: "boom", InputBytes: 1 << 30, Time: 11},
	}
}

func TestRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	want := oneOfEach()
	for _, ev := range want {
		if err := w.Write(ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := ReadAll(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("read %d events, wrote %d", len(got), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("event %d: read %#v, wrote %#v", i, got[i], want[i])
		}
	}
	kinds := map[string]bool{}
	for _, ev := range got {
		kinds[ev.Kind()] = true
	}
	if len(kinds) != 15 {
		t.Errorf("round trip covers %d kinds, want all 15", len(kinds))
	}
}

// TestOptionalFields checks which fields are absent from a line, as the
// runtime has always written them.
func TestOptionalFields(t *testing.T) {
	cases := []struct {
		ev      Event
		present []string
		absent  []string
	}{
		{&TaskEnd{Error: "unreachable"}, []string{"error", "success", "attempt"}, []string{"duration_s", "cpu_time_s", "bytes_read", "cache_hit", "records_out"}},
		{func() Event { e := &TaskEnd{Success: true}; e.SetMetrics(TaskMetrics{}); return e }(),
			[]string{"duration_s", "cpu_time_s", "bytes_read", "cache_hit", "records_out", "shuffle_fetch_bytes", "shuffle_write_bytes"}, []string{"error"}},
		{&JobEnd{Success: true, DurationS: 1}, []string{"duration_s", "success"}, []string{"error"}},
		{&JobEnd{Error: "x"}, []string{"error", "success"}, []string{"duration_s"}},
		{&ApplicationEnd{Success: true}, []string{"duration_s", "input_bytes"}, []string{"error"}},
		{&ExecutorSample{}, []string{"stages"}, nil},
	}
	for _, tc := range cases {
		var buf bytes.Buffer
		w := NewWriter(&buf)
		w.Write(tc.ev)
		w.Close()
		var m map[string]any
		if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		if m["event"] != tc.ev.Kind() {
			t.Errorf("event field %v, want %s", m["event"], tc.ev.Kind())
		}
		for _, k := range tc.present {
			if _, ok := m[k]; !ok {
				t.Errorf("%s: %q missing from %s", tc.ev.Kind(), k, buf.String())
			}
		}
		for _, k := range tc.absent {
			if _, ok := m[k]; ok {
				t.Errorf("%s: %q present in %s", tc.ev.Kind(), k, buf.String())
			}
		}
	}
}

// TestOldLogs reads logs written by the runtime before this package
// existed (testdata/v0-local.jsonl is a local run of the driver that wrote
// map[string]any records: jobs, a failing task, dynamic allocation, cache;
// v0-cluster-kinds.jsonl holds the kinds only the Mesos backend writes and a
// task whose executor never answered, marshalled from the old code's maps).
// Every line must decode to a known kind, and encoding the event again must
// give the very same bytes.
func TestOldLogs(t *testing.T) {
	files, _ := filepath.Glob("testdata/v0-*.jsonl")
	if len(files) < 2 {
		t.Fatalf("fixtures missing: %v", files)
	}
	kinds := map[string]int{}
	for _, path := range files {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for n := 1; sc.Scan(); n++ {
			line := sc.Bytes()
			ev, err := decode(line)
			if err != nil {
				t.Fatalf("%s:%d: %v", path, n, err)
			}
			if _, ok := ev.(*Unknown); ok {
				t.Fatalf("%s:%d: unknown kind %q", path, n, ev.Kind())
			}
			kinds[ev.Kind()]++
			again, err := json.Marshal(ev)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, line) {
				t.Errorf("%s:%d: re-encoded differs\n old %s\n new %s", path, n, line, again)
			}
		}
		f.Close()
		evs, err := ReadFile(path)
		if err != nil || len(evs) == 0 {
			t.Fatalf("ReadFile %s: %d events, %v", path, len(evs), err)
		}
	}
	if len(kinds) != 15 {
		t.Errorf("fixtures cover %d kinds, want 15: %v", len(kinds), kinds)
	}
}

func TestReaderTolerance(t *testing.T) {
	in := "\n" + `{"event":"job_start","time":1,"action":"count","result_stage":1,"partitions":2}` + "\n\n" +
		`{"event":"gpu_sample","time":2,"util":0.5}` + "\n" + `{"event":"job_end","time":3,"success":true,"duration_s":2}`
	evs, err := ReadAll(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 3 {
		t.Fatalf("got %d events, want 3 (blank lines skipped, last line without newline read)", len(evs))
	}
	u, ok := evs[1].(*Unknown)
	if !ok || u.Kind() != "gpu_sample" || u.At() != 2 {
		t.Fatalf("unknown kind read as %#v", evs[1])
	}
	// An unknown event is written back as it was read.
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.Write(u)
	w.Close()
	if got := strings.TrimSpace(buf.String()); got != `{"event":"gpu_sample","time":2,"util":0.5}` {
		t.Fatalf("unknown event rewritten as %s", got)
	}
	_, err = ReadAll(strings.NewReader(`{"event":"job_end","time":1}` + "\n" + `{"event":"task_end","stage":"two"}`))
	if err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("bad line: error %v, want one naming line 2", err)
	}
	r := NewReader(strings.NewReader(""))
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("empty log: %v, want io.EOF", err)
	}
}

func TestWriteAfterClose(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(dir, "my app/1")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(filepath.Base(w.Path()), "my_app_1-") {
		t.Fatalf("unsafe app name kept in %s", w.Path())
	}
	w.Write(&JobStart{Action: "count", Time: 1})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	w.Write(&JobEnd{Success: true, Time: 2}) // dropped, not a panic
	evs, err := ReadFile(w.Path())
	if err != nil || len(evs) != 1 {
		t.Fatalf("read %d events (%v), want the one written before Close", len(evs), err)
	}
}

// TestCreateDoesNotTruncate: two runs of one application in the same
// second from one process get two logs.
func TestCreateDoesNotTruncate(t *testing.T) {
	dir := t.TempDir()
	a, err := Create(dir, "same")
	if err != nil {
		t.Fatal(err)
	}
	b, err := Create(dir, "same")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	defer b.Close()
	if a.Path() == b.Path() {
		t.Errorf("both runs log to %s", a.Path())
	}
}
