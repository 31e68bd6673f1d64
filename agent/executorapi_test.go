package agent

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

// The executor API answers bad calls with 4xx naming the problem.
func TestExecutorAPIRejectsBadCalls(t *testing.T) {
	a := startedAgent(t, Config{Masters: []string{"127.0.0.1:1"}, Listen: "127.0.0.1:0", WorkDir: t.TempDir(),
		Resources: "cpus:1;mem:128;disk:100", Log: zerolog.Nop()})
	tests := []struct {
		name, method, ctype, body string
		code                      int
		want                      string
	}{
		{"GET", http.MethodGet, "application/json", `{}`, 405, "POST"},
		{"garbage", http.MethodPost, "application/json", `{nope`, 400, "executor.Call"},
		{"unknown type", http.MethodPost, "application/json", `{"type":"FLY"}`, 400, "failed to parse"},
		{"subscribe unknown executor", http.MethodPost, "application/json",
			`{"type":"SUBSCRIBE","framework_id":{"value":"f"},"executor_id":{"value":"e"},"subscribe":{}}`, 400, "executor e of framework f is not running"},
		{"update without status", http.MethodPost, "application/json",
			`{"type":"UPDATE","framework_id":{"value":"f"},"executor_id":{"value":"e"}}`, 400, "update.status.task_id"},
		{"update without uuid", http.MethodPost, "application/json",
			`{"type":"UPDATE","framework_id":{"value":"f"},"executor_id":{"value":"e"},"update":{"status":{"task_id":{"value":"t"},"state":"TASK_RUNNING"}}}`, 400, "uuid"},
		{"update unknown executor", http.MethodPost, "application/json",
			`{"type":"UPDATE","framework_id":{"value":"f"},"executor_id":{"value":"e"},"update":{"status":{"task_id":{"value":"t"},"state":"TASK_RUNNING","uuid":"AAAA"}}}`, 400, "not running on this agent"},
		{"message without body", http.MethodPost, "application/json",
			`{"type":"MESSAGE","framework_id":{"value":"f"},"executor_id":{"value":"e"}}`, 400, "without message"},
		{"sandbox file traversal", http.MethodGet, "", "", 400, "plain file name"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			url := "http://" + a.Addr() + "/api/v1/executor"
			if tc.name == "sandbox file traversal" {
				url = "http://" + a.Addr() + "/files/sandbox?framework_id=f&executor_id=e&file=../../etc/passwd"
			}
			req, _ := http.NewRequest(tc.method, url, bytes.NewReader([]byte(tc.body)))
			if tc.ctype != "" {
				req.Header.Set("Content-Type", tc.ctype)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.code || !strings.Contains(string(b), tc.want) {
				t.Errorf("answered %d %q, want %d with %q", resp.StatusCode, b, tc.code, tc.want)
			}
		})
	}
}
