package store

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/google/uuid"
)

// call is a server-side function called in named notation,
//
//	SELECT out FROM fn(p_a => $1, p_b => $2, …)
//
// built once from the fields of the parameter struct P, each tagged with
// its parameter's name (`arg:"p_key"`); args returns the values in the same
// order. An argument cannot land in another's place, and adding a parameter
// is one tagged field.
type call[P any] struct {
	sql    string
	fields []callField
}

// callField is how one field of P becomes its argument.
type callField struct {
	index int
	// byValue: the field is a pointer already (nil is NULL), passed as it
	// is. Otherwise its address is passed, which pgx reads through: an
	// interface holding a pointer costs no allocation, where one holding
	// a string, a time or a decimal costs one per argument.
	byValue bool
	// asBytes: a uuid.UUID, passed as *[16]byte, which pgx encodes
	// directly; a uuid.UUID goes through its driver.Valuer, a string and a
	// parse (4 % of ledgerd's CPU per capture).
	asBytes bool
}

var (
	uuidType   = reflect.TypeFor[uuid.UUID]()
	bytes16Ptr = reflect.TypeFor[*[16]byte]()
)

func newCall[P any](fn, out string) call[P] {
	t := reflect.TypeFor[P]()
	var c call[P]
	var params []string
	for i := range t.NumField() {
		f := t.Field(i)
		name := f.Tag.Get("arg")
		if name == "" {
			continue
		}
		if !strings.HasPrefix(name, "p_") {
			panic(fmt.Sprintf("store: %s.%s: parameter %q must start with p_", t.Name(), f.Name, name))
		}
		c.fields = append(c.fields, callField{index: i, byValue: f.Type.Kind() == reflect.Pointer, asBytes: f.Type == uuidType})
		params = append(params, fmt.Sprintf("%s => $%d", name, len(c.fields)))
	}
	c.sql = "SELECT " + out + " FROM " + fn + "(" + strings.Join(params, ", ") + ")"
	return c
}

// args returns the arguments of p, which must not change until the
// statement has run: all but the pointer fields are passed by address.
func (c call[P]) args(p *P) []any {
	v := reflect.ValueOf(p).Elem()
	out := make([]any, len(c.fields))
	for i, f := range c.fields {
		fv := v.Field(f.index)
		switch {
		case f.byValue:
			out[i] = fv.Interface()
		case f.asBytes:
			out[i] = fv.Addr().Convert(bytes16Ptr).Interface()
		default:
			out[i] = fv.Addr().Interface()
		}
	}
	return out
}
