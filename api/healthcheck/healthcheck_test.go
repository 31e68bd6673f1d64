package healthcheck

import (
	"math"
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

func f64(v float64) *float64 { return &v }
func str(s string) *string   { return &s }

func TestValidate(t *testing.T) {
	cmd := &mesos.CommandInfo{Value: str("true")}
	for _, c := range []struct {
		name string
		hc   *mesos.HealthCheck
		want string // "" = valid; else a substring of the error
	}{
		{"none", nil, ""},
		{"command", &mesos.HealthCheck{Type: mesos.HealthCheck_COMMAND, Command: cmd}, ""},
		{"http", &mesos.HealthCheck{Type: mesos.HealthCheck_HTTP, HTTP: &mesos.HealthCheck_HTTPCheckInfo{Port: 80, Path: str("/ok"), Statuses: []uint32{200, 204}}}, ""},
		{"https", &mesos.HealthCheck{Type: mesos.HealthCheck_HTTP, HTTP: &mesos.HealthCheck_HTTPCheckInfo{Port: 443, Scheme: str("https")}}, ""},
		{"tcp", &mesos.HealthCheck{Type: mesos.HealthCheck_TCP, TCP: &mesos.HealthCheck_TCPCheckInfo{Port: 22}}, ""},
		{"zero durations", &mesos.HealthCheck{Type: mesos.HealthCheck_COMMAND, Command: cmd, DelaySeconds: f64(0), TimeoutSeconds: f64(0), GracePeriodSeconds: f64(0)}, ""},
		{"no type", &mesos.HealthCheck{Command: cmd}, "must specify 'type'"},
		{"unknown type", &mesos.HealthCheck{Type: 7, Command: cmd}, "'7' is not a valid health check type"},
		{"command missing", &mesos.HealthCheck{Type: mesos.HealthCheck_COMMAND}, "expecting 'command' to be set"},
		{"command empty", &mesos.HealthCheck{Type: mesos.HealthCheck_COMMAND, Command: &mesos.CommandInfo{}}, "must contain 'shell command'"},
		{"argv empty", &mesos.HealthCheck{Type: mesos.HealthCheck_COMMAND, Command: &mesos.CommandInfo{Shell: new(bool)}}, "must contain 'executable path'"},
		{"http missing", &mesos.HealthCheck{Type: mesos.HealthCheck_HTTP}, "expecting 'http' to be set"},
		{"http no port", &mesos.HealthCheck{Type: mesos.HealthCheck_HTTP, HTTP: &mesos.HealthCheck_HTTPCheckInfo{Path: str("/")}}, "HTTP health check must set 'port'"},
		{"http scheme", &mesos.HealthCheck{Type: mesos.HealthCheck_HTTP, HTTP: &mesos.HealthCheck_HTTPCheckInfo{Port: 80, Scheme: str("ftp")}}, "unsupported HTTP health check scheme: 'ftp'"},
		{"http path", &mesos.HealthCheck{Type: mesos.HealthCheck_HTTP, HTTP: &mesos.HealthCheck_HTTPCheckInfo{Port: 80, Path: str("ok")}}, "must start with '/'"},
		{"http status", &mesos.HealthCheck{Type: mesos.HealthCheck_HTTP, HTTP: &mesos.HealthCheck_HTTPCheckInfo{Port: 80, Statuses: []uint32{200, 42}}}, "status 42"},
		{"tcp missing", &mesos.HealthCheck{Type: mesos.HealthCheck_TCP}, "expecting 'tcp' to be set"},
		{"tcp no port", &mesos.HealthCheck{Type: mesos.HealthCheck_TCP, TCP: &mesos.HealthCheck_TCPCheckInfo{}}, "TCP health check must set 'port'"},
		{"two types", &mesos.HealthCheck{Type: mesos.HealthCheck_TCP, TCP: &mesos.HealthCheck_TCPCheckInfo{Port: 1}, Command: cmd}, "must not also set 'command'"},
		{"negative delay", &mesos.HealthCheck{Type: mesos.HealthCheck_COMMAND, Command: cmd, DelaySeconds: f64(-1)}, "'delay_seconds' to be a non-negative"},
		{"negative interval", &mesos.HealthCheck{Type: mesos.HealthCheck_COMMAND, Command: cmd, IntervalSeconds: f64(-0.5)}, "'interval_seconds'"},
		{"nan timeout", &mesos.HealthCheck{Type: mesos.HealthCheck_COMMAND, Command: cmd, TimeoutSeconds: f64(math.NaN())}, "'timeout_seconds'"},
		{"negative grace", &mesos.HealthCheck{Type: mesos.HealthCheck_COMMAND, Command: cmd, GracePeriodSeconds: f64(-3)}, "'grace_period_seconds'"},
	} {
		err := Validate(c.hc)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: Validate = %v, want valid", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: Validate = %v, want an error containing %q", c.name, err, c.want)
		}
	}
}

func TestDescribe(t *testing.T) {
	v6 := mesos.IPv6
	for _, c := range []struct {
		hc   *mesos.HealthCheck
		want string
	}{
		{&mesos.HealthCheck{Type: mesos.HealthCheck_COMMAND, Command: &mesos.CommandInfo{Value: str("test -f ok")}}, "COMMAND health check `test -f ok`"},
		{&mesos.HealthCheck{Type: mesos.HealthCheck_COMMAND, Command: &mesos.CommandInfo{Value: str("/bin/test"), Shell: new(bool), Arguments: []string{"test", "-f", "ok"}}}, "COMMAND health check `test -f ok`"},
		{&mesos.HealthCheck{Type: mesos.HealthCheck_HTTP, HTTP: &mesos.HealthCheck_HTTPCheckInfo{Port: 8080}}, "HTTP health check GET http://127.0.0.1:8080/"},
		{&mesos.HealthCheck{Type: mesos.HealthCheck_HTTP, HTTP: &mesos.HealthCheck_HTTPCheckInfo{Port: 8443, Scheme: str("https"), Path: str("/h"), Protocol: &v6}}, "HTTP health check GET https://[::1]:8443/h"},
		{&mesos.HealthCheck{Type: mesos.HealthCheck_TCP, TCP: &mesos.HealthCheck_TCPCheckInfo{Port: 22}}, "TCP health check 127.0.0.1:22"},
	} {
		if got := Describe(c.hc); got != c.want {
			t.Errorf("Describe = %q, want %q", got, c.want)
		}
	}
}
