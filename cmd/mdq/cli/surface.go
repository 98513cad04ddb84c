package cli

import (
	"context"
	"os"
	"time"

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
	// Render the docs page (it runs every route's example) before the first visitor, once
	// the store is ready: run beside the first pass, the examples competed with it for
	// memory on the large lake, and a board an example computed before the cohort labels
	// were published stayed in the serving hour's memory under the older source
	// signature, so a restart in the same hour recomputed it (TestRestartReadyFromPublishedTables
	// failed so once under load). A visitor before then renders it on the spot.
	go func() {
		for !api.Q.Ready().Ready {
			select {
			case <-ctx.Done():
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
		api.WarmDocs()
	}()
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
