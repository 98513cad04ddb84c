package handlers

import (
	"context"
	"sync"

	"mdq/query"
)

var (
	routesOnce sync.Once
	routes     []*Route
)

// Routes returns the route table: every route of the service, declared once. Each area
// declares its routes in its own file; this is the one place they are put together.
func Routes() []*Route {
	routesOnce.Do(func() {
		for _, part := range [][]*Route{platformRoutes(), accessRoutes(), onchainRoutes(), predmktRoutes(), predmktCategoryRoutes(), perpdexRoutes(), perpdexVaultRoutes()} {
			routes = append(routes, part...)
		}
		routes = withAsOf(routes)
	})
	return routes
}

// Lookup returns the route with the given area and CLI name, or nil.
func Lookup(area, name string) *Route {
	for _, rt := range Routes() {
		if rt.Area == area && rt.CLIName() == name {
			return rt
		}
	}
	return nil
}

// Health is the body of /healthz. It names no path: the route needs no credential,
// and the lake's location on disk is nothing a caller needs.
type Health struct {
	Status string `json:"status"`
	Now    string `json:"now" doc:"the server clock (pinned by --clock)"`
}

func platformRoutes() []*Route {
	return []*Route{{
		Method: "GET", Path: "/healthz", Area: "platform", Public: true, Unbilled: true,
		Summary:  "Liveness and store check",
		Response: Health{},
		Run: func(ctx context.Context, q *query.Queries, _ Values) (any, error) {
			if err := q.Ping(ctx); err != nil {
				return nil, err
			}
			return Health{Status: "ok", Now: q.Now().Format("2006-01-02T15:04:05Z")}, nil
		},
	}}
}
