package handlers

// perpdexRoutes are the perpetuals-venue routes.
func perpdexRoutes() []*Route { return nil }
