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
	sql   string
	index []int
}

func newCall[P any](fn, out string) call[P] {
	t := reflect.TypeFor[P]()
	var c call[P]
	var params []string
	for i := range t.NumField() {
		name := t.Field(i).Tag.Get("arg")
		if name == "" {
			continue
		}
		if !strings.HasPrefix(name, "p_") {
			panic(fmt.Sprintf("store: %s.%s: parameter %q must start with p_", t.Name(), t.Field(i).Name, name))
		}
		c.index = append(c.index, i)
		params = append(params, fmt.Sprintf("%s => $%d", name, len(c.index)))
	}
	c.sql = "SELECT " + out + " FROM " + fn + "(" + strings.Join(params, ", ") + ")"
	return c
}

func (c call[P]) args(p *P) []any {
	v := reflect.ValueOf(p).Elem()
	out := make([]any, len(c.index))
	for i, f := range c.index {
		out[i] = v.Field(f).Interface()
		if id, ok := out[i].(uuid.UUID); ok {
			// As bytes, which pgx encodes directly; a uuid.UUID goes
			// through its driver.Valuer, a string and a parse (4 % of
			// ledgerd's CPU per capture).
			out[i] = [16]byte(id)
		}
	}
	return out
}
