package auth

import "testing"

// FuzzParseACLs feeds the --acls parser arbitrary bytes: it must not panic,
// and ACLs it accepts must survive a write and re-read unchanged (so what
// the master enforces is what the file said), and answer Authorize.
func FuzzParseACLs(f *testing.F) {
	f.Add([]byte(exampleACLs))
	f.Add([]byte(`{"permissive": true}`))
	f.Add([]byte(`{"run_tasks": [{"principals": {"type": "NONE"}, "users": {"values": ["root"]}}]}`))
	f.Add([]byte(`{"manage_raft": [{"principals": {"values": ["ops"]}}]}`))
	f.Add([]byte(`{"update_sorter": [{"principals": {"type": "ANY", "values": ["a"]}}]}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := ParseACLs(b)
		if err != nil {
			return
		}
		out, err := a.MarshalJSON()
		if err != nil {
			t.Fatalf("MarshalJSON: %v", err)
		}
		back, err := ParseACLs(out)
		if err != nil {
			t.Fatalf("re-parse of %s: %v", out, err)
		}
		out2, _ := back.MarshalJSON()
		if string(out) != string(out2) {
			t.Fatalf("round trip changed the ACLs:\n%s\n%s", out, out2)
		}
		for act := range objectKeys {
			a.Authorize(Subject{Principal: "p", Authenticated: true}, act, "o")
			a.Authorize(Subject{}, act, "")
		}
	})
}
