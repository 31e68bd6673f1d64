package auth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
)

// ExecutorTokenEnv is the environment variable in which an agent started
// with --authenticate-http-executors hands each executor its token (Mesos's
// name).
const ExecutorTokenEnv = "MESOS_EXECUTOR_AUTHENTICATION_TOKEN"

// ExecutorClaims is what an executor token vouches for: the executor of one
// framework in one container. The container id makes a token of an earlier
// run of the same executor id useless for the next.
type ExecutorClaims struct {
	FrameworkID string `json:"fid"`
	ExecutorID  string `json:"eid"`
	ContainerID string `json:"cid"`
}

// ExecutorSigner issues and checks executor tokens with a per-agent secret.
// A token is base64url(JSON claims) "." base64url(HMAC-SHA256(secret,
// claims JSON)): the agent needs no table of issued tokens (and so no
// checkpoint of one), and an executor cannot forge another's.
type ExecutorSigner struct {
	key []byte
}

// NewExecutorSigner returns a signer with the given key (at least 16
// bytes).
func NewExecutorSigner(key []byte) (*ExecutorSigner, error) {
	if len(key) < 16 {
		return nil, fmt.Errorf("executor token key: want at least 16 bytes, got %d", len(key))
	}
	return &ExecutorSigner{key: append([]byte(nil), key...)}, nil
}

// LoadOrCreateExecutorKey returns the key kept in path, creating a random
// one (mode 0600) the first time. Keeping it across agent restarts keeps
// recovered executors' tokens valid.
func LoadOrCreateExecutorKey(path string) ([]byte, error) {
	if b, err := os.ReadFile(path); err == nil {
		if len(b) < 16 {
			return nil, fmt.Errorf("executor token key %s: %d bytes, want 32 (remove it to make a new one; running executors' tokens then stop working)", path, len(b))
		}
		return b, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, key, 0o600); err != nil {
		return nil, err
	}
	return key, os.Rename(tmp, path)
}

// Issue returns the token for c.
func (s *ExecutorSigner) Issue(c ExecutorClaims) string {
	body, _ := json.Marshal(c) // a struct of strings always marshals
	return base64.RawURLEncoding.EncodeToString(body) + "." + base64.RawURLEncoding.EncodeToString(s.mac(body))
}

func (s *ExecutorSigner) mac(body []byte) []byte {
	h := hmac.New(sha256.New, s.key)
	h.Write(body)
	return h.Sum(nil)
}

// ErrBadToken is returned for a token this agent did not issue (malformed,
// forged, or signed with another agent's key).
var ErrBadToken = errors.New("executor token is malformed or was not issued by this agent")

// Check verifies token's signature and returns its claims.
func (s *ExecutorSigner) Check(token string) (ExecutorClaims, error) {
	b64body, b64mac, ok := strings.Cut(token, ".")
	if !ok {
		return ExecutorClaims{}, ErrBadToken
	}
	body, err1 := base64.RawURLEncoding.DecodeString(b64body)
	mac, err2 := base64.RawURLEncoding.DecodeString(b64mac)
	if err1 != nil || err2 != nil || !hmac.Equal(mac, s.mac(body)) {
		return ExecutorClaims{}, ErrBadToken
	}
	var c ExecutorClaims
	if err := json.Unmarshal(body, &c); err != nil {
		return ExecutorClaims{}, ErrBadToken
	}
	return c, nil
}

// BearerToken returns the token of r's "Authorization: Bearer" header, and
// whether there was one.
func BearerToken(r *http.Request) (string, bool) {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	return tok, tok != ""
}

// ExecutorAuthorization is the Authorization header value an executor
// sends: "Bearer " and the token the agent gave it in ExecutorTokenEnv, or
// "" when it was given none (authentication is off on its agent).
func ExecutorAuthorization() string {
	if tok := os.Getenv(ExecutorTokenEnv); tok != "" {
		return "Bearer " + tok
	}
	return ""
}
