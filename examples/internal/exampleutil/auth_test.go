package exampleutil

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The examples read a credential as the allot CLI does: ALLOT_PRINCIPAL
// with ALLOT_SECRET or ALLOT_SECRET_FILE (the file's trailing newline
// dropped); none without a principal; an error for a principal alone.
func TestCredentialFromEnv(t *testing.T) {
	file := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(file, []byte("from-file\n"), 0o600)
	for _, tc := range []struct {
		name                  string
		principal, secret, sf string
		want, err             string // want "principal:secret"; "" for none
	}{
		{"none", "", "", "", "", ""},
		{"secret", "ops", "s1", "", "ops:s1", ""},
		{"secret file", "ops", "", file, "ops:from-file", ""},
		{"no secret", "ops", "", "", "", "needs a secret"},
		{"missing file", "ops", "", file + ".gone", "", "--secret-file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("ALLOT_PRINCIPAL", tc.principal)
			t.Setenv("ALLOT_SECRET", tc.secret)
			t.Setenv("ALLOT_SECRET_FILE", tc.sf)
			c, err := CredentialFromEnv()
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one saying %q", err, tc.err)
				}
				return
			}
			got := ""
			if c != nil {
				got = c.Principal + ":" + c.Secret
			}
			if err != nil || got != tc.want {
				t.Fatalf("credential %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}
