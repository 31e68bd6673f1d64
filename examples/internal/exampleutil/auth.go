package exampleutil

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/allot-sched/allot/auth"
)

// authFlags are how an example logs in to masters with authentication
// and TLS on, read as the allot CLI reads them: --principal (else
// $ALLOT_PRINCIPAL), the secret from $ALLOT_SECRET or --secret-file (else
// $ALLOT_SECRET_FILE), and --tls-ca (else $ALLOT_TLS_CA, which the
// framework library reads itself).
type authFlags struct {
	principal, secretFile, tlsCA string
}

func (a *authFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&a.principal, "principal", os.Getenv("ALLOT_PRINCIPAL"), "authenticate to the masters as this `principal` (default $ALLOT_PRINCIPAL; `allot dev --auth` prints one)")
	fs.StringVar(&a.secretFile, "secret-file", os.Getenv("ALLOT_SECRET_FILE"), "read the principal's secret from this `file` (default $ALLOT_SECRET_FILE; or set $ALLOT_SECRET)")
	fs.StringVar(&a.tlsCA, "tls-ca", "", "PEM `file` of the CA that signed the masters' certificates (default $ALLOT_TLS_CA)")
}

// credential is the credential the flags and environment give, nil for
// none.
func (a *authFlags) credential() (*auth.Credential, error) {
	if a.principal == "" {
		return nil, nil
	}
	secret := os.Getenv("ALLOT_SECRET")
	if a.secretFile != "" {
		b, err := os.ReadFile(a.secretFile)
		if err != nil {
			return nil, fmt.Errorf("--secret-file: %v", err)
		}
		secret = strings.TrimRight(string(b), " \t\r\n")
	}
	if secret == "" {
		return nil, fmt.Errorf("principal %s needs a secret: set ALLOT_SECRET or ALLOT_SECRET_FILE (or --secret-file)", a.principal)
	}
	return &auth.Credential{Principal: a.principal, Secret: secret}, nil
}

// CredentialFromEnv is the credential in $ALLOT_PRINCIPAL with
// $ALLOT_SECRET or $ALLOT_SECRET_FILE, for examples without the shared
// flags; nil when no principal is set.
func CredentialFromEnv() (*auth.Credential, error) {
	a := authFlags{principal: os.Getenv("ALLOT_PRINCIPAL"), secretFile: os.Getenv("ALLOT_SECRET_FILE")}
	if a.principal == "" {
		return nil, nil
	}
	return a.credential()
}
