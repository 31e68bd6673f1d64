package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"
)

// Media types of the Mesos v1 HTTP APIs.
const (
	MediaProtobuf = "application/x-protobuf"
	MediaJSON     = "application/json"
	MediaRecordIO = "application/recordio"
	// MaxBodyBytes is the largest request body the APIs read (16 MiB).
	MaxBodyBytes = 16 << 20
)

// GogoMessage is what mesos-go's generated types implement.
type GogoMessage interface {
	Marshal() ([]byte, error)
	Unmarshal([]byte) error
}

// Codec is one of the two encodings the Mesos v1 APIs speak.
type Codec int

const (
	Protobuf Codec = iota
	JSON
)

func (c Codec) String() string {
	if c == JSON {
		return MediaJSON
	}
	return MediaProtobuf
}

// Marshal encodes a mesos-go message.
func (c Codec) Marshal(m GogoMessage) ([]byte, error) {
	if c == JSON {
		return json.Marshal(m)
	}
	return m.Marshal()
}

// MarshalOmitEmpty is Marshal but JSON leaves out the unset fields
// (null, empty arrays) as Mesos does (OmitEmpty): for the operator API,
// whose clients read Mesos's documents.
func (c Codec) MarshalOmitEmpty(m GogoMessage) ([]byte, error) {
	b, err := c.Marshal(m)
	if err != nil || c != JSON {
		return b, err
	}
	return OmitEmpty(b)
}

// Unmarshal decodes a mesos-go message.
func (c Codec) Unmarshal(b []byte, m GogoMessage) error {
	if c == JSON {
		// RFC 8259 requires JSON exchanged between systems to be UTF-8.
		// encoding/json would let invalid bytes through into ids and
		// names, and a JSON subscriber would then see them re-encoded as
		// U+FFFD: a different id than the one a protobuf client sees.
		if !utf8.Valid(b) {
			return errors.New("JSON body is not valid UTF-8")
		}
		return json.Unmarshal(b, m)
	}
	return m.Unmarshal(b)
}

// HTTPError is an error with the status code the API answers.
type HTTPError struct {
	Code int
	Msg  string
}

func (e *HTTPError) Error() string { return e.Msg }

// Errorf returns an *HTTPError.
func Errorf(code int, format string, args ...any) *HTTPError {
	return &HTTPError{Code: code, Msg: fmt.Sprintf(format, args...)}
}

// WriteError answers err: an *HTTPError with its code, anything else 500.
func WriteError(w http.ResponseWriter, err error) {
	var he *HTTPError
	if !errors.As(err, &he) {
		he = &HTTPError{Code: http.StatusInternalServerError, Msg: err.Error()}
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(he.Code)
	io.WriteString(w, he.Msg+"\n")
}

// Request is a decoded API request: the body and the codecs negotiated.
type Request struct {
	Body []byte
	// In is the body's codec; Out the one the client accepts.
	In, Out Codec
	// RecordIO reports whether the client asked for Content-Type
	// application/recordio with Message-Content-Type (mesos-go's streaming
	// response class) rather than the codec's own type (the "auto" class).
	RecordIO bool
}

// ReadRequest checks method, content type and size, and reads the body.
// Every failure is an *HTTPError naming the problem.
func ReadRequest(w http.ResponseWriter, r *http.Request) (*Request, error) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		return nil, Errorf(http.StatusMethodNotAllowed, "expecting a POST request, got %s", r.Method)
	}
	in, err := codecOf(r.Header.Get("Content-Type"))
	if err != nil {
		return nil, Errorf(http.StatusUnsupportedMediaType, "Content-Type: %v", err)
	}
	out := in
	recordio := false
	if acc := r.Header.Get("Accept"); acc != "" && acc != "*/*" {
		mt, _, _ := mime.ParseMediaType(strings.Split(acc, ",")[0])
		switch mt {
		case MediaRecordIO:
			recordio = true
			if ma := r.Header.Get("Message-Accept"); ma != "" {
				if out, err = codecOf(ma); err != nil {
					return nil, Errorf(http.StatusNotAcceptable, "Message-Accept: %v", err)
				}
			}
		case MediaJSON:
			out = JSON
		case MediaProtobuf:
			out = Protobuf
		case "*/*", "application/*":
		default:
			return nil, Errorf(http.StatusNotAcceptable, "Accept: %q is neither %s nor %s", acc, MediaProtobuf, MediaJSON)
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			// mbe.Limit, not MaxBodyBytes: a server may cap bodies lower
			// before this read (--max-request-bytes, internal/limits).
			return nil, Errorf(http.StatusRequestEntityTooLarge, "request body exceeds the limit of %d bytes%s", mbe.Limit, inMiB(mbe.Limit))
		}
		var to interface{ Timeout() bool }
		if errors.As(err, &to) && to.Timeout() {
			// The server's body deadline (--http-body-timeout) cut it.
			return nil, Errorf(http.StatusRequestTimeout, "reading request body: not received in time: %v", err)
		}
		return nil, Errorf(http.StatusBadRequest, "reading request body: %v", err)
	}
	if len(body) == 0 {
		return nil, Errorf(http.StatusBadRequest, "empty request body: expected a Call in %s", in)
	}
	return &Request{Body: body, In: in, Out: out, RecordIO: recordio}, nil
}

// inMiB is " (n MiB)" for a whole number of MiB, else "".
func inMiB(n int64) string {
	if n <= 0 || n%(1<<20) != 0 {
		return ""
	}
	return fmt.Sprintf(" (%d MiB)", n>>20)
}

func codecOf(ct string) (Codec, error) {
	if ct == "" {
		return 0, fmt.Errorf("missing; expected %s or %s", MediaProtobuf, MediaJSON)
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return 0, fmt.Errorf("%q: %v", ct, err)
	}
	switch mt {
	case MediaProtobuf:
		return Protobuf, nil
	case MediaJSON:
		return JSON, nil
	}
	return 0, fmt.Errorf("%q is neither %s nor %s", ct, MediaProtobuf, MediaJSON)
}

// Decode parses the body into m, answering 400 with the decoder's complaint.
func (req *Request) Decode(m GogoMessage, what string) error {
	if err := req.In.Unmarshal(req.Body, m); err != nil {
		return Errorf(http.StatusBadRequest, "failed to parse body into %s %s: %v", what, req.In, err)
	}
	return nil
}

// Stream is one RecordIO response stream (a subscription). Frames are
// queued by any goroutine with Send and written by the handler goroutine in
// Serve, so a slow reader never blocks the caller: when the queue is full the
// stream is closed and the client must subscribe again.
//
// The queue is a slice that grows with what is pending, not a channel of
// the queue's capacity: a master holds one stream per agent, and a buffered
// channel of 65,536 frames is 1.5 MiB allocated, zeroed and scanned by the
// garbage collector for every agent, 15 GiB at 10,000 agents, while an agent
// stream rarely has more than a few frames pending.
type Stream struct {
	Codec Codec
	// OmitEmpty: Send writes JSON events as Mesos does, without unset
	// fields (Codec.MarshalOmitEmpty). Set before the first Send.
	OmitEmpty bool
	limit     int
	mu        sync.Mutex
	queue     []queued
	ready     chan struct{} // one token: the queue went from empty to not
	done      chan struct{}
	once      sync.Once
	closeErr  string
}

// NewStream returns a stream with room for queue frames.
func NewStream(c Codec, queue int) *Stream {
	return &Stream{Codec: c, limit: queue, ready: make(chan struct{}, 1), done: make(chan struct{})}
}

// Send queues m; it reports false if the stream is closed or full (and then
// closes it).
func (s *Stream) Send(m GogoMessage) bool {
	marshal := s.Codec.Marshal
	if s.OmitEmpty {
		marshal = s.Codec.MarshalOmitEmpty
	}
	b, err := marshal(m)
	if err != nil {
		s.Close("encoding event: " + err.Error())
		return false
	}
	return s.SendRaw(b)
}

// SendProto queues a google.golang.org/protobuf message (agent protocol).
func (s *Stream) SendProto(m proto.Message) bool {
	b, err := proto.Marshal(m)
	if err != nil {
		s.Close("encoding event: " + err.Error())
		return false
	}
	return s.SendRaw(b)
}

// queued is a frame waiting for Serve, with its pooled buffer if it has
// one (SendFrame).
type queued struct {
	b []byte
	f *Frame
}

// SendRaw queues an encoded frame.
func (s *Stream) SendRaw(b []byte) bool { return s.send(b, nil) }

// send queues b; f, if not nil, is b's pooled buffer, released once b is
// written or refused.
func (s *Stream) send(b []byte, f *Frame) bool {
	select {
	case <-s.done:
		f.releaseIfPooled()
		return false
	default:
	}
	s.mu.Lock()
	if len(s.queue) >= s.limit {
		s.mu.Unlock()
		f.releaseIfPooled()
		s.Close("event queue full: the client reads too slowly")
		return false
	}
	s.queue = append(s.queue, queued{b, f})
	s.mu.Unlock()
	select {
	case s.ready <- struct{}{}:
	default:
	}
	return true
}

// take swaps the pending frames for spare (emptied) and returns them.
func (s *Stream) take(spare []queued) []queued {
	clear(spare)
	s.mu.Lock()
	got := s.queue
	s.queue = spare[:0]
	s.mu.Unlock()
	return got
}

// Close ends the stream; Serve returns.
func (s *Stream) Close(reason string) {
	s.once.Do(func() {
		s.closeErr = reason
		close(s.done)
	})
}

// Done is closed when the stream ends.
func (s *Stream) Done() <-chan struct{} { return s.done }

// Serve writes the 200 header and then frames until the stream or the
// client goes away. header is applied before the status is written.
func (s *Stream) Serve(w http.ResponseWriter, r *http.Request, recordio bool, header map[string]string) {
	for k, v := range header {
		w.Header().Set(k, v)
	}
	if recordio {
		w.Header().Set("Content-Type", MediaRecordIO)
		w.Header().Set("Message-Content-Type", s.Codec.String())
	} else {
		w.Header().Set("Content-Type", s.Codec.String())
	}
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	if fl != nil {
		fl.Flush()
	}
	var buf []byte
	var batch []queued
	for {
		select {
		case <-r.Context().Done():
			s.Close("client went away")
			return
		case <-s.done:
			// Write what is queued so a final ERROR event reaches the client.
			buf = appendFrames(buf[:0], s.take(batch))
			w.Write(buf)
			if fl != nil {
				fl.Flush()
			}
			return
		case <-s.ready:
			// Batch whatever is queued into one write and flush. Under load,
			// yielding once lets producers that are running right now add
			// their frames, which saves a write system call per event.
			batch = s.take(batch)
			buf = appendFrames(buf[:0], batch)
			runtime.Gosched()
			batch = s.take(batch)
			buf = appendFrames(buf, batch)
			if len(buf) == 0 {
				continue // a token left by frames the last batch took
			}
			if _, err := w.Write(buf); err != nil {
				s.Close("write: " + err.Error())
				return
			}
			if fl != nil {
				fl.Flush()
			}
			if cap(buf) > 1<<16 {
				buf = nil // a burst's buffer is not kept for the stream's life
			}
		}
	}
}

// appendFrames appends each queued frame and releases its pooled buffer:
// the bytes are in buf now.
func appendFrames(buf []byte, qs []queued) []byte {
	for _, q := range qs {
		buf = appendFrame(buf, q.b)
		q.f.releaseIfPooled()
	}
	return buf
}

func appendFrame(buf, b []byte) []byte {
	buf = strconv.AppendInt(buf, int64(len(b)), 10)
	buf = append(buf, '\n')
	return append(buf, b...)
}
