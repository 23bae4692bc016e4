package ptx

import (
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

var (
	modMu    sync.Mutex
	modCache = map[string]*Module{}
)

// loadModule parses testdata/name.ptx once per test binary.
func loadModule(t testing.TB, name string) *Module {
	t.Helper()
	modMu.Lock()
	defer modMu.Unlock()
	if m, ok := modCache[name]; ok {
		return m
	}
	src, err := os.ReadFile(filepath.Join("testdata", name+".ptx"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := Parse(string(src))
	if err != nil {
		t.Fatalf("%s.ptx: %v", name, err)
	}
	modCache[name] = m
	return m
}

func kernel(t testing.TB, mod, name string) *Kernel {
	t.Helper()
	k, err := loadModule(t, mod).Kernel(name)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// dev wraps a Machine with fatal-on-error helpers.
type dev struct {
	t testing.TB
	m *Machine
}

func newDev(t testing.TB) *dev { return &dev{t, NewMachine()} }

func (d *dev) alloc(n int) uint64 {
	d.t.Helper()
	a, err := d.m.Alloc(n)
	if err != nil {
		d.t.Fatal(err)
	}
	return a
}

func (d *dev) upload(b []byte) uint64 {
	d.t.Helper()
	a := d.alloc(len(b))
	if err := d.m.Write(a, b); err != nil {
		d.t.Fatal(err)
	}
	return a
}

func (d *dev) read(a uint64, n int) []byte {
	d.t.Helper()
	b := make([]byte, n)
	if err := d.m.Read(a, b); err != nil {
		d.t.Fatal(err)
	}
	return b
}

func (d *dev) launch(k *Kernel, grid, block Dim3, dyn uint32, args ...uint64) {
	d.t.Helper()
	if err := d.m.Launch(k, grid, block, dyn, args...); err != nil {
		d.t.Fatal(err)
	}
}

func u64bytes(v []uint64) []byte {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], x)
	}
	return b
}

func u32bytes(v []uint32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], x)
	}
	return b
}

func bytesU64(b []byte) []uint64 {
	v := make([]uint64, len(b)/8)
	for i := range v {
		v[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	return v
}

func bytesU32(b []byte) []uint32 {
	v := make([]uint32, len(b)/4)
	for i := range v {
		v[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return v
}

func blocks(n, bs int) Dim3 { return Dim3{uint32((n + bs - 1) / bs), 1, 1} }

func rng(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)) }

// edgeInts are values of width w at the classic boundaries, as uint64 bits.
func edgeInts(w int) []uint64 {
	m := ^uint64(0) >> (64 - w)
	mn := uint64(1) << (w - 1)
	return []uint64{0, 1, 2, m, m - 1, mn, mn - 1, mn + 1, 3, 7, uint64(w - 1), uint64(w), 31, 32, 63, 64}
}
