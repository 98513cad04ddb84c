// Command mdq is the Market-Data Query Service: an HTTP server over a Parquet lake and
// an offline CLI over the same queries.
package main

import (
	"os"

	"mdq/cmd/mdq/cli"
)

// Version is set at build time with -ldflags "-X main.Version=...".
var Version = "dev"

func main() {
	os.Exit(cli.Do(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, Version))
}
