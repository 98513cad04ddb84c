package cli

// Exported for the external tests of this package.
var ServeGC = serveGC

const ServeGCPercent = serveGCPercent
