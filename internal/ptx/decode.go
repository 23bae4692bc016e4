package ptx

import (
	"fmt"
	"strings"
)

// mods is an opcode split into its modifiers.
type mods struct {
	full  string
	types []ptype
	sp    space
	hasSp bool
	rnd   uint8
	cmp   int
	bop   uint8
	aop   int
	vec   uint8
	flags map[string]bool
}

var rndNames = map[string]uint8{"rn": rndRN, "rz": rndRZ, "rm": rndRM, "rp": rndRP,
	"rni": rndRNI, "rzi": rndRZI, "rmi": rndRMI, "rpi": rndRPI}

var spNames = map[string]space{"global": spGlobal, "shared": spShared, "shared::cta": spShared,
	"local": spLocal, "param": spParam, "param::entry": spParam, "const": spConst}

var aopNames = map[string]int{"add": aopAdd, "min": aopMin, "max": aopMax, "exch": aopExch, "cas": aopCas,
	"and": aopAnd, "or": aopOr, "xor": aopXor, "inc": aopInc, "dec": aopDec}

func splitMods(full string) (string, mods) {
	parts := strings.Split(full, ".")
	m := mods{full: full, cmp: -1, aop: -1, flags: map[string]bool{}}
	base := parts[0]
	for _, s := range parts[1:] {
		if t, ok := parseType(s); ok {
			m.types = append(m.types, t)
			continue
		}
		if sp, ok := spNames[s]; ok && !m.hasSp {
			m.sp, m.hasSp = sp, true
			continue
		}
		if r, ok := rndNames[s]; ok && m.rnd == rndNone {
			m.rnd = r
			continue
		}
		if base == "setp" || base == "set" {
			if c, ok := cmpNames[s]; ok && m.cmp < 0 {
				m.cmp = int(c)
				continue
			}
			switch s {
			case "and":
				m.bop = bopAnd
				continue
			case "or":
				m.bop = bopOr
				continue
			case "xor":
				m.bop = bopXor
				continue
			}
		}
		if base == "atom" || base == "red" {
			if a, ok := aopNames[s]; ok && m.aop < 0 {
				m.aop = a
				continue
			}
		}
		if (s == "v2" || s == "v4") && m.vec == 0 {
			m.vec = s[1] - '0'
			continue
		}
		m.flags[s] = true
	}
	return base, m
}

// only rejects any flag not in allowed.
func (m *mods) only(line int, allowed ...string) error {
	for f := range m.flags {
		ok := false
		for _, a := range allowed {
			if f == a {
				ok = true
				break
			}
		}
		if !ok {
			return errAt(line, "unsupported modifier .%s in %s", f, m.full)
		}
	}
	return nil
}

// one returns the single type of an instruction.
func (m *mods) one(line int) (ptype, error) {
	if len(m.types) != 1 {
		return ptype{}, errAt(line, "%s needs exactly one type", m.full)
	}
	return m.types[0], nil
}

// lockstep lists the warp-level instructions that are not modelled.
var lockstep = map[string]bool{"match": true, "redux": true, "elect": true, "wmma": true, "stmatrix": true}

// precheck rejects instructions that are never supported before their
// operands are parsed, so the message names the instruction.
func precheck(opText string, line int) error {
	base, _, _ := strings.Cut(opText, ".")
	switch {
	case lockstep[base]:
		return errAt(line, "unsupported instruction %s: this warp-level primitive is not modelled", opText)
	case base == "call":
		return errAt(line, "unsupported instruction %s: device function calls are not supported (inline them)", opText)
	case base == "tex" || base == "tld4" || base == "suld" || base == "sust" || base == "txq" || base == "suq":
		return errAt(line, "unsupported instruction %s: textures and surfaces are not supported", opText)
	}
	return nil
}

// decode fills in from the opcode text and operands.
func (b *builder) decode(in *inst, opText string, ops []rawOp) error {
	line := int(in.line)
	base, m := splitMods(opText)
	if base != "bra" {
		for i := range ops {
			b.norm(&ops[i])
		}
	}
	unsupported := func() error { return errAt(line, "unsupported instruction %s", opText) }
	if err := precheck(opText, line); err != nil {
		return err
	}
	if m.flags["ftz"] {
		return errAt(line, "unsupported instruction %s: .ftz (flush-to-zero) is not modelled", opText)
	}
	if m.flags["approx"] {
		return errAt(line, "unsupported instruction %s: .approx results are not specified bit for bit", opText)
	}
	nops := func(n ...int) error {
		for _, x := range n {
			if len(ops) == x {
				return nil
			}
		}
		return errAt(line, "%s takes %d operands, found %d", opText, n[0], len(ops))
	}
	switch base {
	case "mov":
		return b.decMov(in, m, ops)
	case "add", "sub", "mul", "mad", "div", "rem", "abs", "neg", "min", "max", "fma", "sqrt", "rcp",
		"addc", "subc", "copysign", "testp":
		return b.decArith(in, base, m, ops)
	case "and", "or", "xor", "not", "cnot", "shl", "shr", "bfe", "bfi", "prmt", "clz", "popc", "brev", "shf":
		return b.decBits(in, base, m, ops)
	case "selp", "slct":
		return b.decSelect(in, base, m, ops)
	case "setp", "set":
		return b.decSetp(in, base, m, ops)
	case "cvt":
		return b.decCvt(in, m, ops)
	case "cvta", "isspacep":
		return b.decCvta(in, base, m, ops)
	case "ld", "st", "ldu":
		return b.decLdSt(in, base, m, ops)
	case "atom", "red":
		return b.decAtom(in, base, m, ops)
	case "bar", "barrier":
		if m.flags["warp"] {
			if err := b.decWarp(in, "bar.warp", m, ops); err != nil {
				return err
			}
			b.k.warp = true
			return nil
		}
		return b.decBar(in, m, ops)
	case "membar", "fence":
		if err := m.only(line, "cta", "gl", "sys", "gpu", "sc", "acq_rel"); err != nil {
			return err
		}
		in.op = opNop
		return nops(0)
	case "bra":
		if err := m.only(line, "uni"); err != nil {
			return err
		}
		if err := nops(1); err != nil {
			return err
		}
		if ops[0].kind != rkSym || ops[0].off != 0 {
			return errAt(line, "bra needs a label operand")
		}
		in.op = opBra
		b.fixups = append(b.fixups, fixup{pc: len(b.k.code), label: ops[0].name, line: line})
		return nil
	case "ret", "exit":
		if err := m.only(line, "uni"); err != nil {
			return err
		}
		in.op = opExit
		return nops(0)
	case "shfl", "vote", "activemask", "mma", "ldmatrix":
		if err := b.decWarp(in, base, m, ops); err != nil {
			return err
		}
		b.k.warp = true
		return nil
	case "dp4a":
		if len(m.types) != 2 || !m.types[0].isInt() || !m.types[1].isInt() || m.types[0].bits != 32 || m.types[1].bits != 32 {
			return errAt(line, "dp4a needs two 32-bit integer types")
		}
		if err := m.only(line); err != nil {
			return err
		}
		if err := nops(4); err != nil {
			return err
		}
		in.op, in.t, in.t2, in.w = opDp4a, m.types[0], m.types[1], 32
		return b.dsa(in, ops, ptype{kB, 32}, ptype{kB, 32}, ptype{kB, 32}, ptype{kB, 32})
	}
	return unsupported()
}

// norm turns names that are registers (PTX allows registers without %)
// from symbols into registers.
func (b *builder) norm(o *rawOp) {
	switch o.kind {
	case rkSym:
		if _, ok := b.lookupReg(o.name); ok && o.off == 0 {
			o.kind = rkReg
		}
	case rkMem:
		b.norm(o.base)
	case rkVec:
		for i := range o.elems {
			b.norm(&o.elems[i])
		}
	}
}

// dsa decodes d, a[, b[, c]] with the given types for immediates.
func (b *builder) dsa(in *inst, ops []rawOp, td ptype, ts ...ptype) error {
	var err error
	if in.d, in.dmask, err = b.dst(ops[0], td); err != nil {
		return err
	}
	srcs := []*int32{&in.a, &in.b, &in.c, &in.e}
	for i, t := range ts {
		if i+1 >= len(ops) {
			break
		}
		if *srcs[i], err = b.src(ops[i+1], t); err != nil {
			return err
		}
	}
	return nil
}

// dst resolves a destination register; its mask is the register width
// narrowed to t when t is an integer or float type.
func (b *builder) dst(o rawOp, t ptype) (int32, uint64, error) {
	if o.kind != rkReg || o.neg {
		return 0, 0, errAt(o.line, "destination must be a register")
	}
	r, ok := b.lookupReg(o.name)
	if !ok {
		if _, sp := specialNames[o.name]; sp {
			return 0, 0, errAt(o.line, "cannot write special register %s", o.name)
		}
		return 0, 0, errAt(o.line, "undeclared register %s", o.name)
	}
	bits := b.regBits[r]
	if t.k == kPred && bits != 1 || t.k != kPred && bits == 1 {
		return 0, 0, errAt(o.line, "register %s does not match type %v", o.name, t)
	}
	if bits < t.bits && t.k != kPred {
		return 0, 0, errAt(o.line, "register %s is narrower than type %v", o.name, t)
	}
	mask := ptype{kB, bits}.mask()
	if t.k != kPred && t.k != kNone {
		mask &= t.mask()
	}
	return r, mask, nil
}

// src resolves a source operand: register, special register, immediate or
// (for mov/cvta/addresses) a symbol.
func (b *builder) src(o rawOp, t ptype) (int32, error) {
	switch o.kind {
	case rkReg:
		if o.neg {
			return 0, errAt(o.line, "negation is only allowed on predicate combine operands")
		}
		if id, ok := specialNames[o.name]; ok {
			if _, shadow := b.lookupReg(o.name); !shadow {
				return b.constReg(ckSpecial, uint64(id))
			}
		}
		r, ok := b.lookupReg(o.name)
		if !ok {
			if strings.HasPrefix(o.name, "%clock") || o.name == "%globaltimer" || o.name == "%smid" || o.name == "%nsmid" || o.name == "%gridid" {
				return 0, errAt(o.line, "special register %s is not deterministic and is not supported", o.name)
			}
			return 0, errAt(o.line, "undeclared register %s", o.name)
		}
		if (t.k == kPred) != (b.regBits[r] == 1) {
			return 0, errAt(o.line, "register %s does not match type %v", o.name, t)
		}
		if t.k != kPred && b.regBits[r] < t.bits {
			return 0, errAt(o.line, "register %s is narrower than type %v", o.name, t)
		}
		return r, nil
	case rkImm:
		if t.k == kPred {
			// LLVM writes true as -1 (an i1 of all ones): any nonzero
			// integer is true.
			v, err := parseImm(o.name, ptype{kS, 32})
			if err != nil {
				return 0, errAt(o.line, "bad predicate immediate %q", o.name)
			}
			if v != 0 {
				v = 1
			}
			return b.constReg(ckImm, v)
		}
		v, err := parseImm(o.name, t)
		if err != nil {
			return 0, errAt(o.line, "%v", err)
		}
		return b.constReg(ckImm, v)
	}
	return 0, errAt(o.line, "unsupported source operand")
}

// sym resolves a variable name (+offset) to a pseudo-register holding its
// state-space address.
func (b *builder) sym(o rawOp) (int32, space, error) {
	if o.kind != rkSym {
		return 0, 0, errAt(o.line, "expected a variable name")
	}
	if off, ok := b.params[o.name]; ok {
		r, err := b.constReg(ckImm, uint64(off)+o.off)
		return r, spParam, err
	}
	if off, ok := b.local[o.name]; ok {
		r, err := b.constReg(ckImm, uint64(off)+o.off)
		return r, spLocal, err
	}
	ix, ok := b.sharedIx[o.name]
	if !ok {
		if sv, mod := b.p.mod.shared[o.name]; mod {
			ix = len(b.k.shared)
			b.sharedIx[o.name] = ix
			b.k.shared = append(b.k.shared, sv)
			ok = true
		}
	}
	if ok {
		if o.off > 1<<31 {
			return 0, 0, errAt(o.line, "symbol offset too large")
		}
		r, err := b.constReg(ckShared, uint64(ix))
		if err == nil && o.off != 0 {
			return 0, 0, errAt(o.line, "offsets on shared symbols are only supported inside [ ]")
		}
		return r, spShared, err
	}
	if vi, ok := b.p.mod.varIdx[o.name]; ok {
		if o.off != 0 {
			return 0, 0, errAt(o.line, "offsets on global symbols are only supported inside [ ]")
		}
		r, err := b.constReg(ckGlobal, uint64(vi))
		return r, b.p.mod.vars[vi].space, err
	}
	return 0, 0, errAt(o.line, "unknown symbol %s", o.name)
}

// addr resolves a [base+off] operand.
func (b *builder) addr(in *inst, o rawOp) (symSpace space, err error) {
	if o.kind != rkMem {
		return 0, errAt(o.line, "expected an address operand [..]")
	}
	in.off = o.off
	switch o.base.kind {
	case rkSym:
		in.a, symSpace, err = b.sym(*o.base)
		return symSpace, err
	case rkImm:
		in.a, err = b.src(*o.base, ptype{kU, 64})
		return spGeneric, err
	default:
		t := ptype{kU, 64}
		if r, ok := b.lookupReg(o.base.name); ok && b.regBits[r] == 32 && (in.sp == spShared || in.sp == spLocal) {
			t = ptype{kU, 32} // a 32-bit state-space offset, as from cvta.to.shared.u32
		}
		in.a, err = b.src(*o.base, t)
		if err == nil && b.regBits[in.a] == 1 {
			err = errAt(o.line, "a predicate cannot be an address")
		}
		if err == nil && b.regBits[in.a] < 32 {
			err = errAt(o.line, "address register is narrower than 32 bits")
		}
		return spGeneric, err
	}
}

func fmtErr(line int, format string, args ...any) error {
	return errAt(line, "%s", fmt.Sprintf(format, args...))
}
