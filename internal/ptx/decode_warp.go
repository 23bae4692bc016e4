package ptx

// Decoding of the warp collectives: shfl.sync, vote.sync, activemask,
// bar.warp.sync, mma.sync and ldmatrix. Their semantics live in warp.go and mma.go.

var shflModes = map[string]uint8{"up": shflUp, "down": shflDown, "bfly": shflBfly, "idx": shflIdx}
var voteModes = map[string]uint8{"all": voteAll, "any": voteAny, "uni": voteUni, "ballot": voteBallot}

func (b *builder) decWarp(in *inst, base string, m mods, ops []rawOp) error {
	line := int(in.line)
	b32 := ptype{kB, 32}
	u32 := ptype{kU, 32}
	switch base {
	case "shfl":
		if !m.flags["sync"] {
			return errAt(line, "unsupported instruction %s: shfl without .sync is not supported on sm_70+", m.full)
		}
		mode, ok := oneOf(m.flags, shflModes)
		if !ok || len(m.flags) != 2 || len(m.types) != 1 || m.types[0] != b32 || m.hasSp || m.rnd != rndNone {
			return errAt(line, "unsupported instruction %s: want shfl.sync.{up,down,bfly,idx}.b32", m.full)
		}
		if len(ops) != 5 {
			return errAt(line, "%s takes 5 operands, found %d", m.full, len(ops))
		}
		in.op, in.wmode, in.t, in.w = opShfl, mode, b32, 32
		d := ops[0]
		var err error
		if d.kind == rkPair {
			if in.d2, in.d2mask, err = b.dst(rawOp{kind: rkReg, name: d.name2, line: d.line}, ptype{kPred, 1}); err != nil {
				return err
			}
			d = rawOp{kind: rkReg, name: d.name, line: d.line}
		}
		if in.d, in.dmask, err = b.dst(d, b32); err != nil {
			return err
		}
		srcs := []*int32{&in.a, &in.b, &in.c, &in.e}
		for i, t := range []ptype{b32, u32, u32, u32} {
			if *srcs[i], err = b.src(ops[i+1], t); err != nil {
				return err
			}
		}
		return nil
	case "vote":
		if !m.flags["sync"] {
			return errAt(line, "unsupported instruction %s: vote without .sync is not supported on sm_70+", m.full)
		}
		mode, ok := oneOf(m.flags, voteModes)
		if !ok || len(m.flags) != 2 || len(m.types) != 1 || m.hasSp || m.rnd != rndNone {
			return errAt(line, "unsupported instruction %s: want vote.sync.{all,any,uni}.pred or vote.sync.ballot.b32", m.full)
		}
		dt := ptype{kPred, 1}
		if mode == voteBallot {
			dt = b32
		}
		if m.types[0] != dt {
			return errAt(line, "%s: vote.sync.%s needs type %v", m.full, [...]string{"all", "any", "uni", "ballot"}[mode], dt)
		}
		if len(ops) != 3 {
			return errAt(line, "%s takes 3 operands, found %d", m.full, len(ops))
		}
		in.op, in.wmode = opVote, mode
		var err error
		if in.d, in.dmask, err = b.dst(ops[0], dt); err != nil {
			return err
		}
		p := ops[1]
		in.cneg, p.neg = p.neg, false
		if in.a, err = b.src(p, ptype{kPred, 1}); err != nil {
			return err
		}
		in.e, err = b.src(ops[2], u32)
		return err
	case "activemask":
		if len(m.flags) != 0 || len(m.types) != 1 || m.types[0] != b32 || m.hasSp || m.rnd != rndNone {
			return errAt(line, "unsupported instruction %s: want activemask.b32", m.full)
		}
		if len(ops) != 1 {
			return errAt(line, "%s takes 1 operand, found %d", m.full, len(ops))
		}
		in.op = opActivemask
		var err error
		in.d, in.dmask, err = b.dst(ops[0], b32)
		return err
	case "bar.warp":
		if m.full != "bar.warp.sync" {
			return errAt(line, "unsupported instruction %s", m.full)
		}
		if len(ops) != 1 {
			return errAt(line, "%s takes 1 operand, found %d", m.full, len(ops))
		}
		in.op = opBarWarp
		var err error
		in.e, err = b.src(ops[0], u32)
		return err
	case "mma":
		return b.decMma(in, m, ops)
	default:
		return b.decLdmatrix(in, m, ops)
	}
}

// oneOf returns the value of the single flag of f found in names.
func oneOf(f map[string]bool, names map[string]uint8) (uint8, bool) {
	var v uint8
	n := 0
	for k := range f {
		if x, ok := names[k]; ok {
			v = x
			n++
		}
	}
	return v, n == 1
}

// mmaShape gives the register counts of A, B and C/D of an mma kind.
func mmaShape(kind uint8) (na, nb, nc int) {
	switch kind {
	case mmaI8K32:
		return 4, 2, 4
	case mmaI8K16:
		return 2, 1, 4
	}
	return 4, 2, 4 // mmaTF32K8
}

func (b *builder) decMma(in *inst, m mods, ops []rawOp) error {
	line := int(in.line)
	bad := func() error {
		return errAt(line, "unsupported instruction %s: supported are mma.sync.aligned.{m16n8k32,m16n8k16}.row.col{.satfinite}.s32.{s8,u8}.{s8,u8}.s32 and mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", m.full)
	}
	f := m.flags
	if !f["sync"] || !f["aligned"] || !f["row"] || !f["col"] || m.hasSp || m.rnd != rndNone {
		return bad()
	}
	s32, f32 := ptype{kS, 32}, ptype{kF, 32}
	isI8 := func(t ptype) bool { return t == ptype{kS, 8} || t == ptype{kU, 8} }
	switch {
	case f["tf32"]:
		if len(f) != 6 || !f["m16n8k8"] || len(m.types) != 2 || m.types[0] != f32 || m.types[1] != f32 {
			return bad()
		}
		in.wmode, in.t, in.t2 = mmaTF32K8, f32, f32
	case len(m.types) == 4 && m.types[0] == s32 && m.types[3] == s32 && isI8(m.types[1]) && isI8(m.types[2]):
		n := 5
		if f["satfinite"] {
			in.flags |= flSat
			n++
		}
		switch {
		case f["m16n8k32"]:
			in.wmode = mmaI8K32
		case f["m16n8k16"]:
			in.wmode = mmaI8K16
		default:
			return bad()
		}
		if len(f) != n {
			return bad()
		}
		in.t, in.t2 = m.types[1], m.types[2]
	default:
		return bad()
	}
	in.op = opMma
	if len(ops) != 4 {
		return errAt(line, "%s takes 4 operands, found %d", m.full, len(ops))
	}
	na, nb, nc := mmaShape(in.wmode)
	ct := ptype{kB, 32}
	if in.wmode == mmaTF32K8 {
		ct = f32
	}
	var list []int32
	for i, want := range []int{nc, na, nb, nc} {
		o := ops[i]
		if o.kind != rkVec || len(o.elems) != want {
			return errAt(line, "%s: operand %d must be a vector of %d registers", m.full, i+1, want)
		}
		for _, e := range o.elems {
			if e.kind == rkSink {
				return errAt(line, "%s: '_' is not allowed in mma operands", m.full)
			}
			var r int32
			var err error
			switch {
			case i == 0:
				r, _, err = b.dst(e, ct)
			case i == 3:
				r, err = b.src(e, ct)
			default:
				r, err = b.src(e, ptype{kB, 32})
			}
			if err != nil {
				return err
			}
			if b.regBits[r] != 32 && !b.isConst[r] {
				return errAt(line, "%s: register %s is not 32 bits wide", m.full, e.name)
			}
			list = append(list, r)
		}
	}
	in.target = int32(len(b.k.xops))
	b.k.xops = append(b.k.xops, list)
	return nil
}

func (b *builder) decLdmatrix(in *inst, m mods, ops []rawOp) error {
	line := int(in.line)
	f := m.flags
	n := 0
	for i, x := range []string{"x1", "x2", "x4"} {
		if f[x] {
			n = 1 << i
		}
	}
	want := 4
	if f["trans"] {
		want++
		in.flags |= flTrans
	}
	if !f["sync"] || !f["aligned"] || !f["m8n8"] || n == 0 || len(f) != want || len(m.types) != 1 ||
		m.types[0] != (ptype{kB, 16}) || m.hasSp && m.sp != spShared || m.rnd != rndNone {
		return errAt(line, "unsupported instruction %s: want ldmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}{.shared}.b16", m.full)
	}
	if len(ops) != 2 {
		return errAt(line, "%s takes 2 operands, found %d", m.full, len(ops))
	}
	if ops[0].kind != rkVec || len(ops[0].elems) != n {
		return errAt(line, "%s needs a vector of %d registers", m.full, n)
	}
	in.op, in.sp, in.vec, in.w, in.t = opLdmatrix, m.sp, uint8(n), 32, ptype{kB, 32}
	for i, e := range ops[0].elems {
		var err error
		if in.v[i], in.vmask[i], err = b.dst(e, ptype{kB, 32}); err != nil {
			return err
		}
	}
	symSp, err := b.addr(in, ops[1])
	if err != nil {
		return err
	}
	if ops[1].base.kind == rkSym && symSp != spShared {
		return errAt(line, "%s: %s is not a .shared variable", m.full, ops[1].base.name)
	}
	if ops[1].base.kind == rkSym && in.sp == spGeneric {
		return errAt(line, "%s: generic access to shared variable %s needs cvta", m.full, ops[1].base.name)
	}
	return nil
}
