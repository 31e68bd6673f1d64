package api

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"testing/iotest"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/recordio"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
)

func TestReadRequest(t *testing.T) {
	call, _ := (&scheduler.Call{Type: scheduler.Call_REVIVE}).Marshal()
	tests := []struct {
		name     string
		method   string
		ctype    string
		accept   string
		msgAcc   string
		body     []byte
		read     io.Reader // instead of body
		code     int       // 0: accepted
		want     string
		out      Codec
		recordio bool
	}{
		{name: "protobuf", ctype: MediaProtobuf, body: call, out: Protobuf},
		{name: "json in, protobuf out", ctype: "application/json; charset=utf-8", accept: MediaProtobuf, body: []byte(`{}`), out: Protobuf},
		{name: "recordio accept", ctype: MediaJSON, accept: MediaRecordIO, msgAcc: MediaJSON, body: []byte(`{}`), out: JSON, recordio: true},
		{name: "GET", method: http.MethodGet, ctype: MediaJSON, body: []byte(`{}`), code: 405, want: "expecting a POST"},
		{name: "no content type", body: call, code: 415, want: "missing"},
		{name: "text", ctype: "text/plain", body: call, code: 415, want: "neither"},
		{name: "bad accept", ctype: MediaJSON, accept: "text/html", body: []byte(`{}`), code: 406, want: "Accept"},
		{name: "empty body", ctype: MediaJSON, code: 400, want: "empty request body"},
		{name: "too big", ctype: MediaProtobuf, body: bytes.Repeat([]byte{1}, MaxBodyBytes+1), code: 413, want: "16 MiB"},
		{name: "body deadline", ctype: MediaJSON, read: timeoutReader{}, code: 408, want: "not received in time"},
		{name: "body read fails", ctype: MediaJSON, read: iotest.ErrReader(io.ErrUnexpectedEOF), code: 400, want: "unexpected EOF"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.method
			if m == "" {
				m = http.MethodPost
			}
			var body io.Reader = bytes.NewReader(tc.body)
			if tc.read != nil {
				body = tc.read
			}
			r := httptest.NewRequest(m, "/api/v1/scheduler", body)
			if tc.ctype != "" {
				r.Header.Set("Content-Type", tc.ctype)
			}
			if tc.accept != "" {
				r.Header.Set("Accept", tc.accept)
			}
			if tc.msgAcc != "" {
				r.Header.Set("Message-Accept", tc.msgAcc)
			}
			req, err := ReadRequest(httptest.NewRecorder(), r)
			if tc.code != 0 {
				he, ok := err.(*HTTPError)
				if !ok || he.Code != tc.code || !strings.Contains(he.Msg, tc.want) {
					t.Fatalf("error = %v, want %d with %q", err, tc.code, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if req.Out != tc.out || req.RecordIO != tc.recordio {
				t.Errorf("out %v recordio %v, want %v %v", req.Out, req.RecordIO, tc.out, tc.recordio)
			}
		})
	}
}

// timeoutReader fails as a connection past its read deadline does.
type timeoutReader struct{}

func (timeoutReader) Read([]byte) (int, error) { return 0, os.ErrDeadlineExceeded }

func TestDecodeNamesTheProblem(t *testing.T) {
	for _, c := range []Codec{Protobuf, JSON} {
		req := &Request{Body: []byte("\xff{garbage"), In: c}
		var call scheduler.Call
		err := req.Decode(&call, "scheduler.Call")
		if he, ok := err.(*HTTPError); !ok || he.Code != 400 || !strings.Contains(he.Msg, "scheduler.Call") {
			t.Errorf("%v: error = %v", c, err)
		}
	}
}

// A stream writes RecordIO frames that mesos-go's reader decodes, in order,
// with the headers clients check.
func TestStreamWritesRecordIO(t *testing.T) {
	for _, tc := range []struct {
		codec    Codec
		recordio bool
		ctype    string
	}{{Protobuf, false, MediaProtobuf}, {JSON, false, MediaJSON}, {JSON, true, MediaRecordIO}} {
		s := NewStream(tc.codec, 16)
		rec := httptest.NewRecorder()
		ctx, cancel := context.WithCancel(context.Background())
		r := httptest.NewRequest(http.MethodPost, "/", nil).WithContext(ctx)
		for i := 0; i < 3; i++ {
			s.Send(&scheduler.Event{Type: scheduler.Event_UPDATE, Update: &scheduler.Event_Update{Status: mesos.TaskStatus{TaskID: mesos.TaskID{Value: string(rune('a' + i))}, State: mesos.TASK_RUNNING.Enum()}}})
		}
		s.Close("done")
		s.Serve(rec, r, tc.recordio, map[string]string{"Mesos-Stream-Id": "x"})
		cancel()
		if got := rec.Header().Get("Content-Type"); got != tc.ctype {
			t.Errorf("%v: Content-Type %q, want %q", tc.codec, got, tc.ctype)
		}
		if rec.Header().Get("Mesos-Stream-Id") != "x" {
			t.Errorf("missing Mesos-Stream-Id")
		}
		rd := recordio.NewReader(rec.Body)
		for i := 0; i < 3; i++ {
			frame, err := rd.ReadFrame()
			if err != nil {
				t.Fatalf("%v: frame %d: %v", tc.codec, i, err)
			}
			var e scheduler.Event
			if err := tc.codec.Unmarshal(frame, &e); err != nil {
				t.Fatal(err)
			}
			if want := string(rune('a' + i)); e.Update.Status.TaskID.Value != want {
				t.Errorf("frame %d is task %s, want %s", i, e.Update.Status.TaskID.Value, want)
			}
		}
	}
}

// A full queue closes the stream rather than blocking the sender.
func TestStreamFullQueueCloses(t *testing.T) {
	s := NewStream(Protobuf, 1)
	ev := &scheduler.Event{Type: scheduler.Event_HEARTBEAT}
	if !s.Send(ev) {
		t.Fatal("first send refused")
	}
	if s.Send(ev) {
		t.Fatal("send to a full queue succeeded")
	}
	select {
	case <-s.Done():
	default:
		t.Fatal("stream still open after overflow")
	}
}

func TestJSONRejectsInvalidUTF8(t *testing.T) {
	tests := []struct {
		name string
		body string
		ok   bool
	}{
		{"valid", `{"type":"RECONCILE","reconcile":{"tasks":[{"task_id":{"value":"é"}}]}}`, true},
		{"replacement char is valid", "{\"type\":\"RECONCILE\",\"reconcile\":{\"tasks\":[{\"task_id\":{\"value\":\"\uFFFD\"}}]}}", true},
		{"invalid byte", "{\"reconcile\":{\"tasks\":[{\"task_id\":{\"value\":\"\xf1\"}}]}}", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var call scheduler.Call
			err := JSON.Unmarshal([]byte(tt.body), &call)
			if (err == nil) != tt.ok {
				t.Fatalf("Unmarshal error = %v, want ok=%v", err, tt.ok)
			}
		})
	}
}
