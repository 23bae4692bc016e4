package ptx

import (
	"fmt"
	"math/bits"
)

// Warp-synchronous execution. A thread that reaches a warp collective stops
// in state stWarp. Once every thread of the block has stopped, the scheduler
// performs each collective whose participants all wait at it (same pc; for
// the .sync-with-membermask forms also the same membermask), and lets them
// continue. A warp is 32 consecutive linear thread ids; the last one of a
// block may be partial.
//
// Participants, as the PTX ISA defines them:
//   - shfl.sync, vote.sync: the non-exited threads of membermask. A lane of
//     the mask that has exited does not take part (it is not waited for);
//     a shfl that reads the value of such a lane is a fault, since the PTX
//     ISA leaves that value undefined.
//   - bar.warp.sync: likewise, except that any bar.warp.sync instructions
//     with the same membermask match each other (the CUDA guide's
//     __syncwarp contract: "all non-exited threads named in mask must
//     execute a corresponding __syncwarp() with the same mask").
//   - mma.sync.aligned, ldmatrix.sync.aligned: all 32 threads of the warp;
//     a partial warp or an exited lane is a fault (undefined in the ISA).
//   - activemask: the lanes of the warp waiting at the same activemask once
//     no other collective of the warp can proceed (maximal convergence).
//
// Faults: a membermask without the executing lane or naming lanes beyond
// the end of the block, lanes of one mask disagreeing on it, and any
// collective that can never complete (a participant waits at bar.sync or at
// a different collective and nothing else can make progress).

const warpSize = 32

func warpOpName(in *inst) string {
	switch in.op {
	case opShfl:
		return "shfl.sync"
	case opVote:
		return "vote.sync"
	case opActivemask:
		return "activemask"
	case opMma:
		return "mma.sync"
	case opBarWarp:
		return "bar.warp.sync"
	}
	return "ldmatrix"
}

func (br *blockRun) laneRegs(ti int) []uint64 {
	nr := br.nregs
	return br.regs[ti*nr : (ti+1)*nr : (ti+1)*nr]
}

// resolveWarps performs every warp collective that can proceed and reports
// whether any did.
func (br *blockRun) resolveWarps() (bool, *ExecError) {
	progress := false
	for base := 0; base < br.n; base += warpSize {
		p, e := br.resolveWarp(base, min(warpSize, br.n-base))
		if e != nil {
			return false, e
		}
		progress = progress || p
	}
	return progress, nil
}

func (br *blockRun) resolveWarp(base, size int) (bool, *ExecError) {
	ths := br.threads[base : base+size]
	code := br.k.code
	progress, active := false, false
	for l := range ths {
		t := &ths[l]
		if t.state != stWarp {
			continue
		}
		in := &code[t.at]
		var group uint32
		var e *ExecError
		switch in.op {
		case opActivemask:
			active = true
			continue
		case opMma, opLdmatrix:
			group, e = br.alignedGroup(base, size, l)
		default:
			group, e = br.maskGroup(base, size, l)
		}
		if e != nil {
			return false, e
		}
		if group == 0 {
			continue
		}
		switch in.op {
		case opShfl:
			e = br.shfl(in, base, size, group)
		case opVote:
			br.vote(in, base, group)
		case opMma:
			br.mma(in, base)
		case opLdmatrix:
			e = br.ldmatrix(in, base)
		}
		if e != nil {
			return false, e
		}
		for g := group; g != 0; g &= g - 1 {
			ths[bits.TrailingZeros32(g)].state = stRun
		}
		progress = true
	}
	if active && !progress {
		for l := range ths {
			t := &ths[l]
			if t.state != stWarp || code[t.at].op != opActivemask {
				continue
			}
			var group uint32
			for j := range ths {
				if ths[j].state == stWarp && ths[j].at == t.at {
					group |= 1 << j
				}
			}
			in := &code[t.at]
			for g := group; g != 0; g &= g - 1 {
				j := bits.TrailingZeros32(g)
				br.laneRegs(base + j)[in.d] = uint64(group) & in.dmask
				ths[j].state = stRun
			}
			progress = true
		}
	}
	return progress, nil
}

// alignedGroup checks an .aligned collective (mma, ldmatrix) waited at by
// lane l: it returns the full mask when all 32 lanes wait there, 0 when some
// lane is still elsewhere, and a fault when the warp is partial or a lane
// has exited.
func (br *blockRun) alignedGroup(base, size, l int) (uint32, *ExecError) {
	t := &br.threads[base+l]
	in := &br.k.code[t.at]
	if size != warpSize {
		return 0, br.errAt(base+l, in.line, "%s.aligned needs all 32 threads of the warp; warp %d of this %d-thread block has %d", warpOpName(in), base/warpSize, br.n, size)
	}
	blocked := false
	for j := 0; j < warpSize; j++ {
		tj := &br.threads[base+j]
		switch {
		case tj.state == stWarp && tj.at == t.at:
		case tj.state == stExit:
			return 0, br.errAt(base+l, in.line, "%s.aligned while lane %d (thread %v) has exited at line %d", warpOpName(in), j, br.tid(base+j), br.k.code[tj.at].line)
		default:
			blocked = true
		}
	}
	if blocked {
		return 0, nil
	}
	return ^uint32(0), nil
}

// maskGroup checks a membermask collective (shfl, vote) waited at by lane
// l: it returns the lanes taking part when every non-exited lane of the mask
// waits there, 0 when one is still elsewhere, and a fault for a bad mask.
func (br *blockRun) maskGroup(base, size, l int) (uint32, *ExecError) {
	t := &br.threads[base+l]
	in := &br.k.code[t.at]
	name := warpOpName(in)
	mask := uint32(br.laneRegs(base + l)[in.e])
	if mask>>l&1 == 0 {
		return 0, br.errAt(base+l, in.line, "%s membermask 0x%08x does not include the executing lane %d", name, mask, l)
	}
	if size < warpSize && mask>>size != 0 {
		return 0, br.errAt(base+l, in.line, "%s membermask 0x%08x names lanes %d..31, which do not exist (warp %d of this %d-thread block has %d threads)", name, mask, size, base/warpSize, br.n, size)
	}
	var group uint32
	blocked := false
	for j := 0; j < size; j++ {
		tj := &br.threads[base+j]
		if tj.state != stWarp || !br.sameCollective(tj.at, t.at) {
			if mask>>j&1 != 0 && tj.state != stExit {
				blocked = true
			}
			continue
		}
		mj := uint32(br.laneRegs(base + j)[br.k.code[tj.at].e])
		in0, inj := mask>>j&1 != 0, mj&mask != 0
		if mj != mask && (in0 || inj) {
			return 0, br.errAt(base+j, in.line, "%s membermask 0x%08x of lane %d differs from 0x%08x of lane %d at the same instruction", name, mj, j, mask, l)
		}
		if in0 {
			group |= 1 << j
		}
	}
	if blocked {
		return 0, nil
	}
	return group, nil
}

// sameCollective reports whether a thread waiting at pc `at` takes part in
// the collective at pc `at0`.
func (br *blockRun) sameCollective(at, at0 int32) bool {
	return at == at0 || br.k.code[at].op == opBarWarp && br.k.code[at0].op == opBarWarp
}

// warpDeadlock reports a thread waiting at a warp collective that can never
// complete; it is called when no collective could proceed.
func (br *blockRun) warpDeadlock() *ExecError {
	code := br.k.code
	for i := range br.threads {
		t := &br.threads[i]
		if t.state != stWarp {
			continue
		}
		in := &code[t.at]
		base := i / warpSize * warpSize
		size := min(warpSize, br.n-base)
		members := ^uint32(0) >> (warpSize - size)
		if in.op == opShfl || in.op == opVote || in.op == opBarWarp {
			members &= uint32(br.laneRegs(i)[in.e])
		}
		for j := 0; j < size; j++ {
			tj := &br.threads[base+j]
			if members>>j&1 == 0 || tj.state == stExit || tj.state == stWarp && br.sameCollective(tj.at, t.at) {
				continue
			}
			where := "bar.sync"
			if tj.state == stWarp {
				where = "a different warp collective (" + warpOpName(&code[tj.at]) + ")"
			}
			return br.errAt(i, in.line, "%s can never complete: lane %d (thread %v) waits at %s at line %d", warpOpName(in), j, br.tid(base+j), where, code[tj.at].line)
		}
		return br.errAt(i, in.line, "%s can never complete", warpOpName(in))
	}
	return nil
}

// shfl performs shfl.sync for the lanes of group, following the PTX ISA
// pseudocode: b[4:0] is the lane or offset, c[4:0] the clamp and c[12:8]
// the segment mask; an out-of-range source lane copies the own value and
// clears the predicate.
func (br *blockRun) shfl(in *inst, base, size int, group uint32) *ExecError {
	var src, out [warpSize]uint32
	var pv [warpSize]bool
	for g := group; g != 0; g &= g - 1 {
		j := bits.TrailingZeros32(g)
		src[j] = uint32(br.laneRegs(base + j)[in.a])
	}
	for g := group; g != 0; g &= g - 1 {
		l := bits.TrailingZeros32(g)
		r := br.laneRegs(base + l)
		bval := int(r[in.b] & 31)
		c := uint32(r[in.c])
		cval, seg := int(c&31), int(c>>8&31)
		maxLane := l&seg | cval&^seg
		minLane := l & seg
		var j int
		var p bool
		switch in.wmode {
		case shflUp:
			j = l - bval
			p = j >= maxLane
		case shflDown:
			j = l + bval
			p = j <= maxLane
		case shflBfly:
			j = l ^ bval
			p = j <= maxLane
		default:
			j = minLane | bval&^seg
			p = j <= maxLane
		}
		if !p {
			j = l
		}
		if group>>j&1 == 0 {
			mask := uint32(r[in.e])
			why := fmt.Sprintf("which is not in membermask 0x%08x", mask)
			switch {
			case j >= size:
				why = "which does not exist"
			case mask>>j&1 != 0:
				why = fmt.Sprintf("which exited at line %d", br.k.code[br.threads[base+j].at].line)
			}
			return br.errAt(base+l, in.line, "shfl.sync reads lane %d, %s: the value is undefined", j, why)
		}
		out[l], pv[l] = src[j], p
	}
	for g := group; g != 0; g &= g - 1 {
		l := bits.TrailingZeros32(g)
		r := br.laneRegs(base + l)
		r[in.d] = uint64(out[l]) & in.dmask
		if in.d2 >= 0 {
			r[in.d2] = b2u(pv[l])
		}
	}
	return nil
}

// vote performs vote.sync over the lanes of group (the non-exited lanes of
// the membermask).
func (br *blockRun) vote(in *inst, base int, group uint32) {
	var ballot uint32
	for g := group; g != 0; g &= g - 1 {
		l := bits.TrailingZeros32(g)
		if (br.laneRegs(base + l)[in.a] != 0) != in.cneg {
			ballot |= 1 << l
		}
	}
	var v uint64
	switch in.wmode {
	case voteAll:
		v = b2u(ballot == group)
	case voteAny:
		v = b2u(ballot != 0)
	case voteUni:
		v = b2u(ballot == group || ballot == 0)
	default:
		v = uint64(ballot)
	}
	for g := group; g != 0; g &= g - 1 {
		br.laneRegs(base + bits.TrailingZeros32(g))[in.d] = v & in.dmask
	}
}
