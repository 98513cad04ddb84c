package cli

import (
	"github.com/spf13/cobra"

	"mdq/handlers"
)

func init() { extraCommands = append(extraCommands, newOpenAPICmd) }

// newOpenAPICmd prints the OpenAPI 3.1 document of the route table, the same bytes
// the server answers at /openapi.json. It needs no lake.
func newOpenAPICmd(_ *Config) *cobra.Command {
	return &cobra.Command{
		Use:   "openapi",
		Short: "Print the OpenAPI 3.1 document of the /v1 API (as served at /openapi.json)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := cmd.OutOrStdout().Write(handlers.OpenAPIJSON())
			return err
		},
	}
}
