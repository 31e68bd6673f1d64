package auth

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestExecutorTokens(t *testing.T) {
	s, _ := NewExecutorSigner([]byte("0123456789abcdef0123456789abcdef"))
	other, _ := NewExecutorSigner([]byte("another agent's key, 32 bytes.."))
	c := ExecutorClaims{FrameworkID: "fw1", ExecutorID: "ex1", ContainerID: "c1"}
	tok := s.Issue(c)
	tests := []struct {
		name  string
		token string
		ok    bool
	}{
		{"issued", tok, true},
		{"other agent", other.Issue(c), false},
		{"truncated", tok[:len(tok)-2], false},
		{"no dot", "abc", false},
		{"empty", "", false},
		{"body swapped", swapBody(s.Issue(ExecutorClaims{FrameworkID: "fw2", ExecutorID: "ex1", ContainerID: "c1"}), tok), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.Check(tt.token)
			if (err == nil) != tt.ok {
				t.Fatalf("Check err = %v, want ok=%v", err, tt.ok)
			}
			if tt.ok && got != c {
				t.Fatalf("claims = %+v, want %+v", got, c)
			}
		})
	}
	if _, err := NewExecutorSigner([]byte("short")); err == nil {
		t.Fatal("a short key must be refused")
	}
}

func TestExecutorKeyPersists(t *testing.T) {
	p := filepath.Join(t.TempDir(), "meta", "executor-token.key")
	k1, err := LoadOrCreateExecutorKey(p)
	if err != nil {
		t.Fatal(err)
	}
	k2, err := LoadOrCreateExecutorKey(p)
	if err != nil || string(k1) != string(k2) {
		t.Fatalf("key changed across loads (err %v)", err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Fatalf("key mode %v, want 0600", fi.Mode().Perm())
	}
}

func TestBearerToken(t *testing.T) {
	tests := []struct {
		header, want string
		ok           bool
	}{
		{"Bearer abc", "abc", true},
		{"bearer abc", "abc", true},
		{"Basic abc", "", false},
		{"Bearer ", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		r, _ := http.NewRequest("POST", "/", nil)
		r.Header.Set("Authorization", tt.header)
		got, ok := BearerToken(r)
		if got != tt.want || ok != tt.ok {
			t.Errorf("BearerToken(%q) = %q, %v; want %q, %v", tt.header, got, ok, tt.want, tt.ok)
		}
	}
}

// swapBody is the claims of a with the signature of b: an executor that
// edits its token's claims to another framework's.
func swapBody(a, b string) string {
	ab, _, _ := strings.Cut(a, ".")
	_, bm, _ := strings.Cut(b, ".")
	return ab + "." + bm
}
