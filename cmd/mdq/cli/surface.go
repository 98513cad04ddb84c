package cli

import (
	"context"
	"os"

	"github.com/spf13/cobra"

	"mdq/handlers"
)

func init() { serveHooks = append(serveHooks, surfaceHook) }

// surfaceHook mounts the route table's derived surface: /openapi.json and /docs
// (public), /mcp (authenticated like /v1) and the OAuth protected-resource metadata.
// The mounts read the API's Auth, Budget and Issuer per request, so the order of the
// serve hooks does not matter.
func surfaceHook(ctx context.Context, cfg *Config, cmd *cobra.Command, api *handlers.API) (func(), error) {
	if api.Issuer == "" {
		api.Issuer = issuerSetting(cmd)
	}
	api.Mounts = append(api.Mounts, api.SurfaceMounts()...)
	// Render the docs page (it runs every route's example) before the first visitor.
	go api.WarmDocs()
	return nil, nil
}

// issuerSetting finds the configured OAuth issuer when the access wiring has not set
// it on the API: the serve command's issuer flag, else MDQ_OAUTH_ISSUER.
func issuerSetting(cmd *cobra.Command) string {
	for _, name := range []string{"oauth-issuer", "issuer", "jwt-issuer"} {
		if f := cmd.Flags().Lookup(name); f != nil && f.Value.String() != "" {
			return f.Value.String()
		}
	}
	return os.Getenv("MDQ_OAUTH_ISSUER")
}
