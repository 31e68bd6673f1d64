package healthcheck

import (
	"errors"
	"fmt"
	"math"
	"strings"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// Validate reports what is wrong with hc, or nil (also for a nil hc: no
// check is valid). The rules are Mesos's (common/validation.cpp
// validateHealthCheck) with three additions that Mesos leaves to fail at
// run time: HTTP and TCP checks need a port (the proto field is required,
// but a client that never set it sends 0), HTTP statuses must be HTTP
// status codes, and only the field of the check's type may be set (the
// proto says "specifying more than one type is an error").
func Validate(hc *mesos.HealthCheck) error {
	if hc == nil {
		return nil
	}
	if err := validateType(hc); err != nil {
		return err
	}
	for _, d := range []struct {
		name string
		v    *float64
	}{
		{"delay_seconds", hc.DelaySeconds}, {"interval_seconds", hc.IntervalSeconds},
		{"timeout_seconds", hc.TimeoutSeconds}, {"grace_period_seconds", hc.GracePeriodSeconds},
	} {
		if d.v != nil && (*d.v < 0 || math.IsNaN(*d.v) || math.IsInf(*d.v, 0)) {
			return fmt.Errorf("expecting '%s' to be a non-negative number of seconds, got %v", d.name, *d.v)
		}
	}
	return nil
}

func validateType(hc *mesos.HealthCheck) error {
	set := []bool{mesos.HealthCheck_COMMAND: hc.Command != nil, mesos.HealthCheck_HTTP: hc.HTTP != nil, mesos.HealthCheck_TCP: hc.TCP != nil}
	switch hc.Type {
	case mesos.HealthCheck_COMMAND, mesos.HealthCheck_HTTP, mesos.HealthCheck_TCP:
	case mesos.HealthCheck_UNKNOWN:
		return errors.New("health check must specify 'type' (COMMAND, HTTP or TCP)")
	default:
		return fmt.Errorf("'%s' is not a valid health check type", hc.Type)
	}
	field := strings.ToLower(hc.Type.String())
	if !set[hc.Type] {
		return fmt.Errorf("expecting '%s' to be set for %s health check", field, hc.Type)
	}
	for t, ok := range set {
		if ok && mesos.HealthCheck_Type(t) != hc.Type {
			return fmt.Errorf("%s health check must not also set '%s'", hc.Type, strings.ToLower(mesos.HealthCheck_Type(t).String()))
		}
	}
	switch hc.Type {
	case mesos.HealthCheck_COMMAND:
		if hc.Command.GetValue() == "" {
			what := "'shell command'"
			if !hc.Command.GetShell() {
				what = "'executable path'"
			}
			return errors.New("command health check must contain " + what)
		}
	case mesos.HealthCheck_HTTP:
		return validateHTTP(hc.HTTP)
	case mesos.HealthCheck_TCP:
		if hc.TCP.Port == 0 {
			return errors.New("TCP health check must set 'port'")
		}
	}
	return nil
}

func validateHTTP(h *mesos.HealthCheck_HTTPCheckInfo) error {
	if h.Port == 0 {
		return errors.New("HTTP health check must set 'port'")
	}
	if s := h.GetScheme(); h.Scheme != nil && s != "http" && s != "https" {
		return fmt.Errorf("unsupported HTTP health check scheme: '%s'", s)
	}
	if p := h.GetPath(); h.Path != nil && !strings.HasPrefix(p, "/") {
		return fmt.Errorf("the path '%s' of HTTP health check must start with '/'", p)
	}
	for _, s := range h.Statuses {
		if s < 100 || s > 599 {
			return fmt.Errorf("HTTP health check status %d is not an HTTP status code (100-599)", s)
		}
	}
	return nil
}

// Describe names hc for messages: "COMMAND health check `test -f ok`",
// "HTTP health check GET http://127.0.0.1:8080/health", "TCP health check
// 127.0.0.1:8080".
func Describe(hc *mesos.HealthCheck) string {
	switch {
	case hc == nil:
		return "no health check"
	case hc.Type == mesos.HealthCheck_COMMAND && hc.Command != nil:
		cmd := hc.Command.GetValue()
		if !hc.Command.GetShell() && len(hc.Command.Arguments) > 0 {
			cmd = strings.Join(hc.Command.Arguments, " ")
		}
		return "COMMAND health check `" + cmd + "`"
	case hc.Type == mesos.HealthCheck_HTTP && hc.HTTP != nil:
		return "HTTP health check GET " + URL(hc.HTTP)
	case hc.Type == mesos.HealthCheck_TCP && hc.TCP != nil:
		return "TCP health check " + Addr(hc.TCP.GetProtocol(), hc.TCP.Port)
	}
	return hc.Type.String() + " health check"
}

// URL is where an HTTP check sends its GET: the task's own host,
// 127.0.0.1 (or ::1 for IPv6), as Mesos resolves it.
func URL(h *mesos.HealthCheck_HTTPCheckInfo) string {
	scheme := h.GetScheme()
	if scheme == "" {
		scheme = "http"
	}
	path := h.GetPath()
	if path == "" {
		path = "/"
	}
	return scheme + "://" + Addr(h.GetProtocol(), h.Port) + path
}

// Addr is the loopback address of port for the protocol.
func Addr(p mesos.NetworkInfo_Protocol, port uint32) string {
	if p == mesos.IPv6 {
		return fmt.Sprintf("[::1]:%d", port)
	}
	return fmt.Sprintf("127.0.0.1:%d", port)
}
