package ptx

import (
	"strconv"
	"strings"
)

// builder decodes one .entry body into a Kernel.
type builder struct {
	p        *parser
	k        *Kernel
	scopes   []map[string]int32
	regBits  []uint8 // declared width of each register (1 for .pred, 64 for pseudo-registers)
	isConst  []bool
	labels   map[string]int32
	fixups   []fixup
	params   map[string]int
	local    map[string]int
	sharedIx map[string]int
	consts   map[constKey]int32
}

type fixup struct {
	pc    int
	label string
	line  int
}

type constKey struct {
	kind constKind
	val  uint64
}

// paramDecl parses a parameter after .param (no trailing ';').
// newReg appends a register of the given width.
func (b *builder) newReg(bits uint8, isConst bool) (int32, error) {
	if len(b.regBits) >= 1<<20 {
		return 0, errAt(b.p.line(), "too many registers")
	}
	b.regBits = append(b.regBits, bits)
	b.isConst = append(b.isConst, isConst)
	return int32(len(b.regBits) - 1), nil
}

// constReg returns the pseudo-register holding a launch-constant value.
func (b *builder) constReg(kind constKind, val uint64) (int32, error) {
	key := constKey{kind, val}
	if r, ok := b.consts[key]; ok {
		return r, nil
	}
	r, err := b.newReg(64, true)
	if err != nil {
		return 0, err
	}
	b.consts[key] = r
	b.k.consts = append(b.k.consts, constReg{reg: r, kind: kind, val: val})
	return r, nil
}

func (b *builder) lookupReg(name string) (int32, bool) {
	for i := len(b.scopes) - 1; i >= 0; i-- {
		if r, ok := b.scopes[i][name]; ok {
			return r, true
		}
	}
	return 0, false
}

// regDecl parses `.reg .type %r<N>;` or `.reg .type %a, %b;`.
func (b *builder) regDecl() error {
	p := b.p
	t, err := p.next()
	if err != nil {
		return err
	}
	ty, ok := parseType(strings.TrimPrefix(t.text, "."))
	if !ok || !strings.HasPrefix(t.text, ".") {
		return errAt(t.line, "unsupported register type %s", t.text)
	}
	if ty.bits == 8 {
		return errAt(t.line, "8-bit registers are not supported")
	}
	for {
		nt, err := p.next()
		if err != nil {
			return err
		}
		if nt.kind != tkIdent || strings.HasPrefix(nt.text, ".") {
			return errAt(nt.line, "expected a register name, found %q", nt.text)
		}
		count := -1
		if p.peek() == "<" {
			p.pos++
			ct, err := p.next()
			if err != nil {
				return err
			}
			v, err := strconv.Atoi(ct.text)
			if err != nil || v < 0 || v > 1<<20 {
				return errAt(ct.line, "bad register count %q", ct.text)
			}
			count = v
			if err := p.expect(">"); err != nil {
				return err
			}
		}
		scope := b.scopes[len(b.scopes)-1]
		add := func(name string) error {
			if _, dup := scope[name]; dup {
				return errAt(nt.line, "register %s declared twice", name)
			}
			if _, sp := specialNames[name]; sp {
				return errAt(nt.line, "register %s shadows a special register", name)
			}
			r, err := b.newReg(ty.bits, false)
			if err != nil {
				return err
			}
			scope[name] = r
			return nil
		}
		if count < 0 {
			if err := add(nt.text); err != nil {
				return err
			}
		} else {
			for i := 0; i < count; i++ {
				if err := add(nt.text + strconv.Itoa(i)); err != nil {
					return err
				}
			}
		}
		s, err := p.next()
		if err != nil {
			return err
		}
		if s.text == ";" {
			return nil
		}
		if s.text != "," {
			return errAt(s.line, "expected ',' or ';' in .reg, found %q", s.text)
		}
	}
}

func (b *builder) body() error {
	p := b.p
	for {
		t, err := p.next()
		if err != nil {
			return err
		}
		switch t.text {
		case "{":
			b.scopes = append(b.scopes, map[string]int32{})
			continue
		case "}":
			if len(b.scopes) == 1 {
				return nil
			}
			b.scopes = b.scopes[:len(b.scopes)-1]
			continue
		case ".reg":
			if err := b.regDecl(); err != nil {
				return err
			}
			continue
		case ".local", ".shared":
			d, err := p.varDecl(false)
			if err != nil {
				return err
			}
			if d.open {
				return errAt(d.line, "%s array %s needs a size", t.text, d.name)
			}
			if b.symbolKnown(d.name) {
				return errAt(d.line, "variable %s declared twice", d.name)
			}
			if t.text == ".local" {
				off := alignUp(b.k.localSize, d.align)
				b.local[d.name] = off
				b.k.localVars[d.name] = off
				b.k.localSize = off + d.size
				if b.k.localSize > 512*1024 {
					return errAt(d.line, "local memory exceeds 512 KiB per thread")
				}
			} else {
				b.sharedIx[d.name] = len(b.k.shared)
				b.k.shared = append(b.k.shared, &sharedVar{name: d.name, align: d.align, size: d.size, line: d.line})
			}
			continue
		case ".pragma":
			if err := p.skipStmt(); err != nil {
				return err
			}
			continue
		case ".loc", ".file":
			p.skipLine(t.line)
			continue
		}
		if t.kind == tkIdent && p.peek() == ":" && !strings.HasPrefix(t.text, "%") && !strings.HasPrefix(t.text, ".") {
			p.pos++
			if _, dup := b.labels[t.text]; dup {
				return errAt(t.line, "label %s defined twice", t.text)
			}
			b.labels[t.text] = int32(len(b.k.code))
			continue
		}
		// An instruction, possibly guarded.
		guard, gneg := int32(-1), false
		if t.text == "@" {
			g, err := p.next()
			if err != nil {
				return err
			}
			if g.text == "!" {
				gneg = true
				if g, err = p.next(); err != nil {
					return err
				}
			}
			r, ok := b.lookupReg(g.text)
			if !ok || b.regBits[r] != 1 {
				return errAt(g.line, "guard %q is not a predicate register", g.text)
			}
			guard = r
			if t, err = p.next(); err != nil {
				return err
			}
		}
		if t.kind != tkIdent || strings.HasPrefix(t.text, ".") || strings.HasPrefix(t.text, "%") {
			return errAt(t.line, "unexpected %q in function body", t.text)
		}
		start := p.pos
		for p.peek() != ";" {
			if p.eof() || p.peek() == "}" && braceDepth(p.toks[start:p.pos]) == 0 {
				return errAt(t.line, "missing ';' after %s", t.text)
			}
			p.pos++
		}
		if err := precheck(t.text, t.line); err != nil {
			return err
		}
		ops, err := parseOperands(p.toks[start:p.pos], t.line)
		p.pos++ // ';'
		if err != nil {
			return err
		}
		in := inst{guard: guard, gneg: gneg, line: int32(t.line), d: -1, d2: -1, a: -1, b: -1, c: -1, e: -1}
		if err := b.decode(&in, t.text, ops); err != nil {
			return err
		}
		b.k.code = append(b.k.code, in)
	}
}

func braceDepth(ts []token) int {
	d := 0
	for _, t := range ts {
		switch t.text {
		case "{":
			d++
		case "}":
			d--
		}
	}
	return d
}

func (b *builder) symbolKnown(name string) bool {
	_, a := b.params[name]
	_, l := b.local[name]
	_, s := b.sharedIx[name]
	return a || l || s
}

// finish resolves labels and lays out shared memory.
func (b *builder) finish() error {
	k := b.k
	for _, f := range b.fixups {
		pc, ok := b.labels[f.label]
		if !ok {
			return errAt(f.line, "undefined label %s", f.label)
		}
		k.code[f.pc].target = pc
	}
	// A final implicit exit so that falling off the end is well defined.
	k.code = append(k.code, inst{op: opExit, guard: -1, d: -1, d2: -1, a: -1, b: -1, c: -1, e: -1, line: int32(b.p.line())})
	off, dynAlign := 0, 16
	k.sharedOff = make([]int, len(k.shared))
	for i, s := range k.shared {
		if s.extern {
			if s.align > dynAlign {
				dynAlign = s.align
			}
			continue
		}
		off = alignUp(off, s.align)
		k.sharedOff[i] = off
		off += s.size
	}
	k.static = off
	k.dynAlign = dynAlign
	dynBase := alignUp(off, dynAlign)
	for i, s := range k.shared {
		if s.extern {
			k.sharedOff[i] = dynBase
		}
	}
	for i := range k.consts {
		if k.consts[i].kind == ckShared {
			k.consts[i].kind = ckImm
			k.consts[i].val = uint64(k.sharedOff[k.consts[i].val])
		}
	}
	k.nregs = len(b.regBits)
	b.p.mod.hazards = append(b.p.mod.hazards, contractionHazards(k.code)...)
	return nil
}

// contractionHazards lists the lines of plain (no .rn) float multiplies
// whose result a plain add or sub reads: ptxas may fuse such a pair into
// one fma (it does by default), which rounds once where this interpreter
// rounds twice.
func contractionHazards(code []inst) []int {
	muls := map[int32][]int{}
	for _, in := range code {
		if in.op == opFMul && in.flags&flPlain != 0 {
			muls[in.d] = append(muls[in.d], int(in.line))
		}
	}
	seen := map[int]bool{}
	var lines []int
	for _, in := range code {
		if (in.op == opFAdd || in.op == opFSub) && in.flags&flPlain != 0 {
			for _, r := range []int32{in.a, in.b} {
				for _, l := range muls[r] {
					if !seen[l] {
						seen[l] = true
						lines = append(lines, l)
					}
				}
			}
		}
	}
	return lines
}
