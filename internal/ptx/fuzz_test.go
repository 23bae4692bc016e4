package ptx

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse checks Parse never panics, and that whatever it accepts can be
// launched without panicking (faults must come back as errors).
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.ptx"))
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add(strings.Replace(smallPTX, "INSN", "add.s32 %r2, %r1, 1;", 1))
	f.Fuzz(func(t *testing.T, src string) {
		mod, err := Parse(src)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "ptx: ") {
				t.Fatalf("error without the package prefix: %v", err)
			}
			return
		}
		total := 0
		for _, v := range mod.vars {
			total += v.size
		}
		if total > 1<<20 {
			return
		}
		m := NewMachine()
		m.SetStepLimit(20000)
		m.SetParallel(1)
		buf, _ := m.Alloc(4096)
		for _, name := range mod.Kernels() {
			k, err := mod.Kernel(name)
			if err != nil {
				t.Fatal(err)
			}
			if k.LocalBytes() > 1<<20 {
				continue
			}
			args := make([]uint64, len(k.Params()))
			for i := range args {
				args[i] = buf + uint64(64*i)
				if i == len(args)-1 {
					args[i] = 16
				}
			}
			_ = m.Launch(k, Dim3{2, 1, 1}, Dim3{8, 1, 1}, 64, args...)
		}
	})
}
