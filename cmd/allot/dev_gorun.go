package main

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"syscall"
)

// followGoRun ties allot dev to the go command that started it with `go
// run`: go run does not relay SIGTERM to its program (Ctrl-C reaches both
// through the terminal), so `kill` of the go command would leave allot dev
// running with no one to stop it, and its work dirs behind when it went
// later. Under go run, allot dev gets SIGTERM when the go command dies,
// and stops as on Ctrl-C. Started any other way, it is left alone: an
// allot dev under nohup may outlive its shell on purpose.
func followGoRun() {
	ppid := os.Getppid()
	comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", ppid))
	if err != nil || strings.TrimSpace(string(comm)) != "go" {
		return
	}
	// The parent-death signal is a setting of the calling thread and ends
	// with it, and the agent throws threads away (one that tried a mount
	// namespace, say); this goroutine keeps its thread, alive and its own,
	// for as long as allot dev runs.
	runtime.LockOSThread()
	syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGTERM), 0)
	if os.Getppid() != ppid { // it died before the prctl
		syscall.Kill(os.Getpid(), syscall.SIGTERM)
	}
}
