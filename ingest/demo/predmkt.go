package demo

import "context"

// genPredmkt is a placeholder until the predmkt generator lands.
func genPredmkt(ctx context.Context, g *Generator) error {
	for range g.Days() {
		g.Step("predmkt")
	}
	g.Step("predmkt")
	return nil
}
