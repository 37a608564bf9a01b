package cli

import (
	"github.com/spf13/pflag"
)

// The output styles of a command that prints an API's answer.
const (
	// OutputTable is for a human: the default.
	OutputTable = "table"
	// OutputJSON is the API's JSON, for a program.
	OutputJSON = "json"
)

const annOutput = "cli.output" // on the --output flag of OutputFlag

// Output is the --output flag of a command that prints an API's answer.
type Output struct {
	v    string
	json *bool
}

// String is the style given.
func (o *Output) String() string { return o.v }

// Set records the style; Execute refuses one other than table or json
// before the command runs (so that -h shows the help whatever it is).
func (o *Output) Set(v string) error {
	o.v = v
	if o.json != nil && v == OutputJSON {
		*o.json = true
	}
	return nil
}

// Type is the flag's type as the help shows it.
func (o *Output) Type() string { return "string" }

// JSON reports whether the answer is to be printed as JSON.
func (o *Output) JSON() bool { return o.v == OutputJSON || o.json != nil && *o.json }

// OutputFlag registers --output (-o): table (the default) or json. json,
// when not nil, is the value of a --json flag of the same command, set by
// --output json, so that the two spellings are one setting.
func OutputFlag(fs *pflag.FlagSet, json *bool) *Output {
	o := &Output{v: OutputTable, json: json}
	fs.VarP(o, "output", "o", "table (for a human) or json (the API's answer, for a program)")
	_ = fs.SetAnnotation("output", annOutput, []string{"true"})
	return o
}

// checkOutput refuses an --output of OutputFlag other than table or json.
func checkOutput(fs *pflag.FlagSet) error {
	f := fs.Lookup("output")
	if f == nil || f.Annotations[annOutput] == nil {
		return nil
	}
	if v := f.Value.String(); v != OutputTable && v != OutputJSON {
		return Usagef("--output %q is not table or json", v)
	}
	return nil
}
