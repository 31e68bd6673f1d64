package resources

import "testing"

func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"",
		"{}",
		"cpus:24;mem:4096;disk:4096;ports:[31000-32000]",
		"cpus:0.1;cpus:0.2;foo:2;bar:0",
		"gpus:1;disk_bw:100.5;net_bw:1e3",
		"ports:[1-2,3-4];ports:80",
		"ports:[0-18446744073709551615]",
		"cpus:-1",
		"cpus:NaN",
		"cpus(role):2",
		"foo:[1-2]",
		":5",
		"cpus",
		"cpus:9223372036",
		"cpus:0x1p-3;mem:+5",
		" my res : 1 ;",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := Parse(s)
		if err != nil {
			return
		}
		checkResources(t, "Parse", r)
		text := r.String()
		back, err := Parse(text)
		if err != nil {
			t.Fatalf("Parse(%q) = %v, but Parse of its String %q failed: %v", s, r, text, err)
		}
		if !back.Equal(r) {
			t.Fatalf("Parse(%q) = %v, but Parse(%q) = %v", s, r, text, back)
		}
		if again := back.String(); again != text {
			t.Fatalf("String not stable: %q then %q", text, again)
		}
	})
}
