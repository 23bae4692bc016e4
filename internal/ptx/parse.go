package ptx

import (
	"fmt"
	"strconv"
	"strings"
)

// Parse reads a whole PTX module. Errors name the offending line.
func Parse(src string) (*Module, error) {
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks, mod: &Module{
		kernels: map[string]*Kernel{},
		varIdx:  map[string]int{},
		shared:  map[string]*sharedVar{},
	}}
	if err := p.module(); err != nil {
		return nil, err
	}
	return p.mod, nil
}

type parser struct {
	toks []token
	pos  int
	mod  *Module
}

type parseError struct {
	line int
	msg  string
}

func (e *parseError) Error() string { return fmt.Sprintf("ptx: line %d: %s", e.line, e.msg) }

func errAt(line int, format string, args ...any) error {
	return &parseError{line, fmt.Sprintf(format, args...)}
}

func (p *parser) eof() bool { return p.pos >= len(p.toks) }

func (p *parser) line() int {
	if p.pos < len(p.toks) {
		return p.toks[p.pos].line
	}
	if len(p.toks) > 0 {
		return p.toks[len(p.toks)-1].line
	}
	return 1
}

func (p *parser) peek() string {
	if p.pos < len(p.toks) {
		return p.toks[p.pos].text
	}
	return ""
}

func (p *parser) next() (token, error) {
	if p.pos >= len(p.toks) {
		return token{}, errAt(p.line(), "unexpected end of input")
	}
	t := p.toks[p.pos]
	p.pos++
	return t, nil
}

func (p *parser) expect(s string) error {
	t, err := p.next()
	if err != nil {
		return err
	}
	if t.text != s {
		return errAt(t.line, "expected %q, found %q", s, t.text)
	}
	return nil
}

// skipLine drops the rest of the tokens on line.
func (p *parser) skipLine(line int) {
	for p.pos < len(p.toks) && p.toks[p.pos].line == line {
		p.pos++
	}
}

// skipStmt drops tokens through the next ';'.
func (p *parser) skipStmt() error {
	for {
		t, err := p.next()
		if err != nil {
			return err
		}
		if t.text == ";" {
			return nil
		}
	}
}

// alignment parses the value after ".align": a power of two up to 4096.
func (p *parser) alignment() (int, error) {
	n, err := p.next()
	if err != nil {
		return 0, err
	}
	a, err := strconv.Atoi(n.text)
	if err != nil || a <= 0 || a&(a-1) != 0 || a > 4096 {
		return 0, errAt(n.line, "bad .align %q", n.text)
	}
	return a, nil
}

// skipBraces drops a balanced { ... } group; the '{' is next.
func (p *parser) skipBraces() error {
	depth := 0
	for {
		t, err := p.next()
		if err != nil {
			return err
		}
		switch t.text {
		case "{":
			depth++
		case "}":
			depth--
			if depth == 0 {
				return nil
			}
		}
	}
}

func (p *parser) module() error {
	extern := false
	for !p.eof() {
		t, _ := p.next()
		switch t.text {
		case ".version", ".target", ".file", ".loc":
			p.skipLine(t.line)
		case ".address_size":
			n, err := p.next()
			if err != nil {
				return err
			}
			if n.text != "64" {
				return errAt(t.line, "only .address_size 64 is supported, found %s", n.text)
			}
		case ".visible", ".weak", ".common":
			continue
		case ".extern":
			extern = true
			continue
		case ".entry":
			if err := p.entry(t.line); err != nil {
				return err
			}
		case ".func":
			if err := p.skipFunc(); err != nil {
				return err
			}
		case ".global", ".const", ".shared":
			if err := p.moduleVar(t, extern); err != nil {
				return err
			}
		case ".pragma":
			if err := p.skipStmt(); err != nil {
				return err
			}
		case ".section":
			if err := p.skipBraces(); err != nil {
				return err
			}
		default:
			return errAt(t.line, "unexpected %q at module scope", t.text)
		}
		extern = false
	}
	return nil
}

// skipFunc passes over a .func declaration or definition. Device functions
// are never executed: a `call` is rejected where it appears.
func (p *parser) skipFunc() error {
	for !p.eof() {
		switch p.peek() {
		case ";":
			p.pos++
			return nil
		case "{":
			return p.skipBraces()
		}
		p.pos++
	}
	return errAt(p.line(), "unexpected end of input in .func")
}

// varDecl is a parsed variable declaration (after the state space).
type varDecl struct {
	name  string
	align int
	t     ptype
	size  int  // total bytes
	open  bool // name[] with no size
	init  []byte
	line  int
}

// maxVarBytes bounds one variable (a GPU's shared and local windows are far
// smaller; module variables this large are not plausible kernel data).
const maxVarBytes = 64 << 20

// varDecl parses `[.align N] [.vN] .type name[dims] [= init] ;`.
func (p *parser) varDecl(allowInit bool) (*varDecl, error) {
	d := &varDecl{line: p.line()}
	vec := 1
	for {
		t, err := p.next()
		if err != nil {
			return nil, err
		}
		if t.text == ".align" {
			if d.align, err = p.alignment(); err != nil {
				return nil, err
			}
			continue
		}
		if t.text == ".v2" || t.text == ".v4" {
			vec = int(t.text[2] - '0')
			continue
		}
		if t.text == ".ptr" || t.text == ".global" || t.text == ".shared" || t.text == ".const" || t.text == ".local" {
			continue
		}
		if strings.HasPrefix(t.text, ".") {
			ty, ok := parseType(t.text[1:])
			if !ok || ty.k == kPred {
				return nil, errAt(t.line, "unsupported variable type %s", t.text)
			}
			d.t = ty
			break
		}
		return nil, errAt(t.line, "expected a type, found %q", t.text)
	}
	nt, err := p.next()
	if err != nil {
		return nil, err
	}
	if nt.kind != tkIdent || strings.HasPrefix(nt.text, ".") || strings.HasPrefix(nt.text, "%") {
		return nil, errAt(nt.line, "expected a variable name, found %q", nt.text)
	}
	d.name = nt.text
	elems := vec
	for p.peek() == "[" {
		p.pos++
		if p.peek() == "]" {
			p.pos++
			d.open = true
			continue
		}
		n, err := p.next()
		if err != nil {
			return nil, err
		}
		v, err := strconv.ParseInt(n.text, 0, 64)
		if err != nil || v <= 0 || v > 1<<30 {
			return nil, errAt(n.line, "bad array size %q", n.text)
		}
		elems *= int(v)
		if elems > 1<<30 {
			return nil, errAt(n.line, "array too large")
		}
		if err := p.expect("]"); err != nil {
			return nil, err
		}
	}
	d.size = elems * d.t.bytes()
	if d.size > maxVarBytes {
		return nil, errAt(nt.line, "variable %s is %d bytes, more than %d", d.name, d.size, maxVarBytes)
	}
	if d.align == 0 {
		d.align = d.t.bytes() * vec
	}
	if p.peek() == "=" {
		if !allowInit || d.open {
			return nil, errAt(p.line(), "initialiser not allowed here")
		}
		p.pos++
		if err := p.initialiser(d); err != nil {
			return nil, err
		}
	}
	return d, p.expect(";")
}

// initialiser parses `{1, 2, {3}}` or a single value into d.init.
func (p *parser) initialiser(d *varDecl) error {
	var vals []token
	depth := 0
	for {
		t, err := p.next()
		if err != nil {
			return err
		}
		switch t.text {
		case "{":
			depth++
		case "}":
			depth--
		case ",":
		case "-":
			n, err := p.next()
			if err != nil {
				return err
			}
			vals = append(vals, token{"-" + n.text, n.line, n.kind})
		default:
			if t.kind != tkNumber {
				return errAt(t.line, "unsupported initialiser %q (only numeric constants)", t.text)
			}
			vals = append(vals, t)
		}
		if depth <= 0 && p.peek() == ";" {
			break
		}
		if depth < 0 {
			return errAt(t.line, "unbalanced initialiser")
		}
	}
	sz := d.t.bytes()
	if len(vals)*sz > d.size {
		return errAt(d.line, "initialiser has %d elements, variable holds %d", len(vals), d.size/sz)
	}
	d.init = make([]byte, d.size)
	for i, v := range vals {
		x, err := parseImm(v.text, d.t)
		if err != nil {
			return errAt(v.line, "%v", err)
		}
		for b := 0; b < sz; b++ {
			d.init[i*sz+b] = byte(x >> (8 * b))
		}
	}
	return nil
}

func (p *parser) moduleVar(t token, extern bool) error {
	d, err := p.varDecl(t.text != ".shared")
	if err != nil {
		return err
	}
	if _, dup := p.mod.varIdx[d.name]; dup {
		return errAt(d.line, "variable %s declared twice", d.name)
	}
	if _, dup := p.mod.shared[d.name]; dup {
		return errAt(d.line, "variable %s declared twice", d.name)
	}
	switch t.text {
	case ".shared":
		if d.open && !extern {
			return errAt(d.line, "shared array %s[] without a size must be .extern", d.name)
		}
		p.mod.shared[d.name] = &sharedVar{name: d.name, align: d.align, size: d.size, extern: extern, line: d.line}
	default:
		if extern {
			return errAt(d.line, "external %s variable %s cannot be resolved", t.text, d.name)
		}
		if d.open {
			return errAt(d.line, "variable %s has no size", d.name)
		}
		sp := spGlobal
		if t.text == ".const" {
			sp = spConst
		}
		p.mod.varIdx[d.name] = len(p.mod.vars)
		p.mod.vars = append(p.mod.vars, &modVar{name: d.name, space: sp, align: d.align, size: d.size, init: d.init, line: d.line})
	}
	return nil
}

// parseImm reads an integer or float literal for type t as the register bits.
func parseImm(s string, t ptype) (uint64, error) {
	neg := false
	if strings.HasPrefix(s, "-") {
		neg = true
		s = s[1:]
	}
	if len(s) > 2 && s[0] == '0' && (s[1] == 'f' || s[1] == 'F' || s[1] == 'd' || s[1] == 'D') {
		bits := 32
		if s[1] == 'd' || s[1] == 'D' {
			bits = 64
		}
		if len(s)-2 != bits/4 {
			return 0, fmt.Errorf("bad float literal %q", s)
		}
		v, err := strconv.ParseUint(s[2:], 16, bits)
		if err != nil {
			return 0, fmt.Errorf("bad float literal %q", s)
		}
		if t.k != kF || int(t.bits) != bits {
			return 0, fmt.Errorf("float literal %q used with type %v", s, t)
		}
		if neg {
			v ^= 1 << (bits - 1)
		}
		return v, nil
	}
	if t.k == kF {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return 0, fmt.Errorf("bad float literal %q", s)
		}
		if neg {
			f = -f
		}
		if t.bits == 32 {
			return uint64(f32bits(float32(f))), nil
		}
		return f64bits(f), nil
	}
	s = strings.TrimSuffix(strings.TrimSuffix(s, "U"), "u")
	base := 10
	switch {
	case strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X"):
		base, s = 16, s[2:]
	case strings.HasPrefix(s, "0b") || strings.HasPrefix(s, "0B"):
		base, s = 2, s[2:]
	case len(s) > 1 && s[0] == '0':
		base, s = 8, s[1:]
	}
	v, err := strconv.ParseUint(s, base, 64)
	if err != nil {
		return 0, fmt.Errorf("bad integer literal %q", s)
	}
	if neg {
		v = -v
	}
	return v, nil
}
