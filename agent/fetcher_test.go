package agent

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

func tarGz(t *testing.T, files map[string]string) []byte {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for name, body := range files {
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(body)), Typeflag: tar.TypeReg})
		tw.Write([]byte(body))
	}
	tw.Close()
	gz.Close()
	return buf.Bytes()
}

func zipOf(t *testing.T, files map[string]string) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, body := range files {
		w, _ := zw.Create(name)
		w.Write([]byte(body))
	}
	zw.Close()
	return buf.Bytes()
}

func TestFetcher(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/tool.sh":
			w.Write([]byte("#!/bin/sh\necho tool\n"))
		case "/bundle.tar.gz":
			w.Write(tarGz(t, map[string]string{"bundle/run.sh": "run"}))
		case "/bundle.zip":
			w.Write(zipOf(t, map[string]string{"z/data.txt": "zipped"}))
		case "/evil.tar.gz":
			w.Write(tarGz(t, map[string]string{"../escape": "x"}))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	local := filepath.Join(t.TempDir(), "local.txt")
	os.WriteFile(local, []byte("local"), 0o644)
	yes, no := true, false
	name := func(s string) *string { return &s }
	tests := []struct {
		name  string
		uri   mesos.CommandInfo_URI
		check string // file that must exist in the sandbox
		mode  os.FileMode
		err   string
	}{
		{name: "http executable", uri: mesos.CommandInfo_URI{Value: srv.URL + "/tool.sh", Executable: &yes}, check: "tool.sh", mode: 0o755},
		{name: "tar.gz extracted", uri: mesos.CommandInfo_URI{Value: srv.URL + "/bundle.tar.gz"}, check: "bundle/run.sh"},
		{name: "zip extracted", uri: mesos.CommandInfo_URI{Value: srv.URL + "/bundle.zip"}, check: "z/data.txt"},
		{name: "not extracted", uri: mesos.CommandInfo_URI{Value: srv.URL + "/bundle.zip", Extract: &no}, check: "bundle.zip"},
		{name: "output_file", uri: mesos.CommandInfo_URI{Value: srv.URL + "/tool.sh", OutputFile: name("bin/t")}, check: "bin/t"},
		{name: "local path", uri: mesos.CommandInfo_URI{Value: local}, check: "local.txt"},
		{name: "file URL", uri: mesos.CommandInfo_URI{Value: "file://" + local}, check: "local.txt"},
		{name: "404", uri: mesos.CommandInfo_URI{Value: srv.URL + "/missing"}, err: "404"},
		{name: "bad scheme", uri: mesos.CommandInfo_URI{Value: "ftp://x/y"}, err: "unsupported URI scheme"},
		{name: "escaping archive", uri: mesos.CommandInfo_URI{Value: srv.URL + "/evil.tar.gz"}, err: "escapes the sandbox"},
		{name: "escaping output_file", uri: mesos.CommandInfo_URI{Value: local, OutputFile: name("../x")}, err: "inside the sandbox"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sb := t.TempDir()
			err := fetchAll([]mesos.CommandInfo_URI{tc.uri}, sb, srv.Client())
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), tc.uri.Value) {
					t.Fatalf("error = %v, want %q naming the URI", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			st, err := os.Stat(filepath.Join(sb, tc.check))
			if err != nil {
				t.Fatalf("%s not in sandbox: %v", tc.check, err)
			}
			if tc.mode != 0 && st.Mode().Perm() != tc.mode {
				t.Errorf("mode = %v, want %v", st.Mode().Perm(), tc.mode)
			}
		})
	}
}
