package api

import (
	"encoding/json"
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	mmaster "github.com/mesos/mesos-go/api/v1/lib/master"
)

func TestOmitEmpty(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"a":null,"b":[],"c":1}`, `{"c":1}`},
		{`{"a":{"x":null},"b":[{"y":[]},{"z":"s"}]}`, `{"a":{},"b":[{},{"z":"s"}]}`},
		{`{"n":12345678901234567890,"f":0.1,"t":true,"e":"\u003c\u0026"}`, `{"n":12345678901234567890,"f":0.1,"t":true,"e":"\u003c\u0026"}`},
		{`{"first":null,"second":2}`, `{"second":2}`},
		{`[null,1,[]]`, `[null,1,null]`},
		{`{}`, `{}`},
	} {
		got, err := OmitEmpty([]byte(tc.in))
		if err != nil || string(got) != tc.want {
			t.Errorf("OmitEmpty(%s) = %s, %v; want %s", tc.in, got, err, tc.want)
		}
	}
	if _, err := OmitEmpty([]byte(`{"a":`)); err == nil {
		t.Error("truncated document accepted")
	}
}

// A stream with OmitEmpty sends JSON events without unset fields, as
// Mesos's operator event stream has them; protobuf is untouched.
func TestStreamOmitEmpty(t *testing.T) {
	ev := &mmaster.Event{Type: mmaster.Event_FRAMEWORK_REMOVED, FrameworkRemoved: &mmaster.Event_FrameworkRemoved{
		FrameworkInfo: mesos.FrameworkInfo{User: "u", Name: "n"}}}
	plain, _ := JSON.Marshal(ev)
	if !strings.Contains(string(plain), "null") {
		t.Fatalf("encoding/json wrote no null (%s): the test shows nothing", plain)
	}
	s := NewStream(JSON, 4)
	s.OmitEmpty = true
	s.Send(ev)
	got := s.take(nil)
	if len(got) != 1 || strings.Contains(string(got[0].b), "null") || strings.Contains(string(got[0].b), "[]") {
		t.Fatalf("%d events sent, the first %s; want one without null or empty arrays", len(got), got[0].b)
	}
	var back mmaster.Event
	if err := json.Unmarshal(got[0].b, &back); err != nil || back.FrameworkRemoved.FrameworkInfo.Name != "n" {
		t.Fatalf("mesos-go decodes it as %+v, %v", back, err)
	}
}
