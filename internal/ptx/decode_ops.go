package ptx

func (b *builder) decMov(in *inst, m mods, ops []rawOp) error {
	line := int(in.line)
	t, err := m.one(line)
	if err != nil {
		return err
	}
	if err := m.only(line); err != nil {
		return err
	}
	if len(ops) != 2 {
		return errAt(line, "mov takes 2 operands")
	}
	in.t, in.w, in.sh = t, t.bits, 64-t.bits
	switch {
	case ops[0].kind == rkVec || ops[1].kind == rkVec:
		if t.k == kPred || ops[0].kind == rkVec && ops[1].kind == rkVec {
			return errAt(line, "bad vector mov")
		}
		vecOp, other := ops[0], ops[1]
		unpack := ops[0].kind == rkVec
		if !unpack {
			vecOp, other = ops[1], ops[0]
		}
		n := len(vecOp.elems)
		if n < 2 {
			return errAt(line, "bad vector mov: one-element vector")
		}
		eb := int(t.bits) / n
		if eb < 8 || eb*n != int(t.bits) {
			return errAt(line, "cannot split %v into %d parts", t, n)
		}
		et := ptype{kB, uint8(eb)}
		in.w, in.vec = uint8(eb), uint8(n)
		if unpack {
			in.op = opMovUnpack
			if in.a, err = b.src(other, t); err != nil {
				return err
			}
			for i, e := range vecOp.elems {
				in.v[i] = -1
				if e.kind == rkSink {
					continue
				}
				if in.v[i], in.vmask[i], err = b.dst(e, et); err != nil {
					return err
				}
			}
			return nil
		}
		in.op = opMovPack
		if in.d, in.dmask, err = b.dst(other, t); err != nil {
			return err
		}
		for i, e := range vecOp.elems {
			if e.kind == rkSink {
				return errAt(line, "'_' cannot be a source")
			}
			if in.v[i], err = b.src(e, et); err != nil {
				return err
			}
		}
		return nil
	case ops[1].kind == rkSym:
		in.op = opMov
		if in.d, in.dmask, err = b.dst(ops[0], t); err != nil {
			return err
		}
		in.a, _, err = b.sym(ops[1])
		return err
	}
	in.op = opMov
	return b.dsa(in, ops, t, t)
}

func (b *builder) decArith(in *inst, base string, m mods, ops []rawOp) error {
	line := int(in.line)
	t, err := m.one(line)
	if err != nil {
		return err
	}
	in.t, in.w, in.sh = t, t.bits, 64-t.bits
	need := func(n int) error {
		if len(ops) != n {
			return errAt(line, "%s takes %d operands, found %d", m.full, n, len(ops))
		}
		return nil
	}
	if t.k == kF {
		if err := m.only(line); err != nil {
			return err
		}
		n := 3
		switch base {
		case "add", "sub", "mul":
			if m.rnd != rndNone && m.rnd != rndRN {
				return errAt(line, "unsupported instruction %s: only round-to-nearest float arithmetic is modelled", m.full)
			}
			in.op = map[string]opcode{"add": opFAdd, "sub": opFSub, "mul": opFMul}[base]
			if m.rnd == rndNone {
				in.flags |= flPlain
			}
		case "fma", "mad", "div", "sqrt", "rcp":
			if m.rnd != rndRN {
				return errAt(line, "unsupported instruction %s: needs .rn (other roundings and approximations are not modelled)", m.full)
			}
			switch base {
			case "fma", "mad":
				in.op, n = opFFma, 4
			case "div":
				in.op = opFDiv
			case "sqrt":
				in.op, n = opFSqrt, 2
			case "rcp":
				in.op, n = opFRcp, 2
			}
		case "abs", "neg", "min", "max", "copysign", "testp":
			if m.rnd != rndNone {
				return errAt(line, "rounding modifier not allowed on %s", m.full)
			}
			switch base {
			case "abs":
				in.op, n = opFAbs, 2
			case "neg":
				in.op, n = opFNeg, 2
			case "min":
				in.op = opFMin
			case "max":
				in.op = opFMax
			case "copysign":
				in.op = opCopysign
			case "testp":
				return errAt(line, "testp needs a test: testp.finite/infinite/number/notanumber/normal/subnormal")
			}
		default:
			return errAt(line, "unsupported instruction %s", m.full)
		}
		if err := need(n); err != nil {
			return err
		}
		return b.dsa(in, ops, t, t, t, t)
	}
	if base == "testp" {
		return b.decTestp(in, m, ops)
	}
	if !t.isInt() || t.bits < 16 {
		return errAt(line, "unsupported instruction %s: type %v", m.full, t)
	}
	if m.rnd != rndNone {
		return errAt(line, "rounding modifier not allowed on %s", m.full)
	}
	signed := t.k == kS
	wide := ptype{t.k, t.bits * 2}
	switch base {
	case "add", "sub":
		if err := m.only(line, "cc", "sat"); err != nil {
			return err
		}
		if m.flags["sat"] {
			if t != (ptype{kS, 32}) || m.flags["cc"] {
				return errAt(line, "%s: .sat needs .s32", m.full)
			}
			in.flags |= flSat
		}
		cc := m.flags["cc"]
		if cc && t.bits < 32 {
			return errAt(line, "%s: .cc needs 32 or 64 bits", m.full)
		}
		switch {
		case base == "add" && cc:
			in.op = opAddCC
		case base == "add":
			in.op = opAdd
		case cc:
			in.op = opSubCC
		default:
			in.op = opSub
		}
		if err := need(3); err != nil {
			return err
		}
		return b.dsa(in, ops, t, t, t)
	case "addc", "subc":
		if err := m.only(line, "cc"); err != nil {
			return err
		}
		if t.bits < 32 {
			return errAt(line, "%s needs 32 or 64 bits", m.full)
		}
		in.op = opAddC
		if base == "subc" {
			in.op = opSubC
		}
		if m.flags["cc"] {
			in.flags |= flCC
		}
		if err := need(3); err != nil {
			return err
		}
		return b.dsa(in, ops, t, t, t)
	case "mul", "mad":
		if err := m.only(line, "lo", "hi", "wide"); err != nil {
			return err
		}
		if len(m.flags) != 1 {
			return errAt(line, "%s needs exactly one of .lo .hi .wide", m.full)
		}
		n := 3
		if base == "mad" {
			n = 4
		}
		if err := need(n); err != nil {
			return err
		}
		switch {
		case m.flags["lo"]:
			in.op = opMulLo
			if n == 4 {
				in.op = opMadLo
			}
			return b.dsa(in, ops, t, t, t, t)
		case m.flags["hi"]:
			in.op = pick(signed, opMulHiS, opMulHiU)
			if n == 4 {
				in.op = pick(signed, opMadHiS, opMadHiU)
			}
			return b.dsa(in, ops, t, t, t, t)
		default:
			if t.bits == 64 {
				return errAt(line, "%s: .wide needs 16 or 32 bits", m.full)
			}
			in.op = pick(signed, opMulWideS, opMulWideU)
			if n == 4 {
				in.op = pick(signed, opMadWideS, opMadWideU)
			}
			return b.dsa(in, ops, wide, t, t, wide)
		}
	case "div", "rem", "min", "max":
		if err := m.only(line); err != nil {
			return err
		}
		if t.k == kB {
			return errAt(line, "%s needs a signed or unsigned type", m.full)
		}
		switch base {
		case "div":
			in.op = pick(signed, opDivS, opDivU)
		case "rem":
			in.op = pick(signed, opRemS, opRemU)
		case "min":
			in.op = pick(signed, opMinS, opMinU)
		default:
			in.op = pick(signed, opMaxS, opMaxU)
		}
		if err := need(3); err != nil {
			return err
		}
		return b.dsa(in, ops, t, t, t)
	case "abs", "neg":
		if err := m.only(line); err != nil {
			return err
		}
		if !signed {
			return errAt(line, "%s needs a signed type", m.full)
		}
		in.op = pick(base == "abs", opAbs, opNeg)
		if err := need(2); err != nil {
			return err
		}
		return b.dsa(in, ops, t, t)
	}
	return errAt(line, "unsupported instruction %s", m.full)
}

func pick(c bool, a, b opcode) opcode {
	if c {
		return a
	}
	return b
}

var testpNames = map[string]uint8{"finite": 0, "infinite": 1, "number": 2, "notanumber": 3, "normal": 4, "subnormal": 5}

func (b *builder) decTestp(in *inst, m mods, ops []rawOp) error {
	line := int(in.line)
	if in.t.k != kF || len(m.flags) != 1 {
		return errAt(line, "bad testp %s", m.full)
	}
	for f := range m.flags {
		c, ok := testpNames[f]
		if !ok {
			return errAt(line, "unsupported modifier .%s in %s", f, m.full)
		}
		in.cmp = c
	}
	if len(ops) != 2 {
		return errAt(line, "testp takes 2 operands")
	}
	in.op = opTestp
	return b.dsa(in, ops, ptype{kPred, 1}, in.t)
}

func (b *builder) decBits(in *inst, base string, m mods, ops []rawOp) error {
	line := int(in.line)
	t, err := m.one(line)
	if err != nil {
		return err
	}
	in.t, in.w, in.sh = t, t.bits, 64-t.bits
	u32 := ptype{kU, 32}
	need := func(n int) error {
		if len(ops) != n {
			return errAt(line, "%s takes %d operands, found %d", m.full, n, len(ops))
		}
		return nil
	}
	if base != "shf" {
		if err := m.only(line); err != nil {
			return err
		}
	}
	bitsOK := func(allowed ...uint8) error {
		for _, a := range allowed {
			if t.bits == a && t.k != kF && t.k != kPred {
				return nil
			}
		}
		return errAt(line, "unsupported instruction %s: type %v", m.full, t)
	}
	switch base {
	case "and", "or", "xor", "not", "cnot":
		if t.k != kPred {
			if err := bitsOK(16, 32, 64); err != nil {
				return err
			}
		}
		if base == "cnot" && t.k == kPred {
			return errAt(line, "cnot does not take .pred")
		}
		in.op = map[string]opcode{"and": opAnd, "or": opOr, "xor": opXor, "not": opNot, "cnot": opCnot}[base]
		n := 3
		if base == "not" || base == "cnot" {
			n = 2
		}
		if err := need(n); err != nil {
			return err
		}
		return b.dsa(in, ops, t, t, t)
	case "shl", "shr":
		if err := bitsOK(16, 32, 64); err != nil {
			return err
		}
		switch {
		case base == "shl":
			in.op = opShl
		case t.k == kS:
			in.op = opShrS
		default:
			in.op = opShrU
		}
		if err := need(3); err != nil {
			return err
		}
		return b.dsa(in, ops, t, t, u32)
	case "bfe":
		if err := bitsOK(32, 64); err != nil {
			return err
		}
		if t.k == kB {
			return errAt(line, "bfe needs .u or .s")
		}
		in.op = pick(t.k == kS, opBfeS, opBfeU)
		if err := need(4); err != nil {
			return err
		}
		return b.dsa(in, ops, t, t, u32, u32)
	case "bfi":
		if err := bitsOK(32, 64); err != nil {
			return err
		}
		in.op = opBfi
		if err := need(5); err != nil {
			return err
		}
		return b.dsa(in, ops, t, t, t, u32, u32)
	case "prmt":
		if t.bits != 32 || t.k != kB {
			return errAt(line, "prmt needs .b32")
		}
		in.op = opPrmt
		if err := need(4); err != nil {
			return err
		}
		return b.dsa(in, ops, t, t, t, t)
	case "clz", "popc", "brev":
		if err := bitsOK(32, 64); err != nil {
			return err
		}
		in.op = map[string]opcode{"clz": opClz, "popc": opPopc, "brev": opBrev}[base]
		if err := need(2); err != nil {
			return err
		}
		dt := t
		if base != "brev" {
			dt = u32
		}
		return b.dsa(in, ops, dt, t)
	case "shf":
		if err := m.only(line, "l", "r", "wrap", "clamp"); err != nil {
			return err
		}
		if m.flags["l"] == m.flags["r"] || m.flags["wrap"] == m.flags["clamp"] || t.bits != 32 || t.k != kB {
			return errAt(line, "shf needs .l/.r, .wrap/.clamp and .b32")
		}
		in.op = pick(m.flags["l"], opShfL, opShfR)
		if m.flags["wrap"] {
			in.flags |= flWrap
		}
		if err := need(4); err != nil {
			return err
		}
		return b.dsa(in, ops, t, t, t, u32)
	}
	return errAt(line, "unsupported instruction %s", m.full)
}

func (b *builder) decSelect(in *inst, base string, m mods, ops []rawOp) error {
	line := int(in.line)
	if err := m.only(line); err != nil {
		return err
	}
	if len(ops) != 4 {
		return errAt(line, "%s takes 4 operands", m.full)
	}
	if base == "selp" {
		t, err := m.one(line)
		if err != nil {
			return err
		}
		if t.k == kPred || t.bits < 16 {
			return errAt(line, "selp type %v not supported", t)
		}
		in.op, in.t, in.w, in.sh = opSelp, t, t.bits, 64-t.bits
		return b.dsa(in, ops, t, t, t, ptype{kPred, 1})
	}
	if len(m.types) != 2 || m.types[0].k == kPred || m.types[0].bits < 16 {
		return errAt(line, "slct needs .dtype.s32 or .dtype.f32")
	}
	t, ct := m.types[0], m.types[1]
	in.t, in.t2, in.w, in.sh = t, ct, t.bits, 64-t.bits
	switch ct {
	case ptype{kS, 32}:
		in.op = opSlctI
	case ptype{kF, 32}:
		in.op = opSlctF
	default:
		return errAt(line, "slct needs .dtype.s32 or .dtype.f32")
	}
	return b.dsa(in, ops, t, t, t, ct)
}

func (b *builder) decSetp(in *inst, base string, m mods, ops []rawOp) error {
	line := int(in.line)
	if err := m.only(line); err != nil {
		return err
	}
	if m.cmp < 0 {
		return errAt(line, "%s needs a comparison", m.full)
	}
	in.cmp, in.bop = uint8(m.cmp), m.bop
	var st ptype
	var dt ptype
	if base == "setp" {
		t, err := m.one(line)
		if err != nil {
			return err
		}
		st, dt = t, ptype{kPred, 1}
	} else {
		if len(m.types) != 2 {
			return errAt(line, "set needs .dtype.stype")
		}
		dt, st = m.types[0], m.types[1]
		if dt != (ptype{kU, 32}) && dt != (ptype{kS, 32}) && dt != (ptype{kF, 32}) {
			return errAt(line, "set destination type %v not supported", dt)
		}
	}
	if st.k == kPred || st.bits < 16 {
		return errAt(line, "comparison type %v not supported", st)
	}
	if st.k != kF && m.cmp >= cmpEQU {
		return errAt(line, "%s: unordered comparison on an integer type", m.full)
	}
	if st.k == kB && m.cmp != cmpEQ && m.cmp != cmpNE {
		return errAt(line, "%s: .b types only compare eq/ne", m.full)
	}
	in.t, in.t2, in.w, in.sh = st, dt, st.bits, 64-st.bits
	if st.k == kF {
		in.op = pick(base == "setp", opSetpF, opSetF)
	} else {
		in.op = pick(base == "setp", opSetpI, opSetI)
	}
	want := 3
	if m.bop != bopNone {
		want = 4
	}
	if len(ops) != want {
		return errAt(line, "%s takes %d operands, found %d", m.full, want, len(ops))
	}
	var err error
	d := ops[0]
	if d.kind == rkPair {
		if base != "setp" {
			return errAt(line, "set has one destination")
		}
		if in.d2, in.d2mask, err = b.dst(rawOp{kind: rkReg, name: d.name2, line: d.line}, dt); err != nil {
			return err
		}
		d = rawOp{kind: rkReg, name: d.name, line: d.line}
	}
	if in.d, in.dmask, err = b.dst(d, dt); err != nil {
		return err
	}
	if in.a, err = b.src(ops[1], st); err != nil {
		return err
	}
	if in.b, err = b.src(ops[2], st); err != nil {
		return err
	}
	if want == 4 {
		c := ops[3]
		in.cneg = c.neg
		c.neg = false
		if in.c, err = b.src(c, ptype{kPred, 1}); err != nil {
			return err
		}
	}
	return nil
}
