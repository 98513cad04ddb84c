package handlers

// perpdexVaultRoutes are the vault routes of the perpetuals venue.
func perpdexVaultRoutes() []*Route { return nil }
