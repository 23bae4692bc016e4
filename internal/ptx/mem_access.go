package ptx

import "encoding/binary"

var accessNames = [2]string{"load", "store"}

// mem resolves an access of n bytes at addr in the instruction's state
// space for thread ti, checking bounds, alignment and writability.
func (br *blockRun) mem(ti int, in *inst, addr uint64, n int, store bool) ([]byte, *ExecError) {
	what := accessNames[0]
	if store {
		what = accessNames[1]
	}
	if in.op == opAtom {
		what = "atomic"
	}
	sp := in.sp
	if addr&uint64(n-1) != 0 {
		return nil, br.errAt(ti, in.line, "misaligned %v %s of %d bytes at 0x%x", sp, what, n, addr)
	}
	un := uint64(n)
	if sp == spGeneric {
		switch {
		case addr-sharedWindow < windowSize:
			sp, addr = spShared, addr-sharedWindow
		case addr-localWindow < windowSize:
			sp, addr = spLocal, addr-localWindow
		default:
			sp = spGlobal
		}
	}
	switch sp {
	case spShared:
		if addr > uint64(len(br.shared)) || un > uint64(len(br.shared))-addr {
			return nil, br.errAt(ti, in.line, "out-of-bounds shared %s of %d bytes at offset %d (block has %d bytes of shared memory)", what, n, addr, len(br.shared))
		}
		return br.shared[addr : addr+un], nil
	case spLocal:
		ls := uint64(br.k.localSize)
		if addr > ls || un > ls-addr {
			return nil, br.errAt(ti, in.line, "out-of-bounds local %s of %d bytes at offset %d (thread has %d bytes of local memory)", what, n, addr, ls)
		}
		base := uint64(ti) * ls
		return br.local[base+addr : base+addr+un], nil
	case spParam:
		if addr > uint64(len(br.params)) || un > uint64(len(br.params))-addr {
			return nil, br.errAt(ti, in.line, "out-of-bounds param %s of %d bytes at offset %d", what, n, addr)
		}
		return br.params[addr : addr+un], nil
	}
	r := br.gc
	if r == nil || addr < r.base || addr-r.base > uint64(len(r.data)) || un > uint64(len(r.data))-(addr-r.base) {
		i := br.m.find(addr)
		if i < 0 {
			return nil, br.errAt(ti, in.line, "out-of-bounds %v %s of %d bytes at 0x%x: not in any allocation", sp, what, n, addr)
		}
		r = br.m.regions[i]
		off := addr - r.base
		if un > uint64(len(r.data))-off {
			return nil, br.errAt(ti, in.line, "out-of-bounds %v %s of %d bytes at 0x%x: runs past the end of the %d-byte allocation at 0x%x", sp, what, n, addr, len(r.data), r.base)
		}
		br.gc = r
	}
	if store && r.ro {
		return nil, br.errAt(ti, in.line, "%s to read-only .const memory at 0x%x", what, addr)
	}
	off := addr - r.base
	return r.data[off : off+un], nil
}

func getLE(b []byte, n int) uint64 {
	switch n {
	case 1:
		return uint64(b[0])
	case 2:
		return uint64(binary.LittleEndian.Uint16(b))
	case 4:
		return uint64(binary.LittleEndian.Uint32(b))
	}
	return binary.LittleEndian.Uint64(b)
}

func putLE(b []byte, n int, v uint64) {
	switch n {
	case 1:
		b[0] = byte(v)
	case 2:
		binary.LittleEndian.PutUint16(b, uint16(v))
	case 4:
		binary.LittleEndian.PutUint32(b, uint32(v))
	default:
		binary.LittleEndian.PutUint64(b, v)
	}
}

// atomic applies in's atomic operation at addr and returns the old value.
func (br *blockRun) atomic(ti int, in *inst, addr uint64, bv, cv uint64) (uint64, *ExecError) {
	n := int(in.w / 8)
	global := in.sp == spGlobal || in.sp == spGeneric && addr-sharedWindow >= windowSize && addr-localWindow >= windowSize
	if global {
		br.m.atomMu.Lock()
		defer br.m.atomMu.Unlock()
	}
	buf, e := br.mem(ti, in, addr, n, true)
	if e != nil {
		return 0, e
	}
	old := getLE(buf, n)
	m := in.t.mask()
	var nv uint64
	switch in.aop {
	case aopAdd:
		switch {
		case in.t.k != kF:
			nv = old + bv
		case n == 4:
			nv = box32(float32(f32of(old) + f32of(bv)))
		default:
			nv = box64(f64of(old) + f64of(bv))
		}
	case aopMin, aopMax:
		less := old&m < bv&m
		if in.t.k == kS {
			less = int64(sext(old, in.sh)) < int64(sext(bv, in.sh))
		}
		nv = old
		if less == (in.aop == aopMax) && old&m != bv&m {
			nv = bv
		}
	case aopExch:
		nv = bv
	case aopCas:
		nv = old
		if old&m == bv&m {
			nv = cv
		}
	case aopAnd:
		nv = old & bv
	case aopOr:
		nv = old | bv
	case aopXor:
		nv = old ^ bv
	case aopInc:
		nv = old + 1
		if old&m >= bv&m {
			nv = 0
		}
	case aopDec:
		nv = old - 1
		if old&m == 0 || old&m > bv&m {
			nv = bv
		}
	}
	putLE(buf, n, nv)
	if in.t.k == kS {
		return sext(old, in.sh), nil
	}
	return old, nil
}
