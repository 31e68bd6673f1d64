package main

import (
	"fmt"
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
