package policy

import (
	"strings"
	"testing"
	"time"
)

func TestOptions(t *testing.T) {
	var o Options
	for _, s := range []string{"p.n=3", "p.x=0.5", "p.d=2m", "p.s=row", "p.n=4", "q.k=v"} {
		if err := o.Set(s); err != nil {
			t.Fatal(err)
		}
	}
	if got := o.String(); got != "p.d=2m,p.n=4,p.s=row,p.x=0.5,q.k=v" {
		t.Errorf("String() = %q", got)
	}
	v := o.For("p")
	n, err1 := v.Int("n", 1)
	x, err2 := v.Float("x", 1)
	d, err3 := v.Duration("d", time.Second)
	s := v.Text("s", "")
	def := v.Text("unset", "default")
	if err1 != nil || err2 != nil || err3 != nil || n != 4 || x != 0.5 || d != 2*time.Minute || s != "row" || def != "default" {
		t.Errorf("got %v %v %v %q %q, errors %v %v %v", n, x, d, s, def, err1, err2, err3)
	}
	if err := v.Unknown(); err != nil {
		t.Errorf("every key read: %v", err)
	}
	if err := o.CheckPolicies("p"); err == nil || !strings.Contains(err.Error(), `unknown policy "q"`) {
		t.Errorf("CheckPolicies: %v", err)
	}
	w := o.For("p")
	_, _ = w.Int("n", 0)
	if err := w.Unknown(); err == nil || !strings.Contains(err.Error(), "p.d: unknown option of policy p (known: n)") {
		t.Errorf("Unknown: %v", err)
	}
	for _, bad := range []string{"nodot=1", "p.k", ".k=1", "p.=1"} {
		if err := o.Set(bad); err == nil {
			t.Errorf("Set(%q) succeeded", bad)
		}
	}
	if _, err := o.For("p").Int("s", 0); err == nil || !strings.Contains(err.Error(), "p.s=row: want an integer") {
		t.Errorf("Int of a word: %v", err)
	}
}
