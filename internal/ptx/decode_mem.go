package ptx

func (b *builder) decCvt(in *inst, m mods, ops []rawOp) error {
	line := int(in.line)
	if err := m.only(line, "sat"); err != nil {
		return err
	}
	if len(m.types) != 2 {
		return errAt(line, "cvt needs .dtype.atype")
	}
	if len(ops) != 2 {
		return errAt(line, "cvt takes 2 operands")
	}
	dt, at := m.types[0], m.types[1]
	if dt.k == kPred || at.k == kPred {
		return errAt(line, "cvt does not take .pred")
	}
	in.op, in.t, in.t2, in.rnd = opCvt, dt, at, m.rnd
	in.w, in.sh = dt.bits, 64-dt.bits
	if m.flags["sat"] {
		in.flags |= flSat
	}
	bad := func(why string) error { return errAt(line, "unsupported instruction %s: %s", m.full, why) }
	switch {
	case dt.k != kF && at.k != kF:
		if m.rnd != rndNone {
			return bad("integer conversions take no rounding modifier")
		}
	case dt.k == kF && at.k != kF:
		if m.rnd < rndRN || m.rnd > rndRP {
			return bad("integer to float needs .rn/.rz/.rm/.rp")
		}
		if m.flags["sat"] {
			return bad(".sat to a float type is not modelled")
		}
	case dt.k != kF && at.k == kF:
		if m.rnd < rndRNI {
			return bad("float to integer needs .rni/.rzi/.rmi/.rpi")
		}
	default:
		if m.flags["sat"] {
			return bad(".sat to a float type is not modelled")
		}
		switch {
		case dt.bits > at.bits:
			if m.rnd != rndNone {
				return bad("widening float conversion takes no rounding")
			}
		case dt.bits < at.bits:
			if m.rnd < rndRN || m.rnd > rndRP {
				return bad("narrowing float conversion needs .rn/.rz/.rm/.rp")
			}
		default:
			if m.rnd < rndRNI {
				return bad("same-size float conversion needs .rni/.rzi/.rmi/.rpi")
			}
		}
	}
	var err error
	if in.d, in.dmask, err = b.dst(ops[0], dt); err != nil {
		return err
	}
	in.dmask = ptype{kB, b.regBits[in.d]}.mask()
	in.a, err = b.src(ops[1], at)
	return err
}

// Generic-address windows of the shared and local state spaces.
const (
	sharedWindow = 0x7e00_0000_0000_0000
	localWindow  = 0x7f00_0000_0000_0000
	windowSize   = 1 << 40
)

func (b *builder) decCvta(in *inst, base string, m mods, ops []rawOp) error {
	line := int(in.line)
	if base == "cvta" {
		if err := m.only(line, "to"); err != nil {
			return err
		}
	} else if err := m.only(line); err != nil {
		return err
	}
	if !m.hasSp || m.sp == spParam {
		return errAt(line, "unsupported instruction %s: state space", m.full)
	}
	if len(ops) != 2 {
		return errAt(line, "%s takes 2 operands", m.full)
	}
	in.sp = m.sp
	var err error
	if base == "isspacep" {
		if len(m.types) != 0 {
			return errAt(line, "isspacep takes no type")
		}
		in.op = opIsspacep
		if in.d, in.dmask, err = b.dst(ops[0], ptype{kPred, 1}); err != nil {
			return err
		}
		in.a, err = b.src(ops[1], ptype{kU, 64})
		return err
	}
	t, err := m.one(line)
	if err != nil {
		return err
	}
	if t != (ptype{kU, 64}) && t != (ptype{kB, 64}) {
		return errAt(line, "unsupported instruction %s: only 64-bit addresses", m.full)
	}
	in.t, in.w = t, 64
	switch m.sp {
	case spGlobal, spConst:
		in.op = opMov
	case spShared, spLocal:
		in.op = opCvtaAdd
		if m.flags["to"] {
			in.op = opCvtaSub
		}
		in.off = sharedWindow
		if m.sp == spLocal {
			in.off = localWindow
		}
	}
	if in.d, in.dmask, err = b.dst(ops[0], t); err != nil {
		return err
	}
	if ops[1].kind == rkSym {
		in.a, _, err = b.sym(ops[1])
		return err
	}
	in.a, err = b.src(ops[1], t)
	return err
}

func ldstFlagsOK(m *mods, line int, st bool) error {
	for f := range m.flags {
		switch f {
		case "volatile", "relaxed", "weak", "cta", "gpu", "sys", "cs", "cg", "ca", "lu", "cv", "wb", "wt":
			continue
		case "nc", "acquire":
			if !st {
				continue
			}
		case "release":
			if st {
				continue
			}
		}
		if len(f) > 4 && (f[:4] == "L1::" || f[:4] == "L2::") && f != "L2::cache_hint" {
			continue
		}
		return errAt(line, "unsupported modifier .%s in %s", f, m.full)
	}
	return nil
}

func (b *builder) decLdSt(in *inst, base string, m mods, ops []rawOp) error {
	line := int(in.line)
	st := base == "st"
	if err := ldstFlagsOK(&m, line, st); err != nil {
		return err
	}
	t, err := m.one(line)
	if err != nil {
		return err
	}
	if t.k == kPred {
		return errAt(line, "%s of .pred is not allowed", m.full)
	}
	if m.rnd != rndNone || m.cmp >= 0 {
		return errAt(line, "unsupported modifier in %s", m.full)
	}
	if st && (m.sp == spParam || m.sp == spConst) {
		return errAt(line, "unsupported instruction %s: stores to %v space", m.full, m.sp)
	}
	if len(ops) != 2 {
		return errAt(line, "%s takes 2 operands", m.full)
	}
	vec := m.vec
	if vec == 0 {
		vec = 1
	}
	in.t, in.w, in.sh, in.vec = t, t.bits, 64-t.bits, vec
	in.op = pick(st, opSt, opLd)
	in.sp = m.sp
	memOp, valOp := ops[1], ops[0]
	if st {
		memOp, valOp = ops[0], ops[1]
	}
	symSp, err := b.addr(in, memOp)
	if err != nil {
		return err
	}
	if memOp.base.kind == rkSym && symSp != m.sp {
		if m.sp != spGeneric && !(m.sp == spGlobal && symSp == spConst) && !(m.sp == spConst && symSp == spGlobal) {
			return errAt(line, "%s: %s is a %v variable", m.full, memOp.base.name, symSp)
		}
		if m.sp == spGeneric && (symSp == spShared || symSp == spLocal || symSp == spParam) {
			return errAt(line, "%s: generic access to %v variable %s needs cvta", m.full, symSp, memOp.base.name)
		}
	}
	var elems []rawOp
	if vec == 1 {
		if valOp.kind == rkVec {
			return errAt(line, "%s: vector operand without .v2/.v4", m.full)
		}
		elems = []rawOp{valOp}
	} else {
		if valOp.kind != rkVec || len(valOp.elems) != int(vec) {
			return errAt(line, "%s needs a %d-element vector", m.full, vec)
		}
		elems = valOp.elems
	}
	for i, e := range elems {
		if st {
			if e.kind == rkSink {
				return errAt(line, "'_' cannot be stored")
			}
			if in.v[i], err = b.src(e, t); err != nil {
				return err
			}
			if e.kind == rkReg && b.regBits[in.v[i]] < t.bits {
				return errAt(line, "register %s is narrower than %v", e.name, t)
			}
			continue
		}
		in.v[i] = -1
		if e.kind == rkSink {
			continue
		}
		if in.v[i], _, err = b.dst(e, t); err != nil {
			return err
		}
		if t.k == kF && b.regBits[in.v[i]] != t.bits {
			return errAt(line, "register %s does not match %v", e.name, t)
		}
		in.vmask[i] = ptype{kB, b.regBits[in.v[i]]}.mask()
	}
	return nil
}

func (b *builder) decAtom(in *inst, base string, m mods, ops []rawOp) error {
	line := int(in.line)
	if err := m.only(line, "relaxed", "acquire", "release", "acq_rel", "cta", "gpu", "sys"); err != nil {
		return err
	}
	t, err := m.one(line)
	if err != nil {
		return err
	}
	if m.aop < 0 {
		return errAt(line, "%s needs an operation", m.full)
	}
	if m.hasSp && m.sp != spGlobal && m.sp != spShared {
		return errAt(line, "unsupported instruction %s: state space", m.full)
	}
	ok := false
	switch m.aop {
	case aopAnd, aopOr, aopXor, aopExch, aopCas:
		ok = t.isInt() && t.bits >= 32
	case aopAdd:
		ok = t.bits >= 32 && t.k != kB
	case aopMin, aopMax:
		ok = (t.k == kU || t.k == kS) && t.bits >= 32
	case aopInc, aopDec:
		ok = t == ptype{kU, 32}
	}
	if !ok || (base == "red" && m.aop == aopCas) || (base == "red" && m.aop == aopExch) {
		return errAt(line, "unsupported instruction %s", m.full)
	}
	in.op, in.aop, in.sp = opAtom, uint8(m.aop), m.sp
	in.t, in.w, in.sh, in.vec = t, t.bits, 64-t.bits, 1
	want := 3
	if m.aop == aopCas {
		want = 4
	}
	var rest []rawOp
	if base == "red" {
		in.flags |= flRed
		want--
		if len(ops) != want {
			return errAt(line, "%s takes %d operands", m.full, want)
		}
		rest = ops
	} else {
		if len(ops) != want {
			return errAt(line, "%s takes %d operands", m.full, want)
		}
		if in.d, in.dmask, err = b.dst(ops[0], t); err != nil {
			return err
		}
		rest = ops[1:]
	}
	a := in.a
	_ = a
	symSp, err := b.addr(in, rest[0])
	if err != nil {
		return err
	}
	if rest[0].base.kind == rkSym && symSp != m.sp {
		return errAt(line, "%s: %s is a %v variable", m.full, rest[0].base.name, symSp)
	}
	if in.b, err = b.src(rest[1], t); err != nil {
		return err
	}
	if len(rest) == 3 {
		if in.c, err = b.src(rest[2], t); err != nil {
			return err
		}
	}
	return nil
}

func (b *builder) decBar(in *inst, m mods, ops []rawOp) error {
	line := int(in.line)
	full := m.full
	if full != "bar.sync" && full != "barrier.sync" && full != "barrier.sync.aligned" && full != "bar" {
		return errAt(line, "unsupported instruction %s", full)
	}
	in.op = opBar
	if full != "barrier.sync" {
		in.flags |= flAligned
	}
	if len(ops) != 1 && len(ops) != 2 {
		return errAt(line, "%s takes 1 or 2 operands", full)
	}
	if ops[0].kind != rkImm || ops[0].name != "0" {
		return errAt(line, "unsupported instruction %s: only barrier 0 is supported", full)
	}
	if len(ops) == 2 {
		if ops[1].kind != rkImm {
			return errAt(line, "unsupported instruction %s: thread count must be an immediate", full)
		}
		var err error
		if in.b, err = b.src(ops[1], ptype{kU, 32}); err != nil {
			return err
		}
		in.flags |= flCount
	}
	return nil
}
