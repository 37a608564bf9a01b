package admin

import (
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/provider-ledger/adapter/ledger"
)

// unmarshalerType is json.Unmarshaler: a type that reads itself is not
// walked into.
var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// checkMembers refuses, with a pointer to it, a member name in raw that
// is not exactly the JSON name of a field of t where raw is read into t.
// encoding/json matches names case-insensitively, so that
// {"amount":"100","AMOUNT":"-100"} would be read as an amount of -100,
// and DisallowUnknownFields does not see it. A body that is not the JSON
// t expects is left to the decoder, whose messages say more.
func checkMembers(raw []byte, t reflect.Type, ptr string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		var members map[string]json.RawMessage
		if json.Unmarshal(raw, &members) != nil {
			return nil
		}
		fields := jsonFields(t)
		names := make([]string, 0, len(members))
		for name := range members {
			names = append(names, name)
		}
		slices.Sort(names) // the same member reported each time
		for _, name := range names {
			at := ptr + "/" + escapePointer(name)
			ft, ok := fields[name]
			if !ok {
				return ledger.Invalid(at, "unknown field %q (member names are case-sensitive)", name)
			}
			if err := checkMembers(members[name], ft, at); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return nil
		}
		for i, item := range items {
			if err := checkMembers(item, t.Elem(), ptr+"/"+strconv.Itoa(i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// jsonFields maps the JSON names of t's fields (embedded structs' too) to
// their types, as encoding/json names them.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for f := range t.Fields() {
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for n, typ := range jsonFields(ft) {
					out[n] = typ
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}
