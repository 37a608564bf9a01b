package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// jsonNode is a JSON value with its object members in the order they came.
type jsonNode struct {
	scalar string // a string, number, true, false or null
	keys   []string
	vals   []jsonNode
	array  bool
	object bool
}

// readNode reads one JSON value from dec, keeping the order of members.
func readNode(dec *json.Decoder) (jsonNode, error) {
	tok, err := dec.Token()
	if err != nil {
		return jsonNode{}, err
	}
	switch t := tok.(type) {
	case json.Delim:
		n := jsonNode{array: t == '[', object: t == '{'}
		for dec.More() {
			if !n.array {
				k, err := dec.Token()
				if err != nil {
					return n, err
				}
				n.keys = append(n.keys, fmt.Sprint(k))
			}
			v, err := readNode(dec)
			if err != nil {
				return n, err
			}
			n.vals = append(n.vals, v)
		}
		_, err := dec.Token() // the closing delimiter
		return n, err
	case nil:
		return jsonNode{scalar: "null"}, nil
	}
	return jsonNode{scalar: fmt.Sprint(tok)}, nil
}

// rows flattens n into name/value rows: nested members as a.b, array
// elements as a[0].
func (n jsonNode) rows(prefix string, out [][2]string) [][2]string {
	switch {
	case n.array && len(n.vals) == 0:
		return append(out, [2]string{prefix, "[]"})
	case n.array:
		for i, v := range n.vals {
			out = v.rows(fmt.Sprintf("%s[%d]", prefix, i), out)
		}
		return out
	case !n.object:
		return append(out, [2]string{prefix, n.scalar})
	case len(n.keys) == 0:
		return append(out, [2]string{prefix, "{}"})
	}
	for i, k := range n.keys {
		name := k
		if prefix != "" {
			name = prefix + "." + k
		}
		out = n.vals[i].rows(name, out)
	}
	return out
}

// printTable writes v (an API answer) as a two-column table of its fields.
// A member that is a list of objects (a page's items) is printed as one
// block per item, after the other members.
func printTable(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	n, err := readNode(dec)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	var blocks []jsonNode
	var head [][2]string
	for i, k := range n.keys {
		if val := n.vals[i]; val.array && len(val.vals) > 0 && len(val.vals[0].keys) > 0 {
			blocks = append(blocks, val.vals...)
			head = append(head, [2]string{k, fmt.Sprint(len(val.vals))})
			continue
		}
		head = n.vals[i].rows(k, head)
	}
	if !n.object {
		head = n.rows("", head)
	}
	for _, r := range head {
		fmt.Fprintf(tw, "%s\t%s\n", r[0], oneLineValue(r[1]))
	}
	for _, item := range blocks {
		fmt.Fprintln(tw)
		for _, r := range item.rows("", nil) {
			fmt.Fprintf(tw, "%s\t%s\n", r[0], oneLineValue(r[1]))
		}
	}
	return tw.Flush()
}

// oneLineValue keeps a table row on one line.
func oneLineValue(s string) string {
	return strings.NewReplacer("\n", `\n`, "\r", `\r`, "\t", `\t`).Replace(s)
}
