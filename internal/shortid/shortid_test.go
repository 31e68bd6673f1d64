package shortid

import (
	"strings"
	"testing"
)

const master = "0c3f6a9e-5b1d-4c7e-9a2f-3d8e1b6c4a70"

func TestShort(t *testing.T) {
	fws := []string{master + "-0001", master + "-0002", master + "-0011"}
	agents := []string{master + "-S1", master + "-S11", "other-id-1111-S1"}
	cases := []struct {
		id   string
		all  []string
		want string
	}{
		{fws[0], fws, "a70-0001"},
		{fws[2], fws, "a70-0011"},
		{agents[1], agents, "4a70-S11"},
		// Two masters' agents: the 8-character ends clash, one more tells them apart.
		{agents[0], []string{agents[0], "xxxc4a70-S1"}, "6c4a70-S1"},
		{"web-1", fws, "web-1"},
		{"exactly8", nil, "exactly8"},
		{"sixteen-chars-id", []string{"sixteen-chars-id", "xsixteen-chars-id"}, "sixteen-chars-id"},
		{"seventeen-chars-id", []string{"seventeen-chars-id", "x-chars-id"}, "n-chars-id"},
		// An id that is the end of another has no unique suffix: whole.
		{master, []string{master, "x-" + master}, master},
	}
	for _, c := range cases {
		if got := Short(c.id, c.all); got != c.want {
			t.Errorf("Short(%q) = %q, want %q", c.id, got, c.want)
		}
	}
}

func TestResolve(t *testing.T) {
	known := []string{master + "-0001", master + "-0002", master + "-0011", "web-1", "web-10"}
	cases := []struct{ in, want, err string }{
		{master + "-0002", master + "-0002", ""},
		{"a70-0001", master + "-0001", ""}, // the short form
		{"0011", master + "-0011", ""},     // any unique suffix
		{"001", master + "-0001", ""},      // the end of -0001 only
		{"web-1", "web-1", ""},             // exact, though a prefix of web-10
		{"0c3f6a9e", "", "ambiguous"},      // the prefix all share
		{"1", "", "ambiguous"},             // the end of -0001, -0011 and web-1
		{"web-", "", "ambiguous"},
		{"nothing", "", ""},
		{"", "", "empty"},
	}
	for _, c := range cases {
		got, ok, err := Resolve("framework", c.in, known)
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("Resolve(%q) = %q, %v, error %v; want an error saying %q", c.in, got, ok, err, c.err)
			}
		case c.want == "":
			if ok || err != nil {
				t.Errorf("Resolve(%q) = %q, %v, %v; want no match", c.in, got, ok, err)
			}
		case !ok || err != nil || got != c.want:
			t.Errorf("Resolve(%q) = %q, %v, %v; want %q", c.in, got, ok, err, c.want)
		}
	}
}
