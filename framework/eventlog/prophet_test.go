package eventlog

import (
	"bytes"
	"reflect"
	"testing"
)

// Prophet's framework-side events read back as they were written.
func TestProphetEventsRoundTrip(t *testing.T) {
	want := []Event{
		&ExecutorsPlaced{Agents: []string{"S2", "S0"}, Scores: []float64{0, 12.5}, Offered: 3, Time: 1},
		&TaskBackoff{Executor: "exec-1", Agent: "S2", Device: "disk_bw", Capacity: 100, Delivered: 3.5, On: true, Time: 2},
		&TaskBackoff{Executor: "exec-1", Agent: "S2", Time: 5},
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
	got, err := ReadAll(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read %#v, wrote %#v", got, want)
	}
}
