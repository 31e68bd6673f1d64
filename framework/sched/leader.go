package sched

import (
	"context"
	"crypto/tls"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mesos/mesos-go/api/v1/lib/encoding/codecs"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli/httpsched"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/allot-sched/allot/internal/tlsconf"
)

// HTTPCaller is the default Caller: mesos-go's httpsched over protobuf,
// which keeps the Mesos-Stream-Id of the subscription. It follows at most
// one redirect: after a failover httpsched would otherwise retry a dead
// leader with growing backoff, where asking another master is faster.
func HTTPCaller(endpoint string) calls.Caller { return HTTPCallerTLS(nil)(endpoint) }

// HTTPCallerTLS is HTTPCaller verifying the master with cfg (nil: the
// transport's defaults, for plain HTTP).
func HTTPCallerTLS(cfg *tls.Config) func(endpoint string) calls.Caller {
	return func(endpoint string) calls.Caller {
		return httpsched.NewCaller(httpcli.New(
			httpcli.Endpoint(endpoint),
			httpcli.Codec(codecs.ByMediaType[codecs.MediaTypeProtobuf]),
			httpcli.Do(httpcli.With(httpcli.Timeout(10*time.Second), httpcli.TLSConfig(cfg)))), httpsched.MaxRedirects(1))
	}
}

// noFollow is an HTTP client that reports redirects instead of following
// them: /redirect answers 307 with the leader in Location.
var noFollow = &http.Client{
	Timeout:       2 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// AskLeader asks master's /redirect which master leads and returns its
// host:port, or master itself when it cannot tell (an unreachable master,
// or one that does not answer /redirect as allot and Mesos do).
func AskLeader(ctx context.Context, master string) string {
	return askLeader(ctx, noFollow, false, master)
}

// AskLeaderTLS is AskLeader over https verified with cfg (nil: AskLeader).
func AskLeaderTLS(cfg *tls.Config) func(ctx context.Context, master string) string {
	if cfg == nil {
		return AskLeader
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = cfg
	cli := &http.Client{Timeout: noFollow.Timeout, CheckRedirect: noFollow.CheckRedirect, Transport: t}
	return func(ctx context.Context, master string) string { return askLeader(ctx, cli, true, master) }
}

func askLeader(ctx context.Context, cli *http.Client, secure bool, master string) string {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, tlsconf.URL(secure, master, "/redirect"), nil)
	if err != nil {
		return master
	}
	resp, err := cli.Do(req)
	if err != nil {
		return master
	}
	defer resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusTemporaryRedirect || loc == "" {
		return master
	}
	if u, err := url.Parse(loc); err == nil && u.Host != "" {
		// "//host:port/..." and "http://host:port/..." alike; a master
		// named with its scheme ("https://m:5050": the system's CAs) keeps
		// it, so the leader is spoken to as the master was.
		if i := strings.Index(master, "://"); i > 0 {
			return master[:i+3] + u.Host
		}
		return u.Host
	}
	return master
}
