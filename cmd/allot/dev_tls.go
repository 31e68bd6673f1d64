package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/allot-sched/allot/internal/tlsconf"
)

// devTLS makes the throwaway CA and certificate of `allot dev --tls` in
// dir/tls: one ECDSA certificate for 127.0.0.1, ::1 and localhost that
// the master and every agent present (dev runs them all on loopback), and
// the CA clients verify it with. Nothing here is fit for a real cluster,
// whose operator issues a certificate per host from their own CA.
func devTLS(dir string) (tlsconf.Files, error) {
	f, err := tlsconf.DevFiles(filepath.Join(dir, "tls"))
	if err != nil {
		return f, fmt.Errorf("--tls: making a throwaway CA: %w", err)
	}
	return f, nil
}

// printDevTLS tells a newcomer where the CA is and how clients use it.
func printDevTLS(w io.Writer, f tlsconf.Files, addr string) {
	fmt.Fprintf(w, `
TLS is on (--tls): every listener speaks TLS with a throwaway CA and certificate for 127.0.0.1/localhost:
  CA           %s
  certificate  %s (key %s)
Clients verify the master with the CA:
  export %s=%s          # the CLI, allot run and the framework library read it
  allot status --master %s --tls-ca %s
  curl --cacert %s https://%s/state
A client without the CA is told the master speaks TLS (curl http://%s/state shows the raw refusal).
`, f.CA, f.Cert, f.Key, tlsconf.EnvCA, f.CA, addr, f.CA, f.CA, addr, addr)
}
