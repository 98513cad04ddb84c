package demo

import "context"

// genOnchain is a placeholder until the onchain generator lands.
func genOnchain(ctx context.Context, g *Generator) error {
	for range g.Days() {
		g.Step("onchain")
	}
	g.Step("onchain")
	return nil
}
