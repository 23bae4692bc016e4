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

// FuzzInstruction substitutes fuzzed instruction text into a small kernel,
// so mutations exercise decoding and execution rather than the file layout.
func FuzzInstruction(f *testing.F) {
	for _, s := range []string{
		"add.s32 %r2, %r1, 1;", "ld.global.v2.u32 {%r2, %r3}, [%rd1+8];", "st.global.u8 [%rd1], %r1;",
		"setp.lt.s32 %p1|%p2, %r1, 3; @%p1 bra L;", "cvt.rn.f32.s32 %f1, %r1;", "bfe.u32 %r2, %r1, 3, 40;",
		"atom.global.cas.b32 %r2, [%rd1], %r1, 5;", "div.s32 %r2, %r1, %r1;", "bar.sync 0;",
		"mov.b64 {%r2, %r3}, %rd1;", "shf.l.wrap.b32 %r2, %r1, %r1, %r1;", "cvta.to.shared.u64 %rd2, %rd1; ld.shared.u32 %r2, [%rd2];",
		"fma.rn.f64 %fd1, %fd1, %fd1, %fd1;", "prmt.b32 %r2, %r1, %r1, 0x3210;", "L: add.s32 %r1, %r1, 1; bra L;",
		"shfl.sync.bfly.b32 %r2|%p1, %r1, 1, 31, 15;", "shfl.sync.idx.b32 %r2, %r1, %r1, 0x1f, -1;",
		"setp.lt.u32 %p1, %r1, 2; vote.sync.ballot.b32 %r2, !%p1, -1;", "vote.sync.uni.pred %p2, %p1, 15;",
		"activemask.b32 %r2;", "setp.eq.u32 %p1, %r1, 1; @%p1 bra L; bar.warp.sync -1;",
		"mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%r1, %r2, %r3, %r4}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, {%r1, %r2, %r3, %r4};",
		"mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%f1, %f2, %f3, %f1}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, {%f1, %f2, %f3, %f1};",
		"mov.u32 %r2, sh; shl.b32 %r3, %r1, 4; add.u32 %r2, %r2, %r3; ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%r2, %r3, %r4, %r5}, [%r2];",
	} {
		f.Add(s)
	}
	tmpl := `
.version 7.0
.target sm_80
.address_size 64
.global .align 4 .b8 g[64];
.visible .entry k(.param .u64 k_param_0, .param .u32 k_param_1)
{
	.reg .pred %p<4>;
	.reg .b16 %rs<4>;
	.reg .b32 %r<8>;
	.reg .b64 %rd<4>;
	.reg .f32 %f<4>;
	.reg .f64 %fd<4>;
	.shared .align 16 .b8 sh[512];
	ld.param.u64 %rd1, [k_param_0];
	mov.u32 %r1, %tid.x;
	INSN
L:
	ret;
}
`
	f.Fuzz(func(t *testing.T, insn string) {
		mod, err := Parse(strings.Replace(tmpl, "INSN", insn, 1))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "ptx: ") {
				t.Fatalf("error without the package prefix: %v", err)
			}
			return
		}
		m := NewMachine()
		m.SetStepLimit(5000)
		m.SetParallel(1)
		buf, _ := m.Alloc(256)
		for _, name := range mod.Kernels() {
			k, _ := mod.Kernel(name)
			if len(k.Params()) == 2 {
				_ = m.Launch(k, Dim3{2, 1, 1}, Dim3{4, 1, 1}, 0, buf, 3)
				_ = m.Launch(k, Dim3{1, 1, 1}, Dim3{32, 1, 1}, 0, buf, 3) // a full warp
			}
		}
	})
}
