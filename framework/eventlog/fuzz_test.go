package eventlog_test

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/allot-sched/allot/framework/eventlog"
	"github.com/allot-sched/allot/framework/predict/profile"
)

// FuzzReadAll reads an event log as the predictor's loader does (a file
// written by a framework run, possibly truncated or from a newer writer):
// events or an error naming the line, never a panic. Whatever reads
// writes back and reads again the same, and the predictor's FromEvents
// accepts or skips the events without panicking.
func FuzzReadAll(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.jsonl")
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{"", "\n\n", "{}", "{\"event\":\"task_end\"}", "{\"event\":\"job_start\",\"time\":\"x\"}",
		"{\"event\":\"from_the_future\",\"time\":1}", "{nope", "null", "[]"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		evs, err := eventlog.ReadAll(bytes.NewReader(in))
		if err != nil {
			return
		}
		profile.FromEvents(evs)
		var buf bytes.Buffer
		w := eventlog.NewWriter(&buf)
		for _, ev := range evs {
			if err := w.Write(ev); err != nil {
				t.Fatalf("writing %T back: %v", ev, err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		back, err := eventlog.ReadAll(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatalf("reading back what was written: %v\n%q", err, buf.Bytes())
		}
		if !reflect.DeepEqual(evs, back) {
			t.Fatalf("round trip changed the events:\n%#v\n%#v", evs, back)
		}
	})
}
