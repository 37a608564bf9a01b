package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/provider-ledger/adapter/adminapi"
	"github.com/provider-ledger/adapter/provider"
)

// Problem is how a command whose output is JSON (--json, or --output
// json) reports an error on stderr: one line holding an RFC 9457-like
// object. Type, Title, Status and Errors are the API's problem when the
// error is an answer of the admin API or the provider API; otherwise Type
// is "about:blank" and Title "usage error" or "error". Detail is the line
// the command prints without JSON; ExitStatus the process's exit status.
type Problem struct {
	Type       string       `json:"type"`
	Title      string       `json:"title"`
	Status     int          `json:"status,omitempty"`
	Detail     string       `json:"detail"`
	Errors     []FieldError `json:"errors,omitempty"`
	Command    string       `json:"command"`
	ExitStatus int          `json:"exitStatus"`
}

// FieldError is a field an API refused: a JSON Pointer into the request
// body and why.
type FieldError struct {
	Pointer string `json:"pointer"`
	Detail  string `json:"detail"`
}

// jsonOutput reports whether cmd was asked for JSON: a boolean --json set,
// or --output json, parsed or, when parsing stopped at a bad flag, among
// args (the command line, up to "--").
func jsonOutput(cmd *cobra.Command, args []string) bool {
	boolJSON := false
	if f := cmd.Flags().Lookup("json"); f != nil && f.Value.Type() == "bool" {
		boolJSON = true
		if f.Value.String() == "true" {
			return true
		}
	}
	output := cmd.Flags().Lookup("output")
	if output != nil && output.Annotations[annOutput] == nil {
		output = nil // --output FILE of a command that writes a document
	}
	if output != nil && output.Value.String() == OutputJSON {
		return true
	}
	for i, a := range args {
		switch {
		case a == "--":
			return false
		case boolJSON && (a == "--json" || a == "--json=true"):
			return true
		case output != nil && (a == "--output=json" || a == "-o=json" || a == "-ojson"):
			return true
		case output != nil && (a == "--output" || a == "-o") && i+1 < len(args) && args[i+1] == "json":
			return true
		}
	}
	return false
}

// newProblem describes err, which ends cmd with code.
func newProblem(cmd *cobra.Command, err error, usage bool, code int, detail string) Problem {
	p := Problem{Type: "about:blank", Title: "error", Detail: detail, Command: cmd.CommandPath(), ExitStatus: code}
	if usage {
		p.Title = "usage error"
	}
	var ae *adminapi.Error
	var pe *provider.Error
	switch {
	case errors.As(err, &ae):
		p.Type, p.Title, p.Status = ae.Type, ae.Title, ae.Status
		for _, f := range ae.Errors {
			p.Errors = append(p.Errors, FieldError(f))
		}
	case errors.As(err, &pe):
		p.Type, p.Title, p.Status = pe.Type, pe.Title, pe.Status
		for _, f := range pe.Errors {
			p.Errors = append(p.Errors, FieldError(f))
		}
	}
	if p.Type == "" {
		p.Type = "about:blank"
	}
	if p.Title == "" {
		p.Title = "error"
	}
	return p
}

// printError prints the error that ends cmd with code: one line on w, as
// JSON (a Problem) when the command was asked for JSON.
func printError(w io.Writer, cmd *cobra.Command, args []string, err error, usage bool, code int, detail string) {
	if jsonOutput(cmd, args) {
		b, merr := json.Marshal(newProblem(cmd, err, usage, code, detail))
		if merr == nil {
			fmt.Fprintf(w, "%s\n", b)
			return
		}
	}
	if usage {
		fmt.Fprintf(w, "%s: %s (see '%s --help')\n", cmd.CommandPath(), detail, cmd.CommandPath())
		return
	}
	fmt.Fprintf(w, "%s: %s\n", cmd.CommandPath(), detail)
}
