package handlers

// predmktCategoryRoutes are the per-category and crypto-family routes of the
// prediction market.
func predmktCategoryRoutes() []*Route { return nil }
