package auth

import (
	"strings"
	"testing"
	"unicode"
)

// FuzzParseCredentials feeds the credentials parser (both forms) and the
// agent's single-credential parser arbitrary bytes. It asserts no panic,
// that an accepted file has no empty principal or secret, and that every
// accepted principal verifies with its own secret after a round trip
// through the text form.
func FuzzParseCredentials(f *testing.F) {
	for _, tt := range credentialsCases {
		f.Add([]byte(tt.in))
	}
	f.Add([]byte(`{"principal":"agent","secret":"s"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ParseCredential(data)
		c, err := ParseCredentials(data)
		if err != nil {
			return
		}
		var text []byte
		oneWord := true
		for p, s := range c.secrets {
			if strings.IndexFunc(p+s, unicode.IsSpace) >= 0 {
				oneWord = false
			}
			if p == "" || s == "" {
				t.Fatalf("accepted an empty principal or secret: %q %q", p, s)
			}
			if !c.Verify(p, s) {
				t.Fatalf("principal %q does not verify with its own secret", p)
			}
			text = append(text, p+" "+s+"\n"...)
		}
		// A secret with white space cannot be written in the text form;
		// only check the round trip when every field is one word.
		if !oneWord {
			return
		}
		again, err := ParseCredentials(text)
		if err != nil {
			t.Fatalf("the text form of accepted credentials does not parse: %v\n%s", err, text)
		}
		for p, s := range c.secrets {
			if !again.Verify(p, s) {
				t.Fatalf("principal %q lost in the text round trip", p)
			}
		}
	})
}
