package ptx

import (
	"fmt"
	"runtime"
	"sort"
	"sync"
)

// Global memory layout: allocations start at globalBase, each rounded up to
// 256 bytes and followed by an unmapped guard gap so that small overruns
// fault instead of landing in a neighbour.
const (
	globalBase = 1 << 32
	guardGap   = 64 << 10
	maxAlloc   = 1 << 34
)

// region is one device allocation.
type region struct {
	base uint64
	data []byte
	ro   bool // .const variables
}

func (r *region) end() uint64 { return r.base + uint64(len(r.data)) }

// Machine is an emulated device: global memory, loaded modules and launch
// settings. Its methods are safe for concurrent use; a Launch holds the
// machine for its whole duration.
type Machine struct {
	mu       sync.Mutex
	atomMu   sync.Mutex // serialises global atomics across blocks
	regions  []*region  // sorted by base
	next     uint64
	loaded   map[*Module]*Loaded
	parallel int
	stepCap  uint64
	executed uint64
}

// NewMachine returns an empty device whose launches use GOMAXPROCS workers.
func NewMachine() *Machine {
	return &Machine{next: globalBase, loaded: map[*Module]*Loaded{}}
}

// SetParallel sets how many blocks run at once (n <= 0: GOMAXPROCS).
func (m *Machine) SetParallel(n int) {
	m.mu.Lock()
	m.parallel = n
	m.mu.Unlock()
}

// SetStepLimit bounds the instructions one thread may execute in a launch
// (0: unbounded); a thread past it fails the launch instead of hanging.
func (m *Machine) SetStepLimit(n uint64) {
	m.mu.Lock()
	m.stepCap = n
	m.mu.Unlock()
}

// Executed is the number of instructions all launches so far have executed
// (guarded-off instructions included).
func (m *Machine) Executed() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.executed
}

func (m *Machine) workers() int {
	if m.parallel > 0 {
		return m.parallel
	}
	return runtime.GOMAXPROCS(0)
}

// Alloc returns a zeroed, 256-byte aligned device buffer of n bytes.
func (m *Machine) Alloc(n int) (uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, err := m.alloc(n, 256)
	if err != nil {
		return 0, err
	}
	return r.base, nil
}

func (m *Machine) alloc(n, align int) (*region, error) {
	if n < 0 || int64(n) > maxAlloc {
		return nil, fmt.Errorf("ptx: bad allocation size %d", n)
	}
	if align < 256 {
		align = 256
	}
	base := (m.next + uint64(align) - 1) / uint64(align) * uint64(align)
	if base+uint64(n) >= sharedWindow {
		return nil, fmt.Errorf("ptx: device address space exhausted")
	}
	r := &region{base: base, data: make([]byte, n)}
	m.next = base + uint64(n+255)/256*256 + guardGap
	m.regions = append(m.regions, r) // bases only grow, so the slice stays sorted
	return r, nil
}

// Free releases an allocation made by Alloc.
func (m *Machine) Free(addr uint64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	i := m.find(addr)
	if i < 0 || m.regions[i].base != addr {
		return fmt.Errorf("ptx: free of 0x%x, which is not an allocation", addr)
	}
	if m.regions[i].ro || m.isModuleVar(m.regions[i]) {
		return fmt.Errorf("ptx: free of 0x%x, a module variable", addr)
	}
	m.regions = append(m.regions[:i], m.regions[i+1:]...)
	return nil
}

func (m *Machine) isModuleVar(r *region) bool {
	for _, l := range m.loaded {
		for _, v := range l.regions {
			if v == r {
				return true
			}
		}
	}
	return false
}

// find returns the index of the region containing addr, or -1.
func (m *Machine) find(addr uint64) int {
	rs := m.regions
	i := sort.Search(len(rs), func(i int) bool { return rs[i].base > addr }) - 1
	if i < 0 || addr >= rs[i].end() && !(addr == rs[i].base && len(rs[i].data) == 0) {
		return -1
	}
	return i
}

// span returns the bytes [addr, addr+n) of one allocation.
func (m *Machine) span(addr uint64, n int) ([]byte, *region, error) {
	i := m.find(addr)
	if i < 0 {
		return nil, nil, fmt.Errorf("address 0x%x is not in any allocation", addr)
	}
	r := m.regions[i]
	off := addr - r.base
	if uint64(n) > uint64(len(r.data))-off {
		return nil, nil, fmt.Errorf("access of %d bytes at 0x%x runs past the end of the %d-byte allocation at 0x%x", n, addr, len(r.data), r.base)
	}
	return r.data[off : off+uint64(n)], r, nil
}

// Write copies b to device memory at addr.
func (m *Machine) Write(addr uint64, b []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	dst, _, err := m.span(addr, len(b))
	if err != nil {
		return fmt.Errorf("ptx: write: %v", err)
	}
	copy(dst, b)
	return nil
}

// Read copies device memory at addr into b.
func (m *Machine) Read(addr uint64, b []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	src, _, err := m.span(addr, len(b))
	if err != nil {
		return fmt.Errorf("ptx: read: %v", err)
	}
	copy(b, src)
	return nil
}

// Loaded is a module placed on a Machine: its .global and .const variables
// live in device memory (cuModuleLoad / cuModuleGetGlobal).
type Loaded struct {
	mod     *Module
	addrs   []uint64
	regions []*region
}

// Load allocates and initialises mod's module variables on m. Loading the
// same module twice returns the first placement. Launch loads on demand.
func (m *Machine) Load(mod *Module) (*Loaded, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.load(mod)
}

func (m *Machine) load(mod *Module) (*Loaded, error) {
	if l, ok := m.loaded[mod]; ok {
		return l, nil
	}
	l := &Loaded{mod: mod}
	for _, v := range mod.vars {
		r, err := m.alloc(v.size, v.align)
		if err != nil {
			return nil, err
		}
		copy(r.data, v.init)
		r.ro = v.space == spConst
		l.addrs = append(l.addrs, r.base)
		l.regions = append(l.regions, r)
	}
	m.loaded[mod] = l
	return l, nil
}

// Symbol returns the device address and size of a module-scope .global or
// .const variable.
func (l *Loaded) Symbol(name string) (uint64, int, error) {
	i, ok := l.mod.varIdx[name]
	if !ok {
		return 0, 0, fmt.Errorf("ptx: no module variable %q", name)
	}
	return l.addrs[i], l.mod.vars[i].size, nil
}
