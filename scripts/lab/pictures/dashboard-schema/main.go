// Reads a Grafana dashboard's JSON on stdin and checks it against Grafana's dashboard schema as
// the Grafana Foundation SDK's Go types hold it: strict decoding (no unknown field, no missing
// required field, no wrong type, each panel's options by its plugin's types; the SDK decodes
// queries leniently), then the schema's constraints (Validate). Prints each problem and exits 1
// if there is any, 2 if stdin cannot be read.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/plugins"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// problems lists what err holds: the SDK returns its (possibly empty) BuildErrors as an error.
func problems(err error) []string {
	var built cog.BuildErrors
	if errors.As(err, &built) {
		out := make([]string, 0, len(built))
		for _, b := range built {
			out = append(out, b.Error())
		}
		return out
	}
	if err != nil {
		return []string{err.Error()}
	}
	return nil
}

func main() {
	raw, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	plugins.RegisterDefaultPlugins()
	var d dashboard.Dashboard
	found := problems(d.UnmarshalJSONStrict(raw))
	if len(found) == 0 {
		found = problems(d.Validate())
	}
	for _, p := range found {
		fmt.Println(p)
	}
	if len(found) > 0 {
		os.Exit(1)
	}
	fmt.Printf("valid: %d panels\n", len(d.Panels))
}
