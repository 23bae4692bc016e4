package ptx

import (
	"encoding/binary"
	"testing"
)

// TestPredImmediate: LLVM writes a true predicate as -1 (mov.pred %p, -1;
// the int8 tensor-core kernel has one); any nonzero immediate is true.
func TestPredImmediate(t *testing.T) {
	for _, c := range []struct {
		imm  string
		want uint32
	}{{"-1", 7}, {"1", 7}, {"0", 3}} {
		src := `.version 7.0
.target sm_80
.address_size 64
.visible .entry k(
	.param .u64 k_param_0
)
{
	.reg .pred 	%p<2>;
	.reg .b32 	%r<2>;
	.reg .b64 	%rd<3>;
	ld.param.u64 	%rd1, [k_param_0];
	cvta.to.global.u64 	%rd2, %rd1;
	mov.pred 	%p1, ` + c.imm + `;
	selp.b32 	%r1, 7, 3, %p1;
	st.global.u32 	[%rd2], %r1;
	ret;
}
`
		mod, err := Parse(src)
		if err != nil {
			t.Fatalf("mov.pred %s: %v", c.imm, err)
		}
		k, err := mod.Kernel("k")
		if err != nil {
			t.Fatal(err)
		}
		m := NewMachine()
		p, err := m.Alloc(4)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Launch(k, Dim3{1, 1, 1}, Dim3{1, 1, 1}, 0, p); err != nil {
			t.Fatal(err)
		}
		b := make([]byte, 4)
		if err := m.Read(p, b); err != nil {
			t.Fatal(err)
		}
		if got := binary.LittleEndian.Uint32(b); got != c.want {
			t.Errorf("mov.pred %s: selp gave %d, want %d", c.imm, got, c.want)
		}
	}
	if _, err := Parse(`.version 7.0
.target sm_80
.address_size 64
.visible .entry k()
{
	.reg .pred 	%p<2>;
	mov.pred 	%p1, x;
	ret;
}
`); err == nil {
		t.Error("mov.pred with a bad immediate parsed")
	}
}
