//go:build linux && (amd64 || arm64) && !nocuda

package cuda

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// The CUDA driver API, bound at run time from libcuda.so.1 with purego: no
// cgo and no CUDA toolkit at build time. A machine without the driver
// fails here with the loader's reason.

// bound reports that this build can load the driver.
const bound = true

type cuResult int32

type driverAPI struct {
	init              func(flags uint32) cuResult
	driverGetVersion  func(v *int32) cuResult
	deviceGetCount    func(n *int32) cuResult
	deviceGet         func(d *int32, ordinal int32) cuResult
	deviceGetName     func(name *byte, n int32, d int32) cuResult
	deviceGetAttr     func(v *int32, attr int32, d int32) cuResult
	deviceTotalMem    func(b *uint64, d int32) cuResult
	primaryCtxRetain  func(ctx *uintptr, d int32) cuResult
	primaryCtxRelease func(d int32) cuResult
	ctxSetCurrent     func(ctx uintptr) cuResult
	ctxSynchronize    func() cuResult
	moduleLoadDataEx  func(m *uintptr, image *byte, n uint32, opts *int32, vals *uintptr) cuResult
	moduleUnload      func(m uintptr) cuResult
	moduleGetFunction func(f *uintptr, m uintptr, name *byte) cuResult
	funcSetAttribute  func(f uintptr, attr int32, v int32) cuResult
	memAlloc          func(p *uint64, n uint64) cuResult
	memFree           func(p uint64) cuResult
	memcpyHtoD        func(dst uint64, src unsafe.Pointer, n uint64) cuResult
	memcpyDtoH        func(dst unsafe.Pointer, src uint64, n uint64) cuResult
	launchKernel      func(f uintptr, gx, gy, gz, bx, by, bz, shared uint32, stream uintptr, params *unsafe.Pointer, extra *unsafe.Pointer) cuResult
	getErrorName      func(r cuResult, s **byte) cuResult
	getErrorString    func(r cuResult, s **byte) cuResult
}

var (
	apiOnce sync.Once
	api     *driverAPI
	apiErr  error
)

// loadDriver opens libcuda.so.1 and binds the functions, once.
func loadDriver() (*driverAPI, error) {
	apiOnce.Do(func() {
		lib, err := purego.Dlopen("libcuda.so.1", purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err != nil {
			if strings.Contains(err.Error(), "cannot open shared object file") {
				apiErr = fmt.Errorf("no CUDA driver (libcuda.so.1 not found)")
			} else {
				apiErr = fmt.Errorf("no CUDA driver: %v", err)
			}
			return
		}
		a := &driverAPI{}
		syms := []struct {
			fn   any
			name string
		}{
			{&a.init, "cuInit"}, {&a.driverGetVersion, "cuDriverGetVersion"},
			{&a.deviceGetCount, "cuDeviceGetCount"}, {&a.deviceGet, "cuDeviceGet"},
			{&a.deviceGetName, "cuDeviceGetName"}, {&a.deviceGetAttr, "cuDeviceGetAttribute"},
			{&a.deviceTotalMem, "cuDeviceTotalMem_v2"},
			{&a.primaryCtxRetain, "cuDevicePrimaryCtxRetain"},
			{&a.primaryCtxRelease, "cuDevicePrimaryCtxRelease_v2"},
			{&a.ctxSetCurrent, "cuCtxSetCurrent"}, {&a.ctxSynchronize, "cuCtxSynchronize"},
			{&a.moduleLoadDataEx, "cuModuleLoadDataEx"}, {&a.moduleUnload, "cuModuleUnload"},
			{&a.moduleGetFunction, "cuModuleGetFunction"}, {&a.funcSetAttribute, "cuFuncSetAttribute"},
			{&a.memAlloc, "cuMemAlloc_v2"}, {&a.memFree, "cuMemFree_v2"},
			{&a.memcpyHtoD, "cuMemcpyHtoD_v2"}, {&a.memcpyDtoH, "cuMemcpyDtoH_v2"},
			{&a.launchKernel, "cuLaunchKernel"},
			{&a.getErrorName, "cuGetErrorName"}, {&a.getErrorString, "cuGetErrorString"},
		}
		for _, s := range syms {
			name := s.name
			if _, err := purego.Dlsym(lib, name); err != nil {
				// Drivers before CUDA 11.0 have the first version only.
				old, ok := strings.CutSuffix(name, "_v2")
				if _, err2 := purego.Dlsym(lib, old); !ok || err2 != nil || name != "cuDevicePrimaryCtxRelease_v2" {
					apiErr = fmt.Errorf("CUDA driver too old: it lacks %s", name)
					return
				}
				name = old
			}
			purego.RegisterLibFunc(s.fn, lib, name)
		}
		api = a
	})
	return api, apiErr
}

// check turns a CUresult into an error naming the call.
func (a *driverAPI) check(call string, r cuResult) error {
	if r == 0 {
		return nil
	}
	var name, desc *byte
	a.getErrorName(r, &name)
	a.getErrorString(r, &desc)
	return &DriverError{Call: call, Code: int(r), Name: goString(name), Desc: goString(desc)}
}

func goString(p *byte) string {
	if p == nil {
		return ""
	}
	var b []byte
	for q := unsafe.Pointer(p); *(*byte)(q) != 0; q = unsafe.Add(q, 1) {
		b = append(b, *(*byte)(q))
	}
	return string(b)
}

// cutNUL is b up to its first NUL (all of b without one).
func cutNUL(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

func cString(s string) *byte {
	b := append([]byte(s), 0)
	return &b[0]
}

// gpu is a Device on a real GPU: its primary context, the module and its
// functions. Every call pins its goroutine to an OS thread and makes the
// context current there (the driver's current context is per thread).
type gpu struct {
	a     *driverAPI
	dev   int32
	ctx   uintptr
	mods  []uintptr
	fns   map[string]uintptr
	info  Info
	mu    sync.Mutex
	args  []uint64
	argp  []unsafe.Pointer
	limit int32 // largest dynamic shared memory a block may opt into
}

// with runs f with the context current on a locked thread.
func (g *gpu) with(call string, f func() cuResult) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := g.a.check("cuCtxSetCurrent", g.a.ctxSetCurrent(g.ctx)); err != nil {
		return err
	}
	return g.a.check(call, f())
}

const (
	attrMultiprocessors = 16
	attrCCMajor         = 75
	attrCCMinor         = 76
	attrSharedOptin     = 97
	funcMaxDynShared    = 8
	jitErrorLog         = 5
	jitErrorLogSize     = 6
)

// openGPU initialises the driver and opens device ordinal with the module.
func openGPU(ordinal int, ptxs []string) (Device, error) {
	a, err := loadDriver()
	if err != nil {
		return nil, err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if r := a.init(0); r != 0 {
		if r == 100 {
			return nil, fmt.Errorf("no CUDA device (cuInit: CUDA_ERROR_NO_DEVICE)")
		}
		return nil, a.check("cuInit", r)
	}
	var ver, n int32
	if err := a.check("cuDriverGetVersion", a.driverGetVersion(&ver)); err != nil {
		return nil, err
	}
	if ver < MinDriver {
		return nil, fmt.Errorf("CUDA driver %s is too old (the kernels need %s)", versionString(int(ver)), versionString(MinDriver))
	}
	if err := a.check("cuDeviceGetCount", a.deviceGetCount(&n)); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, fmt.Errorf("no CUDA device")
	}
	if ordinal < 0 || ordinal >= int(n) {
		return nil, fmt.Errorf("no CUDA device %d (have %d)", ordinal, n)
	}
	g := &gpu{a: a, fns: map[string]uintptr{}}
	if err := a.check("cuDeviceGet", a.deviceGet(&g.dev, int32(ordinal))); err != nil {
		return nil, err
	}
	name := make([]byte, 256)
	var maj, mnr, sms int32
	var mem uint64
	for _, c := range []struct {
		call string
		r    cuResult
	}{
		{"cuDeviceGetName", a.deviceGetName(&name[0], int32(len(name)), g.dev)},
		{"cuDeviceGetAttribute", a.deviceGetAttr(&maj, attrCCMajor, g.dev)},
		{"cuDeviceGetAttribute", a.deviceGetAttr(&mnr, attrCCMinor, g.dev)},
		{"cuDeviceGetAttribute", a.deviceGetAttr(&sms, attrMultiprocessors, g.dev)},
		{"cuDeviceGetAttribute", a.deviceGetAttr(&g.limit, attrSharedOptin, g.dev)},
		{"cuDeviceTotalMem", a.deviceTotalMem(&mem, g.dev)},
	} {
		if err := a.check(c.call, c.r); err != nil {
			return nil, err
		}
	}
	g.info = Info{Name: goString(&name[0]), Major: int(maj), Minor: int(mnr), SMs: int(sms), Memory: mem, Driver: int(ver)}
	if maj*10+mnr < MinCompute {
		return nil, fmt.Errorf("%s (compute capability %d.%d) is too old: the kernels need %d.%d (dp4a)",
			g.info.Name, maj, mnr, MinCompute/10, MinCompute%10)
	}
	if err := a.check("cuDevicePrimaryCtxRetain", a.primaryCtxRetain(&g.ctx, g.dev)); err != nil {
		return nil, err
	}
	if err := a.check("cuCtxSetCurrent", a.ctxSetCurrent(g.ctx)); err != nil {
		a.primaryCtxRelease(g.dev)
		return nil, err
	}
	for _, ptx := range ptxs {
		if ptxTarget(ptx) > int(maj*10+mnr) || ptxDriver(ptx) > int(ver) {
			continue // for newer GPUs or drivers: its kernels stay absent (Has)
		}
		if err := g.load(ptx); err != nil {
			g.Close()
			return nil, err
		}
	}
	return g, nil
}

// load JIT-compiles one PTX module (with the JIT's error log on failure)
// and looks up its kernels.
func (g *gpu) load(ptx string) error {
	a := g.a
	logBuf := make([]byte, 8192)
	opts := []int32{jitErrorLog, jitErrorLogSize}
	vals := []uintptr{uintptr(unsafe.Pointer(&logBuf[0])), uintptr(len(logBuf))}
	var mod uintptr
	if r := a.moduleLoadDataEx(&mod, cString(ptx), 2, &opts[0], &vals[0]); r != 0 {
		return fmt.Errorf("%w: %s", a.check("cuModuleLoadDataEx", r), cutNUL(logBuf))
	}
	runtime.KeepAlive(logBuf)
	g.mods = append(g.mods, mod)
	for _, k := range kernelNames(ptx) {
		var f uintptr
		if err := a.check("cuModuleGetFunction "+k, a.moduleGetFunction(&f, mod, cString(k))); err != nil {
			return err
		}
		g.fns[k] = f
	}
	return nil
}

func (g *gpu) Info() Info { return g.info }

func (g *gpu) Has(kernel string) bool {
	_, ok := g.fns[kernel]
	return ok
}

func (g *gpu) Alloc(n int) (Ptr, error) {
	var p uint64
	err := g.with("cuMemAlloc", func() cuResult { return g.a.memAlloc(&p, uint64(max(n, 1))) })
	return Ptr(p), err
}

func (g *gpu) Free(p Ptr) error {
	return g.with("cuMemFree", func() cuResult { return g.a.memFree(uint64(p)) })
}

func (g *gpu) Write(dst Ptr, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	err := g.with("cuMemcpyHtoD", func() cuResult {
		return g.a.memcpyHtoD(uint64(dst), unsafe.Pointer(&src[0]), uint64(len(src)))
	})
	runtime.KeepAlive(src)
	return err
}

func (g *gpu) Read(dst []byte, src Ptr) error {
	if len(dst) == 0 {
		return nil
	}
	err := g.with("cuMemcpyDtoH", func() cuResult {
		return g.a.memcpyDtoH(unsafe.Pointer(&dst[0]), uint64(src), uint64(len(dst)))
	})
	runtime.KeepAlive(dst)
	return err
}

func (g *gpu) Launch(kernel string, grid, block Dim3, shared uint32, args ...uint64) error {
	f, ok := g.fns[kernel]
	if !ok {
		return fmt.Errorf("%w %q", ErrKernel, kernel)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	// Each parameter's value lives in args; the driver reads as many bytes
	// as the kernel declares (the low ones: little endian).
	g.args = append(g.args[:0], args...)
	g.argp = g.argp[:0]
	for i := range g.args {
		g.argp = append(g.argp, unsafe.Pointer(&g.args[i]))
	}
	var pp *unsafe.Pointer
	if len(g.argp) > 0 {
		pp = &g.argp[0]
	}
	if shared > 48<<10 {
		if int32(shared) > g.limit {
			return fmt.Errorf("cuda: %s needs %d bytes of shared memory, the device allows %d", kernel, shared, g.limit)
		}
		if err := g.with("cuFuncSetAttribute", func() cuResult { return g.a.funcSetAttribute(f, funcMaxDynShared, int32(shared)) }); err != nil {
			return err
		}
	}
	err := g.with("cuLaunchKernel "+kernel, func() cuResult {
		return g.a.launchKernel(f, grid[0], grid[1], grid[2], block[0], block[1], block[2], shared, 0, pp, nil)
	})
	runtime.KeepAlive(g.args)
	return err
}

func (g *gpu) Sync() error { return g.with("cuCtxSynchronize", g.a.ctxSynchronize) }

func (g *gpu) Close() error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var err error
	if g.ctx != 0 {
		g.a.ctxSetCurrent(g.ctx)
	}
	for _, m := range g.mods {
		if e := g.a.check("cuModuleUnload", g.a.moduleUnload(m)); err == nil {
			err = e
		}
	}
	g.mods = nil
	if g.ctx != 0 {
		g.a.primaryCtxRelease(g.dev)
		g.ctx = 0
	}
	return err
}
