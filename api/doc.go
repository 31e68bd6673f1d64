// Package api holds allot's own protobuf types: the typed commands of the
// replicated registry (each with a stable numeric id, see CommandType), the
// records a registry snapshot streams, and the agent protocol between master
// and agents. Mesos v1 types come from mesos-go and travel inside these
// messages in their protobuf encoding.
//
// Regenerate allot.pb.go with:
//
//	protoc --go_out=. --go_opt=paths=source_relative allot.proto
//
// (protoc from the protobuf-compiler package, protoc-gen-go from
// google.golang.org/protobuf/cmd/protoc-gen-go). The generated file is
// committed so that builds need neither.
package api

//go:generate protoc --go_out=. --go_opt=paths=source_relative allot.proto
