//go:build tools

// Package tools pins mesos-go v0.0.11's example framework in this nested
// module so that `go mod tidy` keeps its requirements. The file is never
// compiled (the tools tag is never set); the integration tests build the
// two commands by import path from this directory.
package tools

import (
	_ "github.com/mesos/mesos-go/api/v1/cmd/example-executor"
	_ "github.com/mesos/mesos-go/api/v1/cmd/example-scheduler"
)
