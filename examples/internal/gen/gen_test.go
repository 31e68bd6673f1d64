package gen

import (
	"strings"
	"testing"
)

// SplitWords must split exactly as strings.Fields does (the reference
// count uses it), including Unicode spaces and invalid UTF-8.
func TestSplitWordsMatchesFields(t *testing.T) {
	for _, line := range []string{
		"", " ", "a", " a  b\tc\r", "\vx\fy\n", "w1 w2 w3 ", "caf\u00e9\u00a0bar\u2003baz", "\x85a b", "a\xffb c", "\u3000x",
	} {
		var got []string
		SplitWords([]byte(line), func(w []byte) { got = append(got, string(w)) })
		want := strings.Fields(line)
		if strings.Join(got, "|") != strings.Join(want, "|") || len(got) != len(want) {
			t.Errorf("SplitWords(%q) = %q, strings.Fields = %q", line, got, want)
		}
	}
}

func TestCountWordsBytesMatchesCountWords(t *testing.T) {
	in := t.TempDir() + "/words.txt"
	if err := WriteText(in, 1<<20, 3); err != nil {
		t.Fatal(err)
	}
	a, err := CountWords(in, 3)
	if err != nil {
		t.Fatal(err)
	}
	b, err := CountWordsBytes(in, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(a) == 0 || len(a) != len(b) {
		t.Fatalf("%d words vs %d", len(a), len(b))
	}
	for w, n := range a {
		if b[w] != n {
			t.Fatalf("%q: %d vs %d", w, b[w], n)
		}
	}
}
