module github.com/allot-sched/allot

go 1.26.8

require (
	github.com/gogo/protobuf v1.3.2 // indirect
	github.com/mesos/mesos-go v0.0.11 // indirect
	github.com/pquerna/ffjson v0.0.0-20190930134022-aa0246cd15f7 // indirect
)
