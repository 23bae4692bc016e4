package ptx

import (
	"strconv"
	"strings"
)

// rawOp is an operand as written, before names are resolved.
type rawOp struct {
	kind  rawKind
	name  string // register, symbol or label; the literal text for immediates
	name2 string // second register of a p|q pair
	neg   bool   // !%p
	off   uint64 // [base+off], sym+off
	base  *rawOp // memory operand base (register, symbol or immediate)
	elems []rawOp
	line  int
}

type rawKind uint8

const (
	rkReg rawKind = iota // %name
	rkImm
	rkSym // a name without %: variable, parameter or label
	rkMem
	rkVec
	rkSink // _
	rkPair
)

// parseOperands splits an instruction's operand tokens at top-level commas.
func parseOperands(ts []token, line int) ([]rawOp, error) {
	var ops []rawOp
	if len(ts) == 0 {
		return nil, nil
	}
	depth, start := 0, 0
	for i := 0; i <= len(ts); i++ {
		if i < len(ts) {
			switch ts[i].text {
			case "[", "{", "(":
				depth++
				continue
			case "]", "}", ")":
				depth--
				continue
			case ",":
				if depth != 0 {
					continue
				}
			default:
				continue
			}
		}
		op, err := parseOperand(ts[start:i], line)
		if err != nil {
			return nil, err
		}
		ops = append(ops, op)
		start = i + 1
	}
	return ops, nil
}

func parseOperand(ts []token, line int) (rawOp, error) {
	if len(ts) == 0 {
		return rawOp{}, errAt(line, "empty operand")
	}
	line = ts[0].line
	text := func() string {
		var s []string
		for _, t := range ts {
			s = append(s, t.text)
		}
		return strings.Join(s, " ")
	}
	first := ts[0].text
	switch {
	case first == "[":
		if ts[len(ts)-1].text != "]" || len(ts) < 3 {
			return rawOp{}, errAt(line, "bad address operand %q", text())
		}
		inner := ts[1 : len(ts)-1]
		var base rawOp
		var off uint64
		switch {
		case len(inner) == 1:
			o, err := parseOperand(inner, line)
			if err != nil {
				return rawOp{}, err
			}
			base = o
		case len(inner) >= 3 && inner[1].text == "+":
			o, err := parseOperand(inner[:1], line)
			if err != nil {
				return rawOp{}, err
			}
			base = o
			num := inner[2:]
			neg := false
			if num[0].text == "-" {
				neg, num = true, num[1:]
			}
			if len(num) != 1 || num[0].kind != tkNumber {
				return rawOp{}, errAt(line, "bad address offset in %q", text())
			}
			v, err := parseImm(num[0].text, ptype{kS, 64})
			if err != nil {
				return rawOp{}, errAt(line, "%v", err)
			}
			if neg {
				v = -v
			}
			off = v
		default:
			return rawOp{}, errAt(line, "unsupported address form %q", text())
		}
		if base.kind != rkReg && base.kind != rkSym && base.kind != rkImm {
			return rawOp{}, errAt(line, "unsupported address form %q", text())
		}
		return rawOp{kind: rkMem, base: &base, off: off, line: line}, nil
	case first == "{":
		if ts[len(ts)-1].text != "}" {
			return rawOp{}, errAt(line, "bad vector operand %q", text())
		}
		elems, err := parseOperands(ts[1:len(ts)-1], line)
		if err != nil {
			return rawOp{}, err
		}
		if len(elems) != 1 && len(elems) != 2 && len(elems) != 4 {
			return rawOp{}, errAt(line, "vector operand needs 1, 2 or 4 elements: %q", text())
		}
		for _, e := range elems {
			if e.kind != rkReg && e.kind != rkImm && e.kind != rkSink && e.kind != rkSym {
				return rawOp{}, errAt(line, "bad vector element in %q", text())
			}
		}
		return rawOp{kind: rkVec, elems: elems, line: line}, nil
	case first == "!":
		if len(ts) != 2 || ts[1].kind != tkIdent || strings.HasPrefix(ts[1].text, ".") {
			return rawOp{}, errAt(line, "bad negated operand %q", text())
		}
		return rawOp{kind: rkReg, name: ts[1].text, neg: true, line: line}, nil
	case first == "-" || ts[0].kind == tkNumber:
		lit := first
		if first == "-" {
			if len(ts) != 2 || ts[1].kind != tkNumber {
				return rawOp{}, errAt(line, "bad immediate %q", text())
			}
			lit = "-" + ts[1].text
		} else if len(ts) != 1 {
			return rawOp{}, errAt(line, "bad immediate %q", text())
		}
		return rawOp{kind: rkImm, name: lit, line: line}, nil
	case ts[0].kind == tkIdent && len(ts) == 3 && ts[1].text == "|" && ts[2].kind == tkIdent:
		return rawOp{kind: rkPair, name: first, name2: ts[2].text, line: line}, nil
	case ts[0].kind == tkIdent && strings.HasPrefix(first, "%"):
		if len(ts) != 1 {
			return rawOp{}, errAt(line, "bad register operand %q", text())
		}
		return rawOp{kind: rkReg, name: first, line: line}, nil
	case ts[0].kind == tkIdent && !strings.HasPrefix(first, "."):
		if first == "_" && len(ts) == 1 {
			return rawOp{kind: rkSink, line: line}, nil
		}
		if len(ts) == 1 {
			return rawOp{kind: rkSym, name: first, line: line}, nil
		}
		if len(ts) == 3 && ts[1].text == "+" && ts[2].kind == tkNumber {
			v, err := strconv.ParseUint(ts[2].text, 0, 32)
			if err != nil {
				return rawOp{}, errAt(line, "bad symbol offset %q", text())
			}
			return rawOp{kind: rkSym, name: first, off: v, line: line}, nil
		}
	}
	return rawOp{}, errAt(line, "unsupported operand %q", text())
}
