package ptx

import "fmt"

// token is one lexical item of PTX text. Identifiers keep their dots and
// leading % / . / $ characters ("ld.global.u32", "%tid.x", ".reg"); numbers
// keep their prefixes ("0f3F800000", "0x1F"); everything else is a single
// punctuation character or a quoted string.
type token struct {
	text string
	line int
	kind tokKind
}

type tokKind uint8

const (
	tkIdent tokKind = iota
	tkNumber
	tkPunct
	tkString
)

func isIdentStart(c byte) bool {
	return c == '_' || c == '$' || c == '%' || c == '.' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func isIdentChar(c byte) bool {
	return isIdentStart(c) || (c >= '0' && c <= '9')
}

// lex splits src into tokens, dropping // and /* */ comments.
func lex(src string) ([]token, error) {
	var toks []token
	line := 1
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == '\n':
			line++
			i++
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			start := line
			i += 2
			for {
				if i+1 >= len(src) {
					return nil, fmt.Errorf("ptx: line %d: unterminated comment", start)
				}
				if src[i] == '*' && src[i+1] == '/' {
					i += 2
					break
				}
				if src[i] == '\n' {
					line++
				}
				i++
			}
		case c == '"':
			j := i + 1
			for j < len(src) && src[j] != '"' && src[j] != '\n' {
				j++
			}
			if j >= len(src) || src[j] != '"' {
				return nil, fmt.Errorf("ptx: line %d: unterminated string", line)
			}
			toks = append(toks, token{src[i+1 : j], line, tkString})
			i = j + 1
		case c >= '0' && c <= '9':
			j := i
			for j < len(src) && (isIdentChar(src[j]) && src[j] != '%' && src[j] != '$') {
				j++
			}
			toks = append(toks, token{src[i:j], line, tkNumber})
			i = j
		case isIdentStart(c):
			j := i
			for j < len(src) {
				if isIdentChar(src[j]) {
					j++
					continue
				}
				// "::" inside an opcode (ld.global.L1::no_allocate).
				if src[j] == ':' && j+2 < len(src) && src[j+1] == ':' && isIdentChar(src[j+2]) {
					j += 2
					continue
				}
				break
			}
			toks = append(toks, token{src[i:j], line, tkIdent})
			i = j
		default:
			if c < 0x20 || c >= 0x7f {
				return nil, fmt.Errorf("ptx: line %d: unexpected byte 0x%02x", line, c)
			}
			toks = append(toks, token{src[i : i+1], line, tkPunct})
			i++
		}
	}
	return toks, nil
}
