package eventlog

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// TestISparkEventsRoundTrip: the iSpark events are written with their kind
// and read back as themselves, not as Unknown; application_end's
// recomputation count is absent when zero and kept when not.
func TestISparkEventsRoundTrip(t *testing.T) {
	want := []Event{
		&ExecutorUtilisation{Time: 1, Executor: "exec-1", CPU: 0.25, Mem: 0.5, UMax: 0.9, EpochS: 5, Samples: 5},
		&PartitionsMoved{Time: 2, From: "exec-2", To: "exec-1", Requested: 4, Count: 3, Bytes: 1 << 20, Evicted: 1, DurationS: 0.1},
		&ApplicationEnd{Time: 3, Success: true, RecomputedPartitions: 2},
		&ApplicationEnd{Time: 4, Success: true},
	}
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for _, ev := range want {
		if err := w.Write(ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(buf.Bytes(), []byte(`"event":"executor_utilisation"`)) || !bytes.Contains(buf.Bytes(), []byte(`"event":"partitions_moved"`)) {
		t.Fatalf("kinds not written:\n%s", buf.String())
	}
	if n := bytes.Count(buf.Bytes(), []byte("recomputed_partitions")); n != 1 {
		t.Fatalf("recomputed_partitions appears %d times, want once (omitted when 0):\n%s", n, buf.String())
	}
	got, err := ReadAll(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("read %#v\nwrote %#v", got, want)
	}
}

// TestRunQueueWaitFields: a task's run-queue wait is written only when
// measured, so logs of hosts that do not report it read as before.
func TestRunQueueWaitFields(t *testing.T) {
	for _, tc := range []struct {
		wait float64
		want bool
	}{{0, false}, {0.25, true}} {
		e := &TaskEnd{Success: true}
		e.SetMetrics(TaskMetrics{DurationS: 1, CPUTimeS: 0.5, RunQueueS: tc.wait})
		var buf bytes.Buffer
		w := NewWriter(&buf)
		w.Write(e)
		w.Close()
		if got := strings.Contains(buf.String(), `"run_queue_s":0.25`); got != tc.want {
			t.Errorf("wait %v: line %s, run_queue_s present %v, want %v", tc.wait, buf.String(), got, tc.want)
		}
	}
}
