//go:build unix

package web

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// killUsing ends the processes started with --user-data-dir=dir: Chromium
// helpers left over after the browser exited. dir is a fresh temporary
// folder of this process, so only its own browser's processes match. Where
// /proc is missing it does nothing.
func killUsing(dir string) {
	want := []byte("--user-data-dir=" + dir)
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	self := os.Getpid()
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		for _, arg := range bytes.Split(cmdline, []byte{0}) {
			if bytes.Equal(arg, want) {
				syscall.Kill(pid, syscall.SIGKILL)
				break
			}
		}
	}
}
