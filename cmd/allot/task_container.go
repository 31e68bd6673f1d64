package main

import (
	"strings"

	"github.com/allot-sched/allot/api/operator"
)

// taskContainerRows are what `allot task` shows of a task's container:
// the image it runs in, its addresses on container networks and, when it
// has any, its GPUs ("-" for a task on the host's filesystem and network):
// how many, and for a live task the devices its agent reports
// (task_gpus.go), or why they are not known.
func taskContainerRows(c *cliFlags, st *operator.State, t operator.Task) [][2]string {
	rows := [][2]string{{"IMAGE", orDash(t.Image())}, {"ADDRESSES", orDash(strings.Join(t.Addresses(), ", "))}}
	if g := t.Resources["gpus"]; g > 0 {
		gpus := fmtQty("gpus", g)
		if !isTerminalName(t.State) {
			if devs, err := gpuDevices(c, st, t); err != nil {
				gpus += " (devices not known: " + err.Error() + ")"
			} else {
				gpus += " (" + strings.Join(devs, ", ") + ")"
			}
		}
		rows = append(rows, [2]string{"GPUS", gpus})
	}
	return rows
}
