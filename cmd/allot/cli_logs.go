package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// logsPoll is how often `allot logs --follow` asks for more.
const logsPoll = 500 * time.Millisecond

// runLogs prints a task's stdout or stderr from its sandbox through the
// master (which proxies the agent's /files/read), as `nomad alloc logs`.
func runLogs(args []string, stdout, stderr io.Writer) error {
	fs, c := newCLIFlags("logs", "TASK [--stderr] [--follow] [flags]", "Print a task's stdout (--stderr: its stderr) from its executor's sandbox on the agent that ran it.\nWith --follow, keep printing what the task writes until it ends (or Ctrl-C). With --json, one\nJSON object a line per piece read: {\"task_id\", \"stream\", \"offset\", \"data\"}.\nThe task id's short form (or any unique end or beginning) will do.", stderr)
	var errStream, follow bool
	fs.BoolVar(&errStream, "stderr", false, "print stderr instead of stdout")
	fs.BoolVar(&follow, "follow", false, "keep printing new output until the task ends")
	fs.BoolVar(&follow, "f", false, "short for --follow")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("usage: allot logs TASK [--stderr] [--follow] (allot tasks lists the ids)")
	}
	st, err := c.state()
	if err != nil {
		return err
	}
	t, err := findTaskOf(st, allTasks(st), pos[0], "")
	if err != nil {
		return err
	}
	name := "stdout"
	if errStream {
		name = "stderr"
	}
	exID := t.ExecutorID
	if exID == "" {
		exID = t.ID // a command task runs in an executor named after it
	}
	r := &logReader{c: c, agent: t.SlaveID,
		path: fmt.Sprintf("/frameworks/%s/executors/%s/runs/latest/%s", t.FrameworkID, exID, name)}
	out := stdout
	if c.json {
		out = &logJSON{enc: json.NewEncoder(stdout), task: t.ID, stream: name}
	}
	for ended := isTerminalName(t.State); ; {
		if err := r.drain(out); err != nil {
			return err
		}
		if !follow || ended {
			return nil
		}
		time.Sleep(logsPoll)
		if st, err := c.state(); err == nil {
			// Ended, or gone (its completed framework fell out of the
			// master's bounded history): one more drain picks up its last words.
			if now, err := findTaskOf(st, allTasks(st), t.ID, t.FrameworkID); err != nil || isTerminalName(now.State) {
				ended = true
			}
		}
	}
}

// logReader reads a sandbox file page by page from an offset.
type logReader struct {
	c      *cliFlags
	agent  string
	path   string
	offset int64
}

// drain prints everything from the offset to the current end of the file.
func (r *logReader) drain(w io.Writer) error {
	for {
		q := url.Values{"agent_id": {r.agent}, "path": {r.path}, "offset": {strconv.FormatInt(r.offset, 10)}}
		b, err := call(r.c.client(), r.c.masters, http.MethodGet, "/files/read?"+q.Encode(), nil)
		if err != nil {
			return fmt.Errorf("reading %s on agent %s: %w", r.path, r.agent, err)
		}
		var chunk struct {
			Data   string `json:"data"`
			Offset int64  `json:"offset"`
		}
		if err := json.Unmarshal(b, &chunk); err != nil {
			return fmt.Errorf("the agent's /files/read answered %q: %v", b, err)
		}
		if chunk.Data == "" {
			return nil
		}
		if _, err := io.WriteString(w, chunk.Data); err != nil {
			return err
		}
		r.offset = chunk.Offset + int64(len(chunk.Data))
	}
}

// logJSON writes each piece of a sandbox file as one JSON line, with the
// offset it starts at, so that a script can follow a log and resume it.
type logJSON struct {
	enc    *json.Encoder
	task   string
	stream string
	offset int64
}

func (l *logJSON) Write(p []byte) (int, error) {
	err := l.enc.Encode(map[string]any{"task_id": l.task, "stream": l.stream, "offset": l.offset, "data": string(p)})
	if err != nil {
		return 0, err
	}
	l.offset += int64(len(p))
	return len(p), nil
}
