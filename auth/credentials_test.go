package auth

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// credentialsCases are the parser's table; FuzzParseCredentials seeds its
// corpus from them.
var credentialsCases = []struct {
	name    string
	in      string
	want    []string // principals, sorted
	wantErr string   // substring of the error
}{
	{"json", `{"credentials":[{"principal":"a","secret":"s"},{"principal":"b","secret":"t"}]}`, []string{"a", "b"}, ""},
	{"json empty list", `{"credentials":[]}`, []string{}, ""},
	{"json no credentials", `{}`, nil, `no "credentials" array`},
	{"json typo field", `{"credentials":[{"principal":"a","secrets":"s"}]}`, nil, `unknown field "secrets"`},
	{"json empty secret", `{"credentials":[{"principal":"a","secret":""}]}`, nil, `credentials[0]: principal "a": "secret" is missing`},
	{"json missing principal", `{"credentials":[{"principal":"a","secret":"s"},{"secret":"s"}]}`, nil, `credentials[1]: "principal" is missing`},
	{"json duplicate", `{"credentials":[{"principal":"a","secret":"s"},{"principal":"a","secret":"t"}]}`, nil, `principal "a" appears twice`},
	{"json principal with a space", `{"credentials":[{"principal":" ops","secret":"s"}]}`, nil, `may not contain white space`},
	{"json secret with a space", `{"credentials":[{"principal":"ops","secret":"s t"}]}`, []string{"ops"}, ""},
	{"json colon", `{"credentials":[{"principal":"a:b","secret":"s"}]}`, nil, `may not contain ':'`},
	{"json syntax", "{\"credentials\":[\n  {\"principal\":\"a\",,}]}", nil, "line 2, column 20"},
	{"json type", "{\"credentials\":[\n{\"principal\":1,\"secret\":\"s\"}]}", nil, `line 2, column 14: field "credentials.principal": want a string`},
	{"json trailing", `{"credentials":[]} {}`, nil, "data after the JSON object"},
	{"text", "# operators\nalice s3cret\n\n  bob   hunter2  \n", []string{"alice", "bob"}, ""},
	{"text three fields", "alice s3cret\nbob a b\n", nil, "line 2: want \"principal secret\""},
	{"text one field", "alice\n", nil, "line 1: want"},
	{"text duplicate", "a s\nb t\na u\n", nil, `line 3: principal "a" appears twice (first on line 1)`},
	{"empty file", "", []string{}, ""},
}

func TestParseCredentials(t *testing.T) {
	for _, tt := range credentialsCases {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseCredentials([]byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(c.Principals(), ","); got != strings.Join(tt.want, ",") {
				t.Fatalf("principals = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestVerify(t *testing.T) {
	c, err := ParseCredentials([]byte(`{"credentials":[{"principal":"a","secret":"s"},{"principal":"b","secret":""}]}`))
	if err == nil {
		t.Fatal("an empty secret must be refused: anyone could authenticate as b with no secret")
	}
	c, err = ParseCredentials([]byte("a s\nb longer-secret\n"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		p, s string
		want bool
	}{
		{"a", "s", true},
		{"b", "longer-secret", true},
		{"a", "longer-secret", false}, // another principal's secret
		{"a", "", false},
		{"a", "S", false},
		{"c", "s", false},
		{"", "", false},
	}
	for _, tt := range tests {
		if got := c.Verify(tt.p, tt.s); got != tt.want {
			t.Errorf("Verify(%q, %q) = %v, want %v", tt.p, tt.s, got, tt.want)
		}
	}
}

func TestParseCredential(t *testing.T) {
	tests := []struct {
		name, in string
		want     Credential
		wantErr  string
	}{
		{"json", `{"principal":"agent","secret":"s"}`, Credential{"agent", "s"}, ""},
		{"text", "agent s\n", Credential{"agent", "s"}, ""},
		{"text two", "a s\nb t\n", Credential{}, "exactly one"},
		{"json list", `{"credentials":[{"principal":"a","secret":"s"}]}`, Credential{}, `unknown field "credentials"`},
		{"json no secret", `{"principal":"a"}`, Credential{}, `"secret" is missing`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseCredential([]byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("= %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func TestLoadNamesTheFile(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "creds.json")
	os.WriteFile(bad, []byte("a\n"), 0o600)
	if _, err := LoadCredentials(bad); err == nil || !strings.Contains(err.Error(), bad+": line 1") {
		t.Fatalf("err = %v, want the file and line named", err)
	}
	if _, err := LoadCredential(filepath.Join(dir, "missing")); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("err = %v, want the missing file named", err)
	}
}
