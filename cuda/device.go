package cuda

import (
	"embed"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"sync"
)

// modules are the kernels as PTX, one module per kernels/NAME.cu (through
// gen.sh), all loaded by Open and OpenEmulator; kernel names are unique
// across them.
//
//go:embed *.ptx
var modules embed.FS

// ptxModules returns the embedded modules' file names and texts, in name
// order.
func ptxModules() ([]string, []string) {
	ents, _ := modules.ReadDir(".")
	var names, texts []string
	for _, e := range ents {
		b, err := modules.ReadFile(e.Name())
		if err != nil {
			continue
		}
		names, texts = append(names, e.Name()), append(texts, string(b))
	}
	return names, texts
}

// Ptr is a device address.
type Ptr uint64

// Dim3 is a grid or block shape.
type Dim3 [3]uint32

// Device is where kernels run: a GPU through the CUDA driver, or the
// emulator (internal/ptx) that runs the same PTX on the CPU. Both load the
// embedded module when opened; Launch names one of its kernels. A Device
// is used by one goroutine at a time.
type Device interface {
	Info() Info
	Alloc(n int) (Ptr, error)
	Free(p Ptr) error
	Write(dst Ptr, src []byte) error // host to device
	Read(dst []byte, src Ptr) error  // device to host; waits for earlier launches
	// Launch runs kernel on grid x block threads with shared bytes of
	// dynamic shared memory; args fill its parameters in order, each from
	// the low bytes of its value.
	Launch(kernel string, grid, block Dim3, shared uint32, args ...uint64) error
	// Has reports whether the device loaded kernel (a module for a newer
	// GPU than the device is not loaded).
	Has(kernel string) bool
	Sync() error
	Close() error
}

// Info describes a Device.
type Info struct {
	Name     string `json:"name"`
	Major    int    `json:"cc_major"`
	Minor    int    `json:"cc_minor"`
	SMs      int    `json:"sms"`
	Memory   uint64 `json:"memory_bytes"`
	Driver   int    `json:"driver"` // cuDriverGetVersion: 1000 major + 10 minor
	Emulated bool   `json:"emulated"`
}

// String is the device's one-line description.
func (i Info) String() string {
	if i.Emulated {
		return "PTX emulator on the CPU (internal/ptx)"
	}
	return fmt.Sprintf("%s (compute %d.%d, %d SMs, %.0f GiB, driver %s)", i.Name, i.Major, i.Minor, i.SMs,
		float64(i.Memory)/(1<<30), versionString(i.Driver))
}

// The oldest driver and GPU the kernels run on: PTX ISA 5.0 (CUDA 9.0)
// for sm_61, the first with dp4a.
const (
	MinDriver  = 9000
	MinCompute = 61
)

func versionString(v int) string { return fmt.Sprintf("%d.%d", v/1000, v%1000/10) }

// DriverError is a failed CUDA driver call.
type DriverError struct {
	Call string
	Code int
	Name string
	Desc string
}

func (e *DriverError) Error() string {
	return fmt.Sprintf("cuda: %s: %s (%d): %s", e.Call, e.Name, e.Code, e.Desc)
}

// ErrKernel reports a launch of a kernel the module does not have.
var ErrKernel = errors.New("cuda: no such kernel")

// ErrUnavailable wraps every reason Open gives for having no GPU.
var ErrUnavailable = errors.New("cuda: no GPU")

var (
	entryRE  = regexp.MustCompile(`(?m)^\.visible \.entry (\w+)\(`)
	targetRE = regexp.MustCompile(`(?m)^\.target sm_(\d+)`)
)

var versionRE = regexp.MustCompile(`(?m)^\.version (\d+)\.(\d+)`)

// ptxDriver is the oldest driver (cuDriverGetVersion's number) that
// JIT-compiles a module's PTX ISA version: 5.x needs CUDA 9.0, 6.x 10.0,
// and from 7.0 on ISA m.n came with CUDA (m+4).n.
func ptxDriver(ptx string) int {
	m := versionRE.FindStringSubmatch(ptx)
	if m == nil {
		return 0
	}
	maj, _ := strconv.Atoi(m[1])
	mnr, _ := strconv.Atoi(m[2])
	switch {
	case maj >= 7:
		return (maj+4)*1000 + mnr*10
	case maj == 6:
		return 10000
	}
	return 9000
}

// ptxTarget is a module's target compute capability (61 for sm_61).
func ptxTarget(ptx string) int {
	m := targetRE.FindStringSubmatch(ptx)
	if m == nil {
		return 0
	}
	v, _ := strconv.Atoi(m[1])
	return v
}

// kernelNames lists a PTX module's kernels.
func kernelNames(ptx string) []string {
	var ks []string
	for _, m := range entryRE.FindAllStringSubmatch(ptx, -1) {
		ks = append(ks, m[1])
	}
	return ks
}

// Open opens GPU ordinal (0 is the first) with the kernels loaded. Without
// a usable GPU the error wraps ErrUnavailable and says why: no driver
// binding in this build, no driver, no device, a driver or device too old.
func Open(ordinal int) (Device, error) {
	_, ptxs := ptxModules()
	d, err := openGPU(ordinal, ptxs)
	if err != nil {
		var de *DriverError
		if errors.As(err, &de) {
			return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
		}
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return d, nil
}

var (
	probeOnce sync.Once
	probeInfo Info
	probeErr  error
)

// Probe reports, once per process, whether GPU 0 opens and what it is (or
// why not); the device is closed again.
func Probe() (Info, error) {
	probeOnce.Do(func() {
		d, err := Open(0)
		if err != nil {
			probeErr = err
			return
		}
		probeInfo = d.Info()
		d.Close()
	})
	return probeInfo, probeErr
}
