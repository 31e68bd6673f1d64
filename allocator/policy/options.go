package policy

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Options are the policies' options, each "policy.key=value" (the
// master's repeatable --policy-opt). Set parses one; For hands a policy
// its own, which the policy reads with Values and then checks with
// Values.Unknown, so a key no policy reads is an error that names it.
// The zero Options is empty and ready to use; a later setting of the same
// key replaces the earlier one.
type Options struct {
	kv map[string]map[string]string // policy -> key -> value
}

// Set adds one "policy.key=value" setting (flag.Value).
func (o *Options) Set(s string) error {
	name, value, ok := strings.Cut(s, "=")
	pol, key, dotted := strings.Cut(name, ".")
	if !ok || !dotted || pol == "" || key == "" {
		return fmt.Errorf("policy option %q: want policy.key=value, e.g. bandit.step=0.1", s)
	}
	if o.kv == nil {
		o.kv = map[string]map[string]string{}
	}
	if o.kv[pol] == nil {
		o.kv[pol] = map[string]string{}
	}
	o.kv[pol][key] = value
	return nil
}

// String lists the settings, sorted (flag.Value).
func (o *Options) String() string {
	if o == nil {
		return ""
	}
	var out []string
	for pol, kv := range o.kv {
		for k, v := range kv {
			out = append(out, pol+"."+k+"="+v)
		}
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// CheckPolicies reports a setting for a policy not among known.
func (o *Options) CheckPolicies(known ...string) error {
	for pol := range o.kv {
		if !contains(known, pol) {
			return fmt.Errorf("policy option for unknown policy %q (known: %s)", pol, strings.Join(known, ", "))
		}
	}
	return nil
}

// For is policy's settings.
func (o *Options) For(policy string) *Values {
	v := &Values{policy: policy, kv: map[string]string{}}
	if o != nil {
		for k, x := range o.kv[policy] {
			v.kv[k] = x
		}
	}
	return v
}

// Values are one policy's settings as its parser reads them: each getter
// returns the setting of key, or def when it is not set, and remembers
// the key as known.
type Values struct {
	policy string
	kv     map[string]string
	known  []string
}

func (v *Values) get(key string) (string, bool) {
	v.known = append(v.known, key)
	s, ok := v.kv[key]
	return s, ok
}

func (v *Values) bad(key, s, want string) error {
	return fmt.Errorf("policy option %s.%s=%s: want %s", v.policy, key, s, want)
}

// Float is key as a number.
func (v *Values) Float(key string, def float64) (float64, error) {
	return parse(v, key, def, func(s string) (float64, error) { return strconv.ParseFloat(s, 64) }, "a number")
}

// Int is key as an integer.
func (v *Values) Int(key string, def int) (int, error) {
	return parse(v, key, def, strconv.Atoi, "an integer")
}

// Duration is key as a duration (time.ParseDuration).
func (v *Values) Duration(key string, def time.Duration) (time.Duration, error) {
	return parse(v, key, def, time.ParseDuration, "a duration such as 10m")
}

// parse is key converted by conv, def when it is not set; a value conv
// refuses is an error saying what was wanted.
func parse[T any](v *Values, key string, def T, conv func(string) (T, error), want string) (T, error) {
	s, ok := v.get(key)
	if !ok {
		return def, nil
	}
	x, err := conv(s)
	if err != nil {
		return def, v.bad(key, s, want)
	}
	return x, nil
}

// Text is key as given.
func (v *Values) Text(key, def string) string {
	if s, ok := v.get(key); ok {
		return s
	}
	return def
}

// Unknown reports a setting of a key no getter asked for, naming it and
// the keys the policy knows.
func (v *Values) Unknown() error {
	keys := make([]string, 0, len(v.kv))
	for k := range v.kv {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !contains(v.known, k) {
			return fmt.Errorf("policy option %s.%s: unknown option of policy %s (known: %s)", v.policy, k, v.policy, strings.Join(v.known, ", "))
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
