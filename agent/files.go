package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/allot-sched/allot/auth"
)

// The sandbox files API, shaped as Mesos's /files endpoints so that tools
// written for Mesos (and allot's own CLI and UI) can list a sandbox and tail
// a task's stdout:
//
//	GET /files/browse?path=P                      directory listing (JSON array)
//	GET /files/read?path=P&offset=N&length=L      {"data": "...", "offset": N}
//	GET /files/download?path=P                    the file itself
//
// P names a file inside an executor's sandbox, either as the absolute path
// the executor saw in MESOS_SANDBOX, or virtually as
// /frameworks/F/executors/E/runs/latest[/sub/path] (latest = the executor's
// current or newest run; a container id names an older run). Anything that
// resolves outside that run's sandbox — "..", a symlink that leads out — is
// answered 403 and logged: a sandbox holds what a framework's own tasks
// wrote, and nothing else on the agent is the framework's to read.

// maxReadLength caps one /files/read answer. Mesos pages reads the same way;
// a client tails a log by asking again from the returned offset.
const maxReadLength = 1 << 20

// fileError is an answer to a bad /files call: the HTTP status and what
// the caller should know.
type fileError struct {
	code int
	msg  string
	// logged: the refusal was logged where it was made (an ACL denial).
	logged bool
}

func (e *fileError) Error() string { return e.msg }

func fileErrorf(code int, format string, args ...any) *fileError {
	return &fileError{code: code, msg: fmt.Sprintf(format, args...)}
}

// writeFileError answers err, logging the confinement refusals: a caller
// probing for paths outside the sandboxes is worth an operator's look.
func (a *Agent) writeFileError(w http.ResponseWriter, r *http.Request, err error) {
	var fe *fileError
	if !errors.As(err, &fe) {
		fe = &fileError{code: http.StatusInternalServerError, msg: err.Error()}
	}
	if fe.code == http.StatusForbidden && !fe.logged {
		a.log.Warn().Str("path", r.URL.Query().Get("path")).Str("remote", r.RemoteAddr).Str("endpoint", r.URL.Path).
			Msg("refused a sandbox path that leads outside the sandbox")
	}
	http.Error(w, fe.msg, fe.code)
}

// resolveSandboxPath turns a /files path into a real path inside one run's
// sandbox; it follows symlinks and refuses what ends up outside, and what
// access_sandboxes does not let who read.
func (a *Agent) resolveSandboxPath(who auth.Subject, p string) (string, error) {
	if p == "" {
		return "", fileErrorf(http.StatusBadRequest, "missing the path parameter: give a sandbox path such as /frameworks/F/executors/E/runs/latest/stdout")
	}
	ref, rest, err := a.sandboxRoot(p)
	if err != nil {
		return "", err
	}
	if err := a.authorizeSandbox(who, ref.fw, ref.exID, ref.root); err != nil {
		return "", err
	}
	realRoot, err := filepath.EvalSymlinks(ref.root)
	if err != nil {
		return "", fileErrorf(http.StatusNotFound, "sandbox %s is gone: %v", ref.root, err)
	}
	for _, part := range strings.Split(rest, "/") {
		if part == ".." {
			return "", fileErrorf(http.StatusForbidden, "path %q leaves the sandbox (\"..\")", p)
		}
	}
	target := filepath.Join(realRoot, filepath.FromSlash(rest))
	real, err := filepath.EvalSymlinks(target)
	if errors.Is(err, os.ErrNotExist) {
		return "", fileErrorf(http.StatusNotFound, "no such file in the sandbox: %s", rest)
	} else if err != nil {
		return "", fileErrorf(http.StatusForbidden, "path %q cannot be resolved inside the sandbox: %v", p, err)
	}
	if real != realRoot && !strings.HasPrefix(real, realRoot+string(filepath.Separator)) {
		return "", fileErrorf(http.StatusForbidden, "path %q leads outside the sandbox (through a symlink)", p)
	}
	return real, nil
}

// sandboxRef is one executor run's sandbox: whose it is and where.
type sandboxRef struct {
	fw, exID, root string
}

// sandboxRoot finds the run directory a /files path is inside and the rest
// of the path below it.
func (a *Agent) sandboxRoot(p string) (ref sandboxRef, rest string, err error) {
	workDir, _ := filepath.Abs(a.cfg.WorkDir)
	slaves := filepath.Join(workDir, "slaves") + string(filepath.Separator)
	var parts []string
	switch {
	case strings.HasPrefix(p, slaves):
		// slaves/ID/frameworks/F/executors/E/runs/C/...
		parts = strings.Split(strings.TrimPrefix(p, slaves), "/")
		if len(parts) < 7 || parts[1] != "frameworks" || parts[3] != "executors" || parts[5] != "runs" {
			return ref, "", fileErrorf(http.StatusForbidden, "path %q is not inside an executor's sandbox", p)
		}
		parts = parts[1:]
	case strings.HasPrefix(p, "/frameworks/"):
		parts = strings.Split(strings.TrimPrefix(p, "/"), "/")
		if len(parts) < 6 || parts[2] != "executors" || parts[4] != "runs" {
			return ref, "", fileErrorf(http.StatusBadRequest, "path %q: want /frameworks/F/executors/E/runs/latest[/file]", p)
		}
	default:
		return ref, "", fileErrorf(http.StatusForbidden, "path %q is not inside an executor's sandbox: use /frameworks/F/executors/E/runs/latest[/file]", p)
	}
	fw, exID, run := parts[1], parts[3], parts[5]
	for _, s := range []string{fw, exID, run} {
		if err := checkSandboxID(s); err != nil {
			return ref, "", err
		}
	}
	ref = sandboxRef{fw: fw, exID: exID}
	if run == "latest" {
		ref.root = a.latestSandbox(fw, exID)
	} else {
		matches, _ := filepath.Glob(filepath.Join(workDir, "slaves", "*", "frameworks", fw, "executors", exID, "runs", run))
		if len(matches) > 0 {
			ref.root = matches[0]
		}
	}
	if ref.root == "" {
		return ref, "", fileErrorf(http.StatusNotFound, "no sandbox on this agent for executor %s (run %s) of framework %s", exID, run, fw)
	}
	return ref, strings.Join(parts[6:], "/"), nil
}

// checkSandboxID refuses a framework, executor or run id that is not one
// plain name: the ids are matched against the work dir with filepath.Glob,
// where "*" would name every framework's newest sandbox without knowing
// any id, and "." or ".." would leave the sandboxes.
func checkSandboxID(s string) error {
	switch {
	case s == "":
		return fileErrorf(http.StatusBadRequest, "the framework id, executor id and run are required")
	case s == "." || s == ".." || strings.Contains(s, "/"):
		return fileErrorf(http.StatusForbidden, "id %q leaves the sandbox", s)
	case strings.ContainsAny(s, "*?[\\"):
		return fileErrorf(http.StatusBadRequest, "id %q: framework and executor ids are required as they are; patterns (*, ?, [) are not accepted", s)
	}
	return nil
}

// sandboxOwnersDir keeps, under WorkDir, the user each run's executor ran
// as, by container id: access_sandboxes needs it after the executor has
// gone and the agent has forgotten it. It lies outside the sandboxes,
// where a task cannot rewrite it.
const sandboxOwnersDir = "meta/sandbox-owners"

// recordSandboxOwner notes ex's user for its run's sandbox. A failure only
// weakens later authorization of a gone executor's sandbox (its user is
// then unknown, which only ANY rules match), so it is logged, not fatal.
func (a *Agent) recordSandboxOwner(ex *executor) {
	a.mu.Lock()
	user := executorUser(ex)
	a.mu.Unlock()
	dir := filepath.Join(a.cfg.WorkDir, sandboxOwnersDir)
	err := os.MkdirAll(dir, 0o700)
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, ex.containerID), []byte(user), 0o600)
	}
	if err != nil {
		a.log.Warn().Err(err).Str("executor_id", ex.id).Msg("cannot record the sandbox's user: access_sandboxes will see an unknown user once the executor is gone")
	}
}

// sandboxUser is the user the executor of the run at root ran as: the
// running executor's, else the one recorded at launch ("" if unknown).
func (a *Agent) sandboxUser(fw, exID, root string) string {
	container := filepath.Base(root)
	a.mu.Lock()
	if ex := a.executors[exKey(fw, exID)]; ex != nil && ex.containerID == container {
		u := executorUser(ex)
		a.mu.Unlock()
		return u
	}
	a.mu.Unlock()
	b, _ := os.ReadFile(filepath.Join(a.cfg.WorkDir, sandboxOwnersDir, container))
	return string(b)
}

// latestSandbox is the executor's current sandbox, or the newest run kept on
// disk (an executor that ended, or ran before the agent restarted).
func (a *Agent) latestSandbox(fw, exID string) string {
	a.mu.Lock()
	sandbox := ""
	if ex := a.executors[exKey(fw, exID)]; ex != nil {
		sandbox = ex.sandbox
	}
	a.mu.Unlock()
	if sandbox != "" {
		return sandbox
	}
	runs, _ := filepath.Glob(filepath.Join(a.cfg.WorkDir, "slaves", "*", "frameworks", fw, "executors", exID, "runs", "*"))
	var newest time.Time
	for _, d := range runs {
		if st, err := os.Stat(d); err == nil && st.ModTime().After(newest) {
			newest, sandbox = st.ModTime(), d
		}
	}
	return sandbox
}

// FileInfo is one entry of /files/browse, as Mesos writes it.
type FileInfo struct {
	Path  string  `json:"path"`
	Nlink uint64  `json:"nlink"`
	Size  int64   `json:"size"`
	Mtime float64 `json:"mtime"`
	Mode  string  `json:"mode"`
	UID   string  `json:"uid"`
	GID   string  `json:"gid"`
}

// handleFilesBrowse lists a sandbox directory; entries keep the caller's
// form of the path so a client can browse further with what it got.
func (a *Agent) handleFilesBrowse(w http.ResponseWriter, r *http.Request) {
	p := strings.TrimSuffix(r.URL.Query().Get("path"), "/")
	real, err := a.resolveSandboxPath(auth.SubjectFrom(r.Context()), p)
	if err != nil {
		a.writeFileError(w, r, err)
		return
	}
	entries, err := os.ReadDir(real)
	if err != nil {
		a.writeFileError(w, r, fileErrorf(http.StatusBadRequest, "cannot list %s: %v", p, err))
		return
	}
	out := make([]FileInfo, 0, len(entries))
	for _, e := range entries {
		st, err := e.Info()
		if err != nil {
			continue
		}
		fi := FileInfo{Path: p + "/" + e.Name(), Size: st.Size(), Mtime: float64(st.ModTime().UnixNano()) / 1e9, Mode: st.Mode().String()}
		if sys, ok := st.Sys().(*syscall.Stat_t); ok {
			fi.Nlink, fi.UID, fi.GID = uint64(sys.Nlink), strconv.Itoa(int(sys.Uid)), strconv.Itoa(int(sys.Gid))
		}
		out = append(out, fi)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out)
}

// readChunk is /files/read's answer.
type readChunk struct {
	Data   string `json:"data"`
	Offset int64  `json:"offset"`
}

// handleFilesRead answers a chunk of a file from offset (Mesos semantics:
// without an offset, or with -1, it answers the file's size and no data, so
// a tailing client starts at the end; length defaults to the rest, capped).
func (a *Agent) handleFilesRead(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	real, err := a.resolveSandboxPath(auth.SubjectFrom(r.Context()), q.Get("path"))
	if err != nil {
		a.writeFileError(w, r, err)
		return
	}
	offset, length, err := readRange(q.Get("offset"), q.Get("length"))
	if err != nil {
		a.writeFileError(w, r, err)
		return
	}
	f, err := os.Open(real)
	if err != nil {
		a.writeFileError(w, r, fileErrorf(http.StatusNotFound, "cannot open %s: %v", q.Get("path"), err))
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.IsDir() {
		a.writeFileError(w, r, fileErrorf(http.StatusBadRequest, "%s is a directory: use /files/browse", q.Get("path")))
		return
	}
	out := readChunk{Offset: offset}
	if offset < 0 {
		out.Offset = st.Size()
	} else if offset < st.Size() {
		if length < 0 || length > maxReadLength {
			length = maxReadLength
		}
		buf := make([]byte, min(length, st.Size()-offset))
		n, err := f.ReadAt(buf, offset)
		if err != nil && !errors.Is(err, io.EOF) {
			a.writeFileError(w, r, err)
			return
		}
		out.Data = string(buf[:n])
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out)
}

// readRange parses /files/read's offset and length (-1 when absent).
func readRange(offset, length string) (int64, int64, error) {
	o, l := int64(-1), int64(-1)
	var err error
	if offset != "" {
		if o, err = strconv.ParseInt(offset, 10, 64); err != nil || o < -1 {
			return 0, 0, fileErrorf(http.StatusBadRequest, "offset %q: want a byte offset >= 0 (or -1 for the file's size)", offset)
		}
	}
	if length != "" {
		if l, err = strconv.ParseInt(length, 10, 64); err != nil || l < -1 {
			return 0, 0, fileErrorf(http.StatusBadRequest, "length %q: want a byte count >= 0", length)
		}
	}
	return o, l, nil
}

// handleFilesDownload serves a sandbox file as an attachment.
func (a *Agent) handleFilesDownload(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Query().Get("path")
	real, err := a.resolveSandboxPath(auth.SubjectFrom(r.Context()), p)
	if err != nil {
		a.writeFileError(w, r, err)
		return
	}
	if st, err := os.Stat(real); err != nil || st.IsDir() {
		a.writeFileError(w, r, fileErrorf(http.StatusBadRequest, "%s is a directory: use /files/browse", p))
		return
	}
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", filepath.Base(real)))
	http.ServeFile(w, r, real)
}
