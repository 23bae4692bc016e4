package cuda

import (
	"fmt"

	"github.com/memowm/memowm/internal/ptx"
)

// emulator is a Device that runs the embedded PTX on the CPU with
// internal/ptx: the same kernels and launches as on a GPU, so the parity
// tests check the GPU path's integers without a GPU. Slow (an interpreter).
type emulator struct {
	m  *ptx.Machine
	ks map[string]*ptx.Kernel
}

// OpenEmulator returns the emulator with the kernels loaded.
func OpenEmulator() (Device, error) {
	e := &emulator{m: ptx.NewMachine(), ks: map[string]*ptx.Kernel{}}
	names, texts := ptxModules()
	for i, text := range texts {
		mod, err := ptx.Parse(text)
		if err != nil {
			return nil, fmt.Errorf("cuda: emulator: %s: %w", names[i], err)
		}
		for _, name := range mod.Kernels() {
			k, err := mod.Kernel(name)
			if err != nil {
				return nil, fmt.Errorf("cuda: emulator: %w", err)
			}
			e.ks[name] = k
		}
	}
	return e, nil
}

func (e *emulator) Info() Info {
	return Info{Name: "PTX emulator", Emulated: true}
}

func (e *emulator) Alloc(n int) (Ptr, error) {
	p, err := e.m.Alloc(max(n, 1))
	return Ptr(p), err
}

func (e *emulator) Free(p Ptr) error                { return e.m.Free(uint64(p)) }
func (e *emulator) Write(dst Ptr, src []byte) error { return e.m.Write(uint64(dst), src) }
func (e *emulator) Read(dst []byte, src Ptr) error  { return e.m.Read(uint64(src), dst) }
func (e *emulator) Has(kernel string) bool {
	_, ok := e.ks[kernel]
	return ok
}

func (e *emulator) Sync() error  { return nil }
func (e *emulator) Close() error { return nil }

func (e *emulator) Launch(kernel string, grid, block Dim3, shared uint32, args ...uint64) error {
	k, ok := e.ks[kernel]
	if !ok {
		return fmt.Errorf("%w %q", ErrKernel, kernel)
	}
	if err := e.m.Launch(k, ptx.Dim3(grid), ptx.Dim3(block), shared, args...); err != nil {
		return fmt.Errorf("cuda: emulator: %w", err)
	}
	return nil
}
