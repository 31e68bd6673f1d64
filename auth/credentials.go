package auth

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"unicode"
)

// Credential is one principal and its secret, as Mesos's Credential
// message has them.
type Credential struct {
	Principal string `json:"principal"`
	Secret    string `json:"secret"`
}

// Verifier checks a principal's secret. The master's authenticating
// middleware needs nothing more from a credentials store.
type Verifier interface {
	Verify(principal, secret string) bool
}

// Credentials is the master's --credentials: every principal it accepts
// and its secret.
type Credentials struct {
	secrets map[string]string
}

var _ Verifier = (*Credentials)(nil)

// Verify reports whether secret is principal's. The comparison takes the
// same time whether the principal is unknown or the secret differs early,
// so a caller cannot learn either from the answer's timing.
func (c *Credentials) Verify(principal, secret string) bool {
	want, known := c.secrets[principal]
	// Hash both sides: ConstantTimeCompare is constant only for equal
	// lengths, and the secret's length is worth hiding too.
	a, b := sha256.Sum256([]byte(want)), sha256.Sum256([]byte(secret))
	eq := subtle.ConstantTimeCompare(a[:], b[:]) == 1
	return known && eq
}

// Principals lists the principals, sorted (for logs: never the secrets).
func (c *Credentials) Principals() []string {
	out := make([]string, 0, len(c.secrets))
	for p := range c.secrets {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// Len is the number of principals.
func (c *Credentials) Len() int { return len(c.secrets) }

// NewCredentials builds a store from a list, refusing empty principals or
// secrets and duplicates (which of two secrets would hold is a guess).
func NewCredentials(list []Credential) (*Credentials, error) {
	c := &Credentials{secrets: make(map[string]string, len(list))}
	for i, cr := range list {
		if err := cr.check(); err != nil {
			return nil, fmt.Errorf("credentials[%d]: %w", i, err)
		}
		if _, dup := c.secrets[cr.Principal]; dup {
			return nil, fmt.Errorf("credentials[%d]: principal %q appears twice", i, cr.Principal)
		}
		c.secrets[cr.Principal] = cr.Secret
	}
	return c, nil
}

func (cr Credential) check() error {
	switch {
	case cr.Principal == "":
		return errors.New(`"principal" is missing or empty`)
	case cr.Secret == "":
		return fmt.Errorf(`principal %q: "secret" is missing or empty`, cr.Principal)
	case strings.ContainsAny(cr.Principal, ":\r\n"):
		// HTTP Basic splits user and password at the first colon: a
		// principal holding one could never authenticate.
		return fmt.Errorf("principal %q: a principal may not contain ':' or a line break", cr.Principal)
	case strings.IndexFunc(cr.Principal, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0:
		// The text form cannot hold one, and " ops" in a JSON file is a
		// typo that no client would ever type back.
		return fmt.Errorf("principal %q: a principal may not contain white space or control characters", cr.Principal)
	}
	return nil
}

// ParseCredentials reads a credentials file in either of Mesos's forms:
// JSON, {"credentials":[{"principal":"a","secret":"s"},...]}, or text, one
// "principal secret" per line (blank lines and lines starting with # are
// skipped). A file whose first non-space byte is '{' is JSON.
func ParseCredentials(data []byte) (*Credentials, error) {
	if isJSON(data) {
		var f struct {
			Credentials *[]Credential `json:"credentials"`
		}
		if err := decodeStrict(data, &f); err != nil {
			return nil, err
		}
		if f.Credentials == nil {
			return nil, errors.New(`no "credentials" array (want {"credentials":[{"principal":"...","secret":"..."}]})`)
		}
		return NewCredentials(*f.Credentials)
	}
	list, err := parseText(data)
	if err != nil {
		return nil, err
	}
	return NewCredentials(list)
}

// ParseCredential reads the agent's --credential: one credential, as JSON
// {"principal":"a","secret":"s"} or a single "principal secret" line.
func ParseCredential(data []byte) (Credential, error) {
	var cr Credential
	if isJSON(data) {
		if err := decodeStrict(data, &cr); err != nil {
			return Credential{}, err
		}
		return cr, cr.check()
	}
	list, err := parseText(data)
	if err != nil {
		return Credential{}, err
	}
	if len(list) != 1 {
		return Credential{}, fmt.Errorf("want exactly one \"principal secret\" line, found %d", len(list))
	}
	return list[0], list[0].check()
}

// LoadCredentials reads and parses the file at path; errors name it.
func LoadCredentials(path string) (*Credentials, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("credentials file: %w", err)
	}
	c, err := ParseCredentials(data)
	if err != nil {
		return nil, fmt.Errorf("credentials file %s: %w", path, err)
	}
	return c, nil
}

// LoadCredential reads and parses the agent's credential file at path.
func LoadCredential(path string) (Credential, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Credential{}, fmt.Errorf("credential file: %w", err)
	}
	cr, err := ParseCredential(data)
	if err != nil {
		return Credential{}, fmt.Errorf("credential file %s: %w", path, err)
	}
	return cr, nil
}

func isJSON(data []byte) bool {
	t := bytes.TrimSpace(data)
	return len(t) > 0 && t[0] == '{'
}

// decodeStrict decodes one JSON value, refusing unknown fields (a typo such
// as "secrets" would otherwise leave every secret empty) and trailing data,
// and turns a syntax error's byte offset into a line and column.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil && dec.More() {
		err = errors.New("data after the JSON object")
	}
	if err == nil {
		return nil
	}
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		line, col := position(data, se.Offset)
		return fmt.Errorf("line %d, column %d: %v", line, col, se)
	case errors.As(err, &te):
		line, col := position(data, te.Offset)
		return fmt.Errorf("line %d, column %d: field %q: want a %s, got a JSON %s", line, col, te.Field, te.Type, te.Value)
	}
	return fmt.Errorf("JSON: %w", err)
}

// position is the 1-based line and column of the last byte read when a
// decoder stopped after off bytes: the byte it choked on.
func position(data []byte, off int64) (line, col int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	if off < 0 {
		off = 0
	}
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(off) - (bytes.LastIndexByte(before, '\n') + 1)
	if col < 1 {
		col = 1
	}
	return line, col
}

// parseText reads Mesos's text form: "principal secret" per line.
func parseText(data []byte) ([]Credential, error) {
	var out []Credential
	seen := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 {
			return nil, fmt.Errorf("line %d: want \"principal secret\" (two fields separated by white space), got %d fields", n, len(f))
		}
		cr := Credential{Principal: f[0], Secret: f[1]}
		if err := cr.check(); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if first, dup := seen[cr.Principal]; dup {
			return nil, fmt.Errorf("line %d: principal %q appears twice (first on line %d)", n, cr.Principal, first)
		}
		seen[cr.Principal] = n
		out = append(out, cr)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading lines: %w", err)
	}
	return out, nil
}
