// Package healthcheck validates and names Mesos health checks
// (TaskInfo.health_check) for the master, which refuses a task whose check
// is malformed with TASK_ERROR, and the built-in executor, which runs the
// checks. It is a leaf under api/ (mesos-go types only) so that both use
// one definition of "valid", and so that a framework library could check a
// task before it sends it.
package healthcheck
