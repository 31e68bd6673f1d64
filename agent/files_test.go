package agent

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// startFilesAgent starts an agent whose work dir holds one finished
// executor run (framework f, executor e, run c1) with a stdout, a nested
// directory, a symlink inside the sandbox and one that leads out of it.
func startFilesAgent(t *testing.T) (*Agent, string) {
	t.Helper()
	work := t.TempDir()
	run := filepath.Join(work, "slaves", "S1", "frameworks", "f", "executors", "e", "runs", "c1")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(run, "out"), 0o755))
	must(os.WriteFile(filepath.Join(run, "stdout"), []byte("hello\nworld\n"), 0o644))
	must(os.WriteFile(filepath.Join(run, "out", "part-0"), []byte("x"), 0o644))
	must(os.Symlink(filepath.Join(run, "stdout"), filepath.Join(run, "inner")))
	secret := filepath.Join(t.TempDir(), "secret")
	must(os.WriteFile(secret, []byte("not yours"), 0o644))
	must(os.Symlink(secret, filepath.Join(run, "escape")))
	a, err := New(Config{Masters: []string{"127.0.0.1:1"}, Listen: "127.0.0.1:0", WorkDir: work,
		Resources: "cpus:1;mem:128;disk:100", Log: zerolog.Nop()})
	must(err)
	must(a.Start())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		a.Stop(ctx)
	})
	return a, run
}

func getFiles(t *testing.T, a *Agent, endpoint string, q url.Values) (int, string) {
	t.Helper()
	resp, err := http.Get("http://" + a.Addr() + endpoint + "?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// The /files endpoints serve what is inside a sandbox, Mesos-shaped, and
// refuse with 403 whatever resolves outside it.
func TestFilesEndpoints(t *testing.T) {
	a, run := startFilesAgent(t)
	latest := "/frameworks/f/executors/e/runs/latest"
	tests := []struct {
		name, endpoint string
		q              url.Values
		code           int
		want           string
	}{
		{"read from start", "/files/read", url.Values{"path": {latest + "/stdout"}, "offset": {"0"}}, 200, `"data":"hello\nworld\n","offset":0`},
		{"read a window", "/files/read", url.Values{"path": {latest + "/stdout"}, "offset": {"6"}, "length": {"3"}}, 200, `"data":"wor","offset":6`},
		{"size without offset", "/files/read", url.Values{"path": {latest + "/stdout"}}, 200, `"data":"","offset":12`},
		{"past the end", "/files/read", url.Values{"path": {latest + "/stdout"}, "offset": {"99"}}, 200, `"data":"","offset":99`},
		{"absolute sandbox path", "/files/read", url.Values{"path": {run + "/stdout"}, "offset": {"0"}}, 200, `"data":"hello`},
		{"named run", "/files/read", url.Values{"path": {"/frameworks/f/executors/e/runs/c1/out/part-0"}, "offset": {"0"}}, 200, `"data":"x"`},
		{"symlink inside", "/files/read", url.Values{"path": {latest + "/inner"}, "offset": {"0"}}, 200, `"data":"hello`},
		{"browse", "/files/browse", url.Values{"path": {latest}}, 200, `"path":"` + latest + `/out"`},
		{"download", "/files/download", url.Values{"path": {latest + "/stdout"}}, 200, "hello\nworld\n"},
		{"dotdot", "/files/read", url.Values{"path": {latest + "/../../../../../../../etc/passwd"}}, 403, "leaves the sandbox"},
		{"symlink out", "/files/read", url.Values{"path": {latest + "/escape"}, "offset": {"0"}}, 403, "outside the sandbox"},
		{"symlink out download", "/files/download", url.Values{"path": {latest + "/escape"}}, 403, "outside the sandbox"},
		{"not a sandbox", "/files/browse", url.Values{"path": {"/etc"}}, 403, "not inside an executor's sandbox"},
		{"work dir itself", "/files/browse", url.Values{"path": {filepath.Join(run, "..", "..")}}, 403, "not inside"},
		{"no path", "/files/read", url.Values{}, 400, "missing the path"},
		{"bad offset", "/files/read", url.Values{"path": {latest + "/stdout"}, "offset": {"x"}}, 400, "offset \"x\""},
		{"unknown executor", "/files/read", url.Values{"path": {"/frameworks/f/executors/nope/runs/latest/stdout"}}, 404, "no sandbox on this agent for executor nope"},
		{"missing file", "/files/read", url.Values{"path": {latest + "/stderr"}}, 404, "no such file"},
		{"read a directory", "/files/read", url.Values{"path": {latest + "/out"}, "offset": {"0"}}, 400, "use /files/browse"},
		{"browse a file", "/files/browse", url.Values{"path": {latest + "/stdout"}}, 400, "cannot list"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, body := getFiles(t, a, tc.endpoint, tc.q)
			if code != tc.code || !strings.Contains(body, tc.want) {
				t.Errorf("%s %v answered %d %q, want %d with %q", tc.endpoint, tc.q, code, body, tc.code, tc.want)
			}
		})
	}
}

// A client tails a log by reading on from the offset it was given: a line
// written after the first read is returned by the next.
func TestFilesReadTails(t *testing.T) {
	a, run := startFilesAgent(t)
	q := url.Values{"path": {"/frameworks/f/executors/e/runs/latest/stdout"}}
	_, body := getFiles(t, a, "/files/read", q)
	var c readChunk
	if err := json.Unmarshal([]byte(body), &c); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(run, "stdout"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("later\n")
	f.Close()
	q.Set("offset", strconv.FormatInt(c.Offset, 10))
	_, body = getFiles(t, a, "/files/read", q)
	if err := json.Unmarshal([]byte(body), &c); err != nil || c.Data != "later\n" {
		t.Fatalf("second read = %q (%v), want only the line written after the first", body, err)
	}
}
