package demo

import "context"

// genPerpdex is a placeholder until the perpdex generator lands.
func genPerpdex(ctx context.Context, g *Generator) error {
	for range g.Days() {
		g.Step("perpdex")
	}
	g.Step("perpdex")
	return nil
}
