//go:build !(linux && (amd64 || arm64)) || nocuda

package cuda

import (
	"fmt"
	"runtime"
)

const bound = false

func openGPU(int, []string) (Device, error) {
	return nil, fmt.Errorf("this build has no CUDA driver binding (%s/%s; the binding needs linux/amd64 or linux/arm64 without -tags nocuda)", runtime.GOOS, runtime.GOARCH)
}
