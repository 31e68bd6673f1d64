package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/allot-sched/allot/internal/tlsconf"
	"github.com/allot-sched/allot/master"
)

// printDevBanner tells the user where the cluster is and how to use it.
// With --auth or --tls every command it prints works as printed once the
// shell has the exports it prints first: the CLI, allot run and the
// examples read the same ALLOT_* variables.
func printDevBanner(stdout io.Writer, f *devFlags, da devAuth, cfg master.Config, addr, dir string) {
	scheme := tlsconf.Scheme(cfg.TLS.Enabled())
	fmt.Fprintf(stdout, "allot dev: master on %s://%s with %d agents (%s each); work dirs in %s\n\n", scheme, addr, f.agents, f.resources, dir)
	fmt.Fprintf(stdout, "Open %s://%s in a browser: the cluster, agents, frameworks, tasks with their logs, the allocator.\n", scheme, addr)
	var exports []string
	curl := "curl -s "
	if f.tls {
		exports = append(exports, tlsconf.EnvCA+"="+cfg.TLS.CA)
		curl += "--cacert " + cfg.TLS.CA + " "
		fmt.Fprintf(stdout, "\nTLS is on (--tls): every listener speaks TLS with a throwaway CA and certificate for 127.0.0.1/localhost\n(CA %s, certificate %s, key %s).\n", cfg.TLS.CA, cfg.TLS.Cert, cfg.TLS.Key)
	}
	if f.auth {
		exports = append(exports, "ALLOT_PRINCIPAL="+da.opCred.Principal, "ALLOT_SECRET_FILE="+filepath.Join(dir, "auth", "secret"))
		curl += "-u " + da.opCred.Principal + ":" + da.opCred.Secret + " "
		fmt.Fprintf(stdout, "\nAuthentication is on (--auth: every --authenticate-* flag, credentials in %s).\nLog in to the UI as principal %q with secret %q.\n",
			filepath.Join(dir, "auth", "credentials.json"), da.opCred.Principal, da.opCred.Secret)
	}
	if len(exports) > 0 {
		fmt.Fprintf(stdout, "\nFirst, in the shell you try it from (the CLI, allot run and the examples read these):\n  export %s\n", strings.Join(exports, " "))
	}
	fmt.Fprintf(stdout, `
Try:
  allot run --master %[1]s -- echo hello from allot     # a one-off task; exits with its exit code
  allot status --master %[1]s                           # the operator CLI: also agents, tasks, logs TASK -f
  %[2]s%[3]s://%[1]s/state                             # Mesos-shaped state
  %[2]s%[3]s://%[1]s/metrics | grep '^allot_'          # Prometheus metrics
`, addr, curl, scheme)
	if !f.tls && !f.auth {
		// msh (mesos-go's shell) knows neither a CA nor a credential.
		fmt.Fprintf(stdout, "  go run github.com/mesos/mesos-go/api/v1/cmd/msh -master %s -- echo hi   # from this checkout\n", addr)
	}
	fmt.Fprintf(stdout, "Any mesos-go v0.0.11 framework can use %s://%s/api/v1/scheduler.\nCtrl-C stops everything.\n", scheme, addr)
}
