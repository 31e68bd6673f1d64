package sched

import (
	"crypto/tls"
	"time"

	"github.com/mesos/mesos-go/api/v1/lib/encoding/codecs"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli/httpsched"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/allot-sched/allot/auth"
)

// setCredential names the framework's principal after its credential when
// the FrameworkInfo does not: a master with --authenticate-frameworks
// would fill it in anyway, and an explicit different one is refused.
func (c *Config) setCredential() {
	if c.Credential == nil || c.Framework.GetPrincipal() != "" {
		return
	}
	p := c.Credential.Principal
	c.Framework.Principal = &p
}

// credentialCaller is HTTPCaller presenting cred as HTTP Basic through
// mesos-go's own httpcli.BasicAuth, exactly as an unmodified mesos-go
// framework would.
func credentialCaller(cred auth.Credential, tlsCfg *tls.Config) func(endpoint string) calls.Caller {
	opts := []httpcli.ConfigOpt{httpcli.BasicAuth(cred.Principal, cred.Secret)}
	if tlsCfg != nil {
		opts = append(opts, httpcli.TLSConfig(tlsCfg))
	}
	return func(endpoint string) calls.Caller {
		return HTTPCallerWith(endpoint, opts...)
	}
}

// HTTPCallerWith is HTTPCaller with more mesos-go client options (a
// credential, a transport).
func HTTPCallerWith(endpoint string, opts ...httpcli.ConfigOpt) calls.Caller {
	return httpsched.NewCaller(httpcli.New(
		httpcli.Endpoint(endpoint),
		httpcli.Codec(codecs.ByMediaType[codecs.MediaTypeProtobuf]),
		httpcli.Do(httpcli.With(append([]httpcli.ConfigOpt{httpcli.Timeout(10 * time.Second)}, opts...)...))), httpsched.MaxRedirects(1))
}
