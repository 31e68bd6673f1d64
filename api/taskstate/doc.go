// Package taskstate answers questions about Mesos task states that the
// master, the agent, the framework library and the command-line tools must
// answer alike. It is a leaf under api/ rather than part of package api so
// that framework binaries can use it without linking the registry's
// protobuf types (package api pulls in google.golang.org/protobuf; this
// package needs only mesos-go's TaskState).
package taskstate
