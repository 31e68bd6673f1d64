package limits

import (
	"errors"
	"fmt"
	"io"
	"net/http"
)

// DefaultMaxRequestBytes is --max-request-bytes's default: far above any
// scheduler, operator or executor call (an ACCEPT launching hundreds of
// tasks is tens of KiB), far below what would hurt a master's memory.
const DefaultMaxRequestBytes = 4 << 20

// CapBodies caps every request body at max(r) bytes before h reads it.
// A Content-Length over the cap is answered 413 at once; a longer chunked
// body fails the handler's read with *http.MaxBytesError, which the
// handlers answer 413 (api.ReadRequest does). rejected is called once per
// request refused either way. max returning <= 0 leaves the body alone
// (a route with a cap of its own, such as a snapshot restore).
func CapBodies(h http.Handler, max func(*http.Request) int64, rejected func(*http.Request)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := max(r)
		if n <= 0 || r.Body == nil || r.Body == http.NoBody {
			h.ServeHTTP(w, r)
			return
		}
		if r.ContentLength > n {
			rejected(r)
			w.Header().Set("Connection", "close") // do not read the rest
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			fmt.Fprintf(w, "%s\n", TooLarge(n))
			return
		}
		r.Body = &countedBody{ReadCloser: http.MaxBytesReader(w, r.Body, n), reject: func() { rejected(r) }}
		h.ServeHTTP(w, r)
	})
}

// TooLarge is the 413 message for a cap of n bytes.
func TooLarge(n int64) string {
	return fmt.Sprintf("request body exceeds the limit of %d bytes (--max-request-bytes)", n)
}

// countedBody reports the first read that hit the cap.
type countedBody struct {
	io.ReadCloser
	reject func()
	done   bool
}

func (b *countedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	var mbe *http.MaxBytesError
	if err != nil && !b.done && errors.As(err, &mbe) {
		b.done = true
		b.reject()
	}
	return n, err
}
