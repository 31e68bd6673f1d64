package limits

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

func TestCapBodies(t *testing.T) {
	read := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			http.Error(w, TooLarge(mbe.Limit), http.StatusRequestEntityTooLarge)
			return
		}
		io.WriteString(w, "read "+strconv.Itoa(len(b)))
	})
	tests := []struct {
		name     string
		path     string
		body     string
		chunked  bool
		code     int
		rejected int
	}{
		{"under the cap", "/api", "12345", false, 200, 0},
		{"at the cap", "/api", "1234567890", false, 200, 0},
		{"content-length over", "/api", "12345678901", false, 413, 1},
		{"chunked over", "/api", "12345678901", true, 413, 1},
		{"uncapped route", "/snapshot", strings.Repeat("y", 100), false, 200, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rejected := 0
			h := CapBodies(read, func(r *http.Request) int64 {
				if r.URL.Path == "/snapshot" {
					return 0
				}
				return 10
			}, func(*http.Request) { rejected++ })
			var body io.Reader = strings.NewReader(tt.body)
			if tt.chunked {
				body = io.MultiReader(body) // hides the length: chunked
			}
			req := httptest.NewRequest(http.MethodPost, tt.path, body)
			if tt.chunked {
				req.ContentLength = -1
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tt.code || rejected != tt.rejected {
				t.Fatalf("code %d rejected %d; want %d %d (%s)", rec.Code, rejected, tt.code, tt.rejected, rec.Body)
			}
			if tt.code == 413 && !strings.Contains(rec.Body.String(), "limit of 10 bytes (--max-request-bytes)") {
				t.Errorf("413 body %q does not name the limit", rec.Body)
			}
		})
	}
}
