package main

import (
	"strings"

	"github.com/allot-sched/allot/api/operator"
)

// taskContainerRows are what `allot task` shows of a task's container:
// the image it runs in, its addresses on container networks and, when it
// has any, its GPUs ("-" for a task on the host's filesystem and network).
func taskContainerRows(t operator.Task) [][2]string {
	rows := [][2]string{{"IMAGE", orDash(t.Image())}, {"ADDRESSES", orDash(strings.Join(t.Addresses(), ", "))}}
	if g := t.Resources["gpus"]; g > 0 {
		rows = append(rows, [2]string{"GPUS", fmtQty("gpus", g)})
	}
	return rows
}
