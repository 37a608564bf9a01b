// Package strictjson checks JSON text for what encoding/json silently
// repairs or resolves.
//
// encoding/json replaces a \u escape of a lone or reversed UTF-16 surrogate
// ("\ud800", "\udc00\ud800") and every byte that is not UTF-8 with U+FFFD,
// and keeps the last of two members with one name. So "p-\ud800" and
// "p-\udc00" both decode to "p-\uFFFD": two payouts that the sender told
// apart become one here. [Check] refuses such input instead, naming where
// with an RFC 6901 JSON Pointer, and [UnquoteBytes] decodes one string
// token exactly or not at all.
//
// What Check guarantees of input it accepts, and no more: every string,
// member names included, at any depth, decodes to exactly the characters
// it spells (no U+FFFD that the input did not hold); and no object has two
// members whose names are the same after their escapes are decoded ("a"
// and "\u0061" are the same name). It does not make the decoding
// one-to-one: different spellings of one value still decode alike (white
// space, "a" and "\u0061", 1 and 1.0e0 into a float64, the order of
// members). And
// it compares names exactly, while encoding/json, decoding into a struct,
// matches member names to fields case-insensitively: {"payoutID":"a",
// "PayoutID":"b"} passes Check (two names) and fills one field with "b".
// A caller that must tell such names apart reads members by their exact
// names, with a [Visitor] or [EachMember], as the callback claims decoder
// and package envelope do, not with json.Unmarshal into a struct.
//
// Errors never contain the input's values; a pointer contains member names
// (and array indexes) only, and no name that is itself invalid.
package strictjson

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxDepth bounds the nesting of arrays and objects, as encoding/json does.
const maxDepth = 10000

// Reason says what is wrong with the input.
type Reason int

// The reasons of an *Error.
const (
	// Syntax: not exactly one well-formed JSON value (white space around
	// it aside), or nested deeper than 10000 levels.
	Syntax Reason = iota + 1
	// InvalidEscape: a \u escape of a lone or reversed UTF-16 surrogate.
	InvalidEscape
	// InvalidUTF8: bytes in a string that are not UTF-8 (including encoded
	// surrogates and overlong forms).
	InvalidUTF8
	// NUL: a string holds U+0000 (only with Options.RefuseNUL). Only a real
	// NUL counts: the text \\u0000 (an escaped backslash, then u0000) is six
	// ordinary characters.
	NUL
	// DuplicateName: an object has two members of the same name (after
	// decoding escapes: "a" and "\u0061" are the same name).
	DuplicateName
)

// Detail is a short sentence for problem details; it never holds input.
func (r Reason) Detail() string {
	switch r {
	case Syntax:
		return "not well-formed JSON"
	case InvalidEscape:
		return "a string has a \\u escape of a lone or reversed UTF-16 surrogate"
	case InvalidUTF8:
		return "a string is not valid UTF-8"
	case NUL:
		return "a string contains a NUL character"
	case DuplicateName:
		return "a member name appears twice in one object"
	}
	return "invalid JSON"
}

// Error locates the first problem of the input. Pointer is the RFC 6901
// pointer of the offending value: the string, the duplicated member, or,
// for a member name that is itself invalid, the object holding it ("" is
// the whole document).
type Error struct {
	Pointer string
	Reason  Reason
}

// Error implements error: the message of a Error.
func (e *Error) Error() string {
	if e.Pointer == "" {
		return "strictjson: " + e.Reason.Detail()
	}
	return "strictjson: " + e.Reason.Detail() + " at " + strconv.Quote(e.Pointer)
}

// Options adjust Check.
type Options struct {
	// RefuseNUL refuses strings (names and values) holding U+0000, which
	// Postgres text cannot store.
	RefuseNUL bool
	// Visit, when set, is told of every member of every object as the
	// check passes it, so that a caller decodes what it needs in the same
	// pass (see Visitor).
	Visit Visitor
}

// Step is one step of the path to a value: a member name (decoded) or an
// array index.
type Step struct {
	Name    []byte
	Index   int
	IsIndex bool
}

// A Visitor is called by Check for each member of each object, once the
// member's value is checked: path leads to the member (its last step is
// the member's own name, path[0] a top-level member), value is the raw
// value token, and text is the decoded content of a string value (nil for
// any other value). A member is visited only if everything before its end
// is exact, but a problem after it may still fail the check: a visitor
// records, and the caller trusts what it recorded once Check returns nil.
// path, value and text are only valid during the call (value and text
// may alias data).
type Visitor func(path []Step, value, text []byte)

// Check reports whether data is exactly one JSON value whose every string,
// member names included, is exact (valid UTF-8, and only escapes of Unicode
// scalar values: a high surrogate escape must be followed by a low one), and
// whose objects name each member once. The error is an *Error; the first
// problem in document order is reported. Check does not allocate unless an
// object has escaped or many member names.
func Check(data []byte, o Options) error {
	c := checker{data: data, opts: o}
	c.path, c.names = c.pathBuf[:0], c.namesBuf[:0]
	i := c.ws(0)
	i, ok := c.value(i, 0)
	if !ok {
		return c.err
	}
	if c.ws(i) != len(data) {
		return &Error{Reason: Syntax}
	}
	return nil
}

type checker struct {
	data []byte
	opts Options
	path []Step
	// names holds the decoded member names of the objects being checked,
	// innermost last; each object remembers where its own start.
	names [][]byte
	err   error
	// text is the content of the last string value scanned while visiting.
	text []byte
	// Backing arrays for path and names, enough for callback claims.
	pathBuf  [8]Step
	namesBuf [32][]byte
}

func (c *checker) fail(r Reason, ptr string) bool {
	c.err = &Error{Reason: r, Pointer: ptr}
	return false
}

func (c *checker) pointer() string {
	var b strings.Builder
	for _, s := range c.path {
		b.WriteByte('/')
		if s.IsIndex {
			b.WriteString(strconv.Itoa(s.Index))
			continue
		}
		for _, ch := range string(s.Name) {
			switch ch {
			case '~':
				b.WriteString("~0")
			case '/':
				b.WriteString("~1")
			default:
				b.WriteRune(ch)
			}
		}
	}
	return b.String()
}

func (c *checker) ws(i int) int {
	for i < len(c.data) {
		switch c.data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// value checks the value starting at data[i] and returns the index past it.
func (c *checker) value(i, depth int) (int, bool) {
	if i >= len(c.data) {
		return i, c.fail(Syntax, "")
	}
	switch ch := c.data[i]; {
	case ch == '{':
		return c.object(i, depth+1)
	case ch == '[':
		return c.array(i, depth+1)
	case ch == '"':
		end, s, r := scanString(c.data, i, c.opts.Visit != nil)
		c.text = s
		if r == 0 && c.opts.RefuseNUL && hasNUL(c.data[i:end], s) {
			r = NUL
		}
		if r != 0 {
			if r == Syntax {
				return end, c.fail(Syntax, "")
			}
			return end, c.fail(r, c.pointer())
		}
		return end, true
	case ch == '-' || ch >= '0' && ch <= '9':
		end := number(c.data, i)
		if end < 0 {
			return i, c.fail(Syntax, "")
		}
		return end, true
	default:
		for _, lit := range [...]string{"true", "false", "null"} {
			if len(c.data)-i >= len(lit) && string(c.data[i:i+len(lit)]) == lit {
				return i + len(lit), true
			}
		}
		return i, c.fail(Syntax, "")
	}
}

func (c *checker) array(i, depth int) (int, bool) {
	if depth > maxDepth {
		return i, c.fail(Syntax, "")
	}
	i = c.ws(i + 1)
	if i < len(c.data) && c.data[i] == ']' {
		return i + 1, true
	}
	// After a problem the state is not used again: only a complete array
	// drops its path step.
	c.path = append(c.path, Step{IsIndex: true})
	for n := 0; ; n++ {
		c.path[len(c.path)-1].Index = n
		var ok bool
		if i, ok = c.value(i, depth); !ok {
			return i, false
		}
		i = c.ws(i)
		if i >= len(c.data) {
			return i, c.fail(Syntax, "")
		}
		switch c.data[i] {
		case ',':
			i = c.ws(i + 1)
		case ']':
			c.path = c.path[:len(c.path)-1]
			return i + 1, true
		default:
			return i, c.fail(Syntax, "")
		}
	}
}

// manyMembers is the member count from which duplicate names are found
// with a map rather than by comparing with each earlier name.
const manyMembers = 32

func (c *checker) object(i, depth int) (int, bool) {
	if depth > maxDepth {
		return i, c.fail(Syntax, "")
	}
	i = c.ws(i + 1)
	if i < len(c.data) && c.data[i] == '}' {
		return i + 1, true
	}
	// After a problem the state is not used again: only a complete object
	// drops its names.
	start := len(c.names)
	var seen map[string]struct{}
	for {
		if i >= len(c.data) || c.data[i] != '"' {
			return i, c.fail(Syntax, "")
		}
		end, name, r := scanString(c.data, i, true)
		if r == 0 && c.opts.RefuseNUL && hasNUL(c.data[i:end], name) {
			r = NUL
		}
		if r != 0 {
			if r == Syntax {
				return end, c.fail(Syntax, "")
			}
			return end, c.fail(r, c.pointer()) // the object: the name cannot be shown
		}
		dup := c.seen(c.names[start:], &seen, name)
		c.names = append(c.names, name)
		c.path = append(c.path, Step{Name: name})
		if dup {
			ptr := c.pointer()
			c.path = c.path[:len(c.path)-1]
			return end, c.fail(DuplicateName, ptr)
		}
		i = c.ws(end)
		if i >= len(c.data) || c.data[i] != ':' {
			c.path = c.path[:len(c.path)-1]
			return i, c.fail(Syntax, "")
		}
		var ok bool
		vstart := c.ws(i + 1)
		if i, ok = c.value(vstart, depth); ok && c.opts.Visit != nil {
			c.visit(vstart, i)
		}
		c.path = c.path[:len(c.path)-1]
		if !ok {
			return i, false
		}
		i = c.ws(i)
		if i >= len(c.data) {
			return i, c.fail(Syntax, "")
		}
		switch c.data[i] {
		case ',':
			i = c.ws(i + 1)
		case '}':
			c.names = c.names[:start]
			return i + 1, true
		default:
			return i, c.fail(Syntax, "")
		}
	}
}

// seen reports whether name is among the earlier names of its object,
// comparing with each of them, or, from manyMembers on, through *set.
func (c *checker) seen(earlier [][]byte, set *map[string]struct{}, name []byte) bool {
	switch {
	case *set != nil:
	case len(earlier) >= manyMembers:
		*set = make(map[string]struct{}, 2*len(earlier))
		for _, n := range earlier {
			(*set)[string(n)] = struct{}{}
		}
	default:
		for _, n := range earlier {
			if string(n) == string(name) {
				return true
			}
		}
		return false
	}
	_, dup := (*set)[string(name)]
	(*set)[string(name)] = struct{}{}
	return dup
}

// visit tells the visitor of the member whose value is data[start:end].
func (c *checker) visit(start, end int) {
	var text []byte
	if c.data[start] == '"' {
		text = c.text
		if text == nil {
			text = c.data[start+1 : start+1] // "": empty, not absent
		}
	}
	c.opts.Visit(c.path, c.data[start:end], text)
}

// hasNUL reports whether a checked string token holds U+0000: decoded is
// its content when it was decoded, else nil and raw is searched for a real
// NUL escape (raw cannot hold a literal NUL byte: control characters are a
// syntax error).
func hasNUL(raw, decoded []byte) bool {
	if decoded != nil {
		return strings.IndexByte(string(decoded), 0) >= 0
	}
	for i := 1; i < len(raw)-1; i++ {
		if raw[i] != '\\' {
			continue
		}
		i++ // the escaped character: never the start of another escape
		if raw[i] == 'u' && string(raw[i+1:i+5]) == "0000" {
			return true
		}
	}
	return false
}

// scanString scans the string token starting at b[i] == '"' and returns
// the index past it and the first problem (0 for none). With decode it also
// returns the content: a sub-slice of b when there are no escapes, else a
// fresh slice; without decode the content is nil.
func scanString(b []byte, i int, decode bool) (int, []byte, Reason) {
	j := i + 1
	var out []byte
	plain := j // start of the run of unescaped bytes not yet copied to out
	for j < len(b) {
		ch := b[j]
		switch {
		case ch == '"':
			if !decode {
				return j + 1, nil, 0
			}
			if out == nil {
				return j + 1, b[i+1 : j], 0
			}
			return j + 1, append(out, b[plain:j]...), 0
		case ch == '\\':
			if decode {
				out = append(out, b[plain:j]...)
			}
			r, next, reason := unescape(b, j)
			if reason != 0 {
				return next, nil, reason
			}
			j = next
			if decode {
				out = utf8.AppendRune(out, r)
			}
			plain = j
		case ch < 0x20:
			return j, nil, Syntax
		case ch < utf8.RuneSelf:
			j++
		default:
			r, size := utf8.DecodeRune(b[j:])
			if r == utf8.RuneError && size == 1 {
				return skipRest(b, j), nil, InvalidUTF8
			}
			j += size
		}
	}
	return len(b), nil, Syntax
}

// unescape decodes the escape sequence at b[j] == '\\': it returns the
// rune and the index past the sequence, or on a problem the index
// scanString returns and the reason.
func unescape(b []byte, j int) (rune, int, Reason) {
	if j+1 >= len(b) {
		return 0, len(b), Syntax
	}
	switch e := b[j+1]; e {
	case '"', '\\', '/':
		return rune(e), j + 2, 0
	case 'b':
		return '\b', j + 2, 0
	case 'f':
		return '\f', j + 2, 0
	case 'n':
		return '\n', j + 2, 0
	case 'r':
		return '\r', j + 2, 0
	case 't':
		return '\t', j + 2, 0
	case 'u':
		return unescapeU(b, j)
	default:
		return 0, j, Syntax
	}
}

// unescapeU decodes the \u escape at b[j], with the low surrogate that
// must follow a high one, as unescape does.
func unescapeU(b []byte, j int) (rune, int, Reason) {
	u, ok := hex4(b, j+2)
	if !ok {
		return 0, j, Syntax
	}
	j += 6
	switch {
	case u >= 0xDC00 && u <= 0xDFFF:
		return 0, skipRest(b, j), InvalidEscape // a low surrogate first
	case u >= 0xD800 && u <= 0xDBFF:
		if j+1 >= len(b) || b[j] != '\\' || b[j+1] != 'u' {
			return 0, skipRest(b, j), InvalidEscape // a lone high surrogate
		}
		lo, ok := hex4(b, j+2)
		if !ok {
			return 0, j, Syntax
		}
		if lo < 0xDC00 || lo > 0xDFFF {
			return 0, skipRest(b, j), InvalidEscape
		}
		return 0x10000 + (u-0xD800)<<10 + (lo - 0xDC00), j + 6, 0
	default:
		return u, j, 0
	}
}

// skipRest returns the index past the string that b[j] is inside of, or
// len(b) when it is not terminated (a problem is reported either way).
func skipRest(b []byte, j int) int {
	for ; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(b)
}

func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, ch := range b[i : i+4] {
		r <<= 4
		switch {
		case ch >= '0' && ch <= '9':
			r |= rune(ch - '0')
		case ch >= 'a' && ch <= 'f':
			r |= rune(ch - 'a' + 10)
		case ch >= 'A' && ch <= 'F':
			r |= rune(ch - 'A' + 10)
		default:
			return 0, false
		}
	}
	return r, true
}

// number returns the index past the JSON number starting at b[i], or -1.
func number(b []byte, i int) int {
	digits := func(i int) int {
		j := i
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
		return j
	}
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(i)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		j := digits(i + 1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}
