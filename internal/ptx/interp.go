package ptx

import (
	"math/bits"
)

// exec runs thread ti until it reaches a barrier, exits or faults.
func (br *blockRun) exec(ti int) *ExecError {
	t := &br.threads[ti]
	nr := br.nregs
	r := br.regs[ti*nr : (ti+1)*nr : (ti+1)*nr]
	code := br.k.code
	pc := t.pc
	cc := t.cc
	steps := t.steps
	cap := br.stepCap
	defer func() { br.steps += steps - t.steps; t.steps = steps }()
	for {
		in := &code[pc]
		pc++
		steps++
		if in.guard >= 0 && (r[in.guard] != 0) == in.gneg {
			continue
		}
		switch in.op {
		case opNop:
		case opMov:
			r[in.d] = r[in.a] & in.dmask
		case opMovPack:
			em := uint64(1)<<in.w - 1
			var v uint64
			for i := 0; i < int(in.vec); i++ {
				v |= (r[in.v[i]] & em) << (uint(i) * uint(in.w))
			}
			r[in.d] = v & in.dmask
		case opMovUnpack:
			x := r[in.a]
			for i := 0; i < int(in.vec); i++ {
				if in.v[i] >= 0 {
					r[in.v[i]] = (x >> (uint(i) * uint(in.w))) & in.vmask[i]
				}
			}
		case opAdd:
			if in.flags&flSat != 0 {
				r[in.d] = sat32(int64(int32(r[in.a])) + int64(int32(r[in.b])))
				break
			}
			r[in.d] = (r[in.a] + r[in.b]) & in.dmask
		case opSub:
			if in.flags&flSat != 0 {
				r[in.d] = sat32(int64(int32(r[in.a])) - int64(int32(r[in.b])))
				break
			}
			r[in.d] = (r[in.a] - r[in.b]) & in.dmask
		case opAddCC, opAddC:
			var carry uint64
			if in.op == opAddC {
				carry = cc
			}
			a, b := r[in.a]&in.dmask, r[in.b]&in.dmask
			var s uint64
			if in.w == 64 {
				s, carry = bits.Add64(a, b, carry)
			} else {
				s = a + b + carry
				carry = s >> 32
			}
			r[in.d] = s & in.dmask
			if in.op == opAddCC || in.flags&flCC != 0 {
				cc = carry
			}
		case opSubCC, opSubC:
			var borrow uint64
			if in.op == opSubC {
				borrow = cc
			}
			a, b := r[in.a]&in.dmask, r[in.b]&in.dmask
			var s uint64
			if in.w == 64 {
				s, borrow = bits.Sub64(a, b, borrow)
			} else {
				s = a - b - borrow
				borrow = (s >> 32) & 1
			}
			r[in.d] = s & in.dmask
			if in.op == opSubCC || in.flags&flCC != 0 {
				cc = borrow
			}
		case opMulLo:
			r[in.d] = (r[in.a] * r[in.b]) & in.dmask
		case opMadLo:
			r[in.d] = (r[in.a]*r[in.b] + r[in.c]) & in.dmask
		case opMulHiS, opMadHiS:
			v := mulhiS(r[in.a], r[in.b], in.w, in.sh)
			if in.op == opMadHiS {
				v += r[in.c]
			}
			r[in.d] = v & in.dmask
		case opMulHiU, opMadHiU:
			v := mulhiU(r[in.a], r[in.b], in.w)
			if in.op == opMadHiU {
				v += r[in.c]
			}
			r[in.d] = v & in.dmask
		case opMulWideS, opMadWideS:
			v := sext(r[in.a], in.sh) * sext(r[in.b], in.sh)
			if in.op == opMadWideS {
				v += r[in.c]
			}
			r[in.d] = v & in.dmask
		case opMulWideU, opMadWideU:
			m := uint64(1)<<in.w - 1
			v := (r[in.a] & m) * (r[in.b] & m)
			if in.op == opMadWideU {
				v += r[in.c]
			}
			r[in.d] = v & in.dmask
		case opDivU, opRemU:
			a, b := r[in.a]&in.dmask, r[in.b]&in.dmask
			if b == 0 {
				t.pc = pc - 1
				return br.errAt(ti, in.line, "integer division by zero")
			}
			if in.op == opDivU {
				r[in.d] = a / b
			} else {
				r[in.d] = a % b
			}
		case opDivS, opRemS:
			a, b := int64(sext(r[in.a], in.sh)), int64(sext(r[in.b], in.sh))
			if b == 0 {
				t.pc = pc - 1
				return br.errAt(ti, in.line, "integer division by zero")
			}
			if in.op == opDivS {
				r[in.d] = uint64(a/b) & in.dmask
			} else {
				r[in.d] = uint64(a%b) & in.dmask
			}
		case opAbs:
			a := int64(sext(r[in.a], in.sh))
			if a < 0 {
				a = -a
			}
			r[in.d] = uint64(a) & in.dmask
		case opNeg:
			r[in.d] = -r[in.a] & in.dmask
		case opMinS, opMaxS:
			a, b := int64(sext(r[in.a], in.sh)), int64(sext(r[in.b], in.sh))
			if (a < b) == (in.op == opMaxS) {
				a = b
			}
			r[in.d] = uint64(a) & in.dmask
		case opMinU, opMaxU:
			a, b := r[in.a]&in.dmask, r[in.b]&in.dmask
			if (a < b) == (in.op == opMaxU) {
				a = b
			}
			r[in.d] = a
		case opAnd:
			r[in.d] = r[in.a] & r[in.b] & in.dmask
		case opOr:
			r[in.d] = (r[in.a] | r[in.b]) & in.dmask
		case opXor:
			r[in.d] = (r[in.a] ^ r[in.b]) & in.dmask
		case opNot:
			r[in.d] = ^r[in.a] & in.dmask
		case opCnot:
			var v uint64
			if r[in.a]&in.dmask == 0 {
				v = 1
			}
			r[in.d] = v
		case opShl:
			s := r[in.b] & 0xffffffff
			if s >= uint64(in.w) {
				r[in.d] = 0
			} else {
				r[in.d] = (r[in.a] << s) & in.dmask
			}
		case opShrU:
			s := r[in.b] & 0xffffffff
			if s >= uint64(in.w) {
				r[in.d] = 0
			} else {
				r[in.d] = (r[in.a] & in.dmask) >> s
			}
		case opShrS:
			s := r[in.b] & 0xffffffff
			if s >= uint64(in.w) {
				s = uint64(in.w) - 1
			}
			r[in.d] = uint64(int64(sext(r[in.a], in.sh))>>s) & in.dmask
		case opBfeU, opBfeS:
			r[in.d] = bfe(r[in.a], r[in.b]&0xff, r[in.c]&0xff, in.w, in.op == opBfeS) & in.dmask
		case opBfi:
			pos, ln := r[in.c]&0xff, r[in.e]&0xff
			w := uint64(in.w)
			v := r[in.b]
			if pos < w {
				if ln > w-pos {
					ln = w - pos
				}
				m := (uint64(1)<<ln - 1) << pos
				if ln == 64 {
					m = ^uint64(0)
				}
				v = v&^m | (r[in.a]<<pos)&m
			}
			r[in.d] = v & in.dmask
		case opPrmt:
			x := (r[in.b]&0xffffffff)<<32 | r[in.a]&0xffffffff
			sel := r[in.c]
			var v uint64
			for i := uint(0); i < 4; i++ {
				s := (sel >> (4 * i)) & 0xf
				by := (x >> (8 * (s & 7))) & 0xff
				if s&8 != 0 {
					if by&0x80 != 0 {
						by = 0xff
					} else {
						by = 0
					}
				}
				v |= by << (8 * i)
			}
			r[in.d] = v
		case opClz:
			if in.w == 32 {
				r[in.d] = uint64(bits.LeadingZeros32(uint32(r[in.a])))
			} else {
				r[in.d] = uint64(bits.LeadingZeros64(r[in.a]))
			}
		case opPopc:
			r[in.d] = uint64(bits.OnesCount64(r[in.a] & in.t.mask()))
		case opBrev:
			if in.w == 32 {
				r[in.d] = uint64(bits.Reverse32(uint32(r[in.a])))
			} else {
				r[in.d] = bits.Reverse64(r[in.a])
			}
		case opShfL, opShfR:
			n := r[in.c] & 0xffffffff
			if in.flags&flWrap != 0 {
				n &= 31
			} else if n > 32 {
				n = 32
			}
			x := (r[in.b]&0xffffffff)<<32 | r[in.a]&0xffffffff
			if in.op == opShfL {
				r[in.d] = (x << n) >> 32
			} else {
				r[in.d] = (x >> n) & 0xffffffff
			}
		case opSelp:
			if r[in.c] != 0 {
				r[in.d] = r[in.a] & in.dmask
			} else {
				r[in.d] = r[in.b] & in.dmask
			}
		case opSlctI, opSlctF:
			var ge bool
			if in.op == opSlctI {
				ge = int32(r[in.c]) >= 0
			} else {
				ge = f32of(r[in.c]) >= 0
			}
			if ge {
				r[in.d] = r[in.a] & in.dmask
			} else {
				r[in.d] = r[in.b] & in.dmask
			}
		case opSetpI, opSetI, opSetpF, opSetF:
			var p bool
			if in.op == opSetpI || in.op == opSetI {
				p = icmp(in, r[in.a], r[in.b])
			} else if in.w == 32 {
				p = fcmp(in.cmp, float64(f32of(r[in.a])), float64(f32of(r[in.b])))
			} else {
				p = fcmp(in.cmp, f64of(r[in.a]), f64of(r[in.b]))
			}
			q := !p
			if in.bop != bopNone {
				c := (r[in.c] != 0) != in.cneg
				p, q = combine(in.bop, p, c), combine(in.bop, q, c)
			}
			if in.op == opSetpI || in.op == opSetpF {
				r[in.d] = b2u(p)
				if in.d2 >= 0 {
					r[in.d2] = b2u(q)
				}
			} else {
				var v uint64
				if p {
					v = 0xffffffff
					if in.t2.k == kF {
						v = 0x3f800000
					}
				}
				r[in.d] = v
			}
		case opCvt:
			r[in.d] = cvt(in, r[in.a]) & in.dmask
		case opCvtaAdd:
			r[in.d] = r[in.a] + in.off
		case opCvtaSub:
			r[in.d] = r[in.a] - in.off
		case opIsspacep:
			a := r[in.a]
			sh, lo := a-sharedWindow < windowSize, a-localWindow < windowSize
			var v bool
			switch in.sp {
			case spShared:
				v = sh
			case spLocal:
				v = lo
			default:
				v = !sh && !lo
			}
			r[in.d] = b2u(v)
		case opLd:
			es := int(in.w / 8)
			addr := r[in.a] + in.off
			if in.vec == 1 && addr&uint64(es-1) == 0 {
				if buf := br.fastBuf(in.sp, addr, es, false); buf != nil {
					v := getLE(buf, es)
					if in.t.k == kS {
						v = sext(v, in.sh)
					}
					r[in.v[0]] = v & in.vmask[0]
					break
				}
			}
			n := es * int(in.vec)
			buf, e := br.mem(ti, in, addr, n, false)
			if e != nil {
				t.pc = pc - 1
				return e
			}
			for i := 0; i < int(in.vec); i++ {
				if in.v[i] < 0 {
					continue
				}
				v := getLE(buf[i*es:], es)
				if in.t.k == kS {
					v = sext(v, in.sh)
				}
				r[in.v[i]] = v & in.vmask[i]
			}
		case opSt:
			es := int(in.w / 8)
			addr := r[in.a] + in.off
			if in.vec == 1 && addr&uint64(es-1) == 0 {
				if buf := br.fastBuf(in.sp, addr, es, true); buf != nil {
					putLE(buf, es, r[in.v[0]])
					break
				}
			}
			n := es * int(in.vec)
			buf, e := br.mem(ti, in, addr, n, true)
			if e != nil {
				t.pc = pc - 1
				return e
			}
			for i := 0; i < int(in.vec); i++ {
				putLE(buf[i*es:], es, r[in.v[i]])
			}
		case opAtom:
			old, e := br.atomic(ti, in, r[in.a]+in.off, r[in.b], regOr(r, in.c))
			if e != nil {
				t.pc = pc - 1
				return e
			}
			if in.d >= 0 {
				r[in.d] = old & in.dmask
			}
		case opBar:
			if in.flags&flCount != 0 && r[in.b] != uint64(br.n) {
				t.pc = pc - 1
				return br.errAt(ti, in.line, "barrier with thread count %d in a block of %d threads", r[in.b], br.n)
			}
			t.pc, t.state, t.at, t.cc = pc, stBar, pc-1, cc
			return nil
		case opBra:
			if in.target < pc && cap != 0 && steps > cap {
				t.pc = pc - 1
				return br.errAt(ti, in.line, "thread exceeded the step limit of %d instructions", cap)
			}
			pc = in.target
		case opExit:
			t.pc, t.state, t.at = pc-1, stExit, pc-1
			return nil
		case opShfl, opVote, opActivemask, opMma, opLdmatrix, opBarWarp:
			// The scheduler performs the collective for the whole warp
			// (warp.go) and resumes the thread after it.
			t.pc, t.state, t.at, t.cc = pc, stWarp, pc-1, cc
			return nil
		case opDp4a:
			a, b := r[in.a], r[in.b]
			acc := r[in.c]
			for i := uint(0); i < 32; i += 8 {
				x, y := (a>>i)&0xff, (b>>i)&0xff
				if in.t.k == kS {
					x = sext(x, 56)
				}
				if in.t2.k == kS {
					y = sext(y, 56)
				}
				acc += x * y
			}
			r[in.d] = acc & 0xffffffff
		case opTestp:
			if in.w == 32 {
				r[in.d] = b2u(testp(in.cmp, float64(f32of(r[in.a])), true))
			} else {
				r[in.d] = b2u(testp(in.cmp, f64of(r[in.a]), false))
			}
		case opCopysign:
			sb := uint64(1) << (in.w - 1)
			r[in.d] = (r[in.b]&^sb | r[in.a]&sb) & in.dmask
		case opFAbs:
			r[in.d] = r[in.a] &^ (uint64(1) << (in.w - 1)) & in.dmask
		case opFNeg:
			r[in.d] = (r[in.a] ^ uint64(1)<<(in.w-1)) & in.dmask
		default:
			r[in.d] = floatOp(in, r)
		}
	}
}

// fastBuf is the fast path of an aligned scalar load or store: the bytes
// at addr in shared memory, or in the global region last used (writable
// when write), when all es bytes lie inside; nil sends the access through
// the checked path (blockRun.mem).
func (br *blockRun) fastBuf(sp space, addr uint64, es int, write bool) []byte {
	switch sp {
	case spShared:
		if addr < uint64(len(br.shared)) && uint64(es) <= uint64(len(br.shared))-addr {
			return br.shared[addr:]
		}
	case spGlobal:
		if g := br.gc; g != nil && !(write && g.ro) && addr >= g.base && addr-g.base < uint64(len(g.data)) && uint64(es) <= uint64(len(g.data))-(addr-g.base) {
			return g.data[addr-g.base:]
		}
	}
	return nil
}
