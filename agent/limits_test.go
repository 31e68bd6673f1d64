package agent

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

// The executor API answers a body over --max-request-bytes 413 before
// decoding it; one under the cap reaches the handler (which refuses it for
// other reasons).
func TestExecutorBodyCap(t *testing.T) {
	a := &Agent{cfg: Config{MaxRequestBytes: 100}, log: zerolog.Nop()}
	reached := 0
	h := a.limitBodies(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached++
		w.WriteHeader(http.StatusAccepted)
	}))
	for _, tt := range []struct {
		size, want int
	}{{50, 202}, {100, 202}, {101, 413}} {
		req := httptest.NewRequest(http.MethodPost, "/api/v1/executor", strings.NewReader(strings.Repeat("x", tt.size)))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tt.want {
			t.Errorf("%d-byte body: %d %q, want %d", tt.size, rec.Code, rec.Body, tt.want)
		}
	}
	if reached != 2 {
		t.Errorf("handler reached %d times, want 2", reached)
	}
}
