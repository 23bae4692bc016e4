package ptx

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// lineOf returns the 1-based line of the first occurrence of text after the
// .entry of kernel in testdata/mod.ptx.
func lineOf(t *testing.T, mod, kernel, text string) int {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", mod+".ptx"))
	if err != nil {
		t.Fatal(err)
	}
	in := false
	for i, l := range strings.Split(string(src), "\n") {
		if strings.Contains(l, ".entry "+kernel+"(") {
			in = true
		}
		if in && strings.Contains(l, text) {
			return i + 1
		}
	}
	t.Fatalf("%q not found in %s", text, kernel)
	return 0
}

func execErr(t *testing.T, err error) *ExecError {
	t.Helper()
	var e *ExecError
	if !errors.As(err, &e) {
		t.Fatalf("want an *ExecError, got %v", err)
	}
	t.Log(err)
	return e
}

func TestOutOfBounds(t *testing.T) {
	d := newDev(t)
	out := d.alloc(4 * 150)
	err := d.m.Launch(kernel(t, "errors", "oob"), Dim3{4, 1, 1}, Dim3{64, 1, 1}, 0, out, 200)
	e := execErr(t, err)
	want := ExecError{Kernel: "oob", Block: Dim3{2, 0, 0}, Thread: Dim3{22, 0, 0}, Line: lineOf(t, "errors", "oob", "st.global.u32")}
	if e.Kernel != want.Kernel || e.Block != want.Block || e.Thread != want.Thread || e.Line != want.Line {
		t.Errorf("got %+v, want %+v", *e, want)
	}
	if !strings.Contains(e.Msg, "out-of-bounds") {
		t.Errorf("message %q does not say out-of-bounds", e.Msg)
	}
	// The in-bounds blocks before the fault still ran.
	if got := bytesU32(d.read(out, 4*150)); got[127] != 127 {
		t.Errorf("out[127] = %d", got[127])
	}
}

func TestBarrierAfterExit(t *testing.T) {
	d := newDev(t)
	out := d.alloc(4 * 64)
	k := kernel(t, "errors", "earlyexit")
	d.launch(k, Dim3{1, 1, 1}, Dim3{64, 1, 1}, 0, out, 64)
	e := execErr(t, d.m.Launch(k, Dim3{1, 1, 1}, Dim3{64, 1, 1}, 0, out, 40))
	if e.Line != lineOf(t, "errors", "earlyexit", "bar.sync") || !strings.Contains(e.Msg, "(40,0,0) exited") {
		t.Errorf("got %+v", *e)
	}
}

func TestDivergentBarrier(t *testing.T) {
	d := newDev(t)
	out := d.alloc(4 * 32)
	e := execErr(t, d.m.Launch(kernel(t, "errors", "divbar"), Dim3{1, 1, 1}, Dim3{32, 1, 1}, 0, out))
	if !strings.Contains(e.Msg, "different barrier") {
		t.Errorf("got %+v", *e)
	}
}

func TestDivideByZero(t *testing.T) {
	d := newDev(t)
	a := d.upload(u32bytes([]uint32{10, 20, 30, 40}))
	b := d.upload(u32bytes([]uint32{1, 2, 0, 4}))
	out := d.alloc(16)
	e := execErr(t, d.m.Launch(kernel(t, "errors", "divide"), Dim3{1, 1, 1}, Dim3{4, 1, 1}, 0, out, a, b, 4))
	if e.Thread != (Dim3{2, 0, 0}) || !strings.Contains(e.Msg, "division by zero") {
		t.Errorf("got %+v", *e)
	}
}

func TestMisaligned(t *testing.T) {
	d := newDev(t)
	p := d.alloc(16)
	k := kernel(t, "errors", "misaligned")
	d.launch(k, Dim3{1, 1, 1}, Dim3{1, 1, 1}, 0, p, 4)
	e := execErr(t, d.m.Launch(k, Dim3{1, 1, 1}, Dim3{1, 1, 1}, 0, p, 2))
	if !strings.Contains(e.Msg, "misaligned") {
		t.Errorf("got %+v", *e)
	}
	e = execErr(t, d.m.Launch(k, Dim3{1, 1, 1}, Dim3{1, 1, 1}, 0, p, 16))
	if !strings.Contains(e.Msg, "out-of-bounds") {
		t.Errorf("got %+v", *e)
	}
}

func TestStepLimit(t *testing.T) {
	d := newDev(t)
	flag := d.alloc(4)
	d.m.SetStepLimit(10000)
	e := execErr(t, d.m.Launch(kernel(t, "errors", "spin"), Dim3{2, 1, 1}, Dim3{2, 1, 1}, 0, flag))
	if !strings.Contains(e.Msg, "step limit") || e.Block != (Dim3{}) || e.Thread != (Dim3{}) {
		t.Errorf("got %+v", *e)
	}
}

func TestLaunchErrors(t *testing.T) {
	d := newDev(t)
	mod := loadModule(t, "errors")
	if _, err := mod.Kernel("nope"); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("unknown kernel: %v", err)
	}
	k := kernel(t, "errors", "oob")
	out := d.alloc(64)
	cases := []struct {
		name        string
		grid, block Dim3
		dyn         uint32
		args        []uint64
		want        string
	}{
		{"args", Dim3{1, 1, 1}, Dim3{1, 1, 1}, 0, []uint64{out}, "takes 2 arguments, got 1"},
		{"threads", Dim3{1, 1, 1}, Dim3{64, 32, 1}, 0, []uint64{out, 1}, "more than 1024"},
		{"blockdim", Dim3{1, 1, 1}, Dim3{2048, 1, 1}, 0, []uint64{out, 1}, "exceeds"},
		{"empty", Dim3{0, 1, 1}, Dim3{1, 1, 1}, 0, []uint64{out, 1}, "empty"},
		{"shared", Dim3{1, 1, 1}, Dim3{1, 1, 1}, 228 << 10, []uint64{out, 1}, "shared memory"},
	}
	for _, c := range cases {
		err := d.m.Launch(k, c.grid, c.block, c.dyn, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "oob") {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
	if err := d.m.Launch(nil, Dim3{1, 1, 1}, Dim3{1, 1, 1}, 0); err == nil {
		t.Error("nil kernel: no error")
	}
	if err := d.m.Free(out + 4); err == nil {
		t.Error("free of an interior pointer: no error")
	}
	if err := d.m.Free(out); err != nil {
		t.Error(err)
	}
	if err := d.m.Write(out, []byte{1}); err == nil {
		t.Error("write after free: no error")
	}
	a, _ := d.m.Alloc(10)
	if err := d.m.Read(a+8, make([]byte, 4)); err == nil {
		t.Error("read past the end: no error")
	}
	if a%256 != 0 || a == 0 {
		t.Errorf("Alloc returned %#x", a)
	}
}

const smallPTX = `
.version 7.0
.target sm_80
.address_size 64

.visible .entry k(
	.param .u64 k_param_0
)
{
	.reg .b32 	%r<4>;
	.reg .b64 	%rd<3>;

	ld.param.u64 	%rd1, [k_param_0];
	mov.u32 	%r1, %tid.x;
	INSN
	ret;
}
`

func TestParseRejects(t *testing.T) {
	cases := []struct{ insn, want string }{
		{"shfl.idx.b32 %r2, %r1, 0, 31;", "line 15: unsupported instruction shfl.idx.b32: shfl without .sync"},
		{"shfl.sync.idx.u32 %r2, %r1, 0, 31, -1;", "line 15: unsupported instruction shfl.sync.idx.u32"},
		{"shfl.sync.idx.b32 %r2, %r1, 0, -1;", "line 15: shfl.sync.idx.b32 takes 5 operands"},
		{"vote.ballot.b32 %r2, 1, -1;", "line 15: unsupported instruction vote.ballot.b32: vote without .sync"},
		{"vote.sync.ballot.pred %r2, 1, -1;", "line 15: vote.sync.ballot.pred: vote.sync.ballot needs type .b32"},
		{"redux.sync.add.s32 %r2, %r1, -1;", "line 15: unsupported instruction redux.sync.add.s32: this warp-level primitive is not modelled"},
		{"match.any.sync.b32 %r2, %r1, -1;", "line 15: unsupported instruction match.any.sync.b32"},
		{"bar.warp.sync -1, 1;", "line 15: bar.warp.sync takes 1 operand, found 2"},
		{"bar.warp.arrive -1;", "line 15: unsupported instruction bar.warp.arrive"},
		{"activemask.b64 %rd2;", "line 15: unsupported instruction activemask.b64"},
		{"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%r1, %r1, %r1, %r1}, {%r1, %r1, %r1, %r1}, {%r1, %r1}, {%r1, %r1, %r1, %r1};", "line 15: unsupported instruction mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"},
		{"mma.sync.aligned.m16n8k32.row.row.s32.s8.s8.s32 {%r1, %r1, %r1, %r1}, {%r1, %r1, %r1, %r1}, {%r1, %r1}, {%r1, %r1, %r1, %r1};", "line 15: unsupported instruction mma.sync.aligned.m16n8k32.row.row"},
		{"mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%r1, %r1, %r1, %r1}, {%r1, %r1}, {%r1, %r1}, {%r1, %r1, %r1, %r1};", "line 15: mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32: operand 2 must be a vector of 4 registers"},
		{"mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32 {%r1, %r1, %r1, %r1}, {%r1, %r1}, {%rd1}, {%r1, %r1, %r1, %r1};", "line 15: mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32: register %rd1 is not 32 bits wide"},
		{"mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%r1, %r1, %r1, %r1}, {%r1, %r1, %r1, %r1}, {%r1, %r1}, {%r1, %r1};", "operand 4 must be a vector of 4 registers"},
		{"mma.sync.aligned.m16n8k8.row.col.satfinite.f32.tf32.tf32.f32 {%r1, %r1, %r1, %r1}, {%r1, %r1, %r1, %r1}, {%r1, %r1}, {%r1, %r1, %r1, %r1};", "unsupported instruction mma"},
		{"ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r1, %r2}, [%rd1];", "line 15: ldmatrix.sync.aligned.m8n8.x4.shared.b16 needs a vector of 4 registers"},
		{"ldmatrix.sync.aligned.m8n8.x2.global.b16 {%r1, %r2}, [%rd1];", "line 15: unsupported instruction ldmatrix.sync.aligned.m8n8.x2.global.b16"},
		{"stmatrix.sync.aligned.m8n8.x1.shared.b16 [%rd1], {%r1};", "line 15: unsupported instruction stmatrix"},
		{"mov.b32 %r2, {%r1};", "line 15: bad vector mov: one-element vector"},
		{"ld.global.v2.u32 {%r2}, [%rd1];", "line 15: ld.global.v2.u32 needs a 2-element vector"},
		{"div.approx.f32 %r2, %r1, %r1;", "line 15: unsupported instruction div.approx.f32"},
		{"add.ftz.f32 %r2, %r1, %r1;", "line 15: unsupported instruction add.ftz.f32"},
		{"add.rz.f32 %r2, %r1, %r1;", "line 15: unsupported instruction add.rz.f32"},
		{"bar.sync 1;", "line 15: unsupported instruction bar.sync: only barrier 0"},
		{"bar.sync 0, %r1;", "line 15: unsupported instruction bar.sync: thread count"},
		{"call foo, (%r1);", "line 15: unsupported instruction call"},
		{"mov.u32 %r2, %clock;", "line 15: special register %clock"},
		{"add.s32 %r9, %r1, 1;", "line 15: undeclared register %r9"},
		{"bra NOWHERE;", "line 15: undefined label NOWHERE"},
		{"frobnicate.b32 %r1;", "line 15: unsupported instruction frobnicate.b32"},
		{"add.s32 %r2, %r1;", "line 15: add.s32 takes 3 operands"},
		{"st.const.u32 [%rd1], %r1;", "line 15: unsupported instruction st.const.u32"},
		{"cvt.f32.s32 %r2, %r1;", "line 15: unsupported instruction cvt.f32.s32"},
		{"add.s64 %rd2, %r1, %r1;", "line 15: register %r1 is narrower than type .s64"},
		{"ld.global.u64 %r2, [%rd1];", "line 15: register %r2 is narrower than type .u64"},
		{"tex.2d.v4.f32.f32 {%r1, %r1, %r1, %r1}, [%rd1, {%r1, %r1}];", "line 15: "},
	}
	for _, c := range cases {
		_, err := Parse(strings.Replace(smallPTX, "INSN", c.insn, 1))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "ptx: ") {
			t.Errorf("%s: got %v, want %q", c.insn, err, c.want)
		}
	}
	if _, err := Parse(strings.Replace(smallPTX, "INSN", "add.s32 %r2, %r1, 1;", 1)); err != nil {
		t.Errorf("control case: %v", err)
	}
}

func TestConstStore(t *testing.T) {
	src := strings.Replace(smallPTX, "INSN", "mov.u64 %rd2, tab; st.u32 [%rd2], %r1;", 1)
	src = strings.Replace(src, ".visible .entry", ".const .align 4 .b8 tab[8] = {1, 2, 3, 4};\n.visible .entry", 1)
	mod, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	k, _ := mod.Kernel("k")
	d := newDev(t)
	e := execErr(t, d.m.Launch(k, Dim3{1, 1, 1}, Dim3{1, 1, 1}, 0, 0))
	if !strings.Contains(e.Msg, "read-only") {
		t.Errorf("got %+v", *e)
	}
}

func TestContractionHazards(t *testing.T) {
	f32 := `
.version 7.0
.target sm_80
.address_size 64
.visible .entry k()
{
	.reg .f32 %f<5>;
	mov.f32 %f1, 0f3F800000;
	MUL
	add.f32 %f3, %f2, %f1;
	ret;
}
`
	for _, c := range []struct {
		mul  string
		want []int
	}{
		{"mul.f32 %f2, %f1, %f1;", []int{9}},
		{"mul.rn.f32 %f2, %f1, %f1;", nil},
		{"mul.f32 %f4, %f1, %f1;", nil},
	} {
		mod, err := Parse(strings.Replace(f32, "MUL", c.mul, 1))
		if err != nil {
			t.Fatal(err)
		}
		if got := mod.ContractionHazards(); !slices.Equal(got, c.want) {
			t.Errorf("%s: got %v want %v", c.mul, got, c.want)
		}
	}
	for _, name := range []string{"floatops", "shared", "dp4a", "misc", "warp", "mma"} {
		if h := loadModule(t, name).ContractionHazards(); len(h) != 0 {
			t.Errorf("%s.ptx: contraction hazards at lines %v", name, h)
		}
	}
}
