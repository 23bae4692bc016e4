package ptx

import (
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
)

// ExecError is a fault during a launch: it names the kernel, block, thread
// and PTX line.
type ExecError struct {
	Kernel string
	Block  Dim3
	Thread Dim3
	Line   int
	Msg    string
}

func (e *ExecError) Error() string {
	return fmt.Sprintf("ptx: kernel %s block %v thread %v line %d: %s", e.Kernel, e.Block, e.Thread, e.Line, e.Msg)
}

// Limits of sm_80 that Launch enforces.
const (
	maxThreads      = 1024
	maxStaticShared = 48 << 10
	maxShared       = 227 << 10
)

// Launch runs k over grid x block threads. Each argument fills the next
// .param of the kernel, low bytes first; parameters wider than 8 bytes need
// LaunchParams.
func (m *Machine) Launch(k *Kernel, grid, block Dim3, dynShared uint32, args ...uint64) error {
	if k == nil {
		return fmt.Errorf("ptx: launch of a nil kernel")
	}
	if len(args) != len(k.params) {
		return fmt.Errorf("ptx: kernel %s takes %d arguments, got %d", k.Name, len(k.params), len(args))
	}
	buf := make([]byte, k.paramSize)
	for i, p := range k.params {
		if p.Size > 8 {
			return fmt.Errorf("ptx: kernel %s parameter %s is %d bytes; use LaunchParams", k.Name, p.Name, p.Size)
		}
		var tmp [8]byte
		binary.LittleEndian.PutUint64(tmp[:], args[i])
		copy(buf[k.paramOff[i]:], tmp[:p.Size])
	}
	return m.LaunchParams(k, grid, block, dynShared, buf)
}

// ParamOffset is the byte offset of parameter i in the buffer LaunchParams takes.
func (k *Kernel) ParamOffset(i int) int { return k.paramOff[i] }

// ParamBytes is the size of the parameter buffer LaunchParams takes.
func (k *Kernel) ParamBytes() int { return k.paramSize }

// LaunchParams is Launch with the raw parameter buffer (ParamBytes long,
// parameter i at ParamOffset(i)).
func (m *Machine) LaunchParams(k *Kernel, grid, block Dim3, dynShared uint32, params []byte) error {
	if k == nil {
		return fmt.Errorf("ptx: launch of a nil kernel")
	}
	fail := func(format string, a ...any) error {
		return fmt.Errorf("ptx: kernel %s: %s", k.Name, fmt.Sprintf(format, a...))
	}
	if len(params) != k.paramSize {
		return fail("parameter buffer is %d bytes, want %d", len(params), k.paramSize)
	}
	for i := 0; i < 3; i++ {
		if grid[i] == 0 || block[i] == 0 {
			return fail("empty grid %v or block %v", grid, block)
		}
	}
	if grid[0] >= 1<<31 || grid[1] > 65535 || grid[2] > 65535 {
		return fail("grid %v exceeds (2^31-1, 65535, 65535)", grid)
	}
	if block[0] > 1024 || block[1] > 1024 || block[2] > 64 {
		return fail("block %v exceeds (1024, 1024, 64)", block)
	}
	nthreads := int(block[0]) * int(block[1]) * int(block[2])
	if nthreads > maxThreads {
		return fail("block %v has %d threads, more than %d", block, nthreads, maxThreads)
	}
	if k.reqntid != (Dim3{}) && block != k.reqntid {
		return fail("block %v differs from .reqntid %v", block, k.reqntid)
	}
	if k.maxntid != (Dim3{}) && nthreads > int(k.maxntid[0]*k.maxntid[1]*k.maxntid[2]) {
		return fail("block %v exceeds .maxntid %v", block, k.maxntid)
	}
	if k.static > maxStaticShared {
		return fail("%d bytes of static shared memory exceed %d", k.static, maxStaticShared)
	}
	shTotal := uint64(alignUp(k.static, k.dynAlign)) + uint64(dynShared)
	if shTotal > maxShared {
		return fail("%d bytes of shared memory (static %d + dynamic %d) exceed %d", shTotal, k.static, dynShared, maxShared)
	}
	if uint64(k.localSize)*uint64(nthreads) > 256<<20 {
		return fail("local memory of a block exceeds 256 MiB")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	l, err := m.load(k.mod)
	if err != nil {
		return err
	}
	tmpl := make([]uint64, k.nregs)
	for _, c := range k.consts {
		switch c.kind {
		case ckImm:
			tmpl[c.reg] = c.val
		case ckGlobal:
			tmpl[c.reg] = l.addrs[c.val]
		case ckSpecial:
			switch int(c.val) {
			case srNtidX, srNtidY, srNtidZ:
				tmpl[c.reg] = uint64(block[c.val-srNtidX])
			case srNctaidX, srNctaidY, srNctaidZ:
				tmpl[c.reg] = uint64(grid[c.val-srNctaidX])
			case srNwarpid:
				tmpl[c.reg] = uint64((nthreads + 31) / 32)
			case srDynSmem:
				tmpl[c.reg] = uint64(dynShared)
			case srTotalSmem:
				tmpl[c.reg] = shTotal
			}
		}
	}
	nblocks := uint64(grid[0]) * uint64(grid[1]) * uint64(grid[2])
	workers := m.workers()
	if uint64(workers) > nblocks {
		workers = int(nblocks)
	}
	var (
		next   atomic.Uint64
		failAt atomic.Uint64
		mu     sync.Mutex
		first  *ExecError
		steps  atomic.Uint64
		wg     sync.WaitGroup
	)
	failAt.Store(^uint64(0))
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			br := newBlockRun(m, k, grid, block, nthreads, int(shTotal), params, tmpl)
			for {
				b := next.Add(1) - 1
				if b >= nblocks || b > failAt.Load() {
					break
				}
				if e := br.runBlockSafe(b); e != nil {
					mu.Lock()
					if first == nil || b < blockLinear(first.Block, grid) {
						first = e
					}
					for {
						cur := failAt.Load()
						if b >= cur || failAt.CompareAndSwap(cur, b) {
							break
						}
					}
					mu.Unlock()
				}
			}
			steps.Add(br.steps)
		}()
	}
	wg.Wait()
	m.executed += steps.Load()
	if first != nil {
		return first
	}
	return nil
}

func blockLinear(b, grid Dim3) uint64 {
	return uint64(b[0]) + uint64(grid[0])*(uint64(b[1])+uint64(grid[1])*uint64(b[2]))
}

// Thread states.
const (
	stRun = iota
	stBar
	stExit
	stWarp // waits at a warp collective
)

type thread struct {
	pc    int32
	state uint8
	at    int32 // pc of the barrier or warp collective waited at, or of the exit
	cc    uint64
	steps uint64
}

// blockRun executes the blocks one worker takes, reusing its buffers.
type blockRun struct {
	m        *Machine
	k        *Kernel
	grid     Dim3
	block    Dim3
	ctaid    Dim3
	n        int
	nregs    int
	regs     []uint64
	tmpl     []uint64
	threads  []thread
	shared   []byte
	local    []byte
	params   []byte
	gc       *region // last global region touched
	steps    uint64
	stepCap  uint64
	bar      int32
	tidConst []constReg
	ctaConst []constReg
}

func newBlockRun(m *Machine, k *Kernel, grid, block Dim3, n, shBytes int, params []byte, tmpl []uint64) *blockRun {
	br := &blockRun{m: m, k: k, grid: grid, block: block, n: n, nregs: k.nregs,
		regs: make([]uint64, n*k.nregs), tmpl: append([]uint64(nil), tmpl...),
		threads: make([]thread, n), shared: make([]byte, shBytes),
		local: make([]byte, n*k.localSize), params: params, stepCap: m.stepCap}
	for _, c := range k.consts {
		if c.kind != ckSpecial {
			continue
		}
		switch {
		case c.val < srNtidX:
			br.tidConst = append(br.tidConst, c)
		case c.val >= srCtaidX && c.val <= srCtaidZ:
			br.ctaConst = append(br.ctaConst, c)
		}
	}
	return br
}

func (br *blockRun) tid(i int) Dim3 {
	bx, by := int(br.block[0]), int(br.block[1])
	return Dim3{uint32(i % bx), uint32(i / bx % by), uint32(i / (bx * by))}
}

func (br *blockRun) errAt(ti int, line int32, format string, a ...any) *ExecError {
	return &ExecError{Kernel: br.k.Name, Block: br.ctaid, Thread: br.tid(ti), Line: int(line), Msg: fmt.Sprintf(format, a...)}
}

// runBlockSafe is runBlock with a last line of defence: an interpreter bug
// becomes an error naming the block instead of crashing the process.
func (br *blockRun) runBlockSafe(b uint64) (e *ExecError) {
	defer func() {
		if r := recover(); r != nil {
			e = &ExecError{Kernel: br.k.Name, Block: br.ctaid, Msg: fmt.Sprintf("internal error (please report): %v", r)}
		}
	}()
	return br.runBlock(b)
}

func (br *blockRun) runBlock(b uint64) *ExecError {
	gx, gy := uint64(br.grid[0]), uint64(br.grid[1])
	br.ctaid = Dim3{uint32(b % gx), uint32(b / gx % gy), uint32(b / (gx * gy))}
	for _, c := range br.ctaConst {
		br.tmpl[c.reg] = uint64(br.ctaid[c.val-srCtaidX])
	}
	clear(br.shared)
	clear(br.local)
	nr := br.nregs
	for i := 0; i < br.n; i++ {
		r := br.regs[i*nr : (i+1)*nr]
		copy(r, br.tmpl)
		tid := br.tid(i)
		lane := uint64(i % 32)
		for _, c := range br.tidConst {
			var v uint64
			switch c.val {
			case srTidX, srTidY, srTidZ:
				v = uint64(tid[c.val-srTidX])
			case srLaneid:
				v = lane
			case srWarpid:
				v = uint64(i / 32)
			case srLanemaskEq:
				v = 1 << lane
			case srLanemaskLe:
				v = 1<<(lane+1) - 1
			case srLanemaskLt:
				v = 1<<lane - 1
			case srLanemaskGe:
				v = uint64(^uint32(0) << lane)
			case srLanemaskGt:
				v = uint64(^uint32(0) << lane << 1)
			}
			r[c.reg] = v & 0xffffffff
		}
		br.threads[i] = thread{}
	}
	for {
		for i := range br.threads {
			if br.threads[i].state == stRun {
				if e := br.exec(i); e != nil {
					return e
				}
			}
		}
		// Every thread now waits at a barrier or a warp collective, or has
		// exited. Warp collectives go first: a barrier cannot complete
		// while a thread waits at one.
		if br.k.warp {
			progress, e := br.resolveWarps()
			if e != nil {
				return e
			}
			if progress {
				continue
			}
			if e := br.warpDeadlock(); e != nil {
				return e
			}
		}
		waiter, exited := -1, -1
		for i := range br.threads {
			switch br.threads[i].state {
			case stBar:
				if waiter < 0 {
					waiter = i
				}
			case stExit:
				if exited < 0 {
					exited = i
				}
			}
		}
		if waiter < 0 {
			return nil
		}
		wt := &br.threads[waiter]
		code := br.k.code
		if exited >= 0 {
			return br.errAt(waiter, code[wt.at].line, "barrier can never complete: thread %v exited at line %d", br.tid(exited), code[br.threads[exited].at].line)
		}
		for i := range br.threads {
			t := &br.threads[i]
			if t.at != wt.at && (code[wt.at].flags&flAligned != 0 || code[t.at].flags&flAligned != 0) {
				return br.errAt(i, code[t.at].line, "waits at a different barrier than thread %v (line %d)", br.tid(waiter), code[wt.at].line)
			}
			t.state = stRun
		}
	}
}
