package agent

import (
	"context"
	"net"
	"net/http"

	"github.com/allot-sched/allot/agent/cni"
	"github.com/allot-sched/allot/agent/nslaunch"
)

// specNetNS is the network namespace of a task's container Spec, "" for
// the host's (no Spec, or none asked).
func specNetNS(s *nslaunch.Spec) string {
	if s == nil {
		return ""
	}
	return s.NetNS
}

// proberInNetNS makes p's HTTP and TCP checks connect from inside the
// network namespace netns, as Mesos's checker enters the task's: from the
// host, the task's port is not at 127.0.0.1. COMMAND checks are left as
// they are. netns "" keeps p.
func proberInNetNS(p prober, netns string) prober {
	if netns == "" {
		return p
	}
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		var c net.Conn
		err := cni.InNetNS(netns, func() (err error) {
			var d net.Dialer
			c, err = d.DialContext(ctx, network, addr)
			return err
		})
		return c, err
	}
	switch p := p.(type) {
	case httpProbe:
		if tr, ok := p.client.Transport.(*http.Transport); ok {
			tr.DialContext = dial
		}
		return p
	case tcpProbe:
		return tcpProbe{addr: p.addr, dial: dial}
	}
	return p
}
