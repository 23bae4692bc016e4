package ptx

import (
	"strconv"
	"strings"
)

func (p *parser) entry(line int) error {
	nt, err := p.next()
	if err != nil {
		return err
	}
	if nt.kind != tkIdent || strings.HasPrefix(nt.text, ".") || strings.HasPrefix(nt.text, "%") {
		return errAt(nt.line, "expected a kernel name, found %q", nt.text)
	}
	if _, dup := p.mod.kernels[nt.text]; dup {
		return errAt(nt.line, "kernel %s defined twice", nt.text)
	}
	k := &Kernel{Name: nt.text, mod: p.mod, line: line, localVars: map[string]int{}}
	b := &builder{p: p, k: k, scopes: []map[string]int32{{}}, labels: map[string]int32{},
		params: map[string]int{}, local: map[string]int{}, sharedIx: map[string]int{}, consts: map[constKey]int32{}}
	if p.peek() == "(" {
		p.pos++
		if err := b.paramList(); err != nil {
			return err
		}
	}
	for p.peek() != "{" && p.peek() != ";" {
		t, err := p.next()
		if err != nil {
			return err
		}
		switch t.text {
		case ".maxntid", ".reqntid":
			var d Dim3
			for i := 0; i < 3; i++ {
				n, err := p.next()
				if err != nil {
					return err
				}
				v, err := strconv.ParseUint(n.text, 0, 32)
				if err != nil {
					return errAt(n.line, "bad %s value %q", t.text, n.text)
				}
				d[i] = uint32(v)
				if p.peek() != "," {
					break
				}
				p.pos++
			}
			for i := range d {
				if d[i] == 0 {
					d[i] = 1
				}
			}
			if t.text == ".maxntid" {
				k.maxntid = d
			} else {
				k.reqntid = d
			}
		case ".minnctapersm", ".maxnreg", ".maxnctapersm":
			if _, err := p.next(); err != nil {
				return err
			}
		case ".noreturn":
		default:
			return errAt(t.line, "unsupported kernel directive %s", t.text)
		}
	}
	if p.peek() == ";" { // a prototype without a body
		p.pos++
		return nil
	}
	p.pos++ // '{'
	if err := b.body(); err != nil {
		return err
	}
	if err := b.finish(); err != nil {
		return err
	}
	p.mod.kernels[k.Name] = k
	p.mod.order = append(p.mod.order, k.Name)
	return nil
}

func (b *builder) paramList() error {
	p := b.p
	if p.peek() == ")" {
		p.pos++
		return nil
	}
	for {
		if err := p.expect(".param"); err != nil {
			return err
		}
		d, err := b.paramDecl()
		if err != nil {
			return err
		}
		if _, dup := b.params[d.name]; dup {
			return errAt(d.line, "parameter %s declared twice", d.name)
		}
		off := alignUp(b.k.paramSize, d.align)
		b.params[d.name] = off
		b.k.params = append(b.k.params, Param{Name: d.name, Size: d.size})
		b.k.paramOff = append(b.k.paramOff, off)
		b.k.paramSize = off + d.size
		if b.k.paramSize > 32764 {
			return errAt(d.line, "kernel parameters exceed 32764 bytes")
		}
		t, err := p.next()
		if err != nil {
			return err
		}
		if t.text == ")" {
			return nil
		}
		if t.text != "," {
			return errAt(t.line, "expected ',' or ')' in parameter list, found %q", t.text)
		}
	}
}

func (b *builder) paramDecl() (*varDecl, error) {
	p := b.p
	d := &varDecl{line: p.line()}
	for {
		t, err := p.next()
		if err != nil {
			return nil, err
		}
		switch t.text {
		case ".align":
			if d.align, err = p.alignment(); err != nil {
				return nil, err
			}
			continue
		case ".ptr", ".global", ".shared", ".const", ".local":
			continue
		}
		if strings.HasPrefix(t.text, ".") {
			ty, ok := parseType(t.text[1:])
			if !ok || ty.k == kPred {
				return nil, errAt(t.line, "unsupported parameter type %s", t.text)
			}
			if d.t.k != kNone {
				return nil, errAt(t.line, "parameter has two types")
			}
			d.t = ty
			continue
		}
		if d.t.k == kNone {
			return nil, errAt(t.line, "parameter %q has no type", t.text)
		}
		if t.kind != tkIdent || strings.HasPrefix(t.text, "%") {
			return nil, errAt(t.line, "expected a parameter name, found %q", t.text)
		}
		d.name = t.text
		break
	}
	n := 1
	if p.peek() == "[" {
		p.pos++
		nt, err := p.next()
		if err != nil {
			return nil, err
		}
		v, err := strconv.ParseUint(nt.text, 0, 16)
		if err != nil || v == 0 {
			return nil, errAt(nt.line, "bad parameter array size %q", nt.text)
		}
		n = int(v)
		if err := p.expect("]"); err != nil {
			return nil, err
		}
	}
	d.size = n * d.t.bytes()
	if d.align == 0 {
		d.align = d.t.bytes()
	}
	return d, nil
}

func alignUp(x, a int) int {
	if a <= 1 {
		return x
	}
	return (x + a - 1) / a * a
}
