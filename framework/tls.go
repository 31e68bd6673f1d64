package framework

import (
	"net/http"

	"github.com/allot-sched/allot/internal/tlsconf"
)

// loadMasterTLS loads Config.TLSCA (or $ALLOT_TLS_CA) for the driver's
// calls to the masters: the scheduler subscription (sched.Config.TLS) and
// the operator API questions of masterGet. The driver's own traffic with
// its executors stays plain HTTP; it never crosses to the master.
func (c *Context) loadMasterTLS() error {
	tc, err := tlsconf.ClientFor(c.cfg.TLSCA)
	if err != nil {
		return err
	}
	c.masterTLS = tc
	if t, ok := c.http.Transport.(*http.Transport); ok && tc != nil {
		t.TLSClientConfig = tc // used only for https URLs, which only masters have
	}
	return nil
}
